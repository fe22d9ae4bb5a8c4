/*
 * probe_chase.c - the instrument of 'strobe probe' (probe_chase.h):
 * pointer chases timed with CLOCK_MONOTONIC until their error is bounded,
 * the chains and regions they run over, and curves measured in rounds.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "probe_chase.h"
#include "probe_infer.h"
#include "util.h"

#define HUGE_SZ (2u << 20)

/* ---- timing ---- */

static double now_ns(void)
{
	return (double)clock_monotonic_ns();
}

/* The clock's resolution: the smallest step seen between two different
 * readings (document 002's delta()). */
double probe_timer_resolution(void)
{
	double best = INFINITY;

	for (int r = 0; r < 50; r++) {
		double a = now_ns(), b;

		while ((b = now_ns()) == a)
			;
		if (b - a < best)
			best = b - a;
	}
	return best;
}

static long nivcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nivcsw : 0;
}

/* Follow the chain from p for n steps (n a multiple of 8). */
static __attribute__((noinline)) void **chase(void **p, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		p = (void **)*p; p = (void **)*p; p = (void **)*p; p = (void **)*p;
		p = (void **)*p; p = (void **)*p; p = (void **)*p; p = (void **)*p;
	}
	return p;
}

/* mean and 95% error of the samples, leaving out those over 1.5 x the
 * median (disturbed: an interrupt, a stolen slice) */
static void stats(const double *v, size_t n, double *mean, double *err)
{
	double med = probe_median(v, n), s = 0, s2 = 0;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (v[i] <= 1.5 * med) {
			s += v[i];
			k++;
		}
	*mean = s / k;
	for (size_t i = 0; i < n; i++)
		if (v[i] <= 1.5 * med)
			s2 += (v[i] - *mean) * (v[i] - *mean);
	*err = probe_rel_error_pct(*mean, k > 1 ? sqrt(s2 / (k - 1)) : 0, k);
}

/*
 * ns per step of the chain from start: warm it up with `warm` steps, then
 * time samples of at least m->min_ns each (document 002's duration for the
 * clock's resolution) until the relative error is below the bound (at
 * least 5 samples) or max_reps samples were taken.  Samples during which
 * the thread was preempted are taken again.
 */
double probe_measure(struct probe_meter *m, void **start, size_t warm, double *err_pct)
{
	double v[512], mean = 0, err = INFINITY;
	size_t steps = 64, n = 0;
	unsigned tries = 0;
	void **p = chase(start, (warm + 7) & ~(size_t)7);

	/* calibrate the steps per sample */
	for (;;) {
		double t0 = now_ns();

		p = chase(p, steps);
		if (now_ns() - t0 >= m->min_ns || steps >= (1u << 30))
			break;
		steps *= 2;
	}
	while (n < m->max_reps && n < 512 && tries < 4 * m->max_reps) {
		long cs = nivcsw();
		double t0 = now_ns(), t1;

		p = chase(p, steps);
		t1 = now_ns();
		tries++;
		if (nivcsw() != cs && tries < 2 * m->max_reps)
			continue;
		v[n++] = (t1 - t0) / steps;
		if (n >= 5) {
			stats(v, n, &mean, &err);
			if (err < m->error_pct)
				break;
		}
	}
	if (n < 5)
		stats(v, n, &mean, &err);
	m->sink = p;
	m->measurements++;
	if (!(err < m->error_pct))
		m->unbounded++;
	*err_pct = err;
	return mean;
}

/* ---- chains ---- */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Link the n nodes at[] into one cycle in a random order; returns the first. */
void **probe_link_cycle(void ***at, size_t n, uint64_t *seed)
{
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = rnd(seed) % (i + 1);
		void **t = at[i];

		at[i] = at[j];
		at[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		*at[i] = at[(i + 1) % n];
	return at[0];
}

/* An anonymous region aligned to 2 MiB, with (huge = 1) or without
 * transparent huge pages, touched. */
char *probe_region(size_t len, int huge, void **map, size_t *maplen)
{
	size_t l = len + HUGE_SZ;
	char *m = mmap(NULL, l, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *p;

	if (m == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)m + HUGE_SZ - 1) & ~(uintptr_t)(HUGE_SZ - 1));
	madvise(p, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(p, 1, len);
	*map = m;
	*maplen = l;
	return p;
}

/* Whether [p, p+len) is backed by huge pages (AnonHugePages in smaps). */
int probe_is_huge(const char *p, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[256];
	int in = 0, huge = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b, kb;

		if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = a <= (uintptr_t)p && (uintptr_t)p < b;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1) {
			huge = kb * 1024 >= len / 2;
			break;
		}
	}
	fclose(f);
	return huge;
}

/* ---- curves ---- */

/*
 * Each curve is measured in rounds, point after point, and each point
 * keeps its fastest round: a neighbour sharing the core (another process
 * between samples, an SMT sibling, another VM) only ever adds time, and
 * comes and goes, so the fastest round is the one it disturbed least.  At
 * least MIN_ROUNDS; more (up to MAX_ROUNDS, 50 ms apart) while a round
 * still brings some point down by more than ROUND_GAIN.
 */
#define MIN_ROUNDS 3
#define MAX_ROUNDS 12
#define ROUND_GAIN 0.05

/* keep the faster of a new measurement (v, e) and the best so far; counts
 * in *gained the points it brought down by more than ROUND_GAIN */
static void best(double *y, double *er, double v, double e, int *gained)
{
	if (v < *y) {
		if (isfinite(*y) && v < *y * (1 - ROUND_GAIN))
			(*gained)++;
		*y = v;
		*er = e;
	}
}

/* whether to measure another round after round `round` (0-based) */
static int more_rounds(int round, int *gained)
{
	int more = round + 1 < MIN_ROUNDS || (*gained && round + 1 < MAX_ROUNDS);

	if (more && round + 1 >= MIN_ROUNDS)
		usleep(50000);
	*gained = 0;
	return more;
}

void probe_curves(const probe_point_fn *fn, int ncurves, void *ctx, const double *x,
		  size_t n, double *const *y, double *const *er)
{
	for (int j = 0; j < ncurves; j++)
		for (size_t k = 0; k < n; k++)
			y[j][k] = er[j][k] = INFINITY;
	for (int round = 0, gained = 0; round == 0 || more_rounds(round - 1, &gained); round++)
		for (size_t k = 0; k < n; k++)
			for (int j = 0; j < ncurves; j++) {
				double v, e;

				v = fn[j](ctx, x[k], &e);
				best(&y[j][k], &er[j][k], v, e, &gained);
			}
}

void probe_curve(probe_point_fn fn, void *ctx, const double *x, size_t n, double *y,
		 double *er)
{
	probe_curves(&fn, 1, ctx, x, n, &y, &er);
}
