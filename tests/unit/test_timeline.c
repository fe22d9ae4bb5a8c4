/*
 * test_timeline.c - lib/query/timeline.c: the pure parts (the default bucket:
 * about 500 buckets or fewer, 1/2/5 x 10^k ms, at least 1 ms; bucket
 * counts; --by names), and the sums per fine time bucket (sample_time):
 * on a synthetic session made through lib/ingest/ingest.c (several CPUs,
 * processes, names and binaries, batches that split fine buckets, samples
 * stored out of time order), sample_time must equal a GROUP BY over the
 * raw samples, and every timeline read from it must equal, bit for bit,
 * the one from the raw scan, which it must fall back to when it cannot
 * answer exactly.
 */
#include "config.h"
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* nftw */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "bincache.h"
#include "db.h"
#include "ingest.h"
#include "timeline.h"

#define MS 1000000LL
#define S 1000000000LL

static void test_default_bucket(void **state)
{
	assert_int_equal(timeline_default_bucket(1 * S), 2 * MS);
	assert_int_equal(timeline_default_bucket(690 * MS), 2 * MS);
	assert_int_equal(timeline_default_bucket(2 * S), 5 * MS);	/* 4 ms -> 5 */
	assert_int_equal(timeline_default_bucket(10 * S), 20 * MS);
	assert_int_equal(timeline_default_bucket(60 * S), 200 * MS);	/* 120 ms -> 200 */
	assert_int_equal(timeline_default_bucket(3600 * S), 10 * S);	/* 7.2 s -> 10 s */
	/* never under 1 ms */
	assert_int_equal(timeline_default_bucket(100 * MS), 1 * MS);
	assert_int_equal(timeline_default_bucket(1), 1 * MS);
	assert_int_equal(timeline_default_bucket(0), 1 * MS);
}

static void test_default_bucket_count(void **state)
{
	/* from 0.5 s up, 200 to 500 buckets; always a 1/2/5 x 10^k ms */
	for (int64_t r = S / 2; r < 100000 * S; r = r * 11 / 10 + 12345) {
		int64_t b = timeline_default_bucket(r), m = b / MS;
		size_t n = timeline_bucket_count(r, b);

		assert_true(n >= 200 && n <= 500);
		assert_int_equal(b % MS, 0);
		while (m % 10 == 0)
			m /= 10;
		assert_true(m == 1 || m == 2 || m == 5);
	}
}

static void test_bucket_count(void **state)
{
	assert_int_equal(timeline_bucket_count(100 * MS, 10 * MS), 10);
	assert_int_equal(timeline_bucket_count(101 * MS, 10 * MS), 11);
	assert_int_equal(timeline_bucket_count(1, 10 * MS), 1);
	assert_int_equal(timeline_bucket_count(0, 10 * MS), 1);
}

static void test_parse_by(void **state)
{
	enum timeline_by by = TL_BY_NONE;

	assert_int_equal(timeline_parse_by("cpu", &by), 0);
	assert_int_equal(by, TL_BY_CPU);
	assert_int_equal(timeline_parse_by("pid", &by), 0);
	assert_int_equal(by, TL_BY_PID);
	assert_int_equal(timeline_parse_by("binary", &by), 0);
	assert_int_equal(by, TL_BY_BINARY);
	assert_int_equal(timeline_parse_by("symbol", &by), 0);
	assert_int_equal(by, TL_BY_SYMBOL);
	assert_int_equal(timeline_parse_by("line", &by), -1);
	assert_int_equal(timeline_parse_by("", &by), -1);
	assert_string_equal(timeline_by_name(TL_BY_SYMBOL), "symbol");
}

/* ---- a synthetic session ---- */

/* pids above PID_MAX_LIMIT: /proc never has them, so ingest opens the path */
#define P1	5000001u
#define P2	5000002u
#define P3	5000003u
#define P4	5000004u
#define MAPBASE	0x400000ULL
#define START	1234567LL		/* the session start: no multiple of anything */

struct fix {
	char dir[64];
	char path[128];
	struct db *db;
	struct bincache cache;
	struct db_session s;
	struct ingest *in;
	int64_t late;			/* samples stored after a later one */
};

static struct fix *current;

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(p);
}

static void fix_free(struct fix *f)
{
	ingest_free(f->in);
	db_close(f->db);
	bincache_close(&f->cache);
	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	current = NULL;
}

static int teardown(void **state)
{
	(void)state;
	if (current)
		fix_free(current);
	return 0;
}

static uint64_t rnd_state = 88172645463325252ULL;

static uint64_t rnd(uint64_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state % n;
}

static void put_sample(struct fix *f, uint32_t cpu, int64_t t, uint32_t pid, uint64_t ip,
		       uint64_t *counters)
{
	struct record r;
	struct error e;

	memset(&r, 0, sizeof(r));
	r.type = STROBE_REC_SAMPLE;
	r.cpu = cpu;
	r.time_ns = (uint64_t)t;
	r.sample.ip = ip;
	r.sample.pid = pid;
	r.sample.tid = pid;
	r.sample.flags = STROBE_SAMPLE_USER;
	r.sample.nr_counters = 2;
	counters[0] += rnd(5000);
	counters[1] += rnd(3) ? rnd(100000) : 0;
	r.sample.counters[0] = counters[0];
	r.sample.counters[1] = counters[1];
	if (ingest_record(f->in, &r, &e))
		fail_msg("ingest_record: %s", e.msg);
}

/*
 * 30,000 samples over about 3 s on 3 CPUs: four processes, P2 renamed
 * (exec) half-way, P1 with its own executable mapped, so that samples
 * fall in two binaries; a commit every 2,500 samples (fine buckets split
 * between batches), and one sample in 200 stored 3 ms late.
 */
static struct fix *fix_session(void)
{
	struct fix *f = calloc(1, sizeof(*f));
	uint64_t counters[3][2] = { { 0 } };
	char self[PATH_MAX];
	struct sink_mmap m;
	struct stat st;
	struct error e;
	int64_t t = START + 100000, max = INT64_MIN;
	char *cdir;
	ssize_t n;

	assert_non_null(f);
	current = f;
	snprintf(f->dir, sizeof(f->dir), "/tmp/strobe-test-timeline-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/strobe.db", f->dir);
	f->db = db_open(f->path, DB_WRITE, &e);
	if (!f->db)
		fail_msg("db_open: %s", e.msg);
	cdir = db_cache_dir(f->db);
	assert_int_equal(bincache_open(&f->cache, cdir, &e), 0);
	free(cdir);
	snprintf(f->s.state, sizeof(f->s.state), "running");
	snprintf(f->s.backend, sizeof(f->s.backend), "perf");
	snprintf(f->s.sample_event, sizeof(f->s.sample_event), "cpu-clock");
	f->s.nr_cpus = 3;
	f->s.sample_freq = 1000;
	f->s.start_ns = START;
	f->s.nr_events = 2;
	snprintf(f->s.events[0].name, sizeof(f->s.events[0].name), "instructions");
	snprintf(f->s.events[1].name, sizeof(f->s.events[1].name), "page-faults");
	if (db_session_insert(f->db, &f->s, &e))
		fail_msg("db_session_insert: %s", e.msg);
	f->in = ingest_new(f->db, &f->cache, &f->s, &e);
	if (!f->in)
		fail_msg("ingest_new: %s", e.msg);

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = 0;
	assert_int_equal(stat(self, &st), 0);
	assert_int_equal(ingest_comm(f->in, P1, P1, "one", 0, START, &e), 0);
	assert_int_equal(ingest_comm(f->in, P2, P2, "two", 0, START, &e), 0);
	assert_int_equal(ingest_comm(f->in, P3, P3, "three", 0, START, &e), 0);
	memset(&m, 0, sizeof(m));
	m.pid = P1;
	m.start = MAPBASE;
	m.len = 0x1000;
	m.prot = PROT_READ | PROT_EXEC;
	m.filename = self;
	m.maj = major(st.st_dev);
	m.min = minor(st.st_dev);
	m.ino = st.st_ino;
	m.time_ns = START;
	if (ingest_mmap(f->in, &m, &e))
		fail_msg("ingest_mmap: %s", e.msg);

	for (int i = 0; i < 30000; i++) {
		static const uint32_t pids[] = { P1, P1, P2, P3, P4, 0 };
		uint32_t cpu = (uint32_t)rnd(3), pid = pids[rnd(ARRAY_SIZE(pids))];
		int64_t when = t;

		if (i == 15000)
			assert_int_equal(ingest_comm(f->in, P2, P2, "two-b", 1, t, &e), 0);
		if (i % 200 == 199)
			when = t - 3000000;	/* late */
		if (when < max)
			f->late++;
		else
			max = when;
		put_sample(f, cpu, when, pid, MAPBASE + rnd(0x1400), counters[cpu]);
		t += 1 + (int64_t)rnd(199999);
		if (i % 2500 == 2499 && ingest_commit(f->in, &e))
			fail_msg("ingest_commit: %s", e.msg);
	}
	if (ingest_finish(f->in, (uint64_t)t, &e))
		fail_msg("ingest_finish: %s", e.msg);
	return f;
}

static int64_t q_int(struct fix *f, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	assert_int_equal(sqlite3_prepare_v2(db_sqlite(f->db), sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* sample_time is the GROUP BY of the raw samples, and late_samples counts. */
static void test_time_sums_rows(void **state)
{
	struct fix *f = fix_session();
	char sql[2048];
	struct db_session s;
	struct error e;

	(void)state;
	snprintf(sql, sizeof(sql),
		 "WITH g AS (SELECT (time_ns-%lld)/10000000 - ((time_ns-%lld)%%10000000<0) AS bucket,"
		 " cpu,pid,comm_id,binary_id,count(*) AS n,max(rowid) AS lr,min(time_ns) AS mn,"
		 " max(time_ns) AS mx,sum(c0) AS s0,sum(c1) AS s1 FROM samples GROUP BY 1,2,3,4,5) "
		 "SELECT count(*) FROM (SELECT * FROM g EXCEPT SELECT bucket,cpu,pid,comm_id,"
		 "binary_id,samples,last_row,min_ns,max_ns,c0,c1 FROM sample_time)",
		 START, START);
	assert_int_equal(q_int(f, sql), 0);
	assert_int_equal(q_int(f, "SELECT sum(samples) FROM sample_time"), 30000);
	assert_true(q_int(f, "SELECT count(DISTINCT binary_id) FROM sample_time") >= 2);
	assert_true(q_int(f, "SELECT count(*) FROM sample_time WHERE c2 IS NOT NULL") == 0);
	assert_int_equal(db_session_get(f->db, 0, &s, &e), 0);
	assert_int_equal(s.time_bucket_ns, INGEST_TIME_BUCKET_NS);
	assert_true(f->late > 100);
	assert_int_equal(s.late_samples, f->late);
	fix_free(f);
}

static void same_group(const struct timeline *a, const struct timeline_group *ga,
		       const struct timeline_group *gb)
{
	assert_string_equal(ga->name, gb->name);
	assert_memory_equal(ga->total, gb->total, sizeof(ga->total));
	assert_memory_equal(ga->v, gb->v, a->nbuckets * (size_t)a->nv * sizeof(double));
}

/* Build o both ways; they must agree, and summed must be as expected. */
static void both_ways(struct fix *f, struct timeline_opts o, int summed)
{
	struct timeline *a, *b;
	struct error e;

	o.raw = 0;
	a = timeline_build(f->db, &o, &e);
	if (!a)
		fail_msg("timeline_build: %s", e.msg);
	o.raw = 1;
	b = timeline_build(f->db, &o, &e);
	if (!b)
		fail_msg("timeline_build (raw): %s", e.msg);
	if (a->summed != summed)
		fail_msg("by %d from %lld to %lld bucket %lld: summed %d, not %d", (int)o.by,
			 (long long)o.from_ns, (long long)o.to_ns, (long long)o.bucket_ns,
			 a->summed, summed);
	assert_int_equal(b->summed, 0);
	assert_int_equal(a->nbuckets, b->nbuckets);
	assert_int_equal(a->from_ns, b->from_ns);
	assert_int_equal(a->bucket_ns, b->bucket_ns);
	assert_int_equal(a->samples, b->samples);
	assert_int_equal(a->nkeys, b->nkeys);
	same_group(a, &a->all, &b->all);
	assert_int_equal(a->ngroups, b->ngroups);
	for (size_t i = 0; i < a->ngroups; i++)
		same_group(a, &a->groups[i], &b->groups[i]);
	assert_int_equal(a->nranks, b->nranks);
	for (int r = 0; r < a->nranks; r++) {
		assert_int_equal(a->ranks[r].n, b->ranks[r].n);
		assert_int_equal(a->ranks[r].rest, b->ranks[r].rest);
		assert_memory_equal(a->ranks[r].idx, b->ranks[r].idx,
				    a->ranks[r].n * sizeof(size_t));
	}
	timeline_free(a);
	timeline_free(b);
}

static void test_time_sums_equal_raw(void **state)
{
	struct fix *f = fix_session();
	static const enum timeline_by bys[] = { TL_BY_NONE, TL_BY_CPU, TL_BY_PID, TL_BY_BINARY };
	struct timeline_opts o;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bys); i++) {
		memset(&o, 0, sizeof(o));
		o.pid = -1;
		o.by = bys[i];
		o.top = 2;
		o.nrank = 3;
		o.rank[0] = 0;
		o.rank[1] = 1;
		o.rank[2] = 2;
		both_ways(f, o, 1);			/* default bucket, whole session */
		o.bucket_ns = 10 * MS;
		both_ways(f, o, 1);
		o.bucket_ns = 50 * MS;
		o.has_from = o.has_to = 1;
		o.from_ns = 300 * MS;
		o.to_ns = 1200 * MS - 1;		/* --to ends a fine bucket */
		both_ways(f, o, 1);
		o.to_ns = 2 * S;			/* a fine bucket starts at --to */
		both_ways(f, o, 1);
		o.to_ns = 1234 * MS + 567;		/* within a fine bucket */
		both_ways(f, o, 0);
		o.has_to = 0;
		o.bucket_ns = 7 * MS;			/* no multiple of 10 ms */
		both_ways(f, o, 0);
		o.bucket_ns = 20 * MS;
		o.from_ns = 305 * MS;			/* --from inside a fine bucket */
		both_ways(f, o, 0);
		o.from_ns = 310 * MS;
		o.pid = P2;
		both_ways(f, o, 1);
		o.pid = -1;
		o.comm = "two-b";
		both_ways(f, o, 1);
		o.comm = NULL;
		o.binary = "[unknown]";
		both_ways(f, o, 1);
	}
	/* a session from before schema 5 has no sums */
	assert_int_equal(sqlite3_exec(db_sqlite(f->db), "UPDATE sessions SET time_bucket_ns=NULL",
				      NULL, NULL, NULL), SQLITE_OK);
	memset(&o, 0, sizeof(o));
	o.pid = -1;
	o.by = TL_BY_PID;
	o.nrank = 1;
	both_ways(f, o, 0);
	fix_free(f);
}

/*
 * Where the sampling group did not count: each unscheduled row becomes a
 * span widened to the buckets it touches; overlapping ones (two CPUs at
 * once) merge and add up; rows outside the range are left out.
 */
static void test_unsched_spans(void **state)
{
	struct fix *f = fix_session();
	struct timeline_opts o;
	struct timeline *t;
	struct error e;
	char sql[512];

	(void)state;
	snprintf(sql, sizeof(sql),
		 "INSERT INTO unscheduled VALUES(%lld,0,%lld,%lld,20000000,5000000,'multiplexed'),"
		 "(%lld,1,%lld,%lld,20000000,0,'multiplexed'),"
		 "(%lld,1,%lld,%lld,200000000,0,'unschedulable')",
		 (long long)f->s.id, START + 105 * MS, START + 125 * MS,
		 (long long)f->s.id, START + 115 * MS, START + 135 * MS,
		 (long long)f->s.id, START + 5 * S, START + 5 * S + 200 * MS);
	assert_int_equal(sqlite3_exec(db_sqlite(f->db), sql, NULL, NULL, NULL), SQLITE_OK);
	memset(&o, 0, sizeof(o));
	o.pid = -1;
	o.bucket_ns = 10 * MS;
	o.has_to = 1;
	o.to_ns = 1 * S;
	t = timeline_build(f->db, &o, &e);
	if (!t)
		fail_msg("timeline_build: %s", e.msg);
	assert_int_equal(t->nunsched, 1);
	assert_int_equal(t->unsched[0].from_ns, START + 100 * MS);
	assert_int_equal(t->unsched[0].to_ns, START + 140 * MS);
	assert_int_equal(t->unsched[0].count, 15000000 + 20000000);
	assert_int_equal(t->unsched_ns, 35000000);
	timeline_free(t);
	fix_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_bucket),
		cmocka_unit_test(test_default_bucket_count),
		cmocka_unit_test(test_bucket_count),
		cmocka_unit_test(test_parse_by),
		cmocka_unit_test_teardown(test_time_sums_rows, teardown),
		cmocka_unit_test_teardown(test_time_sums_equal_raw, teardown),
		cmocka_unit_test_teardown(test_unsched_spans, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
