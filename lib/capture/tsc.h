/*
 * tsc.h - converting between the time stamp counter and CLOCK_MONOTONIC ns.
 *
 * A conversion is a reference pair (ref_tsc, ref_ns) taken together, plus
 * the counter's rate as the kernel states it in the perf mmap page
 * (ns = cyc * mult >> shift, the cyc2ns scale) or, where the kernel does not
 * publish it (cap_user_time_zero == 0), as measured by calibration.
 */
#ifndef STROBE_TSC_H
#define STROBE_TSC_H

#include <stdint.h>

struct tsc_conv {
	uint32_t mult;
	uint16_t shift;
	uint64_t ref_tsc;
	uint64_t ref_ns;
	const char *source;	/* "perf-mmap", "calibrated", "none" */
};

/* ns for a TSC value, and the TSC for a CLOCK_MONOTONIC time. */
uint64_t tsc_to_ns(const struct tsc_conv *c, uint64_t tsc);
uint64_t tsc_from_ns(const struct tsc_conv *c, uint64_t ns);

/*
 * Fill *c from a perf mmap page's time_mult/time_shift (valid when the
 * page says cap_user_time_zero) and a reference pair.
 */
void tsc_conv_init(struct tsc_conv *c, uint32_t mult, uint16_t shift,
		   uint64_t ref_tsc, uint64_t ref_ns, const char *source);

/*
 * Derive mult/shift from two reference pairs (tsc0, ns0) and (tsc1, ns1)
 * taken apart in time. Returns -1 if the pairs cannot define a rate.
 */
int tsc_conv_calibrate(struct tsc_conv *c, uint64_t tsc0, uint64_t ns0,
		       uint64_t tsc1, uint64_t ns1);

/*
 * Take a reference pair now: CLOCK_MONOTONIC and the TSC read as close
 * together as possible (best of a few bracketed reads).
 */
void tsc_reference(uint64_t *tsc, uint64_t *ns);

#endif
