/*
 * reportread.c - step 1 of a report (report_int.h), the aggregate reader:
 * the samples of the session that pass the filters (qfilter.h), summed
 * per (binary, offset, mode) location.  Complete sessions ('done', and
 * 'interrupted' ones, whose histogram strobed rebuilt) are read from the
 * histogram sample_agg; a time range, or a session still 'running' or
 * 'aborted' (whose histogram may be incomplete), scans the session's
 * rowid range of samples instead (the samples table has no index).
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

/* Step 1: the filtered samples summed per location into r->locs, their
 * totals into r->sum. */
int report_gather(struct report *r, struct error *e)
{
	const struct report_opts *o = r->o;
	const struct db_session *s = &r->sum->session;
	/* a window of every sample reads the histogram, as no window does */
	int raw = !db_session_complete(s) ||
		  ((o->has_from || o->has_to) && !report_window_whole(r->db, s, o));
	struct qfilter *qf = &r->qf;
	struct sbuf sql = { 0 };
	sqlite3_stmt *st;
	int i, rc, base;

	if (raw) {
		/* No index on samples: the rowid range is what makes this cheap.
		 * A running or aborted session may not have its last_sample
		 * (or even first_sample) written yet. */
		sbuf_addf(&sql, "SELECT binary_id,offset,flags,1,period");
		for (i = 0; i < r->nev; i++)
			sbuf_addf(&sql, ",c%d", i);
		sbuf_addf(&sql, ",pid,time_ns FROM samples WHERE ");
		if (s->first_sample > 0 && s->last_sample >= s->first_sample &&
		    db_session_complete(s))
			sbuf_addf(&sql, "rowid BETWEEN ?2 AND ?3 AND ");
		else if (s->first_sample > 0)
			sbuf_addf(&sql, "rowid >= ?2 AND ");
		else if (db_session_complete(s))
			goto out;	/* a finished session with no samples */
		sbuf_addf(&sql, "session_id=?1");
		if (o->has_from)
			sbuf_addf(&sql, " AND time_ns >= ?4");
		if (o->has_to)
			sbuf_addf(&sql, " AND time_ns <= ?5");
	} else {
		sbuf_addf(&sql, "SELECT binary_id,offset,flags,samples,period");
		for (i = 0; i < r->nev; i++)
			sbuf_addf(&sql, ",c%d", i);
		sbuf_addf(&sql, ",pid,start_ns FROM sample_agg WHERE session_id=?1");
	}
	if (qfilter_init(qf, r->db, o, s, raw, o->by == REPORT_BY_CGROUP ? QFILTER_CGROUPS : 0,
			 qf_note, r, e) < 0)
		goto fail;
	if (qf->none)
		goto out;
	qfilter_sql(qf, &sql, QFILTER_SQL_ALL);

	if (sqlite3_prepare_v2(db_sqlite(r->db), sql.s, -1, &st, NULL)) {
		sql_fail(r, e, raw ? "reading samples" : "reading the session histogram");
		goto fail;
	}
	sqlite3_bind_int64(st, 1, s->id);
	sqlite3_bind_int64(st, 2, s->first_sample);
	sqlite3_bind_int64(st, 3, s->last_sample);
	sqlite3_bind_int64(st, 4, s->start_ns + o->from_ns);
	sqlite3_bind_int64(st, 5, s->start_ns + o->to_ns);
	base = 5;
	if (raw && o->progress) {
		progress_phase(o->progress, sample_scan_session_total(r->db, s, o->has_from,
				o->from_ns, o->has_to, o->to_ns), "samples");
		db_set_progress(r->db, o->progress);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t n = (uint64_t)sqlite3_column_int64(st, 3);
		int64_t bin = sqlite3_column_int64(st, 0), proc;
		int64_t pid = sqlite3_column_int64(st, base + r->nev);
		size_t cg;
		struct loc *l;

		if (!qfilter_row(qf, pid, sqlite3_column_int64(st, base + r->nev + 1), &proc, &cg))
			continue;
		l = locmap_get(&r->locs, bin, (uint64_t)sqlite3_column_int64(st, 1),
			       (uint32_t)sqlite3_column_int64(st, 2) & STROBE_SAMPLE_MODE_MASK,
			       resolver_by_pid(r->res, bin) ? (uint32_t)pid : 0,
			       o->by == REPORT_BY_CGROUP ? (int64_t)cg + 1 : qf->split ? proc : 0);

		l->samples += n;
		r->sum->samples += n;
		if (sqlite3_column_type(st, 4) == SQLITE_NULL)
			r->period_unknown = 1;
		else
			l->period += (uint64_t)sqlite3_column_int64(st, 4);
		for (i = 0; i < r->nev; i++) {
			uint64_t v = (uint64_t)sqlite3_column_int64(st, base + i);

			l->c[i] += v;
			r->sum->total[i] += v;
		}
	}
	sqlite3_finalize(st);
	db_set_progress(r->db, NULL);
	if (rc != SQLITE_DONE) {
		sql_fail(r, e, raw ? "reading samples" : "reading the session histogram");
		goto fail;
	}
out:
	free(sql.s);
	return 0;
fail:
	free(sql.s);
	return -1;
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
