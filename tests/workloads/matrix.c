/*
 * matrix - document 000's experiment: sum a DIM x DIM matrix of ints in row
 * order or in column order.
 *
 * Usage: matrix row|col [DIM] [PASSES]	(DIM default 2048, PASSES default 20)
 *
 * C stores a row's elements next to each other.  In row order (m[i][k],
 * k innermost) consecutive accesses walk along a cache line: one miss per
 * line (64 / sizeof(int) = 16 elements) and one page per 1024 elements.  In
 * column order (m[k][i]) consecutive accesses are DIM * 4 bytes apart: each
 * touches another line and, for DIM >= 1024, another page, so once the
 * matrix is larger than the cache (2048^2 * 4 = 16 MiB) nearly every access
 * misses the cache and the L1 data TLB.  Document 000 measured 30 times
 * more L2 read misses in column order on a Pentium 4.
 *
 * Known answer: both orders compute the same sum (printed, with the time
 * per element); the first-touch page faults are the same (the matrix's
 * DIM * DIM * 4 / 4096 pages, touched once before the timed passes); only
 * the misses differ.  See doc/WALKTHROUGH.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int usage(void)
{
	fprintf(stderr, "usage: matrix row|col [DIM] [PASSES]  (DIM 16..16384, PASSES >= 1)\n");
	return 2;
}

static long arg(const char *s, long min, long max)
{
	char *end;
	long v = strtol(s, &end, 10);

	return end == s || *end || v < min || v > max ? -1 : v;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) uint64_t sum_rows(const int *m, long dim)
{
	uint64_t s = 0;

	for (long i = 0; i < dim; i++)
		for (long k = 0; k < dim; k++)
			s += (unsigned)m[i * dim + k];
	return s;
}

static __attribute__((noinline)) uint64_t sum_cols(const int *m, long dim)
{
	uint64_t s = 0;

	for (long i = 0; i < dim; i++)
		for (long k = 0; k < dim; k++)
			s += (unsigned)m[k * dim + i];
	return s;
}

int main(int argc, char **argv)
{
	long dim = 2048, passes = 20;
	int cols;
	uint64_t s = 0;
	int *m;
	double t0, t1;

	if (argc < 2 || argc > 4 || (strcmp(argv[1], "row") && strcmp(argv[1], "col")))
		return usage();
	cols = !strcmp(argv[1], "col");
	if (argc > 2 && (dim = arg(argv[2], 16, 16384)) < 0)
		return usage();
	if (argc > 3 && (passes = arg(argv[3], 1, 1000000)) < 0)
		return usage();
	m = malloc((size_t)dim * dim * sizeof(int));
	if (!m) {
		fprintf(stderr, "matrix: no memory for %ldx%ld ints\n", dim, dim);
		return 1;
	}
	for (long i = 0; i < dim * dim; i++)	/* every page touched once, in order */
		m[i] = (int)(i % 7);
	t0 = now_s();
	for (long p = 0; p < passes; p++)
		s += cols ? sum_cols(m, dim) : sum_rows(m, dim);
	t1 = now_s();
	printf("%s order: sum %llu, %.2f ns per element\n", cols ? "column" : "row",
	       (unsigned long long)s, (t1 - t0) * 1e9 / ((double)dim * dim * passes));
	free(m);
	return 0;
}
