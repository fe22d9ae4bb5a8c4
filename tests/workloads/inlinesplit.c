/*
 * inlinesplit - a CPU-bound workload whose hot function is inlined.
 *
 * Usage: inlinesplit [SECONDS]   (default 3)
 *
 * hot_mix, a dependent xorshift64 chain, is static inline and
 * always_inline: built -O2 -g it has no code of its own, only the copies
 * inlined into its two callers, outer70 and outer30 (noinline, noipa: each
 * a real function).  Each round of the main loop calls outer70(7*u) and
 * outer30(3*u), and rounds repeat until SECONDS of CLOCK_MONOTONIC have
 * passed; u is U give or take up to 50%, drawn afresh each round, so a
 * sampling timer cannot lock onto the round period.
 *
 * Known answer: of the samples in hot_mix's inlined code, the copy in
 * outer70 has 70% and the one in outer30 30% (within sampling noise).  A
 * report without inline chains charges them to outer70 and outer30.
 * Prints nothing, exits 0 (1 after one line on stderr on bad arguments).
 */
#include <stdint.h>
#include "workload.h"

/* Iterations per unit; 10*U iterations take ~1 ms at ~1.4 ns each. */
#define U 70000ULL

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define OUTER_ATTR __attribute__((noinline, noipa))
#else
#define OUTER_ATTR __attribute__((noinline))
#endif

static inline __attribute__((always_inline)) uint64_t hot_mix(uint64_t n, uint64_t x)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		__asm__ __volatile__("" : "+r"(x));
	}
	return x;
}

uint64_t outer70(uint64_t n, uint64_t x);
uint64_t outer30(uint64_t n, uint64_t x);

OUTER_ATTR uint64_t outer70(uint64_t n, uint64_t x)
{
	return hot_mix(n, x) + 1;
}

OUTER_ATTR uint64_t outer30(uint64_t n, uint64_t x)
{
	return hot_mix(n, x ^ 0x5555) + 3;
}

static volatile uint64_t sink;

int main(int argc, char **argv)
{
	double seconds = 3, end;
	uint64_t x = 0x9e3779b97f4a7c15ULL, rng = 0x2545f4914f6cdd1dULL, u;

	if (wl_seconds_arg(argc, argv, "inlinesplit", &seconds) < 0)
		return 1;
	end = wl_now() + seconds;
	do {
		u = wl_round_unit(&rng, U);
		x = outer70(7 * u, x);
		x = outer30(3 * u, x);
	} while (wl_now() < end);
	sink = x;
	return 0;
}
