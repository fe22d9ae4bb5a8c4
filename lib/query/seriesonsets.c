/*
 * seriesonsets.c - the change points of a series' lines as a table (see
 * seriesonsets.h).
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "seriesonsets.h"

int64_t seriesonsets_bucket(uint64_t samples, int64_t range_ns)
{
	static const int steps[] = { 1, 2, 5 };
	double want = samples ? (double)range_ns * SERIESONSETS_SAMPLES_PER_BUCKET /
				(double)samples : (double)range_ns;
	int64_t most = range_ns / 50, us;

	if (want > (double)most)
		want = (double)most;
	if (want < 1e6)
		want = 1e6;
	if (want < (double)range_ns / TL_MAX_BUCKETS)
		want = (double)range_ns / TL_MAX_BUCKETS;	/* the most a timeline has */
	for (us = 1; us < INT64_MAX / 10; us *= 10)
		for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
			if ((double)(us * steps[i]) * 1000 >= want)
				return us * steps[i] * 1000;
	return range_ns;
}

size_t seriesonsets_buckets(const struct series *s)
{
	const struct timeline *t = s->t;
	size_t nb = t->nbuckets;

	if (nb && timeline_bucket_to(t, nb - 1) - timeline_bucket_from(t, nb - 1) < t->bucket_ns)
		nb--;	/* cut short by the range's end: its sums cover less time */
	return nb;
}

/* Per bucket of s's first nb: 1 where samples were lost or the kernel
 * throttled sampling (t->lost, both): its sums are short for a reason
 * that is not the program's, a gap as a metric's NaN is. */
static unsigned char *seriesonsets_gaps(const struct series *s, size_t nb)
{
	const struct timeline *t = s->t;
	unsigned char *gap = xcalloc(nb ? nb : 1, 1);

	for (size_t i = 0; i < t->nlost; i++) {
		const struct timeline_span *sp = &t->lost[i];

		for (size_t b = 0; b < nb; b++)
			if (timeline_bucket_from(t, b) < sp->to_ns &&
			    timeline_bucket_to(t, b) > sp->from_ns)
				gap[b] = 1;
	}
	return gap;
}

int seriesonsets_find(const struct series *s, size_t i, int metric,
		      const struct onsets_opts *o, struct onset **out, size_t *n,
		      struct error *e)
{
	const struct series_line *l = &s->line[i];
	size_t nb = seriesonsets_buckets(s), m = 0;
	double *y = xcalloc(nb ? nb : 1, sizeof(*y));
	size_t *at = xcalloc(nb ? nb : 1, sizeof(*at));
	struct onsets_opts lo = *o;
	int ret;

	unsigned char *gap = seriesonsets_gaps(s, nb);

	for (size_t b = 0; b < nb; b++) {
		if (isnan(l->v[b]) || gap[b])
			continue;
		y[m] = l->v[b];
		at[m++] = b;
	}
	if (!metric)
		lo.flags |= ONSETS_COUNTS;
	ret = onsets_find(y, m, &lo, out, n, NULL, e);
	for (size_t k = 0; !ret && k < *n; k++) {
		(*out)[k].at = at[(*out)[k].at];
		(*out)[k].lo = at[(*out)[k].lo];
		(*out)[k].hi = at[(*out)[k].hi];
	}
	free(y);
	free(at);
	free(gap);
	return ret;
}

int64_t seriesonsets_session_bucket(const struct db_session *s, const struct timeline_opts *o)
{
	int64_t from = o->has_from ? o->from_ns : 0;
	int64_t to = o->has_to && o->to_ns < s->duration_ns ? o->to_ns : s->duration_ns;
	int64_t range = to > from ? to - from : 1;
	uint64_t n = s->duration_ns > 0 ? (uint64_t)((double)s->samples * (double)range /
						     (double)s->duration_ns) : s->samples;

	return seriesonsets_bucket(n, range);
}

/* The rows of line i. */
static int line_rows(struct table *tb, const struct series *s, size_t i, int metric,
		     const struct onsets_opts *o, enum output_format fmt, struct error *e)
{
	const struct timeline *t = s->t;
	struct onset *out = NULL;
	size_t nout = 0;
	double ms = (double)t->bucket_ns / 1e6;

	if (seriesonsets_find(s, i, metric, o, &out, &nout, e) < 0)
		return -1;
	for (size_t k = 0; k < nout; k++) {
		const struct onset *c = &out[k];
		int64_t when = timeline_bucket_from(t, c->at);
		size_t left = c->at - c->lo, right = c->hi - c->at;
		size_t r = table_add_row(tb);
		double secs = (double)(when - s->session.start_ns) / 1e9;

		table_set_int(tb, r, 0, when);
		table_set_seconds(tb, r, 1, secs, 3, fmt);
		table_set_float(tb, r, 2, (double)(left > right ? left : right) * ms);
		table_set_float(tb, r, 3, c->before);
		table_set_float(tb, r, 4, c->after);
		if (isfinite(c->shift))
			table_set_float(tb, r, 5, c->shift);
		table_set_float(tb, r, 6, c->confidence);
		table_set_str(tb, r, 7, s->line[i].title);
	}
	free(out);
	return 0;
}

struct table *seriesonsets_table(const struct series *s, int metric,
				 const struct onsets_opts *o, enum output_format fmt,
				 struct error *e)
{
	struct table *tb = table_new();
	char buf[32];

	table_add_col(tb, "time_ns", COL_INT);
	table_add_seconds_col(tb, "time_s", fmt);
	table_add_col(tb, "uncertainty_ms", COL_FLOAT);
	table_add_col(tb, "before", COL_FLOAT);
	table_add_col(tb, "after", COL_FLOAT);
	table_add_col(tb, "shift", COL_FLOAT);
	table_add_col(tb, "confidence", COL_FLOAT);
	table_add_col(tb, "series", COL_STR);
	snprintf(buf, sizeof(buf), "%lld", (long long)s->t->bucket_ns);
	table_add_meta(tb, "bucket_ns", buf, 1);
	snprintf(buf, sizeof(buf), "%lld", (long long)s->session.id);
	table_add_meta(tb, "session", buf, 1);
	for (size_t i = 0; i < s->n; i++) {
		if (line_rows(tb, s, i, metric, o, fmt, e) < 0) {
			table_free(tb);
			return NULL;
		}
	}
	return tb;
}
