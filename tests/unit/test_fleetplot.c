/*
 * test_fleetplot.c - the pure parts of fleet timelines (fleetplot.h): the
 * session-start expression of one and of several sessions (hostile host
 * names quoted), the WHERE condition with the time range, and the shape
 * of the bucket and totals queries for each --by.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fleetplot.h"
#include "report.h"

static int count(const char *s, const char *what)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
}

static void test_start(void **state)
{
	char *hosts[] = { "alpha", "b'x/" };
	int64_t ids[] = { 3, 12 }, starts[] = { 1000, -5 };
	struct sbuf b = { 0 };

	(void)state;
	fleetplot_sql_start(&b, hosts, ids, starts, 1);
	assert_string_equal(b.s, "1000");
	free(b.s);
	memset(&b, 0, sizeof(b));
	fleetplot_sql_start(&b, hosts, ids, starts, 2);
	assert_string_equal(b.s, "transform(concat(host, '/', toString(session)), "
			    "['alpha/3', 'b\\'x//12'], [toInt64(1000), toInt64(-5)], toInt64(0))");
	free(b.s);
}

static void test_where(void **state)
{
	struct fleetplot_range r = { .host = "h'q", .session = 7, .start = "S",
				     .from_rel = 250, .to_rel = 9000, .bucket_ns = 10 };
	struct sbuf b = { 0 };

	(void)state;
	fleetplot_sql_where(&b, &r);
	assert_string_equal(b.s, "host = 'h\\'q' AND session = 7 AND time_ns - S >= 250 AND "
			    "time_ns - S <= 9000");
	free(b.s);
	memset(&b, 0, sizeof(b));
	r.host = NULL;
	r.session = 0;
	fleetplot_sql_where(&b, &r);
	assert_string_equal(b.s, "1 AND time_ns - S >= 250 AND time_ns - S <= 9000");
	free(b.s);
}

/* The filters (fleetquery_sql_filters()): after the time range, the
 * binaries of the selection only, a hostile comm quoted. */
static void test_where_filters(void **state)
{
	struct report_opts f = { .pid = 42, .comm = "x' OR 1=1 --", .binary = "libc.so.6" };
	struct fleetplot_range r = { .host = "h", .session = 7, .start = "S",
				     .from_rel = 0, .to_rel = 9, .bucket_ns = 1, .filt = &f };
	struct sbuf b = { 0 };

	(void)state;
	fleetplot_sql_where(&b, &r);
	assert_string_equal(b.s, "host = 'h' AND session = 7 AND time_ns - S >= 0 AND "
			    "time_ns - S <= 9 AND pid = 42 AND comm = 'x\\' OR 1=1 --' AND "
			    "(host, session, binary_id) GLOBAL IN (SELECT host, session, "
			    "binary_id FROM binaries WHERE host = 'h' AND session = 7 AND "
			    "(path = 'libc.so.6' OR replaceRegexpOne(path, '^.*/', '') = "
			    "'libc.so.6' OR key = 'libc.so.6'))");
	free(b.s);
	memset(&b, 0, sizeof(b));
	f.pid = -1;
	f.comm = f.binary = NULL;
	fleetplot_sql_where(&b, &r);
	assert_string_equal(b.s, "host = 'h' AND session = 7 AND time_ns - S >= 0 AND "
			    "time_ns - S <= 9");
	free(b.s);
}

/* Each --by: bucketed by the time since the start, grouped by host and
 * session in ClickHouse, the selection everywhere a table is read, and
 * the keys kept where given. */
static void test_buckets(void **state)
{
	static const enum timeline_by bys[] = { TL_BY_NONE, TL_BY_CPU, TL_BY_PID, TL_BY_BINARY,
						TL_BY_SYMBOL, TL_BY_HOST };
	struct fleetplot_range r = { .host = "h'x", .session = 3, .start = "77",
				     .from_rel = 0, .to_rel = 5000000000, .bucket_ns = 20000000 };

	(void)state;
	for (size_t i = 0; i < sizeof(bys) / sizeof(bys[0]); i++) {
		struct sbuf b = { 0 };
		const char *in = bys[i] == TL_BY_SYMBOL ? "'buildid:ab'" : "4, 5";

		fleetplot_sql_buckets(&b, &r, bys[i], in);
		assert_non_null(strstr(b.s, "intDiv(time_ns - 77 - 0, 20000000) AS b"));
		assert_non_null(strstr(b.s, "FROM samples WHERE host = 'h\\'x' AND session = 3 "
				       "AND time_ns - 77 >= 0 AND time_ns - 77 <= 5000000000"));
		assert_int_equal(count(b.s, "sum(c7)"), 1);
		assert_null(strstr(b.s, "'h'x'"));
		assert_non_null(strstr(b.s, "FORMAT TabSeparated"));
		switch (bys[i]) {
		case TL_BY_CPU:
			assert_non_null(strstr(b.s, "AND cpu IN (4, 5) GROUP BY host, session, b, k"));
			break;
		case TL_BY_PID:
			assert_non_null(strstr(b.s, "AND pid IN (4, 5) GROUP BY"));
			break;
		case TL_BY_BINARY:
			assert_non_null(strstr(b.s, "AND binary_id IN (4, 5) GROUP BY"));
			break;
		case TL_BY_SYMBOL:
			/* the samples of those binaries, named by symbols and binaries */
			assert_non_null(strstr(b.s, "AND binary_key IN ('buildid:ab') GROUP BY host, "
					       "session, b, binary_id, binary_key, offset"));
			assert_non_null(strstr(b.s, "FROM symbols WHERE binary_key IN ('buildid:ab')"));
			assert_non_null(strstr(b.s, "FROM binaries WHERE host = 'h\\'x' AND session = 3"));
			assert_non_null(strstr(b.s, "GROUP BY host, session, b, symbol, bname"));
			break;
		default:
			assert_null(strstr(b.s, " IN ("));
			assert_non_null(strstr(b.s, "GROUP BY host, session, b, k"));
		}
		free(b.s);
	}
}

static void test_totals(void **state)
{
	struct fleetplot_range r = { .host = NULL, .session = 1, .start = "S",
				     .from_rel = 5, .to_rel = 6, .bucket_ns = 1 };
	struct sbuf b = { 0 };

	(void)state;
	fleetplot_sql_totals(&b, &r, TL_BY_PID);
	assert_non_null(strstr(b.s, "argMaxIf(comm, time_ns, comm != '')"));
	assert_non_null(strstr(b.s, "GROUP BY host, session, k ORDER BY host, session, k"));
	assert_null(strstr(b.s, "intDiv"));
	free(b.s);
	memset(&b, 0, sizeof(b));
	fleetplot_sql_totals(&b, &r, TL_BY_SYMBOL);
	assert_non_null(strstr(b.s, "GROUP BY host, session, binary_id, binary_key, offset"));
	assert_non_null(strstr(b.s, "binary_key GLOBAL IN (SELECT DISTINCT binary_key FROM "
			       "samples WHERE session = 1)"));
	assert_non_null(strstr(b.s, "ORDER BY host, session, binary_id, offset"));
	assert_int_equal(count(b.s, "time_ns - S >= 5 AND time_ns - S <= 6"), 1);
	free(b.s);
	memset(&b, 0, sizeof(b));
	fleetplot_sql_totals(&b, &r, TL_BY_BINARY);
	assert_non_null(strstr(b.s, "any(key) AS bkey, any(path) AS bpath FROM binaries"));
	assert_non_null(strstr(b.s, "ORDER BY host, session, binary_id"));
	free(b.s);
}

static void test_markers(void **state)
{
	struct fleetplot_range r = { .host = "h'x", .session = 0, .start = "S",
				     .from_rel = 5, .to_rel = 6, .bucket_ns = 1 };
	struct sbuf b = { 0 };

	(void)state;
	fleetplot_sql_markers(&b, &r, 1000);
	assert_string_equal(b.s, "SELECT time_ns - S + 1000 AS t, kind, name, args FROM markers "
			    "WHERE host = 'h\\'x' AND time_ns - S >= 5 AND time_ns - S <= 6 "
			    "ORDER BY t, host, session LIMIT 10001 FORMAT TabSeparated");
	free(b.s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start),
		cmocka_unit_test(test_where),
		cmocka_unit_test(test_where_filters),
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_totals),
		cmocka_unit_test(test_markers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
