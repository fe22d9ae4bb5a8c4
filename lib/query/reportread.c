/*
 * reportread.c - step 1 of a report (report_int.h), the aggregate reader:
 * the samples of the session that pass the filters (qfilter.h), summed
 * per (binary, offset, mode) location.  Complete sessions ('done', and
 * 'interrupted' ones, whose histogram strobed rebuilt) are read from the
 * histogram sample_agg; a time range, or a session still 'running' or
 * 'aborted' (whose histogram may be incomplete), decodes the sample
 * blocks of the session's rowid range instead (samplescan.h: the samples
 * table has no index, and its rows through SQL cost twice as much).
 * Also: the counter increases no sample got, and the JIT symbol files
 * that were refused or read with records dropped.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "progress.h"
#include "resolve.h"
#include "samplescan.h"
#include "report_int.h"

/*
 * The locations' index is a table of its own, not lib/base/otable: it is
 * probed once per raw sample, and its slots of 8 bytes (an index into
 * m->v) keep that probing in cache where otable's slots, holding the
 * 32-byte key, made a report over raw samples measurably slower (about
 * 10% of the whole, bench/timeviews.sh's database, 'report --from 0').
 * The hash is hash_mix64's.
 */
static uint64_t loc_hash(int64_t b, uint64_t off, uint32_t mode, uint32_t pid, int64_t proc)
{
	return hash_mix64(off ^ hash_mix64((uint64_t)b ^ ((uint64_t)mode << 56) ^
					   ((uint64_t)pid << 24)) ^ (uint64_t)proc);
}

void report_locmap_init(struct locmap *m)
{
	memset(m, 0, sizeof(*m));
}

static void locmap_rehash(struct locmap *m)
{
	size_t nslots = m->slot ? (m->mask + 1) * 2 : 1024, i;

	free(m->slot);
	m->slot = xcalloc(nslots, sizeof(*m->slot));
	m->mask = nslots - 1;
	for (i = 0; i < m->n; i++) {
		const struct loc *l = &m->v[i];
		size_t h = loc_hash(l->binary_id, l->offset, l->mode, l->pid, l->proc) & m->mask;

		while (m->slot[h])
			h = (h + 1) & m->mask;
		m->slot[h] = i + 1;
	}
}

/* The row for the key, added (zeroed) if new. Valid until the next call. */
static struct loc *locmap_get(struct locmap *m, int64_t b, uint64_t off, uint32_t mode,
			      uint32_t pid, int64_t proc)
{
	size_t h;
	struct loc *l;

	if (!m->slot || (m->n + 1) * 2 > m->mask + 1)
		locmap_rehash(m);
	h = loc_hash(b, off, mode, pid, proc) & m->mask;
	while (m->slot[h]) {
		l = &m->v[m->slot[h] - 1];
		if (l->binary_id == b && l->offset == off && l->mode == mode && l->pid == pid &&
		    l->proc == proc)
			return l;
		h = (h + 1) & m->mask;
	}
	ARRAY_GROW(m->v, m->cap, m->n + 1);
	l = &m->v[m->n];
	memset(l, 0, sizeof(*l));
	l->binary_id = b;
	l->offset = off;
	l->mode = mode;
	l->pid = pid;
	l->proc = proc;
	m->slot[h] = ++m->n;
	return l;
}

void report_locmap_free(struct locmap *m)
{
	free(m->v);
	free(m->slot);
}

static int sql_fail(struct report *r, struct error *e, const char *what)
{
	return db_sql_error(r->db, e, what);
}

/* Perf maps and jitdumps of JIT code that were refused (jit_maps.problem,
 * schema 10): their processes' [anon] samples stay unnamed, and a note
 * says why (the first few; the text is strobed's own: path, uids, limits).
 * A jitdump's path ends in ".dump" (jitdump.h). */
int report_jit_notes(struct report *r, struct error *e)
{
	sqlite3_stmt *st;
	int rc, n = 0;

	if (sqlite3_prepare_v2(db_sqlite(r->db), "SELECT pid,problem,path LIKE '%.dump' "
			       "FROM jit_maps WHERE "
			       "session_id=?1 AND problem IS NOT NULL AND (?2 < 0 OR pid=?2) "
			       "ORDER BY pid", -1, &st, NULL))
		return sql_fail(r, e, "reading jit_maps");
	sqlite3_bind_int64(st, 1, r->sum->session.id);
	sqlite3_bind_int64(st, 2, r->o->pid);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n++ < 3)
			report_note(r, "pid %lld: JIT %s not used: %s",
				 (long long)sqlite3_column_int64(st, 0),
				 sqlite3_column_int(st, 2) ? "jitdump" : "perf map",
				 (const char *)sqlite3_column_text(st, 1));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_fail(r, e, "reading jit_maps");
	if (n > 3)
		report_note(r, "%d more JIT perf maps or jitdumps not used (jit_maps.problem)",
			 n - 3);

	/* jitdumps read with records dropped (perf maps' dropped lines are
	 * not noted, as before) */
	if (sqlite3_prepare_v2(db_sqlite(r->db), "SELECT pid,dropped,path FROM jit_maps WHERE "
			       "session_id=?1 AND problem IS NULL AND dropped > 0 AND "
			       "path LIKE '%.dump' AND (?2 < 0 OR pid=?2) ORDER BY pid", -1, &st,
			       NULL))
		return sql_fail(r, e, "reading jit_maps");
	sqlite3_bind_int64(st, 1, r->sum->session.id);
	sqlite3_bind_int64(st, 2, r->o->pid);
	n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n++ < 3)
			report_note(r, "pid %lld: JIT jitdump %s: %lld records dropped (malformed, "
				 "truncated, an earlier process's or past the limits)",
				 (long long)sqlite3_column_int64(st, 0),
				 (const char *)sqlite3_column_text(st, 2),
				 (long long)sqlite3_column_int64(st, 1));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_fail(r, e, "reading jit_maps");
	if (n > 3)
		report_note(r, "%d more jitdumps with records dropped (jit_maps.dropped)", n - 3);
	return 0;
}

static void qf_note(void *ctx, const char *msg)
{
	report_note(ctx, "%s", msg);
}

/* n samples of one location (raw: n == 1; a histogram row: its count)
 * and their sums; period NULL when unknown, c[0..r->nev) the counters. */
static void gather_add(struct report *r, int64_t bin, int64_t off, int64_t flags, int64_t pid,
		       int64_t proc, size_t cg, uint64_t n, const int64_t *period,
		       const int64_t *c)
{
	const struct report_opts *o = r->o;
	struct loc *l = locmap_get(&r->locs, bin, (uint64_t)off,
				   (uint32_t)flags & STROBE_SAMPLE_MODE_MASK,
				   resolver_by_pid(r->res, bin) ? (uint32_t)pid : 0,
				   o->by == REPORT_BY_CGROUP ? (int64_t)cg + 1 :
				   r->qf.split ? proc : 0);

	l->samples += n;
	r->sum->samples += n;
	if (!period)
		r->period_unknown = 1;
	else
		l->period += (uint64_t)*period;
	for (int i = 0; i < r->nev; i++) {
		l->c[i] += (uint64_t)c[i];
		r->sum->total[i] += (uint64_t)c[i];
	}
}

/* Step 1 over the raw samples (a time range, a session not stored whole):
 * their blocks decoded in C (samplescan.h), not a row at a time through
 * SQL, which cost a new window's report half its time. */
static int gather_raw(struct report *r, struct error *e)
{
	const struct report_opts *o = r->o;
	const struct db_session *s = &r->sum->session;
	struct qfilter *qf = &r->qf;
	struct sample_scan_filter sf;
	const struct sample_scan_row *row;
	struct sample_scan *sc;
	uint32_t cols = 1u << SB_BINARY_ID | 1u << SB_OFFSET | 1u << SB_FLAGS |
			1u << SB_PERIOD | 1u << SB_PID | 1u << SB_TIME_NS;
	int i, rc;

	for (i = 0; i < r->nev; i++)
		cols |= 1u << (SB_C0 + i);
	if (!qfilter_scan(qf, cols, &sf))
		return 0;
	if (o->progress) {
		progress_phase(o->progress, sample_scan_session_total(r->db, s, o->has_from,
				o->from_ns, o->has_to, o->to_ns), "samples");
		db_set_progress(r->db, o->progress);
	}
	sc = sample_scan_open(r->db, &sf, e);
	if (!sc) {
		db_set_progress(r->db, NULL);
		return -1;
	}
	while ((rc = sample_scan_next(sc, &row, e)) == 1) {
		const struct sampleblk_row *x = row->r;
		int64_t pid = x->v[SB_PID], proc;
		size_t cg;

		if (!qfilter_mode(qf, x) || !qfilter_row(qf, pid, x->v[SB_TIME_NS], &proc, &cg))
			continue;
		gather_add(r, x->v[SB_BINARY_ID], x->v[SB_OFFSET], x->v[SB_FLAGS], pid, proc, cg,
			   1, x->null & (1u << SB_PERIOD) ? NULL : &x->v[SB_PERIOD],
			   &x->v[SB_C0]);
	}
	sample_scan_close(sc);
	db_set_progress(r->db, NULL);
	return rc < 0 ? -1 : 0;
}

/* Step 1: the filtered samples summed per location into r->locs, their
 * totals into r->sum. */
int report_gather(struct report *r, struct error *e)
{
	const struct report_opts *o = r->o;
	const struct db_session *s = &r->sum->session;
	/* a window of every sample reads the histogram, as no window does */
	int raw = !db_session_complete(s) || o->where ||
		  ((o->has_from || o->has_to) && !report_window_whole(r->db, s, o));
	struct qfilter *qf = &r->qf;
	struct sbuf sql = { 0 };
	sqlite3_stmt *st;
	int64_t lo, hi;
	int i, rc, ret = -1;

	sample_scan_range(s, &lo, &hi);
	if (raw && lo > hi)
		return 0;	/* a finished session with no samples */
	if (qfilter_init(qf, r->db, o, s, raw, o->by == REPORT_BY_CGROUP ? QFILTER_CGROUPS : 0,
			 qf_note, r, e) < 0)
		return -1;
	if (qf->none)
		return 0;
	if (raw)
		return gather_raw(r, e);
	sbuf_addf(&sql, "SELECT binary_id,offset,flags,samples,period");
	for (i = 0; i < r->nev; i++)
		sbuf_addf(&sql, ",c%d", i);
	sbuf_addf(&sql, ",pid,start_ns FROM sample_agg WHERE session_id=?1");
	qfilter_sql(qf, &sql, QFILTER_SQL_ALL);
	if (sqlite3_prepare_v2(db_sqlite(r->db), sql.s, -1, &st, NULL)) {
		sql_fail(r, e, "reading the session histogram");
		goto out;
	}
	sqlite3_bind_int64(st, 1, s->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(st, 5 + r->nev), proc, period, c[STROBE_MAX_COUNTERS];
		size_t cg;

		if (!qfilter_row(qf, pid, sqlite3_column_int64(st, 6 + r->nev), &proc, &cg))
			continue;
		period = sqlite3_column_int64(st, 4);
		for (i = 0; i < r->nev; i++)
			c[i] = sqlite3_column_int64(st, 5 + i);
		gather_add(r, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
			   sqlite3_column_int64(st, 2), pid, proc, cg,
			   (uint64_t)sqlite3_column_int64(st, 3),
			   sqlite3_column_type(st, 4) == SQLITE_NULL ? NULL : &period, c);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		sql_fail(r, e, "reading the session histogram");
		goto out;
	}
	ret = 0;
out:
	free(sql.s);
	return ret;
}

int report_unattributed(struct db *db, const struct db_session *s, uint64_t *out,
			struct error *e)
{
	int nev = MIN(s->nr_events, STROBE_MAX_COUNTERS);
	sqlite3_stmt *st;
	int rc, i;

	/* after the CPU's last sample, and over lost intervals (schema 7) */
	if (sqlite3_prepare_v2(db_sqlite(db), "SELECT "
			       "tail_c0+coalesce(lost_c0,0),tail_c1+coalesce(lost_c1,0),"
			       "tail_c2+coalesce(lost_c2,0),tail_c3+coalesce(lost_c3,0),"
			       "tail_c4+coalesce(lost_c4,0),tail_c5+coalesce(lost_c5,0),"
			       "tail_c6+coalesce(lost_c6,0),tail_c7+coalesce(lost_c7,0) "
			       "FROM session_cpus WHERE session_id=?1", -1, &st, NULL))
		return db_sql_error(db, e, "reading session_cpus");
	sqlite3_bind_int64(st, 1, s->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		for (i = 0; i < nev; i++)
			out[i] += (uint64_t)sqlite3_column_int64(st, i);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_sql_error(db, e, "reading session_cpus");
}
