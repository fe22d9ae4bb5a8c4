/*
 * where.c - metric conditions (see where.h): the condition parsed, its
 * buckets evaluated through a plot's series (series.h), the kept ones as
 * time ranges for the sample scans, or per sample a row test.
 */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "expr.h"
#include "metrics.h"
#include "samplescan.h"
#include "series.h"
#include "seriesonsets.h"
#include "where.h"

static const char *op_text(enum where_op op)
{
	return op == WHERE_GT ? ">" : op == WHERE_GE ? ">=" : op == WHERE_LT ? "<" : "<=";
}

/* The comparison outside double quotes: its offset, or -1 when there is
 * none; *bad set when it is not one of > >= < <= or there are several. */
static long find_op(const char *s, int *bad)
{
	long at = -1;
	int quoted = 0;

	*bad = 0;
	for (long i = 0; s[i]; i++) {
		if (s[i] == '"') {
			quoted = !quoted;
			continue;
		}
		if (quoted || !strchr("<>=!", s[i]))
			continue;
		if (at >= 0 && !(i == at + 1 && s[i] == '=' && (s[at] == '<' || s[at] == '>')))
			*bad = 1;
		if (at < 0)
			at = i;
	}
	if (at >= 0 && (s[at] == '=' || s[at] == '!'))
		*bad = 1;
	return at;
}

#define WHERE_HOW "give EXPR OP NUMBER with OP one of > >= < <=, like " \
		  "'page-faults > 200' or '1000 * dTLB-load-misses / instructions >= 5'"

int where_parse(struct where *w, const char *arg, struct error *e)
{
	struct error pe = { "" };
	int bad;
	long at = find_op(arg, &bad);
	const char *num;
	char *lhs, *end;
	double v;

	snprintf(w->text, sizeof(w->text), "%s", arg);
	text_sanitize(w->text);	/* one line of text in notes and messages */
	if (at < 0)
		return error_set(e, "bad --where '%s': no comparison: " WHERE_HOW, w->text);
	if (bad)
		return error_set(e, "bad --where '%s': one comparison, > >= < or <=: " WHERE_HOW,
				 w->text);
	w->op = arg[at] == '>' ? (arg[at + 1] == '=' ? WHERE_GE : WHERE_GT) :
		(arg[at + 1] == '=' ? WHERE_LE : WHERE_LT);
	num = arg + at + 1 + (arg[at + 1] == '=');
	while (isspace((unsigned char)*num))
		num++;
	errno = 0;
	v = strtod(num, &end);
	while (end != num && isspace((unsigned char)*end))
		end++;
	if (!*num || end == num || *end || errno || !isfinite(v))
		return error_set(e, "bad --where '%s': '%s' after %s is not a number: " WHERE_HOW,
				 w->text, w->text + MIN((size_t)(num - arg), strlen(w->text)),
				 op_text(w->op));
	w->threshold = v;
	lhs = xmalloc((size_t)at + 1);
	memcpy(lhs, arg, (size_t)at);
	lhs[at] = 0;
	for (long i = at - 1; i >= 0 && isspace((unsigned char)lhs[i]); i--)
		lhs[i] = 0;
	{
		const char *p = lhs;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p) {
			free(lhs);
			return error_set(e, "bad --where '%s': nothing before %s: " WHERE_HOW, w->text,
					 op_text(w->op));
		}
		w->catalog = metric_find(p);
	}
	if (w->catalog) {
		w->scaled = metric_expr_scaled(w->catalog);
		w->x = expr_parse(w->scaled, &pe);
	} else {
		w->x = expr_parse(lhs, &pe);
	}
	free(lhs);
	if (!w->x)
		return error_set(e, "bad --where '%s': %s (metrics by name: 'strobe list "
				 "--metrics')", w->text, pe.msg);
	return 0;
}

int where_parse_bucket(struct where *w, const char *arg, struct error *e)
{
	if (timeline_parse_bucket(arg, &w->bucket_ns) < 0)
		return error_set(e, "bad --where-bucket '%s': give a bucket length in ms like "
				 "10 or 0.5, or with a unit like 500us or 1s (at least 1us)", arg);
	return 0;
}

void where_free(struct where *w)
{
	if (!w->borrowed) {
		expr_free(w->x);
		free(w->scaled);
	}
	free(w->keep);
	w->x = NULL;
	w->scaled = NULL;
	w->keep = NULL;
	w->ready = 0;
}

void where_borrow(const struct where *w, int invert, struct where *out)
{
	*out = *w;
	out->borrowed = 1;
	out->invert = invert;
	out->keep = NULL;
	out->nkeep = 0;
	out->ready = 0;
}

/* Were w's selection made for session s and filters o? */
static int same_selection(const struct where *w, const struct db_session *s,
			  const struct report_opts *o)
{
	const struct report_opts *a = &w->sel;

	return w->ready && w->session == s->id && a->pid == o->pid &&
	       a->has_pid_at == o->has_pid_at && a->pid_at_ns == o->pid_at_ns &&
	       a->comm == o->comm && a->binary == o->binary && a->cgroup == o->cgroup &&
	       a->mode == o->mode && a->has_from == o->has_from && a->has_to == o->has_to &&
	       (!o->has_from || a->from_ns == o->from_ns) && (!o->has_to || a->to_ns == o->to_ns);
}

/* Does value v hold the condition?  -1: undefined. */
static int holds(const struct where *w, double v)
{
	if (isnan(v))
		return -1;
	switch (w->op) {
	case WHERE_GT: return v > w->threshold;
	case WHERE_GE: return v >= w->threshold;
	case WHERE_LT: return v < w->threshold;
	case WHERE_LE: return v <= w->threshold;
	}
	return -1;
}

/* Kept by this side (the condition, or --invert): 1 or 0. */
static int kept(const struct where *w, double v)
{
	int h = holds(w, v);

	return h < 0 ? 0 : w->invert ? !h : h;
}

/* A binding failure of series.h said for --where. */
static int bind_said(const struct where *w, const struct db_session *s, int ret,
		     const char *msg, struct error *e)
{
	char evs[1200];

	series_events_text(s, evs, sizeof(evs));
	if (ret == SERIES_NO_NAME)
		error_set(e, "--where '%s': %s: session %lld has %s%s (metrics by name: "
			  "'strobe list --metrics')", w->text, msg, (long long)s->id, evs,
			  w->per_sample ? "" : ", and 'seconds'");
	else
		error_set(e, "--where '%s': %s", w->text, msg);
	return WHERE_BAD;
}

static void series_req_of(struct series_req *r, const struct where *w)
{
	memset(r, 0, sizeof(*r));
	r->metric = w->x;
	r->metric_src = w->catalog ? w->catalog->name : w->text;
	r->catalog = w->catalog;
}

/* Per sample: the names bound to s's values; "seconds" refused. */
static int select_samples(struct where *w, const struct db_session *s, struct error *e)
{
	struct series_req r;
	struct error be = { "" };
	int ret;

	series_req_of(&r, w);
	ret = series_metric_bind(s, &r, &be);
	if (ret < 0)
		return bind_said(w, s, ret, be.msg, e);
	for (size_t i = 0; i < expr_nnames(w->x); i++)
		if (!strcasecmp(expr_name(w->x, i), "seconds")) {
			error_set(e, "--where '%s' --where-sample: 'seconds' has no value per "
				  "sample: use --where without --where-sample, whose buckets "
				  "have a length", w->text);
			return WHERE_BAD;
		}
	w->nev = MIN(s->nr_events, STROBE_MAX_COUNTERS);
	return 0;
}

/* Bucket b's kept range, inclusive: to the next bucket's start, the last
 * to the range's end itself (a timeline's last bucket holds it). */
static void add_range(struct where *w, size_t *cap, int64_t lo, int64_t hi)
{
	if (w->nkeep && w->keep[2 * w->nkeep - 1] + 1 >= lo) {
		w->keep[2 * w->nkeep - 1] = hi;	/* adjacent: merged */
		return;
	}
	ARRAY_GROW(w->keep, *cap, 2 * w->nkeep + 2);
	w->keep[2 * w->nkeep] = lo;
	w->keep[2 * w->nkeep + 1] = hi;
	w->nkeep++;
}

int where_select(struct where *w, struct db *db, const struct db_session *s,
		 const struct report_opts *o, struct error *e)
{
	struct series_source src;
	struct series_req r;
	struct series *se = NULL;
	struct error ce = { "" };
	const struct timeline *t;
	size_t cap = 0;
	int ret;

	if (same_selection(w, s, o))
		return 0;
	free(w->keep);
	w->keep = NULL;
	w->nkeep = w->buckets = w->kept = w->undefined = 0;
	w->samples = w->samples_kept = w->samples_undefined = 0;
	w->kept_ns = 0;
	w->seen = w->held = w->undef = 0;
	w->ready = 0;
	if (w->per_sample) {
		if ((ret = select_samples(w, s, e)) < 0)
			return ret;
		w->session = s->id;
		w->sel = *o;
		w->ready = 1;
		return 0;
	}
	if (series_source_db(&src, db, s->id, e) < 0)
		return -1;
	series_req_of(&r, w);
	timeline_opts_from_report(o, &r.opts);
	r.opts.session = s->id;
	r.opts.by = TL_BY_NONE;
	r.opts.progress = o->progress;
	r.opts.bucket_ns = w->bucket_ns ? w->bucket_ns : seriesonsets_session_bucket(s, &r.opts);
	ret = series_compute(&src, &r, &se, &ce);
	if (ret == SERIES_NO_NAME || ret == SERIES_UNCOVERED)
		return bind_said(w, s, ret, ce.msg, e);
	if (ret < 0)
		return error_set(e, "--where '%s': %s", w->text, ce.msg);
	t = se->t;
	w->bucket = t->bucket_ns;
	w->from_ns = t->from_ns;
	w->to_ns = t->to_ns;
	w->buckets = t->nbuckets;
	for (size_t b = 0; b < t->nbuckets; b++) {
		double v = se->line[0].v[b];
		uint64_t n = (uint64_t)timeline_value(t, NULL, b, TL_SAMPLES);
		int64_t lo = timeline_bucket_from(t, b);
		int64_t hi = b + 1 < t->nbuckets ? timeline_bucket_from(t, b + 1) - 1 : t->to_ns;

		w->samples += n;
		if (isnan(v)) {
			w->undefined++;
			w->samples_undefined += n;
		}
		if (!kept(w, v))
			continue;
		w->kept++;
		w->samples_kept += n;
		w->kept_ns += timeline_bucket_to(t, b) - lo;
		add_range(w, &cap, lo, hi);
	}
	series_free(se);
	w->session = s->id;
	w->sel = *o;
	w->ready = 1;
	return 0;
}

int where_select_db(struct where *w, struct db *db, const struct report_opts *o,
		    struct error *e)
{
	struct db_session s;

	if (db_session_get(db, o->session, &s, e) < 0)
		return -1;
	return where_select(w, db, &s, o, e);
}

/* Per sample: the condition on the row's counters ("samples": 1). */
static int row_keep(void *ctx, const struct sampleblk_row *r)
{
	struct where *w = ctx;
	double vars[TL_MAXV + 1];
	int k;

	vars[TL_SAMPLES] = 1;
	for (int i = 0; i < w->nev; i++)
		vars[1 + i] = r->null & (1u << (SB_C0 + i)) ? NAN : (double)r->v[SB_C0 + i];
	vars[1 + w->nev] = NAN;	/* "seconds": refused by select_samples() */
	{
		double v = expr_eval(w->x, vars);

		w->seen++;
		if (isnan(v))
			w->undef++;
		k = kept(w, v);
	}
	w->held += (uint64_t)k;
	return k;
}

void where_scan(struct where *w, struct sample_scan_filter *f)
{
	if (w->per_sample) {
		f->row_keep = row_keep;
		f->row_ctx = w;
		if (f->cols)
			for (int i = 0; i < w->nev; i++)
				f->cols |= 1u << (SB_C0 + i);
		return;
	}
	f->has_keep = 1;
	f->keep = w->keep;
	f->nkeep = w->nkeep;
	if (w->nkeep) {	/* the blocks outside the kept ranges are not read */
		int64_t lo = w->keep[0], hi = w->keep[2 * w->nkeep - 1];

		if (!f->has_time) {
			f->has_time = 1;
			f->time_lo = INT64_MIN;
			f->time_hi = INT64_MAX;
		}
		f->time_lo = MAX(f->time_lo, lo);
		f->time_hi = MIN(f->time_hi, hi);
	}
}

void where_said(const struct where *w, char *buf, size_t len)
{
	snprintf(buf, len, "--where '%s'%s%s", w->text, w->invert ? " --invert" : "",
		 w->per_sample ? " --where-sample" : "");
}

void where_note(const struct where *w, char *buf, size_t len)
{
	char said[640];

	where_said(w, said, sizeof(said));
	if (w->per_sample) {
		snprintf(buf, len, "%s: %llu of %llu samples kept (%llu undefined, kept by "
			 "neither side)", said, (unsigned long long)w->held,
			 (unsigned long long)w->seen, (unsigned long long)w->undef);
		return;
	}
	snprintf(buf, len, "%s (buckets of %.9g ms): %zu of %zu buckets kept, %zu undefined "
		 "(kept by neither side), with %llu of %llu samples", said, w->bucket / 1e6,
		 w->kept, w->buckets, w->undefined, (unsigned long long)w->samples_kept,
		 (unsigned long long)w->samples);
}
