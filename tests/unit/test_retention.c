/*
 * test_retention.c - removing sessions: lib/store/retention.c, lib/store/cachegc.c.
 *
 * The limits' parsers take what the README promises and refuse the rest
 * with the option's name.  retention_remove refuses an unknown session, a
 * running one and another uid's (unless root) without changing anything,
 * and a session marked for removal is gone for db_session_get.
 * retention_step never deletes more than its budget (plus the session row)
 * in one call, leaves other sessions' rows alone, and ends with every row
 * of the session gone, its raw stacks in DB.stacks too.  retention_usage
 * counts DB.stacks.  retention_plan picks by age and by size, oldest
 * first, never the running session, and by size never the newest one.  retention_gc_binaries keeps binaries
 * referenced by a histogram, a session's kernel, or the samples of a
 * session stored without a histogram; cachegc_prune removes the entries
 * no row refers to and left-over temporary files, keeps the rest and
 * files not of the cache's layout, and unlinks a symlink without touching
 * its target.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cachegc.h"
#include "db.h"
#include "retention.h"

#define SCRATCH_NAME "retention"
#include "scratch.h"

static void exec_ok(struct db *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db_sqlite(db), sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
}


static struct db *fresh(const char *name)
{
	struct error e;
	struct db *db = db_open(path_of(name), DB_WRITE, &e);

	if (!db)
		fail_msg("db_open: %s", e.msg);
	return db;
}

/* Session id of owner in state, ended end_wall_s seconds after the epoch,
 * with n samples (rowids from first) of binary, their histogram (when the
 * state has one), and rows in every other table. */
static void add_session(struct db *db, int id, const char *state, int owner, int64_t end_wall_s,
			int n, int first, int binary)
{
	char sql[2048], range[64];

	if (n)
		snprintf(range, sizeof(range), "%d,%d", first, first + n - 1);
	else
		snprintf(range, sizeof(range), "NULL,NULL");
	snprintf(sql, sizeof(sql),
		 "INSERT INTO sessions(id,state,backend,owner_uid,nr_cpus,sample_event,start_ns,"
		 "end_ns,wall_offset_ns,first_sample,last_sample,samples,kallsyms_key) VALUES(%d,'%s',"
		 "'perf',%d,2,'cpu-clock',1000,3000,%lld-3000,%s,%d,'kallsyms:%032d');"
		 "WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM r WHERE i+1<%d) "
		 "INSERT INTO samples(rowid,session_id,time_ns,cpu,pid,tid,comm_id,binary_id,offset,"
		 "flags) SELECT %d+i,%d,2000+i,i%%2,i%%7,i%%7,0,%d,i%%13,1 FROM r WHERE %d>0;"
		 "INSERT INTO sample_agg SELECT session_id,binary_id,offset,pid,comm_id,flags,0,count(*),"
		 "NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL FROM samples WHERE session_id=%d AND "
		 "'%s' IN ('done','interrupted') GROUP BY 1,2,3,4,5,6;"
		 "INSERT INTO processes(session_id,pid,ppid,comm_id,start_ns,exit_ns) "
		 "VALUES(%d,1,0,0,5,NULL),(%d,2,1,0,6,NULL);"
		 "INSERT INTO lost VALUES(%d,0,2500,4,'ring');"
		 "INSERT INTO markers(session_id,time_ns,kind,name) VALUES(%d,2600,'mark','m');"
		 "INSERT INTO session_cpus(session_id,cpu,samples,lost) VALUES(%d,0,1,0),(%d,1,1,0);"
		 "INSERT INTO session_events VALUES(%d,0,'page-faults',1,2,0,0);"
		 "INSERT INTO session_probes(session_id,spec,offset,nargs) VALUES(%d,'/x:p:n',1,0);",
		 id, state, owner, (long long)end_wall_s * 1000000000LL, range, n, id,
		 n, first, id, binary, n, id, state, id, id, id, id, id, id, id, id);
	exec_ok(db, sql);
	/* schema 14: a stack of two frames (its binary, then binary + 100),
	 * its histogram row, an unwinding failure and a raw stack (in
	 * DB.stacks, schema 17) */
	snprintf(sql, sizeof(sql),
		 "INSERT INTO stacks VALUES(%d,1,0,2,4,"
		 "X'%02x00000000000000' || zeroblob(8) || X'%02x00000000000000' || zeroblob(8));"
		 "INSERT INTO stack_agg(session_id,stack_id,pid,comm_id,start_ns,samples) "
		 "VALUES(%d,1,1,0,5,3);"
		 "INSERT INTO unwind_errors VALUES(%d,%d,'no CFI',2);"
		 "INSERT INTO rawstk.raw_stacks VALUES(%d,%d,zeroblob(40));"
		 /* schema 15: a count session's value (any session's is removed) */
		 "INSERT INTO count_values VALUES(%d,10,0,'',5.0,100.0);",
		 id, binary, binary + 100, id, id, binary, id, first, id);
	exec_ok(db, sql);
}

static int64_t rows_of(struct db *db, int id)
{
	/* sample_blocks: a block is the unit retention_step counts */
	static const char *const t[] = { "sample_blocks", "sample_agg", "processes", "lost", "markers",
					 "session_cpus", "session_events", "session_probes",
					 "stacks", "stack_agg", "unwind_errors", "rawstk.raw_stacks",
					 "count_values" };
	char sql[128];
	int64_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE session_id=%d", t[i], id);
		n += db_int(db, sql);
	}
	return n;
}

static void test_parse(void **state)
{
	static const struct { const char *s; uint64_t v; } sizes[] = {
		{ "1024", 1024 }, { "1k", 1024 }, { "500M", 500ULL << 20 }, { "2G", 2ULL << 30 },
		{ "2GiB", 2ULL << 30 }, { "3MB", 3ULL << 20 }, { "1T", 1ULL << 40 },
	};
	static const char *const bad_sizes[] = { "0", "", "M", "12Q", "-5", "1.5G", "5 M",
						 "99999999999T", "0x10" };
	static const char *const bad_days[] = { "0", "-1", "", "abc", "3x", "1e9", "nan", "inf" };
	struct error e;
	uint64_t v;
	int64_t ns;

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		assert_int_equal(retention_parse_size(sizes[i].s, &v, &e), 0);
		assert_int_equal(v, sizes[i].v);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad_sizes); i++) {
		assert_int_equal(retention_parse_size(bad_sizes[i], &v, &e), -1);
		assert_non_null(strstr(e.msg, "bad --max-size"));
	}
	assert_int_equal(retention_parse_days("30", &ns, &e), 0);
	assert_int_equal(ns, 30 * 86400000000000LL);
	assert_int_equal(retention_parse_days("0.5", &ns, &e), 0);
	assert_int_equal(ns, 43200000000000LL);
	for (size_t i = 0; i < ARRAY_SIZE(bad_days); i++) {
		assert_int_equal(retention_parse_days(bad_days[i], &ns, &e), -1);
		assert_non_null(strstr(e.msg, "bad --keep"));
	}
}

static void test_remove(void **state)
{
	struct db *db = fresh("remove.db");
	struct db_session s;
	struct error e;
	int64_t ids[2];

	add_session(db, 1, "done", 1000, 100, 10, 1, 1);
	add_session(db, 2, "done", 1001, 100, 10, 11, 1);
	add_session(db, 3, "running", 1001, 100, 10, 21, 1);

	ids[0] = 1;
	assert_int_equal(retention_remove(db, ids, 1, 1001, 0, &e), -1);
	assert_non_null(strstr(e.msg, "permission denied: session 1 belongs to uid 1000"));
	ids[1] = 99;
	assert_int_equal(retention_remove(db, ids, 2, 0, 0, &e), -1);
	assert_non_null(strstr(e.msg, "no session 99"));
	assert_non_null(strstr(e.msg, "nothing was removed"));
	ids[0] = 3;
	assert_int_equal(retention_remove(db, ids, 1, 0, 0, &e), -1);
	assert_non_null(strstr(e.msg, "session 3 is running"));
	ids[0] = 1;
	assert_int_equal(retention_remove(db, ids, 1, 0, 1, &e), -1);	/* the daemon's */
	assert_non_null(strstr(e.msg, "session 1 is running"));
	assert_int_equal(retention_remove(db, ids, 0, 0, 0, &e), -1);
	assert_int_equal(db_int(db, "SELECT count(*) FROM sessions WHERE state='deleting'"), 0);

	/* the owner may */
	assert_int_equal(retention_remove(db, ids, 1, 1000, 0, &e), 0);
	assert_int_equal(db_session_get(db, 1, &s, &e), -1);
	assert_non_null(strstr(e.msg, "no session 1"));
	assert_int_equal(db_session_get(db, 2, &s, &e), 0);
	assert_int_equal(retention_remove(db, ids, 1, 0, 0, &e), -1);	/* already going */
	assert_non_null(strstr(e.msg, "no session 1"));
	/* root may remove anyone's; the latest is then the one before */
	ids[0] = 2;
	exec_ok(db, "UPDATE sessions SET state='done' WHERE id=3");
	ids[1] = 3;
	assert_int_equal(retention_remove(db, ids, 2, 0, 0, &e), 0);
	assert_int_equal(db_session_get(db, 0, &s, &e), -1);
	assert_non_null(strstr(e.msg, "no sessions"));
	db_close(db);
}

static void test_step(void **state)
{
	struct db *db = fresh("step.db");
	struct error e;
	int64_t removed, total = 0, others;
	int r, steps = 0;

	add_session(db, 1, "done", 0, 100, 50, 1, 1);
	add_session(db, 2, "done", 0, 100, 1000, 51, 1);
	add_session(db, 3, "aborted", 0, 100, 50, 1051, 1);
	/* every other sample of session 2 removed: 500 blocks of one */
	exec_ok(db, "DELETE FROM samples WHERE session_id=2 AND rowid%2=0");
	assert_int_equal(db_int(db, "SELECT count(*) FROM sample_blocks WHERE session_id=2"), 500);
	others = rows_of(db, 1) + rows_of(db, 3);
	exec_ok(db, "UPDATE sessions SET state='deleting' WHERE id=2");
	assert_int_equal(retention_step(db, 0, &removed, &e) >= 0, 1);	/* a budget of 1 */
	do {
		int64_t before = rows_of(db, 2) + db_int(db, "SELECT count(*) FROM sessions");

		r = retention_step(db, 64, &removed, &e);
		assert_true(r >= 0);
		/* at most the budget, and the session row with the last step */
		assert_true(before - rows_of(db, 2) - db_int(db, "SELECT count(*) FROM sessions")
			    <= 64 + 1);
		total += removed;
		assert_int_equal(rows_of(db, 1) + rows_of(db, 3), others);
		assert_true(++steps < 100);
	} while (r > 0);
	assert_true(steps >= 500 / 64);
	assert_int_equal(total, 1);
	assert_int_equal(rows_of(db, 2), 0);
	assert_int_equal(db_int(db, "SELECT count(*) FROM sessions WHERE id=2"), 0);
	assert_int_equal(retention_step(db, 64, &removed, &e), 0);
	assert_int_equal(removed, 0);
	/* several sessions in one step */
	exec_ok(db, "UPDATE sessions SET state='deleting'");
	assert_int_equal(retention_step(db, 100000, &removed, &e), 0);
	assert_int_equal(removed, 2);
	assert_int_equal(db_int(db, "SELECT count(*) FROM sessions"), 0);
	assert_int_equal(db_int(db, "SELECT count(*) FROM samples"), 0);
	db_close(db);
}

/* --max-size counts DB.stacks (the raw stack copies, rawstk.h) too */
static void test_usage(void **state)
{
	struct db *db = fresh("usage.db");
	struct retention_usage u0, u1;
	struct error e;

	assert_int_equal(retention_usage(db, NULL, &u0, &e), 0);
	exec_ok(db, "INSERT INTO rawstk.raw_stacks VALUES(1,1,randomblob(1048576))");
	assert_int_equal(retention_usage(db, NULL, &u1, &e), 0);
	assert_true(u1.db_bytes >= u0.db_bytes + 1048576);
	assert_true(u1.wal_bytes >= 1048576);	/* DB.stacks-wal, not checkpointed yet */
	db_close(db);
}

static void test_plan(void **state)
{
	struct db *db = fresh("plan.db");
	struct retention_policy p = { 0 };
	struct retention_usage u = { .db_bytes = 100000, .samples = 1000 };	/* 100 B/sample */
	int64_t now = 1000LL * 86400 * 1000000000LL, ids[8];
	struct error e;
	size_t n, held;
	int over;

	add_session(db, 1, "done", 0, 1000 * 86400 - 40 * 86400, 300, 1, 1);
	add_session(db, 2, "interrupted", 0, 1000 * 86400 - 10 * 86400, 300, 301, 1);
	add_session(db, 3, "aborted", 0, 1000 * 86400 - 5 * 86400, 300, 601, 1);
	add_session(db, 4, "running", 0, 1000 * 86400, 100, 901, 1);

	/* nothing asked, nothing done */
	assert_int_equal(retention_plan(db, &p, &u, 4, now, ids, 8, &n, &over, &e), 0);
	assert_int_equal(n, 0);
	/* by age */
	p.keep_ns = 30LL * 86400 * 1000000000LL;
	assert_int_equal(retention_plan(db, &p, &u, 4, now, ids, 8, &n, &over, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], 1);
	assert_int_equal(db_int(db, "SELECT count(*) FROM sessions WHERE state='deleting'"), 1);
	exec_ok(db, "UPDATE sessions SET state='done' WHERE id=1");
	/* by size: 300 samples of 100 B free about 30 kB each */
	p.keep_ns = 0;
	p.max_bytes = 100000 - 20000;
	assert_int_equal(retention_plan(db, &p, &u, 4, now, ids, 8, &n, &over, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], 1);
	assert_false(over);
	exec_ok(db, "UPDATE sessions SET state='done' WHERE id=1");
	p.max_bytes = 100000 - 50000;
	assert_int_equal(retention_plan(db, &p, &u, 1, now, ids, 8, &n, &over, &e), 0);
	/* 1 is running_id, 3 the newest finished: only 2 may go, not enough */
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], 2);
	assert_true(over);
	exec_ok(db, "UPDATE sessions SET state='done' WHERE id=2");
	/* more than all of them: every finished one but the newest, and over */
	p.max_bytes = 1;
	u.cache_bytes = 10000000;
	assert_int_equal(retention_plan(db, &p, &u, 0, now, ids, 8, &n, &over, &e), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[1], 2);
	assert_true(over);
	assert_int_equal(db_int(db, "SELECT count(*) FROM sessions WHERE id=3 AND state='aborted'"), 1);
	exec_ok(db, "UPDATE sessions SET state='done' WHERE id IN (1,2)");
	/* by age, the newest too */
	p.max_bytes = 0;
	p.keep_ns = 1;
	assert_int_equal(retention_plan(db, &p, &u, 0, now, ids, 8, &n, &over, &e), 0);
	assert_int_equal(n, 3);
	assert_int_equal(db_int(db, "SELECT count(*) FROM sessions WHERE state='running'"), 1);
	exec_ok(db, "UPDATE sessions SET state='done' WHERE id IN (1,2,3)");
	/* strobed --push: sessions from hold_from on are not pushed yet and
	 * stay, counted; those before go */
	assert_int_equal(retention_plan_hold(db, &p, &u, 0, now, 2, ids, 8, &n, &over, &held,
					     &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], 1);
	assert_int_equal(held, 2);
	assert_int_equal(db_int(db, "SELECT count(*) FROM sessions WHERE id IN (2,3) AND "
				"state='done'"), 2);
	exec_ok(db, "UPDATE sessions SET state='done' WHERE id=1");
	assert_int_equal(retention_plan_hold(db, &p, &u, 0, now, 0, ids, 8, &n, &over, &held,
					     &e), 0);
	assert_int_equal(n, 3);
	assert_int_equal(held, 0);
	db_close(db);
}

static void test_gc_binaries(void **state)
{
	struct db *db = fresh("gc.db");
	struct error e;
	int64_t deleted;

	exec_ok(db, "INSERT INTO binaries(id,key,path,cached) VALUES"
		"(1,'buildid:aa01','/a',1),(2,'buildid:bb02','/b',1),(3,'buildid:cc03','/c',1),"
		"(4,'kernel:dd04','[kernel.kallsyms]',1),(5,'buildid:ee05','/e',1),"
		"(101,'buildid:ff06','/f',1),(105,'buildid:ab07','/g',1)");
	add_session(db, 1, "done", 0, 100, 20, 1, 1);		/* histogram: 1 */
	add_session(db, 2, "aborted", 0, 100, 20, 21, 3);	/* samples only: 3 */
	exec_ok(db, "UPDATE sessions SET kernel_binary_id=4 WHERE id=1");
	add_session(db, 3, "done", 0, 100, 20, 41, 5);		/* 5, then removed */
	exec_ok(db, "DELETE FROM samples WHERE session_id=3; DELETE FROM sample_agg WHERE session_id=3;"
		"DELETE FROM stacks WHERE session_id=3; DELETE FROM sessions WHERE id=3");
	assert_int_equal(retention_gc_binaries(db, &deleted, &e), 0);
	/* 2 and 5 go; 101, a caller's in session 1's stack only, stays; 105
	 * was session 3's */
	assert_int_equal(deleted, 3);
	assert_int_equal(db_int(db, "SELECT count(*) FROM binaries WHERE id IN (1,3,4,101)"), 4);
	assert_int_equal(retention_gc_binaries(db, &deleted, &e), 0);
	assert_int_equal(deleted, 0);
	db_close(db);
}

static void put(const char *path, size_t len)
{
	char *buf = calloc(1, len + 1);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), len);
	close(fd);
	free(buf);
}

/* session 1's kallsyms_key is kallsyms:<32 digits, 1 last>: its entry's name */
#define KALLSYMS_REST "000000000000000000000000000001"

static void test_cachegc(void **state)
{
	struct db *db = fresh("cache.db");
	char *c = db_cache_dir(db), p[512];
	struct cachegc_stats st;
	struct error e;
	uint64_t before, after;

	exec_ok(db, "INSERT INTO binaries(key,path,cached) VALUES('buildid:aa0011','/a',1)");
	add_session(db, 1, "done", 0, 100, 1, 1, 1);	/* kallsyms:000...01 */
#define MK(d) snprintf(p, sizeof(p), "%s/%s", c, d), assert_int_equal(mkdir(p, 0750), 0)
	assert_int_equal(mkdir(c, 0750), 0);
	MK("buildid"); MK("buildid/aa"); MK("buildid/bb"); MK("kallsyms"); MK("kallsyms/00");
	MK("kallsyms/99");
#define F(name, len) snprintf(p, sizeof(p), "%s/%s", c, name), put(p, len)
	F("buildid/aa/0011", 10000);			/* referenced */
	F("buildid/bb/0022", 20000);			/* not: goes, and bb with it */
	F("buildid/aa/.tmp.0033.Xy12Ab", 3000);		/* left over */
	F("buildid/aa/README", 10);			/* not the cache's: stays */
	F("kallsyms/00/" KALLSYMS_REST, 5000);		/* session 1's */
	F("kallsyms/99/9999", 5000);			/* nobody's */
	put(path_of("target"), 100);
	snprintf(p, sizeof(p), "%s/buildid/aa/0044", c);
	assert_int_equal(symlink(path_of("target"), p), 0);

	assert_int_equal(cachegc_usage(c, &before, &e), 0);
	assert_true(before >= 10000 + 20000 + 3000 + 5000 + 5000);
	assert_int_equal(cachegc_prune(db, c, &st, &e), 0);
	assert_int_equal(st.removed, 3);	/* bb/0022, kallsyms 9999, the symlink */
	assert_int_equal(st.tmp_removed, 1);
	assert_int_equal(st.kept, 2);
#define EXISTS(name) (snprintf(p, sizeof(p), "%s/%s", c, name), access(p, F_OK) == 0)
	assert_true(EXISTS("buildid/aa/0011"));
	assert_true(EXISTS("buildid/aa/README"));
	assert_true(EXISTS("kallsyms/00/" KALLSYMS_REST));
	assert_false(EXISTS("buildid/bb/0022"));
	assert_false(EXISTS("buildid/bb"));
	assert_false(EXISTS("kallsyms/99"));
	assert_false(EXISTS("buildid/aa/.tmp.0033.Xy12Ab"));
	assert_false(EXISTS("buildid/aa/0044"));
	assert_int_equal(access(path_of("target"), F_OK), 0);
	assert_int_equal(cachegc_usage(c, &after, &e), 0);
	assert_true(after < before);
	assert_int_equal(cachegc_usage(path_of("no-cache"), &after, &e), 0);
	assert_int_equal(after, 0);
	free(c);
	db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_remove),
		cmocka_unit_test(test_step),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_gc_binaries),
		cmocka_unit_test(test_cachegc),
	};

	return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
