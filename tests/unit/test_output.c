/*
 * test_output.c - lib/query/output.c: exact text, CSV and JSON renderings of
 * small tables, and JSON that a real parser accepts; lib/base/util.c's CSV
 * formula guard, gnuplot string quoting and text for a terminal.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "output.h"
#include "util.h"

/* Render t in fmt to a malloc'd string. */
static char *render(const struct table *t, enum output_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(table_write(t, fmt, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(buf);
	assert_int_equal(strlen(buf), len);
	return buf;
}

static void check(const struct table *t, enum output_format fmt, const char *want)
{
	char *got = render(t, fmt);

	if (strcmp(got, want))
		print_error("--- want\n%s--- got\n%s---\n", want, got);
	assert_string_equal(got, want);
	free(got);
}

/* 0 if python3 parses s as JSON, 1 if it does not, -1 without python3. */
static int python_json_ok(const char *s)
{
	FILE *p = popen("python3 -c 'import json,sys; json.load(sys.stdin)' 2>/dev/null", "w");
	int st;

	if (!p)
		return -1;
	fputs(s, p);
	st = pclose(p);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) == 127)
		return -1;
	return WEXITSTATUS(st) == 0 ? 0 : 1;
}

static void check_valid_json(const struct table *t)
{
	char *got = render(t, OUTPUT_JSON);
	int r = python_json_ok(got);

	if (r < 0) {
		free(got);
		skip();
	}
	if (r)
		print_error("invalid JSON:\n%s", got);
	assert_int_equal(r, 0);
	free(got);
}

/* A report-like table: symbol, samples, percent, ms. */
static struct table *sample_table(void)
{
	struct table *t = table_new();
	int csym = table_add_col(t, "symbol", COL_STR);
	int cn = table_add_col(t, "samples", COL_INT);
	int cp = table_add_col(t, "pct", COL_PCT);
	int cms = table_add_col(t, "ms", COL_FLOAT);
	size_t r;

	r = table_add_row(t);
	table_set_str(t, r, csym, "work60");
	table_set_int(t, r, cn, 6012);
	table_set_float(t, r, cp, 60.123);
	table_set_float(t, r, cms, 3006.5);
	r = table_add_row(t);
	table_set_str(t, r, csym, "work30");
	table_set_int(t, r, cn, 3001);
	table_set_float(t, r, cp, 30.0);
	table_set_float(t, r, cms, 1500.25);
	r = table_add_row(t);
	table_set_str(t, r, csym, "[unknown]");
	table_set_int(t, r, cn, -7);
	/* pct and ms left null */
	return t;
}

static void test_parse_format(void **state)
{
	enum output_format f = OUTPUT_JSON;

	(void)state;
	assert_int_equal(output_parse_format("text", &f), 0);
	assert_int_equal(f, OUTPUT_TEXT);
	assert_int_equal(output_parse_format("csv", &f), 0);
	assert_int_equal(f, OUTPUT_CSV);
	assert_int_equal(output_parse_format("json", &f), 0);
	assert_int_equal(f, OUTPUT_JSON);
	f = OUTPUT_CSV;
	assert_int_equal(output_parse_format("xml", &f), -1);
	assert_int_equal(output_parse_format("", &f), -1);
	assert_int_equal(output_parse_format("jsonx", &f), -1);
	assert_int_equal(output_parse_format("tex", &f), -1);
	assert_int_equal(output_parse_format(NULL, &f), -1);
	assert_int_equal(f, OUTPUT_CSV);	/* untouched on failure */
}

static void test_text(void **state)
{
	struct table *t = sample_table();

	(void)state;
	assert_int_equal(table_rows(t), 3);
	check(t, OUTPUT_TEXT,
	      "symbol     samples     pct       ms\n"
	      "work60        6012  60.12%  3006.50\n"
	      "work30        3001  30.00%  1500.25\n"
	      "[unknown]       -7\n");
	table_free(t);
}

static void test_text_last_col_string(void **state)
{
	struct table *t = table_new();
	int cn = table_add_col(t, "n", COL_INT);
	int cs = table_add_col(t, "name", COL_STR);
	size_t r;

	(void)state;
	r = table_add_row(t);
	table_set_int(t, r, cn, 1234567);
	table_set_str(t, r, cs, "a");
	r = table_add_row(t);
	table_set_int(t, r, cn, 1);
	table_set_str(t, r, cs, "longer name");
	r = table_add_row(t);		/* null string in the last column */
	table_set_int(t, r, cn, 2);
	r = table_add_row(t);		/* entirely null row: empty line */
	r = table_add_row(t);		/* UTF-8 counts characters; controls shown as ? */
	table_set_int(t, r, cn, 3);
	table_set_str(t, r, cs, "caf\xc3\xa9\tx\ny");
	check(t, OUTPUT_TEXT,
	      "      n  name\n"
	      "1234567  a\n"
	      "      1  longer name\n"
	      "      2\n"
	      "\n"
	      "      3  caf\xc3\xa9?x?y\n");
	table_free(t);
}

/*
 * Text for a terminal (text_escape, text_sanitize, text_write_string, the
 * text table, error messages): what a terminal would obey shows as '?',
 * printable UTF-8 stays.  The hostile strings are those issue 30 saw in
 * root's report: an OSC title (ESC ] 0 ; ... BEL), a clear screen
 * (ESC [ 2 J), a forged "# note:" line, and the C1 CSI both as UTF-8 and as
 * the lone byte an 8-bit terminal obeys.
 */
static void test_text_escape(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "plain /usr/lib/x.so", "plain /usr/lib/x.so" },
		{ "\x1b]0;owned\x07x", "?]0;owned?x" },
		{ "\x1b[2Jclear", "?[2Jclear" },
		{ "a\n# note: forged\r", "a?# note: forged?" },
		{ "csi\xc2\x9b" "31m", "csi?31m" },	/* U+009B in UTF-8: one '?' */
		{ "csi\x9b" "31m", "csi?31m" },		/* the lone 8-bit CSI */
		{ "del\x7f", "del?" },
		{ "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80" },
		{ "nbsp\xc2\xa0", "nbsp\xc2\xa0" },	/* U+00A0: the first after C1 */
		{ "rlo\xe2\x80\xae" "cod.exe", "rlo?cod.exe" },	/* U+202E */
		{ "ls\xe2\x80\xa8x", "ls?x" },		/* U+2028 */
		{ "bad\xc0\xaf", "bad??" },		/* overlong */
		{ "sur\xed\xa0\x80", "sur???" },	/* a surrogate */
		{ "cut\xe6\x97", "cut??" },		/* cut in a character */
		{ "", "" },
	};
	char buf[64], *s;
	char *mem = NULL;
	size_t len = 0;
	struct error e;
	FILE *f;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_string_equal(text_escape(buf, sizeof(buf), cases[i].in), cases[i].want);
		s = xstrdup(cases[i].in);
		text_sanitize(s);
		assert_string_equal(s, cases[i].want);
		free(s);
		f = open_memstream(&mem, &len);
		assert_non_null(f);
		text_write_string(f, cases[i].in);
		assert_int_equal(fclose(f), 0);
		assert_string_equal(mem, cases[i].want);
		free(mem);
		mem = NULL;
		assert_string_equal(TEXT_SAFE(cases[i].in), cases[i].want);
	}
	/* cut at a character, never inside one, always terminated */
	assert_string_equal(text_escape(buf, 5, "ab\xe6\x97\xa5"), "ab");
	assert_string_equal(text_escape(buf, 6, "ab\xe6\x97\xa5"), "ab\xe6\x97\xa5");
	assert_string_equal(text_escape(buf, 3, "\x1b\x1b\x1b"), "??");
	assert_string_equal(TEXT_SAFE(NULL), "");
	/* every error message is one line of text */
	error_set(&e, "cannot open %s: %s", "/tmp/\x1b]0;x\x07\n# note: y", "no");
	assert_string_equal(e.msg, "cannot open /tmp/?]0;x??# note: y: no");
	error_prefix(&e, "binary %s", "\x9b" "2J");
	assert_string_equal(e.msg, "binary ?2J: cannot open /tmp/?]0;x??# note: y: no");
}

/* A table cell keeps its row and its width: one '?' a character */
static void test_text_cell_escape(void **state)
{
	struct table *t = table_new();
	int cs = table_add_col(t, "name", COL_STR);
	int cn = table_add_col(t, "n", COL_INT);
	size_t r;

	(void)state;
	r = table_add_row(t);
	table_set_str(t, r, cs, "\x1b]0;t\x07\xc2\x9b\x9b");
	table_set_int(t, r, cn, 1);
	r = table_add_row(t);
	table_set_str(t, r, cs, "abcdefghi");
	table_set_int(t, r, cn, 2);
	check(t, OUTPUT_TEXT,
	      "name       n\n"
	      "?]0;t???   1\n"
	      "abcdefghi  2\n");
	table_free(t);
}

static void test_text_alignment(void **state)
{
	struct table *t = table_new();
	int ca = table_add_col(t, "a", COL_STR);
	int cb = table_add_col(t, "b", COL_STR);
	int cc = table_add_col(t, "caf\xc3\xa9", COL_FLOAT);
	size_t r;

	(void)state;
	r = table_add_row(t);
	table_set_str(t, r, ca, "\xc3\xa9\xc3\xa9");
	table_set_str(t, r, cb, "xyz");
	table_set_float(t, r, cc, 1.0 / 3);
	r = table_add_row(t);
	table_set_str(t, r, ca, "abc");
	table_set_float(t, r, cc, -2.5);
	r = table_add_row(t);
	table_set_str(t, r, cb, "q");
	table_set_float(t, r, cc, NAN);
	check(t, OUTPUT_TEXT,
	      "a    b     caf\xc3\xa9\n"
	      "\xc3\xa9\xc3\xa9   xyz   0.33\n"
	      "abc       -2.50\n"
	      "     q\n");
	table_free(t);
}

static void test_text_no_rows(void **state)
{
	struct table *t = table_new();

	(void)state;
	check(t, OUTPUT_TEXT, "");	/* no columns: nothing */
	table_add_col(t, "name", COL_STR);
	table_add_col(t, "count", COL_INT);
	check(t, OUTPUT_TEXT, "name  count\n");
	table_free(t);
}

static void test_csv(void **state)
{
	struct table *t = sample_table();
	size_t r;

	(void)state;
	check(t, OUTPUT_CSV,
	      "symbol,samples,pct,ms\n"
	      "work60,6012,60.12,3006.5\n"
	      "work30,3001,30.00,1500.25\n"
	      "[unknown],-7,,\n");
	r = table_add_row(t);
	table_set_str(t, r, 0, "a,b \"c\"\nd");
	table_set_int(t, r, 1, INT64_MAX);
	table_set_float(t, r, 2, INFINITY);
	table_set_float(t, r, 3, 0.1);
	check(t, OUTPUT_CSV,
	      "symbol,samples,pct,ms\n"
	      "work60,6012,60.12,3006.5\n"
	      "work30,3001,30.00,1500.25\n"
	      "[unknown],-7,,\n"
	      "\"a,b \"\"c\"\"\nd\",9223372036854775807,,0.1\n");
	table_free(t);
}

static void test_csv_header_quoting(void **state)
{
	struct table *t = table_new();
	size_t r;

	(void)state;
	table_add_col(t, "x,y", COL_STR);
	table_add_col(t, "say \"hi\"", COL_INT);
	check(t, OUTPUT_CSV, "\"x,y\",\"say \"\"hi\"\"\"\n");
	r = table_add_row(t);
	table_set_str(t, r, 0, "");
	check(t, OUTPUT_CSV, "\"x,y\",\"say \"\"hi\"\"\"\n,\n");
	table_free(t);
}

/* Text cells that a spreadsheet would take for a formula get a leading
 * quote; numbers, negative ones too, and the same bytes in a numeric
 * column do not. */
static void test_csv_formula_guard(void **state)
{
	static const char *const in[] = {
		"=1+2", "@SUM(A1)", "+x", "-y", "\tt", "\rr", "a=b", "'q", "",
	};
	struct table *t = table_new();
	size_t i, r;

	(void)state;
	table_add_col(t, "comm", COL_STR);
	table_add_col(t, "pid", COL_INT);
	table_add_col(t, "v", COL_FLOAT);
	table_add_col(t, "-h", COL_STR);
	for (i = 0; i < ARRAY_SIZE(in); i++) {
		r = table_add_row(t);
		table_set_str(t, r, 0, in[i]);
		table_set_int(t, r, 1, -1);
		table_set_float(t, r, 2, -0.5);
		table_set_int(t, r, 3, -(int64_t)i);	/* a number in a text column */
	}
	check(t, OUTPUT_CSV,
	      "comm,pid,v,'-h\n"
	      "'=1+2,-1,-0.5,0\n"
	      "'@SUM(A1),-1,-0.5,-1\n"
	      "'+x,-1,-0.5,-2\n"
	      "'-y,-1,-0.5,-3\n"
	      "'\tt,-1,-0.5,-4\n"
	      "\"'\rr\",-1,-0.5,-5\n"
	      "a=b,-1,-0.5,-6\n"
	      "'q,-1,-0.5,-7\n"
	      ",-1,-0.5,-8\n");
	table_free(t);
}

static void test_csv_escape(void **state)
{
	static const struct {
		const char *in;
		int flags;
		const char *want;
	} cases[] = {
		{ "plain", CSV_TEXT, "plain" },
		{ "=x", 0, "=x" },
		{ "=x", CSV_TEXT, "'=x" },
		{ "-1", 0, "-1" },
		{ "-1", CSV_TEXT, "'-1" },
		{ "=a,\"b\"", CSV_TEXT, "\"'=a,\"\"b\"\"\"" },
		{ " x", CSV_TEXT, "\" x\"" },
		{ "\"\"", 0, "\"\"\"\"\"\"" },
		{ "", CSV_TEXT, "" },
	};
	char buf[64];
	size_t i, n;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		n = csv_escape(buf, cases[i].in, cases[i].flags);
		assert_true(n <= CSV_ESCAPE_MAX(strlen(cases[i].in)));
		buf[n] = 0;
		assert_string_equal(buf, cases[i].want);
	}
}

static char *gp(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	gnuplot_write_string(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* Single-quoted constants only: backquotes, $, @, backslashes and double
 * quotes stay as they are; a single quote is a "'" joined in; control
 * characters are spaces. */
static void test_gnuplot_string(void **state)
{
	static const char *const cases[][2] = {
		{ "", "''" },
		{ "`id>/tmp/P`", "'`id>/tmp/P`'" },
		{ "$(x) @m \\n \"q\"", "'$(x) @m \\n \"q\"'" },
		{ "a'b", "'a'.\"'\".'b'" },
		{ "''", "''.\"'\".''.\"'\".''" },
		{ "';!id #", "''.\"'\".';!id #'" },
		{ "a\nb\tc\rd\x7f", "'a b c d '" },
		{ "caf\xc3\xa9", "'caf\xc3\xa9'" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *got = gp(cases[i][0]);

		assert_string_equal(got, cases[i][1]);
		free(got);
	}
	{
		char *got = gp(NULL);

		assert_string_equal(got, "''");
		free(got);
	}
}

static void test_json(void **state)
{
	struct table *t = sample_table();

	(void)state;
	table_add_meta(t, "session", "s-1 \"quoted\"\\path\n", 0);
	table_add_meta(t, "samples", "9006", 1);
	table_add_meta(t, "duration_s", "3.5", 1);
	table_add_meta(t, "id", "0042", 0);
	check(t, OUTPUT_JSON,
	      "{\"meta\":{\"session\":\"s-1 \\\"quoted\\\"\\\\path\\n\",\"samples\":9006,"
	      "\"duration_s\":3.5,\"id\":\"0042\"},\n"
	      "\"rows\":[\n"
	      "{\"symbol\":\"work60\",\"samples\":6012,\"pct\":60.12,\"ms\":3006.5},\n"
	      "{\"symbol\":\"work30\",\"samples\":3001,\"pct\":30.00,\"ms\":1500.25},\n"
	      "{\"symbol\":\"[unknown]\",\"samples\":-7,\"pct\":null,\"ms\":null}\n"
	      "]}\n");
	check_valid_json(t);
	table_free(t);
}

static void test_json_numbers(void **state)
{
	struct table *t = table_new();
	int cf = table_add_col(t, "f", COL_FLOAT);
	int cp = table_add_col(t, "p", COL_PCT);
	int ci = table_add_col(t, "i", COL_INT);
	int cs = table_add_col(t, "s", COL_STR);
	size_t r;

	(void)state;
	r = table_add_row(t);
	table_set_float(t, r, cf, 123456789012.5);	/* %.6g would lose this */
	table_set_float(t, r, cp, 12.345678);
	table_set_int(t, r, ci, INT64_MIN);
	table_set_str(t, r, cs, "tab\there \x01 \xc3\xa9");
	r = table_add_row(t);
	table_set_float(t, r, cf, 0.1);
	table_set_float(t, r, cp, 100);
	table_set_float(t, r, ci, 2.5e20);		/* double in an int column */
	table_set_int(t, r, cs, 5);			/* int in a string column */
	r = table_add_row(t);
	table_set_float(t, r, cf, 3);			/* stays a float: 3.0 */
	table_set_int(t, r, cp, 7);
	table_set_float(t, r, cs, NAN);
	r = table_add_row(t);
	table_set_float(t, r, cf, NAN);
	table_set_float(t, r, cp, -INFINITY);
	table_set_float(t, r, ci, INFINITY);
	table_set_str(t, r, cs, "x");
	table_set_str(t, r, cs, NULL);			/* back to null */
	r = table_add_row(t);
	table_set_float(t, r, cf, 1e300);
	table_set_float(t, r, cp, 1.0 / 3);
	table_set_float(t, r, cf, 2.0 / 3);		/* overwrite */
	check(t, OUTPUT_JSON,
	      "{\"meta\":{},\n"
	      "\"rows\":[\n"
	      "{\"f\":123456789012.5,\"p\":12.35,\"i\":-9223372036854775808,"
	      "\"s\":\"tab\\there \\u0001 \xc3\xa9\"},\n"
	      "{\"f\":0.1,\"p\":100.00,\"i\":250000000000000000000,\"s\":\"5\"},\n"
	      "{\"f\":3.0,\"p\":7.00,\"i\":null,\"s\":null},\n"
	      "{\"f\":null,\"p\":null,\"i\":null,\"s\":null},\n"
	      "{\"f\":0.6666666666666666,\"p\":0.33,\"i\":null,\"s\":null}\n"
	      "]}\n");
	check_valid_json(t);
	table_free(t);
}

static void test_json_zero_rows(void **state)
{
	struct table *t = table_new();

	(void)state;
	check(t, OUTPUT_JSON, "{\"meta\":{},\n\"rows\":[\n]}\n");
	check_valid_json(t);
	table_add_col(t, "a", COL_INT);
	table_add_meta(t, "n", "0", 1);
	table_add_meta(t, "bad", "12abc", 1);	/* not a number: written as a string */
	table_add_meta(t, "nan", "nan", 1);
	table_add_meta(t, "n", "1e3", 1);	/* same key: replaced */
	check(t, OUTPUT_JSON,
	      "{\"meta\":{\"n\":1e3,\"bad\":\"12abc\",\"nan\":\"nan\"},\n"
	      "\"rows\":[\n"
	      "]}\n");
	check_valid_json(t);
	table_free(t);
}

static void test_col_added_after_rows(void **state)
{
	struct table *t = table_new();
	size_t r;
	int c2;

	(void)state;
	table_add_col(t, "a", COL_INT);
	r = table_add_row(t);
	table_set_int(t, r, 0, 1);
	table_add_row(t);
	c2 = table_add_col(t, "b", COL_STR);
	table_set_str(t, r, c2, "x");
	/* out of range: ignored */
	table_set_int(t, 99, 0, 5);
	table_set_int(t, r, 7, 5);
	table_set_int(t, r, -1, 5);
	check(t, OUTPUT_CSV, "a,b\n1,x\n,\n");
	check(t, OUTPUT_JSON,
	      "{\"meta\":{},\n\"rows\":[\n{\"a\":1,\"b\":\"x\"},\n{\"a\":null,\"b\":null}\n]}\n");
	check(t, OUTPUT_TEXT, "a  b\n1  x\n\n");
	table_free(t);
}

static void test_write_error(void **state)
{
	struct table *t = sample_table();
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f) {
		table_free(t);
		skip();
	}
	assert_int_equal(table_write(t, OUTPUT_TEXT, f), -1);
	fclose(f);
	table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_format),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_text_alignment),
		cmocka_unit_test(test_text_last_col_string),
		cmocka_unit_test(test_text_no_rows),
		cmocka_unit_test(test_text_escape),
		cmocka_unit_test(test_text_cell_escape),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_csv_header_quoting),
		cmocka_unit_test(test_csv_formula_guard),
		cmocka_unit_test(test_csv_escape),
		cmocka_unit_test(test_gnuplot_string),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_numbers),
		cmocka_unit_test(test_json_zero_rows),
		cmocka_unit_test(test_col_added_after_rows),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
