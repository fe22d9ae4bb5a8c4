/*
 * series.c - the series of a plot from a source's timeline (see series.h):
 * event names and a metric's names bound to the timeline's values, the
 * timeline built by the source, then one series per event (or the metric),
 * or per top group and "other" of a split.
 */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "expr.h"
#include "metrics.h"
#include "series.h"
#include "sessevent.h"

/* ---- sources ---- */

static struct timeline *db_timeline(const struct series_source *src,
				    const struct timeline_opts *o, struct error *e)
{
	struct timeline_opts one = *o;

	one.session = src->session.id;
	return timeline_build(src->ctx, &one, e);
}

int series_source_db(struct series_source *src, struct db *db, int64_t session,
		     struct error *e)
{
	memset(src, 0, sizeof(*src));
	if (db_session_get(db, session, &src->session, e) < 0)
		return -1;
	src->timeline = db_timeline;
	src->ctx = db;
	return 0;
}

/* ---- names ---- */

void series_events_text(const struct db_session *s, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < s->nr_events && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s, ", s->events[i].name);
	if (n < len)
		snprintf(buf + n, len - n, "samples (%s)", s->sample_event);
}

int series_event_value(const struct db_session *s, const char *name)
{
	int i = session_event_find(s, name);

	if (i >= 0)
		return 1 + i;
	if (!strcasecmp(name, "samples") || !strcasecmp(name, s->sample_event))
		return TL_SAMPLES;
	return -1;
}

/* A catalogue metric's event name: the session's event it is, by name or
 * alias (metrics.h: metric_event_is), as a value index, or -1. */
static int catalog_value(const struct db_session *s, const char *name)
{
	int v = series_event_value(s, name), i;

	if (v < 0 && (i = session_event_metric(s, name)) >= 0)
		v = 1 + i;
	return v;
}

static int catalog_has(void *ctx, const char *name)
{
	return catalog_value(ctx, name) >= 0;
}

struct bind {
	const struct db_session *session;
	const struct metric *catalog;
};

/* Metric names: event values, and "seconds" as index nv (the bucket length). */
static int metric_lookup(void *ctx, const char *name)
{
	const struct bind *b = ctx;
	int v = b->catalog ? catalog_value(b->session, name) : series_event_value(b->session, name);

	if (v < 0 && !strcasecmp(name, "seconds"))
		return 1 + b->session->nr_events;
	return v;
}

/*
 * Bind r's names to value indices (evidx[e] for event e), and set the
 * rankings a split needs in o: samples for a metric, else each event's
 * own (at most TL_MAXV distinct).
 */
int series_metric_bind(const struct db_session *s, struct series_req *r, struct error *e)
{
	struct bind b = { s, r->catalog };

	if (r->catalog) {
		char what[64];

		snprintf(what, sizeof(what), "session %lld", (long long)s->id);
		if (metric_covered(r->catalog, catalog_has, (void *)s, what, e) < 0)
			return SERIES_UNCOVERED;
	}
	if (expr_bind(r->metric, metric_lookup, &b, e) < 0)
		return SERIES_NO_NAME;
	return 0;
}

static int bind_names(const struct db_session *s, struct series_req *r, int *evidx,
		      struct timeline_opts *o, struct error *e)
{

	int ret;

	o->nrank = 0;
	if (r->metric) {
		if ((ret = series_metric_bind(s, r, e)) < 0)
			return ret;
		o->nrank = 1;
		o->rank[0] = TL_SAMPLES;
		return 0;
	}
	for (int i = 0; i < r->nevents; i++) {
		evidx[i] = series_event_value(s, r->events[i]);
		if (evidx[i] < 0) {
			char evs[1200];

			series_events_text(s, evs, sizeof(evs));
			r->unknown = i;
			error_set(e, "unknown event '%s': session %lld has %s", r->events[i],
				  (long long)s->id, evs);
			return SERIES_NO_EVENT;
		}
		if (o->nrank < TL_MAXV) {
			int dup = 0;

			for (int k = 0; k < o->nrank; k++)
				dup |= o->rank[k] == evidx[i];
			if (!dup)
				o->rank[o->nrank++] = evidx[i];
		}
	}
	return 0;
}

/* ---- series ---- */

static struct series_line *line_add(struct series *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static struct series_line *line_add(struct series *s, const char *fmt, ...)
{
	struct series_line *l;
	va_list ap;

	s->line = xrealloc(s->line, (s->n + 1) * sizeof(*s->line));
	l = &s->line[s->n++];
	va_start(ap, fmt);
	vsnprintf(l->title, sizeof(l->title), fmt, ap);
	va_end(ap);
	l->v = xcalloc(s->t->nbuckets, sizeof(double));
	return l;
}

/* The length of bucket b in seconds, cut at the range's end. */
static double bucket_seconds(const struct timeline *t, size_t b)
{
	int64_t from = timeline_bucket_from(t, b), to = timeline_bucket_to(t, b);

	return to > from ? (to - from) / 1e9 : t->bucket_ns / 1e9;
}

/* The values of bucket b of group g (NULL: all; OTHER: all minus the top
 * of rank rk) into vars, plus "seconds". */
#define OTHER ((const struct timeline_group *)1)

static void bucket_vars(const struct timeline *t, const struct timeline_group *g,
			const struct timeline_rank *rk, size_t b, double *vars)
{
	for (int i = 0; i < t->nv; i++) {
		if (g == OTHER) {
			double v = timeline_value(t, NULL, b, i);

			for (size_t k = 0; k < rk->n; k++)
				v -= timeline_value(t, &t->groups[rk->idx[k]], b, i);
			vars[i] = v < 0 ? 0 : v;
		} else {
			vars[i] = timeline_value(t, g, b, i);
		}
	}
	vars[t->nv] = bucket_seconds(t, b);
}

/* The value of bucket b of group g (as bucket_vars()): expression x's,
 * or with x NULL value index v's. */
static double bucket_value(const struct timeline *t, const struct timeline_group *g,
			   const struct timeline_rank *rk, size_t b, const struct expr *x, int v)
{
	double vars[TL_MAXV + 1];

	bucket_vars(t, g, rk, b, vars);
	return x ? expr_eval(x, vars) : vars[v];
}

static void line_fill(const struct timeline *t, struct series_line *l,
		      const struct timeline_group *g, const struct timeline_rank *rk,
		      const struct expr *x, int v)
{
	for (size_t b = 0; b < t->nbuckets; b++)
		l->v[b] = bucket_value(t, g, rk, b, x, v);
}

/* A series per group in the top of ranking rk, then other when some are
 * not, titled PRE SEP NAME; values as bucket_value()'s. */
static void split_lines(struct series *s, const struct timeline_rank *rk, const char *pre,
			const char *sep, const struct expr *x, int v)
{
	const struct timeline *t = s->t;

	for (size_t k = 0; k <= rk->n; k++) {
		const struct timeline_group *g = k < rk->n ? &t->groups[rk->idx[k]] : OTHER;
		struct series_line *l;

		if (g == OTHER && !rk->rest)
			break;
		if (g == OTHER)
			l = line_add(s, "%s%sother (%zu more %s)", pre, sep, rk->rest, t->key_noun);
		else
			l = line_add(s, "%s%s%s", pre, sep, g->name);
		line_fill(t, l, g, rk, x, v);
	}
}

/* The metric's series: one, or one per top group by samples and other. */
static void metric_lines(struct series *s, const struct series_req *r)
{
	const struct timeline_rank *rk = timeline_rank_of(s->t, TL_SAMPLES);

	if (r->opts.by == TL_BY_NONE || !rk)
		line_fill(s->t, line_add(s, "%s", r->metric_src), NULL, NULL, r->metric, 0);
	else
		split_lines(s, rk, "", "", r->metric, 0);
}

/* Event e's series (value index v): one, or one per top group by it and
 * other (prefixed "EVENT: " among several events), or one of zeros when
 * no group has any. */
static void event_lines(struct series *s, const struct series_req *r, int e, int v)
{
	const struct timeline_rank *rk = timeline_rank_of(s->t, v);
	int several = r->nevents > 1;

	if (r->opts.by == TL_BY_NONE || !rk) {
		line_fill(s->t, line_add(s, "%s", r->events[e]), NULL, NULL, NULL, v);
		return;
	}
	split_lines(s, rk, several ? r->events[e] : "", several ? ": " : "", NULL, v);
	if (!rk->n)	/* nothing of this event: still show it */
		line_add(s, "%s", r->events[e]);
}

int series_compute(const struct series_source *src, struct series_req *r,
		   struct series **out, struct error *e)
{
	struct timeline_opts o = r->opts;
	int *evidx = xcalloc((size_t)r->nevents + 1, sizeof(*evidx));
	struct series *s;
	int ret;

	*out = NULL;
	ret = bind_names(&src->session, r, evidx, &o, e);
	if (ret < 0) {
		free(evidx);
		return ret;
	}
	s = xcalloc(1, sizeof(*s));
	s->session = src->session;
	s->t = src->timeline(src, &o, e);
	if (!s->t) {
		free(evidx);
		series_free(s);
		return -1;
	}
	if (r->metric)
		metric_lines(s, r);
	else
		for (int i = 0; i < r->nevents; i++)
			event_lines(s, r, i, evidx[i]);
	free(evidx);
	*out = s;
	return 0;
}

int series_compute_said(const struct series_source *src, struct series_req *r,
			struct series **out, struct error *e)
{
	const struct db_session *s = &src->session;
	struct error ce = { "" };
	char evs[1200];
	int ret = series_compute(src, r, out, &ce);

	if (!ret)
		return 0;
	if (ret == SERIES_NO_EVENT) {
		series_events_text(s, evs, sizeof(evs));
		error_set(e, "unknown event '%s' in --event: session %lld has %s",
			  r->events[r->unknown], (long long)s->id, evs);
	} else if (ret == SERIES_NO_NAME) {
		series_metric_said(s, ret, "--metric", ce.msg, e);
	} else {
		error_set(e, "%s", ce.msg);
	}
	return ret;
}

void series_metric_said(const struct db_session *s, int ret, const char *opt, const char *msg,
			struct error *e)
{
	char evs[1200];

	series_events_text(s, evs, sizeof(evs));
	if (ret == SERIES_NO_NAME)
		error_set(e, "%s: %s: session %lld has %s, and 'seconds' (metrics by name: "
			  "'strobe list --metrics')", opt, msg, (long long)s->id, evs);
	else if (ret == SERIES_UNCOVERED)
		error_set(e, "%s: %s (session %lld has %s)", opt, msg, (long long)s->id, evs);
	else
		error_set(e, "%s", msg);
}

int series_metric_parse(struct series_req *r, const char *arg, char **text, struct error *e)
{
	return series_metric_parse_as(r, arg, "--metric", text, e);
}

int series_metric_parse_as(struct series_req *r, const char *arg, const char *opt, char **text,
			   struct error *e)
{
	struct error pe = { "" };

	*text = NULL;
	r->catalog = metric_find(arg);
	if (r->catalog) {
		*text = metric_expr_scaled(r->catalog);
		r->metric = expr_parse(*text, &pe);
		if (!r->metric)
			return error_set(e, "%s %s: %s", opt, r->catalog->name, pe.msg);
		r->metric_src = r->catalog->name;
		return 0;
	}
	r->metric = expr_parse(arg, &pe);
	if (!r->metric)
		return error_set(e, "bad %s '%s': %s", opt, arg, pe.msg);
	r->metric_src = arg;
	return 0;
}

void series_free(struct series *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->line[i].v);
	free(s->line);
	timeline_free(s->t);
	free(s);
}
