/*
 * test_where.c - metric conditions (lib/query/where.c): "EXPR OP NUMBER"
 * parsed or refused with a message saying why; the kept buckets of a
 * session as time ranges (adjacent ones merged, the last one holding the
 * range's end, an undefined bucket kept by neither side); report_build()
 * with a condition holding exactly the samples of those buckets, or per
 * sample those whose own counter increase holds it.
 *
 * The fixture, made through lib/store/db.h (no daemon): one finished
 * session of 100 ms, sample k at k ms after its start for k in 0..99 but
 * 50..59 (no samples there), counting event "instructions" with the
 * increase k.  Every expected figure is counted from k here.
 */
#include "config.h"
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "dbfix.h"
#include "report.h"
#include "where.h"

#define MS 1000000LL
#define START 7000000000LL
#define NSAMP 100

static struct fixdb F;
static struct db_session S;

static int in_gap(int k)
{
	return k >= 50 && k < 60;
}

static int setup(void **state)
{
	struct error e = { "" };
	struct db *db;
	int64_t bin;

	(void)state;
	assert_int_equal(fixdb_open(&F, "where"), 0);
	db = F.db;
	bin = db_binary_intern(db, "[heap]", "[heap]", -1, 0, NULL, &e);
	assert_true(bin > 0);
	snprintf(S.name, sizeof(S.name), "where");
	snprintf(S.state, sizeof(S.state), "running");
	snprintf(S.backend, sizeof(S.backend), "perf");
	snprintf(S.sample_event, sizeof(S.sample_event), "cpu-clock");
	snprintf(S.tsc_source, sizeof(S.tsc_source), "none");
	S.nr_cpus = 1;
	S.sample_freq = 1000;
	S.start_ns = START;
	S.nr_events = 1;
	snprintf(S.events[0].name, sizeof(S.events[0].name), "instructions");
	if (db_session_insert(db, &S, &e) < 0)
		fail_msg("db_session_insert: %s", e.msg);
	assert_int_equal(db_begin(db, &e), 0);
	for (int k = 0; k < NSAMP; k++) {
		struct db_sample smp = {
			.session_id = S.id, .time_ns = (uint64_t)(START + k * MS), .cpu = 0,
			.pid = 77, .tid = 77, .binary_id = bin, .offset = 0x10,
			.flags = STROBE_SAMPLE_USER, .nr = 1, .c = { (uint64_t)k }, .period = 1000,
		};
		int64_t rowid;

		if (in_gap(k))
			continue;
		rowid = db_sample_insert(db, &smp, &e);
		if (rowid <= 0)
			fail_msg("db_sample_insert: %s", e.msg);
		if (!S.first_sample)
			S.first_sample = rowid;
		S.last_sample = rowid;
		S.samples++;
	}
	S.end_ns = START + NSAMP * MS;
	S.duration_ns = NSAMP * MS;
	snprintf(S.state, sizeof(S.state), "done");
	assert_int_equal(db_session_update(db, &S, &e), 0);
	assert_int_equal(db_commit(db, &e), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixdb_close(&F);
	return 0;
}

static void parses(const char *src, enum where_op op, double num)
{
	struct where w;
	struct error e = { "" };

	memset(&w, 0, sizeof(w));
	if (where_parse(&w, src, &e) < 0)
		fail_msg("'%s': %s", src, e.msg);
	assert_int_equal(w.op, op);
	assert_true(w.threshold == num);
	assert_non_null(w.x);
	where_free(&w);
}

static void refused(const char *src, const char *want)
{
	struct where w;
	struct error e = { "" };

	memset(&w, 0, sizeof(w));
	assert_int_equal(where_parse(&w, src, &e), -1);
	if (!strstr(e.msg, want) || strchr(e.msg, '\n'))
		fail_msg("'%s': '%s' does not say '%s' in one line", src, e.msg, want);
	where_free(&w);
}

static void test_parse(void **state)
{
	struct where w;
	struct error e = { "" };

	(void)state;
	parses("page-faults > 200", WHERE_GT, 200);
	parses("1000*dTLB-load-misses/instructions >= 5", WHERE_GE, 5);
	parses("  samples<1e3 ", WHERE_LT, 1000);
	parses("samples <= -2.5", WHERE_LE, -2.5);
	parses("\"a>b\" > 1", WHERE_GT, 1);	/* a quoted name may hold '>' */
	memset(&w, 0, sizeof(w));
	assert_int_equal(where_parse(&w, "IPC < 0.5", &e), 0);
	assert_non_null(w.catalog);	/* a catalogue metric by name */
	where_free(&w);
	refused("samples", "no comparison");
	refused("samples = 3", "one comparison");
	refused("samples > 1 < 2", "one comparison");
	refused("samples >> 1", "one comparison");
	refused("samples != 1", "one comparison");
	refused("> 3", "nothing before >");
	refused("samples > ", "is not a number");
	refused("samples > 3x", "'3x' after > is not a number");
	refused("samples > instructions", "is not a number");
	refused("(samples > 3", "column");
}

static struct report_opts opts(struct where *w)
{
	struct report_opts o;

	memset(&o, 0, sizeof(o));
	o.session = S.id;
	o.pid = -1;
	o.by = REPORT_BY_BINARY;
	o.where = w;
	return o;
}

static void condition(struct where *w, const char *src, int invert, int per_sample,
		      int64_t bucket)
{
	struct error e = { "" };

	memset(w, 0, sizeof(*w));
	if (where_parse(w, src, &e) < 0)
		fail_msg("'%s': %s", src, e.msg);
	w->invert = invert;
	w->per_sample = per_sample;
	w->bucket_ns = bucket;
}

/* The samples of a report with w. */
static int64_t report_with(struct where *w)
{
	struct report_opts o = opts(w);
	struct report_summary sum;
	struct error e = { "" };
	struct table *t = report_build(F.db, &o, &sum, &e);

	if (!t)
		fail_msg("report_build: %s", e.msg);
	table_free(t);
	return (int64_t)sum.samples;
}

/* Per 10 ms bucket b the mean increase is 10 b + 4.5, and bucket 5 has no
 * samples (0/0: undefined): "instructions / samples > 35" holds in 4 and
 * 6..9, fails in 0..3. */
static void test_buckets(void **state)
{
	struct where w;
	struct report_opts o;
	struct error e = { "" };

	(void)state;
	condition(&w, "instructions / samples > 35", 0, 0, 10 * MS);
	o = opts(NULL);
	if (where_select(&w, F.db, &S, &o, &e) < 0)
		fail_msg("where_select: %s", e.msg);
	assert_int_equal(w.buckets, 10);
	assert_int_equal(w.kept, 5);
	assert_int_equal(w.undefined, 1);
	assert_int_equal(w.samples, 90);
	assert_int_equal(w.samples_kept, 50);
	assert_int_equal(w.nkeep, 2);		/* 4, then 6..9 merged */
	assert_int_equal(w.keep[0], START + 40 * MS);
	assert_int_equal(w.keep[1], START + 50 * MS - 1);
	assert_int_equal(w.keep[2], START + 60 * MS);
	assert_int_equal(w.keep[3], START + 100 * MS);	/* the end itself */
	assert_int_equal(w.kept_ns, 50 * MS);
	where_free(&w);

	/* through the report: the samples of those buckets; --invert the
	 * 40 of 0..3; the undefined bucket (no samples) in neither */
	condition(&w, "instructions / samples > 35", 0, 0, 10 * MS);
	assert_int_equal(report_with(&w), 50);
	where_free(&w);
	condition(&w, "instructions / samples > 35", 1, 0, 10 * MS);
	assert_int_equal(report_with(&w), 40);
	assert_int_equal(w.nkeep, 1);
	assert_int_equal(w.keep[0], START);
	assert_int_equal(w.keep[1], START + 40 * MS - 1);
	where_free(&w);

	/* "seconds" is the bucket's length: 10 samples in 10 ms is 1000/s,
	 * the empty bucket 0/s (defined, so inverted it is kept) */
	condition(&w, "samples / seconds >= 1000", 1, 0, 10 * MS);
	assert_int_equal(report_with(&w), 0);
	assert_int_equal(w.kept, 1);
	assert_int_equal(w.undefined, 0);
	where_free(&w);
}

/* Per sample: the sample's own increase k. */
static void test_samples(void **state)
{
	struct where w;

	(void)state;
	condition(&w, "instructions >= 90", 0, 1, 0);
	assert_int_equal(report_with(&w), 10);
	assert_int_equal(w.seen, 90);
	assert_int_equal(w.held, 10);
	where_free(&w);
	condition(&w, "instructions >= 90", 1, 1, 0);
	assert_int_equal(report_with(&w), 80);
	where_free(&w);
	/* 1 / k: undefined for k = 0 only, kept by neither side */
	condition(&w, "samples / instructions > 0", 0, 1, 0);
	assert_int_equal(report_with(&w), 89);
	assert_int_equal(w.undef, 1);
	where_free(&w);
	condition(&w, "samples / instructions > 0", 1, 1, 0);
	assert_int_equal(report_with(&w), 0);
	where_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_samples),
	};

	(void)fix_path;		/* dbfix.h's helpers for the ELF workloads: */
	(void)fix_elf_func;	/* this fixture has no binary files */
	(void)fixdb_cache_file;
	return cmocka_run_group_tests(tests, setup, teardown);
}
