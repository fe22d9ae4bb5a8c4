/*
 * series.h - the series of a plot: any event, or a metric over events, of
 * a session (or of pushed sessions taken as one) per time bucket of a
 * window, whole or split by CPU, process, binary, symbol, cgroup or host
 * into the top N groups and "other".  What 'strobe plot' draws and writes
 * as CSV, computed without printing anything, so that a server can serve
 * the same numbers (issue 31).
 *
 * The sums come from a source (struct series_source): a local database
 * (series_source_db(), through timeline_build()) or anything else that
 * builds a struct timeline, as the fleet's ClickHouse does
 * (lib/fleet/fleetplot.h: fleetplot_timeline()).  This file turns the
 * sums into series:
 *
 *   - an event's series is, per bucket, its sum (timeline.h: counter
 *     increases, or the number of samples for "samples" or the session's
 *     sampling event); several events give a series each;
 *   - a metric (expr.h) is evaluated on each bucket's sums, the name
 *     "seconds" being the bucket's length (cut at the window's end);
 *   - with a split, each event is split by its own ranking (a metric: by
 *     samples) into its top groups, then "other (K more NOUN)", the
 *     bucket's value minus the top's (a metric: evaluated on those
 *     differences); an event with no group still has one series, zero.
 *
 * Titles: the event's name (the metric's text as given); with a split the
 * group's name, prefixed "EVENT: " when there are several events.
 */
#ifndef STROBE_SERIES_H
#define STROBE_SERIES_H

#include <stddef.h>
#include "db.h"
#include "timeline.h"
#include "util.h"

struct expr;
struct metric;

/*
 * Where the sums come from.  session is the session the request names
 * events of (several pushed sessions: them as one, fleetplot_session());
 * timeline(src, o, e) builds the timeline of o over it (NULL with e set).
 */
struct series_source {
	struct db_session session;
	struct timeline *(*timeline)(const struct series_source *src,
				     const struct timeline_opts *o, struct error *e);
	void *ctx;
};

/* A local database's session id (0: the latest) as a source, its row read
 * into src->session; db stays the caller's.  0, or -1 with e set. */
int series_source_db(struct series_source *src, struct db *db, int64_t session,
		     struct error *e);

/* What to compute: events, or a metric. */
struct series_req {
	const char *const *events;	/* nevents event names (case-insensitive) */
	int nevents;
	struct expr *metric;		/* or a parsed expression (bound here) */
	const char *metric_src;		/* its title: the text as given, or the
					 * catalogue metric's name */
	const struct metric *catalog;	/* non-NULL: the metric is this one of
					 * the catalogue (metrics.h); its names
					 * may be aliases of the session's events */
	struct timeline_opts opts;	/* window, bucket, filters, split, top,
					 * progress (its session is the source's;
					 * nrank and rank are set here) */
	int unknown;			/* out, SERIES_NO_EVENT: the index in
					 * events of the first the session lacks */
};

struct series_line {
	char title[512];
	double *v;			/* t->nbuckets values; NaN: none (a gap) */
};

struct series {
	struct db_session session;	/* the source's */
	struct timeline *t;		/* the sums, lost spans, markers, notes */
	size_t n;
	struct series_line *line;	/* n series, in the order described above */
};

/*
 * --metric ARG into r (metric, metric_src, catalog): a metric of the
 * catalogue by name (metrics.h: its expression with its scale, into
 * *text, the caller's to free with r->metric), else ARG as an expression.
 * 0, or -1 with e saying "--metric NAME: ..." or "bad --metric 'ARG': ...".
 */
int series_metric_parse(struct series_req *r, const char *arg, char **text, struct error *e);
/* The same for another option: opt ("--color-by") in the messages. */
int series_metric_parse_as(struct series_req *r, const char *arg, const char *opt, char **text,
			   struct error *e);

/*
 * Bind r->metric's names (parsed by series_metric_parse) to session s's
 * values in a timeline's layout (timeline.h): TL_SAMPLES for "samples" or
 * the sampling event, 1 + i for counting event i (a catalogue metric's
 * names also by alias), 1 + s->nr_events for "seconds".  For sums that
 * are not a timeline's (a flame graph's frames, flamemetric.h; a sample's
 * own, where.h).  0, or
 * SERIES_UNCOVERED or SERIES_NO_NAME with e set (series_metric_said()
 * words them for an option).
 */
int series_metric_bind(const struct db_session *s, struct series_req *r, struct error *e);

/* series_compute()'s failures other than -1 (the source's error, the
 * window, no samples: e says it). */
#define SERIES_UNCOVERED	(-2)	/* the catalogue metric needs events the
					 * session did not count; e says which */
#define SERIES_NO_EVENT		(-3)	/* r->events[r->unknown] is not an event
					 * of the session; e says so */
#define SERIES_NO_NAME		(-4)	/* the metric names something that is no
					 * event of the session nor "seconds";
					 * e: expr_bind()'s message */

/*
 * The series of r over src: 0 with *out set (series_free() it), or -1,
 * SERIES_UNCOVERED, SERIES_NO_EVENT or SERIES_NO_NAME with e set and *out
 * NULL.  Nothing is printed: t->note and t->debuginfod_note are the
 * caller's to show.
 */
int series_compute(const struct series_source *src, struct series_req *r,
		   struct series **out, struct error *e);
void series_free(struct series *s);

/* series_compute() with its failures said as the commands' options name
 * them (--event, --metric, the session's events): the same return, e the
 * whole message. */
int series_compute_said(const struct series_source *src, struct series_req *r,
			struct series **out, struct error *e);

/* A metric's failure ret (SERIES_NO_NAME, SERIES_UNCOVERED; msg the
 * error series_metric_bind() set) into e as option opt ("--metric") says
 * it, with the events session s has. */
void series_metric_said(const struct db_session *s, int ret, const char *opt, const char *msg,
			struct error *e);

/* Value index of an event name in s (timeline.h): 1 + i for counting
 * event i, TL_SAMPLES for "samples" or the sampling event, else -1. */
int series_event_value(const struct db_session *s, const char *name);

/* The events s can plot, for messages: "EV1, EV2, samples (cpu-clock)". */
void series_events_text(const struct db_session *s, char *buf, size_t len);

#endif
