/*
 * stripped - a hot function in a binary without .symtab or debug info.
 *
 * Usage: stripped [SECONDS]      (default 2)
 *
 * Built with -rdynamic and then strip --strip-all: .symtab and DWARF are
 * gone, but stripped_hot (external, noinline) is still in .dynsym.  It
 * burns CPU for SECONDS of CLOCK_MONOTONIC in its own loop.
 *
 * Known answer: nearly all samples are in stripped_hot, which a profiler
 * can only name from .dynsym.  Exits 0.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void stripped_hot(double seconds);

volatile uint64_t stripped_sink;

__attribute__((noinline)) void stripped_hot(double seconds)
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
	stripped_sink = x;
}

int main(int argc, char **argv)
{
	double seconds = 2;

	if (argc > 2) {
		fprintf(stderr, "usage: stripped [SECONDS]\n");
		return 1;
	}
	if (argc == 2) {
		char *e;

		errno = 0;
		seconds = strtod(argv[1], &e);
		if (errno || e == argv[1] || *e || !isfinite(seconds) ||
		    seconds <= 0 || seconds > 1e6) {
			fprintf(stderr, "stripped: bad SECONDS '%s'\n", argv[1]);
			return 1;
		}
	}
	stripped_hot(seconds);
	return 0;
}
