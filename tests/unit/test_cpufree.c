/*
 * test_cpufree.c - the free-CPU reading ingest waits on (lib/capture/
 * cpufree.c): /proc/stat's first line parsed to idle + iowait, bad lines
 * refused, the free CPUs of an interval computed from ticks and the own
 * thread's time, and a live reading that counts the caller's own spinning
 * as free while every other CPU spins, and refuses a second reading too soon.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cpufree.h"

static int parse(const char *text, uint64_t *idle)
{
	return cpufree_parse(text, strlen(text), idle);
}

static void test_parse(void **state)
{
	uint64_t idle = 0;

	(void)state;
	assert_int_equal(parse("cpu  4705 150 1120 1640520 245 0 36 0 0 0\n"
			       "cpu0 2000 75 560 820000 120 0 18 0 0 0\n", &idle), 0);
	assert_int_equal(idle, 1640520 + 245);
	/* the fifth field ends the line (old kernels) */
	assert_int_equal(parse("cpu 1 2 3 40 5\n", &idle), 0);
	assert_int_equal(idle, 45);
	/* large counters */
	assert_int_equal(parse("cpu 1 2 3 18446744073709551000 5\n", &idle), 0);
	assert_int_equal(idle, 18446744073709551005ULL);
}

static void test_parse_bad(void **state)
{
	uint64_t idle = 7;

	(void)state;
	assert_int_equal(parse("", &idle), -1);
	assert_int_equal(parse("cpu0 1 2 3 4 5\n", &idle), -1);	/* not the sum line */
	assert_int_equal(parse("intr 1 2 3 4 5\n", &idle), -1);
	assert_int_equal(parse("cpu 1 2 3 4\n", &idle), -1);		/* too few */
	assert_int_equal(parse("cpu 1 2 3 4 5", &idle), -1);		/* cut short */
	assert_int_equal(parse("cpu 1 2 x 4 5\n", &idle), -1);
	assert_int_equal(parse("cpu 1 2 3 -4 5\n", &idle), -1);
	assert_int_equal(parse("cpu 1 2 3 99999999999999999999 5\n", &idle), -1);
	assert_int_equal(idle, 7);	/* untouched */
}

static void test_of(void **state)
{
	(void)state;
	/* 100 ms at USER_HZ 100: 10 ticks = one CPU idle */
	assert_true(cpufree_of(10, 100, 0, 100000000) > 0.999);
	assert_true(cpufree_of(10, 100, 0, 100000000) < 1.001);
	/* 2 ticks idle and 30 ms of own CPU in 100 ms: 0.5 */
	assert_true(cpufree_of(2, 100, 30000000, 100000000) > 0.499);
	assert_true(cpufree_of(2, 100, 30000000, 100000000) < 0.501);
	assert_true(cpufree_of(0, 100, 0, 100000000) == 0.0);
	assert_true(cpufree_of(5, 100, 0, 0) == 0.0);		/* no interval */
	assert_true(cpufree_of(5, 0, 0, 100000000) == 0.0);	/* no unit */
}

static uint64_t clock_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int spinning;	/* atomic: the spinner threads run while set */

static void *spin(void *arg)
{
	(void)arg;
	while (__atomic_load_n(&spinning, __ATOMIC_RELAXED))
		;
	return NULL;
}

/* Spinning in the reader's own thread is time it would give back: the
 * reading counts it as free, however busy the machine is.  The other CPUs
 * spin too (a thread each), so that idle time alone cannot pass: a
 * reading without the own term fails.  And no reading says more CPUs are
 * free than the machine has. */
static void test_live(void **state)
{
	struct error e = { 0 };
	struct cpufree c;
	volatile uint64_t x = 0;
	double free = -1, wall;
	uint64_t w0, t0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t th[64];
	long nth = ncpu - 1 < 64 ? ncpu - 1 : 64;

	(void)state;
	__atomic_store_n(&spinning, 1, __ATOMIC_RELAXED);
	for (long i = 0; i < nth; i++)
		assert_int_equal(pthread_create(&th[i], NULL, spin, NULL), 0);
	w0 = clock_of(CLOCK_MONOTONIC);
	assert_int_equal(cpufree_open(&c, &e), 0);
	assert_int_equal(cpufree_read(&c, 3600ULL * 1000000000ULL, &free), 1);
	assert_true(free == -1);
	t0 = clock_of(CLOCK_THREAD_CPUTIME_ID);
	while (clock_of(CLOCK_THREAD_CPUTIME_ID) - t0 < 200000000)	/* 200 ms of own CPU */
		x++;
	assert_int_equal(cpufree_read(&c, 0, &free), 0);
	wall = (clock_of(CLOCK_MONOTONIC) - w0) / 1e9;
	__atomic_store_n(&spinning, 0, __ATOMIC_RELAXED);
	for (long i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	/* at least the own 0.2 s over the reading's interval (shorter than
	 * wall), however busy the machine; at most every CPU, plus a tick of
	 * rounding per CPU over the interval */
	if (!(free >= 0.2 / wall * 0.999))
		fail_msg("%.3f CPUs free over %.3f s, in which this thread ran 0.2 s", free, wall);
	assert_true(free <= ncpu * (1 + 1.0 / c.hz / wall) + 1e-9);
	cpufree_close(&c);
	assert_int_equal(c.fd, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_of),
		cmocka_unit_test(test_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
