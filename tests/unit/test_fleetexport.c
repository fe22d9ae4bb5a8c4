/*
 * test_fleetexport.c - the pure parts of fleet exports and diffs
 * (fleetexport.h): the samples' query and its filters, and the sides of
 * 'strobe diff --source'.
 */
#include "config.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "exportcsv.h"
#include "fleetexport.h"

static char *where(const struct fleetexport_opts *o, const struct fleetexport_session *ss,
		   size_t n)
{
	struct sbuf b = { 0 };

	fleetexport_where(&b, o, ss, n);
	return b.s;
}

static void test_where(void **state)
{
	struct fleetexport_session one = { "h1", 3, 1000 };
	struct fleetexport_session two[2] = { { "a'b", 1, 100 }, { "c", 2, 5000 } };
	struct fleetexport_opts o = { .pid = -1 };
	char *w;

	(void)state;
	w = where(&o, &one, 1);
	assert_string_equal(w, "1");
	free(w);
	o.host = "h1";
	o.session = 3;
	o.pid = 42;
	o.comm = "x'y\\z";
	w = where(&o, &one, 1);
	assert_string_equal(w, "host = 'h1' AND session = 3 AND pid = 42 AND comm = 'x\\'y\\\\z'");
	free(w);
	/* the time range is of the session's start, both ends included */
	o = (struct fleetexport_opts){ .pid = -1, .has_from = 1, .from_ns = 10, .has_to = 1,
				       .to_ns = 20, .session = 3 };
	w = where(&o, &one, 1);
	assert_string_equal(w, "session = 3 AND time_ns >= 1010 AND time_ns <= 1020");
	free(w);
	/* several sessions: each its own range */
	o = (struct fleetexport_opts){ .pid = -1, .has_to = 1, .to_ns = 7 };
	w = where(&o, two, 2);
	assert_string_equal(w, "1 AND (0 OR (host = 'a\\'b' AND session = 1 AND time_ns <= 107) "
			    "OR (host = 'c' AND session = 2 AND time_ns <= 5007))");
	free(w);
}

static void test_sql(void **state)
{
	struct fleetexport_session one = { "h1", 3, 1000 };
	struct fleetexport_opts o = { .pid = 7, .host = "h1", .session = 3 };
	struct sbuf b = { 0 };
	const char *p;

	(void)state;
	fleetexport_sql(&b, &o, &one, 1);
	/* the columns the reader splits, in its order */
	assert_true(!strncmp(b.s, "SELECT host, session, time_ns, tsc, cpu, pid, tid, comm, "
			     "bname, binary_key, symbol, offset, flags, c0, c1, c2, c3, c4, c5, "
			     "c6, c7 FROM ", 120));
	/* sorted by time, equal times by CPU, streamed as TSV */
	p = strstr(b.s, "ORDER BY host, session, time_ns, cpu, tid FORMAT TabSeparated");
	assert_non_null(p);
	assert_string_equal(p + strlen("ORDER BY host, session, time_ns, cpu, tid FORMAT "
				       "TabSeparated"), "");
	/* the filter on the samples, twice (rows and keys); the binaries by
	 * host and session only */
	p = strstr(b.s, "host = 'h1' AND session = 3 AND pid = 7");
	assert_non_null(p);
	assert_non_null(strstr(p + 1, "host = 'h1' AND session = 3 AND pid = 7"));
	assert_non_null(strstr(b.s, "FROM binaries WHERE host = 'h1' AND session = 3 GROUP BY"));
	free(b.s);
}

static void side(const char *arg, const char *host, const char *want_host, int64_t want_id)
{
	struct error e = { "" };
	const char *h = NULL;
	size_t hl = 0;
	int64_t id = 0;

	assert_int_equal(fleetdiff_parse_side(arg, host, &h, &hl, &id, &e), 0);
	assert_int_equal(hl, strlen(want_host));
	assert_memory_equal(h, want_host, hl);
	assert_int_equal(id, want_id);
}

static void bad_side(const char *arg, const char *host, const char *msg)
{
	struct error e = { "" };
	const char *h = NULL;
	size_t hl = 0;
	int64_t id = 0;

	assert_int_equal(fleetdiff_parse_side(arg, host, &h, &hl, &id, &e), -1);
	assert_non_null(strstr(e.msg, msg));
}

static void test_parse_side(void **state)
{
	(void)state;
	side("12", "web1", "web1", 12);
	side("db-2:7", NULL, "db-2", 7);
	side("db-2:7", "web1", "db-2", 7);	/* HOST:ID wins over --host */
	side("a:b:9", NULL, "a:b", 9);		/* the last ':' splits */
	bad_side("12", NULL, "Give --host NAME, or HOST:ID");
	bad_side(":3", "h", "no host before ':'");
	bad_side("h:", "h", "bad session 'h:'");
	bad_side("h:0", "h", "bad session");
	bad_side("h:x1", "h", "bad session");
	bad_side("-1", "h", "bad session");
	bad_side("99999999999999999999", "h", "bad session");
}

/* The CSV row both exports write (exportcsv.h): numbers, empty NULLs,
 * the escaped fields as given, hex offset, the mode. */
static void test_csv_row(void **state)
{
	struct ob o = { 0 };
	char *out = NULL;
	size_t len = 0;
	const char *events[2] = { "page-faults", "a,b" };
	int64_t c[2] = { 7, 0 };
	struct exportcsv_row r = {
		.time_ns = 123456789012ULL, .tsc = 0, .tsc_null = 1, .cpu = 3, .pid = 42,
		.tid = 43, .offset = 0x1f30, .comm = "\"x,y\"", .lcomm = 5,
		.loc = "/bin/a,main", .lloc = 11, .build_id = "ab12", .lbuild_id = 4,
		.flags = STROBE_SAMPLE_KERNEL, .nev = 2, .c = c, .c_null = 2,
	};

	(void)state;
	o.cap = 8;	/* small: flushed and grown on the way */
	o.buf = malloc(o.cap);
	o.f = open_memstream(&out, &len);
	assert_non_null(o.f);
	exportcsv_header(&o, events, 2);
	ob_chr(&o, '\n');
	exportcsv_row(&o, &r);
	ob_chr(&o, '\n');
	r.tsc_null = 0;
	r.tsc = 99;
	r.offset = 0;
	r.c_null = 0;
	r.flags = STROBE_SAMPLE_USER;
	r.nev = 1;
	exportcsv_row(&o, &r);
	ob_flush(&o);
	assert_int_equal(o.err, 0);
	assert_int_equal(fclose(o.f), 0);
	assert_string_equal(out, "time_ns,tsc,cpu,pid,tid,comm,binary,symbol,page-faults,"
			    "\"a,b\",offset,mode,build_id\n"
			    "123456789012,,3,42,43,\"x,y\",/bin/a,main,7,,0x1f30,kernel,ab12\n"
			    "123456789012,99,3,42,43,\"x,y\",/bin/a,main,7,0x0,user,ab12");
	assert_string_equal(exportcsv_mode(STROBE_SAMPLE_GUEST), "guest");
	free(o.buf);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_where),
		cmocka_unit_test(test_sql),
		cmocka_unit_test(test_parse_side),
		cmocka_unit_test(test_csv_row),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
