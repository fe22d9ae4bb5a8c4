/*
 * phases.c - a session cut at its change points, each phase's levels, hot
 * spots and growth against the one before (see phases.h).
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diff.h"
#include "phases.h"
#include "seriesonsets.h"

static int size_cmp(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;

	return (a > b) - (a < b);
}

/* The buckets where a phase starts: 0, then every line's change points,
 * sorted, each once; *n of them. */
static size_t *phases_cuts(const struct series *s, const struct phases_opts *po, size_t *n,
			   struct error *e)
{
	size_t *cut = xcalloc(1, sizeof(*cut)), ncut = 1, cap = 1, m = 0;

	for (size_t i = 0; i < s->n; i++) {
		struct onset *out = NULL;
		size_t nout = 0;

		if (seriesonsets_find(s, i, po->metric, &po->onsets, &out, &nout, e) < 0) {
			free(cut);
			return NULL;
		}
		ARRAY_GROW(cut, cap, ncut + nout);
		for (size_t k = 0; k < nout; k++)
			cut[ncut++] = out[k].at;
		free(out);
	}
	qsort(cut, ncut, sizeof(*cut), size_cmp);
	for (size_t i = 0; i < ncut; i++)
		if (!m || cut[m - 1] != cut[i])
			cut[m++] = cut[i];
	*n = m;
	return cut;
}

/* "TITLE=VALUE; ...": each line's mean over buckets [lo, hi). */
static void phases_levels(const struct series *s, size_t lo, size_t hi, struct sbuf *b)
{
	size_t nb = seriesonsets_buckets(s);

	for (size_t i = 0; i < s->n; i++) {
		double sum = 0;
		size_t n = 0;

		for (size_t k = lo; k < hi && k < nb; k++)
			if (!isnan(s->line[i].v[k])) {
				sum += s->line[i].v[k];
				n++;
			}
		sbuf_addf(b, "%s%s=", i ? "; " : "", s->line[i].title);
		if (n)
			sbuf_addf(b, "%.4g", sum / (double)n);
	}
}

/* The name a row of the report (or diff) is shown by. */
static const char *phases_name(enum report_by by, const char *binary, const char *symbol,
			       const char *source)
{
	if (by == REPORT_BY_LINE && source && *source)
		return source;
	if (by != REPORT_BY_BINARY && symbol && *symbol)
		return symbol;
	return binary ? binary : "";
}

/* "NAME PERCENT%; ..." of the first top rows of report table t. */
static void phases_top(const struct table *t, enum report_by by, int top, struct sbuf *b)
{
	int cb = table_col(t, "binary"), cs = table_col(t, "symbol"), cl = table_col(t, "source");
	int cp = table_col(t, "percent");

	for (size_t r = 0; r < table_rows(t) && r < (size_t)top; r++) {
		const char *bin = NULL, *sym = NULL, *src = NULL;
		double pct = 0;

		table_get_str(t, r, cb, &bin);
		if (cs >= 0)
			table_get_str(t, r, cs, &sym);
		if (cl >= 0)
			table_get_str(t, r, cl, &src);
		table_get_float(t, r, cp, &pct);
		sbuf_addf(b, "%s%s %.1f%%", r ? "; " : "", phases_name(by, bin, sym, src), pct);
	}
}

/* grew and shrank of phase row r: the diff of the windows w. */
static int phases_growth(struct db *db, const struct diff_window w[2],
			 const struct phases_opts *po, struct table *tb, size_t r, int col,
			 struct error *e)
{
	const struct diff_row *up = NULL, *down = NULL;
	struct diff *d = NULL;

	if (diff_build_windows(db, w, po->ro->by, po->ro, &d, e) != 0)
		return -1;
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_row *x = &d->rows[i];

		if (x->within_noise)
			continue;
		if (x->delta > 0 && (!up || x->delta > up->delta))
			up = x;
		if (x->delta < 0 && (!down || x->delta < down->delta))
			down = x;
	}
	if (up) {
		table_set_str(tb, r, col, phases_name(po->ro->by, up->binary, up->symbol,
						      up->source));
		table_set_float(tb, r, col + 1, up->delta);
	}
	if (down) {
		table_set_str(tb, r, col + 2, phases_name(po->ro->by, down->binary, down->symbol,
							  down->source));
		table_set_float(tb, r, col + 3, down->delta);
	}
	diff_free(d);
	return 0;
}

struct table *phases_table(struct db *db, const struct series *s, const struct phases_opts *po,
			   enum output_format fmt, struct error *e)
{
	const struct timeline *t = s->t;
	int64_t start = s->session.start_ns;
	struct table *tb = table_new();
	size_t ncut = 0, *cut = phases_cuts(s, po, &ncut, e);
	struct diff_window prev = { 0 };
	char buf[64];

	if (!cut) {
		table_free(tb);
		return NULL;
	}
	table_add_col(tb, "phase", COL_INT);
	table_add_col(tb, "from_ns", COL_INT);
	table_add_col(tb, "to_ns", COL_INT);
	table_add_seconds_col(tb, "time_s", fmt);
	table_add_col(tb, "duration_s", COL_FLOAT);
	table_add_col(tb, "samples", COL_INT);
	table_add_col(tb, "levels", COL_STR);
	table_add_col(tb, "top", COL_STR);
	table_add_col(tb, "grew", COL_STR);
	table_add_col(tb, "grew_delta_percent", COL_FLOAT);
	table_add_col(tb, "shrank", COL_STR);
	table_add_col(tb, "shrank_delta_percent", COL_FLOAT);
	snprintf(buf, sizeof(buf), "%lld", (long long)t->bucket_ns);
	table_add_meta(tb, "bucket_ns", buf, 1);
	for (size_t k = 0; k < ncut; k++) {
		int64_t from = timeline_bucket_from(t, cut[k]);
		int64_t to = k + 1 < ncut ? timeline_bucket_from(t, cut[k + 1]) : t->to_ns;
		struct diff_window w[2] = { prev, { s->session.id, from - start, to - start } };
		struct report_summary sum;
		struct sbuf b = { 0 }, top = { 0 };
		struct table *rt;
		size_t r = table_add_row(tb);

		table_set_int(tb, r, 0, (int64_t)k);
		table_set_int(tb, r, 1, from);
		table_set_int(tb, r, 2, to);
		table_set_seconds(tb, r, 3, (double)(from - start) / 1e9, 3, fmt);
		table_set_float(tb, r, 4, (double)(to - from) / 1e9);
		phases_levels(s, cut[k], k + 1 < ncut ? cut[k + 1] : t->nbuckets, &b);
		table_set_str(tb, r, 6, b.s ? b.s : "");
		free(b.s);
		rt = report_window(db, po->ro, w[1].from_ns, w[1].to_ns, &sum, e);
		if (!rt)
			goto fail;
		table_set_int(tb, r, 5, (int64_t)sum.samples);
		phases_top(rt, po->ro->by, po->top, &top);
		table_set_str(tb, r, 7, top.s ? top.s : "");
		table_free(rt);
		free(top.s);
		if (k && phases_growth(db, w, po, tb, r, 8, e) < 0)
			goto fail;
		prev = w[1];
	}
	free(cut);
	return tb;
fail:
	free(cut);
	table_free(tb);
	return NULL;
}
