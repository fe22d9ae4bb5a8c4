/*
 * test_timeline.c - the pure parts of lib/timeline.c: the default bucket
 * (about 500 buckets or fewer, 1/2/5 x 10^k ms, at least 1 ms), bucket
 * counts, and --by names.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "timeline.h"

#define MS 1000000LL
#define S 1000000000LL

static void test_default_bucket(void **state)
{
	assert_int_equal(timeline_default_bucket(1 * S), 2 * MS);
	assert_int_equal(timeline_default_bucket(690 * MS), 2 * MS);
	assert_int_equal(timeline_default_bucket(2 * S), 5 * MS);	/* 4 ms -> 5 */
	assert_int_equal(timeline_default_bucket(10 * S), 20 * MS);
	assert_int_equal(timeline_default_bucket(60 * S), 200 * MS);	/* 120 ms -> 200 */
	assert_int_equal(timeline_default_bucket(3600 * S), 10 * S);	/* 7.2 s -> 10 s */
	/* never under 1 ms */
	assert_int_equal(timeline_default_bucket(100 * MS), 1 * MS);
	assert_int_equal(timeline_default_bucket(1), 1 * MS);
	assert_int_equal(timeline_default_bucket(0), 1 * MS);
}

static void test_default_bucket_count(void **state)
{
	/* from 0.5 s up, 200 to 500 buckets; always a 1/2/5 x 10^k ms */
	for (int64_t r = S / 2; r < 100000 * S; r = r * 11 / 10 + 12345) {
		int64_t b = timeline_default_bucket(r), m = b / MS;
		size_t n = timeline_bucket_count(r, b);

		assert_true(n >= 200 && n <= 500);
		assert_int_equal(b % MS, 0);
		while (m % 10 == 0)
			m /= 10;
		assert_true(m == 1 || m == 2 || m == 5);
	}
}

static void test_bucket_count(void **state)
{
	assert_int_equal(timeline_bucket_count(100 * MS, 10 * MS), 10);
	assert_int_equal(timeline_bucket_count(101 * MS, 10 * MS), 11);
	assert_int_equal(timeline_bucket_count(1, 10 * MS), 1);
	assert_int_equal(timeline_bucket_count(0, 10 * MS), 1);
}

static void test_parse_by(void **state)
{
	enum timeline_by by = TL_BY_NONE;

	assert_int_equal(timeline_parse_by("cpu", &by), 0);
	assert_int_equal(by, TL_BY_CPU);
	assert_int_equal(timeline_parse_by("pid", &by), 0);
	assert_int_equal(by, TL_BY_PID);
	assert_int_equal(timeline_parse_by("binary", &by), 0);
	assert_int_equal(by, TL_BY_BINARY);
	assert_int_equal(timeline_parse_by("symbol", &by), 0);
	assert_int_equal(by, TL_BY_SYMBOL);
	assert_int_equal(timeline_parse_by("line", &by), -1);
	assert_int_equal(timeline_parse_by("", &by), -1);
	assert_string_equal(timeline_by_name(TL_BY_SYMBOL), "symbol");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_bucket),
		cmocka_unit_test(test_default_bucket_count),
		cmocka_unit_test(test_bucket_count),
		cmocka_unit_test(test_parse_by),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
