/*
 * test_sessevent.c - the union of several sessions' events that the
 * fleet's report, plot and export build (lib/query/sessevent.c:
 * session_event_union, session_event_set): order of first appearance,
 * names matched exactly, a full union left as it is, a session's events
 * set from rows in any order.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include "sessevent.h"

static void test_union(void **state)
{
	struct db_session u;
	char name[32];

	(void)state;
	memset(&u, 0, sizeof(u));
	assert_int_equal(session_event_union(&u, "instructions"), 0);
	assert_int_equal(session_event_union(&u, "cycles"), 1);
	assert_int_equal(session_event_union(&u, "instructions"), 0);	/* found */
	assert_int_equal(session_event_union(&u, "Cycles"), 2);		/* exact */
	assert_int_equal(session_event_union(&u, "cpu-cycles"), 3);	/* no alias */
	assert_int_equal(u.nr_events, 4);
	assert_string_equal(u.events[0].name, "instructions");
	assert_string_equal(u.events[1].name, "cycles");
	assert_string_equal(u.events[2].name, "Cycles");
	assert_string_equal(u.events[3].name, "cpu-cycles");
	for (int i = 4; i < STROBE_MAX_COUNTERS; i++) {
		snprintf(name, sizeof(name), "ev%d", i);
		assert_int_equal(session_event_union(&u, name), i);
	}
	/* full: what it has is still found, a new name is refused */
	assert_int_equal(session_event_union(&u, "one-too-many"), -1);
	assert_int_equal(u.nr_events, STROBE_MAX_COUNTERS);
	assert_int_equal(session_event_union(&u, "cycles"), 1);
	snprintf(name, sizeof(name), "ev%d", STROBE_MAX_COUNTERS - 1);
	assert_int_equal(session_event_union(&u, name), STROBE_MAX_COUNTERS - 1);
}

static void test_set(void **state)
{
	struct db_session s;

	(void)state;
	memset(&s, 0, sizeof(s));
	session_event_set(&s, 0, "first");		/* the first row: one event */
	assert_int_equal(s.nr_events, 1);
	assert_string_equal(s.events[0].name, "first");
	memset(&s, 0, sizeof(s));
	session_event_set(&s, 2, "branches");		/* rows in any order */
	assert_int_equal(s.nr_events, 3);
	assert_string_equal(s.events[2].name, "branches");
	session_event_set(&s, 0, "cycles");
	assert_int_equal(s.nr_events, 3);
	assert_string_equal(s.events[0].name, "cycles");
	assert_string_equal(s.events[1].name, "");
	session_event_set(&s, -1, "bad");		/* out of range: ignored */
	session_event_set(&s, STROBE_MAX_COUNTERS, "bad");
	assert_int_equal(s.nr_events, 3);
	session_event_set(&s, STROBE_MAX_COUNTERS - 1, "last");
	assert_int_equal(s.nr_events, STROBE_MAX_COUNTERS);
	assert_string_equal(s.events[STROBE_MAX_COUNTERS - 1].name, "last");
	/* what the report finds by name afterwards */
	assert_int_equal(session_event_find(&s, "CYCLES"), 0);
	assert_int_equal(session_event_find(&s, "branches"), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_union),
		cmocka_unit_test(test_set),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
