/*
 * test_series.c - lib/query/series.c, seriescsv.c and gnuplot.c's data
 * over a source that is no database: a hand-made timeline, as another
 * source (the fleet, a server's) would give one.  Events and metrics whole
 * and split (top groups, "other" as the rest clamped at 0, an event with
 * no group), "seconds" cut at the window's end, a division by zero as NaN,
 * the failures named for the caller, the CSV and gnuplot data rows, and
 * timeline_filters_text().
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
#include "expr.h"
#include "gnuplot.h"
#include "series.h"
#include "seriescsv.h"

#define MS 1000000LL
#define START 5000000000LL

/* Session 7: counting events cycles (1) and page-faults (2), sampling
 * cpu-clock. */
static void session(struct db_session *s)
{
	memset(s, 0, sizeof(*s));
	s->id = 7;
	s->start_ns = START;
	snprintf(s->sample_event, sizeof(s->sample_event), "cpu-clock");
	s->nr_events = 2;
	snprintf(s->events[0].name, sizeof(s->events[0].name), "cycles");
	snprintf(s->events[1].name, sizeof(s->events[1].name), "page-faults");
}

/* What the fake source was asked for, and whether to fail. */
static struct timeline_opts asked;
static int source_fails;

static void set(struct timeline_group *g, int nv, size_t b, int i, double v)
{
	g->v[b * (size_t)nv + (size_t)i] = v;
}

/*
 * 3 buckets of 10 ms from the start, the last cut at 25 ms.  With --by:
 * CPUs 0, 1 and 2, ranked by samples (0 then 1 in the top 2, CPU 2 the
 * rest) and by cycles (CPU 1 only: one group in its top, no rest); no
 * ranking by page-faults.
 */
static struct timeline *fake_timeline(const struct series_source *src,
				      const struct timeline_opts *o, struct error *e)
{
	struct timeline *t;
	int nv = 3;

	asked = *o;
	if (source_fails) {
		error_set(e, "the source failed");
		return NULL;
	}
	t = xcalloc(1, sizeof(*t));
	t->session = src->session;
	t->nv = nv;
	t->from_ns = START;
	t->to_ns = START + 25 * MS;
	t->bucket_ns = 10 * MS;
	t->nbuckets = 3;
	t->key_noun = "CPUs";
	t->all.v = xcalloc(3 * (size_t)nv, sizeof(double));
	for (size_t b = 0; b < 3; b++) {
		set(&t->all, nv, b, TL_SAMPLES, 10.0 * (double)(b + 1));
		set(&t->all, nv, b, 1, 1000.0 * (double)(b + 1));
		set(&t->all, nv, b, 2, b == 1 ? 0 : 4);
	}
	if (o->by == TL_BY_NONE)
		return t;
	t->ngroups = 2;
	t->groups = xcalloc(2, sizeof(*t->groups));
	for (size_t g = 0; g < 2; g++) {
		snprintf(t->groups[g].name, sizeof(t->groups[g].name), "CPU %zu", g);
		t->groups[g].v = xcalloc(3 * (size_t)nv, sizeof(double));
		for (size_t b = 0; b < 3; b++) {
			set(&t->groups[g], nv, b, TL_SAMPLES, 4.0 * (double)(b + 1));
			set(&t->groups[g], nv, b, 1, 300.0 * (double)(b + 1));
		}
	}
	/* more page-faults in the top than in all: other clamps at 0 */
	set(&t->groups[0], nv, 0, 2, 9);
	t->nranks = 2;
	t->ranks[0] = (struct timeline_rank){ .value = TL_SAMPLES, .n = 2, .idx = { 0, 1 },
					      .rest = 1 };
	t->ranks[1] = (struct timeline_rank){ .value = 1, .n = 1, .idx = { 1 }, .rest = 0 };
	return t;
}

static void source(struct series_source *src)
{
	memset(src, 0, sizeof(*src));
	session(&src->session);
	src->timeline = fake_timeline;
	source_fails = 0;
}

static void test_events_whole(void **state)
{
	static const char *const ev[] = { "CYCLES", "samples", "cpu-clock" };
	struct series_source src;
	struct series_req r = { .events = ev, .nevents = 3 };
	struct series *s;
	struct error e = { "" };

	source(&src);
	r.opts.pid = -1;
	assert_int_equal(series_compute(&src, &r, &s, &e), 0);
	assert_int_equal(s->session.id, 7);
	assert_int_equal(s->n, 3);
	assert_string_equal(s->line[0].title, "CYCLES");
	assert_true(s->line[0].v[2] == 3000);
	assert_string_equal(s->line[1].title, "samples");
	assert_true(s->line[1].v[0] == 10);
	assert_true(s->line[2].v[1] == 20);	/* the sampling event: samples */
	/* ranked by each event once: cycles, then samples */
	assert_int_equal(asked.nrank, 2);
	assert_int_equal(asked.rank[0], 1);
	assert_int_equal(asked.rank[1], TL_SAMPLES);
	series_free(s);
}

static void test_events_split(void **state)
{
	static const char *const ev[] = { "samples", "cycles", "page-faults" };
	struct series_source src;
	struct series_req r = { .events = ev, .nevents = 3 };
	struct series *s;
	struct error e = { "" };

	source(&src);
	r.opts.pid = -1;
	r.opts.by = TL_BY_CPU;
	assert_int_equal(series_compute(&src, &r, &s, &e), 0);
	/* samples: CPU 0, CPU 1, other; cycles: CPU 1 (no rest);
	 * page-faults: not ranked, whole */
	assert_int_equal(s->n, 5);
	assert_string_equal(s->line[0].title, "samples: CPU 0");
	assert_string_equal(s->line[1].title, "samples: CPU 1");
	assert_string_equal(s->line[2].title, "samples: other (1 more CPUs)");
	assert_true(s->line[2].v[0] == 10 - 4 - 4);
	assert_true(s->line[2].v[2] == 30 - 12 - 12);
	assert_string_equal(s->line[3].title, "cycles: CPU 1");
	assert_true(s->line[3].v[1] == 600);
	assert_string_equal(s->line[4].title, "page-faults");
	assert_true(s->line[4].v[0] == 4);
	series_free(s);
}

static void test_metric(void **state)
{
	struct series_source src;
	struct series_req r = { .metric_src = "page-faults / samples" };
	struct series *s;
	struct error e = { "" };

	source(&src);
	r.opts.pid = -1;
	/* a bucket's length: the last is cut at the window's end */
	r.metric = expr_parse("cycles / seconds", &e);
	assert_non_null(r.metric);
	assert_int_equal(series_compute(&src, &r, &s, &e), 0);
	assert_int_equal(asked.nrank, 1);
	assert_int_equal(asked.rank[0], TL_SAMPLES);
	assert_int_equal(s->n, 1);
	assert_string_equal(s->line[0].title, "page-faults / samples");
	assert_true(fabs(s->line[0].v[0] - 1000 / 0.01) < 1e-6);
	assert_true(fabs(s->line[0].v[2] - 3000 / 0.005) < 1e-6);
	series_free(s);
	expr_free(r.metric);

	/* split by samples' ranking, other evaluated on the rest (each value
	 * clamped at 0) */
	r.metric = expr_parse("page-faults / samples", &e);
	assert_non_null(r.metric);
	r.opts.by = TL_BY_CPU;
	assert_int_equal(series_compute(&src, &r, &s, &e), 0);
	assert_int_equal(s->n, 3);
	assert_string_equal(s->line[0].title, "CPU 0");
	assert_true(s->line[0].v[0] == 9.0 / 4);
	assert_string_equal(s->line[2].title, "other (1 more CPUs)");
	assert_true(s->line[2].v[0] == 0);	/* 4 - 9 - 0 clamped, over 2 */
	assert_true(s->line[1].v[1] == 0);
	series_free(s);
	expr_free(r.metric);
}

static void test_failures(void **state)
{
	static const char *const ev[] = { "cycles", "instructions" };
	struct series_source src;
	struct series_req r = { .events = ev, .nevents = 2 };
	struct series *s = (struct series *)1;
	struct error e = { "" };
	char evs[256];

	source(&src);
	r.opts.pid = -1;
	assert_int_equal(series_compute(&src, &r, &s, &e), SERIES_NO_EVENT);
	assert_null(s);
	assert_int_equal(r.unknown, 1);
	assert_string_equal(e.msg, "unknown event 'instructions': session 7 has cycles, "
			    "page-faults, samples (cpu-clock)");
	series_events_text(&src.session, evs, sizeof(evs));
	assert_string_equal(evs, "cycles, page-faults, samples (cpu-clock)");

	r.nevents = 0;
	r.metric = expr_parse("instructions / cycles", &e);
	assert_int_equal(series_compute(&src, &r, &s, &e), SERIES_NO_NAME);
	assert_non_null(strstr(e.msg, "instructions"));
	expr_free(r.metric);
	r.metric = NULL;

	r.nevents = 1;
	source_fails = 1;
	assert_int_equal(series_compute(&src, &r, &s, &e), -1);
	assert_string_equal(e.msg, "the source failed");
	assert_null(s);
}

/* f's whole content (NUL-terminated, freed by the caller). */
static char *slurp(FILE *f)
{
	long n = ftell(f);
	char *buf = xcalloc((size_t)n + 1, 1);

	rewind(f);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	return buf;
}

static void test_csv_and_data(void **state)
{
	static const char *const ev[] = { "page-faults" };
	struct series_source src;
	struct series_req r = { .events = ev, .nevents = 1 };
	struct series *s;
	struct error e = { "" };
	FILE *f;
	char *text;

	source(&src);
	r.opts.pid = -1;
	assert_int_equal(series_compute(&src, &r, &s, &e), 0);
	s->line[0].v[1] = NAN;
	f = tmpfile();
	assert_non_null(f);
	assert_int_equal(seriescsv_write(f, s, 0), 0);
	text = slurp(f);
	assert_string_equal(text, "from_s,to_s,from_ns,to_ns,page-faults\n"
			    "0.000000000,0.010000000,5000000000,5010000000,4\n"
			    "0.010000000,0.020000000,5010000000,5020000000,\n"
			    "0.020000000,0.025000000,5020000000,5025000000,4\n");
	free(text);
	fclose(f);
	f = tmpfile();
	assert_non_null(f);
	assert_int_equal(gnuplot_write_data(f, s, 0), 0);
	text = slurp(f);
	assert_string_equal(text, "0.000000000 4\n0.010000000 NaN\n0.020000000 4\n"
			    "0.030000000 4\n");
	free(text);
	fclose(f);
	series_free(s);
}

static void test_filters_text(void **state)
{
	struct timeline_opts o = { .pid = 42, .has_pid_at = 1, .pid_at_ns = 1500 * MS,
				   .comm = "ls", .binary = "libc.so.6", .symbol = "main",
				   .cgroup = "/a/" };
	struct sbuf b = { 0 };

	timeline_filters_text(&o, 1, &b);
	assert_string_equal(b.s, "pid 42 at 1.5 s, comm ls, binary libc.so.6, symbol main, "
			    "cgroup /a/");
	b.n = 0;
	timeline_filters_text(&o, 0, &b);
	assert_string_equal(b.s, "pid 42, comm ls, binary libc.so.6, symbol main, cgroup /a/");
	b.n = 0;
	o.pid = -1;
	timeline_filters_text(&o, 1, &b);
	assert_string_equal(b.s, "comm ls, binary libc.so.6, symbol main, cgroup /a/");
	free(b.s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events_whole),
		cmocka_unit_test(test_events_split),
		cmocka_unit_test(test_metric),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_csv_and_data),
		cmocka_unit_test(test_filters_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
