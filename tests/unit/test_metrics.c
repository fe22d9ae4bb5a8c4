/*
 * test_metrics.c - the metric catalogue (lib/query/metrics.def, metrics.c):
 * every expression parses, every event in it is a name events.h accepts,
 * names are unique regardless of case, lookup ignores case, values from
 * known counts (scale, "seconds", division by zero and unknown counts as
 * NaN), the one-line messages for a machine or a session lacking events,
 * and what "seconds" is in 'strobe report -M' and whether a session's
 * events (by name or alias) cover a metric there.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "events.h"
#include "expr.h"
#include "metrics.h"
#include "report.h"
#include "util.h"

static void test_catalogue_parses(void **state)
{
	static const char *const groups[] = {
		"pipeline", "cache", "tlb", "branch", "os", "topdown",
	};
	const struct metric *all;
	size_t n, i, j;

	(void)state;
	all = metrics_all(&n);
	assert_true(n >= 20);
	for (i = 0; i < n; i++) {
		const struct metric *m = &all[i];
		struct error e = { "" };
		struct expr *x = expr_parse(m->expr, &e);
		int known = 0;

		if (!x)
			fail_msg("metric %s: '%s': %s", m->name, m->expr, e.msg);
		expr_free(x);
		assert_true(*m->name && strlen(m->name) < METRIC_NAME_MAX);
		assert_true(*m->unit && *m->desc);
		assert_true(m->scale > 0);
		for (j = 0; j < ARRAY_SIZE(groups); j++)
			known |= !strcmp(groups[j], m->group);
		if (!known)
			fail_msg("metric %s: unknown group '%s'", m->name, m->group);
		/* A metric name is not also an event name: plot --metric
		 * and count -M tell them apart by the catalogue. */
		for (j = i + 1; j < n; j++)
			if (!strcasecmp(m->name, all[j].name))
				fail_msg("metric name '%s' twice", m->name);
		{
			struct event_desc ev;

			if (!event_parse(m->name, &ev, NULL))
				fail_msg("metric name '%s' is also an event name", m->name);
		}
	}
}

/* Every event a metric uses parses, except a sysfs PMU event whose PMU
 * or event this machine lacks (TopDown's cpu/slots/ off Intel). */
static void test_catalogue_events(void **state)
{
	const struct metric *all;
	size_t n, i, j, k;

	(void)state;
	all = metrics_all(&n);
	for (i = 0; i < n; i++) {
		char names[METRIC_EVENTS_MAX][128];
		struct error e = { "" };

		if (metric_events(&all[i], names, METRIC_EVENTS_MAX, &k, &e))
			fail_msg("metric %s: %s", all[i].name, e.msg);
		assert_true(k >= 1);
		for (j = 0; j < k; j++) {
			struct event_desc ev;
			char pmu[128], ename[128], path[400];

			assert_string_not_equal(names[j], "seconds");
			if (!event_parse(names[j], &ev, &e))
				continue;
			if (sscanf(names[j], "%127[^/]/%127[^/]/", pmu, ename) != 2)
				fail_msg("metric %s: event '%s': %s", all[i].name, names[j], e.msg);
			snprintf(path, sizeof(path),
				 "/sys/bus/event_source/devices/%s/events/%s", pmu, ename);
			if (!access(path, F_OK))
				fail_msg("metric %s: event '%s' is in sysfs but: %s",
					 all[i].name, names[j], e.msg);
		}
	}
}

static void test_find(void **state)
{
	const struct metric *m = metric_find("IPC");

	(void)state;
	assert_non_null(m);
	assert_string_equal(m->name, "IPC");
	assert_ptr_equal(metric_find("ipc"), m);
	assert_ptr_equal(metric_find("Ipc"), m);
	assert_non_null(metric_find("page-faults-per-sec"));
	assert_ptr_equal(metric_find("PAGE-FAULTS-PER-SEC"), metric_find("page-faults-per-sec"));
	assert_null(metric_find("instructions"));
	assert_null(metric_find("IPC "));
	assert_null(metric_find(""));
}

static void test_events_of(void **state)
{
	char names[METRIC_EVENTS_MAX][128];
	struct error e = { "" };
	size_t n;

	(void)state;
	assert_int_equal(metric_events(metric_find("IPC"), names, METRIC_EVENTS_MAX, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "instructions");
	assert_string_equal(names[1], "cycles");
	assert_int_equal(metric_events(metric_find("page-faults-per-sec"), names,
				       METRIC_EVENTS_MAX, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_string_equal(names[0], "page-faults");
	/* too small an array is an error, not an overflow */
	assert_int_equal(metric_events(metric_find("IPC"), names, 1, &n, &e), -1);
	assert_true(metric_uses_seconds(metric_find("page-faults-per-sec")));
	assert_false(metric_uses_seconds(metric_find("IPC")));
}

struct counts {
	const char *names[4];
	double vals[4];
};

static double value(void *ctx, const char *name)
{
	struct counts *c = ctx;

	for (size_t i = 0; i < 4 && c->names[i]; i++)
		if (!strcmp(c->names[i], name))
			return c->vals[i];
	return NAN;
}

static double eval(const char *metric, struct counts c, double seconds)
{
	const struct metric *m = metric_find(metric);

	assert_non_null(m);
	return metric_eval(m, value, &c, seconds);
}

static void test_eval(void **state)
{
	(void)state;
	assert_float_equal(eval("IPC", ((struct counts){ { "instructions", "cycles" },
							 { 3000, 1000 } }), 1), 3.0, 1e-12);
	assert_float_equal(eval("CPI", ((struct counts){ { "instructions", "cycles" },
							 { 3000, 1000 } }), 1), 1.0 / 3, 1e-12);
	/* scale: per 1000 instructions, percent */
	assert_float_equal(eval("dTLB-MPKI", ((struct counts){ { "dTLB-load-misses", "instructions" },
							       { 7, 1e6 } }), 1), 0.007, 1e-12);
	assert_float_equal(eval("branch-miss-rate", ((struct counts){ { "branch-misses", "branches" },
								      { 25, 1000 } }), 1), 2.5, 1e-12);
	/* seconds is the interval's length */
	assert_float_equal(eval("page-faults-per-sec", ((struct counts){ { "page-faults" }, { 500 } }),
				2.0), 250.0, 1e-12);
	assert_float_equal(eval("context-switches-per-sec",
				((struct counts){ { "context-switches" }, { 30 } }), 0.5), 60.0, 1e-12);
	assert_float_equal(eval("CPUs-utilized", ((struct counts){ { "task-clock" }, { 3e9 } }), 2.0),
			   1.5, 1e-12);
	/* division by zero, and an unknown count, give NaN */
	assert_true(isnan(eval("IPC", ((struct counts){ { "instructions", "cycles" }, { 3000, 0 } }), 1)));
	assert_true(isnan(eval("IPC", ((struct counts){ { "instructions" }, { 3000 } }), 1)));
	assert_true(isnan(eval("page-faults-per-sec", ((struct counts){ { "page-faults" }, { 500 } }), 0)));
	assert_true(isnan(eval("page-faults-per-sec", ((struct counts){ { "page-faults" }, { 500 } }), NAN)));
	/* zero over non-zero is a value */
	assert_float_equal(eval("IPC", ((struct counts){ { "instructions", "cycles" }, { 0, 10 } }), 1),
			   0.0, 0);
}

static void test_event_is(void **state)
{
	(void)state;
	assert_true(metric_event_is("page-faults", "page-faults"));
	assert_true(metric_event_is("page-faults", "PAGE-FAULTS"));
	assert_true(metric_event_is("page-faults", "faults"));
	assert_true(metric_event_is("context-switches", "cs"));
	assert_true(metric_event_is("cycles", "cpu-cycles"));
	assert_true(metric_event_is("cycles", "cycles:u"));
	assert_false(metric_event_is("cycles", "instructions"));
	assert_false(metric_event_is("page-faults", "minor-faults"));
	assert_false(metric_event_is("page-faults", "no-such-event"));
}

static int have_only_cycles(void *ctx, const char *name)
{
	(void)ctx;
	return !strcmp(name, "cycles");
}

static int have_nothing(void *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return 0;
}

static int have_all(void *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return 1;
}

static void test_covered(void **state)
{
	struct error e = { "" };

	(void)state;
	assert_int_equal(metric_covered(metric_find("IPC"), have_all, NULL, "session 3", &e), 0);
	assert_int_equal(metric_covered(metric_find("IPC"), have_nothing, NULL, "session 3", &e), -1);
	assert_string_equal(e.msg, "metric IPC needs 'instructions' and 'cycles', which session 3 "
			    "did not count: record with -e instructions,cycles");
	assert_int_equal(metric_covered(metric_find("ipc"), have_only_cycles, NULL, "session 3", &e),
			 -1);
	assert_string_equal(e.msg, "metric IPC needs 'instructions', which session 3 "
			    "did not count: record with -e instructions,cycles");
	assert_int_equal(metric_covered(metric_find("page-faults-per-sec"), have_nothing, NULL,
					"session 9", &e), -1);
	assert_string_equal(e.msg, "metric page-faults-per-sec needs 'page-faults', which session 9 "
			    "did not count: record with -e page-faults");
}

/* This machine: software events are there; without a hardware PMU the
 * hardware metrics say so, naming their first event. */
static void test_check(void **state)
{
	struct error e = { "" };

	(void)state;
	if (metric_check(metric_find("page-faults-per-sec"), &e))
		fail_msg("page-faults-per-sec: %s", e.msg);
	if (metric_check(metric_find("context-switches-per-sec"), &e))
		fail_msg("context-switches-per-sec: %s", e.msg);
	if (event_have_hw_pmu()) {
		print_message("[   SKIP   ] hardware PMU present: the no-PMU message is not checked\n");
		return;
	}
	assert_int_equal(metric_check(metric_find("IPC"), &e), -1);
	assert_string_equal(e.msg, "needs 'instructions', which this machine lacks: no hardware PMU");
	assert_int_equal(metric_check(metric_find("dTLB-miss-rate"), &e), -1);
	assert_string_equal(e.msg, "needs 'dTLB-load-misses', which this machine lacks: "
			    "no hardware PMU");
	assert_int_equal(metric_check(metric_find("TopDown-retiring"), &e), -1);
	assert_non_null(strstr(e.msg, "needs 'cpu/topdown-retiring/', which this machine lacks"));
}

/* event_probe_group (events.h), what metric_check opens a metric's
 * events with: software events group; a hardware member without a PMU is
 * named, with its leader. */
static void test_probe_group(void **state)
{
	struct event_desc evs[3];
	struct error e = { "" };
	size_t bad = 99;

	(void)state;
	assert_int_equal(event_parse("page-faults", &evs[0], &e), 0);
	assert_int_equal(event_parse("context-switches", &evs[1], &e), 0);
	assert_int_equal(event_parse("cycles", &evs[2], &e), 0);
	if (event_probe_group(evs, 2, &bad, &e))
		fail_msg("page-faults,context-switches: %s", e.msg);
	assert_int_equal(event_probe_group(evs, 0, &bad, &e), 0);
	if (event_have_hw_pmu()) {
		print_message("[   SKIP   ] hardware PMU present: a refused member is not checked\n");
		return;
	}
	assert_int_equal(event_probe_group(evs, 3, &bad, &e), -1);
	assert_int_equal(bad, 2);
	assert_non_null(strstr(e.msg, "event 'cycles' is not supported on this machine in a "
			       "group led by 'page-faults' ("));
}

/* report -M: seconds is the session's length, or the --from/--to range's
 * within it; a session's events by alias cover a metric. */
static void test_report_seconds(void **state)
{
	struct db_session s;
	struct report_opts o;
	struct error e = { "" };

	(void)state;
	memset(&s, 0, sizeof(s));
	memset(&o, 0, sizeof(o));
	s.id = 7;
	s.start_ns = 1000000000;
	s.end_ns = 3500000000;
	s.duration_ns = 2500000000;
	assert_float_equal(report_metric_seconds(&s, &o), 2.5, 1e-12);
	o.has_from = 1;
	o.from_ns = 500000000;
	assert_float_equal(report_metric_seconds(&s, &o), 2.0, 1e-12);
	o.has_to = 1;
	o.to_ns = 1500000000;
	assert_float_equal(report_metric_seconds(&s, &o), 1.0, 1e-12);
	o.to_ns = 9000000000;	/* past the end: cut there */
	assert_float_equal(report_metric_seconds(&s, &o), 2.0, 1e-12);
	o.from_ns = 3000000000;	/* after the end: nothing */
	assert_true(isnan(report_metric_seconds(&s, &o)));
	memset(&o, 0, sizeof(o));
	s.duration_ns = 0;	/* running: no length yet */
	s.end_ns = 0;
	assert_true(isnan(report_metric_seconds(&s, &o)));

	s.nr_events = 2;
	snprintf(s.events[0].name, sizeof(s.events[0].name), "faults");
	snprintf(s.events[1].name, sizeof(s.events[1].name), "CS");
	o.metrics[o.nr_metrics++] = metric_find("page-faults-per-sec");
	o.metrics[o.nr_metrics++] = metric_find("context-switches-per-sec");
	assert_int_equal(report_metrics_check(&s, &o, &e), 0);
	o.metrics[o.nr_metrics++] = metric_find("CPI");
	assert_int_equal(report_metrics_check(&s, &o, &e), -1);
	assert_string_equal(e.msg, "metric CPI needs 'cycles' and 'instructions', which session 7 "
			    "did not count: record with -e cycles,instructions");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalogue_parses),
		cmocka_unit_test(test_catalogue_events),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_events_of),
		cmocka_unit_test(test_eval),
		cmocka_unit_test(test_event_is),
		cmocka_unit_test(test_covered),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_probe_group),
		cmocka_unit_test(test_report_seconds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
