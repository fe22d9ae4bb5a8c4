/*
 * probe_chase.h - the instrument of 'strobe probe' (probe.h): pointer
 * chases over randomised cyclic chains, timed with CLOCK_MONOTONIC, each
 * measurement repeated until the 95% confidence half-width of its mean is
 * below an error bound (document 002's method), and curves of such
 * measurements taken in rounds.  The experiments (probe.c) build the
 * chains in the regions this file maps and say what to measure.
 */
#ifndef STROBE_PROBE_CHASE_H
#define STROBE_PROBE_CHASE_H

#include <stddef.h>
#include <stdint.h>

/* What the measurements are held to, and what they made. */
struct probe_meter {
	double min_ns;		/* each sample lasts at least this long */
	double error_pct;
	unsigned max_reps;
	unsigned measurements, unbounded;
	void *volatile sink;	/* where each chase ended: keeps it from being
				 * optimised away */
};

/* The clock's resolution: the smallest step seen between two different
 * readings (document 002's delta()). */
double probe_timer_resolution(void);

/*
 * ns per step of the chain from start: warm it up with `warm` steps, then
 * time samples of at least m->min_ns each until the relative error is
 * below m->error_pct (at least 5 samples) or m->max_reps samples were
 * taken; its error into *err_pct.
 */
double probe_measure(struct probe_meter *m, void **start, size_t warm, double *err_pct);

/* Link the n nodes at[] into one cycle in a random order (seed: a
 * xorshift state); returns the first. */
void **probe_link_cycle(void ***at, size_t n, uint64_t *seed);

/* An anonymous region of len bytes aligned to 2 MiB, with (huge = 1) or
 * without transparent huge pages, touched; munmap(*map, *maplen) frees
 * it.  NULL when it cannot be mapped. */
char *probe_region(size_t len, int huge, void **map, size_t *maplen);

/* Whether [p, p+len) is backed by huge pages (AnonHugePages in smaps). */
int probe_is_huge(const char *p, size_t len);

/* One point of a curve: ns per access at x, its error into *err. */
typedef double (*probe_point_fn)(void *ctx, double x, double *err);

/*
 * ncurves curves over the same n points x[]: curve j measured by fn[j]
 * into y[j][] and er[j][], each point the fastest of its rounds (see
 * probe_chase.c), the curves measured point after point, interleaved.
 */
void probe_curves(const probe_point_fn *fn, int ncurves, void *ctx, const double *x,
		  size_t n, double *const *y, double *const *er);

/* One curve: probe_curves of fn alone. */
void probe_curve(probe_point_fn fn, void *ctx, const double *x, size_t n, double *y,
		 double *er);

#endif
