/*
 * test_onsets.c - lib/query/onsets.c on series drawn from a fixed seed:
 * Poisson counts with four changes of different sizes (found at their
 * point, inside their interval, confident, with their levels), stationary
 * counts (next to no false change over 20 series), a metric (its interval
 * the profile likelihood's, small shifts merged by min_shift, the
 * smallest first), sparse 0/1 values (a MAD of 0; as counts, a sigma of
 * 1 and no false change), the segmentation equal to optimal
 * partitioning's without pruning, and the edges: too few points, a
 * constant series, a NaN named by its index, a shift from 0, the same
 * answer twice.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "onsets.h"

/* ---- draws ---- */

static uint64_t rng_state;

static void rng_seed(uint64_t seed)
{
	rng_state = seed;
}

static uint64_t rng_next(void)
{
	uint64_t x = (rng_state += 0x9e3779b97f4a7c15ull);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* uniform in (0, 1) */
static double rng_unit(void)
{
	return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0;
}

/* Poisson by multiplying uniforms until below e^-lambda (lambda < 700) */
static double rng_poisson(double lambda)
{
	double limit = exp(-lambda), p = rng_unit();
	unsigned k = 0;

	while (p > limit) {
		p *= rng_unit();
		k++;
	}
	return k;
}

/* standard normal, Box-Muller */
static double rng_normal(void)
{
	return sqrt(-2 * log(rng_unit())) * cos(2 * M_PI * rng_unit());
}

/* ---- series ---- */

/* levels[i] from bounds[i] to bounds[i + 1] (bounds[0] = 0, bounds[nl] = n) */
static double *counts_make(const double *levels, const size_t *bounds, size_t nl, uint64_t seed)
{
	double *y = malloc(bounds[nl] * sizeof(*y));

	rng_seed(seed);
	for (size_t l = 0; l < nl; l++)
		for (size_t i = bounds[l]; i < bounds[l + 1]; i++)
			y[i] = rng_poisson(levels[l]);
	return y;
}

static double *normal_make(const double *levels, const size_t *bounds, size_t nl, double sd,
			   uint64_t seed)
{
	double *y = malloc(bounds[nl] * sizeof(*y));

	rng_seed(seed);
	for (size_t l = 0; l < nl; l++)
		for (size_t i = bounds[l]; i < bounds[l + 1]; i++)
			y[i] = levels[l] + sd * rng_normal();
	return y;
}

static void value_check(double got, double want, double share)
{
	if (fabs(got - want) > share * fabs(want))
		fail_msg("%g is not within %g %% of %g", got, 100 * share, want);
}

static double series_rss(const double *y, size_t a, size_t b)
{
	double m = 0, r = 0;

	for (size_t i = a; i < b; i++)
		m += y[i];
	m /= (double)(b - a);
	for (size_t i = a; i < b; i++)
		r += (y[i] - m) * (y[i] - m);
	return r;
}

/* ---- tests ---- */

/* 100 -> 150 -> 120 -> 400 -> 60 a point */
static void test_counts_changes(void **state)
{
	static const double lv[] = { 100, 150, 120, 400, 60 };
	static const size_t at[] = { 0, 1000, 2200, 3100, 4000, 5000 };
	struct onsets_opts o = { .flags = ONSETS_COUNTS };
	struct error e = { "" };
	struct onset *c;
	double *y = counts_make(lv, at, 5, 1), sigma;
	size_t n;

	assert_int_equal(onsets_find(y, 5000, &o, &c, &n, &sigma, &e), 0);
	assert_int_equal(n, 4);
	/* the stabilised Poisson noise is 1 */
	value_check(sigma, 1, 0.1);
	for (size_t i = 0; i < n; i++) {
		size_t t = at[i + 1];

		if (c[i].at + 1 < t || c[i].at > t + 1)
			fail_msg("change %zu at %zu, not %zu", i, c[i].at, t);
		assert_true(c[i].lo <= c[i].at && c[i].at <= c[i].hi);
		if (t < c[i].lo || t > c[i].hi)
			fail_msg("change %zu at %zu: [%zu, %zu] misses %zu", i, c[i].at,
				 c[i].lo, c[i].hi, t);
		assert_true(c[i].confidence >= 0.95);
		value_check(c[i].before, lv[i], 0.05);
		value_check(c[i].after, lv[i + 1], 0.05);
		value_check(c[i].shift, (lv[i + 1] - lv[i]) / lv[i], 0.2);
	}
	free(c);
	free(y);
}

/* a level of 100 throughout, 20 times: at most one change in all */
static void test_counts_stationary(void **state)
{
	static const double lv[] = { 100 };
	static const size_t at[] = { 0, 5000 };
	struct onsets_opts o = { .flags = ONSETS_COUNTS };
	struct error e = { "" };
	size_t found = 0;

	for (uint64_t seed = 100; seed < 120; seed++) {
		double *y = counts_make(lv, at, 1, seed);
		struct onset *c;
		size_t n;

		assert_int_equal(onsets_find(y, 5000, &o, &c, &n, NULL, &e), 0);
		found += n;
		free(c);
		free(y);
	}
	assert_true(found <= 1);
}

/*
 * A metric with one change: found, and its interval exactly the splits of
 * the whole series costing at most ONSETS_INTERVAL_CUT sigma^2 more than
 * the best.
 */
static void test_metric_interval(void **state)
{
	static const double lv[] = { 50, 55 };
	static const size_t at[] = { 0, 600, 1000 };
	struct onsets_opts o = { 0 };
	struct error e = { "" };
	double *y = normal_make(lv, at, 2, 5, 3), sigma, min = INFINITY, *cost;
	struct onset *c;
	size_t n;

	assert_int_equal(onsets_find(y, 1000, &o, &c, &n, &sigma, &e), 0);
	assert_int_equal(n, 1);
	value_check(sigma, 5, 0.1);
	assert_true(c[0].at >= 585 && c[0].at <= 615);
	assert_true(c[0].lo < c[0].at || c[0].at < c[0].hi);
	cost = calloc(1000, sizeof(*cost));
	for (size_t t = ONSETS_MIN_SEG; t <= 1000 - ONSETS_MIN_SEG; t++) {
		cost[t] = series_rss(y, 0, t) + series_rss(y, t, 1000);
		min = fmin(min, cost[t]);
	}
	for (size_t t = c[0].lo; t <= c[0].hi; t++)
		assert_true(cost[t] <= min + ONSETS_INTERVAL_CUT * sigma * sigma);
	assert_true(c[0].lo == ONSETS_MIN_SEG || cost[c[0].lo - 1] > min + ONSETS_INTERVAL_CUT * sigma * sigma);
	assert_true(c[0].hi == 1000 - ONSETS_MIN_SEG || cost[c[0].hi + 1] > min + ONSETS_INTERVAL_CUT * sigma * sigma);
	value_check(c[0].before, 50, 0.01);
	value_check(c[0].after, 55, 0.01);
	free(cost);
	free(c);
	free(y);
}

/* 1000 -> 1020 -> 1500 with a noise of 50: min_shift 0.05 keeps only the big one */
static void test_metric_min_shift(void **state)
{
	static const double lv[] = { 1000, 1020, 1500 };
	static const size_t at[] = { 0, 2000, 4000, 6000 };
	struct onsets_opts o = { 0 };
	struct error e = { "" };
	double *y = normal_make(lv, at, 3, 50, 4);
	struct onset *c;
	size_t n;

	assert_int_equal(onsets_find(y, 6000, &o, &c, &n, NULL, &e), 0);
	assert_int_equal(n, 2);
	assert_true(c[0].at > 1900 && c[0].at < 2100);
	value_check(c[0].shift, 0.02, 0.3);
	assert_true(c[1].at >= 3999 && c[1].at <= 4001);
	free(c);
	o.min_shift = 0.05;
	assert_int_equal(onsets_find(y, 6000, &o, &c, &n, NULL, &e), 0);
	assert_int_equal(n, 1);
	assert_true(c[0].at >= 3999 && c[0].at <= 4001);
	/* the level before is now both first segments' */
	value_check(c[0].before, 1010, 0.003);
	value_check(c[0].after, 1500, 0.003);
	value_check(c[0].shift, 490.0 / 1010, 0.02);
	assert_true(c[0].lo <= 4000 && 4000 <= c[0].hi);
	assert_true(c[0].confidence >= 0.95);
	free(c);
	/* a bigger minimum merges it too, into no change at all */
	o.min_shift = 0.5;
	assert_int_equal(onsets_find(y, 6000, &o, &c, &n, NULL, &e), 0);
	assert_int_equal(n, 0);
	assert_null(c);
	free(y);
	/*
	 * 1000 -> 1040 -> 1080, both below 5 %: the smaller goes first, and
	 * then the other is 1000 -> 1060, no longer below
	 */
	y = normal_make((double[]){ 1000, 1040, 1080 }, (size_t[]){ 0, 1000, 2000, 3000 }, 3,
			10, 6);
	o.min_shift = 0.05;
	assert_int_equal(onsets_find(y, 3000, &o, &c, &n, NULL, &e), 0);
	assert_int_equal(n, 1);
	assert_true(c[0].at >= 999 && c[0].at <= 1001);
	value_check(c[0].after, 1060, 0.003);
	free(c);
	free(y);
}

/*
 * Bernoulli 0.1 then 0.6: most differences 0, so the MAD is 0, and the
 * standard deviation of the differences is used.  As counts, mostly 0:
 * sigma 1.  Sparse counts without a change have none.
 */
static void test_sparse(void **state)
{
	static const double lv[] = { 0.05 };
	static const size_t at[] = { 0, 5000 };
	struct onsets_opts o = { .flags = ONSETS_COUNTS };
	struct error e = { "" };
	double y[4000], sigma, *p;
	struct onset *c;
	size_t n;

	rng_seed(5);
	for (size_t i = 0; i < 4000; i++)
		y[i] = rng_unit() < (i < 2000 ? 0.1 : 0.6);
	for (int counts = 0; counts < 2; counts++) {
		o.flags = counts ? ONSETS_COUNTS : 0;
		assert_int_equal(onsets_find(y, 4000, &o, &c, &n, &sigma, &e), 0);
		if (counts)
			assert_true(sigma == 1);
		else
			value_check(sigma, sqrt((0.09 + 0.24) / 2), 0.1);
		assert_int_equal(n, 1);
		assert_true(c[0].at > 1950 && c[0].at < 2050);
		assert_true(c[0].lo <= 2000 && 2000 <= c[0].hi);
		value_check(c[0].before, 0.1, 0.2);
		value_check(c[0].after, 0.6, 0.1);
		assert_true(c[0].confidence >= 0.95);
		free(c);
	}
	p = counts_make(lv, at, 1, 7);
	o.flags = ONSETS_COUNTS;
	assert_int_equal(onsets_find(p, 5000, &o, &c, &n, &sigma, &e), 0);
	assert_int_equal(n, 0);
	free(p);
}

/*
 * The penalised optimum by optimal partitioning over every last change,
 * no pruning: the change points into want, their number returned.
 */
static size_t segment_ref(const double *z, size_t n, size_t m, double sigma, size_t *want)
{
	double *F = malloc((n + 1) * sizeof(*F)), *s1 = malloc((n + 1) * sizeof(*s1));
	double *s2 = malloc((n + 1) * sizeof(*s2));
	size_t *last = malloc((n + 1) * sizeof(*last)), k = 0;

	s1[0] = s2[0] = 0;
	for (size_t i = 0; i < n; i++) {
		s1[i + 1] = s1[i] + z[i];
		s2[i + 1] = s2[i] + z[i] * z[i];
	}
	F[0] = -3 * log(n);
	for (size_t t = m; t <= n; t++) {
		F[t] = INFINITY;
		for (size_t s = 0; s + m <= t; s = s ? s + 1 : m) {
			double d = s1[t] - s1[s];
			double v = F[s] + (s2[t] - s2[s] - d * d / (t - s)) / (sigma * sigma) +
				   log((double)(t - s) / n) + 3 * log(n);

			if (v < F[t]) {
				F[t] = v;
				last[t] = s;
			}
		}
	}
	for (size_t t = last[n]; t > 0; t = last[t])
		k++;
	for (size_t t = last[n], i = k; t > 0; t = last[t])
		want[--i] = t;
	free(F);
	free(s1);
	free(s2);
	free(last);
	return k;
}

/*
 * PELT and the functional pruning drop only what cannot win: the same
 * change points as segment_ref's, with the shortest segment 2 and 7
 * (where a beaten candidate must be kept a while), on short segments,
 * on long ones with small changes (where the pruning is all functional),
 * and on counts.
 */
static void test_exact(void **state)
{
	static const double lv1[] = { 0, 1.5, 0.4, 2.5, 2.0, -1 };
	static const size_t at1[] = { 0, 40, 70, 160, 175, 260, 300 };
	static const double lv2[] = { 0, 0.25, -0.1 };
	static const size_t at2[] = { 0, 900, 2000, 3000 };
	static const double lv3[] = { 20, 23, 21 };

	for (int run = 0; run < 12; run++) {
		struct onsets_opts o = { .min_seg = run % 2 ? 7 : 0 };
		size_t m = o.min_seg ? o.min_seg : 2, k, nw, n, want[3000];
		double *y, *z, sigma;
		struct error e = { "" };
		struct onset *c;

		if (run < 6) {
			n = 300;
			y = normal_make(lv1, at1, 6, 1, 10 + run);
		} else if (run < 10) {
			n = 3000;
			y = normal_make(lv2, at2, 3, 1, 10 + run);
		} else {
			n = 3000;
			y = counts_make(lv3, at2, 3, 10 + run);
			o.flags = ONSETS_COUNTS;
		}
		z = malloc(n * sizeof(*z));
		for (size_t i = 0; i < n; i++)
			z[i] = o.flags ? 2 * sqrt(y[i] + 3.0 / 8) : y[i];
		assert_int_equal(onsets_find(y, n, &o, &c, &k, &sigma, &e), 0);
		nw = segment_ref(z, n, m, sigma, want);
		assert_true(nw >= 1);
		assert_int_equal(k, nw);
		for (size_t i = 0; i < k; i++)
			assert_int_equal(c[i].at, want[i]);
		free(c);
		free(y);
		free(z);
	}
}

static void test_edges(void **state)
{
	static const double lv[] = { 100, 150, 120, 400, 60 };
	static const size_t at[] = { 0, 1000, 2200, 3100, 4000, 5000 };
	struct onsets_opts o = { .flags = ONSETS_COUNTS };
	double y[100], *p, sigma = 1;
	struct onset *c = (void *)y, *c2;
	struct error e = { "" };
	size_t n = 1, n2;

	/* too few points */
	for (size_t i = 0; i < 100; i++)
		y[i] = i < 4 ? 1 : 50;
	assert_int_equal(onsets_find(y, ONSETS_MIN_POINTS - 1, &o, &c, &n, &sigma, &e), 0);
	assert_int_equal(n, 0);
	assert_null(c);
	/* constant */
	for (size_t i = 0; i < 100; i++)
		y[i] = 7;
	assert_int_equal(onsets_find(y, 100, &o, &c, &n, &sigma, &e), 0);
	assert_int_equal(n, 0);
	assert_true(sigma == 0);
	assert_int_equal(onsets_find(y, 100, NULL, &c, &n, NULL, &e), 0);
	assert_int_equal(n, 0);
	/* a NaN, infinity, a negative count, a bad option */
	y[37] = NAN;
	assert_int_equal(onsets_find(y, 100, &o, &c, &n, NULL, &e), -1);
	assert_non_null(strstr(e.msg, " 37 "));
	assert_null(strchr(e.msg, '\n'));
	y[37] = -INFINITY;
	assert_int_equal(onsets_find(y, 100, NULL, &c, &n, NULL, &e), -1);
	assert_non_null(strstr(e.msg, " 37 "));
	y[37] = -1;
	assert_int_equal(onsets_find(y, 100, NULL, &c, &n, NULL, &e), 0);
	free(c);
	assert_int_equal(onsets_find(y, 100, &o, &c, &n, NULL, &e), -1);
	assert_non_null(strstr(e.msg, " 37 "));
	y[37] = 7;
	o.min_shift = -0.1;
	assert_int_equal(onsets_find(y, 100, &o, &c, &n, NULL, &e), -1);
	o.min_shift = NAN;
	assert_int_equal(onsets_find(y, 100, &o, &c, &n, NULL, &e), -1);
	o.min_shift = 0;
	o.flags = 8;
	assert_int_equal(onsets_find(y, 100, &o, &c, &n, NULL, &e), -1);
	/* a segment longer than half the series: no change */
	o = (struct onsets_opts){ .flags = ONSETS_COUNTS, .min_seg = 2600 };
	p = counts_make(lv, at, 5, 1);
	assert_int_equal(onsets_find(p, 5000, &o, &c, &n, NULL, &e), 0);
	assert_int_equal(n, 0);
	free(p);
	/* from nothing: an infinite shift */
	p = counts_make((double[]){ 0, 20 }, (size_t[]){ 0, 500, 1000 }, 2, 2);
	o.min_seg = 0;
	assert_int_equal(onsets_find(p, 1000, &o, &c, &n, NULL, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(c[0].at, 500);
	assert_true(c[0].before == 0 && c[0].shift == INFINITY);
	free(c);
	free(p);
	/*
	 * deterministic, the shuffles too: tails heavy enough (a normal over
	 * a uniform near 0) make changes around outliers even with the
	 * trimmed sigma, some with a confidence well below 1
	 */
	p = malloc(4000 * sizeof(*p));
	rng_seed(33);
	for (size_t i = 0; i < 4000; i++)
		p[i] = rng_normal() / (rng_unit() + 0.02);
	o = (struct onsets_opts){ .min_seg = 2 };
	assert_int_equal(onsets_find(p, 4000, &o, &c, &n, NULL, &e), 0);
	assert_int_equal(onsets_find(p, 4000, &o, &c2, &n2, NULL, &e), 0);
	assert_int_equal(n, n2);
	assert_memory_equal(c, c2, n * sizeof(*c));
	n2 = 0;
	for (size_t i = 0; i < n; i++)
		n2 += c[i].confidence < 0.9;
	assert_true(n2 >= 3);
	free(c);
	free(c2);
	free(p);
}

/*
 * What a process's samples per bucket look like on a busy machine: a
 * share of a timer's 40 ticks (binomial, narrower than Poisson), now and
 * then a bucket lost half to another process.  Stationary: over 20 runs
 * of 150 buckets, at most one change.  The MAD of the differences sees
 * only the narrow body and made a change at most such buckets; the
 * trimmed scale sees the tails.
 */
static void test_heavy_tails(void **state)
{
	struct onsets_opts o = { .flags = ONSETS_COUNTS };
	struct error e = { "" };
	size_t found = 0;
	double y[150];

	(void)state;
	for (int run = 0; run < 20; run++) {
		struct onset *c;
		size_t n;

		rng_seed(1000 + (uint64_t)run);
		for (size_t i = 0; i < 150; i++) {
			int k = 0;

			for (int t = 0; t < 40; t++)
				k += rng_unit() < 0.45;
			y[i] = rng_unit() < 0.03 ? floor(k * 0.6) : k;
		}
		assert_int_equal(onsets_find(y, 150, &o, &c, &n, NULL, &e), 0);
		found += n;
		free(c);
	}
	assert_true(found <= 1);
}

/*
 * A ramp is one change: a level reached in two steps the same way with a
 * few points between them, at the larger step; steps apart, or opposite
 * (a dip), stay two.
 */
static void ramp_check(const double *lv, const size_t *len, size_t nseg, size_t want,
		       const size_t *at)
{
	struct onsets_opts o = { 0 };
	struct error e = { "" };
	struct onset *c;
	size_t n, total = 0, k = 0;
	double y[400];

	rng_seed(7);
	for (size_t s = 0; s < nseg; s++)
		for (size_t i = 0; i < len[s]; i++)
			y[k++] = lv[s] + rng_normal() * 0.5;
	total = k;
	assert_int_equal(onsets_find(y, total, &o, &c, &n, NULL, &e), 0);
	assert_int_equal(n, want);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(c[i].at, at[i]);
	free(c);
}

static void test_ramps(void **state)
{
	(void)state;
	/* up a little, then up a lot 6 points later (fewer than ONSETS_RAMP
	 * shortest segments): one change, the big step */
	ramp_check((double[]){ 10, 12, 30 }, (size_t[]){ 100, 6, 100 }, 3, 1,
		   (size_t[]){ 106 });
	/* up a lot, then settling up a little: one change, the first */
	ramp_check((double[]){ 10, 25, 30 }, (size_t[]){ 100, 6, 100 }, 3, 1,
		   (size_t[]){ 100 });
	/* a dip of 6 points: two changes */
	ramp_check((double[]){ 30, 10, 30 }, (size_t[]){ 100, 6, 100 }, 3, 2,
		   (size_t[]){ 100, 106 });
	/* two steps up 20 points apart: two changes */
	ramp_check((double[]){ 10, 20, 30 }, (size_t[]){ 100, 20, 100 }, 3, 2,
		   (size_t[]){ 100, 120 });
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_changes),
		cmocka_unit_test(test_counts_stationary),
		cmocka_unit_test(test_metric_interval),
		cmocka_unit_test(test_metric_min_shift),
		cmocka_unit_test(test_sparse),
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_heavy_tails),
		cmocka_unit_test(test_ramps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
