/*
 * test_window.c - lib/query's functions of a window [from, to) of a
 * session, the API a server (the explorer) calls: report_window(),
 * stacks_window(), diff_build_windows(), timeline_events(), and the one
 * lookup of a session's events by name (sessevent.h).
 *
 * The fixture, made through lib/store/db.h (the real schema; no daemon):
 * one finished session of 100 samples, sample k at k ms after the start
 * on CPU k % 2, in binary [heap] when k % 3 == 0 else [stack], with stack
 * 1 (two frames) when k is even, else stack 2 (one frame); three lost
 * records and three markers.  Every expected figure is counted from k
 * here: windows must hold the samples from their start up to but not
 * including their end, so that two windows that tile the session count
 * each sample once (the sample at 30 ms is in [30 ms, 100 ms) only).
 */
#include "config.h"
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "dbfix.h"
#include "diff.h"
#include "report.h"
#include "sessevent.h"
#include "stacks.h"
#include "timeline.h"

#define MS 1000000LL
#define START 5000000000LL
#define NSAMP 100
#define PID 4242

struct fx {
	struct fixdb f;
	struct db_session s;
	int64_t heap, stack;		/* binary ids */
};

static struct fx *X;

static int is_heap(int k)
{
	return k % 3 == 0;
}

/* Samples k in [from_ms, to_ms) for which want(k) (NULL: all). */
static int64_t count(int from_ms, int to_ms, int (*want)(int))
{
	int64_t n = 0;

	for (int k = from_ms; k < to_ms && k < NSAMP; k++)
		n += !want || want(k);
	return n;
}

static void frames(unsigned char *blob, int64_t bin, uint64_t off)
{
	for (int i = 0; i < 8; i++) {
		blob[i] = (unsigned char)((uint64_t)bin >> (8 * i));
		blob[8 + i] = (unsigned char)(off >> (8 * i));
	}
}

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	struct db_session *s = &x->s;
	struct error e = { "" };
	unsigned char st1[32], st2[16];
	struct db *db;

	X = x;
	assert_int_equal(fixdb_open(&x->f, "window"), 0);
	db = x->f.db;
	x->heap = db_binary_intern(db, "[heap]", "[heap]", -1, 0, NULL, &e);
	x->stack = db_binary_intern(db, "[stack]", "[stack]", -1, 0, NULL, &e);
	assert_true(x->heap > 0 && x->stack > 0);

	snprintf(s->name, sizeof(s->name), "window");
	snprintf(s->state, sizeof(s->state), "running");
	snprintf(s->backend, sizeof(s->backend), "perf");
	snprintf(s->sample_event, sizeof(s->sample_event), "cpu-clock");
	snprintf(s->tsc_source, sizeof(s->tsc_source), "none");
	s->nr_cpus = 2;
	s->sample_freq = 1000;
	s->start_ns = START;
	s->nr_events = 1;
	snprintf(s->events[0].name, sizeof(s->events[0].name), "instructions");
	if (db_session_insert(db, s, &e) < 0)
		fail_msg("db_session_insert: %s", e.msg);

	assert_int_equal(db_begin(db, &e), 0);
	frames(st1, x->heap, 0x100);
	frames(st1 + 16, x->stack, 0x200);
	frames(st2, x->stack, 0x300);
	assert_int_equal(db_stack_insert(db, s->id, 1, 11, 2, 0, st1, &e), 0);
	assert_int_equal(db_stack_insert(db, s->id, 2, 22, 1, 0, st2, &e), 0);
	for (int k = 0; k < NSAMP; k++) {
		struct db_sample smp = {
			.session_id = s->id, .time_ns = (uint64_t)(START + k * MS),
			.cpu = (uint32_t)(k % 2), .pid = PID, .tid = PID,
			.binary_id = is_heap(k) ? x->heap : x->stack,
			.offset = 0x10 + (uint64_t)(k % 5), .flags = STROBE_SAMPLE_USER,
			.nr = 1, .c = { (uint64_t)k }, .period = 1000,
			.stack_id = k % 2 ? 2 : 1,
		};
		int64_t rowid = db_sample_insert(db, &smp, &e);

		if (rowid <= 0)
			fail_msg("db_sample_insert: %s", e.msg);
		if (!s->first_sample)
			s->first_sample = rowid;
		s->last_sample = rowid;
		s->samples++;
	}
	assert_int_equal(db_lost_insert(db, s->id, 0, START + 40 * MS + 500000, 7, "ring", &e), 0);
	assert_int_equal(db_lost_insert(db, s->id, 1, START + 70 * MS + 200000, 3, "samples",
					&e), 0);
	assert_int_equal(db_lost_insert(db, s->id, 0, START + 80 * MS + 100000, 1, "throttle",
					&e), 0);
	{
		struct db_marker m1 = { START + 5 * MS, -1, PID, PID, "mark", "begin", NULL };
		struct db_marker m2 = { START + 55 * MS, 1, PID, PID, "usdt", "app:step", "1,2" };
		struct db_marker m3 = { START + 90 * MS, -1, PID, PID, "mark", "end", NULL };

		assert_int_equal(db_marker_insert(db, s->id, &m1, &e), 0);
		assert_int_equal(db_marker_insert(db, s->id, &m2, &e), 0);
		assert_int_equal(db_marker_insert(db, s->id, &m3, &e), 0);
	}
	s->end_ns = START + NSAMP * MS;
	s->duration_ns = NSAMP * MS;
	snprintf(s->state, sizeof(s->state), "done");
	snprintf(s->call_graph, sizeof(s->call_graph), "fp");
	assert_int_equal(db_session_update(db, s, &e), 0);
	assert_int_equal(db_commit(db, &e), 0);
	assert_int_equal(sqlite3_exec(db_sqlite(db), "UPDATE sessions SET call_graph='fp'",
				      NULL, NULL, NULL), SQLITE_OK);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;

	fixdb_close(&x->f);
	free(x);
	return 0;
}

static struct report_opts opts(void)
{
	struct report_opts o;

	memset(&o, 0, sizeof(o));
	o.session = X->s.id;
	o.pid = -1;
	o.by = REPORT_BY_BINARY;
	return o;
}

/* The samples of the report's row whose binary contains name (0: none),
 * and of all its rows in *all. */
static int64_t report_samples(const struct table *t, const char *name, int64_t *all)
{
	int c_bin = table_col(t, "binary"), c_n = table_col(t, "samples");
	int64_t n = 0;

	assert_true(c_bin >= 0 && c_n >= 0);
	*all = 0;
	for (size_t i = 0; i < table_rows(t); i++) {
		const char *bin = NULL;
		int64_t v = 0;

		assert_int_equal(table_get_str(t, i, c_bin, &bin), 0);
		assert_int_equal(table_get_int(t, i, c_n, &v), 0);
		*all += v;
		if (strstr(bin, name))
			n += v;
	}
	return n;
}

/* A report of [from_ms, to_ms) holds exactly the samples k in it. */
static void check_report(int from_ms, int to_ms)
{
	struct report_opts o = opts();
	struct report_summary sum;
	struct error e;
	struct table *t;
	int64_t all, heap;

	/* a range of o's own is replaced by the window */
	o.has_from = o.has_to = 1;
	o.from_ns = 0;
	o.to_ns = 1;
	t = report_window(X->f.db, &o, from_ms * MS, to_ms * MS, &sum, &e);
	if (!t)
		fail_msg("report_window %d..%d ms: %s", from_ms, to_ms, e.msg);
	heap = report_samples(t, "heap", &all);
	assert_int_equal(all, count(from_ms, to_ms, NULL));
	assert_int_equal(sum.samples, (uint64_t)count(from_ms, to_ms, NULL));
	assert_int_equal(heap, count(from_ms, to_ms, is_heap));
	table_free(t);
}

static void test_report_window(void **state)
{
	struct report_opts o = opts();
	struct report_summary sum;
	struct error e;

	(void)state;
	check_report(0, 30);
	check_report(30, 100);		/* the sample at 30 ms: here, not above */
	check_report(0, 100);
	check_report(29, 31);
	check_report(7, 8);		/* one sample */
	/* empty windows are errors, not empty reports */
	assert_null(report_window(X->f.db, &o, 30 * MS, 30 * MS, &sum, &e));
	assert_non_null(strstr(e.msg, "empty window"));
	assert_null(report_window(X->f.db, &o, -1, 30 * MS, &sum, &e));
	/* the convention, on its own */
	assert_int_equal(report_opts_window(&o, 2 * MS, 5 * MS, &e), 0);
	assert_true(o.has_from && o.has_to);
	assert_int_equal(o.from_ns, 2 * MS);
	assert_int_equal(o.to_ns, 5 * MS - 1);
}

static int is_even(int k)
{
	return k % 2 == 0;
}

/* The stacks of [from_ms, to_ms): stack 1 has the even samples. */
static void check_stacks(int from_ms, int to_ms)
{
	struct report_opts o = opts();
	struct error e;
	struct stack_set *set = stacks_window(X->f.db, &o, from_ms * MS, to_ms * MS, &e);
	uint64_t n[3] = { 0 }, c0 = 0;

	if (!set)
		fail_msg("stacks_window %d..%d ms: %s", from_ms, to_ms, e.msg);
	assert_int_equal(set->samples, (uint64_t)count(from_ms, to_ms, NULL));
	for (size_t i = 0; i < set->nr_stacks; i++) {
		const struct stack_entry *se = &set->stacks[i];

		assert_true(se->stack_id == 1 || se->stack_id == 2);
		assert_int_equal(se->nr, se->stack_id == 1 ? 2 : 1);
		n[se->stack_id] += se->samples;
	}
	for (int k = from_ms; k < to_ms; k++)
		c0 += (uint64_t)k;
	assert_int_equal(n[1], (uint64_t)count(from_ms, to_ms, is_even));
	assert_int_equal(n[2], (uint64_t)(count(from_ms, to_ms, NULL) -
					  count(from_ms, to_ms, is_even)));
	assert_int_equal(set->total[0], c0);
	stacks_free(set);
}

static void test_stacks_window(void **state)
{
	struct report_opts o = opts();
	struct error e;

	(void)state;
	check_stacks(0, 30);
	check_stacks(30, 100);
	check_stacks(30, 31);
	assert_null(stacks_window(X->f.db, &o, 50 * MS, 40 * MS, &e));
	assert_non_null(strstr(e.msg, "empty window"));
}

static const struct diff_row *diff_row_of(const struct diff *d, const char *name)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->rows[i].binary, name))
			return &d->rows[i];
	return NULL;
}

static void test_diff_windows(void **state)
{
	struct report_opts o = opts();
	struct diff_window w[2] = { { X->s.id, 0, 30 * MS }, { X->s.id, 30 * MS, 100 * MS } };
	const struct diff_row *r;
	struct diff *d = NULL;
	struct table *t;
	struct error e;
	char *json = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	/* two windows of one session: allowed, unlike two sessions alike */
	if (diff_build_windows(X->f.db, w, REPORT_BY_BINARY, &o, &d, &e) < 0)
		fail_msg("diff_build_windows: %s", e.msg);
	assert_int_equal(d->total[0], (uint64_t)count(0, 30, NULL));
	assert_int_equal(d->total[1], (uint64_t)count(30, 100, NULL));
	r = diff_row_of(d, "heap");
	assert_non_null(r);
	assert_int_equal(r->samples[0], (uint64_t)count(0, 30, is_heap));
	assert_int_equal(r->samples[1], (uint64_t)count(30, 100, is_heap));
	assert_true(fabs(r->percent[0] - 100.0 * count(0, 30, is_heap) / count(0, 30, NULL)) <
		    1e-9);
	assert_true(fabs(r->delta - (r->percent[1] - r->percent[0])) < 1e-12);
	assert_true(d->has_window[0] && d->has_window[1]);
	assert_int_equal(d->window[1][0], 30 * MS);
	assert_int_equal(d->window[1][1], 100 * MS);
	t = diff_table(d, &o, OUTPUT_JSON, 0);
	f = open_memstream(&json, &len);
	assert_non_null(f);
	assert_int_equal(table_write(t, OUTPUT_JSON, f), 0);
	fclose(f);
	assert_non_null(strstr(json, "\"a_window\":\"0s-0.03s\""));
	assert_non_null(strstr(json, "\"b_window\":\"0.03s-0.1s\""));
	free(json);
	table_free(t);
	diff_free(d);

	/* the same window twice, an empty window: the caller's mistakes */
	w[1] = w[0];
	assert_int_equal(diff_build_windows(X->f.db, w, REPORT_BY_BINARY, &o, &d, &e), -2);
	assert_null(d);
	assert_non_null(strstr(e.msg, "same window"));
	w[1].from_ns = 10 * MS;
	w[1].to_ns = 10 * MS;
	assert_int_equal(diff_build_windows(X->f.db, w, REPORT_BY_BINARY, &o, &d, &e), -2);
	assert_non_null(strstr(e.msg, "B: empty window"));
	/* diff_build() keeps refusing one session twice */
	assert_int_equal(diff_build(X->f.db, X->s.id, X->s.id, REPORT_BY_BINARY, &o, &d, &e), -2);
}

static void same_spans(size_t n, const struct timeline_span *a, const struct timeline_span *b)
{
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(a[i].from_ns, b[i].from_ns);
		assert_int_equal(a[i].to_ns, b[i].to_ns);
		assert_int_equal(a[i].count, b[i].count);
	}
}

/* timeline_events() gives what timeline_build() draws over its series. */
static void check_events(const struct timeline_opts *o)
{
	struct error e;
	struct timeline *a = timeline_events(X->f.db, o, &e), *b;

	if (!a)
		fail_msg("timeline_events: %s", e.msg);
	b = timeline_build(X->f.db, o, &e);
	if (!b)
		fail_msg("timeline_build: %s", e.msg);
	assert_int_equal(a->from_ns, b->from_ns);
	assert_int_equal(a->to_ns, b->to_ns);
	assert_int_equal(a->bucket_ns, b->bucket_ns);
	assert_int_equal(a->nbuckets, b->nbuckets);
	assert_int_equal(a->samples, 0);
	assert_int_equal(a->nlost, b->nlost);
	same_spans(a->nlost, a->lost, b->lost);
	assert_int_equal(a->lost_total, b->lost_total);
	assert_int_equal(a->throttles, b->throttles);
	assert_int_equal(a->nunsched, b->nunsched);
	assert_int_equal(a->nmarkers, b->nmarkers);
	for (size_t i = 0; i < a->nmarkers; i++) {
		assert_int_equal(a->markers[i].time_ns, b->markers[i].time_ns);
		assert_string_equal(a->markers[i].kind, b->markers[i].kind);
		assert_string_equal(a->markers[i].name, b->markers[i].name);
		assert_string_equal(a->markers[i].args, b->markers[i].args);
	}
	timeline_free(a);
	timeline_free(b);
}

static void test_timeline_events(void **state)
{
	struct timeline_opts o;
	struct timeline *t;
	struct error e;

	(void)state;
	memset(&o, 0, sizeof(o));
	o.session = X->s.id;
	o.pid = -1;
	o.bucket_ns = 10 * MS;
	check_events(&o);
	o.by = TL_BY_CPU;		/* ignored: spans are of the whole session */
	o.nrank = 1;
	check_events(&o);
	o.by = TL_BY_NONE;
	o.nrank = 0;
	o.has_from = o.has_to = 1;
	o.from_ns = 20 * MS;
	o.to_ns = 60 * MS;
	check_events(&o);

	/* in [20 ms, 60 ms]: the marker at 55 ms, the ring loss at 40.5 ms on
	 * CPU 0 between its samples at 40 and 42 ms, widened to its bucket */
	t = timeline_events(X->f.db, &o, &e);
	if (!t)
		fail_msg("timeline_events: %s", e.msg);
	assert_int_equal(t->nmarkers, 1);
	assert_string_equal(t->markers[0].name, "app:step");
	assert_string_equal(t->markers[0].args, "1,2");
	assert_int_equal(t->nlost, 1);
	assert_int_equal(t->lost_total, 7);
	assert_int_equal(t->lost[0].from_ns, START + 40 * MS);
	assert_int_equal(t->lost[0].to_ns, START + 50 * MS);
	assert_int_equal(t->throttles, 0);
	timeline_free(t);

	/* the whole session: all three markers, the three losses */
	o.has_from = o.has_to = 0;
	t = timeline_events(X->f.db, &o, &e);
	if (!t)
		fail_msg("timeline_events: %s", e.msg);
	assert_int_equal(t->nmarkers, 3);
	assert_int_equal(t->lost_total, 7 + 3);
	assert_int_equal(t->throttles, 1);
	timeline_free(t);

	o.has_from = 1;
	o.from_ns = 200 * MS;		/* after the end */
	assert_null(timeline_events(X->f.db, &o, &e));
	assert_non_null(strstr(e.msg, "empty time range"));
}

static void test_session_events(void **state)
{
	struct db_session s;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.nr_events = 3;
	snprintf(s.events[0].name, sizeof(s.events[0].name), "instructions");
	snprintf(s.events[1].name, sizeof(s.events[1].name), "cpu-cycles");
	snprintf(s.events[2].name, sizeof(s.events[2].name), "L1-dcache-load-misses");
	assert_int_equal(session_event_find(&s, "instructions"), 0);
	assert_int_equal(session_event_find(&s, "INSTRUCTIONS"), 0);	/* as -e names are */
	assert_int_equal(session_event_find(&s, "l1-dcache-load-misses"), 2);
	assert_int_equal(session_event_find(&s, "cycles"), -1);		/* by name only */
	assert_int_equal(session_event_find(&s, "nope"), -1);
	assert_int_equal(session_event_metric(&s, "cycles"), 1);	/* an alias */
	assert_int_equal(session_event_metric(&s, "instructions"), 0);
	assert_int_equal(session_event_metric(&s, "branches"), -1);
	s.nr_events = 1;
	assert_int_equal(session_event_find(&s, "cpu-cycles"), -1);	/* past nr_events */
	assert_int_equal(session_event_metric(&s, "cycles"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session_events),
		cmocka_unit_test(test_report_window),
		cmocka_unit_test(test_stacks_window),
		cmocka_unit_test(test_diff_windows),
		cmocka_unit_test(test_timeline_events),
	};

	(void)fix_path;		/* dbfix.h's helpers for the ELF workloads: */
	(void)fix_elf_func;	/* this fixture has no binary files */
	(void)fixdb_cache_file;
	return cmocka_run_group_tests(tests, setup, teardown);
}
