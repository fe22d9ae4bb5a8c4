/*
 * test_fleetplot.c - the pure parts of fleet timelines (fleetplot.h): the
 * session-start expression of one and of several sessions (hostile host
 * names quoted), the WHERE condition with the time range, the shape of
 * the bucket and totals queries for each --by, and when and how a plot is
 * summed from samples_by_time instead (the decision, its queries, and the
 * bounded queries of the pids' comms and of the sessions' latest samples).
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
#include "push.h"
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

#define MS	1000000LL

/* Served from samples_by_time exactly when every 100 ms row lies in one
 * plot bucket and wholly in the range, by none, cpu, pid, binary or host,
 * without a comm filter. */
static void test_aggregable(void **state)
{
	static const enum timeline_by ok[] = { TL_BY_NONE, TL_BY_CPU, TL_BY_PID, TL_BY_BINARY,
					       TL_BY_HOST };
	struct report_opts f = { .pid = 42, .binary = "libc.so.6" };
	struct fleetplot_range r = { .start = "S", .from_rel = 0, .to_rel = 2500 * MS,
				     .bucket_ns = 100 * MS };
	int64_t end = 2500 * MS;

	(void)state;
	assert_int_equal(PUSH_BUCKET_NS, 100 * MS);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_true(fleetplot_aggregable(&r, ok[i], end));
	assert_false(fleetplot_aggregable(&r, TL_BY_SYMBOL, end));
	assert_false(fleetplot_aggregable(&r, TL_BY_CGROUP, end));
	/* buckets: multiples of 100 ms only */
	r.bucket_ns = 200 * MS;
	assert_true(fleetplot_aggregable(&r, TL_BY_NONE, end));
	r.bucket_ns = 50 * MS;
	assert_false(fleetplot_aggregable(&r, TL_BY_NONE, end));
	r.bucket_ns = 150 * MS;
	assert_false(fleetplot_aggregable(&r, TL_BY_NONE, end));
	r.bucket_ns = 0;
	assert_false(fleetplot_aggregable(&r, TL_BY_NONE, end));
	r.bucket_ns = 100 * MS;
	/* --from: on a 100 ms boundary */
	r.from_rel = 300 * MS;
	assert_true(fleetplot_aggregable(&r, TL_BY_NONE, end));
	r.from_rel = 250 * MS;
	assert_false(fleetplot_aggregable(&r, TL_BY_NONE, end));
	r.from_rel = 300 * MS + 1;
	assert_false(fleetplot_aggregable(&r, TL_BY_NONE, end));
	r.from_rel = 300 * MS;
	/* the end: the session's (any, the last row holds no later sample),
	 * or 1 ns before a 100 ms boundary; else a row is cut */
	r.to_rel = end = 2345 * MS;
	assert_true(fleetplot_aggregable(&r, TL_BY_NONE, end));
	assert_true(fleetplot_aggregable(&r, TL_BY_NONE, end - 1));
	assert_false(fleetplot_aggregable(&r, TL_BY_NONE, end + 1));
	r.to_rel = 2000 * MS;
	assert_false(fleetplot_aggregable(&r, TL_BY_NONE, end));
	r.to_rel = 2000 * MS - 1;
	assert_true(fleetplot_aggregable(&r, TL_BY_NONE, end));
	r.to_rel = 2000 * MS + 1;
	assert_false(fleetplot_aggregable(&r, TL_BY_NONE, end));
	/* filters: pid and binary are columns; comm is not */
	r.to_rel = end;
	r.filt = &f;
	assert_true(fleetplot_aggregable(&r, TL_BY_PID, end));
	f.comm = "ls";
	assert_false(fleetplot_aggregable(&r, TL_BY_PID, end));
	assert_false(fleetplot_aggregable(&r, TL_BY_NONE, end));
}

/* From samples_by_time: the 100 ms rows of the range by bucket_ns (no
 * session start needed), sum(n) for the count, the filters as on the
 * samples, the keys kept; and the totals' pid rows carry their latest
 * bucket, not a comm. */
static void test_agg_sql(void **state)
{
	static const enum timeline_by bys[] = { TL_BY_NONE, TL_BY_CPU, TL_BY_PID, TL_BY_BINARY,
						TL_BY_HOST };
	struct report_opts f = { .pid = 42, .binary = "ls" };
	struct fleetplot_range r = { .host = "h'x", .session = 3, .start = "77",
				     .from_rel = 200 * MS, .to_rel = 5000 * MS - 1,
				     .bucket_ns = 300 * MS, .agg = 1 };
	struct sbuf b = { 0 };

	(void)state;
	fleetplot_sql_where(&b, &r);
	assert_string_equal(b.s, "host = 'h\\'x' AND session = 3 AND bucket_ns >= 200000000 AND "
			    "bucket_ns <= 4999999999");
	free(b.s);
	for (size_t i = 0; i < sizeof(bys) / sizeof(bys[0]); i++) {
		memset(&b, 0, sizeof(b));
		fleetplot_sql_buckets(&b, &r, bys[i], "4, 5");
		assert_non_null(strstr(b.s, "SELECT host, session, intDiv(bucket_ns - 200000000, "
				       "300000000) AS b, "));
		assert_non_null(strstr(b.s, "sum(n) AS sn, sum(c0) AS s0"));
		assert_non_null(strstr(b.s, " FROM samples_by_time WHERE host = 'h\\'x' AND "
				       "session = 3 AND bucket_ns >= 200000000 AND bucket_ns <= "
				       "4999999999"));
		assert_null(strstr(b.s, "time_ns"));
		assert_null(strstr(b.s, "count()"));
		assert_null(strstr(b.s, "FROM samples "));
		assert_non_null(strstr(b.s, "GROUP BY host, session, b, k FORMAT TabSeparated"));
		free(b.s);
		memset(&b, 0, sizeof(b));
		fleetplot_sql_totals(&b, &r, bys[i]);
		assert_non_null(strstr(b.s, "FROM samples_by_time WHERE"));
		assert_null(strstr(b.s, "time_ns"));
		assert_null(strstr(b.s, "FROM samples "));
		free(b.s);
	}
	memset(&b, 0, sizeof(b));
	fleetplot_sql_buckets(&b, &r, TL_BY_PID, "4, 5");
	assert_non_null(strstr(b.s, "toString(pid) AS k, '', sum(n) AS sn"));
	assert_non_null(strstr(b.s, "AND pid IN (4, 5) GROUP BY"));
	free(b.s);
	memset(&b, 0, sizeof(b));
	fleetplot_sql_totals(&b, &r, TL_BY_PID);
	assert_non_null(strstr(b.s, "SELECT host, session, toString(pid) AS k, '', "
			       "toString(max(bucket_ns)), '', sum(n) AS sn"));
	assert_null(strstr(b.s, "comm"));
	free(b.s);
	/* the filters, as on the samples */
	r.filt = &f;
	memset(&b, 0, sizeof(b));
	fleetplot_sql_buckets(&b, &r, TL_BY_NONE, NULL);
	assert_non_null(strstr(b.s, "bucket_ns <= 4999999999 AND pid = 42 AND (host, session, "
			       "binary_id) GLOBAL IN (SELECT host, session, binary_id FROM "
			       "binaries WHERE host = 'h\\'x' AND session = 3 AND (path = 'ls'"));
	free(b.s);
	/* raw, the same range: the samples */
	r.agg = 0;
	memset(&b, 0, sizeof(b));
	fleetplot_sql_buckets(&b, &r, TL_BY_NONE, NULL);
	assert_non_null(strstr(b.s, "count() AS sn"));
	assert_non_null(strstr(b.s, "FROM samples WHERE"));
	assert_null(strstr(b.s, "samples_by_time"));
	free(b.s);
}

/* The comms of the top pids: each from its latest 100 ms bucket of the
 * range (clipped to the range's end), by the samples' key, with the
 * filters; or from the whole range. */
static void test_comms(void **state)
{
	struct report_opts f = { .pid = -1, .binary = "ls" };
	struct fleetplot_range r = { .session = 0, .start = "S", .from_rel = 100 * MS,
				     .to_rel = 950 * MS, .bucket_ns = 100 * MS, .agg = 1,
				     .filt = &f };
	struct fleetplot_pid p[] = {
		{ .host = "a'b", .session = 2, .start = 1000, .pid = 7, .last = 300 * MS },
		{ .host = "c", .session = 5, .start = -10, .pid = 8, .last = 900 * MS },
	};
	struct sbuf b = { 0 };

	(void)state;
	fleetplot_sql_comms(&b, &r, p, 2, 1);
	assert_non_null(strstr(b.s, "SELECT host, session, toString(pid), argMaxIf(comm, "
			       "time_ns, comm != '') FROM samples WHERE 1 AND (host, session, "
			       "binary_id) GLOBAL IN"));
	assert_non_null(strstr(b.s, " AND ((host = 'a\\'b' AND session = 2 AND pid = 7 AND "
			       "time_ns >= 300001000 AND time_ns <= 400000999) OR (host = 'c' AND "
			       "session = 5 AND pid = 8 AND time_ns >= 899999990 AND "
			       "time_ns <= 949999990)) GROUP BY host, session, pid "
			       "FORMAT TabSeparated"));
	free(b.s);
	memset(&b, 0, sizeof(b));
	fleetplot_sql_comms(&b, &r, p, 1, 0);
	assert_non_null(strstr(b.s, " AND ((host = 'a\\'b' AND session = 2 AND pid = 7 AND "
			       "time_ns >= 100001000 AND time_ns <= 950001000)) GROUP BY"));
	free(b.s);
	memset(&b, 0, sizeof(b));
	fleetplot_sql_comms(&b, &r, p, 0, 1);
	assert_non_null(strstr(b.s, " AND (0) GROUP BY"));
	free(b.s);
}

/* The latest sample of each session: from its latest 100 ms row on when
 * known (the samples' key skips the rest), else all of its samples; or
 * of the whole selection. */
static void test_last(void **state)
{
	char *hosts[] = { "a'b", "c" };
	int64_t ids[] = { 2, 5 }, from[] = { 1700, INT64_MIN };
	struct sbuf b = { 0 };

	(void)state;
	fleetplot_sql_last(&b, NULL, 0, hosts, ids, from, 2);
	assert_string_equal(b.s, "SELECT host, session, max(time_ns) FROM samples WHERE 1 AND "
			    "((host = 'a\\'b' AND session = 2 AND time_ns >= 1700) OR (host = 'c' "
			    "AND session = 5)) GROUP BY host, session FORMAT TabSeparated");
	free(b.s);
	memset(&b, 0, sizeof(b));
	fleetplot_sql_last(&b, "c", 0, NULL, NULL, NULL, 0);
	assert_string_equal(b.s, "SELECT host, session, max(time_ns) FROM samples WHERE "
			    "host = 'c' GROUP BY host, session FORMAT TabSeparated");
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
		cmocka_unit_test(test_aggregable),
		cmocka_unit_test(test_agg_sql),
		cmocka_unit_test(test_comms),
		cmocka_unit_test(test_last),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
