/*
 * test_count.c - the pure parts of 'strobe count' (lib/count): scaling by
 * enabled/running time, interval deltas, CPU lists and topology, the
 * aggregation per CPU, core, socket and thread, the standard error of -r,
 * and perf stat's -x and JSON fields.
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
#include <sys/stat.h>
#include <unistd.h>
#include "counter.h"
#include "countfmt.h"
#include "countsave.h"
#include "countstore.h"
#include "db.h"

static void test_scale(void **state)
{
	struct count_value full = { 1000, 500, 500 }, half = { 1000, 200, 100 }, never = { 0, 300, 0 };
	double s, pct;

	(void)state;
	assert_int_equal(count_scale(&full, &s, &pct), COUNT_OK);
	assert_true(s == 1000 && pct == 100);
	/* multiplexed: ran half its enabled time, so the count doubles */
	assert_int_equal(count_scale(&half, &s, &pct), COUNT_OK);
	assert_true(fabs(s - 2000) < 1e-9);
	assert_true(fabs(pct - 50) < 1e-9);
	assert_int_equal(count_scale(&never, &s, &pct), COUNT_NOT_COUNTED);
	assert_true(s == 0 && pct == 0);
}

static void test_value_sub(void **state)
{
	struct count_value a = { 100, 50, 40 }, b = { 250, 80, 70 }, d;

	(void)state;
	d = count_value_sub(&b, &a);
	assert_true(d.val == 150 && d.ena == 30 && d.run == 30);
	/* backwards (a reopened descriptor): the new reading itself */
	d = count_value_sub(&a, &b);
	assert_true(d.val == 100 && d.ena == 50 && d.run == 40);
}

static void test_cpulist(void **state)
{
	struct error e;
	int *c;
	size_t n;

	(void)state;
	assert_int_equal(count_parse_cpulist("0-3,8,10-11\n", &c, &n, &e), 0);
	assert_int_equal(n, 7);
	assert_int_equal(c[0], 0);
	assert_int_equal(c[3], 3);
	assert_int_equal(c[4], 8);
	assert_int_equal(c[6], 11);
	free(c);
	assert_int_equal(count_parse_cpulist("3-1", &c, &n, &e), -1);
	assert_int_equal(count_parse_cpulist("0,x", &c, &n, &e), -1);
	assert_non_null(strstr(e.msg, "bad CPU list"));
}

static void put(const char *dir, const char *file, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_topo_read(void **state)
{
	char root[] = "/tmp/test_count.XXXXXX", dir[256];
	struct count_cpu_topo t;
	struct error e;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/sys/devices/system/cpu/cpu5/topology", root);
	assert_int_equal(mkdir_p(dir, 0755), 0);
	put(dir, "physical_package_id", "1\n");
	put(dir, "core_id", "9\n");
	/* no die_id: an older kernel; reads as die 0 */
	assert_int_equal(count_topo_read(root, 5, &t, &e), 0);
	assert_int_equal(t.socket, 1);
	assert_int_equal(t.die, 0);
	assert_int_equal(t.core, 9);
	put(dir, "die_id", "2\n");
	assert_int_equal(count_topo_read(root, 5, &t, &e), 0);
	assert_int_equal(t.die, 2);
	/* a CPU without topology fails, naming the file */
	assert_int_equal(count_topo_read(root, 6, &t, &e), -1);
	assert_non_null(strstr(e.msg, "cpu6/topology"));
	snprintf(dir, sizeof(dir), "rm -rf '%s'", root);
	assert_int_equal(system(dir), 0);
}

/* Four CPUs: 0 and 1 two cores of socket 0; 2 and 3 SMT siblings of core 0
 * of socket 1. */
static const struct count_cpu_topo topo4[] = {
	{ 0, 0, 0 }, { 0, 0, 1 }, { 1, 0, 0 }, { 1, 0, 0 },
};
static const struct count_unit cpus4[] = {
	{ 0, -1, "" }, { 1, -1, "" }, { 2, -1, "" }, { 3, -1, "" },
};
/* CPU 3 was multiplexed: ran a quarter of its time */
static const struct count_value vals4[] = {
	{ 10, 100, 100 }, { 20, 100, 100 }, { 30, 100, 100 }, { 40, 100, 25 },
};

static void test_aggregate_core_socket(void **state)
{
	struct count_group g[4];
	struct error e;
	int n;

	(void)state;
	n = count_aggregate(COUNT_AGGR_CORE, cpus4, 4, topo4, 4, vals4, g, &e);
	assert_int_equal(n, 3);
	assert_string_equal(g[0].id, "S0-D0-C0");
	assert_string_equal(g[1].id, "S0-D0-C1");
	assert_string_equal(g[2].id, "S1-D0-C0");
	assert_int_equal(g[2].nr, 2);
	assert_true(g[0].scaled == 10 && g[1].scaled == 20);
	assert_true(fabs(g[2].scaled - (30 + 160)) < 1e-9);	/* 40 scaled by 100/25 */
	assert_true(g[2].sum.ena == 200 && g[2].sum.run == 125);

	n = count_aggregate(COUNT_AGGR_SOCKET, cpus4, 4, topo4, 4, vals4, g, &e);
	assert_int_equal(n, 2);
	assert_string_equal(g[0].id, "S0");
	assert_string_equal(g[1].id, "S1");
	assert_true(g[0].nr == 2 && g[1].nr == 2);
	assert_true(g[0].scaled == 30);
	assert_true(fabs(g[1].scaled - 190) < 1e-9);

	n = count_aggregate(COUNT_AGGR_CPU, cpus4, 4, topo4, 4, vals4, g, &e);
	assert_int_equal(n, 4);
	assert_string_equal(g[3].id, "3");
	assert_true(fabs(g[3].scaled - 160) < 1e-9);

	n = count_aggregate(COUNT_AGGR_GLOBAL, cpus4, 4, topo4, 4, vals4, g, &e);
	assert_int_equal(n, 1);
	assert_int_equal(g[0].nr, 4);
	assert_true(fabs(g[0].scaled - 220) < 1e-9);

	/* a CPU past the topology given */
	assert_int_equal(count_aggregate(COUNT_AGGR_CORE, cpus4, 4, topo4, 2, vals4, g, &e), -1);
	/* per-thread needs threads */
	assert_int_equal(count_aggregate(COUNT_AGGR_THREAD, cpus4, 4, topo4, 4, vals4, g, &e), -1);
	assert_non_null(strstr(e.msg, "--per-thread"));
}

static void test_aggregate_thread(void **state)
{
	static const struct count_unit th[] = {
		{ -1, 100, "main-100" }, { -1, 101, "tt-a-101" }, { -1, 102, "tt-b-102" },
	};
	static const struct count_value v[] = {
		{ 5, 10, 10 }, { 3000, 10, 10 }, { 0, 10, 0 },
	};
	struct count_group g[3];
	struct error e;

	(void)state;
	assert_int_equal(count_aggregate(COUNT_AGGR_THREAD, th, 3, NULL, 0, v, g, &e), 3);
	assert_string_equal(g[1].id, "tt-a-101");
	assert_true(g[1].scaled == 3000);
	assert_int_equal(g[1].status, COUNT_OK);
	assert_int_equal(g[2].status, COUNT_NOT_COUNTED);
	/* -A needs CPUs */
	assert_int_equal(count_aggregate(COUNT_AGGR_CPU, th, 3, NULL, 0, v, g, &e), -1);
}

static void test_stddev(void **state)
{
	struct count_runs r;
	struct count_row row = { .event = "page-faults", .status = COUNT_OK };
	struct count_row *mean;
	struct error e;
	size_t n;

	(void)state;
	/* 10, 12, 14: mean 12, sample variance 4, standard error sqrt(4/3) */
	assert_true(fabs(count_stddev_pct(12, 8, 3) - 100 * sqrt(4.0 / 3) / 12) < 1e-9);
	assert_true(count_stddev_pct(12, 0, 1) == 0);
	count_runs_init(&r);
	for (int v = 10; v <= 14; v += 2) {
		row.value = v;
		row.run_ns = 1000;
		row.pct = 100;
		assert_int_equal(count_runs_add(&r, &row, 1, &e), 0);
	}
	mean = count_runs_mean(&r, &n);
	assert_int_equal(n, 1);
	assert_true(fabs(mean[0].value - 12) < 1e-9);
	assert_true(fabs(mean[0].stddev_pct - 100 * sqrt(4.0 / 3) / 12) < 1e-9);
	free(mean);
	/* another run with other rows is refused */
	snprintf(row.event, sizeof(row.event), "task-clock");
	assert_int_equal(count_runs_add(&r, &row, 1, &e), -1);
	count_runs_free(&r);
}

/* A counter set of page-faults and task-clock on one command, no kernel. */
static void fake_set(struct counter_set *cs, struct count_unit *unit)
{
	struct error e;

	memset(cs, 0, sizeof(*cs));
	cs->nev = 2;
	assert_int_equal(event_parse("page-faults", &cs->ev[0], &e), 0);
	assert_int_equal(event_parse("task-clock", &cs->ev[1], &e), 0);
	unit->cpu = -1;
	unit->tid = 1234;
	unit->name[0] = 0;
	cs->units = unit;
	cs->nunits = 1;
}

static char *format_rows(const struct countfmt *fmt, const struct count_row *rows, size_t n,
			 double t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	for (size_t i = 0; i < n; i++)
		countfmt_row(f, fmt, t, &rows[i]);
	fclose(f);
	return buf;
}

static void test_csv_json(void **state)
{
	struct counter_set cs;
	struct count_unit unit;
	/* 1050 faults in 3.25 ms of task-clock, over 6.5 ms of wall time */
	struct count_value v[] = { { 1050, 3250000, 3250000 }, { 3250000, 3250000, 3250000 } };
	struct count_row *rows;
	struct countfmt fmt = { .mode = COUNTFMT_CSV, .sep = ",", .aggr = COUNT_AGGR_GLOBAL,
				.runs = 1 };
	struct error e;
	size_t n;
	char *s;

	(void)state;
	fake_set(&cs, &unit);
	assert_int_equal(count_rows_build(&cs, COUNT_AGGR_GLOBAL, NULL, 0, v, 0.0065, NULL, 0,
					  &rows, &n, &e), 0);
	assert_int_equal(n, 2);
	s = format_rows(&fmt, rows, n, 0);
	/* value, unit, event, run time, % running, metric value, metric unit;
	 * the rate is per second of task-clock (1050 / 3.25 ms) */
	assert_string_equal(s, "1050,,page-faults,3250000,100.00,323.077,K/sec\n"
			       "3.25,msec,task-clock,3250000,100.00,0.500,CPUs utilized\n");
	free(s);

	/* -I: the interval's end first; another separator */
	fmt.interval = 1;
	fmt.sep = ";";
	s = format_rows(&fmt, rows, 1, 1.5);
	assert_string_equal(s, "     1.500000000;1050;;page-faults;3250000;100.00;323.077;K/sec\n");
	free(s);

	fmt.mode = COUNTFMT_JSON;
	fmt.interval = 0;
	s = format_rows(&fmt, rows, 1, 0);
	assert_string_equal(s, "{\"counter-value\" : \"1050.000000\", \"unit\" : \"\", "
			       "\"event\" : \"page-faults\", \"event-runtime\" : 3250000, "
			       "\"pcnt-running\" : 100.00, \"metric-value\" : 323.076923, "
			       "\"metric-unit\" : \"K/sec\"}\n");
	free(s);
	free(rows);

	/* multiplexed and never run */
	v[0].run = 1625000;	/* ran half: scaled to 2100 */
	v[1].run = 0;
	assert_int_equal(count_rows_build(&cs, COUNT_AGGR_GLOBAL, NULL, 0, v, 0.0065, NULL, 0,
					  &rows, &n, &e), 0);
	fmt.mode = COUNTFMT_CSV;
	fmt.sep = ",";
	s = format_rows(&fmt, rows, n, 0);
	/* no task-clock count: no rate for page-faults */
	assert_string_equal(s, "2100,,page-faults,1625000,50.00,,\n"
			       "<not counted>,msec,task-clock,0,0.00,,\n");
	free(s);
	fmt.mode = COUNTFMT_TEXT;
	s = format_rows(&fmt, rows, n, 0);
	assert_non_null(strstr(s, "(50.00%)"));
	assert_non_null(strstr(s, "<not counted>"));
	free(s);
	free(rows);

	/* -r: the stddev after the event */
	{
		struct count_row r = { .event = "page-faults", .status = COUNT_OK, .value = 1051,
				       .run_ns = 7, .pct = 100, .stddev_pct = 0.06 };

		fmt.mode = COUNTFMT_CSV;
		fmt.runs = 3;
		s = format_rows(&fmt, &r, 1, 0);
		assert_string_equal(s, "1051,,page-faults,0.06%,7,100.00,,\n");
		free(s);
		fmt.mode = COUNTFMT_JSON;
		s = format_rows(&fmt, &r, 1, 0);
		assert_non_null(strstr(s, "\"event\" : \"page-faults\", \"variance\" : 0.06, "
					  "\"event-runtime\" : 7"));
		free(s);
	}
}

static void test_aggr_fields(void **state)
{
	struct count_row r = { .id = "S0-D0-C1", .nr = 2, .event = "page-faults",
			       .status = COUNT_OK, .value = 5, .run_ns = 9, .pct = 100,
			       .stddev_pct = -1 };
	struct countfmt fmt = { .mode = COUNTFMT_CSV, .sep = ",", .aggr = COUNT_AGGR_CORE,
				.runs = 1 };
	char *s;

	(void)state;
	s = format_rows(&fmt, &r, 1, 0);
	assert_string_equal(s, "S0-D0-C1,2,5,,page-faults,9,100.00,,\n");
	free(s);
	fmt.mode = COUNTFMT_JSON;
	s = format_rows(&fmt, &r, 1, 0);
	assert_non_null(strstr(s, "{\"core\" : \"S0-D0-C1\", \"aggregate-number\" : 2, "
				  "\"counter-value\" : \"5.000000\""));
	free(s);
	snprintf(r.id, sizeof(r.id), "3");
	fmt.aggr = COUNT_AGGR_CPU;
	s = format_rows(&fmt, &r, 1, 0);
	assert_non_null(strstr(s, "{\"cpu\" : \"3\", \"counter-value\""));
	free(s);
	fmt.mode = COUNTFMT_CSV;
	s = format_rows(&fmt, &r, 1, 0);
	assert_string_equal(s, "CPU3,5,,page-faults,9,100.00,,\n");
	free(s);
	snprintf(r.id, sizeof(r.id), "tt-a-101");
	fmt.aggr = COUNT_AGGR_THREAD;
	s = format_rows(&fmt, &r, 1, 0);
	assert_string_equal(s, "tt-a-101,5,,page-faults,9,100.00,,\n");
	free(s);
}

static void test_metric_column(void **state)
{
	struct counter_set cs;
	struct count_unit unit;
	struct count_value v[] = { { 1000, 2000000000, 2000000000 },
				   { 2000000000, 2000000000, 2000000000 } };
	const struct metric *m[2];
	struct count_row *rows;
	struct error e;
	size_t n;

	(void)state;
	fake_set(&cs, &unit);
	m[0] = metric_find("page-faults-per-sec");
	m[1] = metric_find("CPUs-utilized");
	assert_non_null(m[0]);
	assert_non_null(m[1]);
	/* 4 s of wall time: 250 faults per second, 0.5 CPUs */
	assert_int_equal(count_rows_build(&cs, COUNT_AGGR_GLOBAL, NULL, 0, v, 4.0, m, 2,
					  &rows, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].metric_unit, "/s page-faults-per-sec");
	assert_true(fabs(rows[0].metric - 250) < 1e-9);
	assert_true(fabs(rows[1].metric - 0.5) < 1e-9);
	free(rows);
	/* two metrics on the same first event: the second on its own line */
	m[1] = m[0];
	assert_int_equal(count_rows_build(&cs, COUNT_AGGR_GLOBAL, NULL, 0, v, 4.0, m, 2,
					  &rows, &n, &e), 0);
	assert_int_equal(n, 3);
	assert_string_equal(rows[1].event, "");
	assert_true(rows[1].has_metric && fabs(rows[1].metric - 250) < 1e-9);
	free(rows);
}

/* perf stat's default metric column for hardware events: GHz, insn per
 * cycle, % of all branches (pure: no PMU needed) */
static void test_hw_shadow_metrics(void **state)
{
	static const char *const names[] = { "task-clock", "cycles", "instructions", "branches",
					     "branch-misses" };
	struct counter_set cs;
	struct count_unit unit = { -1, 1234, "" };
	/* 2 ms of task-clock, 4M cycles, 6M instructions, 1M branches, 20k misses */
	struct count_value v[] = { { 2000000, 9, 9 }, { 4000000, 9, 9 }, { 6000000, 9, 9 },
				   { 1000000, 9, 9 }, { 20000, 9, 9 } };
	struct count_row *rows;
	struct error e;
	size_t n;

	(void)state;
	memset(&cs, 0, sizeof(cs));
	cs.nev = 5;
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(event_parse(names[i], &cs.ev[i], &e), 0);
	cs.units = &unit;
	cs.nunits = 1;
	assert_int_equal(count_rows_build(&cs, COUNT_AGGR_GLOBAL, NULL, 0, v, 0.004, NULL, 0,
					  &rows, &n, &e), 0);
	assert_int_equal(n, 5);
	assert_true(fabs(rows[0].metric - 0.5) < 1e-9);		/* 2 ms in 4 ms */
	assert_string_equal(rows[1].metric_unit, "GHz");
	assert_true(fabs(rows[1].metric - 2.0) < 1e-9);		/* 4M cycles in 2 ms */
	assert_string_equal(rows[2].metric_unit, "insn per cycle");
	assert_true(fabs(rows[2].metric - 1.5) < 1e-9);
	assert_string_equal(rows[4].metric_unit, "of all branches");
	assert_true(fabs(rows[4].metric - 2.0) < 1e-9);		/* 2% */
	assert_string_equal(rows[3].metric_unit, "");		/* branches: none */
	free(rows);
	/* the defaults name them only with a hardware PMU */
	assert_non_null(strstr(count_default_events(0, 1), "cycles,instructions,branches,branch-misses"));
	assert_null(strstr(count_default_events(0, 0), "cycles"));
	assert_non_null(strstr(count_default_events(1, 0), "cpu-clock"));
}

static void test_save_encode_decode(void **state)
{
	struct count_saved v[3] = {
		{ .t_ns = 100, .idx = 0, .unit = "", .value = 53, .pct = 100 },
		{ .t_ns = 100, .idx = 1, .unit = "a,b;c\td-7", .value = NAN, .pct = 0 },
		{ .t_ns = 200, .idx = 1, .unit = "CPU3", .value = 1.5e9, .pct = 50.25 },
	};
	struct count_saved *out;
	struct sbuf b = { 0 };
	struct error e;
	size_t n;

	(void)state;
	assert_int_equal(countsave_encode(v, 3, 0, 1000, &b), 3);
	assert_string_equal(b.s, "100,0,,53,100.0000;100,1,a?b?c?d-7,-,0.0000;"
				 "200,1,CPU3,1500000000,50.2500");
	assert_int_equal(countsave_decode(b.s, &out, &n, 10, &e), 0);
	assert_int_equal(n, 3);
	assert_true(out[0].t_ns == 100 && out[0].idx == 0 && out[0].value == 53);
	assert_string_equal(out[1].unit, "a?b?c?d-7");
	assert_true(isnan(out[1].value));
	assert_true(out[2].value == 1.5e9 && out[2].pct == 50.25);
	free(out);
	/* a byte budget: only what fits */
	free(b.s);
	memset(&b, 0, sizeof(b));
	assert_int_equal(countsave_encode(v, 3, 0, 20, &b), 1);
	free(b.s);

	/* hostile input: each refused with one message */
	static const char *const bad[] = {
		"1,2,3", "1,2,u,4,5,6", "-1,0,,1,100", "1,-1,,1,100", "1,0,,-5,100",
		"1,0,,nan,100", "1,0,,inf,100", "1,0,,1,101", "1,0,,1,x", "x,0,,1,100",
		"1,0,,1e999,100", "1,0,,1,100;", "1,0,a\001b,1,100",
		"1,0,0123456789012345678901234567890123456789012345678901234567890123456789,1,1",
		"99999999999999999999999,0,,1,1", "1,2000,,1,1",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char buf[128];

		snprintf(buf, sizeof(buf), "%s", bad[i]);
		for (char *p = buf; *p; p++)
			if (*p == '\\' && p[1] == '0') {	/* "\001": a control byte */
				*p = 1;
				memmove(p + 1, p + 4, strlen(p + 4) + 1);
			}
		if (countsave_decode(buf, &out, &n, 10, &e) == 0)
			fail_msg("'%s' was accepted", bad[i]);
	}
	/* too many entries */
	assert_int_equal(countsave_decode("1,0,,1,1;2,0,,1,1;3,0,,1,1", &out, &n, 2, &e), -1);
	assert_non_null(strstr(e.msg, "too many"));
}

static void test_save_event(void **state)
{
	struct event_desc ev;
	struct sbuf b = { 0 };
	struct error e;
	char name[128];
	uint32_t type;
	uint64_t c, c1, c2;

	(void)state;
	assert_int_equal(event_parse("page-faults", &ev, &e), 0);
	countsave_event_encode(&ev, &b);
	assert_int_equal(countsave_event_decode(b.s, name, sizeof(name), &type, &c, &c1, &c2, &e), 0);
	assert_string_equal(name, "page-faults");
	assert_true(type == PERF_TYPE_SOFTWARE && c == PERF_COUNT_SW_PAGE_FAULTS);
	free(b.s);
	assert_int_equal(countsave_event_decode("1:2:3:x", name, sizeof(name), &type, &c, &c1,
						&c2, &e), -1);
	assert_int_equal(countsave_event_decode("1:2:3:4:", name, sizeof(name), &type, &c, &c1,
						&c2, &e), -1);
	assert_int_equal(countsave_event_decode("99999999999:2:3:4:x", name, sizeof(name), &type,
						&c, &c1, &c2, &e), -1);
	assert_int_equal(countsave_event_decode("-1:2:3:4:x", name, sizeof(name), &type, &c, &c1,
						&c2, &e), -1);
	assert_int_equal(countsave_event_decode("1:2:3:4:a\nb", name, sizeof(name), &type, &c,
						&c1, &c2, &e), -1);
}

static void test_store(void **state)
{
	char dir[] = "/tmp/test_count_db.XXXXXX", path[300], cmd[400];
	struct db *db;
	struct db_session s;
	struct count_saved v[2] = {
		{ .t_ns = 100, .idx = 0, .unit = "", .value = 7, .pct = 100 },
		{ .t_ns = 200, .idx = 0, .unit = "CPU1", .value = 5, .pct = 100 },
	};
	struct error e;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.db", dir);
	db = db_open(path, DB_WRITE, &e);
	if (!db)
		fail_msg("db_open: %s", e.msg);
	memset(&s, 0, sizeof(s));
	s.owner_uid = 1000;
	s.start_ns = 1000;
	s.nr_cpus = 2;
	s.nr_events = 1;
	snprintf(s.events[0].name, sizeof(s.events[0].name), "page-faults");
	s.events[0].type = PERF_TYPE_SOFTWARE;
	s.events[0].config = PERF_COUNT_SW_PAGE_FAULTS;
	assert_int_equal(countstore_begin(db, &s, &e), 0);
	/* not the owner */
	assert_int_equal(countstore_add(db, s.id, 1001, v, 2, &e), -1);
	assert_non_null(strstr(e.msg, "not yours"));
	/* an event the session does not have */
	v[1].idx = 1;
	assert_int_equal(countstore_add(db, s.id, 1000, v, 2, &e), -1);
	v[1].idx = 0;
	assert_int_equal(countstore_add(db, s.id, 1000, v, 2, &e), 0);
	assert_int_equal(countstore_add(db, s.id, 0, v, 1, &e), 0);	/* root may */
	assert_int_equal(countstore_end(db, s.id, 1000, 500, &e), -1);	/* before its start */
	assert_int_equal(countstore_end(db, s.id, 1000, 2000, &e), 0);
	assert_int_equal(countstore_add(db, s.id, 1000, v, 1, &e), -1);
	assert_non_null(strstr(e.msg, "ended"));
	/* a sampling session is not a count session */
	assert_int_equal(db_session_get(db, s.id, &s, &e), 0);
	assert_string_equal(s.backend, "count");
	assert_int_equal(s.end_ns, 2000);

	/* at most COUNTSTORE_OPEN_MAX open count sessions per uid but root;
	 * an ended one frees a place; another uid and root are not held */
	struct db_session o = s;
	int64_t first = 0;

	for (int i = 0; i < COUNTSTORE_OPEN_MAX; i++) {
		o = s;
		o.end_ns = 0;
		assert_int_equal(countstore_begin(db, &o, &e), 0);
		if (!first)
			first = o.id;
	}
	o = s;
	o.end_ns = 0;
	assert_int_equal(countstore_begin(db, &o, &e), -1);
	assert_non_null(strstr(e.msg, "not ended"));
	o.owner_uid = 1001;
	assert_int_equal(countstore_begin(db, &o, &e), 0);
	for (int i = 0; i < COUNTSTORE_OPEN_MAX + 2; i++) {
		o = s;
		o.end_ns = 0;
		o.owner_uid = 0;
		assert_int_equal(countstore_begin(db, &o, &e), 0);
	}
	assert_int_equal(countstore_end(db, first, 1000, 2000, &e), 0);
	o = s;
	o.end_ns = 0;
	assert_int_equal(countstore_begin(db, &o, &e), 0);
	assert_int_equal(countstore_begin(db, &o, &e), -1);
	db_close(db);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_value_sub),
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_topo_read),
		cmocka_unit_test(test_aggregate_core_socket),
		cmocka_unit_test(test_aggregate_thread),
		cmocka_unit_test(test_stddev),
		cmocka_unit_test(test_csv_json),
		cmocka_unit_test(test_aggr_fields),
		cmocka_unit_test(test_metric_column),
		cmocka_unit_test(test_hw_shadow_metrics),
		cmocka_unit_test(test_save_encode_decode),
		cmocka_unit_test(test_save_event),
		cmocka_unit_test(test_store),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
