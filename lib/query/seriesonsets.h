/*
 * seriesonsets.h - the change points (onsets.h) of the lines of a series
 * (series.h), as the table 'strobe onsets' writes: what an event's rate or
 * a metric did, and when, per bucket of the series.
 *
 * Each line is segmented on its own: its buckets in time order, those
 * with no value (a metric's gaps, NaN) left out, those where samples were
 * lost or the kernel throttled sampling (the timeline's lost spans: their
 * sums are short for a reason that is not the program's) left out, and
 * the last bucket left out when the range cuts it short (its sums cover
 * less time, which would read as a drop).  An event's line is of counts (ONSETS_COUNTS); a
 * metric's is not.
 *
 * Columns, one row per change point, by line then time:
 *   time_ns         the first bucket of the new level: its start, on the
 *                   CLOCK_MONOTONIC scale of the samples ('strobe export')
 *   time_s          the same, in seconds since the session start (text:
 *                   "%.3f")
 *   uncertainty_ms  the half-width of its 95 % interval, widened to
 *                   buckets: max(at - lo, hi - at) buckets, in ms
 *   before, after   the levels either side, per bucket (an event's sum,
 *                   a metric's value)
 *   shift           (after - before) / |before|; null when before is 0
 *   confidence      0..1 (onsets.h: a permutation test)
 *   series          the line's title (the event, metric or group)
 */
#ifndef STROBE_SERIESONSETS_H
#define STROBE_SERIESONSETS_H

#include <stdint.h>
#include "onsets.h"
#include "output.h"
#include "series.h"

/* Fewer samples per bucket than this on average, and the default bucket
 * (seriesonsets_bucket()) grows: counts of a few per bucket have too
 * little to segment. */
#define SERIESONSETS_SAMPLES_PER_BUCKET	20

/*
 * The default bucket of onsets over range_ns holding samples samples: the
 * length that gives SERIESONSETS_SAMPLES_PER_BUCKET samples per bucket on
 * average, at least 1 ms, at least range / TL_MAX_BUCKETS (timeline.h)
 * and at most range / 50 (at least 50 buckets), rounded up to 1, 2 or
 * 5 x 10^k us.
 */
int64_t seriesonsets_bucket(uint64_t samples, int64_t range_ns);
/* The same for o's range of session s, its samples taken as spread evenly. */
int64_t seriesonsets_session_bucket(const struct db_session *s, const struct timeline_opts *o);

/* The buckets of s that are segmented: 0..n, the last left out when the
 * range cuts it short. */
size_t seriesonsets_buckets(const struct series *s);

/*
 * The change points of line i of s, as onsets_find() gives them but with
 * at, lo and hi the indices of buckets of s->t (its gaps skipped): 0 with
 * *out (malloc'ed, NULL when none) and *n, or -1 with e set.
 */
int seriesonsets_find(const struct series *s, size_t i, int metric,
		      const struct onsets_opts *o, struct onset **out, size_t *n,
		      struct error *e);

/*
 * The table above for s, whose lines are a metric's when metric is
 * nonzero; fmt is the format it will be written in (text shows times as
 * text).  NULL with e set on an error of onsets_find().
 */
struct table *seriesonsets_table(const struct series *s, int metric,
				 const struct onsets_opts *o, enum output_format fmt,
				 struct error *e);

#endif
