/*
 * cpufree.h - how much CPU time nothing else wanted: the machine's idle
 * time (/proc/stat) plus the caller's own thread's CPU time, over the
 * interval since the last reading, in CPUs (0.0 .. number of CPUs).
 *
 * Ingest uses it to stay off CPUs the workload keeps busy: time a
 * nice-19 thread takes there still comes out of the workload, and on a
 * machine where every sample costs tens of microseconds (a VM at tens of
 * kHz) it lengthens the run that is being measured.  The caller's own CPU
 * counts as free because it is what the caller would give back.
 *
 * The reader keeps /proc/stat open (one pread per reading); no global
 * state, one reader per thread.
 */
#ifndef STROBE_CPUFREE_H
#define STROBE_CPUFREE_H

#include <stddef.h>
#include <stdint.h>
#include "util.h"

struct cpufree {
	int fd;			/* /proc/stat */
	long hz;		/* its unit: USER_HZ ticks per second */
	uint64_t idle;		/* idle + iowait ticks of all CPUs, at last reading */
	uint64_t own_ns;	/* the thread's CPU time, at last reading */
	uint64_t at_ns;		/* CLOCK_MONOTONIC of last reading; 0: none yet */
};

/* The idle and iowait ticks of all CPUs from /proc/stat's text (its
 * first, "cpu ", line): 0, or -1 if that line is missing or malformed. */
int cpufree_parse(const char *buf, size_t len, uint64_t *idle);

/* The free CPUs over an interval: idle ticks (at hz a second) plus own
 * CPU nanoseconds, over wall nanoseconds; 0 for an empty interval. */
double cpufree_of(uint64_t idle_ticks, long hz, uint64_t own_ns, uint64_t wall_ns);

/* Open the reader and take a first reading (errors name the file). */
int cpufree_open(struct cpufree *c, struct error *e);

/* A reading now: *free the free CPUs since the last one, which must be
 * at least min_ns ago (else 1, *free unchanged, no new reading). 0, or -1
 * when /proc/stat cannot be read. */
int cpufree_read(struct cpufree *c, uint64_t min_ns, double *free);

void cpufree_close(struct cpufree *c);

#endif
