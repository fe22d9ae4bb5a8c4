/*
 * onsets.h - change points of a series: the moments where the level of an
 * event's rate or of a metric changed (issue 33), found by a published
 * method with a penalty taken from the series' own noise, not a fixed
 * threshold.
 *
 * Method (onsets.c says how, with its references):
 *   - the values are variance-stabilised when they are counts
 *     (ONSETS_COUNTS: Anscombe's 2 sqrt(y + 3/8), so that Poisson-like
 *     counts have a noise that does not grow with their level);
 *   - the noise sigma is estimated from the series itself, from its first
 *     differences, which a level does not move and a change moves at one
 *     point only: the larger of their MAD / (0.6745 sqrt 2) and their root
 *     mean square with the largest 2 % left out (made up for as for normal
 *     noise), which sees heavy tails that the MAD does not (a process that
 *     mostly runs its share of each bucket but now and then loses one);
 *     when the MAD is 0 (most differences 0), their standard deviation /
 *     sqrt 2; 0 for a constant series, which has no change.  Counts that
 *     are mostly 0 (median below 1), where the transform no longer makes
 *     the noise normal and a lone count would be a change, take the sigma
 *     of 1 of Poisson counts;
 *   - the segmentation is the exact optimum of a normal mean-change cost
 *     (the sum of squared deviations / sigma^2) plus a penalty per change,
 *     found by PELT (Killick, Fearnhead and Eckley 2012) with FPOP's
 *     functional pruning (Maidstone et al. 2017), with the modified BIC
 *     of Zhang and Siegmund (2007): 3 log n per change plus the sum over
 *     segments of log(length / n);
 *   - each change point's uncertainty is its profile-likelihood interval:
 *     the run of positions around it between its neighbours whose split
 *     costs at most 7.35 more than the best.  A change's position is no
 *     regular parameter: chi-squared's 3.84 would cover a clear change
 *     between long segments 73 % of the time, 7.35 covers it 95 %;
 *   - its confidence is a permutation test over its two adjacent
 *     segments (each cut to at most ONSETS_PERM_SPAN points next to it):
 *     the share of ONSETS_PERMUTATIONS shuffles, drawn from a fixed seed,
 *     whose best single split gains strictly less than the change's own;
 *   - min_shift > 0 then merges the segments of every change whose
 *     relative shift |after - before| / max(|before|, |after|) (0 when
 *     both are 0) is below it, the smallest first, recomputing the levels
 *     of the merged segment, until none is left below.
 *   - last, two changes the same way with fewer than ONSETS_RAMP times
 *     min_seg points between them are one change, at the larger step (a
 *     ramp, not two onsets).
 * Levels (before, after) are the segments' means of the values as given,
 * not transformed.  NaN values (buckets with no data) are not allowed:
 * the caller gives a series without gaps.
 */
#ifndef STROBE_ONSETS_H
#define STROBE_ONSETS_H

#include <stddef.h>
#include "util.h"

#define ONSETS_COUNTS		1u	/* values are counts: stabilise them */

#define ONSETS_PERMUTATIONS	199
#define ONSETS_PERM_SPAN	4096
/* The shortest segment by default: a few points' outlier (a process that
 * lost a bucket or three to another, or whose samples a virtual machine's
 * timer missed) is noise, not a level. */
#define ONSETS_MIN_SEG		5
/* A change's interval: the positions whose split costs at most this
 * times sigma^2 more than the best (see above). */
#define ONSETS_INTERVAL_CUT	7.35
/* Changes the same way closer than this many shortest segments: one (a
 * ramp). */
#define ONSETS_RAMP		2
/* Fewer points than this: no change point can be found (0 returned). */
#define ONSETS_MIN_POINTS	8

struct onsets_opts {
	unsigned flags;		/* ONSETS_* */
	double min_shift;	/* 0: keep every change found */
	size_t min_seg;		/* shortest segment, in points (0: ONSETS_MIN_SEG) */
};

struct onset {
	size_t at;		/* the first point of the new level */
	size_t lo, hi;		/* its interval (above): lo <= at <= hi */
	double before, after;	/* the means of the segments either side */
	double shift;		/* (after - before) / |before|; +-INFINITY
				 * when before is 0 and after is not */
	double confidence;	/* 0..1 */
};

/*
 * The change points of y[0..n), in order: 0 with *out (malloc'ed, NULL
 * when none) and *nout set, or -1 with e set to one line (a NaN or
 * infinite value, or a negative one with ONSETS_COUNTS, each named by its
 * index; an unknown flag; a min_shift below 0 or NaN).  o NULL: the
 * defaults (all 0).  No change either when min_seg is more than n / 2.
 * sigma, when not NULL, receives the noise estimate (in the stabilised
 * scale when ONSETS_COUNTS), 0 when there is none (fewer than
 * ONSETS_MIN_POINTS values, a constant series).  Deterministic: the same
 * input gives the same output.
 */
int onsets_find(const double *y, size_t n, const struct onsets_opts *o, struct onset **out,
		size_t *nout, double *sigma, struct error *e);

#endif
