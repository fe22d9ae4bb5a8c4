/*
 * where.h - metric conditions (issue 33): --where 'EXPR OP NUMBER' keeps
 * the samples of the time buckets of a session where the condition holds;
 * --invert the samples of the buckets where it is defined and fails;
 * --where-sample evaluates it on each sample's own counter increases
 * instead, keeping the samples where it holds (or, inverted, fails).
 * One record (struct where) that report_opts points to, so that every
 * raw-sample reader (report, stacks, export, plot's timeline) applies it
 * the same way, through the sample scan's keep ranges (samplescan.h).
 *
 * EXPR is what 'strobe plot --metric' takes (series.h:
 * series_metric_parse): a metric of the catalogue by name (metrics.h,
 * with its scale), or an expression (expr.h) over the session's event
 * names, "samples", and per bucket "seconds" (the bucket's length).  OP
 * is one of > >= < <=; NUMBER a decimal number.
 *
 * Buckets: of --where-bucket, or seriesonsets_session_bucket()'s default
 * ('strobe onsets' buckets), from the start of the range (the session's,
 * or --from) to its end; the last one may be cut short by the end, and
 * holds a sample at the end itself, as a timeline's does (timeline.h).
 * The value of a bucket is that of 'strobe plot --metric EXPR' over the
 * same filters (pid, comm, binary, cgroup, the range; --kernel/--user
 * select the samples kept, not the buckets' values).  A bucket whose
 * value is undefined (a division by zero: no samples, 0/0) is kept by
 * neither the condition nor --invert, so that the two never share a
 * sample, and together hold every sample of the defined buckets; the
 * counts say how many buckets and samples were undefined.
 *
 * Per sample the names are the session's counting events (the increase
 * attributed to the sample, report.h) and "samples" (1); "seconds" has no
 * value per sample and is refused.  A sample whose value is undefined
 * (a division by zero) is kept by neither side.
 */
#ifndef STROBE_WHERE_H
#define STROBE_WHERE_H

#include <stddef.h>
#include <stdint.h>
#include "db.h"
#include "report.h"
#include "util.h"

struct expr;
struct metric;
struct sample_scan_filter;

enum where_op { WHERE_GT, WHERE_GE, WHERE_LT, WHERE_LE };

struct where {
	/* the condition: where_parse() */
	char text[512];			/* as given (truncated) */
	struct expr *x;			/* EXPR, parsed */
	char *scaled;			/* a catalogue metric's expression */
	const struct metric *catalog;	/* EXPR names this metric, or NULL */
	enum where_op op;
	double threshold;
	int invert;			/* keep where it is defined and fails */
	int per_sample;			/* --where-sample */
	int64_t bucket_ns;		/* --where-bucket; 0: the default */
	int borrowed;			/* x and scaled are another's
					 * (where_borrow()) */

	/* the selection: where_select() */
	int ready;
	int64_t session;		/* selected for this session */
	struct report_opts sel;		/* and these filters (their strings
					 * compared by address) */
	int nev;			/* its counting events (per sample) */
	int64_t *keep;			/* nkeep ranges [keep[2k], keep[2k+1]]
					 * of time_ns, inclusive, sorted */
	size_t nkeep;
	int64_t bucket;			/* the buckets' width, ns */
	int64_t from_ns, to_ns;		/* their range, absolute CLOCK_MONOTONIC */
	size_t buckets, kept, undefined;	/* buckets: all, kept, undefined */
	uint64_t samples, samples_kept, samples_undefined;	/* in them (the
					 * filters but --kernel/--user) */
	int64_t kept_ns;		/* the kept buckets' time */
	/* per sample: counted by the scans (all of them, added up) */
	uint64_t seen, held, undef;
};

/* Parse "EXPR OP NUMBER" into w (its other fields as they are): 0, or -1
 * with e saying, in one line, what is wrong and what to give. */
int where_parse(struct where *w, const char *arg, struct error *e);

/* --where-bucket's value (a number of ms or with a unit, as --bucket):
 * 0, or -1 with e set. */
int where_parse_bucket(struct where *w, const char *arg, struct error *e);

/* Free what where_parse() and where_select() allocated (not w); of a
 * borrowed condition only its selection. */
void where_free(struct where *w);

/* The condition of w into out, inverted or not, not selected: out
 * borrows w's expression (w is to outlive it), where_free(out) frees
 * its selection only.  For two sides of one condition (diff). */
void where_borrow(const struct where *w, int invert, struct where *out);

/*
 * Select what w keeps in session s (its row) of db under o's filters
 * (o->where is not looked at): the kept ranges of buckets, or per sample
 * the binding of the names to s's events.  Done once per session and
 * filters: a w ready for s and filters equal to o's (session, pid,
 * comm, binary, cgroup, mode, range) is left as it is.  0; WHERE_BAD
 * with e saying in one line what is wrong with the condition for s (a
 * name that is no event of s, a metric whose events s did not count,
 * "seconds" per sample); or -1 with e set on any other failure (no
 * samples in the range, too many buckets, the database).
 */
#define WHERE_BAD	(-2)
int where_select(struct where *w, struct db *db, const struct db_session *s,
		 const struct report_opts *o, struct error *e);

/* where_select() for o->session (0: the latest) of db: the same. */
int where_select_db(struct where *w, struct db *db, const struct report_opts *o,
		    struct error *e);

/* Apply a selected w to a scan's filter: keep ranges (narrowing its time
 * range to theirs) or, per sample, a row test reading the counters (their
 * columns added to f->cols when it names some). */
void where_scan(struct where *w, struct sample_scan_filter *f);

/* The condition as said in notes and filters: "--where 'TEXT'" with
 * " --invert" and " --where-sample" as given. */
void where_said(const struct where *w, char *buf, size_t len);

/* What w kept, in one line for a note: "--where 'page-faults > 200'
 * (buckets of 40 ms): 12 of 80 buckets kept, 3 undefined (kept by neither
 * side), with 1200 of 8000 samples", or per sample "... 1200 of 8000
 * samples kept (3 undefined)". */
void where_note(const struct where *w, char *buf, size_t len);

#endif
