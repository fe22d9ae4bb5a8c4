/*
 * tlspans.c - what a timeline draws over its series (timeline.h): the
 * intervals where samples were lost (table lost, and one more pass over
 * the session's (cpu, time) pairs, unfiltered), those where a sampling
 * group did not count (table unscheduled), both widened to the buckets
 * they touch, and the session's markers (lib/store/eventscan.h).
 * timeline_build() adds them to its series; timeline_events() gives them
 * alone, for a window and bucket, to a caller that wants no series.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "eventscan.h"
#include "timeline_int.h"

/* ---- lost intervals ---- */

struct lostrow {
	int cpu;
	int64_t time, prev, next;
	uint64_t count;
	int throttle;
};

static int lostrow_cmp(const void *pa, const void *pb)
{
	const struct lostrow *a = pa, *c = pb;

	if (a->cpu != c->cpu)
		return a->cpu < c->cpu ? -1 : 1;
	return a->time < c->time ? -1 : a->time > c->time;
}

static int span_cmp(const void *pa, const void *pb)
{
	const struct timeline_span *a = pa, *c = pb;

	return a->from_ns < c->from_ns ? -1 : a->from_ns > c->from_ns;
}

/* Merge the overlapping or touching spans of sp[0..n), sorted by start,
 * adding their counts; returns how many are left. */
static size_t spans_merge(struct timeline_span *sp, size_t n)
{
	size_t i, j;

	for (i = 0, j = 0; i < n; i++) {
		if (j && sp[i].from_ns <= sp[j - 1].to_ns) {
			sp[j - 1].to_ns = MAX(sp[j - 1].to_ns, sp[i].to_ns);
			sp[j - 1].count += sp[i].count;
		} else {
			sp[j++] = sp[i];
		}
	}
	return j;
}

/* [*from, *to) of t's range widened to the buckets it touches. */
static void span_widen(const struct timeline *t, int64_t *from, int64_t *to)
{
	*from = t->from_ns + (*from - t->from_ns) / t->bucket_ns * t->bucket_ns;
	*to = t->from_ns + ((*to - t->from_ns) / t->bucket_ns + 1) * t->bucket_ns;
	*to = MIN(*to, t->from_ns + (int64_t)t->nbuckets * t->bucket_ns);
}

/* The session's lost records, sorted by (cpu, time), their gaps unknown:
 * into *rows (*n of them). */
static int lost_rows(struct db *db, int64_t session, struct lostrow **rows, size_t *n,
		     struct error *e)
{
	struct event_filter ef;
	struct lost_scan *ls;
	struct db_lost l;
	size_t cap = 0;
	int rc;

	*rows = NULL;
	*n = 0;
	event_filter_all(&ef, session);
	ls = lost_scan_open(db, &ef, e);
	if (!ls)
		return -1;
	while ((rc = lost_scan_next(ls, &l, e)) == 1) {
		struct lostrow *r;

		ARRAY_GROW(*rows, cap, *n + 1);
		r = &(*rows)[(*n)++];
		r->cpu = l.cpu;
		r->time = l.time_ns;
		r->throttle = !strcmp(l.kind, "throttle");
		r->count = r->throttle ? 0 : l.count;
		r->prev = INT64_MIN;
		r->next = INT64_MAX;
	}
	lost_scan_close(ls);
	if (rc < 0)
		return -1;
	if (*n)
		qsort(*rows, *n, sizeof(**rows), lostrow_cmp);
	return 0;
}

/*
 * Each lost row's gap on its CPU: prev = the latest sample at or before
 * it, next = the earliest sample after it.  One pass over the session's
 * (cpu, time) pairs in any order: a sample is a candidate prev of the
 * first lost row at or after it on its CPU and a candidate next of the
 * last lost row before it; the candidates are then carried forward (prev)
 * and backward (next) along each CPU's rows.
 */
static int lost_gaps(struct db *db, const struct db_session *s, struct lostrow *rows,
		     size_t nrows, struct error *e)
{
	struct sample_scan_filter sf = { 0 };
	struct sample_scan *sc;
	const struct sample_scan_row *row;
	size_t i;
	int rc;

	sf.session_id = s->id;
	sf.cols = 1u << SB_CPU | 1u << SB_TIME_NS;
	sample_scan_range(s, &sf.row_lo, &sf.row_hi);
	sc = sample_scan_open(db, &sf, e);
	if (!sc)
		return -1;
	while ((rc = sample_scan_next(sc, &row, e)) == 1) {
		int cpu = (int)row->r->v[SB_CPU];
		int64_t time = row->r->v[SB_TIME_NS];
		size_t lo = 0, hi = nrows;

		/* first row with (cpu, time) >= (cpu, sample time) */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (rows[mid].cpu < cpu || (rows[mid].cpu == cpu && rows[mid].time < time))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nrows && rows[lo].cpu == cpu && time > rows[lo].prev)
			rows[lo].prev = time;
		if (lo > 0 && rows[lo - 1].cpu == cpu && time < rows[lo - 1].next)
			rows[lo - 1].next = time;
	}
	sample_scan_close(sc);
	if (rc < 0)
		return -1;
	for (i = 1; i < nrows; i++)
		if (rows[i].cpu == rows[i - 1].cpu && rows[i - 1].prev > rows[i].prev)
			rows[i].prev = rows[i - 1].prev;
	for (i = nrows - 1; i > 0; i--)
		if (rows[i].cpu == rows[i - 1].cpu && rows[i].next < rows[i - 1].next)
			rows[i - 1].next = rows[i].next;
	return 0;
}

int tl_lost_spans(struct db *db, struct timeline *t, struct error *e)
{
	struct lostrow *rows = NULL;
	size_t nrows = 0, i;

	if (lost_rows(db, t->session.id, &rows, &nrows, e) < 0)
		goto fail;
	if (!nrows)
		return 0;
	if (lost_gaps(db, &t->session, rows, nrows, e) < 0)
		goto fail;
	/* one allocation for the three arrays: timeline_free() frees t->lost */
	t->lost = xcalloc(3 * nrows, sizeof(*t->lost));
	t->lost_samples = t->lost + nrows;
	t->throttled = t->lost + 2 * nrows;
	for (i = 0; i < nrows; i++) {
		int64_t from = rows[i].prev == INT64_MIN ? rows[i].time : rows[i].prev;
		int64_t to = rows[i].next == INT64_MAX ? t->to_ns : rows[i].next;
		struct timeline_span *sp;

		if (to < rows[i].time)
			to = rows[i].time;
		if (to < t->from_ns || from > t->to_ns)
			continue;
		from = MAX(from, t->from_ns);
		to = MIN(to, t->to_ns);
		span_widen(t, &from, &to);
		sp = &t->lost[t->nlost++];
		sp->from_ns = from;
		sp->to_ns = to;
		sp->count = rows[i].count;
		t->lost_total += rows[i].count;
		t->throttles += rows[i].throttle;
		if (rows[i].throttle)
			t->throttled[t->nthrottled++] = (struct timeline_span){ from, to, 1 };
		else
			t->lost_samples[t->nlost_samples++] = *sp;
	}
	free(rows);
	qsort(t->lost, t->nlost, sizeof(*t->lost), span_cmp);
	t->nlost = spans_merge(t->lost, t->nlost);
	qsort(t->lost_samples, t->nlost_samples, sizeof(*t->lost), span_cmp);
	t->nlost_samples = spans_merge(t->lost_samples, t->nlost_samples);
	qsort(t->throttled, t->nthrottled, sizeof(*t->lost), span_cmp);
	t->nthrottled = spans_merge(t->throttled, t->nthrottled);
	return 0;
fail:
	free(rows);
	return -1;
}

/*
 * Where a CPU's sampling group was enabled but not counting (table
 * unscheduled): each row's interval, clipped to the range and widened to
 * the buckets it touches, overlapping ones merged.  Their count is the
 * time not counting, in ns.
 */
int tl_unsched_spans(struct db *db, struct timeline *t, struct error *e)
{
	static const char what[] = "reading when sampling groups did not count";
	size_t cap = 0;
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db_sqlite(db), "SELECT start_ns,end_ns,enabled_ns-running_ns "
			       "FROM unscheduled WHERE session_id=?1 AND end_ns>=?2 AND "
			       "start_ns<=?3 ORDER BY start_ns", -1, &st, NULL))
		return db_sql_error(db, e, what);
	sqlite3_bind_int64(st, 1, t->session.id);
	sqlite3_bind_int64(st, 2, t->from_ns);
	sqlite3_bind_int64(st, 3, t->to_ns);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t from = MAX(sqlite3_column_int64(st, 0), t->from_ns);
		int64_t to = MIN(sqlite3_column_int64(st, 1), t->to_ns);
		struct timeline_span *sp;

		span_widen(t, &from, &to);
		ARRAY_GROW(t->unsched, cap, t->nunsched + 1);
		sp = &t->unsched[t->nunsched++];
		sp->from_ns = from;
		sp->to_ns = to;
		sp->count = (uint64_t)sqlite3_column_int64(st, 2);
		t->unsched_ns += sp->count;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_sql_error(db, e, what);
	t->nunsched = spans_merge(t->unsched, t->nunsched);
	return 0;
}

/* ---- markers ---- */

#define TL_MAX_MARKERS 10000

int tl_markers(struct db *db, struct timeline *t, struct error *e)
{
	struct event_filter ef;
	struct marker_scan *sc;
	struct db_marker dm;
	size_t cap = 0;
	int rc;

	event_filter_all(&ef, t->session.id);
	ef.time_lo = t->from_ns;
	ef.time_hi = t->to_ns;
	ef.limit = TL_MAX_MARKERS + 1;
	sc = marker_scan_open(db, &ef, e);
	if (!sc)
		return -1;
	while ((rc = marker_scan_next(sc, &dm, e)) == 1) {
		struct timeline_marker *m;

		if (t->nmarkers == TL_MAX_MARKERS) {
			snprintf(t->note, sizeof(t->note), "only the first %d markers of the "
				 "range are drawn", TL_MAX_MARKERS);
			break;
		}
		ARRAY_GROW(t->markers, cap, t->nmarkers + 1);
		m = &t->markers[t->nmarkers++];
		m->time_ns = (int64_t)dm.time_ns;
		snprintf(m->kind, sizeof(m->kind), "%s", dm.kind);
		snprintf(m->name, sizeof(m->name), "%s", dm.name);
		snprintf(m->args, sizeof(m->args), "%s", dm.args ? dm.args : "");
	}
	marker_scan_close(sc);
	return rc < 0 ? -1 : 0;
}

/* ---- alone ---- */

struct timeline *timeline_events(struct db *db, const struct timeline_opts *o,
				 struct error *e)
{
	struct timeline *t = xcalloc(1, sizeof(*t));
	struct build b = { .db = db, .o = o, .t = t, .e = e };
	int64_t end = 0;
	char what[64];

	if (db_session_get(db, o->session, &t->session, e) < 0)
		goto fail;
	t->nv = 1 + t->session.nr_events;
	snprintf(what, sizeof(what), "session %lld", (long long)t->session.id);
	if (tl_session_end(&b, &end) < 0 ||
	    timeline_range(t, o, t->session.start_ns, end, what, e) < 0)
		goto fail;
	if (tl_lost_spans(db, t, e) < 0 || tl_unsched_spans(db, t, e) < 0 ||
	    tl_markers(db, t, e) < 0)
		goto fail;
	return t;
fail:
	timeline_free(t);
	return NULL;
}
