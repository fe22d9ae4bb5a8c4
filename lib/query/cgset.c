/*
 * cgset.c - processes' cgroups for queries (cgset.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "cgset.h"
#include "util.h"

static int ent_cmp(const void *pa, const void *pb)
{
	const struct cgset_ent *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

static size_t name_index(struct cgset *cs, size_t *cap, const char *name)
{
	/* few distinct cgroups next to processes: a linear search of the
	 * last few, then append (duplicates only cost a row each) */
	for (size_t i = cs->nnames; i-- > 0 && i + 64 >= cs->nnames;)
		if (!strcmp(cs->names[i], name))
			return i;
	for (size_t i = 0; i < cs->nnames; i++)
		if (!strcmp(cs->names[i], name))
			return i;
	ARRAY_GROW(cs->names, *cap, cs->nnames + 1);
	cs->names[cs->nnames] = xstrdup(name);
	return cs->nnames++;
}

int cgset_load(struct db *db, int64_t session, struct cgset *cs, struct error *e)
{
	sqlite3_stmt *st;
	size_t cap = 0, ncap = 0;
	int rc;

	memset(cs, 0, sizeof(*cs));
	name_index(cs, &ncap, CGSET_UNKNOWN);
	if (sqlite3_prepare_v2(db_sqlite(db), "SELECT coalesce(cgroup_source,'') FROM sessions "
			       "WHERE id=?1", -1, &st, NULL))
		return db_sql_error(db, e, "reading the session's cgroups");
	sqlite3_bind_int64(st, 1, session);
	if (sqlite3_step(st) == SQLITE_ROW)
		snprintf(cs->source, sizeof(cs->source), "%s", sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (cs->source[0] && strcmp(cs->source, "none"))
		cs->idle = name_index(cs, &ncap, "/");
	if (sqlite3_prepare_v2(db_sqlite(db), "SELECT p.pid,p.start_ns,p.cgroup_id,c.path,"
			       "p.cgroup_moves FROM processes AS p LEFT JOIN cgroups AS c ON "
			       "c.session_id=p.session_id AND c.id=p.cgroup_id "
			       "WHERE p.session_id=?1", -1, &st, NULL))
		return db_sql_error(db, e, "reading the processes' cgroups");
	sqlite3_bind_int64(st, 1, session);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cgset_ent *x;
		char buf[64];
		const char *name = CGSET_UNKNOWN;

		if (sqlite3_column_type(st, 3) != SQLITE_NULL) {
			name = (const char *)sqlite3_column_text(st, 3);
		} else if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
			snprintf(buf, sizeof(buf), "[cgroup %lld]",
				 (long long)sqlite3_column_int64(st, 2));
			name = buf;
		}
		if (sqlite3_column_int64(st, 4) > 0)
			cs->moved++;
		ARRAY_GROW(cs->v, cap, cs->n + 1);
		x = &cs->v[cs->n++];
		x->pid = sqlite3_column_int64(st, 0);
		x->start_ns = sqlite3_column_int64(st, 1);
		x->name = name_index(cs, &ncap, name);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		cgset_free(cs);
		return db_sql_error(db, e, "reading the processes' cgroups");
	}
	if (cs->n)
		qsort(cs->v, cs->n, sizeof(*cs->v), ent_cmp);
	return 0;
}

void cgset_free(struct cgset *cs)
{
	for (size_t i = 0; i < cs->nnames; i++)
		free(cs->names[i]);
	free(cs->names);
	free(cs->v);
	memset(cs, 0, sizeof(*cs));
}

size_t cgset_lookup(const struct cgset *cs, int64_t pid, int64_t start_ns)
{
	size_t lo = 0, hi = cs->n;

	while (lo < hi) {	/* the first entry >= (pid, start_ns) */
		size_t mid = lo + (hi - lo) / 2;
		const struct cgset_ent *x = &cs->v[mid];

		if (x->pid < pid || (x->pid == pid && x->start_ns < start_ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < cs->n && cs->v[lo].pid == pid && cs->v[lo].start_ns == start_ns)
		return cs->v[lo].name;
	if (!start_ns && lo < cs->n && cs->v[lo].pid == pid &&
	    (lo + 1 == cs->n || cs->v[lo + 1].pid != pid))
		return cs->v[lo].name;	/* the one process of pid */
	return pid == 0 ? cs->idle : 0;
}

int cgset_match(const char *filter, const char *path)
{
	size_t n = strlen(filter);

	if (!path || path[0] != '/')
		return 0;
	if (n && filter[n - 1] == '/') {
		/* the subtree: "/a/" is "/a" and below; "/" everything */
		if (n == 1)
			return 1;
		return !strncmp(path, filter, n) ||
		       (strlen(path) == n - 1 && !strncmp(path, filter, n - 1));
	}
	return !strcmp(filter, path);
}

int cgset_check_filter(const char *filter)
{
	return filter && filter[0] == '/' ? 0 : -1;
}
