/*
 * test_fleetquery.c - the pure parts of fleet reports (fleetquery.h):
 * the WHERE condition of --host and --session with hostile host names
 * quoted as ClickHouse string literals, the report query's shape for
 * each --by, and splitting TabSeparated answers back into fields.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fleetquery.h"

static char *where(const char *host, int64_t session)
{
	struct fleet_opts o = { .host = host, .session = session };
	struct sbuf b = { 0 };

	fleetquery_where(&b, &o);
	return b.s;
}

static void test_where(void **state)
{
	static const struct { const char *host; int64_t session; const char *out; } cases[] = {
		{ NULL, 0, "1" },
		{ "alpha", 0, "host = 'alpha'" },
		{ NULL, 7, "session = 7" },
		{ "alpha", 12, "host = 'alpha' AND session = 12" },
		/* a quote cannot end the literal, a backslash cannot escape it */
		{ "a' OR 1=1 --", 0, "host = 'a\\' OR 1=1 --'" },
		{ "x\\", 1, "host = 'x\\\\' AND session = 1" },
		{ "t\tn\nr\r", 0, "host = 't\\tn\\nr\\r'" },
		{ "\\'", 0, "host = '\\\\\\''" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *w = where(cases[i].host, cases[i].session);

		assert_string_equal(w, cases[i].out);
		free(w);
	}
}

/* Every place a filter goes holds it, and no quote is left unescaped. */
static void test_report_sql(void **state)
{
	static const enum fleet_by bys[] = { FLEET_BY_SYMBOL, FLEET_BY_BINARY, FLEET_BY_HOST };

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		struct fleet_opts o = { .host = "h'x", .session = 3, .by = bys[i] };
		struct sbuf b = { 0 };
		const char *p;
		int n = 0;

		fleetquery_sql_report(&b, &o);
		for (p = b.s; (p = strstr(p, "host = 'h\\'x' AND session = 3")); p++)
			n++;
		/* samples, binaries, and for symbols the keys of the symbols */
		assert_int_equal(n, bys[i] == FLEET_BY_SYMBOL ? 3 : 2);
		/* the per-location aggregate of schema 2, not the samples */
		assert_non_null(strstr(b.s, "sum(n) AS n"));
		assert_non_null(strstr(b.s, "FROM samples_by_loc WHERE"));
		assert_null(strstr(b.s, "FROM samples WHERE"));
		assert_null(strstr(b.s, "count()"));
		assert_non_null(strstr(b.s, "GROUP BY host, session, binary_id, binary_key, offset"));
		assert_true((strstr(b.s, "FROM symbols") != NULL) == (bys[i] == FLEET_BY_SYMBOL));
		assert_null(strstr(b.s, "'h'x'"));
		assert_non_null(strstr(b.s, "FORMAT TabSeparated"));
		free(b.s);
	}
}

static void test_other_sql(void **state)
{
	struct fleet_opts o = { .host = "a;b", .by = FLEET_BY_HOST };
	struct sbuf b = { 0 };

	(void)state;
	fleetquery_sql_sessions(&b, &o);
	assert_non_null(strstr(b.s, "FROM sessions WHERE batch = 0 AND host = 'a;b' UNION ALL"));
	/* a running session: its newest interval (schema 3) */
	assert_non_null(strstr(b.s, "FROM intervals WHERE host = 'a;b') ORDER BY"));
	assert_non_null(strstr(b.s, "LIMIT 1 BY host, session"));
	free(b.s);
	b.s = NULL;
	b.n = b.cap = 0;
	fleetquery_sql_events(&b, &o);
	assert_non_null(strstr(b.s, "ARRAY JOIN events"));
	assert_non_null(strstr(b.s, "host = 'a;b'"));
	free(b.s);
	b.s = NULL;
	b.n = b.cap = 0;
	o.host = NULL;
	fleetquery_sql_weighted(&b, &o);
	assert_non_null(strstr(b.s, "toUInt64(sum(n)) AS n FROM samples_by_loc WHERE 1 GROUP BY"));
	free(b.s);
	b.s = NULL;
	b.n = b.cap = 0;
	/* the benchmark's knob: the raw samples */
	setenv("STROBE_FLEET_RAW", "1", 1);
	fleetquery_sql_weighted(&b, &o);
	assert_non_null(strstr(b.s, "toUInt64(count()) AS n FROM samples WHERE 1 GROUP BY"));
	free(b.s);
	b.s = NULL;
	b.n = b.cap = 0;
	fleetquery_sql_report(&b, &o);
	assert_non_null(strstr(b.s, "count() AS n"));
	assert_null(strstr(b.s, "samples_by_loc"));
	unsetenv("STROBE_FLEET_RAW");
	free(b.s);
	b.s = NULL;
	b.n = b.cap = 0;
	o.session = 4;
	fleetquery_sql_lost(&b, &o);
	assert_non_null(strstr(b.s, "FROM lost WHERE session = 4 GROUP BY kind, cpu"));
	free(b.s);
}

static void test_filters_sql(void **state)
{
	struct report_opts f = { .pid = 42, .comm = "a'b", .binary = "[kernel.kallsyms]",
				 .mode = REPORT_USER };
	struct fleet_opts o = { .host = "h", .session = 2, .filt = &f };
	struct sbuf b = { 0 };
	const char *count;

	(void)state;
	/* the per-location filters: on the aggregate */
	fleetquery_from_samples(&b, &o, &count);
	assert_string_equal(count, "sum(n)");
	assert_non_null(strstr(b.s, "FROM samples_by_loc WHERE host = 'h' AND session = 2 AND "
			       "pid = 42 AND comm = 'a\\'b' AND bitAnd(flags, 1) != 0"));
	assert_non_null(strstr(b.s, "(host, session, binary_id) GLOBAL IN (SELECT host, session, "
			       "binary_id FROM binaries WHERE host = 'h' AND session = 2 AND "
			       "(path = '[kernel.kallsyms]'"));
	assert_non_null(strstr(b.s, "OR substring(key, 1, 7) = 'kernel:'))"));
	assert_null(strstr(b.s, "s_start"));
	free(b.s);
	memset(&b, 0, sizeof(b));
	/* a time range: the samples, joined to their session's start */
	f = (struct report_opts){ .pid = -1, .mode = REPORT_KERNEL, .has_from = 1,
				  .from_ns = 5, .has_to = 1, .to_ns = 9 };
	fleetquery_from_samples(&b, &o, &count);
	assert_string_equal(count, "count()");
	assert_non_null(strstr(b.s, "FROM samples GLOBAL ANY INNER JOIN (SELECT host, session, "
			       "start_ns AS s_start FROM (SELECT host, session, start_ns FROM "
			       "sessions WHERE batch = 0 AND host = 'h'"));
	/* a running session's start is in its intervals */
	assert_non_null(strstr(b.s, " UNION ALL SELECT host, session, start_ns FROM intervals "
			       "WHERE host = 'h'"));
	assert_non_null(strstr(b.s, "bitAnd(flags, 2) != 0 AND time_ns >= s_start + 5 AND "
			       "time_ns <= s_start + 9"));
	assert_null(strstr(b.s, "pid ="));
	assert_null(strstr(b.s, "comm ="));
	free(b.s);
	memset(&b, 0, sizeof(b));
	/* the report reads the same FROM in its sums and its symbol keys */
	fleetquery_sql_report(&b, &o);
	assert_non_null(strstr(b.s, "SELECT DISTINCT binary_key FROM samples GLOBAL ANY INNER"));
	free(b.s);
}

static void test_tsv_split(void **state)
{
	char line[] = "h\\tx\t42\ta\\\\b\\nc\t\tq\\'";
	char *f[6];

	(void)state;
	assert_int_equal(fleetquery_tsv_split(line, f, 6), 5);
	assert_string_equal(f[0], "h\tx");
	assert_string_equal(f[1], "42");
	assert_string_equal(f[2], "a\\b\nc");
	assert_string_equal(f[3], "");
	assert_string_equal(f[4], "q'");

	char two[] = "a\tb\tc";
	assert_int_equal(fleetquery_tsv_split(two, f, 2), 2);
	assert_string_equal(f[0], "a");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_where),
		cmocka_unit_test(test_report_sql),
		cmocka_unit_test(test_other_sql),
		cmocka_unit_test(test_filters_sql),
		cmocka_unit_test(test_tsv_split),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
