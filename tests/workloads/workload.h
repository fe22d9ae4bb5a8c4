/*
 * workload.h - what the bundled workloads share: the clock, the SECONDS
 * argument, and the spin loop that burns CPU inside whichever function
 * expands it (so samples land on that function's own symbol).
 */
#ifndef STROBE_WORKLOAD_H
#define STROBE_WORKLOAD_H

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double wl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The optional SECONDS argument of "PROG [SECONDS]": 0, or -1 after one
 * line on stderr. */
/* A round's unit of work: unit, give or take up to 50%, drawn afresh from
 * the xorshift64 state *rng (so a sampling timer cannot lock onto the
 * round's period). */
static inline uint64_t wl_round_unit(uint64_t *rng, uint64_t unit)
{
	*rng ^= *rng << 13;
	*rng ^= *rng >> 7;
	*rng ^= *rng << 17;
	return unit / 2 + *rng % unit;
}

static inline int wl_seconds_arg(int argc, char **argv, const char *prog, double *seconds)
{
	char *e;

	if (argc > 2) {
		fprintf(stderr, "usage: %s [SECONDS]\n", prog);
		return -1;
	}
	if (argc < 2)
		return 0;
	errno = 0;
	*seconds = strtod(argv[1], &e);
	if (errno || e == argv[1] || *e || !isfinite(*seconds) || *seconds <= 0 ||
	    *seconds > 1e6) {
		fprintf(stderr, "%s: bad SECONDS '%s'\n", prog, argv[1]);
		return -1;
	}
	return 0;
}

/* Burn CPU until `seconds` of CLOCK_MONOTONIC have passed (the clock is
 * read every ~30 us); the xorshift result goes to the volatile `sink`. */
#define WL_SPIN(seconds, sink)						\
	do {								\
		double wl_end_ = wl_now() + (seconds);			\
		uint64_t wl_x_ = 0x9e3779b97f4a7c15ULL;			\
		do {							\
			for (int wl_i_ = 0; wl_i_ < 20000; wl_i_++) {	\
				wl_x_ ^= wl_x_ << 13;			\
				wl_x_ ^= wl_x_ >> 7;			\
				wl_x_ ^= wl_x_ << 17;			\
				__asm__ __volatile__("" : "+r"(wl_x_));	\
			}						\
		} while (wl_now() < wl_end_);				\
		(sink) = wl_x_;						\
	} while (0)

#endif
