/*
 * stacksread.c - reading and merging the stacks of a stack set
 * (stacks_int.h):
 *  1. entries: the (stack, process, comm) sums that pass the filters
 *     (qfilter.h, as report.c's), from stack_agg, or, with a time range or
 *     a session not stored whole, from the raw samples (samples.stack_id),
 *     whose process is the one of their pid at their time (procset.h).
 *  2. frames: the stacks those entries use, read from stacks in one range
 *     scan by id, each checked (nr frames of 16 bytes, leaf first: int64
 *     LE binary_id, int64 LE offset; schema 014) and its frames interned
 *     as distinct locations.  A stack the database does not hold, or a
 *     malformed one, is an error: the database is corrupt.
 *  3. the entries merged with their frames (JIT code named per process
 *     gets locations of its own); stack_agg rows have no location of
 *     their own: --binary, --kernel and --user apply to their frame 0
 *     (the sampled location).
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "progress.h"
#include "resolve.h"
#include "samplescan.h"
#include "stacks_int.h"

/* More frames than this in one stack: a corrupt row (the kernel's
 * callchains stop at 127 by default, perf_event_max_stack at most
 * 65535; the unwinder's own limit is lower). */
#define STACKS_MAX_FRAMES 65536

/* ---- step 1: entries ---- */

/* The widest range of stack ids indexed directly (l->byid, 4 bytes each,
 * pages touched only where used); a wider one is hashed only. */
#define STACKS_BYID_MAX	(1u << 24)

/* l->byid for the session's stack ids, when their range is narrow enough:
 * a window of a session with many distinct stacks probes the entries
 * once per sample, and hashing four keys into a table of hundreds of
 * thousands cost a new window's flame graph a third of its time. */
static int byid_make(struct sload *l, struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	/* two subqueries: SQLite reads a lone min() or max() off the key's
	 * end, but scans every row for both at once */
	if (sqlite3_prepare_v2(db_sqlite(l->db), "SELECT (SELECT min(id) FROM stacks WHERE "
			       "session_id=?1),(SELECT max(id) FROM stacks WHERE session_id=?1)",
			       -1, &st, NULL))
		return db_sql_error(l->db, e, "reading stacks");
	sqlite3_bind_int64(st, 1, l->set->session.id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		int64_t lo = sqlite3_column_int64(st, 0), hi = sqlite3_column_int64(st, 1);

		if (hi >= lo && (uint64_t)hi - (uint64_t)lo < STACKS_BYID_MAX) {
			l->idlo = lo;
			l->nid = (size_t)(hi - lo) + 1;
			l->byid = xcalloc(l->nid, sizeof(*l->byid));
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_sql_error(l->db, e, "reading stacks");
}

/* Its slot in l->byid, or NULL. */
static uint32_t *byid_slot(const struct sload *l, int64_t stack_id)
{
	if (!l->byid || stack_id < l->idlo || (uint64_t)stack_id - (uint64_t)l->idlo >= l->nid)
		return NULL;
	return &l->byid[stack_id - l->idlo];
}

/* A new entry of key k, zeroed: its index. */
static size_t gent_new(struct sload *l, const struct k4 *k)
{
	ARRAY_GROW(l->g, l->gcap, l->ng + 1);
	memset(&l->g[l->ng], 0, sizeof(l->g[l->ng]));
	l->g[l->ng].k = *k;
	return l->ng++;
}

/* The entry of key k, added (zeroed) if new.  With l->byid, an entry
 * is in gmap or in its stack's slot (or both): a slot's entry goes into
 * gmap only when another key of its stack takes the slot, so that a
 * session of one process per stack never hashes at all. */
static struct gent *gent_get(struct sload *l, const struct k4 *k)
{
	uint32_t *slot = byid_slot(l, k->v[0]);
	struct k4idx *x;
	size_t i;
	int added;

	if (!slot) {
		x = k4_get(&l->gmap, k, &added);
		if (added)
			x->i = gent_new(l, k);
		return &l->g[x->i];
	}
	if (*slot) {
		const struct gent *old = &l->g[*slot - 1];

		if (!memcmp(&old->k, k, sizeof(*k)))
			return &l->g[*slot - 1];
		x = k4_get(&l->gmap, &old->k, &added);	/* it leaves the slot */
		x->i = *slot - 1;
		if ((x = k4_find(&l->gmap, k))) {
			*slot = (uint32_t)x->i + 1;
			return &l->g[x->i];
		}
	}
	/* new: an empty slot means no entry of its stack yet */
	i = gent_new(l, k);
	if (i < UINT32_MAX)
		*slot = (uint32_t)i + 1;
	else
		k4_get(&l->gmap, k, &added)->i = i;
	return &l->g[i];
}

/* n samples of an entry's key and their sums; period NULL when unknown,
 * c[0..l->nev) the counters. */
static void gent_add(struct sload *l, int64_t stack_id, int64_t pid, int64_t comm_id,
		     int64_t start, uint64_t samples, const int64_t *period, const int64_t *c)
{
	struct k4 k = { { stack_id, pid, comm_id, start } };
	struct gent *g = gent_get(l, &k);
	int i;

	g->samples += samples;
	if (!period)
		l->period_unknown = 1;
	else
		g->period += (uint64_t)*period;
	for (i = 0; i < l->nev; i++)
		g->c[i] += (uint64_t)c[i];
}

/* Step 1's gathering of one raw sample that passed the filters and has a
 * stack: summed into its entry (pid the sample's, start its process's). */
static int raw_gent(struct sload *l, const struct sampleblk_row *x, int64_t pid, int64_t start)
{
	gent_add(l, x->v[SB_STACK], pid, x->v[SB_COMM_ID], start, 1,
		 x->null & (1u << SB_PERIOD) ? NULL : &x->v[SB_PERIOD], &x->v[SB_C0]);
	return 0;
}

/* The raw samples of l's range that pass its filters, their blocks decoded
 * in C (samplescan.h), as report_gather() reads them: those without a
 * stack counted in no_stack, the others given to fn (which returns 0 to
 * go on, 1 to stop the scan: the scan's result then). */
static int scan_raw(struct sload *l, int (*fn)(struct sload *, const struct sampleblk_row *,
					       int64_t, int64_t), struct error *e)
{
	const struct report_opts *o = l->o;
	const struct db_session *s = &l->set->session;
	struct sample_scan_filter sf;
	const struct sample_scan_row *row;
	struct sample_scan *sc;
	uint32_t cols = 1u << SB_STACK | 1u << SB_PID | 1u << SB_COMM_ID | 1u << SB_TIME_NS |
			1u << SB_PERIOD;
	int rc;

	for (int i = 0; i < l->nev; i++)
		cols |= 1u << (SB_C0 + i);
	if (!qfilter_scan(&l->qf, cols, &sf))
		return 0;
	if (o->progress) {
		progress_phase(o->progress, sample_scan_session_total(l->db, s, o->has_from,
				o->from_ns, o->has_to, o->to_ns), "samples");
		db_set_progress(l->db, o->progress);
	}
	sc = sample_scan_open(l->db, &sf, e);
	if (!sc) {
		db_set_progress(l->db, NULL);
		return -1;
	}
	while ((rc = sample_scan_next(sc, &row, e)) == 1) {
		const struct sampleblk_row *x = row->r;
		int64_t pid = x->v[SB_PID], t = x->v[SB_TIME_NS], proc;
		size_t cg;

		if (!qfilter_mode(&l->qf, x) || !qfilter_row(&l->qf, pid, t, &proc, &cg))
			continue;
		if (x->null & (1u << SB_STACK)) {
			l->set->no_stack++;
			continue;
		}
		if ((rc = fn(l, x, pid, qfilter_start(&l->qf, pid, t))))
			break;
	}
	sample_scan_close(sc);
	db_set_progress(l->db, NULL);
	return rc < 0 ? -1 : rc;
}

static int gather_raw(struct sload *l, struct error *e)
{
	if (byid_make(l, e) < 0)
		return -1;
	return scan_raw(l, raw_gent, e);
}

/* ---- a window summed into the entries of a whole session's set ---- */

/* efirst's mark of a stack with several entries in the whole */
#define EFIRST_SEVERAL	0x80000000u

/* The entry of key (stack, pid, comm, start) in l->whole, or -1: by stack
 * id first (whole's entries of one stack chained), as gent_get() finds.
 * A stack of one entry in the whole is that entry's without a look at it
 * (a cache miss per sample in a session of many stacks): whole holds
 * every key of the session that passes the filters (stacks.h), and the
 * window's samples pass them. */
static ptrdiff_t whole_find(const struct sload *l, int64_t stack, int64_t pid, int64_t comm,
			    int64_t start)
{
	const struct stacks_priv *p = (const struct stacks_priv *)l->whole;
	const struct stack_entry *se;
	uint32_t i;

	if (stack < p->elo || (uint64_t)stack - (uint64_t)p->elo >= p->enid)
		return -1;
	i = p->efirst[stack - p->elo];
	if (!(i & EFIRST_SEVERAL))
		return (ptrdiff_t)i - 1;
	for (i &= ~EFIRST_SEVERAL; i; i = p->enext[i - 1]) {
		se = &l->whole->stacks[i - 1];
		if (se->pid == (uint32_t)pid && se->start_ns == (uint64_t)start &&
		    p->comm_ids[i - 1] == comm)
			return (ptrdiff_t)i - 1;
	}
	return -1;
}

static int raw_sum(struct sload *l, const struct sampleblk_row *x, int64_t pid, int64_t start)
{
	ptrdiff_t i = whole_find(l, x->v[SB_STACK], pid, x->v[SB_COMM_ID], start);

	if (i < 0)
		return 1;	/* not in the whole: the session grew */
	l->sums[i] += l->sum_what < 0 ? 1 : (uint64_t)x->v[SB_C0 + l->sum_what];
	return 0;
}

/* whole's entries by stack id (stacks_priv.efirst, enext), made once:
 * -1 when its ids span more than STACKS_BYID_MAX. */
static int whole_index(const struct stack_set *whole)
{
	struct stacks_priv *p = (struct stacks_priv *)whole;	/* a cache of the set's */
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	size_t i;

	if (p->efirst)
		return 0;
	for (i = 0; i < whole->nr_stacks; i++) {
		lo = MIN(lo, whole->stacks[i].stack_id);
		hi = MAX(hi, whole->stacks[i].stack_id);
	}
	if (!whole->nr_stacks)
		lo = hi = 0;
	if (hi < lo || (uint64_t)hi - (uint64_t)lo >= STACKS_BYID_MAX ||
	    whole->nr_stacks >= EFIRST_SEVERAL)
		return -1;
	p->elo = lo;
	p->enid = (size_t)(hi - lo) + 1;
	p->efirst = xcalloc(p->enid, sizeof(*p->efirst));
	p->enext = xcalloc(whole->nr_stacks ? whole->nr_stacks : 1, sizeof(*p->enext));
	for (i = whole->nr_stacks; i-- > 0; ) {
		uint32_t *f = &p->efirst[whole->stacks[i].stack_id - lo];

		p->enext[i] = *f & ~EFIRST_SEVERAL;
		*f = ((uint32_t)i + 1) | (*f ? EFIRST_SEVERAL : 0);
	}
	return 0;
}

int stacks_sum_raw(struct sload *l, struct error *e)
{
	if (whole_index(l->whole) < 0)
		return 1;
	return scan_raw(l, raw_sum, e);
}

int stacks_gather(struct sload *l, struct error *e)
{
	const struct db_session *s = &l->set->session;
	struct sbuf sql = { 0 };
	sqlite3_stmt *st;
	int i, rc, ret = -1;

	if (l->raw)
		return gather_raw(l, e);
	if (byid_make(l, e) < 0)
		return -1;
	sbuf_addf(&sql, "SELECT stack_id,pid,comm_id,start_ns,samples,period");
	for (i = 0; i < l->nev; i++)
		sbuf_addf(&sql, ",c%d", i);
	sbuf_addf(&sql, " FROM stack_agg WHERE session_id=?1");
	qfilter_sql(&l->qf, &sql, QFILTER_SQL_PID | QFILTER_SQL_COMM);
	if (sqlite3_prepare_v2(db_sqlite(l->db), sql.s, -1, &st, NULL)) {
		db_sql_error(l->db, e, "reading the stacks histogram");
		goto out;
	}
	sqlite3_bind_int64(st, 1, s->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(st, 1), x = sqlite3_column_int64(st, 3), proc;
		int64_t period = sqlite3_column_int64(st, 5), c[STROBE_MAX_COUNTERS];
		size_t cg;

		if (!qfilter_row(&l->qf, pid, x, &proc, &cg))
			continue;
		if (sqlite3_column_type(st, 0) == SQLITE_NULL) {
			l->set->no_stack += (uint64_t)sqlite3_column_int64(st, 4);
			continue;
		}
		for (i = 0; i < l->nev; i++)
			c[i] = sqlite3_column_int64(st, 6 + i);
		gent_add(l, sqlite3_column_int64(st, 0), pid, sqlite3_column_int64(st, 2),
			 qfilter_start(&l->qf, pid, x), (uint64_t)sqlite3_column_int64(st, 4),
			 sqlite3_column_type(st, 5) == SQLITE_NULL ? NULL : &period, c);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_sql_error(l->db, e, "reading the stacks histogram");
		goto out;
	}
	ret = 0;
out:
	free(sql.s);
	return ret;
}

/* The samples of the histogram sample_agg that pass the filters, less
 * those in the set: the samples with no stack (the histogram of stacks
 * has no row for them). */
int stacks_no_stack_agg(struct sload *l, struct error *e)
{
	struct sbuf sql = { 0 };
	uint64_t n = 0;
	sqlite3_stmt *st;
	int rc;

	sbuf_addf(&sql, "SELECT pid,start_ns,samples FROM sample_agg WHERE session_id=?1");
	qfilter_sql(&l->qf, &sql, QFILTER_SQL_ALL);
	rc = sqlite3_prepare_v2(db_sqlite(l->db), sql.s, -1, &st, NULL);
	free(sql.s);
	if (rc)
		return db_sql_error(l->db, e, "reading the session histogram");
	sqlite3_bind_int64(st, 1, l->set->session.id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t proc;
		size_t cg;

		if (qfilter_row(&l->qf, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
				&proc, &cg))
			n += (uint64_t)sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_sql_error(l->db, e, "reading the session histogram");
	l->set->no_stack = n > l->set->samples + l->missing ? n - l->set->samples - l->missing : 0;
	return 0;
}

/* ---- step 2: frames ---- */

static uint32_t loc_intern(struct sload *l, int64_t binary_id, uint64_t offset, uint32_t pid)
{
	struct k4 k = { { binary_id, (int64_t)offset, pid, 0 } };
	int added;
	struct k4idx *x = k4_get(&l->lmap, &k, &added);

	if (added) {
		ARRAY_GROW(l->locs, l->loccap, l->nlocs + 1);
		l->locs[l->nlocs].k = k;
		x->i = l->nlocs++;
	}
	return (uint32_t)x->i;
}

static int64_t le64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return (int64_t)v;
}

/* Intern the nr frames of blob as locations of process pid (0: not per
 * process), appended to the pool; returns where they start. */
static size_t frames_intern(struct sload *l, struct resolver *res, const unsigned char *blob,
			    uint32_t nr, uint32_t pid, int *bypid)
{
	size_t lo = l->npool;

	ARRAY_GROW(l->p->pool, l->poolcap, l->npool + nr);
	for (uint32_t i = 0; i < nr; i++) {
		int64_t b = le64(blob + 16 * (size_t)i);
		uint64_t off = (uint64_t)le64(blob + 16 * (size_t)i + 8);
		int per_pid = resolver_by_pid(res, b);

		if (per_pid && bypid)
			*bypid = 1;
		l->p->pool[l->npool++] = loc_intern(l, b, off, per_pid ? pid : 0);
	}
	return lo;
}

static int id_cmp(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

static int stk_cmp(const void *key, const void *elem)
{
	int64_t a = *(const int64_t *)key, b = ((const struct stk *)elem)->id;

	return (a > b) - (a < b);
}

/* The stack of id loaded by stacks_frames_load(), or NULL: by l->byid
 * (where a slot not overwritten by the load still holds an entry's index
 * from the gathering, hence the check), else by a binary search. */
static const struct stk *stk_find(const struct sload *l, int64_t id)
{
	const uint32_t *slot = byid_slot(l, id);

	if (slot && *slot && *slot <= l->nstks && l->stks[*slot - 1].id == id)
		return &l->stks[*slot - 1];
	return bsearch(&id, l->stks, l->nstks, sizeof(*l->stks), stk_cmp);
}

int stacks_frames_load(struct sload *l, struct resolver *res, struct error *e)
{
	const struct db_session *s = &l->set->session;
	int64_t *ids;
	size_t nids = 0, i;
	sqlite3_stmt *st;
	int rc;

	if (!l->ng)
		return 0;
	ids = xcalloc(l->ng, sizeof(*ids));
	for (i = 0; i < l->ng; i++)
		ids[i] = l->g[i].k.v[0];
	qsort(ids, l->ng, sizeof(*ids), id_cmp);
	for (i = 0; i < l->ng; i++)
		if (!nids || ids[nids - 1] != ids[i])
			ids[nids++] = ids[i];
	if (sqlite3_prepare_v2(db_sqlite(l->db), "SELECT id,nr,flags,frames FROM stacks "
			       "WHERE session_id=?1 AND id BETWEEN ?2 AND ?3 ORDER BY id", -1, &st,
			       NULL)) {
		free(ids);
		return db_sql_error(l->db, e, "reading stacks");
	}
	sqlite3_bind_int64(st, 1, s->id);
	sqlite3_bind_int64(st, 2, ids[0]);
	sqlite3_bind_int64(st, 3, ids[nids - 1]);
	i = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0), nr = sqlite3_column_int64(st, 1);
		const unsigned char *blob = sqlite3_column_blob(st, 3);
		int bytes = sqlite3_column_bytes(st, 3);
		struct stk *k;

		while (i < nids && ids[i] < id)
			i++;
		if (i == nids)
			break;
		if (ids[i] != id)
			continue;	/* a stack no entry uses */
		if (nr < 1 || nr > STACKS_MAX_FRAMES || !blob || bytes != nr * 16) {
			sqlite3_finalize(st);
			free(ids);
			return error_set(e, "stack %lld of session %lld is malformed (%lld frames "
					 "in %d bytes): the database is corrupt", (long long)id,
					 (long long)s->id, (long long)nr, bytes);
		}
		ARRAY_GROW(l->stks, l->stkcap, l->nstks + 1);
		k = &l->stks[l->nstks++];
		memset(k, 0, sizeof(*k));
		k->id = id;
		k->nr = (uint32_t)nr;
		k->flags = (uint32_t)sqlite3_column_int64(st, 2);
		k->lo = frames_intern(l, res, blob, k->nr, 0, &k->bypid);
		if (byid_slot(l, id) && l->nstks < UINT32_MAX)
			*byid_slot(l, id) = (uint32_t)l->nstks;	/* its index + 1 */
	}
	sqlite3_finalize(st);
	free(ids);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return db_sql_error(l->db, e, "reading stacks");
	return 0;
}


/* The kernel binaries of the database (keys "kernel:..."), sorted. */
static int kernel_ids(struct sload *l, int64_t **ids, size_t *n, struct error *e)
{
	size_t cap = 0;
	sqlite3_stmt *st;
	int rc;

	*ids = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db_sqlite(l->db), "SELECT id FROM binaries WHERE "
			       "substr(key,1,7)='kernel:' ORDER BY id", -1, &st, NULL))
		return db_sql_error(l->db, e, "reading binaries");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ARRAY_GROW(*ids, cap, *n + 1);
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_sql_error(l->db, e, "reading binaries");
	return 0;
}

static const char *comm_intern(struct sload *l, int64_t comm_id, struct error *e)
{
	struct stacks_priv *p = l->p;
	struct k4 k = { { comm_id, 0, 0, 0 } };
	sqlite3_stmt *st;
	const char *name = "[unknown]";
	int rc, added;
	struct k4idx *x = k4_get(&l->cmap, &k, &added);

	if (!added)
		return p->comms[x->i].name;
	/* (on an error the set is not made: the entry added stays unused) */
	if (sqlite3_prepare_v2(db_sqlite(l->db), "SELECT name FROM comms WHERE id=?1", -1, &st,
			       NULL)) {
		db_sql_error(l->db, e, "reading comms");
		return NULL;
	}
	sqlite3_bind_int64(st, 1, comm_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
		name = (const char *)sqlite3_column_text(st, 0);
	ARRAY_GROW(p->comms, l->commcap, p->ncomms + 1);
	p->comms[p->ncomms].id = comm_id;
	name = p->comms[p->ncomms].name = xstrdup(name);
	x->i = p->ncomms++;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		db_sql_error(l->db, e, "reading comms");
		return NULL;
	}
	return name;
}

int stacks_entries_make(struct sload *l, struct resolver *res, struct error *e)
{
	struct stack_set *set = l->set;
	struct stacks_priv *p = l->p;
	const struct report_opts *o = l->o;
	int64_t *kids = NULL;
	size_t nkids = 0, i;
	int filter0 = !l->raw && (o->binary || o->mode != REPORT_ALL);

	if (filter0 && o->mode != REPORT_ALL && kernel_ids(l, &kids, &nkids, e) < 0)
		return -1;
	set->stacks = xcalloc(l->ng ? l->ng : 1, sizeof(*set->stacks));
	p->comm_ids = xcalloc(l->ng ? l->ng : 1, sizeof(*p->comm_ids));
	l->entry_lo = xcalloc(l->ng ? l->ng : 1, sizeof(*l->entry_lo));
	for (i = 0; i < l->ng; i++) {
		const struct gent *g = &l->g[i];
		const struct stk *k = stk_find(l, g->k.v[0]);
		struct stack_entry *se;
		const char *comm;
		size_t lo;

		if (!k) {
			l->missing += g->samples;
			continue;
		}
		lo = k->lo;
		if (filter0) {
			int64_t b0 = l->locs[p->pool[lo]].k.v[0];
			int kern = nkids && bsearch(&b0, kids, nkids, sizeof(*kids), id_cmp);

			if (!qfilter_binary(&l->qf, b0) || (o->mode == REPORT_KERNEL && !kern) ||
			    (o->mode == REPORT_USER && kern))
				continue;
		}
		if (k->bypid && g->k.v[1]) {
			/* JIT code named from this process's perf map: its own
			 * locations (frames read again from the pool's copy) */
			size_t n = k->nr, j;

			lo = l->npool;
			ARRAY_GROW(p->pool, l->poolcap, l->npool + n);
			for (j = 0; j < n; j++) {
				struct k4 f = l->locs[p->pool[k->lo + j]].k;	/* a copy: */
				int per_pid = resolver_by_pid(res, f.v[0]);	/* locs grow */
				uint32_t x = loc_intern(l, f.v[0], (uint64_t)f.v[1],
							per_pid ? (uint32_t)g->k.v[1] : 0);

				p->pool[l->npool + j] = x;
			}
			l->npool += n;
		}
		comm = comm_intern(l, g->k.v[2], e);
		if (!comm) {
			free(kids);
			return -1;
		}
		se = &set->stacks[set->nr_stacks];
		p->comm_ids[set->nr_stacks] = g->k.v[2];
		l->entry_lo[set->nr_stacks] = lo;
		set->nr_stacks++;
		se->stack_id = k->id;
		se->pid = (uint32_t)g->k.v[1];
		se->start_ns = (uint64_t)g->k.v[3];
		se->comm = comm;
		se->flags = k->flags;
		se->nr = k->nr;
		se->samples = g->samples;
		se->weight = g->period;	/* for now: weigh() decides */
		memcpy(se->c, g->c, sizeof(se->c));
		set->samples += g->samples;
		if (k->flags & STACK_INCOMPLETE)
			set->incomplete += g->samples;
		for (int c = 0; c < l->nev; c++)
			set->total[c] += g->c[c];
	}
	free(kids);
	for (i = 0; i < set->nr_stacks; i++)
		set->stacks[i].locs = p->pool + l->entry_lo[i];
	if (l->missing)
		stacks_note(l, "%" PRIu64 " samples refer to stacks that are not stored (yet: a "
			 "session still being written); they are left out", l->missing);
	return 0;
}
