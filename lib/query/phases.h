/*
 * phases.h - a session cut at the change points of one or several series
 * (seriesonsets.h), each phase with its levels, its hot spots, and what
 * grew and shrank against the phase before (diff.h, as 'strobe diff
 * ID@A ID@B' of the two windows): 'strobe phases', the answer to "what
 * code is new or grew after the onset" in one command.
 *
 * The cuts are the change points of every line of the series, merged and
 * sorted (two lines changing in the same bucket make one cut).  The
 * phases tile the series' range: the first from its start, the last to
 * its end (its last bucket's end, cut at the range's end).
 *
 * Columns, one row per phase:
 *   phase           0, 1, ...
 *   from_ns, to_ns  its window [from, to), CLOCK_MONOTONIC as time_ns of
 *                   'strobe onsets' and 'strobe export'
 *   time_s          from, in seconds since the session start (text "%.3f")
 *   duration_s      to - from, in seconds
 *   samples         the samples of the window that pass the filters
 *   levels          each line's mean per bucket over the phase:
 *                   "TITLE=VALUE; ..." (%.4g)
 *   top             the phase's hot spots (report_window(), by the
 *                   report's --by): "NAME PERCENT%; ..." (%.1f), at most
 *                   top of them
 *   grew, grew_delta_percent      against the phase before: the row whose
 *   shrank, shrank_delta_percent  share rose (fell) most and not within
 *                   noise (diff.h), and by how many points; empty for the
 *                   first phase and when no change is beyond noise
 */
#ifndef STROBE_PHASES_H
#define STROBE_PHASES_H

#include "db.h"
#include "onsets.h"
#include "output.h"
#include "report.h"
#include "series.h"

struct phases_opts {
	int metric;			/* the series are a metric's */
	struct onsets_opts onsets;
	const struct report_opts *ro;	/* the hot spots' session, filters and
					 * by (binary, symbol or line) */
	int top;			/* hot spots per phase (>= 1) */
};

/* The table above for the series s of db's session; NULL with e set. */
struct table *phases_table(struct db *db, const struct series *s, const struct phases_opts *po,
			   enum output_format fmt, struct error *e);

#endif
