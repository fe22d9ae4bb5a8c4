/*
 * libhot.so - a shared library with one hot function, loaded late by
 * dlopener (see dlopener.c).
 *
 * void hot_in_lib(double seconds): burns CPU for `seconds` of
 * CLOCK_MONOTONIC in its own loop (the spin is in hot_in_lib itself, not
 * in a helper, so samples land on this symbol).
 *
 * Known answer: while it runs, nearly all samples of the process are in
 * hot_in_lib in libhot.so (the clock is read only every ~30 us).
 */
#include <stdint.h>
#include <time.h>

void hot_in_lib(double seconds);

static volatile uint64_t sink;

__attribute__((noinline)) void hot_in_lib(double seconds)
{
	struct timespec ts;
	double end;
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec + ts.tv_nsec / 1e9 + seconds;
	do {
		for (i = 0; i < 20000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			__asm__ __volatile__("" : "+r"(x));
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < end);
	sink = x;
}
