/*
 * probe_expect.h - what 'strobe plot --expect' draws from the saved probe:
 * a one-line summary of the levels, and the onsets the probe predicts on a
 * session whose markers carry working-set sizes.
 *
 * Marker conventions (USDT probes, first argument):
 *   PROVIDER:size   arg0 = pages walked (tests/workloads/tlbwalk): the onset
 *                   of dTLB misses is where the walks pass the dTLB's reach
 *                   (and of page walks where they pass the L2 TLB's);
 *   PROVIDER:bytes  arg0 = working-set bytes: the onset of each cache
 *                   level's misses is where the working sets pass its size.
 * A marker fires when its working set is done, so the onset is drawn at the
 * last marker within the reach, just before the first marker past it (where
 * the first walk beyond the reach begins).
 */
#ifndef STROBE_PROBE_EXPECT_H
#define STROBE_PROBE_EXPECT_H

#include <stddef.h>
#include <stdint.h>
#include "probe.h"

struct probe_marker {
	int64_t time_ns;
	const char *name;	/* "tlbwalk:size" */
	const char *args;	/* "64,500,123456" */
};

struct probe_expect_line {
	int64_t time_ns;
	char label[96];		/* "dTLB reach 64 pages", "L2 TLB reach 1280 pages" */
};

/* The onsets among markers m[0..nm) (in time order); fills at most max and
 * returns how many there are. */
size_t probe_expect_onsets(const struct probe_result *r, const struct probe_marker *m,
			   size_t nm, struct probe_expect_line *out, size_t max);

/* "probe: L1d 32 KiB 1.23 ns, L2 320 KiB 3.72 ns, ..., dTLB reach 64 pages,
 * L2 TLB 1280 pages" */
void probe_expect_summary(const struct probe_result *r, char *buf, size_t len);

#endif
