/*
 * test_push.c - the pure parts of 'strobe push' (push.h, chclient.h): TSV
 * escaping of hostile strings (ClickHouse's TabSeparated rules), string
 * literals, UTC days, cutting rows into batches, the batches query's
 * answer, URLs, the server's error texts, and credentials from the
 * environment and a password file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "chclient.h"
#include "push.h"

static char *esc(const char *s)
{
	struct sbuf b = { 0 };

	push_tsv_escape(&b, s);
	return b.s;
}

static void test_tsv_escape(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "", "" },
		{ "bash", "bash" },
		{ "a\tb", "a\\tb" },
		{ "line\nnext", "line\\nnext" },
		{ "back\\slash", "back\\\\slash" },
		{ "\\t", "\\\\t" },		/* a backslash and a t, not a tab */
		{ "cr\r", "cr\\r" },
		{ "\b\f'", "\\b\\f\\'" },
		{ "\t\n\\\t", "\\t\\n\\\\\\t" },
		{ "caf\xc3\xa9 \x01", "caf\xc3\xa9 \x01" },	/* other bytes as they are */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *s = esc(cases[i].in);

		assert_non_null(s);
		assert_string_equal(s, cases[i].out);
		/* never a raw tab or newline: one field, one row */
		assert_null(strchr(s, '\t'));
		assert_null(strchr(s, '\n'));
		free(s);
	}
	{
		char *s = esc(NULL);

		assert_string_equal(s, "");
		free(s);
	}
}

static void test_sql_quote(void **state)
{
	struct sbuf b = { 0 };

	push_sql_quote(&b, "it's a\\b");
	assert_string_equal(b.s, "'it\\'s a\\\\b'");
	free(b.s);
}

static void test_day(void **state)
{
	char d[11];

	assert_int_equal(push_day(0), 0);
	assert_int_equal(push_day(86400LL * 1000000000 - 1), 0);
	assert_int_equal(push_day(86400LL * 1000000000), 1);
	assert_int_equal(push_day(-1), -1);
	push_day_str(0, d);
	assert_string_equal(d, "1970-01-01");
	push_day_str(59, d);
	assert_string_equal(d, "1970-03-01");
	push_day_str(19723, d);
	assert_string_equal(d, "2024-01-01");
	push_day_str(19722, d);
	assert_string_equal(d, "2023-12-31");
	push_day_str(19782, d);			/* a leap day */
	assert_string_equal(d, "2024-02-29");
	push_day_str(19783, d);
	assert_string_equal(d, "2024-03-01");
	push_day_str(-5, d);			/* before Date's range: clamped */
	assert_string_equal(d, "1970-01-01");
}

static void test_batcher(void **state)
{
	struct push_batcher b;
	/* rows' days; cut where the batch is full (3) or the day changes */
	static const int64_t days[] = { 5, 5, 5, 5, 6, 6, 6, 6, 6, 7 };
	static const uint32_t want[] = { 1, 1, 1, 2, 3, 3, 3, 4, 4, 5 };
	uint32_t cuts = 0;

	push_batcher_init(&b, 3, 1);
	for (size_t i = 0; i < sizeof(days) / sizeof(*days); i++) {
		cuts += push_batcher_row(&b, days[i]);
		assert_int_equal(b.batch, want[i]);
	}
	assert_int_equal(cuts, 4);
	assert_int_equal(push_batcher_end(&b), 1);
	assert_int_equal(b.batch, 6);		/* the next table starts at 6 */
	assert_int_equal(push_batcher_end(&b), 0);
	/* an empty table leaves the number where it was */
	push_batcher_init(&b, 10, 6);
	assert_int_equal(push_batcher_end(&b), 0);
	assert_int_equal(b.batch, 6);
	/* max 1: one row a batch */
	push_batcher_init(&b, 1, 1);
	assert_int_equal(push_batcher_row(&b, 0), 0);
	assert_int_equal(push_batcher_row(&b, 0), 1);
	assert_int_equal(b.batch, 2);
}

static void test_bucket(void **state)
{
	(void)state;
	assert_int_equal(push_bucket_ns(0), 0);
	assert_int_equal(push_bucket_ns(99999999), 0);
	assert_int_equal(push_bucket_ns(100000000), 100000000);
	assert_int_equal(push_bucket_ns(123456789012LL), 123400000000LL);
	assert_int_equal(push_bucket_ns(-1), -100000000);
	assert_int_equal(push_bucket_ns(-100000000), -100000000);
	assert_int_equal(push_bucket_ns(-100000001), -200000000);
}

static void test_parse_batches(void **state)
{
	uint8_t have[8];

	memset(have, 0, sizeof(have));
	assert_int_equal(push_parse_batches("0\n3\n7\n", have, 8), 0);
	assert_int_equal(have[0] + have[3] + have[7], 3);
	assert_int_equal(have[1] + have[2] + have[4] + have[5] + have[6], 0);
	assert_int_equal(push_parse_batches("", have, 8), 0);
	assert_int_equal(push_parse_batches(NULL, have, 8), 0);
	assert_int_equal(push_parse_batches("8\n", have, 8), -1);	/* beyond the plan */
	assert_int_equal(push_parse_batches("1x\n", have, 8), -1);
	assert_int_equal(push_parse_batches("\n", have, 8), -1);
	assert_int_equal(push_parse_batches("99999999999999999999\n", have, 8), -1);
	assert_int_equal(push_parse_batches("2", have, 8), 0);		/* no final newline */
}

#define H1 "0123456789abcdef0123456789abcdef"
#define H2 "fedcba9876543210fedcba9876543210"

/* the intervals of a running session: read from the server, checked,
 * and where the next one is cut */
static void test_intervals(void **state)
{
	struct push_interval *iv, next;
	struct error e;
	size_t n;
	int64_t row;
	uint32_t batch;

	/* any order, a row stored twice counted once */
	assert_int_equal(push_parse_intervals("2\t11\t30\t4\t2\t8\t15\t25\t" H2 "\n"
					      "1\t1\t10\t1\t3\t8\t10\t10\t" H1 "\n"
					      "2\t11\t30\t4\t2\t8\t15\t25\t" H2 "\n", &iv, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_int_equal(iv[0].k, 1);
	assert_int_equal(iv[1].first_row, 11);
	assert_int_equal(iv[1].last_row, 30);
	assert_int_equal(iv[1].batch_rows, 8);
	assert_string_equal(iv[1].hash, H2);
	push_plan_next(iv, n, 1, &row, &batch);
	assert_int_equal(row, 31);
	assert_int_equal(batch, 6);
	/* nothing committed since: no interval; else the rows after */
	assert_int_equal(push_plan_cut(iv, n, 1, 30, &next), 0);
	assert_int_equal(push_plan_cut(iv, n, 1, 29, &next), 0);
	assert_int_equal(push_plan_cut(iv, n, 1, 31, &next), 1);
	assert_int_equal(next.k, 3);
	assert_int_equal(next.first_row, 31);
	assert_int_equal(next.last_row, 31);
	assert_int_equal(next.first_batch, 6);
	assert_int_equal(next.samples_total, 25);
	free(iv);

	/* none: the first starts at the session's first rowid, batch 1 */
	assert_int_equal(push_parse_intervals("", &iv, &n, &e), 0);
	assert_int_equal(n, 0);
	push_plan_next(iv, n, INT64_MIN, &row, &batch);
	assert_int_equal(row, INT64_MIN);
	assert_int_equal(batch, 1);
	assert_int_equal(push_plan_cut(iv, n, 100, INT64_MIN, &next), 0);	/* no sample */
	assert_int_equal(push_plan_cut(iv, n, 100, 150, &next), 1);
	assert_int_equal(next.k, 1);
	assert_int_equal(next.first_row, 100);
	assert_int_equal(next.first_batch, 1);
	free(iv);

	/* what cannot be a plan: refused, naming why */
	assert_int_equal(push_parse_intervals("2\t11\t30\t4\t2\t8\t15\t15\t" H2 "\n", &iv, &n, &e),
			 -1);
	assert_non_null(strstr(e.msg, "a missing interval"));
	assert_int_equal(push_parse_intervals("1\t1\t10\t1\t3\t8\t10\t10\t" H1 "\n"
					      "2\t12\t30\t4\t2\t8\t15\t25\t" H2 "\n", &iv, &n, &e), -1);
	assert_non_null(strstr(e.msg, "rowid"));
	assert_int_equal(push_parse_intervals("1\t1\t10\t1\t3\t8\t10\t10\t" H1 "\n"
					      "2\t11\t30\t5\t2\t8\t15\t25\t" H2 "\n", &iv, &n, &e), -1);
	assert_non_null(strstr(e.msg, "batch ranges"));
	assert_int_equal(push_parse_intervals("1\t1\t10\t2\t3\t8\t10\t10\t" H1 "\n", &iv, &n, &e),
			 -1);
	assert_int_equal(push_parse_intervals("1\t1\t10\t1\t3\t8\t10\t10\t" H1 "\n"
					      "2\t11\t30\t4\t2\t9\t15\t25\t" H2 "\n", &iv, &n, &e), -1);
	assert_non_null(strstr(e.msg, "two batch sizes"));
	assert_int_equal(push_parse_intervals("1\t1\t10\t1\t3\t8\t10\t10\t" H1 "\n"
					      "2\t11\t30\t4\t2\t8\t15\t24\t" H2 "\n", &iv, &n, &e), -1);
	assert_non_null(strstr(e.msg, "running total"));
	assert_int_equal(push_parse_intervals("1\t1\t10\t1\t3\t8\t10\t10\t" H1 "\n"
					      "1\t1\t10\t1\t3\t8\t10\t10\t" H2 "\n", &iv, &n, &e), -1);
	assert_non_null(strstr(e.msg, "two different rows"));
	assert_int_equal(push_parse_intervals("1\t10\t9\t1\t0\t8\t0\t0\t" H1 "\n", &iv, &n, &e),
			 -1);
	assert_int_equal(push_parse_intervals("1\t1\t10\t1\t3\t8\t10\t10\t" H1 "x\n", &iv, &n, &e),
			 -1);
	assert_non_null(strstr(e.msg, "malformed"));
	assert_int_equal(push_parse_intervals("1\t1\t10\t1\t3\t0\t10\t10\t" H1 "\n", &iv, &n, &e),
			 -1);
	assert_int_equal(push_parse_intervals("0\t1\t10\t1\t3\t8\t10\t10\t" H1 "\n", &iv, &n, &e),
			 -1);
}

static void test_url(void **state)
{
	struct chclient_url u;
	struct error e;

	assert_int_equal(chclient_url_parse("http://127.0.0.1:8123/?database=strobe", &u, &e), 0);
	assert_string_equal(u.base, "http://127.0.0.1:8123/");
	assert_string_equal(u.database, "strobe");
	assert_int_equal(chclient_url_parse("https://ch.example:8443", &u, &e), 0);
	assert_string_equal(u.base, "https://ch.example:8443/");
	assert_string_equal(u.database, "default");
	assert_int_equal(chclient_url_parse("http://h/ch/?database=a_1", &u, &e), 0);
	assert_string_equal(u.base, "http://h/ch/");
	assert_string_equal(u.database, "a_1");
	assert_int_equal(chclient_url_parse("ftp://h/", &u, &e), -1);
	assert_int_equal(chclient_url_parse("http://", &u, &e), -1);
	assert_int_equal(chclient_url_parse("http://user:secret@h:8123/", &u, &e), -1);
	assert_null(strstr(e.msg, "secret"));			/* never echoed */
	assert_non_null(strstr(e.msg, "STROBE_CLICKHOUSE_PASSWORD"));
	assert_int_equal(chclient_url_parse("http://h/?database=x;DROP", &u, &e), -1);
	assert_int_equal(chclient_url_parse("http://h/?database=", &u, &e), -1);
	assert_int_equal(chclient_url_parse("http://h/?password=x", &u, &e), -1);
	assert_int_equal(chclient_url_parse("http://h/?database=a b", &u, &e), -1);
	assert_int_equal(chclient_url_parse("http://h/x#f", &u, &e), -1);
}

static void test_error_line(void **state)
{
	static const char pw[] = "Code: 193, e.displayText() = DB::Exception: Wrong password "
				 "for user default, e.what() = DB::Exception\n";
	static const char net[] = "Code: 279, e.displayText() = DB::NetException: All connection "
				  "tries failed. Log: \n\nCode: 210, e.displayText() = "
				  "DB::NetException: Connection refused (127.0.0.1:9001), "
				  "e.what() = DB::NetException\n\n, e.what() = DB::NetException\n";
	static const char newer[] = "Code: 60. DB::Exception: Table strobe.x does not exist. "
				    "(UNKNOWN_TABLE) (version 23.8.1.1)\n";
	static const char ctl[] = "weird\x01\x7f answer\n second line";
	char out[200];

	assert_int_equal(chclient_error_line(500, pw, sizeof(pw) - 1, out, sizeof(out)), 193);
	assert_string_equal(out, "Wrong password for user default (ClickHouse error 193)");
	assert_int_equal(chclient_error_line(500, net, sizeof(net) - 1, out, sizeof(out)), 279);
	assert_string_equal(out, "All connection tries failed (ClickHouse error 279)");
	assert_int_equal(chclient_error_line(404, newer, sizeof(newer) - 1, out, sizeof(out)), 60);
	assert_string_equal(out, "Table strobe.x does not exist (ClickHouse error 60)");
	assert_int_equal(chclient_error_line(502, ctl, sizeof(ctl) - 1, out, sizeof(out)), 0);
	assert_string_equal(out, "weird?? answer");
	assert_int_equal(chclient_error_line(503, "", 0, out, sizeof(out)), 0);
	assert_string_equal(out, "HTTP error 503 and no message");
	/* truncated to the buffer, still terminated */
	chclient_error_line(500, pw, sizeof(pw) - 1, out, 10);
	assert_int_equal(strlen(out), 9);
}

/* the user and password from the environment or a private file */
static void test_credentials(void **state)
{
	char path[] = "/tmp/test_push.XXXXXX";
	struct chclient_cred c;
	struct error e;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "s3cret\nignored\n", 15), 15);
	close(fd);
	unsetenv("STROBE_CLICKHOUSE_USER");
	unsetenv("STROBE_CLICKHOUSE_PASSWORD");
	unsetenv("STROBE_CLICKHOUSE_PASSWORD_FILE");
	assert_int_equal(chclient_credentials(&c, &e), 0);
	assert_string_equal(c.user, "default");
	assert_string_equal(c.password, "");
	setenv("STROBE_CLICKHOUSE_USER", "pusher", 1);
	setenv("STROBE_CLICKHOUSE_PASSWORD", "pw", 1);
	assert_int_equal(chclient_credentials(&c, &e), 0);
	assert_string_equal(c.user, "pusher");
	assert_string_equal(c.password, "pw");
	/* both: refused */
	setenv("STROBE_CLICKHOUSE_PASSWORD_FILE", path, 1);
	assert_int_equal(chclient_credentials(&c, &e), -1);
	assert_non_null(strstr(e.msg, "keep one"));
	unsetenv("STROBE_CLICKHOUSE_PASSWORD");
	/* mkstemp made it 0600: its first line */
	assert_int_equal(chclient_credentials(&c, &e), 0);
	assert_string_equal(c.password, "s3cret");
	/* readable by the group or others: refused, and not read */
	chmod(path, 0640);
	assert_int_equal(chclient_credentials(&c, &e), -1);
	assert_non_null(strstr(e.msg, "chmod 600"));
	assert_null(strstr(e.msg, "s3cret"));
	chmod(path, 0604);
	assert_int_equal(chclient_credentials(&c, &e), -1);
	/* not a regular file, or missing */
	setenv("STROBE_CLICKHOUSE_PASSWORD_FILE", "/tmp", 1);
	assert_int_equal(chclient_credentials(&c, &e), -1);
	assert_non_null(strstr(e.msg, "not a regular file"));
	unlink(path);
	setenv("STROBE_CLICKHOUSE_PASSWORD_FILE", path, 1);
	assert_int_equal(chclient_credentials(&c, &e), -1);
	unsetenv("STROBE_CLICKHOUSE_PASSWORD_FILE");
	unsetenv("STROBE_CLICKHOUSE_USER");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tsv_escape),
		cmocka_unit_test(test_sql_quote),
		cmocka_unit_test(test_day),
		cmocka_unit_test(test_batcher),
		cmocka_unit_test(test_bucket),
		cmocka_unit_test(test_parse_batches),
		cmocka_unit_test(test_intervals),
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_error_line),
		cmocka_unit_test(test_credentials),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
