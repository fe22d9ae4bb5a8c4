/*
 * test_prune.c - the pure parts of 'strobe prune' (prune.h): ages, the
 * drop boundary (against a brute-force fixpoint on random sessions),
 * merging a session's spans, partition ids and the SQL.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "prune.h"
#include "push.h"

static void test_parse_age(void **state)
{
	int d = -1;

	assert_int_equal(prune_parse_age("30d", &d), 0);
	assert_int_equal(d, 30);
	assert_int_equal(prune_parse_age("4w", &d), 0);
	assert_int_equal(d, 28);
	assert_int_equal(prune_parse_age("36500d", &d), 0);
	assert_int_equal(d, 36500);
	d = 7;
	static const char *bad[] = { "", "d", "0d", "-1d", "30", "30h", "3.5d", " 3d", "3d ",
				     "36501d", "5215w", "99999999999999999999d", "+3d", "1e3d",
				     "30dd", "0x10d" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (prune_parse_age(bad[i], &d) == 0)
			fail_msg("'%s' was taken as %d days", bad[i], d);
	}
	assert_int_equal(d, 7);
}

static struct prune_span sp(int64_t first, int64_t last)
{
	struct prune_span s = { NULL, 0, first, last };

	return s;
}

static void test_boundary(void **state)
{
	size_t why;

	/* no session: the cutoff */
	assert_int_equal(prune_boundary(NULL, 0, 100, &why), 100);
	assert_int_equal(why, 0);
	{	/* sessions wholly before or after: the cutoff */
		struct prune_span s[] = { sp(90, 95), sp(100, 101), sp(99, 99), sp(120, 130) };

		assert_int_equal(prune_boundary(s, 4, 100, &why), 100);
		assert_int_equal(why, 4);
	}
	{	/* one over the cutoff: its first day */
		struct prune_span s[] = { sp(90, 95), sp(98, 100), sp(101, 101) };

		assert_int_equal(prune_boundary(s, 3, 100, &why), 98);
		assert_int_equal(s[why].first, 98);
	}
	{	/* a chain: 98..100 moves it to 98, 97..98 (not kept by the
		 * cutoff) to 97, 95..97 to 95; 90..94 goes */
		struct prune_span s[] = { sp(90, 94), sp(97, 98), sp(95, 97), sp(98, 100) };

		assert_int_equal(prune_boundary(s, 4, 100, &why), 95);
		assert_int_equal(s[why].first, 95);
	}
	{	/* ending the day before the boundary: dropped whole */
		struct prune_span s[] = { sp(98, 100), sp(96, 97) };

		assert_int_equal(prune_boundary(s, 2, 100, &why), 98);
	}
}

/* the definition: move B down while a session spans it */
static int64_t brute(const struct prune_span *s, size_t n, int64_t b)
{
	for (int moved = 1; moved;) {
		moved = 0;
		for (size_t i = 0; i < n; i++)
			if (s[i].first < b && b <= s[i].last) {
				b = s[i].first;
				moved = 1;
			}
	}
	return b;
}

static void test_boundary_random(void **state)
{
	struct prune_span s[40];

	srand(15);
	for (int round = 0; round < 20000; round++) {
		size_t n = (size_t)(rand() % 40), why;
		int64_t cutoff = 50 + rand() % 20, want, got;

		for (size_t i = 0; i < n; i++) {
			int64_t a = rand() % 80;

			s[i] = sp(a, a + (rand() % 4 ? rand() % 2 : rand() % 8));
		}
		want = brute(s, n, cutoff);
		got = prune_boundary(s, n, cutoff, &why);
		assert_int_equal(got, want);
		assert_true(got <= cutoff);
		/* no session is cut, and every one reaching the cutoff is kept */
		for (size_t i = 0; i < n; i++) {
			assert_false(s[i].first < got && got <= s[i].last);
			if (s[i].last >= cutoff)
				assert_true(s[i].first >= got);
		}
		if (got < cutoff)
			assert_int_equal(s[why].first, got);
		else
			assert_int_equal(why, n);
	}
}

static void test_merge(void **state)
{
	struct prune_span s[] = {
		{ strdup("b"), 1, 10, 10 }, { strdup("a"), 2, 5, 6 }, { strdup("b"), 1, 12, 12 },
		{ strdup("a"), 1, 3, 3 }, { strdup("b"), 1, 9, 11 }, { strdup("a"), 2, 4, 4 },
	};
	size_t n = prune_spans_merge(s, 6);

	assert_int_equal(n, 3);
	assert_string_equal(s[0].host, "a");
	assert_int_equal(s[0].session, 1);
	assert_int_equal(s[0].first, 3);
	assert_int_equal(s[1].session, 2);
	assert_int_equal(s[1].first, 4);
	assert_int_equal(s[1].last, 6);
	assert_string_equal(s[2].host, "b");
	assert_int_equal(s[2].first, 9);
	assert_int_equal(s[2].last, 12);
	for (size_t i = 0; i < n; i++)
		free(s[i].host);
	assert_int_equal(prune_spans_merge(NULL, 0), 0);
}

static void test_partition_day(void **state)
{
	int64_t d;
	char str[11];

	assert_int_equal(prune_partition_day("19700101", &d), 0);
	assert_int_equal(d, 0);
	assert_int_equal(prune_partition_day("20241004", &d), 0);
	assert_int_equal(d, 20000);	/* toUInt16(toDate('2024-10-04')) on 18.16 */
	assert_int_equal(prune_partition_day("20240229", &d), 0);
	assert_int_equal(prune_partition_day("20000229", &d), 0);
	/* round trip with push_day_str() over its range */
	for (int64_t day = 0; day < 49673; day++) {	/* to 2105-12-31 */
		char id[9];

		push_day_str(day, str);
		snprintf(id, sizeof(id), "%.4s%.2s%.2s", str, str + 5, str + 8);
		assert_int_equal(prune_partition_day(id, &d), 0);
		assert_int_equal(d, day);
	}
	static const char *bad[] = { "", "all", "tuple()", "2024100", "202410041", "20241304",
				     "20241000", "20240230", "20230229", "21000229", "19691231",
				     "2024-10-04", "2024100x", "'; DROP" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (prune_partition_day(bad[i], &d) == 0)
			fail_msg("'%s' was taken as a day", bad[i]);
}

static void test_sql(void **state)
{
	struct sbuf b = { 0 };

	assert_int_equal(prune_sql_drop(&b, "samples_local", "20261120"), 0);
	assert_string_equal(b.s, "ALTER TABLE samples_local DROP PARTITION ID '20261120'");
	free(b.s);
	memset(&b, 0, sizeof(b));
	/* nothing hostile or foreign reaches the SQL */
	assert_int_equal(prune_sql_drop(&b, "symbols_local", "20261120"), -1);
	assert_int_equal(prune_sql_drop(&b, "samples", "20261120"), -1);
	assert_int_equal(prune_sql_drop(&b, "samples_local; DROP TABLE x", "20261120"), -1);
	assert_int_equal(prune_sql_drop(&b, "samples_local", "2026112'"), -1);
	assert_int_equal(prune_sql_drop(&b, "samples_local", "all"), -1);
	assert_null(b.s);

	prune_sql_spans(&b);
	for (size_t i = 0; i < prune_ntables; i++) {
		char from[64];

		snprintf(from, sizeof(from), "FROM %s GROUP BY", prune_tables[i]);
		assert_non_null(strstr(b.s, from));
	}
	assert_null(strstr(b.s, "symbols"));
	assert_non_null(strstr(b.s, "toUInt16(min(d0)), toUInt16(max(d1))"));
	free(b.s);
	memset(&b, 0, sizeof(b));
	prune_sql_partitions(&b);
	assert_non_null(strstr(b.s, "'sessions_local', 'intervals_local', 'samples_local'"));
	assert_non_null(strstr(b.s, "database = currentDatabase() AND active"));
	assert_null(strstr(b.s, "symbols"));
	free(b.s);
	/* the sessions' rows go first in a day */
	assert_string_equal(prune_tables[0], "sessions_local");
	assert_string_equal(prune_tables[1], "intervals_local");
	assert_int_equal(prune_ntables, 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_age),
		cmocka_unit_test(test_boundary),
		cmocka_unit_test(test_boundary_random),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_partition_day),
		cmocka_unit_test(test_sql),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
