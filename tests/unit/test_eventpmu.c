/*
 * test_eventpmu.c - non-core PMUs as perf handles them, over fake sysfs
 * trees made in a temporary directory (this host has no uncore or RAPL
 * PMU): a PMU's cpumask or cpus (lib/base/eventpmu.c, cpulist.c), an
 * event's .scale and .unit, the refusal of malformed files, the refusal
 * of such an event as a strobed session member, the CPUs 'strobe count
 * -a' opens it on (counter_open with the fake tree's sysroot), and its
 * scaled value and unit in count's rows and formats (countfmt.c) and in
 * what --save keeps (countsave.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* sched_setaffinity */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <sched.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "counter.h"
#include "countfmt.h"
#include "countsave.h"
#include "cpulist.h"
#include "eventpmu.h"

#define DEVS "/sys/bus/event_source/devices"
#define RAPL_SCALE "2.3283064365386962890625e-10"	/* 2^-32 J, as the kernel's RAPL */

static char root[64];

/* Write text to root/rel, making its directories. */
static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(path, 0755);
			*p = '/';
		}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A PMU named name of type type under the fake tree. */
static void pmu(const char *name, const char *type)
{
	char rel[256];

	snprintf(rel, sizeof(rel), DEVS "/%s/type", name);
	put(rel, type);
}

static void pmu_file(const char *name, const char *file, const char *text)
{
	char rel[256];

	snprintf(rel, sizeof(rel), DEVS "/%s/%s", name, file);
	put(rel, text);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/strobe-eventpmu-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	put("sys/devices/system/cpu/online", "0-3\n");
	/* RAPL: one CPU per package, Joules in 2^-32 steps */
	pmu("power", "23\n");
	pmu_file("power", "cpumask", "0\n");
	pmu_file("power", "events/energy-pkg", "event=0x02\n");
	pmu_file("power", "events/energy-pkg.scale", RAPL_SCALE "\n");
	pmu_file("power", "events/energy-pkg.unit", "Joules\n");
	pmu_file("power", "events/energy-cores", "event=0x01\n");
	/* an uncore PMU of two packages, a cstate one given as a range */
	pmu("uncore_imc_0", "24\n");
	pmu_file("uncore_imc_0", "cpumask", "0,2\n");
	pmu("cstate_core", "25\n");
	pmu_file("cstate_core", "cpumask", "0-1\n");
	/* a hybrid core PMU of CPUs 2 and 3 */
	pmu("cpu_atom", "10\n");
	pmu_file("cpu_atom", "cpus", "2-3\n");
	/* msr: no cpumask, counts on every CPU */
	pmu("msr", "11\n");
	pmu_file("msr", "events/tsc", "event=0x00\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static struct event_desc desc(const char *name, uint32_t type, uint64_t config)
{
	struct event_desc ev;

	memset(&ev, 0, sizeof(ev));
	snprintf(ev.name, sizeof(ev.name), "%s", name);
	ev.attr.size = sizeof(ev.attr);
	ev.attr.type = type;
	ev.attr.config = config;
	return ev;
}

static void expect_cpus(const char *name, uint32_t type, enum event_pmu_cpus kind,
			const char *list)
{
	struct event_desc ev = desc(name, type, 0);
	struct event_pmu p;
	struct error e;
	char buf[64];

	assert_int_equal(event_pmu_read(root, &ev, &p, &e), 0);
	assert_int_equal(p.kind, kind);
	cpulist_format(p.cpus, p.ncpus, buf, sizeof(buf));
	assert_string_equal(buf, list);
	event_pmu_free(&p);
}

static void test_cpumask(void **state)
{
	struct event_desc ev = desc("power/energy-pkg/", 23, 2);
	struct event_pmu p;
	struct error e;

	(void)state;
	assert_int_equal(event_pmu_read(root, &ev, &p, &e), 0);
	assert_string_equal(p.name, "power");
	assert_int_equal(p.kind, EVENT_PMU_CPUMASK);
	assert_int_equal(p.ncpus, 1);
	assert_int_equal(p.cpus[0], 0);
	assert_true(event_pmu_on_cpu(&p, 0));
	assert_false(event_pmu_on_cpu(&p, 1));
	event_pmu_free(&p);
	expect_cpus("uncore_imc_0/event=0x4,umask=0x3/", 24, EVENT_PMU_CPUMASK, "0,2");
	expect_cpus("cstate_core/c6-residency/", 25, EVENT_PMU_CPUMASK, "0-1");
	expect_cpus("cpu_atom/event=0xc0/", 10, EVENT_PMU_CPUS, "2-3");
	expect_cpus("msr/tsc/", 11, EVENT_PMU_EVERY_CPU, "");
	/* a name libpfm4 knows: the PMU found by its type */
	expect_cpus("unc_imc0::UNC_M_CAS_COUNT", 24, EVENT_PMU_CPUMASK, "0,2");
	/* the generic events have no sysfs PMU here */
	expect_cpus("cycles", PERF_TYPE_HARDWARE, EVENT_PMU_EVERY_CPU, "");
	/* a pmu/ name whose type is another's (not that PMU): nothing */
	expect_cpus("power/energy-pkg/", 24, EVENT_PMU_EVERY_CPU, "");
}

static void test_scale_unit(void **state)
{
	struct event_desc ev = desc("power/energy-pkg/", 23, 2);
	struct event_pmu p;
	struct error e;

	(void)state;
	assert_int_equal(event_pmu_read(root, &ev, &p, &e), 0);
	assert_true(p.scale == ldexp(1, -32));
	assert_string_equal(p.unit, "Joules");
	event_pmu_free(&p);
	/* an alias without .scale or .unit: 1, none */
	ev = desc("power/energy-cores/", 23, 1);
	assert_int_equal(event_pmu_read(root, &ev, &p, &e), 0);
	assert_true(p.scale == 1);
	assert_string_equal(p.unit, "");
	event_pmu_free(&p);
	/* terms, not an alias: no scale */
	ev = desc("power/event=0x02/", 23, 2);
	assert_int_equal(event_pmu_read(root, &ev, &p, &e), 0);
	assert_true(p.scale == 1);
	assert_string_equal(p.unit, "");
	event_pmu_free(&p);
}

/* A malformed file of a fresh PMU "bad" (type 40): refused naming it. */
static void expect_bad(const char *file, const char *text, const char *why)
{
	struct event_desc ev = desc("bad/ev/", 40, 0);
	struct event_pmu p;
	struct error e;
	char cmd[512], path[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s" DEVS "/bad'", root);
	assert_int_equal(system(cmd), 0);
	pmu("bad", "40\n");
	pmu_file("bad", "events/ev", "event=0x1\n");
	pmu_file("bad", file, text);
	memset(&e, 0, sizeof(e));
	if (event_pmu_read(root, &ev, &p, &e) != -1)
		fail_msg("%s = '%s' accepted", file, text);
	event_pmu_free(&p);
	snprintf(path, sizeof(path), "%s" DEVS "/bad/%s", root, file);
	if (!strstr(e.msg, path) || !strstr(e.msg, why) || strchr(e.msg, '\n'))
		fail_msg("%s = '%s': '%s', want the file and '%s'", file, text, e.msg, why);
	assert_non_null(strstr(e.msg, "event 'bad/ev/'"));
}

static void test_malformed(void **state)
{
	char longer[200];

	(void)state;
	memset(longer, '1', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = 0;
	expect_bad("events/ev.scale", longer, "longer than");
	expect_bad("events/ev.scale", "abc\n", "not a positive number");
	expect_bad("events/ev.scale", "1.5e-3x\n", "not a positive number");
	expect_bad("events/ev.scale", "-1\n", "not a positive number");
	expect_bad("events/ev.scale", "nan\n", "not a positive number");
	expect_bad("events/ev.scale", "", "empty");
	expect_bad("events/ev.scale", "\n", "empty");
	expect_bad("events/ev.unit", "Joules per second per package, per die\n", "longer than");
	expect_bad("events/ev.unit", "", "empty");
	expect_bad("events/ev.unit", "J\001\n", "not printable");
	expect_bad("cpumask", "x\n", "not a CPU list");
	expect_bad("cpumask", "0-\n", "not a CPU list");
	expect_bad("cpumask", "", "empty");
	expect_bad("cpus", "3-1\n", "not a CPU list");
}

static void test_session_check(void **state)
{
	struct event_desc ev = desc("power/energy-pkg/", 23, 2);
	struct error e;

	(void)state;
	assert_int_equal(event_pmu_session_check(root, &ev, 0, &e), -1);
	assert_null(strchr(e.msg, '\n'));
	assert_non_null(strstr(e.msg, "event 'power/energy-pkg/' cannot join a session's "
				      "sampling group"));
	assert_non_null(strstr(e.msg, "not a core PMU"));
	assert_non_null(strstr(e.msg, "CPU 0 only"));
	assert_non_null(strstr(e.msg, "strobe count -a -I 100 --save NAME -e power/energy-pkg/"));
	assert_non_null(strstr(e.msg, "strobe plot --session ID --event power/energy-pkg/"));
	ev = desc("uncore_imc_0/event=0x4/", 24, 4);
	assert_int_equal(event_pmu_session_check(root, &ev, 1, &e), -1);
	assert_non_null(strstr(e.msg, "cannot be a session's sampling event"));
	assert_non_null(strstr(e.msg, "CPUs 0,2 only"));
	/* msr/tsc/ and the generic events join */
	ev = desc("msr/tsc/", 11, 0);
	assert_int_equal(event_pmu_session_check(root, &ev, 0, &e), 0);
	ev = desc("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	assert_int_equal(event_pmu_session_check(root, &ev, 0, &e), 0);
	/* a core PMU of CPUs 2-3 of 0-3: not on every CPU */
	ev = desc("cpu_atom/event=0xc0/", 10, 0xc0);
	assert_int_equal(event_pmu_session_check(root, &ev, 0, &e), -1);
	assert_non_null(strstr(e.msg, "only on CPUs 2-3"));
	assert_non_null(strstr(e.msg, "not on CPU 0"));
	/* ... and of every online CPU: joins */
	pmu("cpu_core", "12\n");
	pmu_file("cpu_core", "cpus", "0-3\n");
	ev = desc("cpu_core/event=0xc0/", 12, 0xc0);
	assert_int_equal(event_pmu_session_check(root, &ev, 0, &e), 0);
	/* a malformed file is the refusal */
	pmu("bad2", "41\n");
	pmu_file("bad2", "cpumask", "zero\n");
	ev = desc("bad2/x/", 41, 0);
	assert_int_equal(event_pmu_session_check(root, &ev, 0, &e), -1);
	assert_non_null(strstr(e.msg, "cpumask"));
}

static void test_cpulist(void **state)
{
	int *c, v[] = { 0, 1, 2, 3, 8, 10, 11 };
	size_t n;
	struct error e;
	char buf[64];

	(void)state;
	assert_int_equal(cpulist_parse("0,2\n", &c, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_true(c[0] == 0 && c[1] == 2);
	free(c);
	assert_int_equal(cpulist_parse("0,", &c, &n, &e), -1);
	assert_int_equal(cpulist_parse("-1", &c, &n, &e), -1);
	assert_int_equal(cpulist_parse("0-", &c, &n, &e), -1);
	cpulist_format(v, 7, buf, sizeof(buf));
	assert_string_equal(buf, "0-3,8,10-11");
	cpulist_format(v, 7, buf, 8);
	assert_string_equal(buf, "0-3,...");
}

/*
 * count -a's rows of a hand-made system-wide set: power/energy-pkg/ on
 * CPU 0 only (CPU 1 COUNT_FD_NOT_HERE), cpu-clock on both.  5 * 2^32
 * counts of 2^-32 J are 5 Joules.
 */
static void rapl_set(struct counter_set *cs, struct count_unit *units, int *fd)
{
	struct error e;

	memset(cs, 0, sizeof(*cs));
	cs->kind = COUNT_TARGET_SYSTEM;
	cs->nev = 2;
	cs->ev[0] = desc("power/energy-pkg/", 23, 2);
	cs->scale[0] = ldexp(1, -32);
	snprintf(cs->unit[0], sizeof(cs->unit[0]), "Joules");
	assert_int_equal(event_parse("cpu-clock", &cs->ev[1], &e), 0);
	memset(units, 0, 2 * sizeof(*units));
	units[0].cpu = 0;
	units[0].tid = -1;
	units[1].cpu = 1;
	units[1].tid = -1;
	cs->units = units;
	cs->nunits = 2;
	fd[0] = -1;
	fd[1] = COUNT_FD_NOT_HERE;
	fd[2] = -1;
	fd[3] = -1;
	cs->fd = fd;
}

static char *format_rows(const struct countfmt *fmt, const struct count_row *rows, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	for (size_t i = 0; i < n; i++)
		countfmt_row(f, fmt, 1.0, &rows[i]);
	fclose(f);
	return buf;
}

static void test_rows_scale_unit(void **state)
{
	struct counter_set cs;
	struct count_unit units[2];
	int fd[4];
	struct count_value v[4] = {
		{ 5ULL << 32, 1000000000, 1000000000 }, { 0, 0, 0 },		/* energy */
		{ 1000000000, 1000000000, 1000000000 }, { 500000000, 1000000000, 1000000000 },
	};
	struct count_cpu_topo topo[2] = { { 0, 0, 0 }, { 0, 0, 1 } };
	struct countfmt fmt = { .mode = COUNTFMT_CSV, .sep = ",", .aggr = COUNT_AGGR_GLOBAL,
				.runs = 1 };
	struct countsave_rows sv = { 0 };
	struct count_row *rows;
	struct error e;
	size_t n;
	char *s;

	(void)state;
	rapl_set(&cs, units, fd);
	assert_int_equal(count_rows_build(&cs, COUNT_AGGR_GLOBAL, NULL, 0, v, 1.0, NULL, 0,
					  &rows, &n, &e), 0);
	assert_int_equal(n, 2);
	s = format_rows(&fmt, rows, n);
	/* perf's unit column; the energy summed over its one CPU */
	assert_string_equal(s, "5.00,Joules,power/energy-pkg/,1000000000,100.00,,\n"
			       "1500.00,msec,cpu-clock,2000000000,100.00,1.500,CPUs utilized\n");
	free(s);
	fmt.mode = COUNTFMT_TEXT;
	s = format_rows(&fmt, rows, 1);
	assert_non_null(strstr(s, "5.00 Joules power/energy-pkg/"));
	free(s);
	fmt.mode = COUNTFMT_JSON;
	s = format_rows(&fmt, rows, 1);
	assert_non_null(strstr(s, "\"counter-value\" : \"5.000000\", \"unit\" : \"Joules\", "
				  "\"event\" : \"power/energy-pkg/\""));
	free(s);
	/* --save keeps Joules, not a clock's ns (5, not 5e6) */
	countsave_keep(&sv, COUNT_AGGR_GLOBAL, 1.0, rows, n);
	assert_int_equal(sv.n, 2);
	assert_true(fabs(sv.v[0].value - 5.0) < 1e-9);
	assert_true(fabs(sv.v[1].value - 1.5e9) < 1e-3);
	free(sv.v);
	free(rows);

	/* -A: the energy on CPU 0 only, cpu-clock on both */
	fmt.mode = COUNTFMT_CSV;
	fmt.aggr = COUNT_AGGR_CPU;
	assert_int_equal(count_rows_build(&cs, COUNT_AGGR_CPU, NULL, 0, v, 1.0, NULL, 0,
					  &rows, &n, &e), 0);
	assert_int_equal(n, 3);
	s = format_rows(&fmt, rows, n);
	assert_string_equal(s, "CPU0,5.00,Joules,power/energy-pkg/,1000000000,100.00,,\n"
			       "CPU0,1000.00,msec,cpu-clock,1000000000,100.00,1.000,CPUs utilized\n"
			       "CPU1,500.00,msec,cpu-clock,1000000000,100.00,0.500,CPUs utilized\n");
	free(s);
	free(rows);

	/* --per-socket: one socket, the energy of one CPU (nr 1) */
	fmt.aggr = COUNT_AGGR_SOCKET;
	assert_int_equal(count_rows_build(&cs, COUNT_AGGR_SOCKET, topo, 2, v, 1.0, NULL, 0,
					  &rows, &n, &e), 0);
	assert_int_equal(n, 2);
	s = format_rows(&fmt, rows, n);
	assert_string_equal(s, "S0,1,5.00,Joules,power/energy-pkg/,1000000000,100.00,,\n"
			       "S0,2,1500.00,msec,cpu-clock,2000000000,100.00,1.500,CPUs utilized\n");
	free(s);
	free(rows);
}

/*
 * counter_open with the fake tree: a PMU "fakesw" of the software type
 * (so this host's kernel opens it: context-switches) with cpumask "0",
 * scale 0.5 and unit "halves".  Counting -a opens it on CPU 0 only (and
 * counts the switches of this thread, pinned there); counting a thread
 * is refused.
 */
static void test_count_open(void **state)
{
	struct count_target t = { .kind = COUNT_TARGET_SYSTEM, .sysroot = root };
	struct count_target self = { .kind = COUNT_TARGET_TID, .pid = getpid(),
				     .sysroot = root };
	struct event_desc ev[2];
	struct counter_set cs;
	struct count_value *vals;
	struct count_row *rows;
	struct error e;
	char *online, rel[] = "sys/devices/system/cpu/online";
	cpu_set_t one, old;
	size_t n;
	int r;

	(void)state;
	pmu("fakesw", "1\n");
	pmu_file("fakesw", "cpumask", "0\n");
	pmu_file("fakesw", "events/tick", "config=0\n");
	pmu_file("fakesw", "events/tick.scale", "0.5\n");
	pmu_file("fakesw", "events/tick.unit", "halves\n");
	ev[0] = desc("fakesw/tick/", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
	ev[1] = desc("cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	/* per thread: refused before anything is opened, a usage error */
	assert_int_equal(counter_open(&cs, ev, 2, &self, &e), -2);
	assert_non_null(strstr(e.msg, "event 'fakesw/tick/' counts system-wide only"));
	assert_non_null(strstr(e.msg, "use -a") || strstr(e.msg, "with -a"));
	/* this machine's online CPUs in the fake tree, so that they open */
	online = file_read_all("/sys/devices/system/cpu/online", NULL);
	assert_non_null(online);
	put(rel, online);
	free(online);
	r = counter_open(&cs, ev, 2, &t, &e);
	put(rel, "0-3\n");
	if (r < 0 && (strstr(e.msg, "not allowed") || strstr(e.msg, "paranoid"))) {
		print_message("skipped: system-wide counting is not allowed here (%s)\n", e.msg);
		skip();
	}
	assert_int_equal(r, 0);
	assert_true(cs.nunits >= 1);
	for (size_t u = 0; u < cs.nunits; u++) {
		if (cs.units[u].cpu == 0)
			assert_true(cs.fd[u] >= 0);
		else
			assert_int_equal(cs.fd[u], COUNT_FD_NOT_HERE);
		assert_true(cs.fd[cs.nunits + u] >= 0);	/* cpu-clock: every CPU */
	}
	assert_true(cs.scale[0] == 0.5);
	assert_string_equal(cs.unit[0], "halves");
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_getaffinity(0, sizeof(old), &old) == 0 &&
	    sched_setaffinity(0, sizeof(one), &one) == 0) {
		for (int i = 0; i < 10; i++)
			usleep(1000);	/* a context switch each, on CPU 0 */
		sched_setaffinity(0, sizeof(old), &old);
	}
	vals = xcalloc(2 * cs.nunits, sizeof(*vals));
	assert_int_equal(counter_read(&cs, vals, &e), 0);
	assert_int_equal(count_rows_build(&cs, COUNT_AGGR_CPU, NULL, 0, vals, 0.02, NULL, 0,
					  &rows, &n, &e), 0);
	/* one row of fakesw (CPU 0), one of cpu-clock per CPU */
	assert_int_equal(n, 1 + cs.nunits);
	assert_string_equal(rows[0].event, "fakesw/tick/");
	assert_string_equal(rows[0].id, "0");
	assert_string_equal(rows[0].unit, "halves");
	/* CPU 0's switches (at least this thread's 10), halved */
	for (size_t u = 0; u < cs.nunits; u++)
		if (cs.units[u].cpu == 0)
			assert_true(vals[u].val >= 10 &&
				    fabs(rows[0].value - (double)vals[u].val * 0.5) < 1e-6);
	free(rows);
	free(vals);
	counter_close(&cs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpumask),
		cmocka_unit_test(test_scale_unit),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_session_check),
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_rows_scale_unit),
		cmocka_unit_test(test_count_open),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
