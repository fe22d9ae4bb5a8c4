/*
 * tlread.c - the per-series reader of a timeline (timeline_int.h): the
 * filters of timeline_opts as SQL for sample_time and as a raw-scan filter,
 * whether sample_time can answer exactly (timeline.h), and the one stream
 * of rows (struct trow) that phases 1 and 2 read from either, with the
 * buckets a row adds to.  Raw rows are read through their session's rowid
 * range (the samples table has no index; see doc/DESIGN.md).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "progress.h"
#include "qfilter.h"
#include "timeline_int.h"

int tl_sql_fail(struct build *b, const char *what)
{
	return db_sql_error(b->db, b->e, what);
}

/* " AND binary_id IN (...)" for --binary; the number of binaries, or -1. */
static int binary_filter(struct build *b, struct sbuf *sql)
{
	if (qfilter_binaries(b->db, b->o->binary, &b->bins, &b->nbins, b->e) < 0)
		return -1;
	for (size_t i = 0; i < b->nbins; i++)
		sbuf_addf(sql, "%s%lld", i ? "," : " AND binary_id IN (", (long long)b->bins[i]);
	if (b->nbins)
		sbuf_addf(sql, ")");
	return (int)b->nbins;
}

/* Time of the sample at rowid, or -1. */
static int64_t rowid_time(struct build *b, int64_t rowid)
{
	sqlite3_stmt *st;
	int64_t t = -1;

	if (rowid <= 0 || sqlite3_prepare_v2(db_sqlite(b->db),
					     "SELECT time_ns FROM samples WHERE rowid=?1",
					     -1, &st, NULL))
		return -1;
	sqlite3_bind_int64(st, 1, rowid);
	if (sqlite3_step(st) == SQLITE_ROW)
		t = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return t;
}

/* The session's rows: "samples WHERE <rowid range> AND session_id=?1". */
static void rows_sql(struct build *b, struct sbuf *sql)
{
	const struct db_session *s = &b->t->session;

	sbuf_addf(sql, "FROM samples WHERE ");
	if (s->first_sample > 0 && s->last_sample >= s->first_sample &&
	    db_session_complete(s))
		sbuf_addf(sql, "rowid BETWEEN %lld AND %lld AND ", (long long)s->first_sample,
			(long long)s->last_sample);
	else if (s->first_sample > 0)
		sbuf_addf(sql, "rowid >= %lld AND ", (long long)s->first_sample);
	sbuf_addf(sql, "session_id=%lld", (long long)s->id);
}

/* The end of the session's data: its end, or its last sample if later. */
int tl_session_end(struct build *b, int64_t *end)
{
	const struct db_session *s = &b->t->session;
	int64_t last = -1;

	if (s->first_sample <= 0)
		last = -1;
	else if (s->last_sample >= s->first_sample && db_session_complete(s))
		last = rowid_time(b, s->last_sample);
	else {
		struct sbuf sql = { 0 };
		sqlite3_stmt *st;

		sbuf_addf(&sql, "SELECT max(time_ns) ");
		rows_sql(b, &sql);
		if (sqlite3_prepare_v2(db_sqlite(b->db), sql.s, -1, &st, NULL)) {
			free(sql.s);
			return tl_sql_fail(b, "reading samples");
		}
		free(sql.s);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
			last = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	*end = s->start_ns;
	if (s->end_ns > s->start_ns)
		*end = s->end_ns;
	else if (s->duration_ns > 0)
		*end = s->start_ns + s->duration_ns;
	if (last > *end)
		*end = last;
	return 0;
}

/* The filters of the options (but the time range) in b->filt, for
 * sample_time, and the raw rows they select in b->raw. */
int tl_make_where(struct build *b)
{
	const struct timeline_opts *o = b->o;
	struct timeline *t = b->t;

	sample_scan_range(&t->session, &b->raw.row_lo, &b->raw.row_hi);
	b->raw.session_id = t->session.id;
	b->raw.has_time = 1;
	b->raw.time_lo = t->from_ns;
	b->raw.time_hi = t->to_ns;
	b->raw.cols = 1u << SB_TIME_NS | 1u << SB_CPU | 1u << SB_PID | 1u << SB_BINARY_ID |
		      1u << SB_OFFSET | 1u << SB_COMM_ID |
		      (((1u << MIN(t->session.nr_events, STROBE_MAX_COUNTERS)) - 1) << SB_C0);
	if (o->pid >= 0) {
		sbuf_addf(&b->filt, " AND pid=%lld", (long long)o->pid);
		b->raw.has_pid = 1;
		b->raw.pid = o->pid;
	}
	if (o->comm) {
		b->comm_id = qfilter_comm_id(b->db, o->comm, b->e);
		if (b->comm_id < 0)
			return -1;
		if (!b->comm_id)
			return error_set(b->e, "no process named '%s' was ever seen in %s",
					 o->comm, db_path(b->db));
		sbuf_addf(&b->filt, " AND comm_id=%lld", (long long)b->comm_id);
		b->raw.has_comm = 1;
		b->raw.comm_id = b->comm_id;
	}
	if (o->binary) {
		int n = binary_filter(b, &b->filt);

		if (n < 0)
			return -1;
		if (!n)
			return error_set(b->e, "no binary in %s has path or name '%s'",
					 db_path(b->db), o->binary);
		b->raw.binaries = b->bins;
		b->raw.nbinaries = b->nbins;
	}
	return 0;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b < 0);
}

/*
 * Can sample_time give phases 1 and 2 exactly?  Its fine buckets must map
 * whole into the buckets (the bucket and --from multiples of their width),
 * and no row of the fine bucket holding --to (inclusive) may hold samples
 * both up to --to and after it: its rows before --to are counted, those
 * after it not (b->cut).  With no symbol involved: sample_time has no
 * offsets.
 */
int tl_time_sums_usable(struct build *b)
{
	const struct db_session *s = &b->t->session;
	struct timeline *t = b->t;
	int64_t w = s->time_bucket_ns, across = 1;
	sqlite3_stmt *st;
	int rc;

	if (b->o->raw || b->o->where || b->need_locs || w <= 0 || t->bucket_ns % w ||
	    (t->from_ns - s->start_ns) % w)
		return 0;
	b->k0 = floor_div(t->from_ns - s->start_ns, w);
	b->k1 = floor_div(t->to_ns - s->start_ns, w);
	b->cut = (t->to_ns - s->start_ns + 1) % w != 0;
	if (!b->cut)
		return 1;
	if (sqlite3_prepare_v2(db_sqlite(b->db), "SELECT count(*) FROM sample_time WHERE "
			       "session_id=?1 AND bucket=?2 AND min_ns<=?3 AND max_ns>?3",
			       -1, &st, NULL))
		return tl_sql_fail(b, "reading sample_time");
	sqlite3_bind_int64(st, 1, s->id);
	sqlite3_bind_int64(st, 2, b->k1);
	sqlite3_bind_int64(st, 3, t->to_ns);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		across = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return tl_sql_fail(b, "reading sample_time");
	return across == 0;
}

/* Open the rows of phases 1 and 2 (struct trow): sample_time's sums when
 * b->summed, else the raw rows of b->raw. */
int tsrc_open(struct build *b, struct tsrc *src)
{
	const struct db_session *s = &b->t->session;
	struct sbuf sql = { 0 };
	int rc;

	memset(src, 0, sizeof(*src));
	src->nev = MIN((int)s->nr_events, STROBE_MAX_COUNTERS);
	if (!b->summed) {
		src->sc = sample_scan_open(b->db, &b->raw, b->e);
		return src->sc ? 0 : -1;
	}
	sbuf_addf(&sql, "SELECT cpu,pid,binary_id,0,comm_id,%lld+bucket*%lld,last_row,samples,"
		  "start_ns",
		  (long long)s->start_ns, (long long)s->time_bucket_ns);
	for (int i = 0; i < src->nev; i++)
		sbuf_addf(&sql, ",c%d", i);
	sbuf_addf(&sql, " FROM sample_time WHERE session_id=%lld AND bucket BETWEEN "
		  "%lld AND %lld%s", (long long)s->id, (long long)b->k0, (long long)b->k1,
		  b->filt.n ? b->filt.s : "");
	if (b->cut)
		sbuf_addf(&sql, " AND (bucket<%lld OR max_ns<=%lld)", (long long)b->k1,
			  (long long)b->t->to_ns);
	rc = sqlite3_prepare_v2(db_sqlite(b->db), sql.s, -1, &src->st, NULL);
	free(sql.s);
	return rc ? tl_sql_fail(b, "reading samples") : 0;
}

/* The next row into *r: 1, 0 after the last, -1 on error. */
int tsrc_next(struct build *b, struct tsrc *src, struct trow *r)
{
	if (src->sc) {
		const struct sample_scan_row *row;
		int rc = sample_scan_next(src->sc, &row, b->e);

		if (rc != 1)
			return rc;
		r->cpu = row->r->v[SB_CPU];
		r->pid = row->r->v[SB_PID];
		r->bin = row->r->v[SB_BINARY_ID];
		r->off = row->r->v[SB_OFFSET];
		r->comm = row->r->v[SB_COMM_ID];
		r->time = row->r->v[SB_TIME_NS];
		r->row = row->rowid;
		r->start = 0;
		r->n = 1;
		for (int i = 0; i < src->nev; i++)
			r->c[i] = (uint64_t)row->r->v[SB_C0 + i];
		return 1;
	}
	switch (sqlite3_step(src->st)) {
	case SQLITE_ROW:
		break;
	case SQLITE_DONE:
		return 0;
	default:
		return tl_sql_fail(b, "reading samples");
	}
	r->cpu = sqlite3_column_int64(src->st, 0);
	r->pid = sqlite3_column_int64(src->st, 1);
	r->bin = sqlite3_column_int64(src->st, 2);
	r->off = sqlite3_column_int64(src->st, 3);
	r->comm = sqlite3_column_int64(src->st, 4);
	r->time = sqlite3_column_int64(src->st, 5);
	r->row = sqlite3_column_int64(src->st, 6);
	r->n = (uint64_t)sqlite3_column_int64(src->st, 7);
	r->start = sqlite3_column_int64(src->st, 8);
	for (int i = 0; i < src->nev; i++)
		r->c[i] = (uint64_t)sqlite3_column_int64(src->st, 9 + i);
	return 1;
}

void tsrc_close(struct tsrc *src)
{
	sqlite3_finalize(src->st);
	sample_scan_close(src->sc);
}

/* Row r into the buckets of all and, if given, of vg (a group's). */
void tl_add_row(struct timeline *t, const struct trow *r, double *vg)
{
	size_t bk = (size_t)((r->time - t->from_ns) / t->bucket_ns);
	int nv = t->nv;
	double *va;

	if (bk >= t->nbuckets)
		bk = t->nbuckets - 1;
	va = &t->all.v[bk * (size_t)nv];
	if (vg)
		vg += bk * (size_t)nv;
	va[TL_SAMPLES] += (double)r->n;
	t->all.total[TL_SAMPLES] += r->n;
	if (vg)
		vg[TL_SAMPLES] += (double)r->n;
	for (int i = 1; i < nv; i++) {
		uint64_t c = r->c[i - 1];

		va[i] += (double)c;
		t->all.total[i] += c;
		if (vg)
			vg[i] += (double)c;
	}
}

/*
 * Can the histogram sample_agg list the filtered samples' locations?  Its
 * keys hold pid and comm_id, so the filters but the time range apply to
 * it; it is whole once the session is finished, and the time range must
 * then leave out none of its samples.
 */
int tl_agg_usable(struct build *b)
{
	const struct db_session *s = &b->t->session;
	sqlite3_stmt *st;
	int ok = 0;

	if (b->o->raw || !db_session_complete(s))
		return 0;
	if (sqlite3_prepare_v2(db_sqlite(b->db), "SELECT min(min_ns),max(max_ns) FROM "
			       "sample_blocks WHERE session_id=?1", -1, &st, NULL))
		return tl_sql_fail(b, "reading samples");
	sqlite3_bind_int64(st, 1, s->id);
	if (sqlite3_step(st) == SQLITE_ROW)
		ok = sqlite3_column_type(st, 0) != SQLITE_NULL &&
		     sqlite3_column_int64(st, 0) >= b->t->from_ns &&
		     sqlite3_column_int64(st, 1) <= b->t->to_ns;
	sqlite3_finalize(st);
	return ok;
}

/*
 * The progress of the scans of raw samples to come, as one total: those
 * of b->raw of phase 0 (when sample_agg cannot give the locations), of
 * phases 1 (--by) and 2, one scan for both (phase 1 fills the buckets
 * too, unless they take too much memory: tl_key_totals() adds phase 2 then),
 * unless sample_time gives their sums, and that of the whole session for
 * the lost intervals (when there are any).
 */
int tl_progress_plan(struct build *b)
{
	const struct timeline_opts *o = b->o;
	struct sample_scan_filter all = { .session_id = b->t->session.id };
	uint64_t total = 0, rows = b->pass_rows = sample_scan_total(b->db, &b->raw);
	sqlite3_stmt *st;
	int agg = 1, lost = 0;

	if (b->need_locs && (agg = tl_agg_usable(b)) < 0)
		return -1;
	total += (uint64_t)!agg * rows;
	if (!b->summed)
		total += rows;
	if (sqlite3_prepare_v2(db_sqlite(b->db), "SELECT 1 FROM lost WHERE session_id=?1 "
			       "LIMIT 1", -1, &st, NULL))
		return tl_sql_fail(b, "reading lost records");
	sqlite3_bind_int64(st, 1, b->t->session.id);
	lost = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (lost) {
		sample_scan_range(&b->t->session, &all.row_lo, &all.row_hi);
		total += sample_scan_total(b->db, &all);
	}
	progress_phase(o->progress, total, "samples");
	db_set_progress(b->db, o->progress);
	return 0;
}
