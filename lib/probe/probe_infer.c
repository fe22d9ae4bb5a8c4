/*
 * probe_infer.c - cache sizes, line size and associativity read off the
 * latency curves 'strobe probe' measures (see probe_infer.h; the method is
 * in doc/DESIGN.md, "strobe probe").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "probe_infer.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double probe_median(const double *y, size_t n)
{
	double buf[64], *v = n <= 64 ? buf : malloc(n * sizeof(double)), m;

	if (!v)
		return y[n / 2];
	memcpy(v, y, n * sizeof(double));
	qsort(v, n, sizeof(double), cmp_double);
	m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	if (v != buf)
		free(v);
	return m;
}

size_t probe_find_steps(const double *x, const double *y, size_t n, double thr,
			struct probe_step *steps, size_t max)
{
	size_t nsteps = 0, start = 0, i;

	(void)x;
	if (n < 2 || thr <= 0)
		return 0;
	for (i = 1; i < n; i++) {
		double base = probe_median(y + start, i - start);
		size_t j;

		size_t k, conf = n - i < 3 ? n - i : 3;

		for (k = 0; k < conf && y[i + k] > base * (1 + thr); k++)
			;
		if (k < conf)
			continue;
		/* climb to where the rise flattens: two successive small rises */
		j = i;
		while (j + 2 < n && !(y[j + 1] < y[j] * (1 + thr / 3) &&
				      y[j + 2] < y[j + 1] * (1 + thr / 3)))
			j++;
		if (j + 2 >= n)	/* still rising at the end: the last point */
			j = n - 1;
		if (nsteps < max) {
			steps[nsteps].last = i - 1;
			steps[nsteps].before = base;
			steps[nsteps].after = y[j];
		}
		nsteps++;
		start = j;
		i = j;
	}
	/* the plateau after each step, now that it is known in full */
	for (size_t s = 0; s < nsteps && s < max; s++) {
		size_t from = s + 1 < nsteps && s + 1 < max ? steps[s + 1].last + 1 : n;
		size_t lo = steps[s].last + 1;

		/* the points from where the rise flattened to the next step */
		while (lo + 1 < from && y[lo + 1] >= y[lo] * (1 + thr / 3))
			lo++;
		if (lo < from)
			steps[s].after = probe_median(y + lo, from - lo);
	}
	return nsteps < max ? nsteps : max;
}

unsigned long probe_infer_line(const double *d, const double *y, size_t n)
{
	double base = INFINITY;

	for (size_t i = 0; i < n; i++)
		if (!(y[i] > 0))
			return 0;
	for (size_t i = 1; i < n; i++) {
		size_t j;

		base = fmin(base, y[i - 1]);
		for (j = i; j < n && y[j] >= base * 1.15; j++)
			;
		if (j == n)
			return (unsigned long)d[i];
	}
	return 0;
}

unsigned long probe_infer_ways(const double *k, const double *y, size_t n,
			       double hit_ns, double next_ns)
{
	double mid;

	if (n < 2 || !(hit_ns > 0) || !(next_ns > hit_ns))
		return 0;
	mid = sqrt(hit_ns * next_ns);
	for (size_t i = 0; i < n; i++)
		if (y[i] > mid && (i + 1 >= n || y[i + 1] > mid))
			return i ? (unsigned long)k[i - 1] : 0;
	return 0;
}

/* Student's t at 97.5% for df = 1..30; beyond, the normal 1.96. */
static double t975(size_t df)
{
	static const double t[] = {
		12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
	};

	return df >= 1 && df <= 30 ? t[df - 1] : 1.96;
}

double probe_rel_error_pct(double mean, double sd, size_t n)
{
	if (n < 2 || !(mean > 0))
		return INFINITY;
	return 100.0 * t975(n - 1) * sd / sqrt((double)n) / mean;
}
