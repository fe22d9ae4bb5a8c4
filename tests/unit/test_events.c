/*
 * test_events.c - unit tests for lib/base/events.c: event names to
 * perf_event_attr, list splitting, error texts, and probing (cpu-clock
 * works everywhere).  Tracepoints: tracefs is mounted as strobed would when
 * running as root, else the test skips.  sysfs PMU aliases are checked on
 * every PMU of this machine that has any (msr/tsc/ on most x86 VMs); the
 * x86 "cpu" PMU's terms only where that PMU exists.  The default sampler is
 * checked against what it promises: it counts on this machine, and it is
 * "cycles" whenever this test can count hardware cycles itself.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "events.h"

#define HINT "run 'strobe list' to see the events of this machine"
#define PMU_DIR "/sys/bus/event_source/devices"
#define CPU_PMU PMU_DIR "/cpu"

static void parse_ok(const char *name, struct event_desc *d)
{
	struct error e = { "" };

	if (event_parse(name, d, &e))
		fail_msg("event_parse(%s): %s", name, e.msg);
	assert_string_equal(d->name, name);
	assert_int_equal(d->attr.size, sizeof(d->attr));
}

static void parse_fails(const char *name, const char *msg)
{
	struct event_desc d;
	struct error e = { "" };

	assert_int_equal(event_parse(name, &d, &e), -1);
	if (msg)
		assert_string_equal(e.msg, msg);
}

static void skip_without(const char *path, const char *why)
{
	if (access(path, R_OK)) {
		print_message("skipped: %s (%s)\n", why, path);
		skip();
	}
}

static void test_generic(void **state)
{
	static const struct { const char *name; uint32_t type; uint64_t config; } t[] = {
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
		{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
		{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
		{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
		{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
		{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
		{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE,
		  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
		{ "idle-cycles-frontend", PERF_TYPE_HARDWARE,
		  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
		{ "stalled-cycles-backend", PERF_TYPE_HARDWARE,
		  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
		{ "idle-cycles-backend", PERF_TYPE_HARDWARE,
		  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
		{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
		{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
		{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
		{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
		{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
		{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
		{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
		{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
		{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
		{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
	};
	struct event_desc d;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		parse_ok(t[i].name, &d);
		assert_int_equal(d.attr.type, t[i].type);
		assert_int_equal(d.attr.config, t[i].config);
		assert_false(d.attr.exclude_user || d.attr.exclude_kernel ||
			     d.attr.exclude_hv);
	}
}

static void test_cache(void **state)
{
	static const struct { const char *name; uint64_t id, op, result; } t[] = {
		{ "dTLB-load-misses", PERF_COUNT_HW_CACHE_DTLB,
		  PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS },
		{ "L1-dcache-load-misses", PERF_COUNT_HW_CACHE_L1D,
		  PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS },
		{ "LLC-loads", PERF_COUNT_HW_CACHE_LL,
		  PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
		{ "iTLB-load-misses", PERF_COUNT_HW_CACHE_ITLB,
		  PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS },
		{ "branch-loads", PERF_COUNT_HW_CACHE_BPU,
		  PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
		{ "branch-load-misses", PERF_COUNT_HW_CACHE_BPU,
		  PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS },
		{ "node-stores", PERF_COUNT_HW_CACHE_NODE,
		  PERF_COUNT_HW_CACHE_OP_WRITE, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
		{ "L1-icache-prefetch-misses", PERF_COUNT_HW_CACHE_L1I,
		  PERF_COUNT_HW_CACHE_OP_PREFETCH, PERF_COUNT_HW_CACHE_RESULT_MISS },
		{ "LLC-store-misses", PERF_COUNT_HW_CACHE_LL,
		  PERF_COUNT_HW_CACHE_OP_WRITE, PERF_COUNT_HW_CACHE_RESULT_MISS },
		{ "L1-dcache-prefetches", PERF_COUNT_HW_CACHE_L1D,
		  PERF_COUNT_HW_CACHE_OP_PREFETCH, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	};
	struct event_desc d;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		parse_ok(t[i].name, &d);
		assert_int_equal(d.attr.type, PERF_TYPE_HW_CACHE);
		assert_int_equal(d.attr.config,
				 t[i].id | t[i].op << 8 | t[i].result << 16);
	}
	parse_ok("dTLB-load-misses", &d);
	assert_int_equal(d.attr.config, 0x10003);
	parse_fails("dTLB-misses", "unknown event 'dTLB-misses': " HINT);
	parse_fails("L2-dcache-loads", "unknown event 'L2-dcache-loads': " HINT);
}

static void test_modifiers(void **state)
{
	struct event_desc d;

	(void)state;
	parse_ok("cycles:u", &d);
	assert_int_equal(d.attr.type, PERF_TYPE_HARDWARE);
	assert_int_equal(d.attr.config, PERF_COUNT_HW_CPU_CYCLES);
	assert_true(d.attr.exclude_kernel && d.attr.exclude_hv);
	assert_false(d.attr.exclude_user);

	parse_ok("page-faults:k", &d);
	assert_int_equal(d.attr.type, PERF_TYPE_SOFTWARE);
	assert_true(d.attr.exclude_user && d.attr.exclude_hv);
	assert_false(d.attr.exclude_kernel);

	parse_ok("instructions:uk", &d);
	assert_int_equal(d.attr.config, PERF_COUNT_HW_INSTRUCTIONS);
	assert_false(d.attr.exclude_user || d.attr.exclude_kernel);
	assert_true(d.attr.exclude_hv);

	parse_ok("dTLB-load-misses:u", &d);
	assert_int_equal(d.attr.type, PERF_TYPE_HW_CACHE);
	assert_int_equal(d.attr.config, 0x10003);
	assert_true(d.attr.exclude_kernel);
	assert_false(d.attr.exclude_user);

	parse_ok("r1a8:k", &d);
	assert_int_equal(d.attr.type, PERF_TYPE_RAW);
	assert_int_equal(d.attr.config, 0x1a8);
	assert_true(d.attr.exclude_user);

	parse_fails("cs:", NULL);
	parse_fails("cycles:uu", NULL);
}

static void test_raw(void **state)
{
	struct event_desc d;

	(void)state;
	parse_ok("r1a8", &d);
	assert_int_equal(d.attr.type, PERF_TYPE_RAW);
	assert_int_equal(d.attr.config, 0x1a8);
	parse_ok("rFFFFFFFFFFFFFFFF", &d);
	assert_int_equal(d.attr.config, UINT64_MAX);
	parse_ok("ref-cycles", &d);	/* not r + hex */
	assert_int_equal(d.attr.type, PERF_TYPE_HARDWARE);
	parse_fails("r1g", "unknown event 'r1g': " HINT);
	parse_fails("r11112222333344445", NULL);
}

static void test_tracepoint(void **state)
{
	const char *path = "/sys/kernel/tracing/events/sched/sched_switch/id";
	struct event_desc d;
	uint64_t id;
	char *buf;

	(void)state;
	parse_fails("sched:../../../etc", "unknown event 'sched:../../../etc': " HINT);
	parse_fails("..:sched_switch", NULL);
	/* what strobed does when tracefs is missing (daemon/strobed.c) */
	if (access(path, R_OK) && geteuid() == 0)
		mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
	if (access(path, R_OK))
		path = "/sys/kernel/debug/tracing/events/sched/sched_switch/id";
	skip_without(path, "tracefs is not mounted or not readable (not root)");
	buf = file_read_all(path, NULL);
	assert_non_null(buf);
	assert_int_equal(parse_u64(strtok(buf, "\n"), &id), 0);
	free(buf);
	parse_ok("sched:sched_switch", &d);
	assert_int_equal(d.attr.type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(d.attr.config, id);
	parse_fails("sched:no_such_tracepoint",
		    "unknown event 'sched:no_such_tracepoint': " HINT);
}

static void test_format(void **state)
{
	struct perf_event_attr a;
	struct error e = { "" };

	(void)state;
	memset(&a, 0, sizeof(a));
	assert_int_equal(event_format_apply("config:0-7,32-35\n", 0x13c, &a, &e), 0);
	assert_int_equal(a.config, 0x10000003cULL);
	assert_int_equal(event_format_apply("config:8-15", 0x1, &a, &e), 0);
	assert_int_equal(a.config, 0x10000013cULL);
	assert_int_equal(event_format_apply("config:18", 1, &a, &e), 0);
	assert_int_equal(a.config, 0x10004013cULL);
	assert_int_equal(event_format_apply("config1:0-15", 0xffff, &a, &e), 0);
	assert_int_equal(a.config1, 0xffff);
	assert_int_equal(event_format_apply("config2:0-63", UINT64_MAX, &a, &e), 0);
	assert_int_equal(a.config2, UINT64_MAX);
	assert_int_equal(event_format_apply("config:0-7", 0x100, &a, &e), -1);
	assert_string_equal(e.msg, "value 0x100 does not fit in 8 bits");
	assert_int_equal(event_format_apply("bogus:0-7", 1, &a, &e), -1);
	assert_string_equal(e.msg, "cannot understand the format 'bogus:0-7'");
	assert_int_equal(event_format_apply("config:7-0", 1, &a, &e), -1);
	assert_int_equal(event_format_apply("config:0-64", 1, &a, &e), -1);
}

static void test_pmu(void **state)
{
	struct event_desc d;
	uint64_t type;
	char *buf;

	(void)state;
	parse_fails("nosuchpmu/event=1/", "unknown event 'nosuchpmu/event=1/': " HINT);
	parse_fails("../cpu/event=1/", NULL);
	parse_fails("cpu/event=1", NULL);
	skip_without(CPU_PMU "/format/umask", "no x86 'cpu' PMU in sysfs");
	buf = file_read_all(CPU_PMU "/type", NULL);
	assert_non_null(buf);
	assert_int_equal(parse_u64(strtok(buf, "\n"), &type), 0);
	free(buf);

	parse_ok("cpu/event=0x3c,umask=0x1/", &d);
	assert_int_equal(d.attr.type, type);
	assert_int_equal(d.attr.config, 0x13c);
	parse_ok("cpu/event=0x3c,umask=0x1/u", &d);
	assert_true(d.attr.exclude_kernel);
	parse_ok("cpu/config=0x1234/", &d);
	assert_int_equal(d.attr.config, 0x1234);
	parse_fails("cpu/nosuchterm=1/",
		    "bad event 'cpu/nosuchterm=1/': PMU 'cpu' has no term 'nosuchterm' "
		    "(see /sys/bus/event_source/devices/cpu/format)");
	parse_fails("cpu/umask=0x100/",
		    "bad event 'cpu/umask=0x100/': term 'umask': value 0x100 does "
		    "not fit in 8 bits");
	parse_fails("cpu/event=zz/", NULL);

}

/* Is every term of the alias text "a=1,b=0x2,c" a format term of pmu? */
static int alias_terms_known(const char *pmu, const char *text)
{
	char *copy = xstrdup(text), *save = NULL, *t;
	int known = 1;

	for (t = strtok_r(copy, ",", &save); t && known; t = strtok_r(NULL, ",", &save)) {
		char *path;

		t[strcspn(t, "=")] = 0;
		path = xasprintf(PMU_DIR "/%s/format/%s", pmu, t);
		known = !access(path, R_OK);
		free(path);
	}
	free(copy);
	return known;
}

/* Every event alias of every sysfs PMU (pmu/events/NAME holding terms such as
 * "event=0x3c,umask=0x0") parses to exactly what its terms parse to, with
 * the PMU's own type. */
static void test_pmu_alias(void **state)
{
	DIR *pmus = opendir(PMU_DIR), *evs;
	struct dirent *p, *ev;
	int checked = 0;

	(void)state;
	if (!pmus) {
		print_message("skipped: no " PMU_DIR "\n");
		skip();
	}
	while ((p = readdir(pmus))) {
		char *dir, *typefile, *tbuf;
		uint64_t type;

		if (p->d_name[0] == '.')
			continue;
		dir = xasprintf(PMU_DIR "/%s/events", p->d_name);
		typefile = xasprintf(PMU_DIR "/%s/type", p->d_name);
		evs = opendir(dir);
		tbuf = file_read_all(typefile, NULL);
		while (evs && tbuf && (ev = readdir(evs))) {
			struct event_desc d, alias;
			char *path, *text, *name, *terms;

			/* NAME.scale, NAME.unit ... describe NAME, they are not events */
			if (ev->d_name[0] == '.' || strchr(ev->d_name, '.'))
				continue;
			path = xasprintf("%s/%s", dir, ev->d_name);
			text = file_read_all(path, NULL);
			free(path);
			if (!text)
				continue;
			text[strcspn(text, "\n")] = 0;
			/* "?" marks a term the user must supply (e.g. a CPU number) */
			if (!*text || strchr(text, '?') || !alias_terms_known(p->d_name, text)) {
				free(text);
				continue;
			}
			name = xasprintf("%s/%s/", p->d_name, ev->d_name);
			terms = xasprintf("%s/%s/", p->d_name, text);
			parse_ok(name, &d);
			parse_ok(terms, &alias);
			assert_int_equal(parse_u64(strtok(tbuf, "\n"), &type), 0);
			assert_int_equal(d.attr.type, type);
			assert_int_equal(d.attr.type, alias.attr.type);
			assert_int_equal(d.attr.config, alias.attr.config);
			assert_int_equal(d.attr.config1, alias.attr.config1);
			assert_int_equal(d.attr.config2, alias.attr.config2);
			checked++;
			free(name);
			free(terms);
			free(text);
		}
		if (evs)
			closedir(evs);
		free(tbuf);
		free(typefile);
		free(dir);
	}
	closedir(pmus);
	if (!checked) {
		print_message("skipped: no sysfs PMU on this machine has event aliases\n");
		skip();
	}
	print_message("checked %d sysfs PMU event aliases\n", checked);
}

/* The probe PMUs take addresses in config1/config2 (a pointer to a symbol
 * or path name, an offset): never accepted from a user, whether or not this
 * machine has them. */
static void test_probe_pmus(void **state)
{
	(void)state;
	parse_fails("kprobe/config1=0xffffffff81000000,config2=0/",
		    "event 'kprobe/config1=0xffffffff81000000,config2=0/': the kprobe PMU is "
		    "not accepted as an event (its terms are addresses): use --marker for "
		    "USDT probes");
	parse_fails("uprobe/config1=0x7fff0000/", NULL);
	parse_fails("uprobe/config1=0x7fff0000/u", NULL);
	/* bp_addr is config1: a watchpoint on a kernel address */
	parse_fails("breakpoint/config1=0xffffffff81000000,bp_type=1/",
		    "event 'breakpoint/config1=0xffffffff81000000,bp_type=1/': the "
		    "breakpoint PMU is not accepted as an event (its terms are addresses): "
		    "use --marker for USDT probes");
}

static void test_pfm(void **state)
{
	struct event_desc d;

	(void)state;
	/* libpfm4's generic perf PMU exists on every machine it supports */
	parse_ok("perf::INSTRUCTIONS", &d);
	assert_int_equal(d.attr.type, PERF_TYPE_HARDWARE);
	assert_int_equal(d.attr.config, PERF_COUNT_HW_INSTRUCTIONS);
}

static void test_unknown(void **state)
{
	(void)state;
	parse_fails("no-such-event",
		    "unknown event 'no-such-event': run 'strobe list' to see the "
		    "events of this machine");
	parse_fails("foo bar", "unknown event 'foo bar': " HINT);
	parse_fails("", "empty event name");
}

static void test_too_long(void **state)
{
	char name[EVENT_NAME_MAX + 1];
	struct event_desc d[2];
	struct error e;
	size_t n;

	(void)state;
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	parse_fails(name, NULL);
	assert_int_equal(event_parse_list(name, d, 2, &n, &e), -1);
}

static void test_list(void **state)
{
	struct event_desc d[4];
	struct error e = { "" };
	size_t n;

	(void)state;
	assert_int_equal(event_parse_list("cycles,cs,dTLB-load-misses:u,cycles",
					  d, 4, &n, &e), 0);
	assert_int_equal(n, 4);
	assert_string_equal(d[0].name, "cycles");
	assert_string_equal(d[1].name, "cs");
	assert_int_equal(d[1].attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(d[1].attr.config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	assert_string_equal(d[2].name, "dTLB-load-misses:u");
	assert_string_equal(d[3].name, "cycles");

	assert_int_equal(event_parse_list("page-faults", d, 1, &n, &e), 0);
	assert_int_equal(n, 1);

	assert_int_equal(event_parse_list("cycles,instructions,cs", d, 2, &n, &e), -1);
	assert_string_equal(e.msg, "too many events in 'cycles,instructions,cs': at most 2");
	assert_int_equal(event_parse_list("cycles,,cs", d, 4, &n, &e), -1);
	assert_string_equal(e.msg, "empty event name in 'cycles,,cs'");
	assert_int_equal(event_parse_list("cycles,", d, 4, &n, &e), -1);
	assert_string_equal(e.msg, "empty event name in 'cycles,'");
	assert_int_equal(event_parse_list("", d, 4, &n, &e), -1);
	assert_string_equal(e.msg, "empty event name in ''");
	assert_int_equal(event_parse_list("cycles,bogus-event", d, 4, &n, &e), -1);
	assert_string_equal(e.msg, "unknown event 'bogus-event': " HINT);
}

static void test_list_pmu(void **state)
{
	struct event_desc d[4];
	struct error e = { "" };
	size_t n;

	(void)state;
	skip_without(CPU_PMU "/format/umask", "no x86 'cpu' PMU in sysfs");
	if (event_parse_list("cpu/event=0x3c,umask=0x0/,page-faults", d, 4, &n, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(n, 2);
	assert_string_equal(d[0].name, "cpu/event=0x3c,umask=0x0/");
	assert_int_equal(d[0].attr.config, 0x3c);
	assert_string_equal(d[1].name, "page-faults");
	assert_int_equal(d[1].attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(d[1].attr.config, PERF_COUNT_SW_PAGE_FAULTS);
}

static void test_probe(void **state)
{
	struct event_desc d;
	struct error e = { "" };

	(void)state;
	memset(&d, 0, sizeof(d));
	strcpy(d.name, "bogus");
	d.attr.type = 0x7fffffff;
	assert_int_equal(event_probe(&d, &e), -1);
	assert_non_null(strstr(e.msg, "event 'bogus' is not supported on this machine ("));
	assert_non_null(strstr(e.msg, "): " HINT));

	/* system-wide on CPU 0 needs root (or a low perf_event_paranoid) */
	if (geteuid() != 0) {
		print_message("skipped: event_probe(cpu-clock) needs root\n");
		skip();
	}
	assert_int_equal(event_probe(&d, &e), -1);
	assert_string_equal(e.msg, "event 'bogus' is not supported on this machine "
			    "(no such event on this CPU's PMU): " HINT);
	parse_ok("cpu-clock", &d);
	if (event_probe(&d, &e))
		fail_msg("%s", e.msg);
}

/* Count user-space cycles of this process over a short busy loop with a
 * plain perf_event_open, independently of lib/base/events.c: > 0 when this
 * machine's hardware PMU really counts. */
static uint64_t hw_cycles_counted(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	volatile uint64_t x = 1;
	uint64_t v = 0;
	int fd, i;

	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0)
		return 0;
	for (i = 0; i < 1000000; i++)
		x = x * 3 + 1;
	if (read(fd, &v, sizeof(v)) != sizeof(v))
		v = 0;
	close(fd);
	return v;
}

/* The contract of event_default_sampler(): a name event_parse() takes, one
 * this machine can sample system-wide with (root), and "cycles" exactly
 * when hardware cycles count here. */
static void test_default_sampler(void **state)
{
	const char *name = event_default_sampler();
	struct event_desc d;
	struct error e = { "" };

	(void)state;
	parse_ok(name, &d);
	if (hw_cycles_counted() > 0) {
		assert_string_equal(name, "cycles");
	} else {
		assert_string_equal(name, "cpu-clock");
		assert_int_equal(d.attr.type, PERF_TYPE_SOFTWARE);
		assert_int_equal(d.attr.config, PERF_COUNT_SW_CPU_CLOCK);
	}
	if (geteuid() == 0 && event_probe(&d, &e))
		fail_msg("the default sampler '%s' cannot be opened: %s", name, e.msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generic),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_modifiers),
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_tracepoint),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_pmu),
		cmocka_unit_test(test_pmu_alias),
		cmocka_unit_test(test_probe_pmus),
		cmocka_unit_test(test_pfm),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_list_pmu),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_default_sampler),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
