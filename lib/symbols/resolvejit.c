/*
 * resolvejit.c - JIT code for the resolver (resolve_int.h, resolve.h's
 * resolver_lookup_pid): the perf map and jitdump symbols (schema 10, 12)
 * a process left in the session, read from jit_symbols once per pid and
 * searched by address.  A pid whose symbols came from several processes
 * (pid reuse) has none: naming never guesses.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "resolve_int.h"

static int rjsym_cmp(const void *pa, const void *pb)
{
	const struct rjsym *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Forget j's symbols. */
static void jit_clear(struct rjit *j)
{
	for (size_t i = 0; i < j->n; i++)
		free(j->v[i].name);
	free(j->v);
	j->v = NULL;
	j->n = 0;
}

void resolve_jit_free(struct resolver *r)
{
	for (size_t i = 0; i < r->njits; i++)
		jit_clear(&r->jits[i]);
	free(r->jits);
}

int resolve_jit_any(struct resolver *r)
{
	sqlite3_stmt *st;

	if (r->jit_checked)
		return !r->jit_none;
	r->jit_checked = 1;
	r->jit_none = 1;
	if (sqlite3_prepare_v2(db_sqlite(r->db), "SELECT 1 FROM jit_symbols WHERE "
			       "session_id=?1 LIMIT 1", -1, &st, NULL))
		return 0;	/* a database before schema 10 */
	sqlite3_bind_int64(st, 1, r->session_id);
	if (sqlite3_step(st) == SQLITE_ROW)
		r->jit_none = 0;
	sqlite3_finalize(st);
	return !r->jit_none;
}

/*
 * The symbols of pid's perf map, read once.  None when the session has
 * none (or predates schema 10), and none when several processes of this
 * pid left one (pid reuse): the (pid, address) key cannot tell whose
 * sample it is, and naming never guesses.
 */
static const struct rjit *jit_get(struct resolver *r, uint32_t pid)
{
	struct rjit *j;
	sqlite3_stmt *st;
	int64_t first_start = 0;
	size_t cap = 0;
	int rc, ambiguous = 0;

	for (size_t i = 0; i < r->njits; i++)
		if (r->jits[i].pid == pid)
			return &r->jits[i];
	if (!resolve_jit_any(r))
		return NULL;
	ARRAY_GROW(r->jits, r->jits_cap, r->njits + 1);
	j = &r->jits[r->njits++];
	memset(j, 0, sizeof(*j));
	j->pid = pid;
	if (sqlite3_prepare_v2(db_sqlite(r->db), "SELECT start_ns,seq,addr,size,name FROM "
			       "jit_symbols WHERE session_id=?1 AND pid=?2", -1, &st, NULL))
		return j;
	sqlite3_bind_int64(st, 1, r->session_id);
	sqlite3_bind_int64(st, 2, pid);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 4);
		struct rjsym *y;

		if (!j->n)
			first_start = sqlite3_column_int64(st, 0);
		else if (sqlite3_column_int64(st, 0) != first_start)
			ambiguous = 1;
		ARRAY_GROW(j->v, cap, j->n + 1);
		y = &j->v[j->n++];
		y->seq = sqlite3_column_int64(st, 1);
		y->addr = (uint64_t)sqlite3_column_int64(st, 2);
		y->size = (uint64_t)sqlite3_column_int64(st, 3);
		y->name = xstrdup(name ? name : "");
	}
	sqlite3_finalize(st);
	if (ambiguous || rc != SQLITE_DONE)
		jit_clear(j);
	if (j->n)
		qsort(j->v, j->n, sizeof(*j->v), rjsym_cmp);
	return j;
}

/* Symbols further back than this from the last one starting at or below
 * an address are not looked at for a range covering it. */
#define JIT_OVERLAP_SCAN 64

const char *resolve_jit_name(struct resolver *r, uint32_t pid, uint64_t addr)
{
	const struct rjit *j = jit_get(r, pid);
	const struct rjsym *best = NULL;
	size_t lo = 0, hi;

	if (!j || !j->n)
		return NULL;
	hi = j->n;
	while (lo < hi) {	/* the first symbol starting above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (j->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, k = 0; i > 0 && k < JIT_OVERLAP_SCAN; i--, k++) {
		const struct rjsym *y = &j->v[i - 1];

		if (addr - y->addr < y->size && (!best || y->seq > best->seq))
			best = y;
	}
	return best ? best->name : NULL;
}
