/*
 * test_expr.c - metric expressions of 'strobe plot --metric' (lib/query/expr.c):
 * precedence and associativity, parentheses, unary minus, event names with
 * '-' '.' ':' and quoted names, division by zero as NaN, unknown names and
 * syntax errors reported with their column.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "expr.h"
#include "util.h"

/* The variables of the tests: name i has value vals[i]. */
static const char *const names[] = {
	"instructions", "cycles", "dTLB-load-misses", "page-faults", "samples",
	"sched:sched_switch", "msr/tsc/", "a", "b", "c", "a-b",
};
static const double vals[] = { 1000, 500, 7, 30, 10, 4, 12, 2, 3, 4, 100 };

static int lookup(void *ctx, const char *name)
{
	(void)ctx;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcasecmp(names[i], name))
			return (int)i;
	return -1;
}

/* Parse, bind and evaluate src; fails the test on any error. */
static double eval(const char *src)
{
	struct error e = { "" };
	struct expr *x = expr_parse(src, &e);
	double v;

	if (!x)
		fail_msg("'%s': %s", src, e.msg);
	if (expr_bind(x, lookup, NULL, &e) < 0)
		fail_msg("'%s': %s", src, e.msg);
	v = expr_eval(x, vals);
	expr_free(x);
	return v;
}

/* src must fail to parse (or to bind) with a message containing want. */
static void bad(const char *src, const char *want)
{
	struct error e = { "" };
	struct expr *x = expr_parse(src, &e);

	if (x) {
		int r = expr_bind(x, lookup, NULL, &e);

		expr_free(x);
		if (r == 0)
			fail_msg("'%s' was accepted", src);
	}
	if (!strstr(e.msg, want))
		fail_msg("'%s': message '%s' does not contain '%s'", src, e.msg, want);
}

static void test_numbers(void **state)
{
	assert_true(eval("42") == 42);
	assert_true(eval("1.5") == 1.5);
	assert_true(eval(".25") == 0.25);
	assert_true(eval("1e3") == 1000);
	assert_true(eval("2.5E-1") == 0.25);
	assert_true(eval("  7  ") == 7);
}

static void test_precedence(void **state)
{
	assert_true(eval("1+2*3") == 7);
	assert_true(eval("2*3+1") == 7);
	assert_true(eval("1 + 6 / 3") == 3);
	assert_true(eval("8/4/2") == 1);		/* left associative */
	assert_true(eval("2 - 3 - 4") == -5);
	assert_true(eval("2 * 3 / 4") == 1.5);
	assert_true(eval("-2*3") == -6);
	assert_true(eval("-a * b") == -6);
	assert_true(eval("a - -b") == 5);
	assert_true(eval("+a") == 2);
	assert_true(eval("- -a") == 2);
	assert_true(eval("a + b * c") == 14);
}

static void test_parens(void **state)
{
	assert_true(eval("(1+2)*3") == 9);
	assert_true(eval("a * (b + c)") == 14);
	assert_true(eval("((a))") == 2);
	assert_true(eval("(a + b) / (c - a)") == 2.5);
	assert_true(eval("-(a + b)") == -5);
}

static void test_names(void **state)
{
	assert_true(eval("instructions/cycles") == 2);
	assert_true(eval("1000*dTLB-load-misses/instructions") == 7);
	assert_true(eval("page-faults/samples") == 3);
	assert_true(eval("sched:sched_switch * 2") == 8);
	assert_true(eval("\"msr/tsc/\" / cycles") == 12.0 / 500);
	assert_true(eval("PAGE-FAULTS") == 30);		/* the lookup decides case */
	/* '-' after a name character is part of the name; a space makes a minus */
	assert_true(eval("a-b") == 100);
	assert_true(eval("a - b") == -1);
	assert_true(eval("a -b") == -1);
	assert_true(eval("a- b") == -1);		/* a trailing '-' is not in a name */
	assert_true(eval("\"a\"-b") == -1);		/* nor after a quoted name */
	assert_true(eval("(a)-b") == -1);
	assert_true(eval("2-a") == 0);
}

static void test_names_listed(void **state)
{
	struct error e = { "" };
	struct expr *x = expr_parse("1000 * cache-misses / (instructions + \"msr/tsc/\")", &e);

	assert_non_null(x);
	assert_int_equal(expr_nnames(x), 3);
	assert_string_equal(expr_name(x, 0), "cache-misses");
	assert_int_equal(expr_name_column(x, 0), 8);
	assert_string_equal(expr_name(x, 1), "instructions");
	assert_int_equal(expr_name_column(x, 1), 24);
	assert_string_equal(expr_name(x, 2), "msr/tsc/");
	assert_int_equal(expr_name_column(x, 2), 39);
	assert_null(expr_name(x, 3));
	expr_free(x);
}

static void test_division_by_zero(void **state)
{
	assert_true(isnan(eval("a / 0")));
	assert_true(isnan(eval("0 / 0")));
	assert_true(isnan(eval("a / (b - 3)")));
	assert_true(isnan(eval("1 + a / 0")));		/* NaN propagates */
	assert_true(isnan(eval("(a / 0) * 0")));
	assert_true(eval("0 / a") == 0);
}

static void test_unknown_names(void **state)
{
	bad("instructions / cylces", "unknown name 'cylces' at column 16");
	bad("nope", "unknown name 'nope' at column 1");
	bad("a-c", "unknown name 'a-c' at column 1");
	bad("a-c", "write a minus with spaces");
	bad("\"msr/nope/\" * 2", "unknown name 'msr/nope/' at column 1");
}

static void test_syntax_errors(void **state)
{
	bad("", "column 1: empty expression");
	bad("   ", "column 4: empty expression");
	bad("a +", "column 4: expected a number, an event name or '(', found the end");
	bad("a * / b", "column 5: expected a number, an event name or '(', found '/'");
	bad("(a + b", "column 7: expected ')' to close the '(' at column 1, found the end");
	bad("a + b)", "column 6: unexpected ')'");
	bad("a b", "column 3: expected an operator (+ - * /) or the end, found 'b'");
	bad("2 3", "column 3: expected an operator");
	bad("a % b", "column 3: unexpected character '%'");
	bad("msr/tsc/ * 1", "column 10: expected a number, an event name or '(', found '*'");
	bad("msr/tsc/ + 1", "unknown name 'msr' at column 1");
	bad("\"abc", "column 1: unterminated quoted name");
	bad("\"\" + 1", "column 1: empty quoted name");
	bad("1000cache", "column 1: bad number");
	bad("()", "column 2: expected a number");
	bad("a * (b + c))", "column 12: unexpected ')'");
}

static void test_deep(void **state)
{
	char src[4096];
	size_t n = 0;
	int i;

	/* deeper than expr_eval's stack on the stack */
	for (i = 0; i < 100; i++)
		n += (size_t)snprintf(src + n, sizeof(src) - n, "(1+");
	n += (size_t)snprintf(src + n, sizeof(src) - n, "1");
	for (i = 0; i < 100; i++)
		n += (size_t)snprintf(src + n, sizeof(src) - n, ")");
	assert_true(eval(src) == 101);
}

/* Nesting is bounded (the parser recurses): a 1 MB argument of '(' or
 * '-' is a syntax error, not a stack overflow (found by fuzz_expr;
 * tests/fuzz/corpus/expr/crash-deep-nesting).  256 levels are fine. */
static void test_too_deep(void **state)
{
	size_t n = 1 << 20, i;
	char *src = xmalloc(n + 2);

	memset(src, '(', n);
	src[n] = 0;
	bad(src, "column 257: nested too deeply (more than 256 levels");
	memset(src, '-', n);
	src[n] = '1';
	src[n + 1] = 0;
	bad(src, "column 257: nested too deeply");
	/* 256 levels: "-(-(...-(1)...))" */
	for (i = 0; i < 256; i += 2)
		memcpy(src + i, "-(", 2);
	src[256] = '1';
	memset(src + 257, ')', 128);
	src[257 + 128] = 0;
	assert_true(eval(src) == 1);
	/* one more: "((-(...1" fails at its 257th */
	memmove(src + 1, src, 257 + 128 + 1);
	src[0] = '(';
	bad(src, "column 257: nested too deeply");
	free(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_parens),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_names_listed),
		cmocka_unit_test(test_division_by_zero),
		cmocka_unit_test(test_unknown_names),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_deep),
		cmocka_unit_test(test_too_deep),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
