/*
 * split603010 - a CPU-bound workload with a known profile.
 *
 * Usage: split603010 [--unlink-self | --replace-self FILE] [SECONDS]
 *        (SECONDS default 3)
 *
 * --unlink-self: first thing in main, unlink the program's own file (the
 * path /proc/self/exe names); --replace-self FILE: first thing, rename
 * FILE over it (so the path then holds another file).  Either way the
 * running program is the original; a profiler must read it through the
 * mapping, not the path.
 *
 * work60, work30 and work10 are made from one macro, so their machine code
 * is identical (same bytes, each aligned to a 64-byte boundary): a
 * dependent xorshift64 chain that -O1 cannot fold or drop.  Each round of
 * the main loop calls work60(6*u), work30(3*u), work10(1*u) and rounds
 * repeat until SECONDS of CLOCK_MONOTONIC have passed (checked once per
 * round).  u is U (about 1 ms a round at ~1.4 ns per iteration) give or
 * take up to 50%, drawn afresh each round: every round is still exactly
 * 6:3:1, but round lengths vary so a sampling timer can never lock onto
 * the round period (aliasing would skew the split).
 *
 * Known answer: of the samples in this process, work60 : work30 : work10
 * = 60 : 30 : 10 (within sampling noise; main and the clock read once per
 * round are well under 0.1%).
 *
 * split306010 is this file built with -DSPLIT_60=3 -DSPLIT_30=6: the same
 * functions (same names, same code) called 3u, 6u and 1u times a round,
 * so work60 : work30 : work10 = 30 : 60 : 10 (a "changed" program for
 * 'strobe diff').  Prints nothing, exits 0 (1 after one line
 * on stderr when the arguments are bad or the unlink/rename fails).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "workload.h"

/* Units of work per round of each function (split306010 swaps the first two). */
#ifndef SPLIT_60
#define SPLIT_60 6
#endif
#ifndef SPLIT_30
#define SPLIT_30 3
#endif
#ifndef SPLIT_10
#define SPLIT_10 1
#endif

/* Iterations per unit; 10*U iterations take ~1 ms at ~1.4 ns each. */
#define U 70000ULL

/* noipa also keeps GCC from merging the identical functions (ICF). */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define WORK_ATTR __attribute__((noinline, noipa, aligned(64)))
#else
#define WORK_ATTR __attribute__((noinline, aligned(64)))
#endif

#define DEFINE_WORK(name)						\
	WORK_ATTR uint64_t name(uint64_t n, uint64_t x)			\
	{								\
		uint64_t i;						\
									\
		for (i = 0; i < n; i++) {				\
			x ^= x << 13;					\
			x ^= x >> 7;					\
			x ^= x << 17;					\
			__asm__ __volatile__("" : "+r"(x));		\
		}							\
		return x;						\
	}

uint64_t work60(uint64_t n, uint64_t x);
uint64_t work30(uint64_t n, uint64_t x);
uint64_t work10(uint64_t n, uint64_t x);

DEFINE_WORK(work60)
DEFINE_WORK(work30)
DEFINE_WORK(work10)

static volatile uint64_t sink;


int main(int argc, char **argv)
{
	double seconds = 3, end;
	uint64_t x = 0x9e3779b97f4a7c15ULL, rng = 0x2545f4914f6cdd1dULL, u;

	if (argc > 1 && (!strcmp(argv[1], "--unlink-self") || !strcmp(argv[1], "--replace-self"))) {
		int replace = !strcmp(argv[1], "--replace-self");
		char self[PATH_MAX];
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (replace && argc < 3) {
			fprintf(stderr, "split603010: --replace-self needs a FILE\n");
			return 1;
		}
		if (len < 0 || (size_t)len >= sizeof(self) - 1) {
			fprintf(stderr, "split603010: readlink /proc/self/exe failed\n");
			return 1;
		}
		self[len] = 0;
		if (replace ? rename(argv[2], self) < 0 : unlink(self) < 0) {
			fprintf(stderr, "split603010: %s %s: %s\n", replace ? "rename over" : "unlink",
				self, strerror(errno));
			return 1;
		}
		argv[replace + 1] = argv[0];
		argc -= replace + 1;
		argv += replace + 1;
	}
	if (wl_seconds_arg(argc, argv, "split603010", &seconds) < 0)
		return 1;
	end = wl_now() + seconds;
	do {
		u = wl_round_unit(&rng, U);
		x = work60(SPLIT_60 * u, x);
		x = work30(SPLIT_30 * u, x);
		x = work10(SPLIT_10 * u, x);
	} while (wl_now() < end);
	sink = x;
	return 0;
}
