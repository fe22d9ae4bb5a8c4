/*
 * diff.c - two sessions' hot spots compared (see diff.h).
 *
 * Rows come from report_build() once per session; diff_add() collects
 * them with their side, diff_finish() sorts them by name, merges the rows
 * of equal names (within a side, and A's with B's), then computes each
 * difference and its noise mark and sorts by the difference's size.
 */
#include "config.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "diff.h"
#include "where.h"

int diff_within_noise(double a_pct, uint64_t na, double b_pct, uint64_t nb)
{
	double pa = a_pct / 100, pb = b_pct / 100, p, se;

	if (!na || !nb)
		return 0;
	p = (pa * (double)na + pb * (double)nb) / ((double)na + (double)nb);
	if (p < 0)
		p = 0;
	if (p > 1)
		p = 1;
	se = sqrt(p * (1 - p) * (1.0 / (double)na + 1.0 / (double)nb));
	/* a tiny slack: shares read back from 2-decimal percentages of
	 * equal counts must still compare equal */
	return fabs(pb - pa) <= DIFF_NOISE_SE * se + 1e-12;
}

static void note_add(struct diff *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note_add(struct diff *d, const char *fmt, ...)
{
	va_list ap;

	if (d->nr_notes >= DIFF_NR_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(d->notes[d->nr_notes], sizeof(d->notes[0]), fmt, ap);
	va_end(ap);
	text_sanitize(d->notes[d->nr_notes]);
	d->nr_notes++;
}

struct diff *diff_new(enum report_by by, const char *const *ev_a, int na,
		      const char *const *ev_b, int nb)
{
	struct diff *d = xcalloc(1, sizeof(*d));
	int i, j;

	d->by = by;
	na = MIN(na, STROBE_MAX_COUNTERS);
	nb = MIN(nb, STROBE_MAX_COUNTERS);
	for (i = 0; i < na; i++) {
		for (j = 0; j < nb && strcmp(ev_a[i], ev_b[j]); j++)
			;
		if (j == nb)
			continue;
		snprintf(d->evname[d->nev], sizeof(d->evname[0]), "%s", ev_a[i]);
		d->evcol[0][d->nev] = i;
		d->evcol[1][d->nev] = j;
		d->nev++;
	}
	return d;
}

void diff_free(struct diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->rows[i].binary);
		free(d->rows[i].symbol);
		free(d->rows[i].source);
	}
	free(d->rows);
	free(d->sum[0]);
	free(d->sum[1]);
	free(d);
}

void diff_add(struct diff *d, int side, const char *binary, const char *symbol,
	      const char *source, uint64_t samples, double percent, const uint64_t *ev)
{
	struct diff_row *r;
	int k;

	ARRAY_GROW(d->rows, d->cap, d->n + 1);
	r = &d->rows[d->n++];
	memset(r, 0, sizeof(*r));
	r->binary = xstrdup(binary ? binary : "");
	r->symbol = d->by != REPORT_BY_BINARY && symbol ? xstrdup(symbol) : NULL;
	r->source = d->by == REPORT_BY_LINE ? xstrdup(source ? source : "") : NULL;
	r->samples[side] = samples;
	r->percent[side] = percent;
	for (k = 0; ev && k < d->nev; k++)
		r->ev[side][k] = ev[d->evcol[side][k]];
	d->sorted = 0;
}

int diff_add_report(struct diff *d, int side, const struct table *t, struct error *e)
{
	int c_bin = table_col(t, "binary"), c_sym = table_col(t, "symbol");
	int c_src = table_col(t, "source"), c_samples = table_col(t, "samples");
	int c_pct = table_col(t, "percent");
	size_t i;

	if (c_bin < 0 || c_samples < 0 || c_pct < 0 ||
	    (d->by != REPORT_BY_BINARY && c_sym < 0) || (d->by == REPORT_BY_LINE && c_src < 0))
		return error_set(e, "comparing sessions: the report lacks its binary, "
				 "symbol, source, samples or percent column");
	for (i = 0; i < table_rows(t); i++) {
		const char *bin = NULL, *sym = NULL, *src = NULL;
		uint64_t ev[STROBE_MAX_COUNTERS] = { 0 };
		int64_t n = 0, v;
		double pct = 0;
		int k;

		table_get_str(t, i, c_bin, &bin);
		if (c_sym >= 0)
			table_get_str(t, i, c_sym, &sym);
		if (c_src >= 0)
			table_get_str(t, i, c_src, &src);
		table_get_int(t, i, c_samples, &n);
		table_get_float(t, i, c_pct, &pct);
		/* the events follow percent, in the session's order */
		for (k = 0; k < STROBE_MAX_COUNTERS; k++)
			if (!table_get_int(t, i, c_pct + 1 + k, &v) && v > 0)
				ev[k] = (uint64_t)v;
		diff_add(d, side, bin, sym, src, n > 0 ? (uint64_t)n : 0, pct, ev);
	}
	return 0;
}

static int optcmp(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

static int row_name_cmp(const void *pa, const void *pb)
{
	const struct diff_row *a = pa, *b = pb;
	int c;

	if ((c = strcmp(a->binary, b->binary)))
		return c;
	if ((c = optcmp(a->symbol, b->symbol)))
		return c;
	return optcmp(a->source, b->source);
}

static int row_delta_cmp(const void *pa, const void *pb)
{
	const struct diff_row *a = pa, *b = pb;
	double x = fabs(a->delta), y = fabs(b->delta);

	if (x != y)
		return x > y ? -1 : 1;
	return row_name_cmp(pa, pb);
}

void diff_finish(struct diff *d, uint64_t total_a, uint64_t total_b)
{
	size_t i, n = 0;
	int s, k;

	d->total[0] = total_a;
	d->total[1] = total_b;
	if (d->n)
		qsort(d->rows, d->n, sizeof(*d->rows), row_name_cmp);
	for (i = 0; i < d->n; i++) {
		struct diff_row *r = &d->rows[i], *m = n ? &d->rows[n - 1] : NULL;

		if (m && !row_name_cmp(m, r)) {
			for (s = 0; s < 2; s++) {
				m->samples[s] += r->samples[s];
				m->percent[s] += r->percent[s];
				for (k = 0; k < d->nev; k++)
					m->ev[s][k] += r->ev[s][k];
			}
			free(r->binary);
			free(r->symbol);
			free(r->source);
			continue;
		}
		if (n != i)
			d->rows[n] = *r;
		n++;
	}
	d->n = n;
	for (i = 0; i < d->n; i++) {
		struct diff_row *r = &d->rows[i];

		r->delta = r->percent[1] - r->percent[0];
		r->within_noise = diff_within_noise(r->percent[0], total_a, r->percent[1], total_b);
	}
	if (d->n)
		qsort(d->rows, d->n, sizeof(*d->rows), row_delta_cmp);
	d->sorted = 1;
}

/* diff_sessions() but that a and b may be one session (two windows of it). */
static int sessions_load(struct db *db, int64_t a, int64_t b, struct db_session s[2],
			 struct error *e)
{
	int64_t id[2] = { a, b };

	for (int i = 0; i < 2; i++) {
		int64_t max = 0;

		if (id[i] <= 0) {
			error_set(e, "bad session id %lld: give a session id ('strobe "
				  "sessions' lists them)", (long long)id[i]);
			return -2;
		}
		if (db_session_get(db, id[i], &s[i], e) < 0) {
			/* a session that is not there is the user's mistake; a
			 * database that cannot be read is not */
			if (db_session_max_id(db, &max, e) < 0)
				return -1;
			error_set(e, "no session %lld (%s): 'strobe sessions' lists them",
				  (long long)id[i], i ? "B" : "A");
			return -2;
		}
		if (!strcmp(s[i].state, "running")) {
			error_set(e, "session %lld (%s) is still running: stop it with "
				  "'strobe stop' first, then compare it", (long long)id[i],
				  i ? "B" : "A");
			return -2;
		}
	}
	return 0;
}

int diff_sessions(struct db *db, int64_t a, int64_t b, struct db_session s[2],
		  struct error *e)
{
	if (a == b) {
		error_set(e, "A and B are both session %lld: give two different sessions "
			  "('strobe sessions' lists them)", (long long)a);
		return -2;
	}
	return sessions_load(db, a, b, s, e);
}

struct diff *diff_begin(const struct db_session s[2], enum report_by by)
{
	const char *names[2][STROBE_MAX_COUNTERS];
	struct diff *d;
	int side, i, j;

	for (side = 0; side < 2; side++)
		for (i = 0; i < s[side].nr_events && i < STROBE_MAX_COUNTERS; i++)
			names[side][i] = s[side].events[i].name;
	d = diff_new(by, names[0], MIN(s[0].nr_events, STROBE_MAX_COUNTERS), names[1],
		     MIN(s[1].nr_events, STROBE_MAX_COUNTERS));
	d->session[0] = s[0].id;
	d->session[1] = s[1].id;

	if (strcmp(s[0].sample_event, s[1].sample_event))
		note_add(d, "A samples %s, B %s: their shares are of different events",
			 s[0].sample_event, s[1].sample_event);
	for (side = 0; side < 2; side++)
		if (s[side].lost > 0)
			note_add(d, "%s (session %lld): %lld samples lost (see 'strobe report "
				 "--session %lld'): its percentages are of the samples kept",
				 side ? "B" : "A", (long long)s[side].id, (long long)s[side].lost,
				 (long long)s[side].id);
	for (side = 0; side < 2; side++)
		for (i = 0; i < s[side].nr_events && i < STROBE_MAX_COUNTERS; i++) {
			for (j = 0; j < d->nev && strcmp(d->evname[j], names[side][i]); j++)
				;
			if (j == d->nev)
				note_add(d, "%s counted %s, %s did not: left out", side ? "B" : "A",
					 names[side][i], side ? "A" : "B");
		}
	return d;
}

int diff_add_side(struct diff *d, int side, const struct table *t,
		  struct report_summary *sum, struct error *e)
{
	d->sum[side] = sum;
	if (diff_add_report(d, side, t, e) < 0)
		return -1;
	for (int i = 0; i < sum->nr_notes; i++)
		note_add(d, "%s (session %lld): %s", side ? "B" : "A",
			 (long long)d->session[side], sum->notes[i]);
	return 0;
}

void diff_end(struct diff *d)
{
	diff_finish(d, d->sum[0]->samples, d->sum[1]->samples);
	for (int side = 0; side < 2; side++)
		if (!d->total[side])
			note_add(d, "%s (session %lld) has no samples that pass the filters: "
				 "no difference is within noise", side ? "B" : "A",
				 (long long)d->session[side]);
}

/* The sides' reports with filters ro[0], ro[1] (their sessions s[0], s[1],
 * checked), matched and finished. */
static int build_sides(struct db *db, const struct db_session s[2], enum report_by by,
		       const struct report_opts ro[2], struct diff **out, struct error *e)
{
	struct diff *d = diff_begin(s, by);

	for (int side = 0; side < 2; side++) {
		struct report_opts o = ro[side];
		struct report_summary *sum = xcalloc(1, sizeof(*sum));
		struct table *t;
		int rc;

		o.by = by;
		o.limit = 0;
		o.inline_chain = 0;
		t = report_build(db, &o, sum, e);
		if (!t) {
			d->sum[side] = sum;
			goto fail;
		}
		rc = diff_add_side(d, side, t, sum, e);
		table_free(t);
		if (rc < 0)
			goto fail;
	}
	diff_end(d);
	*out = d;
	return 0;
fail:
	diff_free(d);
	return -1;
}

static int by_check(enum report_by by, struct error *e)
{
	if (by != REPORT_BY_BINARY && by != REPORT_BY_SYMBOL && by != REPORT_BY_LINE)
		return error_set(e, "sessions are compared by binary, symbol or line");
	return 0;
}

int diff_build(struct db *db, int64_t a, int64_t b, enum report_by by,
	       const struct report_opts *o, struct diff **out, struct error *e)
{
	struct db_session s[2];
	struct report_opts ro[2] = { *o, *o };
	int rc;

	*out = NULL;
	if (by_check(by, e) < 0)
		return -1;
	rc = diff_sessions(db, a, b, s, e);
	if (rc < 0)
		return rc;
	ro[0].session = a;
	ro[1].session = b;
	return build_sides(db, s, by, ro, out, e);
}

int diff_build_windows(struct db *db, const struct diff_window w[2], enum report_by by,
		       const struct report_opts *o, struct diff **out, struct error *e)
{
	struct db_session s[2];
	struct report_opts ro[2] = { *o, *o };
	int rc;

	*out = NULL;
	if (by_check(by, e) < 0)
		return -1;
	if (w[0].session == w[1].session && w[0].from_ns == w[1].from_ns &&
	    w[0].to_ns == w[1].to_ns) {
		error_set(e, "A and B are the same window of session %lld: give two different "
			  "windows or sessions", (long long)w[0].session);
		return -2;
	}
	rc = sessions_load(db, w[0].session, w[1].session, s, e);
	if (rc < 0)
		return rc;
	ro[0].session = w[0].session;
	ro[1].session = w[1].session;
	if (diff_windows_opts(ro, w, e) < 0)
		return -2;
	rc = build_sides(db, s, by, ro, out, e);
	if (rc < 0)
		return rc;
	diff_set_windows(*out, w);
	return 0;
}

int diff_build_where(struct db *db, enum report_by by, const struct report_opts *o,
		     struct diff **out, struct error *e)
{
	struct db_session s[2];
	struct report_opts ro[2] = { *o, *o };
	struct where w[2];
	int64_t id = o->session;
	int rc;

	*out = NULL;
	if (by_check(by, e) < 0)
		return -1;
	if (!o->where || !o->where->x) {
		error_set(e, "one session is compared with itself by a condition: give --where");
		return -2;
	}
	if (id <= 0) {
		if (db_session_get(db, 0, &s[0], e) < 0)
			return -1;
		id = s[0].id;
	}
	rc = sessions_load(db, id, id, s, e);
	if (rc < 0)
		return rc;
	for (int side = 0; side < 2; side++) {
		/* A: the rest, B: the condition as given */
		where_borrow(o->where, side ? o->where->invert : !o->where->invert, &w[side]);
		ro[side].session = id;
		ro[side].where = &w[side];
	}
	rc = build_sides(db, s, by, ro, out, e);
	if (!rc)
		for (int side = 0; side < 2; side++)
			where_said(&w[side], (*out)->where[side], sizeof((*out)->where[side]));
	where_free(&w[0]);
	where_free(&w[1]);
	return rc;
}

int diff_windows_opts(struct report_opts ro[2], const struct diff_window w[2],
		      struct error *e)
{
	int side;

	for (side = 0; side < 2; side++) {
		if (report_opts_window(&ro[side], w[side].from_ns, w[side].to_ns, e) < 0) {
			error_prefix(e, "%s", side ? "B" : "A");
			return -2;
		}
	}
	return 0;
}

void diff_set_windows(struct diff *d, const struct diff_window w[2])
{
	int side;

	for (side = 0; side < 2; side++) {
		d->window[side][0] = w[side].from_ns;
		d->window[side][1] = w[side].to_ns;
		d->has_window[side] = 1;
	}
}

static void meta_int(struct table *t, const char *key, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	table_add_meta(t, key, buf, 1);
}

static const char *by_name(enum report_by by)
{
	return by == REPORT_BY_BINARY ? "binary" : by == REPORT_BY_LINE ? "line" : "symbol";
}

struct table *diff_table(const struct diff *d, const struct report_opts *o,
			 enum output_format fmt, size_t limit)
{
	struct table *t = table_new();
	int c_bin, c_sym, c_samp, c_pct, c_delta, c_noise, c_ev0 = -1, c_src = -1, k, s;
	size_t i, nshow = d->n;
	struct sbuf f = { 0 };
	char buf[96];

	c_bin = table_add_col(t, "binary", COL_STR);
	c_sym = table_add_col(t, "symbol", COL_STR);
	c_samp = table_add_col(t, "a_samples", COL_INT);
	table_add_col(t, "b_samples", COL_INT);
	c_pct = table_add_col(t, "a_percent", COL_PCT);
	table_add_col(t, "b_percent", COL_PCT);
	c_delta = table_add_col(t, "delta_percent", COL_PCT);
	c_noise = table_add_col(t, fmt == OUTPUT_TEXT ? "noise" : "within_noise",
				fmt == OUTPUT_TEXT ? COL_STR : COL_INT);
	for (k = 0; k < d->nev; k++) {
		static const char *const pre[] = { "a_", "b_", "delta_" };

		for (s = 0; s < 3; s++) {
			char name[160];
			int c;

			snprintf(name, sizeof(name), "%s%s", pre[s], d->evname[k]);
			c = table_add_col(t, name, COL_INT);
			if (c_ev0 < 0)
				c_ev0 = c;
		}
	}
	if (d->by == REPORT_BY_LINE)
		c_src = table_add_col(t, "source", COL_STR);

	for (s = 0; s < 2; s++) {
		char key[32];

		snprintf(key, sizeof(key), "%s_session", s ? "b" : "a");
		meta_int(t, key, d->session[s]);
		snprintf(key, sizeof(key), "%s_samples", s ? "b" : "a");
		meta_int(t, key, (int64_t)d->total[s]);
		if (d->host[s][0]) {
			snprintf(key, sizeof(key), "%s_host", s ? "b" : "a");
			table_add_meta(t, key, d->host[s], 0);
		}
		if (d->where[s][0]) {
			snprintf(key, sizeof(key), "%s_where", s ? "b" : "a");
			table_add_meta(t, key, d->where[s], 0);
		}
		if (d->has_window[s]) {
			char w[96];

			snprintf(key, sizeof(key), "%s_window", s ? "b" : "a");
			snprintf(w, sizeof(w), "%.9gs-%.9gs", d->window[s][0] / 1e9,
				 d->window[s][1] / 1e9);
			table_add_meta(t, key, w, 0);
		}
		if (d->sum[s]) {
			snprintf(key, sizeof(key), "%s_name", s ? "b" : "a");
			table_add_meta(t, key, d->sum[s]->session.name, 0);
			snprintf(key, sizeof(key), "%s_percent_of", s ? "b" : "a");
			table_add_meta(t, key, d->sum[s]->weighted ? "period" : "samples", 0);
		}
	}
	table_add_meta(t, "by", by_name(d->by), 0);
	if (o)
		report_filters_str(o, &f);
	table_add_meta(t, "filters", f.s ? f.s : "", 0);
	snprintf(buf, sizeof(buf), "|delta| <= %g standard errors (two-proportion test)",
		 DIFF_NOISE_SE);
	table_add_meta(t, "noise_rule", buf, 0);
	if (limit)
		meta_int(t, "limit", (int64_t)limit);
	free(f.s);

	if (limit && limit < nshow)
		nshow = limit;
	for (i = 0; i < nshow; i++) {
		const struct diff_row *r = &d->rows[i];
		size_t row = table_add_row(t);

		table_set_str(t, row, c_bin, r->binary);
		if (r->symbol)
			table_set_str(t, row, c_sym, r->symbol);
		for (s = 0; s < 2; s++) {
			table_set_int(t, row, c_samp + s, (int64_t)r->samples[s]);
			table_set_float(t, row, c_pct + s, r->percent[s]);
		}
		table_set_float(t, row, c_delta, r->delta);
		if (fmt == OUTPUT_TEXT)
			table_set_str(t, row, c_noise, r->within_noise ? "~" : "");
		else
			table_set_int(t, row, c_noise, r->within_noise);
		for (k = 0; k < d->nev; k++) {
			table_set_int(t, row, c_ev0 + 3 * k, (int64_t)r->ev[0][k]);
			table_set_int(t, row, c_ev0 + 3 * k + 1, (int64_t)r->ev[1][k]);
			table_set_int(t, row, c_ev0 + 3 * k + 2,
				      (int64_t)r->ev[1][k] - (int64_t)r->ev[0][k]);
		}
		if (c_src >= 0)
			table_set_str(t, row, c_src, r->source ? r->source : "");
	}
	return t;
}
