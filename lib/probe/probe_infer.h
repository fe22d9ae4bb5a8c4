/*
 * probe_infer.h - what the timings of 'strobe probe' say about the caches:
 * pure functions over measured latency curves, with no timing of their
 * own, so that tests/unit/test_probe.c can feed them synthetic curves.
 *
 * A latency curve is n points (x[i], y[i]), x strictly increasing (a
 * working-set size, a distance, a number of conflicting lines), y the
 * measured nanoseconds per access.
 */
#ifndef STROBE_PROBE_INFER_H
#define STROBE_PROBE_INFER_H

#include <stddef.h>

/* A step of a working-set curve: the curve is flat up to x[last] (the
 * capacity of a level), at `before` ns, then rises to `after` ns. */
struct probe_step {
	size_t last;		/* index of the largest size still on the plateau */
	double before;		/* median latency of the plateau ending at last */
	double after;		/* latency of the plateau after the rise (the next
				 * level's), or of the last point if none */
};

/*
 * The steps of a working-set curve.  A point starts a step when it and the
 * two points after it (those there are) exceed the current plateau's
 * median by more than thr (0.3 = 30%): one or two noisy points do not.  After a step, the next
 * plateau starts where the curve stops rising (two successive rises each
 * below thr / 3).  Fills at most max steps, returns how many were found.
 */
size_t probe_find_steps(const double *x, const double *y, size_t n, double thr,
			struct probe_step *steps, size_t max);

/*
 * The line size from the pair experiment: y[i] is the time per access of
 * pairs of dependent accesses d[i] bytes apart (d increasing), the far one
 * first, in blocks that miss the level; below the line size the second
 * access hits the line the first brought in, from the line size on it
 * misses too.  Returns the smallest d[i] from which every point lies 15%
 * or more above the lowest point before d[i] (a prefetcher's later rise,
 * e.g. at an adjacent-line pair, does not move it), or 0 when there is no
 * such rise.
 */
unsigned long probe_infer_line(const double *d, const double *y, size_t n);

/*
 * The associativity from the conflict experiment: y[i] is the time per
 * access of a cyclic chase over k[i] lines that all map to one set of the
 * level (spaced by its size).  While k <= ways they stay in the level
 * (latency at most hit_ns); beyond, every access misses to the next level
 * (next_ns).  Returns the largest k[i] before the first point that, with
 * the one after it, lies above the geometric mean of hit_ns and next_ns;
 * 0 when no point does (more ways than tried) or the curve is unusable.
 */
unsigned long probe_infer_ways(const double *k, const double *y, size_t n,
			       double hit_ns, double next_ns);

/* Median of y[0..n) (n >= 1), without changing y. */
double probe_median(const double *y, size_t n);

/*
 * Half-width of the 95% confidence interval of the mean of n samples with
 * standard deviation sd (Student's t for small n), over the mean, in
 * percent: the relative error 'strobe probe' bounds.  Infinite for n < 2.
 */
double probe_rel_error_pct(double mean, double sd, size_t n);

#endif
