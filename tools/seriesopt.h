/*
 * seriesopt.h - the one parser of the options that say which series a
 * command computes (series.h), for 'strobe plot', 'strobe onsets' and
 * 'strobe phases': --event, --metric, --by, --top, --bucket, and the
 * change points' --min-shift (plot: --onsets-min-shift).  The filters are
 * filteropt.h's.
 */
#ifndef STROBE_SERIESOPT_H
#define STROBE_SERIESOPT_H

#include <getopt.h>
#include "series.h"

#define SERIESOPT_MAX_EVENTS	32

enum {
	SOPT_EVENT = 1100, SOPT_METRIC, SOPT_BY, SOPT_TOP, SOPT_BUCKET, SOPT_MIN_SHIFT,
	SOPT_ONSETS_MIN_SHIFT,
};

/* The entries of a getopt_long table, to put in a command's own. */
#define SERIESOPT_LONG_EVENT	{ "event",	required_argument, NULL, SOPT_EVENT }
#define SERIESOPT_LONG_METRIC	{ "metric",	required_argument, NULL, SOPT_METRIC }
#define SERIESOPT_LONG_BY	{ "by",		required_argument, NULL, SOPT_BY }
#define SERIESOPT_LONG_TOP	{ "top",	required_argument, NULL, SOPT_TOP }
#define SERIESOPT_LONG_BUCKET	{ "bucket",	required_argument, NULL, SOPT_BUCKET }
#define SERIESOPT_LONG_MIN_SHIFT { "min-shift",	required_argument, NULL, SOPT_MIN_SHIFT }
#define SERIESOPT_LONG_ONSETS_MIN_SHIFT \
	{ "onsets-min-shift", required_argument, NULL, SOPT_ONSETS_MIN_SHIFT }

/* What the options gave.  Zero it, set cmd (and by_host), then parse. */
struct seriesopt {
	const char *cmd;		/* "plot": "strobe plot: bad ..." */
	int by_host;			/* --by host is taken (fleet plots) */
	char *events[SERIESOPT_MAX_EVENTS];	/* --event's names (owned) */
	int nevents;
	char *metric_text;		/* --metric NAME's expression (owned) */
	double min_shift;		/* --min-shift, --onsets-min-shift: 0 */
	int min_shift_given;
};

/*
 * Take option c (its value arg): --event and --metric into r (events
 * only by seriesopt_req()), --by, --top and --bucket into o.  1 when c is
 * one of these options and its value is good, 0 when c is not one of
 * them, 2 after printing a one-line usage error for so->cmd.
 */
int seriesopt_parse(struct seriesopt *so, int c, const char *arg, struct series_req *r,
		    struct timeline_opts *o);

/* so's events into r (r->events points into so). */
void seriesopt_req(struct seriesopt *so, struct series_req *r);

/* Free what so owns, and r's metric (parsed here). */
void seriesopt_free(struct seriesopt *so, struct series_req *r);

#endif
