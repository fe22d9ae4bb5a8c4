/*
 * test_tsc.c - TSC <-> CLOCK_MONOTONIC conversion: the kernel's cyc2ns
 * formula, its inverse, 128-bit intermediates over long spans, calibration
 * from two reference pairs, and agreement with the live clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <time.h>
#include "tsc.h"
#include "util.h"

/* The kernel's own formula, as in perf_event_mmap_page's comment. */
static uint64_t kernel_cyc2ns(uint64_t cyc, uint32_t mult, uint16_t shift)
{
	uint64_t quot = cyc >> shift, rem = cyc & (((uint64_t)1 << shift) - 1);

	return quot * mult + ((rem * mult) >> shift);
}

static void test_matches_kernel_formula(void **state)
{
	struct tsc_conv c;
	/* 2.9 GHz TSC as the kernel publishes it: mult/2^shift = 1/2.9 ns */
	uint32_t mult = 740565841;
	uint16_t shift = 31;

	tsc_conv_init(&c, mult, shift, 0, 0, "test");
	for (uint64_t cyc = 1; cyc < (1ULL << 50); cyc = cyc * 3 + 7) {
		uint64_t a = tsc_to_ns(&c, cyc), b = kernel_cyc2ns(cyc, mult, shift);

		assert_true(a + 1 >= b && a <= b + 1);
	}
}

static void test_inverse(void **state)
{
	struct tsc_conv c;

	tsc_conv_init(&c, 740565841, 31, 1000000000000ULL, 5000000000ULL, "test");
	for (uint64_t ns = 1; ns < 86400ULL * 1000000000ULL; ns = ns * 5 + 3) {
		uint64_t t = 5000000000ULL + ns;
		uint64_t back = tsc_to_ns(&c, tsc_from_ns(&c, t));

		/* one TSC tick is 0.34 ns: the round trip is within 1 ns */
		assert_true(back <= t && t - back <= 1);
	}
	/* before the reference point too */
	assert_true(tsc_from_ns(&c, 4000000000ULL) < 1000000000000ULL);
	assert_true(tsc_to_ns(&c, tsc_from_ns(&c, 4000000000ULL)) + 1 >= 4000000000ULL);
}

static void test_no_overflow_over_a_year(void **state)
{
	struct tsc_conv c;
	uint64_t year_cyc = 365ULL * 86400 * 3000000000ULL;	/* 3 GHz */

	tsc_conv_init(&c, 715827882, 31, 0, 0, "test");	/* 1/3 ns per cycle */
	uint64_t ns = tsc_to_ns(&c, year_cyc);
	double want = 365.0 * 86400 * 1e9;

	assert_true(ns > want * 0.9999 && ns < want * 1.0001);
}

static void test_calibrate(void **state)
{
	struct tsc_conv c;
	/* 62.5 MHz (arm64 generic timer): 16 ns per tick */
	assert_int_equal(tsc_conv_calibrate(&c, 1000, 2000, 1000 + 62500000, 2000 + 1000000000ULL), 0);
	assert_true(tsc_to_ns(&c, 1000 + 625) - 2000 == 10000);
	/* 3 GHz */
	assert_int_equal(tsc_conv_calibrate(&c, 0, 0, 3000000000ULL, 1000000000ULL), 0);
	uint64_t ns = tsc_to_ns(&c, 3000000000ULL * 60);
	assert_true(ns > 59999990000ULL && ns < 60000010000ULL);
	/* degenerate pairs are refused */
	assert_int_equal(tsc_conv_calibrate(&c, 10, 10, 10, 20), -1);
	assert_int_equal(tsc_conv_calibrate(&c, 10, 20, 30, 20), -1);
}

/* Against the machine: a calibrated conversion predicts CLOCK_MONOTONIC. */
static void test_live_clock(void **state)
{
	struct tsc_conv c;
	uint64_t t0, n0, t1, n1, t2, n2;
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	tsc_reference(&t0, &n0);
	if (!t0)
		skip();		/* no user-readable counter on this architecture */
	nanosleep(&ts, NULL);
	tsc_reference(&t1, &n1);
	assert_int_equal(tsc_conv_calibrate(&c, t0, n0, t1, n1), 0);
	nanosleep(&ts, NULL);
	tsc_reference(&t2, &n2);
	/* within 0.1% of the elapsed time */
	int64_t err = (int64_t)tsc_to_ns(&c, t2) - (int64_t)n2;
	assert_true(llabs(err) <= (int64_t)(n2 - n0) / 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matches_kernel_formula),
		cmocka_unit_test(test_inverse),
		cmocka_unit_test(test_no_overflow_over_a_year),
		cmocka_unit_test(test_calibrate),
		cmocka_unit_test(test_live_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
