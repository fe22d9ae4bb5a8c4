/*
 * test_proto.c - the control protocol: encoding round trips for hostile
 * values, and every kind of malformed line the daemon must refuse.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "proto.h"

static void test_round_trip(void **state)
{
	struct proto_msg m, back;
	struct error e;
	char *line;

	proto_init(&m, "start");
	assert_int_equal(proto_add(&m, "events", "cycles,instructions"), 0);
	assert_int_equal(proto_add(&m, "name", "a b=c%d\n\te\x7f\xc3\xa9"), 0);
	assert_int_equal(proto_add(&m, "empty", ""), 0);
	assert_int_equal(proto_addf(&m, "freq", "%d", 1000), 0);
	line = proto_format(&m);
	/* one line, no raw spaces inside values */
	assert_non_null(strchr(line, '\n'));
	assert_true(strchr(line, '\n')[1] == 0);
	assert_string_equal(line, "start events=cycles,instructions name=a%20b%3Dc%25d%0A%09e%7F%C3%A9 "
			    "empty= freq=1000\n");
	assert_int_equal(proto_parse(line, &back, &e), 0);
	assert_string_equal(back.verb, "start");
	assert_int_equal(back.nr, 4);
	assert_string_equal(proto_get(&back, "name"), "a b=c%d\n\te\x7f\xc3\xa9");
	assert_string_equal(proto_get(&back, "events"), "cycles,instructions");
	assert_string_equal(proto_get(&back, "empty"), "");
	assert_null(proto_get(&back, "missing"));
	free(line);
	proto_free(&m);
	proto_free(&back);
}

static void test_verb_only(void **state)
{
	struct proto_msg m;
	struct error e;

	assert_int_equal(proto_parse("status\n", &m, &e), 0);
	assert_string_equal(m.verb, "status");
	assert_int_equal(m.nr, 0);
}

static void expect_bad(const char *line, const char *what)
{
	struct proto_msg m;
	struct error e = { "" };

	assert_int_equal(proto_parse(line, &m, &e), -1);
	assert_non_null(strstr(e.msg, "malformed request"));
	if (what)
		assert_non_null(strstr(e.msg, what));
}

static void test_malformed(void **state)
{
	char many[4096] = "start";
	char *huge;

	expect_bad("", NULL);
	expect_bad("\n", NULL);
	expect_bad(" start", NULL);
	expect_bad("START", NULL);			/* verbs are lower case */
	expect_bad("st\x01rt", NULL);
	expect_bad("start events", NULL);		/* no '=' */
	expect_bad("start =x", NULL);			/* empty key */
	expect_bad("start Key=x", NULL);
	expect_bad("start a=1  b=2", NULL);		/* empty field */
	expect_bad("start a=%zz", NULL);		/* bad escape */
	expect_bad("start a=%4", NULL);			/* short escape */
	expect_bad("start a=%00", NULL);		/* NUL inside a value */
	expect_bad("start a=x=y", NULL);		/* raw '=' in a value */
	expect_bad("start a=1 a=2", "duplicate");
	for (int i = 0; i < PROTO_MAX_FIELDS + 1; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), " k%d=v", i);
	expect_bad(many, "fields");
	huge = malloc(PROTO_MAX_LINE + 16);
	memset(huge, 'a', PROTO_MAX_LINE + 8);
	memcpy(huge, "start x=", 8);
	huge[PROTO_MAX_LINE + 8] = 0;
	expect_bad(huge, "longer");
	free(huge);
}

static void test_add_limits(void **state)
{
	struct proto_msg m;

	proto_init(&m, "x");
	assert_int_equal(proto_add(&m, "Bad", "v"), -1);
	assert_int_equal(proto_add(&m, "ok", "v"), 0);
	assert_int_equal(proto_add(&m, "ok", "again"), -1);
	for (int i = 1; i < PROTO_MAX_FIELDS; i++) {
		char k[16];

		snprintf(k, sizeof(k), "k%d", i);
		assert_int_equal(proto_add(&m, k, "v"), 0);
	}
	assert_int_equal(proto_add(&m, "full", "v"), -1);
	proto_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_verb_only),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_add_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
