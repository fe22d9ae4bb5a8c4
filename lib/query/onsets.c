/*
 * onsets.c - the change points of a series (see onsets.h): where the level
 * of an event's rate or of a metric moved, each with an interval and a
 * confidence.
 *
 * The values z (y, or 2 sqrt(y + 3/8) for counts) are cut into segments
 * of constant mean by minimising exactly, over every segmentation with
 * segments of at least min_seg points,
 *
 *	sum over segments of (RSS / sigma^2 + log(length / n))
 *	+ 3 log n per change
 *
 * where RSS is a segment's sum of squared deviations from its mean: the
 * normal mean-change likelihood (-2 log L) under the modified BIC.  sigma
 * comes from the first differences, which a level does not move and a
 * change moves at one point only.  The optimum is found by PELT, optimal
 * partitioning's recursion over the last change before each point with
 * the candidates that can no longer be it dropped, and FPOP's functional
 * pruning, which drops them inside long segments too (see pelt_segment).
 * Each change's interval is the profile likelihood's between its
 * neighbours; its confidence a permutation test near it.  Memory is
 * O(n); time O(n) times the candidates kept (a few dozen), plus, per
 * change, O(distance between its neighbours) and O(ONSETS_PERMUTATIONS *
 * ONSETS_PERM_SPAN): about 0.2 s for 250,000 points.
 *
 * References:
 *   F. J. Anscombe, The transformation of Poisson, binomial and
 *   negative-binomial data, Biometrika 35 (1948), 246-254.
 *   F. R. Hampel, The influence curve and its role in robust estimation,
 *   JASA 69 (1974), 383-393 (the MAD, and its 0.6745 for the normal).
 *   N. R. Zhang and D. O. Siegmund, A modified Bayes information criterion
 *   with applications to the analysis of comparative genomic hybridization
 *   data, Biometrics 63 (2007), 22-32.
 *   R. Killick, P. Fearnhead and I. A. Eckley, Optimal detection of
 *   changepoints with a linear computational cost, JASA 107 (2012),
 *   1590-1598.
 *   R. Maidstone, T. Hocking, G. Rigaill and P. Fearnhead, On optimal
 *   multiple changepoint algorithms for large data, Statistics and
 *   Computing 27 (2017), 519-533.
 *   G. L. Steele, D. Lea and C. H. Flood, Fast splittable pseudorandom
 *   number generators, OOPSLA 2014 (splitmix64, the shuffles' generator).
 */
#include "config.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "onsets.h"

/* The profile likelihood's cut for a change's 95 % interval: a change's
 * position is no regular parameter, and the cut c covers it with about
 * (1 - exp(-c / 2))^2 (3.84, chi-squared's 95 %, covers 73 %; measured
 * 53-92 % on this file's tests, 87-98 % with 7.35). */
#define INTERVAL_CUT	ONSETS_INTERVAL_CUT
#define MAD_NORMAL	0.6745	/* the MAD of a standard normal */
#define PERM_SEED	0x6f6e73657473ull	/* "onsets" */
#define NONE		SIZE_MAX

/* ---- prefix sums: a segment's mean and cost in O(1) ---- */

/*
 * Sums over [0, i), in long double.  For a cost, of the values less their
 * overall mean and of their squares: a long segment's sum of squares less
 * its squared sum over its length is a difference of two large numbers,
 * and a metric in the billions with a noise of a few units would leave
 * nothing of it in double.  For levels, of the values themselves: exact
 * for counts, so that a segment of zeros has a mean of exactly 0.
 */
struct sums {
	long double *s1, *s2;	/* s2 NULL without the squares */
	double shift;
};

static void sums_init(struct sums *s, const double *v, size_t n, int cost)
{
	long double a = 0, b = 0;
	double mean = 0;

	for (size_t i = 0; cost && i < n; i++)
		mean += (v[i] - mean) / (double)(i + 1);
	s->shift = mean;
	s->s1 = xmalloc((n + 1) * sizeof(*s->s1));
	s->s2 = cost ? xmalloc((n + 1) * sizeof(*s->s2)) : NULL;
	s->s1[0] = 0;
	if (cost)
		s->s2[0] = 0;
	for (size_t i = 0; i < n; i++) {
		long double d = (long double)v[i] - mean;

		s->s1[i + 1] = a += d;
		if (cost)
			s->s2[i + 1] = b += d * d;
	}
}

static void sums_free(struct sums *s)
{
	free(s->s1);
	free(s->s2);
}

static double sums_mean(const struct sums *s, size_t a, size_t b)
{
	return s->shift + (double)((s->s1[b] - s->s1[a]) / (long double)(b - a));
}

/* The sum of squared deviations of v[a..b) from their mean. */
static double sums_rss(const struct sums *s, size_t a, size_t b)
{
	long double s1 = s->s1[b] - s->s1[a];
	long double r = s->s2[b] - s->s2[a] - s1 * s1 / (long double)(b - a);

	return r > 0 ? (double)r : 0;
}

/* ---- the noise ---- */

/*
 * The k-th smallest of v[0..n), v reordered so that v[0..k) are no
 * larger and v(k..n) no smaller (Hoare's FIND, the pivot the median of
 * three so that sorted or reversed input stays linear).
 */
static double median_select(double *v, size_t n, size_t k)
{
	ptrdiff_t l = 0, r = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;

	while (l < r) {
		double x = v[l], y = v[kk], z = v[r], p;
		ptrdiff_t i = l, j = r;

		p = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
		do {
			while (v[i] < p)
				i++;
			while (p < v[j])
				j--;
			if (i <= j) {
				double t = v[i];

				v[i++] = v[j];
				v[j--] = t;
			}
		} while (i <= j);
		if (j < kk)
			l = i;
		if (kk < i)
			r = j;
	}
	return v[k];
}

static double median_compute(double *v, size_t n)
{
	double hi = median_select(v, n, n / 2), lo = hi;

	if (n % 2 == 0) {
		lo = v[0];
		for (size_t i = 1; i < n / 2; i++)
			lo = fmax(lo, v[i]);
	}
	return (lo + hi) / 2;
}

/*
 * sigma of z[0..n), n >= 2: MAD(first differences) / (0.6745 sqrt 2), the
 * differences of independent noise having twice its variance.  When more
 * than half of the differences are equal (counts mostly 0 and 1) the MAD
 * is 0 and says nothing: then their standard deviation / sqrt 2, and 0
 * for a constant series.  d: n - 1 doubles of scratch.
 */
static int dbl_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/*
 * sigma of z[0..n) from the first differences' root mean square, the
 * largest TRIM_SHARE of them left out (a change moves one difference,
 * and up to one change in 1 / TRIM_SHARE points is left out with it), and
 * the loss made up for as if the noise were normal: E[X^2 | |X| < q] for
 * the q leaving out that share is TRIM_NORMAL sigma^2.  Unlike the MAD,
 * it sees noise with heavy tails: a process that mostly runs its share
 * of a bucket but now and then loses a bucket to another has a small MAD
 * and would be cut at each such bucket.  d: n - 1 doubles of scratch.
 */
#define TRIM_SHARE	0.02
#define TRIM_NORMAL	0.8735	/* 1 - 2 q phi(q) / 0.98, q = 2.326 */

static double sigma_trimmed(const double *z, size_t n, double *d)
{
	size_t nd = n - 1, keep;
	double ss = 0;

	for (size_t i = 0; i < nd; i++)
		d[i] = fabs(z[i + 1] - z[i]);
	qsort(d, nd, sizeof(*d), dbl_cmp);
	keep = nd - (size_t)floor((double)nd * TRIM_SHARE);
	for (size_t i = 0; i < keep; i++)
		ss += d[i] * d[i];
	return sqrt(ss / (double)keep / (2 * TRIM_NORMAL));
}

static double sigma_estimate(const double *z, size_t n, double *d)
{
	size_t nd = n - 1;
	double med, mad, mean = 0, ss = 0;

	for (size_t i = 0; i < nd; i++)
		d[i] = z[i + 1] - z[i];
	med = median_compute(d, nd);
	for (size_t i = 0; i < nd; i++)
		d[i] = fabs(d[i] - med);
	mad = median_compute(d, nd);
	if (mad > 0)
		return mad / (MAD_NORMAL * sqrt(2));
	if (nd < 2)
		return 0;
	for (size_t i = 0; i < nd; i++)
		mean += (z[i + 1] - z[i] - mean) / (double)(i + 1);
	for (size_t i = 0; i < nd; i++) {
		double x = z[i + 1] - z[i] - mean;

		ss += x * x;
	}
	return sqrt(ss / (double)(nd - 1)) / sqrt(2);
}

/*
 * Whether counts are mostly 0, their median below 1.  The transform makes
 * Poisson noise normal with a sigma of 1 only from a mean of about 1 up:
 * below, the stabilised noise is smaller and far from normal, a lone 1
 * among 0s standing 10 sigmas out at a mean of 0.01, and each would be a
 * change.  Such counts get the sigma of 1 of Poisson counts that are not
 * sparse, as if they were at least as noisy.  buf: n doubles of scratch.
 */
static int counts_sparse(const double *y, size_t n, double *buf)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = y[i];
	return median_compute(buf, n) < 1;
}

/* ---- PELT ---- */

/*
 * A candidate last change x, and the means mu* of a segment [x, T) with
 * which it can still be the best last change before some T to come: in
 * [lo, hi] and not in (hole_lo, hole_hi).  Empty: it never will be again.
 */
struct pelt_cand {
	size_t at;
	double lo, hi;
	double hole_lo, hole_hi;
};

struct pelt_span {
	double lo, hi;
};

/*
 * The union of the open spans sp[0..n) that overlap one another and cover
 * x, (0, 0) when none does.  A pass per growth; the first finds nearly all.
 */
static struct pelt_span span_merge(const struct pelt_span *sp, size_t n, double x)
{
	struct pelt_span run = { x, x };
	int grown;

	do {
		grown = 0;
		for (size_t i = 0; i < n; i++) {
			if (!(sp[i].lo < run.hi && run.lo < sp[i].hi))
				continue;
			if (sp[i].lo < run.lo || sp[i].hi > run.hi) {
				run.lo = MIN(run.lo, sp[i].lo);
				run.hi = MAX(run.hi, sp[i].hi);
				grown = 1;
			}
		}
	} while (grown);
	return run.lo < run.hi ? run : (struct pelt_span){ 0, 0 };
}

/*
 * Where a newer candidate a beats an older one x at every T >= a + m, by
 * what the data of [x, a) show (len = a - x, mean their mean, D = F[a] -
 * F[x] - RSS(x, a) / sigma^2).  With mu* the mean of [x, T), RSS(x, T) >=
 * RSS(x, a) + len (mu* - mean)^2 + RSS(a, T), so F[x] + C(x, T) >= F[a] +
 * C(a, T) + len (mu* - mean)^2 / sigma^2 - D + log((T - x) / (T - a)),
 * the last term > 0: a beats x whenever len (mu* - mean)^2 >= D sigma^2.
 * x keeps only the mu* closer than that, none when D < 0.  (PELT's rule,
 * F[x] + C(x, a) > F[a], is D < log((a - x) / n) <= 0: this drops more.)
 * Returns 0 when x is left with no mu*.
 */
static int pelt_narrow(const struct sums *s, const double *F, double sigma, size_t a,
		       struct pelt_cand *x)
{
	double len = (double)(a - x->at), mean = (double)((s->s1[a] - s->s1[x->at]) / len);
	double d = F[a] - F[x->at] - sums_rss(s, x->at, a) / (sigma * sigma), r;

	if (d < 0)
		return 0;
	r = sigma * sqrt(d / len);
	x->lo = MAX(x->lo, mean - r);
	x->hi = MIN(x->hi, mean + r);
	return x->lo <= x->hi && !(x->hole_lo < x->lo && x->hi < x->hole_hi);
}

/*
 * The other way round: the older candidates c[0..i) against c[i] = a at
 * time t, for every T >= t.  With mu* now the mean of [a, T), RSS(x, T)
 * <= RSS(x, a) + len (mu* - mean)^2 + RSS(a, T), so x beats a whenever
 * len (mu* - mean)^2 < (D - log((T - x) / (T - a))) sigma^2, and the log
 * only shrinks as T grows: its value at t does for every T after.  Of
 * those spans, a's hole is the run of overlapping ones around the level
 * a came after (the mean of [last[a], a): where its segment's mean stays
 * while nothing changes).  sp: i spans of scratch.  Returns 0 when a is
 * left with no mu*.
 */
static int pelt_hole(const struct sums *s, const double *F, const size_t *last,
		     const double *lg, size_t t, double sigma, struct pelt_cand *c, size_t i,
		     struct pelt_span *sp)
{
	size_t a = c[i].at, nsp = 0;
	struct pelt_span run = { 0, 0 };

	if (!a)
		return 1;
	for (size_t j = 0; j < i; j++) {
		size_t x = c[j].at;
		double len = (double)(a - x), mean = (double)((s->s1[a] - s->s1[x]) / len);
		double d = F[a] - F[x] - sums_rss(s, x, a) / (sigma * sigma) -
			   (lg[t - x] - lg[t - a]);

		if (d > 0)
			sp[nsp++] = (struct pelt_span){ mean - sigma * sqrt(d / len),
							mean + sigma * sqrt(d / len) };
	}
	if (nsp)
		run = span_merge(sp, nsp, sums_mean(s, last[a], a) - s->shift);
	c[i].hole_lo = run.lo;
	c[i].hole_hi = run.hi;
	return !(run.lo < c[i].lo && c[i].hi < run.hi);
}

/*
 * The optimal change points into cp (ascending), their number returned;
 * needs 2 m <= n.  F[t] is the best penalised cost of z[0..t) followed by
 * a change at t (F[0] = -beta, so that k changes cost k beta),
 *
 *	F[t] = min over s of F[s] + C(s, t) + beta,
 *	C(s, t) = RSS(s, t) / sigma^2 + log((t - s) / n),
 *
 * s = 0 or m <= s <= t - m, over the candidates s not yet shown to lose
 * to another at every T from t on.
 *
 * PELT drops s once F[s] + C(s, t) + K > F[t], which is valid for K = 0
 * when C(s, t') >= C(s, t) + C(t, t') for s < t < t' (then F[t] + C(t,
 * t') + beta beats s at t').  The RSS part holds, splitting a segment
 * never raising its RSS.  The log part too: with l1 = t - s and l2 = t' -
 * t, both at most n, l1 l2 <= n min(l1, l2) <= n (l1 + l2), so log(l1 /
 * n) + log(l2 / n) <= log((l1 + l2) / n).  pelt_narrow applies a
 * stronger form of it.  But inside a long segment without a change PELT
 * drops nothing (F[s] + C(s, t) is the split's cost without its beta,
 * below F[t]): 10 changes in 250,000 points leave 10^4 candidates at each
 * point, 10^9 sums in all.  So functional pruning as well, after FPOP
 * (Maidstone, Hocking, Rigaill and Fearnhead 2017): a candidate keeps the
 * means mu* its segment could have and still win with; it loses those
 * far from its own data's mean to the newer candidates (pelt_narrow),
 * those near them to the older ones, which saved a beta (pelt_hole), and
 * goes when none is left: a few dozen stay, with or without changes.
 * FPOP keeps each candidate's set exactly; the mBIC's log((T - s) / n)
 * changes the candidates' order as T grows, so these sets are bounds that
 * hold for every T to come: an interval less a hole, the hole looked at
 * again each time the candidate's age doubles (it grows with T).  A
 * candidate is dropped only when it can never win: the result is the
 * exact optimum, as without pruning (test_onsets compares).
 */
static size_t pelt_segment(const struct sums *s, size_t n, size_t m, double sigma,
			   size_t *cp)
{
	double beta = 3 * log((double)n), inv = 1 / (sigma * sigma), logn = log((double)n);
	double *F = xmalloc((n + 1) * sizeof(*F)), *lg = xmalloc((n + 1) * sizeof(*lg));
	size_t *last = xmalloc((n + 1) * sizeof(*last)), nc = 0, cc = 0, spc = 0, k = 0;
	struct pelt_cand *c = NULL;
	struct pelt_span *sp = NULL;

	for (size_t i = 1; i <= n; i++)
		lg[i] = log((double)i) - logn;
	F[0] = -beta;
	for (size_t t = m; t <= n; t++) {
		size_t a = t - m, best_at = 0, keep = 0;
		double best = INFINITY;

		if (a == 0 || a >= m) {
			for (size_t i = 0; i < nc; i++)
				if (pelt_narrow(s, F, sigma, a, &c[i]))
					c[keep++] = c[i];
			nc = keep;
			ARRAY_GROW(c, cc, nc + 1);
			ARRAY_GROW(sp, spc, nc + 1);
			c[nc] = (struct pelt_cand){ .at = a, .lo = -INFINITY, .hi = INFINITY };
			nc++;
			keep = 0;
		}
		for (size_t i = 0; i < nc; i++) {
			size_t x = c[i].at, age = t - x;
			double v;

			/* the older ones beat it on more mu* as T grows: look again
			 * at ages 2^k */
			c[keep] = c[i];
			if (age > m && !(age & (age - 1)) &&
			    !pelt_hole(s, F, last, lg, t, sigma, c, keep, sp))
				continue;
			keep++;
			v = F[x] + sums_rss(s, x, t) * inv + lg[t - x];
			if (v < best) {
				best = v;
				best_at = x;
			}
		}
		nc = keep;
		F[t] = best + beta;
		last[t] = best_at;
	}
	for (size_t t = last[n]; t > 0; t = last[t])
		k++;
	for (size_t t = last[n], i = k; t > 0; t = last[t])
		cp[--i] = t;
	free(F);
	free(lg);
	free(last);
	free(c);
	free(sp);
	return k;
}

/* ---- merging the small shifts ---- */

struct heap_ent {
	double r;		/* the change's relative shift */
	size_t i;		/* the change */
	unsigned ver;		/* its version when pushed: older ones are stale */
};

static int heap_less(const struct heap_ent *x, const struct heap_ent *y)
{
	return x->r < y->r || (x->r == y->r && x->i < y->i);
}

static void heap_push(struct heap_ent *h, size_t *nh, struct heap_ent x)
{
	size_t i = (*nh)++;

	for (; i > 0 && heap_less(&x, &h[(i - 1) / 2]); i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = x;
}

static struct heap_ent heap_pop(struct heap_ent *h, size_t *nh)
{
	struct heap_ent top = h[0], x = h[--*nh];
	size_t i = 0, n = *nh;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && heap_less(&h[c + 1], &h[c]))
			c++;
		if (!heap_less(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	if (n)
		h[i] = x;
	return top;
}

/* The changes cp[0..k) as a list, for merging. */
struct merge {
	const struct sums *ys;	/* the values as given */
	size_t n, *cp;
	size_t *prev, *next;	/* neighbours left; NONE at the ends */
	unsigned *ver;		/* bumped when its shift changes */
	char *gone;
};

/*
 * The relative shift of change i between its neighbours left,
 * |after - before| / max(|before|, |after|), 0 when both are 0.
 */
static double merge_shift(const struct merge *mg, size_t i)
{
	size_t a = mg->prev[i] == NONE ? 0 : mg->cp[mg->prev[i]];
	size_t b = mg->next[i] == NONE ? mg->n : mg->cp[mg->next[i]];
	double before = sums_mean(mg->ys, a, mg->cp[i]), after = sums_mean(mg->ys, mg->cp[i], b);
	double top = fmax(fabs(before), fabs(after));

	return top > 0 ? fabs(after - before) / top : 0;
}

static void merge_push(struct merge *mg, struct heap_ent *h, size_t *nh, size_t i)
{
	if (i != NONE)
		heap_push(h, nh, (struct heap_ent){ .r = merge_shift(mg, i), .i = i,
						    .ver = ++mg->ver[i] });
}

/*
 * Remove from cp[0..k) the changes whose relative shift (of the means of
 * the values as given) is below min_shift, the smallest first; each
 * removal changes only its two neighbours' levels.  The count left.
 */
static size_t merge_small(const struct sums *ys, size_t n, size_t *cp, size_t k,
			  double min_shift)
{
	struct merge mg = { .ys = ys, .n = n, .cp = cp };
	struct heap_ent *h = xmalloc(3 * k * sizeof(*h));
	size_t nh = 0, left = 0;

	mg.prev = xmalloc(k * sizeof(*mg.prev));
	mg.next = xmalloc(k * sizeof(*mg.next));
	mg.ver = xcalloc(k, sizeof(*mg.ver));
	mg.gone = xcalloc(k, 1);
	for (size_t i = 0; i < k; i++) {
		mg.prev[i] = i ? i - 1 : NONE;
		mg.next[i] = i + 1 < k ? i + 1 : NONE;
	}
	for (size_t i = 0; i < k; i++)
		merge_push(&mg, h, &nh, i);
	while (nh) {
		struct heap_ent x = heap_pop(h, &nh);
		size_t p, q;

		if (mg.gone[x.i] || x.ver != mg.ver[x.i])
			continue;
		if (!(x.r < min_shift))
			break;
		mg.gone[x.i] = 1;
		p = mg.prev[x.i];
		q = mg.next[x.i];
		if (p != NONE)
			mg.next[p] = q;
		if (q != NONE)
			mg.prev[q] = p;
		merge_push(&mg, h, &nh, p);
		merge_push(&mg, h, &nh, q);
	}
	for (size_t i = 0; i < k; i++)
		if (!mg.gone[i])
			cp[left++] = cp[i];
	free(mg.prev);
	free(mg.next);
	free(mg.ver);
	free(mg.gone);
	free(h);
	return left;
}

/* ---- a change's interval ---- */

/*
 * The profile likelihood interval of the change at tau between its
 * neighbours a and b: each split t of [a, b) costs RSS(a, t) + RSS(t, b);
 * [lo, hi] is the run of t around tau costing at most INTERVAL_CUT sigma^2
 * more than the cheapest.  tau is always inside, also when the log(length / n) terms
 * of the penalty put it off the cheapest split.  A change's position is
 * no regular parameter, though: for a clear change between long segments
 * the excess cost of the true position is that of the best point of a
 * two-sided Brownian motion with drift, 2 max(W(u) - |u| / 2), at most c
 * with probability (1 - e^(-c/2))^2: 0.73 for 3.84 (0.95 would take 7.35).
 */
static void interval_find(const struct sums *s, size_t a, size_t tau, size_t b, size_t m,
			  double sigma, size_t *lo, size_t *hi)
{
	double min = INFINITY, lim;

	for (size_t t = a + m; t <= b - m; t++)
		min = MIN(min, sums_rss(s, a, t) + sums_rss(s, t, b));
	lim = min + INTERVAL_CUT * sigma * sigma;
	*lo = *hi = tau;
	while (*lo > a + m && sums_rss(s, a, *lo - 1) + sums_rss(s, *lo - 1, b) <= lim)
		(*lo)--;
	while (*hi < b - m && sums_rss(s, a, *hi + 1) + sums_rss(s, *hi + 1, b) <= lim)
		(*hi)++;
}

/* ---- a change's confidence ---- */

/* splitmix64: a 64-bit state stepped by the golden ratio, then mixed. */
static uint64_t rng_next(uint64_t *state)
{
	uint64_t x = (*state += 0x9e3779b97f4a7c15ull);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Fisher-Yates; n < 2^32, the bias of the multiply-shift below 2^-19. */
static void perm_shuffle(double *v, size_t n, uint64_t *state)
{
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(((rng_next(state) >> 32) * (uint64_t)(i + 1)) >> 32);
		double t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

/*
 * How much the best single split of v[0..n) (both sides at least m)
 * lowers its RSS: max over t of S(0,t)^2/t + S(t,n)^2/(n-t) - S(0,n)^2/n,
 * S the sums.  inv[i] = 1 / i.
 */
static double perm_gain(const double *v, size_t n, size_t m, const double *inv)
{
	double tot = 0, sl = 0, best = 0;

	for (size_t i = 0; i < n; i++)
		tot += v[i];
	for (size_t t = 1; t <= n - m; t++) {
		double sr;

		sl += v[t - 1];
		if (t < m)
			continue;
		sr = tot - sl;
		best = MAX(best, sl * sl * inv[t] + sr * sr * inv[n - t]);
	}
	return best - tot * tot * inv[n];
}

/*
 * The share of ONSETS_PERMUTATIONS shuffles of the points next to the
 * change at tau (at most ONSETS_PERM_SPAN each side, within its
 * neighbours a and b) whose best split gains strictly less than the
 * points in their order: without a change, their order would not matter.
 * The generator is seeded from tau, so the answer depends on the change
 * alone.  buf: 2 ONSETS_PERM_SPAN doubles of scratch.
 */
static double perm_confidence(const double *z, size_t a, size_t tau, size_t b, size_t m,
			      double *buf, const double *inv)
{
	size_t lo = tau - a > ONSETS_PERM_SPAN ? tau - ONSETS_PERM_SPAN : a;
	size_t hi = b - tau > ONSETS_PERM_SPAN ? tau + ONSETS_PERM_SPAN : b, n = hi - lo;
	uint64_t state = PERM_SEED ^ ((uint64_t)tau * 0xd1342543de82ef95ull);
	double mean = 0, gain;
	unsigned less = 0;

	for (size_t i = 0; i < n; i++)
		mean += (z[lo + i] - mean) / (double)(i + 1);
	for (size_t i = 0; i < n; i++)
		buf[i] = z[lo + i] - mean;
	gain = perm_gain(buf, n, m, inv);
	for (unsigned p = 0; p < ONSETS_PERMUTATIONS; p++) {
		perm_shuffle(buf, n, &state);
		if (perm_gain(buf, n, m, inv) < gain)
			less++;
	}
	return (double)less / ONSETS_PERMUTATIONS;
}

/* ---- the whole ---- */

static int onsets_check(const double *y, size_t n, const struct onsets_opts *o,
			struct error *e)
{
	if (o->flags & ~ONSETS_COUNTS)
		return error_set(e, "onsets: unknown flags 0x%x", o->flags & ~ONSETS_COUNTS);
	if (!(o->min_shift >= 0))
		return error_set(e, "onsets: minimum shift %g is not a number >= 0", o->min_shift);
	for (size_t i = 0; i < n; i++) {
		if (isnan(y[i]))
			return error_set(e, "onsets: value %zu is NaN (a gap): the series must "
					 "have none", i);
		if (isinf(y[i]))
			return error_set(e, "onsets: value %zu is infinite", i);
		if ((o->flags & ONSETS_COUNTS) && y[i] < 0)
			return error_set(e, "onsets: value %zu is negative (%g), not a count",
					 i, y[i]);
	}
	return 0;
}

/*
 * Steps of a ramp as one change: two changes the same way (up then up, or
 * down then down) with fewer than ONSETS_RAMP segments' lengths (m) of
 * points between them are a
 * level that took a few points to settle (a machine ramping up, a buffer
 * filling), not two onsets: the smaller step is dropped, the larger keeps
 * the onset's time.  Returns the changes left in cp[0..).
 */
static size_t ramps_merge(const struct sums *ys, size_t n, size_t m, size_t *cp, size_t k)
{
	size_t i = 0;

	while (i + 1 < k) {
		size_t a = i ? cp[i - 1] : 0, c = i + 2 < k ? cp[i + 2] : n;
		double before = sums_mean(ys, a, cp[i]), mid = sums_mean(ys, cp[i], cp[i + 1]);
		double after = sums_mean(ys, cp[i + 1], c);

		if (cp[i + 1] - cp[i] < ONSETS_RAMP * m &&
		    ((mid > before && after > mid) || (mid < before && after < mid))) {
			size_t drop = fabs(mid - before) >= fabs(after - mid) ? i + 1 : i;

			memmove(&cp[drop], &cp[drop + 1], (k - drop - 1) * sizeof(*cp));
			k--;
			if (i)
				i--;	/* the merged change against its neighbours */
			continue;
		}
		i++;
	}
	return k;
}

int onsets_find(const double *y, size_t n, const struct onsets_opts *o, struct onset **out,
		size_t *nout, double *sigma, struct error *e)
{
	static const struct onsets_opts dflt;
	struct sums zs = { 0 }, ys = { 0 };
	struct onset *r;
	double *z, *buf, *inv, sig;
	size_t m, k, *cp;

	*out = NULL;
	*nout = 0;
	if (sigma)
		*sigma = 0;
	if (!o)
		o = &dflt;
	if (onsets_check(y, n, o, e) < 0)
		return -1;
	if (n < ONSETS_MIN_POINTS)
		return 0;
	m = o->min_seg ? o->min_seg : ONSETS_MIN_SEG;
	z = xmalloc(n * sizeof(*z));
	for (size_t i = 0; i < n; i++)
		z[i] = o->flags & ONSETS_COUNTS ? 2 * sqrt(y[i] + 3.0 / 8) : y[i];
	buf = xmalloc(MAX(n, 2 * ONSETS_PERM_SPAN) * sizeof(*buf));
	sig = sigma_estimate(z, n, buf);
	if (sig > 0)
		sig = MAX(sig, sigma_trimmed(z, n, buf));
	if (o->flags & ONSETS_COUNTS && sig > 0 && sig < 1 && counts_sparse(y, n, buf))
		sig = 1;
	if (sigma)
		*sigma = sig;
	if (!(sig > 0) || m > n / 2) {
		free(z);
		free(buf);
		return 0;
	}
	sums_init(&zs, z, n, 1);
	cp = xmalloc(n * sizeof(*cp));
	k = pelt_segment(&zs, n, m, sig, cp);
	sums_init(&ys, y, n, 0);
	if (k && o->min_shift > 0)
		k = merge_small(&ys, n, cp, k, o->min_shift);
	k = ramps_merge(&ys, n, m, cp, k);
	r = k ? xcalloc(k, sizeof(*r)) : NULL;
	inv = xmalloc((2 * ONSETS_PERM_SPAN + 1) * sizeof(*inv));
	inv[0] = 0;
	for (size_t i = 1; i <= 2 * ONSETS_PERM_SPAN; i++)
		inv[i] = 1.0 / (double)i;
	for (size_t i = 0; i < k; i++) {
		size_t a = i ? cp[i - 1] : 0, b = i + 1 < k ? cp[i + 1] : n;
		struct onset *c = &r[i];

		c->at = cp[i];
		c->before = sums_mean(&ys, a, c->at);
		c->after = sums_mean(&ys, c->at, b);
		if (c->before != 0)
			c->shift = (c->after - c->before) / fabs(c->before);
		else
			c->shift = c->after > 0 ? INFINITY : c->after < 0 ? -INFINITY : 0;
		interval_find(&zs, a, c->at, b, m, sig, &c->lo, &c->hi);
		c->confidence = perm_confidence(z, a, c->at, b, m, buf, inv);
	}
	sums_free(&zs);
	sums_free(&ys);
	free(z);
	free(buf);
	free(inv);
	free(cp);
	*out = r;
	*nout = k;
	return 0;
}
