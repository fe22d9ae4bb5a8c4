/*
 * test_recover.c - crash safety: lib/store/recover.c, lib/store/dblock.c, lib/base/lockinfo.c.
 *
 * recover: a session ingested in batches is left 'running' with a batch
 * that was never committed (the strobed died); recover_interrupted() must
 * give it exactly the histogram, per-CPU statistics and totals that
 * ingest_finish() writes for a second database fed the same committed
 * records and stopped normally (the oracle), mark it interrupted, end it
 * at its last stored record, and do nothing the second time.
 * dblock: one holder at a time, the holder's pid in the refusal, the
 * stamp kept across holders and dropped when cut short, and lock files
 * that are symlinks, another uid's or hard-linked refused.
 * lockinfo: POSIX and OFD locks of other processes are found with their
 * pid, this process's own are not.
 */
#include "config.h"
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bincache.h"
#include "db.h"
#include "dblock.h"
#include "ingest.h"
#include "lockinfo.h"
#include "recover.h"

#define SCRATCH_NAME "recover"
#include "scratch.h"


/* All rows of sql as one string: "a|b|c\n..." */
static char *db_rows(struct db *db, const char *sql)
{
	struct sbuf b = { 0 };
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db_sqlite(db)));
	while (sqlite3_step(st) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(st); i++) {
			const unsigned char *t = sqlite3_column_text(st, i);

			sbuf_addf(&b, "%s%s", i ? "|" : "", t ? (const char *)t : "NULL");
		}
		sbuf_addf(&b, "\n");
	}
	sqlite3_finalize(st);
	if (!b.s)
		b.s = xstrdup("");
	return b.s;
}

struct fixture {
	struct db *db;
	struct bincache cache;
	struct db_session s;
	struct ingest *in;
};

static void fix_open(struct fixture *f, const char *name, int nr_cpus)
{
	struct error e;
	char *cdir;

	f->db = db_open(path_of(name), DB_WRITE, &e);
	if (!f->db)
		fail_msg("db_open: %s", e.msg);
	cdir = db_cache_dir(f->db);
	assert_int_equal(bincache_open(&f->cache, cdir, &e), 0);
	free(cdir);
	memset(&f->s, 0, sizeof(f->s));
	snprintf(f->s.state, sizeof(f->s.state), "running");
	snprintf(f->s.backend, sizeof(f->s.backend), "perf");
	snprintf(f->s.sample_event, sizeof(f->s.sample_event), "cpu-clock");
	f->s.nr_cpus = nr_cpus;
	f->s.sample_freq = 1000;
	f->s.start_ns = 1000;
	f->s.nr_events = 2;
	snprintf(f->s.events[0].name, sizeof(f->s.events[0].name), "page-faults");
	snprintf(f->s.events[1].name, sizeof(f->s.events[1].name), "context-switches");
	assert_int_equal(db_session_insert(f->db, &f->s, &e), 0);
	f->in = ingest_new(f->db, &f->cache, &f->s, &e);
	if (!f->in)
		fail_msg("ingest_new: %s", e.msg);
}

static void fix_close(struct fixture *f)
{
	ingest_free(f->in);
	db_close(f->db);
	bincache_close(&f->cache);
}

/* The i-th record of the made-up stream, the same for both databases. */
static void feed(struct fixture *f, int i)
{
	struct record r;
	struct error e;
	uint32_t cpu = i % 3;	/* CPU 2 is beyond nr_cpus: a row of its own */

	memset(&r, 0, sizeof(r));
	r.type = STROBE_REC_SAMPLE;
	r.cpu = cpu;
	r.time_ns = 2000 + i * 10;
	r.sample.ip = 0x1000 + (i * 37) % 64;
	r.sample.pid = i % 4;
	r.sample.tid = i % 4;
	r.sample.flags = i % 5 ? STROBE_SAMPLE_USER : STROBE_SAMPLE_KERNEL;
	r.sample.nr_counters = 2;
	r.sample.period = 1000 + (uint64_t)i % 13;
	r.sample.counters[0] = (uint64_t)i * 3 + cpu;
	r.sample.counters[1] = (uint64_t)i / 2;
	/* pid 1 is two processes: the first exits (samples in its last
	 * moments after its exit record), the second forks later */
	if (i == 0)
		assert_int_equal(ingest_comm(f->in, 1, 1, "first", 0, 1500, &e), 0);
	if (i == 600)
		assert_int_equal(ingest_exit(f->in, 1, 1, r.time_ns - 5, &e), 0);
	if (i == 640) {
		assert_int_equal(ingest_fork(f->in, 2, 1, 1, r.time_ns - 5, &e), 0);
		assert_int_equal(ingest_comm(f->in, 1, 1, "second", 1, r.time_ns - 4, &e), 0);
	}
	{
		/* a call stack (schema 14) for most: 3 callers of 6 shapes */
		uint64_t ips[] = { (uint64_t)-512 /* PERF_CONTEXT_USER */, r.sample.ip,
				   0x2001 + i % 6, 0x3001, 0x4001 + (i % 2) * 16 };

		if (i % 7) {
			r.sample.flags |= STROBE_SAMPLE_CALLCHAIN;
			r.sample.nr_ips = 5;
			r.sample.ips = (const unsigned char *)ips;
		}
		if (ingest_record(f->in, &r, &e) < 0)
			fail_msg("ingest_record: %s", e.msg);
	}
	if (i % 97 == 5)
		assert_int_equal(ingest_lost(f->in, cpu, r.time_ns, 3, "ring", &e), 0);
	if (i % 211 == 7)
		assert_int_equal(ingest_throttle(f->in, cpu, r.time_ns, &e), 0);
}

static void test_interrupted(void **state)
{
	struct fixture a, b;
	struct recover_session out[4];
	struct error e;
	size_t n;
	int i;
	const char *cmp[] = {
		"SELECT binary_id,offset,pid,comm_id,flags,start_ns,samples,c0,c1,c2,c7,period "
		"FROM sample_agg ORDER BY 1,2,3,4,5,6",
		"SELECT pid,start_ns,sum(samples) FROM sample_agg GROUP BY 1,2 ORDER BY 1,2",
		"SELECT cpu,samples,lost,lost_c0,lost_c1,lost_c2 FROM session_cpus ORDER BY cpu",
		"SELECT samples,first_sample,last_sample,lost,throttled FROM sessions",
		"SELECT count(*),sum(c0),sum(c1) FROM samples",
		"SELECT stack_id,pid,comm_id,start_ns,samples,period,c0,c1,c2,c7 FROM stack_agg "
		"ORDER BY 1,2,3,4",
		"SELECT id,hash,nr,flags,hex(frames) FROM stacks ORDER BY id",
		"SELECT count(stack_id),count(*) FROM samples",
	};

	fix_open(&a, "crashed.db", 2);
	fix_open(&b, "oracle.db", 2);
	for (i = 0; i < 1500; i++) {
		feed(&a, i);
		feed(&b, i);
		if (i % 400 == 399) {
			assert_int_equal(ingest_commit(a.in, &e), 0);
			assert_int_equal(ingest_commit(b.in, &e), 0);
		}
	}
	assert_int_equal(ingest_commit(a.in, &e), 0);
	assert_int_equal(ingest_commit(b.in, &e), 0);
	{
		struct db_marker m = { .time_ns = 999999, .cpu = -1, .pid = 1, .tid = 1,
				       .kind = "mark", .name = "late" };

		assert_int_equal(ingest_marker(a.in, &m, &e), 0);
		assert_int_equal(ingest_commit(a.in, &e), 0);
	}
	/* a batch that never commits: the strobed dies with it open */
	for (; i < 1700; i++)
		feed(&a, i);
	fix_close(&a);
	assert_int_equal(ingest_finish(b.in, 999999, &e), 0);

	a.db = db_open(path_of("crashed.db"), DB_WRITE, &e);
	assert_non_null(a.db);
	assert_int_equal(db_int(a.db, "SELECT count(*) FROM sample_agg"), 0);
	assert_int_equal(db_int(a.db, "SELECT count(*) FROM stack_agg"), 0);
	assert_int_equal(db_int(a.db, "SELECT count(*) FROM samples"), 1500);
	assert_int_equal(recover_interrupted(a.db, 0, out, 4, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].id, 1);
	assert_int_equal(out[0].samples, 1500);
	assert_int_equal(out[0].end_ns, 999999);	/* the marker, after the last sample */
	for (size_t k = 0; k < ARRAY_SIZE(cmp); k++) {
		char *x = db_rows(a.db, cmp[k]), *y = db_rows(b.db, cmp[k]);

		if (strcmp(x, y))
			fail_msg("%s:\nrebuilt:\n%.400s\nstrobed's own:\n%.400s", cmp[k], x, y);
		assert_true(strlen(x) > 2);
		free(x);
		free(y);
	}
	/* pid 1's two processes kept apart, its exiting samples with the first */
	assert_int_equal(db_int(a.db, "SELECT count(DISTINCT start_ns) FROM sample_agg WHERE "
				"pid=1 AND start_ns IN (1500, 2000 + 640 * 10 - 5)"), 2);
	assert_int_equal(db_int(a.db, "SELECT sum(samples) FROM sample_agg WHERE pid=1 AND "
				"start_ns=1500"), 160);
	assert_int_equal(db_int(a.db, "SELECT count(*) FROM session_cpus"), 3);
	assert_int_equal(db_int(a.db, "SELECT count(*) FROM session_cpus WHERE tail_c0=0 AND "
				"tail_c1=0 AND tail_c2 IS NULL"), 3);
	assert_int_equal(db_int(a.db, "SELECT count(*) FROM sessions WHERE state='interrupted' "
				"AND end_ns=999999 AND duration_ns=999999-1000"), 1);
	{
		struct db_session s;

		assert_int_equal(db_session_get(a.db, 0, &s, &e), 0);
		assert_true(db_session_complete(&s));
	}
	/* nothing left to do the second time */
	{
		char *before = db_rows(a.db, cmp[0]), *after;

		assert_int_equal(recover_interrupted(a.db, 0, out, 4, &n, &e), 0);
		assert_int_equal(n, 0);
		after = db_rows(a.db, cmp[0]);
		assert_string_equal(before, after);
		free(before);
		free(after);
	}
	db_close(a.db);
	fix_close(&b);
}

/* A session killed before its first batch: no samples, a row per CPU. */
static void test_interrupted_empty(void **state)
{
	struct fixture a;
	struct recover_session out[1];
	struct error e;
	size_t n;

	fix_open(&a, "empty.db", 4);
	assert_int_equal(ingest_commit(a.in, &e), 0);
	fix_close(&a);
	a.db = db_open(path_of("empty.db"), DB_WRITE, &e);
	assert_non_null(a.db);
	assert_int_equal(recover_interrupted(a.db, 0, out, 1, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].samples, 0);
	assert_int_equal(db_int(a.db, "SELECT count(*) FROM session_cpus WHERE samples=0 AND lost=0"), 4);
	assert_int_equal(db_int(a.db, "SELECT count(*) FROM sessions WHERE state='interrupted' AND "
				"samples=0 AND first_sample IS NULL AND end_ns=start_ns AND "
				"coalesce(duration_ns,0)=0"), 1);
	db_close(a.db);
}

static void test_dblock(void **state)
{
	char db[160], lockp[176], stamp[DBLOCK_STAMP_MAX], stamp2[DBLOCK_STAMP_MAX], msg[64];
	struct dblock l, l2;
	struct error e;
	int fd;

	snprintf(db, sizeof(db), "%s", path_of("lock.db"));	/* path_of's buffers rotate */
	snprintf(lockp, sizeof(lockp), "%s.lock", db);
	assert_int_equal(dblock_acquire(&l, db, &e), 0);
	assert_string_equal(l.stamp, "");
	assert_int_equal(dblock_write(&l, getpid(), "1:2:3", &e), 0);
	/* another holder (another open file description) is refused, by pid */
	assert_int_equal(dblock_acquire(&l2, db, &e), -1);
	snprintf(msg, sizeof(msg), "in use by strobed pid %d", (int)getpid());
	assert_non_null(strstr(e.msg, msg));
	assert_non_null(strstr(e.msg, "stop that strobed first"));
	dblock_release(&l);
	/* the stamp goes to the next holder */
	assert_int_equal(dblock_acquire(&l, db, &e), 0);
	assert_string_equal(l.stamp, "1:2:3");
	assert_int_equal(dblock_write(&l, getpid(), "", &e), 0);
	dblock_release(&l);
	/* a stamp line cut short is no stamp */
	fd = open(lockp, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "pid 1\nstamp 1:2", 15), 15);
	close(fd);
	assert_int_equal(dblock_acquire(&l, db, &e), 0);
	assert_string_equal(l.stamp, "");
	dblock_release(&l);
	assert_int_equal(stat(lockp, &(struct stat){ 0 }), 0);

	/* lock files strobed did not make */
	unlink(lockp);
	assert_int_equal(symlink(path_of("elsewhere"), lockp), 0);
	assert_int_equal(dblock_acquire(&l, db, &e), -1);
	assert_non_null(strstr(e.msg, "symlink"));
	assert_int_equal(access(path_of("elsewhere"), F_OK), -1);	/* not created */
	unlink(lockp);
	fd = open(lockp, O_WRONLY | O_CREAT, 0600);
	close(fd);
	assert_int_equal(link(lockp, path_of("hardlink")), 0);
	assert_int_equal(dblock_acquire(&l, db, &e), -1);
	assert_non_null(strstr(e.msg, "not a plain file of strobed's"));
	unlink(path_of("hardlink"));
	if (geteuid() == 0) {
		assert_int_equal(chown(lockp, 65534, 65534), 0);
		assert_int_equal(dblock_acquire(&l, db, &e), -1);
		assert_non_null(strstr(e.msg, "uid 65534"));
	}
	unlink(lockp);

	/* the stamp follows every write, and only writes */
	fd = open(db, O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(dblock_stamp(db, stamp, sizeof(stamp)), 0);
	assert_int_equal(dblock_stamp(db, stamp2, sizeof(stamp2)), 0);
	assert_string_equal(stamp, stamp2);
	usleep(10000);
	assert_int_equal(pwrite(fd, "x", 1, 0), 1);
	close(fd);
	assert_int_equal(dblock_stamp(db, stamp2, sizeof(stamp2)), 0);
	assert_string_not_equal(stamp, stamp2);
	assert_int_equal(dblock_stamp(path_of("nothing"), stamp, sizeof(stamp)), -1);
	assert_string_equal(stamp, "");
}

/* A child that holds a read lock on byte `byte` of path (OFD if ofd) until
 * killed; returns its pid once it holds it. */
static pid_t locker(const char *path, int byte, int ofd)
{
	int p[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = byte,
				    .l_len = 1 };
		int fd = open(path, O_RDONLY);

		if (fd < 0 || fcntl(fd, ofd ? F_OFD_SETLK : F_SETLK, &fl) < 0)
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static void test_lockinfo(void **state)
{
	const char *path = path_of("locked-shm");
	struct flock own = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 300, .l_len = 1 };
	struct lock_holder h;
	char buf[256], want[64];
	pid_t a, b;
	int fd = open(path, O_RDWR | O_CREAT, 0600);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	assert_int_equal(lockinfo_find(path, 120, 1, &h), 0);
	a = locker(path, 120, 0);
	b = locker(path, 125, 1);
	assert_int_equal(fcntl(fd, F_SETLK, &own), 0);

	assert_int_equal(lockinfo_find(path, 120, 1, &h), 1);
	assert_int_equal(h.pid, a);
	assert_false(h.write);
	assert_false(h.ofd);
	assert_int_equal(h.start, 120);
	assert_int_equal(h.end, 120);
	assert_int_equal(h.uid, geteuid());
	lockinfo_describe(&h, buf, sizeof(buf));
	snprintf(want, sizeof(want), "pid %d (", (int)a);
	assert_non_null(strstr(buf, want));
	assert_non_null(strstr(buf, "a read lock on byte 120"));

	assert_int_equal(lockinfo_find(path, 121, 7, &h), 1);	/* the OFD lock */
	assert_int_equal(h.pid, b);
	assert_true(h.ofd);
	lockinfo_describe(&h, buf, sizeof(buf));
	assert_non_null(strstr(buf, "file description read lock on byte 125"));

	assert_int_equal(lockinfo_find(path, 300, 1, &h), 0);	/* our own */
	assert_int_equal(lockinfo_find(path, 200, 50, &h), 0);
	assert_int_equal(lockinfo_find(path_of("no-such-file"), 0, 0, &h), -1);

	kill(a, SIGKILL);
	kill(b, SIGKILL);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	assert_int_equal(lockinfo_find(path, 0, 0, &h), 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interrupted),
		cmocka_unit_test(test_interrupted_empty),
		cmocka_unit_test(test_dblock),
		cmocka_unit_test(test_lockinfo),
	};

	return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
