/*
 * test_diff.c - lib/query/diff.c, two sessions' rows compared, on rows
 * built here (no database): the noise rule at and around its bound
 * (worked by hand), rows matched by name only (two builds of one path are
 * one row, a name in one session only gets 0 in the other), events
 * matched by name whatever their column order, --by binary and --by line
 * keys, the order by |delta| with ties by name, rows read from a table of
 * report_build()'s columns, and the table's columns in CSV and text.
 */
#include "config.h"
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "diff.h"

static void test_noise_rule(void **state)
{
	(void)state;
	/* equal n of 10000, p = 0.5: se = sqrt(0.25 * 2e-4) = 0.0070711,
	 * the bound 1.4142 points */
	assert_true(diff_within_noise(49.3, 10000, 50.7, 10000));	/* 1.40 */
	assert_false(diff_within_noise(49.29, 10000, 50.71, 10000));	/* 1.42 */
	assert_true(diff_within_noise(50.7, 10000, 49.3, 10000));	/* symmetric */
	assert_false(diff_within_noise(50.71, 10000, 49.29, 10000));
	/* n 100 and 400, 20% and 30%: p = 0.28, se = sqrt(0.2016 * 0.0125)
	 * = 0.050200, bound 10.040 points */
	assert_true(diff_within_noise(20, 100, 30, 400));
	assert_true(diff_within_noise(20, 100, 30.03, 400));
	/* 30.1%: p = 0.2808, se = 0.050243, bound 10.049 < 10.1 */
	assert_false(diff_within_noise(20, 100, 30.1, 400));
	/* the same share is always within noise, 0 and 100 included */
	assert_true(diff_within_noise(0, 50, 0, 70));
	assert_true(diff_within_noise(100, 50, 100, 70));
	assert_true(diff_within_noise(60, 3000, 60, 3000));
	/* more samples: the same 2 points go from noise to a difference */
	assert_true(diff_within_noise(60, 2000, 62, 2000));	/* bound 3.07 */
	assert_false(diff_within_noise(60, 20000, 62, 20000));	/* bound 0.97 */
	/* no samples on a side: nothing is within noise */
	assert_false(diff_within_noise(0, 0, 10, 100));
	assert_false(diff_within_noise(10, 100, 10, 0));
}

static const struct diff_row *find(const struct diff *d, const char *bin, const char *sym,
				   const char *src)
{
	const struct diff_row *hit = NULL;

	for (size_t i = 0; i < d->n; i++) {
		const struct diff_row *r = &d->rows[i];

		if (strcmp(r->binary, bin) || (sym ? !r->symbol || strcmp(r->symbol, sym) :
					       r->symbol != NULL) ||
		    (src ? !r->source || strcmp(r->source, src) : r->source != NULL))
			continue;
		assert_null(hit);	/* one row per name */
		hit = r;
	}
	assert_non_null(hit);
	return hit;
}

static const char *const ev_a[] = { "page-faults", "cycles", "only-a" };
static const char *const ev_b[] = { "only-b", "cycles", "page-faults" };

static struct diff *fixture(enum report_by by)
{
	struct diff *d = diff_new(by, ev_a, 3, ev_b, 3);
	/* counts in each session's own event order */
	const uint64_t a1[] = { 10, 1000, 7 }, a2[] = { 5, 500, 7 }, a3[] = { 1, 100, 7 };
	const uint64_t b1[] = { 9, 800, 4 }, b2[] = { 9, 300, 2 }, b3[] = { 9, 200, 1 };
	const uint64_t b4[] = { 9, 250, 3 };

	diff_add(d, 0, "/bin/p", "f", "p.c:10", 600, 60, a1);
	diff_add(d, 0, "/bin/p", "g", "p.c:20", 300, 30, a2);
	diff_add(d, 0, "/lib/l.so", "f", "l.c:5", 100, 10, a3);
	diff_add(d, 1, "/bin/p", "g", "p.c:20", 500, 50, b1);
	/* f in two rows of B (two builds of /bin/p, or two processes) */
	diff_add(d, 1, "/bin/p", "f", "p.c:10", 150, 15, b2);
	diff_add(d, 1, "/bin/p", "f", "p.c:11", 100, 10, b3);
	diff_add(d, 1, "/bin/q", "h", "q.c:1", 250, 25, b4);
	diff_finish(d, 1000, 1000);
	return d;
}

static void test_events_by_name(void **state)
{
	struct diff *d = diff_new(REPORT_BY_SYMBOL, ev_a, 3, ev_b, 3);

	(void)state;
	assert_int_equal(d->nev, 2);		/* A's order; only-a, only-b left out */
	assert_string_equal(d->evname[0], "page-faults");
	assert_string_equal(d->evname[1], "cycles");
	assert_int_equal(d->evcol[0][0], 0);
	assert_int_equal(d->evcol[1][0], 2);
	assert_int_equal(d->evcol[0][1], 1);
	assert_int_equal(d->evcol[1][1], 1);
	diff_free(d);
	d = diff_new(REPORT_BY_SYMBOL, ev_a, 3, NULL, 0);
	assert_int_equal(d->nev, 0);
	diff_free(d);
}

static void test_match_by_symbol(void **state)
{
	struct diff *d = fixture(REPORT_BY_SYMBOL);
	const struct diff_row *r;

	(void)state;
	assert_int_equal(d->n, 4);
	/* sorted by |delta|: f -35, h +25, g +20, l.so's f -10 */
	assert_string_equal(d->rows[0].symbol, "f");
	assert_string_equal(d->rows[0].binary, "/bin/p");
	assert_string_equal(d->rows[1].symbol, "h");
	assert_string_equal(d->rows[2].symbol, "g");
	assert_string_equal(d->rows[3].binary, "/lib/l.so");
	for (size_t i = 0; i < d->n; i++)
		assert_null(d->rows[i].source);

	r = find(d, "/bin/p", "f", NULL);	/* B's two rows are one */
	assert_int_equal(r->samples[0], 600);
	assert_int_equal(r->samples[1], 250);
	assert_true(fabs(r->percent[1] - 25) < 1e-9);
	assert_true(fabs(r->delta + 35) < 1e-9);
	assert_false(r->within_noise);
	assert_int_equal(r->ev[0][0], 10);	/* page-faults */
	assert_int_equal(r->ev[1][0], 2 + 1);
	assert_int_equal(r->ev[0][1], 1000);	/* cycles */
	assert_int_equal(r->ev[1][1], 300 + 200);

	r = find(d, "/bin/q", "h", NULL);	/* in B only */
	assert_int_equal(r->samples[0], 0);
	assert_true(r->percent[0] == 0);
	assert_true(fabs(r->delta - 25) < 1e-9);
	assert_int_equal(r->ev[0][1], 0);
	assert_int_equal(r->ev[1][1], 250);

	r = find(d, "/lib/l.so", "f", NULL);	/* in A only: not /bin/p's f */
	assert_int_equal(r->samples[1], 0);
	assert_true(fabs(r->delta + 10) < 1e-9);
	diff_free(d);
}

static void test_match_by_binary_and_line(void **state)
{
	struct diff *d = fixture(REPORT_BY_BINARY);
	const struct diff_row *r;

	(void)state;
	assert_int_equal(d->n, 3);
	r = find(d, "/bin/p", NULL, NULL);	/* f and g together */
	assert_int_equal(r->samples[0], 900);
	assert_int_equal(r->samples[1], 750);
	assert_true(fabs(r->delta + 15) < 1e-9);
	assert_int_equal(r->ev[1][1], 800 + 300 + 200);
	find(d, "/bin/q", NULL, NULL);
	find(d, "/lib/l.so", NULL, NULL);
	diff_free(d);

	d = fixture(REPORT_BY_LINE);		/* p.c:11 apart from p.c:10 */
	assert_int_equal(d->n, 5);
	r = find(d, "/bin/p", "f", "p.c:10");
	assert_int_equal(r->samples[0], 600);
	assert_int_equal(r->samples[1], 150);
	r = find(d, "/bin/p", "f", "p.c:11");
	assert_int_equal(r->samples[0], 0);
	assert_int_equal(r->samples[1], 100);
	diff_free(d);
}

static void test_order_and_noise(void **state)
{
	struct diff *d = diff_new(REPORT_BY_SYMBOL, NULL, 0, NULL, 0);

	(void)state;
	/* equal |delta| sorts by name; the noise mark from the totals */
	diff_add(d, 0, "/b", "z", NULL, 500, 50, NULL);
	diff_add(d, 1, "/b", "z", NULL, 510, 51, NULL);
	diff_add(d, 0, "/a", "y", NULL, 500, 50, NULL);
	diff_add(d, 1, "/a", "y", NULL, 490, 49, NULL);
	diff_add(d, 0, "/a", "x", NULL, 0, 0, NULL);
	diff_add(d, 1, "/a", "x", NULL, 0, 0, NULL);
	diff_finish(d, 1000, 1000);
	assert_int_equal(d->n, 3);
	assert_string_equal(d->rows[0].binary, "/a");
	assert_string_equal(d->rows[0].symbol, "y");
	assert_string_equal(d->rows[1].binary, "/b");
	assert_string_equal(d->rows[2].symbol, "x");
	assert_true(d->rows[0].within_noise);	/* 1 point of 1000 samples */
	assert_true(d->rows[2].within_noise);
	/* the same shares of 100 times the samples: outside noise */
	d->sorted = 0;
	diff_finish(d, 100000, 100000);
	assert_false(d->rows[0].within_noise);
	assert_false(d->rows[1].within_noise);
	assert_true(d->rows[2].within_noise);	/* 0 and 0 */
	diff_free(d);
}

/* A table with report_build()'s columns for --by symbol. */
static struct table *report_like(const char *const *bid, const char *const *sym,
				 const int64_t *n, const double *pct, const int64_t *ev, size_t rows)
{
	struct table *t = table_new();
	int cb = table_add_col(t, "binary", COL_STR), ci = table_add_col(t, "build_id", COL_STR);
	int cs = table_add_col(t, "symbol", COL_STR), cn = table_add_col(t, "samples", COL_INT);
	int cp = table_add_col(t, "percent", COL_PCT), ce = table_add_col(t, "page-faults", COL_INT);
	int cm = table_add_col(t, "page-faults_per_1k_instructions", COL_FLOAT);

	for (size_t i = 0; i < rows; i++) {
		size_t r = table_add_row(t);

		table_set_str(t, r, cb, "/bin/p");
		table_set_str(t, r, ci, bid[i]);
		table_set_str(t, r, cs, sym[i]);
		table_set_int(t, r, cn, n[i]);
		table_set_float(t, r, cp, pct[i]);
		table_set_int(t, r, ce, ev[i]);
		table_set_float(t, r, cm, 99.5);	/* a metric: not an event */
	}
	return t;
}

static char *render(const struct table *t, enum output_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(table_write(t, fmt, f), 0);
	fclose(f);
	return buf;
}

static void test_from_report_tables(void **state)
{
	static const char *const ev[] = { "page-faults" };
	static const char *const bid_a[] = { "aaaa", "aaaa" }, *const bid_b[] = { "bbbb", "cccc" };
	static const char *const sym_a[] = { "work60", "work30" }, *const sym_b[] = { "work30", "work60" };
	static const int64_t n_a[] = { 600, 400 }, n_b[] = { 600, 400 };
	static const double p_a[] = { 60, 40 }, p_b[] = { 60, 40 };
	static const int64_t e_a[] = { 6, 4 }, e_b[] = { 16, 14 };
	struct table *ta = report_like(bid_a, sym_a, n_a, p_a, e_a, 2);
	struct table *tb = report_like(bid_b, sym_b, n_b, p_b, e_b, 2);
	struct diff *d = diff_new(REPORT_BY_SYMBOL, ev, 1, ev, 1);
	struct error e = { "" };
	const struct diff_row *r;
	struct table *t;
	char *csv, *txt, *line;

	(void)state;
	assert_int_equal(diff_add_report(d, 0, ta, &e), 0);
	assert_int_equal(diff_add_report(d, 1, tb, &e), 0);
	diff_finish(d, 1000, 1000);
	assert_int_equal(d->n, 2);		/* other build-ids, same names */
	r = find(d, "/bin/p", "work60", NULL);
	assert_int_equal(r->samples[0], 600);
	assert_int_equal(r->samples[1], 400);
	assert_int_equal(r->ev[0][0], 6);
	assert_int_equal(r->ev[1][0], 14);
	assert_true(fabs(r->delta + 20) < 1e-9);

	t = diff_table(d, NULL, OUTPUT_CSV, 0);
	csv = render(t, OUTPUT_CSV);
	line = strtok(csv, "\r\n");
	assert_string_equal(line, "binary,symbol,a_samples,b_samples,a_percent,b_percent,"
			    "delta_percent,within_noise,a_page-faults,b_page-faults,"
			    "delta_page-faults");
	line = strtok(NULL, "\r\n");		/* ties by name: work30 first */
	assert_string_equal(line, "/bin/p,work30,400,600,40.00,60.00,20.00,0,4,16,12");
	line = strtok(NULL, "\r\n");
	assert_string_equal(line, "/bin/p,work60,600,400,60.00,40.00,-20.00,0,6,14,8");
	assert_null(strtok(NULL, "\r\n"));
	free(csv);
	table_free(t);

	t = diff_table(d, NULL, OUTPUT_CSV, 1);	/* --limit 1 */
	assert_int_equal(table_rows(t), 1);
	table_free(t);

	d->total[0] = d->total[1] = 10;		/* noise shows as ~ in text */
	d->rows[0].within_noise = 1;
	t = diff_table(d, NULL, OUTPUT_TEXT, 0);
	assert_int_equal(table_col(t, "within_noise"), -1);
	txt = render(t, OUTPUT_TEXT);
	assert_non_null(strstr(txt, "noise"));
	line = strstr(txt, "work30");
	assert_non_null(line);
	assert_non_null(strchr(line, '~'));
	assert_null(strchr(strstr(txt, "work60"), '~'));
	free(txt);
	table_free(t);

	diff_free(d);
	table_free(ta);
	table_free(tb);
}

static void test_table_by_binary_and_line(void **state)
{
	struct diff *d = fixture(REPORT_BY_BINARY);
	struct table *t = diff_table(d, NULL, OUTPUT_CSV, 0);
	const char *s;

	(void)state;
	/* --by binary keeps the symbol column, null */
	assert_int_equal(table_col(t, "symbol"), 1);
	assert_int_equal(table_get_str(t, 0, 1, &s), -1);
	assert_int_equal(table_col(t, "source"), -1);
	table_free(t);
	diff_free(d);

	d = fixture(REPORT_BY_LINE);		/* source last */
	t = diff_table(d, NULL, OUTPUT_JSON, 0);
	assert_int_equal(table_col(t, "within_noise"), 7);
	assert_int_equal(table_col(t, "delta_cycles"), 13);
	assert_int_equal(table_col(t, "source"), 14);
	table_free(t);
	diff_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_noise_rule),
		cmocka_unit_test(test_events_by_name),
		cmocka_unit_test(test_match_by_symbol),
		cmocka_unit_test(test_match_by_binary_and_line),
		cmocka_unit_test(test_order_and_noise),
		cmocka_unit_test(test_from_report_tables),
		cmocka_unit_test(test_table_by_binary_and_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
