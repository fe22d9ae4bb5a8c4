/*
 * test_pushgen.c - the rows 'strobe push' makes of a session's markers and
 * lost records (lib/fleet/pushgen.c over lib/store/eventscan.c), as TSV,
 * byte for byte: their order (time, then rowid; time, cpu, rowid), NULL
 * columns (a 'strobe mark' has no cpu, pid, tid or args: -1, 0, 0, ""),
 * escaping, the day of each row from its time, and batches cut where the
 * day changes and numbered on from table to table.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "db.h"
#include "pushgen.h"
#define SCRATCH_NAME "pushgen"
#include "scratch.h"

#define S	1000000000LL
#define WALL	(1709251200LL * S)	/* monotonic 0 is 2024-03-01 00:00 UTC */

/* every batch emitted: "table batch [cols]" and its rows */
static struct sbuf out;

static int emit_collect(struct gen *g, uint32_t batch, const char *table, const char *cols,
			const struct sbuf *rows, struct error *e)
{
	(void)g;
	(void)e;
	sbuf_addf(&out, "%s %u [%s]\n%s", table, batch, cols, rows->s ? rows->s : "");
	return 0;
}

static void marker(struct db *db, int64_t sid, uint64_t t, int cpu, int64_t pid, int64_t tid,
		   const char *kind, const char *name, const char *args)
{
	struct db_marker m = { t, cpu, pid, tid, kind, name, args };
	struct error e;

	if (db_marker_insert(db, sid, &m, &e) < 0)
		fail_msg("db_marker_insert: %s", e.msg);
}

static void lost(struct db *db, int64_t sid, uint32_t cpu, uint64_t t, uint64_t n,
		 const char *kind)
{
	struct error e;

	if (db_lost_insert(db, sid, cpu, t, n, kind, &e) < 0)
		fail_msg("db_lost_insert: %s", e.msg);
}

static void test_markers_and_lost(void **state)
{
	struct db_session s;
	struct error e;
	struct gen g;
	struct db *db;
	uint32_t end = 0;
	char want[2048];
	long long id;

	(void)state;
	db = db_open(path_of("push.db"), DB_WRITE, &e);
	if (!db)
		fail_msg("db_open: %s", e.msg);
	memset(&s, 0, sizeof(s));
	snprintf(s.state, sizeof(s.state), "done");
	snprintf(s.backend, sizeof(s.backend), "perf");
	snprintf(s.sample_event, sizeof(s.sample_event), "cpu-clock");
	s.nr_cpus = 4;
	s.sample_freq = 1000;
	s.start_ns = 1 * S;
	s.wall_offset_ns = WALL;
	if (db_session_insert(db, &s, &e))
		fail_msg("db_session_insert: %s", e.msg);
	id = (long long)s.id;

	/* inserted out of time order; two at the same time keep theirs */
	marker(db, s.id, 5 * S, 2, 100, 101, "usdt", "app:start", "1,-2");
	marker(db, s.id, 5 * S, -1, -1, -1, "mark", "tab\there\nnext", NULL);
	marker(db, s.id, 86405 * S, 1, 5, 6, "usdt", "app:start", "3");
	marker(db, s.id, 4 * S, 0, 7, 7, "usdt", "a:b", "");
	lost(db, s.id, 1, 6 * S, 10, "ring");
	lost(db, s.id, 0, 6 * S, 3, "spool");
	lost(db, s.id, 3, 2 * S, 0, "throttle");
	assert_int_equal(db_int(db, "SELECT count(*) FROM markers"), 4);
	assert_int_equal(db_int(db, "SELECT count(*) FROM lost"), 3);

	memset(&g, 0, sizeof(g));
	g.db = db;
	g.s = &s;
	g.host = "h1";
	g.start_day = push_day(s.start_ns + WALL);
	g.batch_rows = 100;
	g.emit = emit_collect;
	otable_init(&g.locs, sizeof(struct loc), 16, 64);
	reagg_init(&g.agg);
	if (pushgen_part(&g, 1, 1, 0, 1, &end, &e) < 0)
		fail_msg("pushgen_part: %s", e.msg);

	snprintf(want, sizeof(want),
		 "markers 1 [host, session, batch, day, time_ns, cpu, pid, tid, kind, name, args]\n"
		 "h1\t%lld\t1\t2024-03-01\t4000000000\t0\t7\t7\tusdt\ta:b\t\n"
		 "h1\t%lld\t1\t2024-03-01\t5000000000\t2\t100\t101\tusdt\tapp:start\t1,-2\n"
		 "h1\t%lld\t1\t2024-03-01\t5000000000\t-1\t0\t0\tmark\ttab\\there\\nnext\t\n"
		 "markers 2 [host, session, batch, day, time_ns, cpu, pid, tid, kind, name, args]\n"
		 "h1\t%lld\t2\t2024-03-02\t86405000000000\t1\t5\t6\tusdt\tapp:start\t3\n"
		 "lost 3 [host, session, batch, day, time_ns, cpu, count, kind]\n"
		 "h1\t%lld\t3\t2024-03-01\t2000000000\t3\t0\tthrottle\n"
		 "h1\t%lld\t3\t2024-03-01\t6000000000\t0\t3\tspool\n"
		 "h1\t%lld\t3\t2024-03-01\t6000000000\t1\t10\tring\n",
		 id, id, id, id, id, id, id);
	assert_non_null(out.s);
	assert_string_equal(out.s, want);
	/* nothing else: no processes, samples or binaries */
	assert_int_equal(end, 4);

	free(out.s);
	otable_free(&g.locs);
	reagg_free(&g.agg);
	db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_markers_and_lost),
	};

	return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
