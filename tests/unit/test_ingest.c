/*
 * test_ingest.c - lib/ingest/ (ingest.c, sample.c, binaries.c, procs.c, jitcopy.c, callstack.c, exact.c, cgroups.c) against a real SQLite database and binary
 * cache in a temporary directory, fed side-band and samples the way the
 * capture backend does (in time order, CPUs interleaved), then read back
 * with SQL: which binary and file offset each sample got at mmap time
 * boundaries, after fork, exec, exit and pid reuse (also with a lost
 * EXIT), after the exit of a leader thread while other threads run; lost
 * and throttle rows and the session's totals; processes marked uncertain
 * after a loss of records of every kind (PERF_RECORD_LOST); counter increases
 * attributed to the next sample on each CPU, per-CPU tails and the
 * histogram; ids of binaries and comms of a batch whose commit failed are
 * not used again; a binary of another mount namespace read through the
 * process's own root; cgroups (schema 13): a process's cgroup is its latest
 * sample's, changes counted, paths stored, read back through cgset.h.
 * The mapped files are real ELF files of the build
 * (tests/workloads/split603010 and pagetouch; STROBE_BUILD, else found
 * from this program's path).
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
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <asm/perf_regs.h>
#endif
#include "bincache.h"
#include "db.h"
#include "hashkey.h"
#include "cgroups.h"
#include "cgset.h"
#include "ingest.h"
#include "unwind.h"
#include "readbudget.h"
#include "report.h"
#include "vdso.h"
#include <linux/perf_event.h>

/* pids above PID_MAX_LIMIT: /proc never has them, so ingest opens the path */
#define P1	5000001u
#define P2	5000002u
#define P3	5000003u
#define T1	5000011u
#define T2	5000012u

#define BASE	0x400000ULL	/* where the tests map things */
#define LEN	0x10000ULL
#define PGOFF	0x1000ULL

static char elf_a[PATH_MAX + 64], elf_b[PATH_MAX + 64];
static struct fix *current;	/* removed by teardown when a test fails */

struct fix {
	char dir[64];
	char path[128];
	struct db *db;
	struct bincache cache;
	struct db_session s;
	struct ingest *in;
};

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(p);
}

static int find_fixtures(void)
{
	const char *build = getenv("STROBE_BUILD");
	char self[PATH_MAX], top[PATH_MAX + 8];
	ssize_t n;

	if (!build) {
		/* BUILD/tests/unit/test_ingest */
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0)
			return -1;
		self[n] = 0;
		snprintf(top, sizeof(top), "%s/../..", dirname(self));
		build = top;
	}
	snprintf(elf_a, sizeof(elf_a), "%s/tests/workloads/split603010", build);
	snprintf(elf_b, sizeof(elf_b), "%s/tests/workloads/pagetouch", build);
	if (!realpath(elf_a, self) || access(elf_b, R_OK))
		return -1;
	snprintf(elf_a, sizeof(elf_a), "%s", self);
	if (!realpath(elf_b, self))
		return -1;
	snprintf(elf_b, sizeof(elf_b), "%s", self);
	return 0;
}

static struct fix *fix_new(int nr_events)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct error e;
	char *cdir;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/strobe-test-ingest-XXXXXX");
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
	f->s.nr_cpus = 2;
	f->s.sample_freq = 1000;
	f->s.start_ns = 50;
	f->s.nr_events = nr_events;
	for (int i = 0; i < nr_events; i++) {
		snprintf(f->s.events[i].name, sizeof(f->s.events[i].name), "ev%d", i);
		f->s.events[i].type = 1;
		f->s.events[i].config = i;
	}
	if (db_session_insert(f->db, &f->s, &e))
		fail_msg("db_session_insert: %s", e.msg);
	f->in = ingest_new(f->db, &f->cache, &f->s, &e);
	if (!f->in)
		fail_msg("ingest_new: %s", e.msg);
	current = f;
	return f;
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
	if (current)
		fix_free(current);
	return 0;
}

static void commit(struct fix *f)
{
	struct error e;

	if (ingest_commit(f->in, &e))
		fail_msg("ingest_commit: %s", e.msg);
}

/* An executable mapping of path with the device and inode of the record. */
static void mmap_dev(struct fix *f, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		     const char *path, uint64_t t, unsigned maj, unsigned min, uint64_t ino)
{
	struct sink_mmap m = {
		.pid = pid, .start = start, .len = len, .pgoff = pgoff,
		.prot = PROT_READ | PROT_EXEC, .filename = path, .time_ns = t,
		.maj = maj, .min = min, .ino = ino,
	};
	struct error e;

	if (ingest_mmap(f->in, &m, &e))
		fail_msg("ingest_mmap: %s", e.msg);
}

/* As the kernel reports it: the file's own device and inode (the pids are
 * not real, so ingest opens the path and checks them). */
static void mmap_at(struct fix *f, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		    const char *path, uint64_t t)
{
	struct stat st;

	if (stat(path, &st) < 0)
		memset(&st, 0, sizeof(st));
	mmap_dev(f, pid, start, len, pgoff, path, t, major(st.st_dev), minor(st.st_dev),
		 st.st_ino);
}

static void comm(struct fix *f, uint32_t pid, uint32_t tid, const char *name, int exec,
		 uint64_t t)
{
	struct error e;

	if (ingest_comm(f->in, pid, tid, name, exec, t, &e))
		fail_msg("ingest_comm: %s", e.msg);
}

static void fork_(struct fix *f, uint32_t ppid, uint32_t pid, uint32_t tid, uint64_t t)
{
	struct error e;

	if (ingest_fork(f->in, ppid, pid, tid, t, &e))
		fail_msg("ingest_fork: %s", e.msg);
}

static void exit_(struct fix *f, uint32_t pid, uint32_t tid, uint64_t t)
{
	struct error e;

	if (ingest_exit(f->in, pid, tid, t, &e))
		fail_msg("ingest_exit: %s", e.msg);
}

static void sample(struct fix *f, uint32_t cpu, uint64_t t, uint32_t pid, uint32_t tid,
		   uint64_t ip, int nr, const uint64_t *c)
{
	struct record r;
	struct error e;

	memset(&r, 0, sizeof(r));
	r.type = STROBE_REC_SAMPLE;
	r.cpu = cpu;
	r.time_ns = t;
	r.sample.tsc = t * 3;
	r.sample.ip = ip;
	r.sample.period = t;	/* known sums: a period is the sample's time */
	r.sample.pid = pid;
	r.sample.tid = tid;
	r.sample.flags = STROBE_SAMPLE_USER;
	r.sample.nr_counters = nr;
	for (int i = 0; i < nr; i++)
		r.sample.counters[i] = c[i];
	if (ingest_record(f->in, &r, &e))
		fail_msg("ingest_record: %s", e.msg);
}

static int64_t q_int(struct fix *f, const char *sql, ...)
{
	sqlite3_stmt *st;
	va_list ap;
	int64_t v = -999;
	int i = 1;

	assert_int_equal(sqlite3_prepare_v2(db_sqlite(f->db), sql, -1, &st, NULL), SQLITE_OK);
	va_start(ap, sql);
	for (const char *c = sql; *c; c++)
		if (*c == '?')
			sqlite3_bind_int64(st, i++, va_arg(ap, int64_t));
	va_end(ap);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The binary path and offset of the one sample at time t. */
static void check_sample(struct fix *f, uint64_t t, const char *path, uint64_t offset)
{
	sqlite3_stmt *st;

	assert_int_equal(sqlite3_prepare_v2(db_sqlite(f->db),
		"SELECT b.path, s.offset FROM samples s JOIN binaries b ON b.id = s.binary_id "
		"WHERE s.session_id = ?1 AND s.time_ns = ?2", -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_int64(st, 1, f->s.id);
	sqlite3_bind_int64(st, 2, (int64_t)t);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	if (strcmp((const char *)sqlite3_column_text(st, 0), path))
		fail_msg("sample at %llu: binary %s, want %s", (unsigned long long)t,
			 sqlite3_column_text(st, 0), path);
	if ((uint64_t)sqlite3_column_int64(st, 1) != offset)
		fail_msg("sample at %llu: offset %#llx, want %#llx", (unsigned long long)t,
			 (unsigned long long)sqlite3_column_int64(st, 1),
			 (unsigned long long)offset);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
}

/* The comm name of the sample at time t, "" when none. */
static void check_sample_comm(struct fix *f, uint64_t t, const char *name)
{
	sqlite3_stmt *st;
	const char *got;

	assert_int_equal(sqlite3_prepare_v2(db_sqlite(f->db),
		"SELECT coalesce((SELECT name FROM comms c WHERE c.id = s.comm_id), '') "
		"FROM samples s WHERE s.session_id = ?1 AND s.time_ns = ?2", -1, &st, NULL),
		SQLITE_OK);
	sqlite3_bind_int64(st, 1, f->s.id);
	sqlite3_bind_int64(st, 2, (int64_t)t);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	got = (const char *)sqlite3_column_text(st, 0);
	if (strcmp(got, name))
		fail_msg("sample at %llu: comm '%s', want '%s'", (unsigned long long)t, got, name);
	sqlite3_finalize(st);
}

/* exit_ns of pid's process row that started at start_ns (-1: NULL). */
static int64_t process_exit(struct fix *f, uint32_t pid, uint64_t start_ns)
{
	return q_int(f, "SELECT exit_ns FROM processes WHERE session_id = ? AND pid = ? "
		     "AND start_ns = ?", f->s.id, (int64_t)pid, (int64_t)start_ns);
}

/*
 * Side-band and samples of two CPUs merged in time order: a sample 1 ns
 * before an mmap is not attributed to it, one 1 ns after is; the mapping
 * is [start, start+len); a later mmap over part of it takes over from
 * its time on; a forked child inherits the maps and the comm.
 */
static void test_sideband_order(void **state)
{
	struct fix *f = fix_new(0);

	comm(f, P1, P1, "alpha", 1, 100);		/* cpu 0 */
	sample(f, 1, 150, P1, P1, BASE + 0x10, 0, NULL);
	sample(f, 1, 199, P1, P1, BASE + 0x10, 0, NULL);
	mmap_at(f, P1, BASE, LEN, PGOFF, elf_a, 200);	/* cpu 0 */
	sample(f, 1, 201, P1, P1, BASE + 0x10, 0, NULL);
	sample(f, 0, 202, P1, P1, BASE, 0, NULL);
	sample(f, 1, 203, P1, P1, BASE + LEN - 1, 0, NULL);
	sample(f, 0, 204, P1, P1, BASE + LEN, 0, NULL);
	sample(f, 1, 299, P1, P1, BASE + 0x2010, 0, NULL);
	/* B over the middle [BASE+0x2000, BASE+0x3000) of A */
	mmap_at(f, P1, BASE + 0x2000, 0x1000, 0x5000, elf_b, 300);
	sample(f, 0, 301, P1, P1, BASE + 0x2010, 0, NULL);
	sample(f, 1, 302, P1, P1, BASE + 0x3010, 0, NULL);
	fork_(f, P1, P2, P2, 400);
	sample(f, 0, 401, P2, P2, BASE + 0x2010, 0, NULL);
	sample(f, 1, 402, P2, P2, BASE + 0x10, 0, NULL);
	exit_(f, P2, P2, 500);
	commit(f);

	check_sample(f, 150, "[unknown]", BASE + 0x10);
	check_sample(f, 199, "[unknown]", BASE + 0x10);
	check_sample(f, 201, elf_a, PGOFF + 0x10);
	check_sample(f, 202, elf_a, PGOFF);
	check_sample(f, 203, elf_a, PGOFF + LEN - 1);
	check_sample(f, 204, "[unknown]", BASE + LEN);
	check_sample(f, 299, elf_a, PGOFF + 0x2010);
	check_sample(f, 301, elf_b, 0x5010);
	check_sample(f, 302, elf_a, PGOFF + 0x3010);
	check_sample(f, 401, elf_b, 0x5010);
	check_sample(f, 402, elf_a, PGOFF + 0x10);
	check_sample_comm(f, 201, "alpha");
	check_sample_comm(f, 401, "alpha");
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples"), 11);
	/* the binaries were copied into the cache, named by content */
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE cached = 1 AND "
			       "problem IS NULL AND key LIKE 'buildid:%'"), 2);
	/* processes: P1 from its exec, P2 forked from P1 and exited */
	assert_int_equal(q_int(f, "SELECT start_ns FROM processes WHERE pid = ?",
			       (int64_t)P1), 100);
	assert_int_equal(q_int(f, "SELECT ppid FROM processes WHERE pid = ?", (int64_t)P2),
			 P1);
	assert_int_equal(process_exit(f, P2, 400), 500);
	assert_int_equal(process_exit(f, P1, 100), -1);
	fix_free(f);
}

/*
 * A process exits and a new one gets its pid (fork, exec, other maps):
 * between its exec and its mmap its samples have no binary, then the new
 * one; never the old process's.
 */
static void test_pid_reuse(void **state)
{
	struct fix *f = fix_new(0);

	comm(f, P1, P1, "old", 1, 100);
	mmap_at(f, P1, BASE, LEN, 0, elf_a, 110);
	sample(f, 0, 120, P1, P1, BASE + 0x20, 0, NULL);
	exit_(f, P1, P1, 200);
	sample(f, 1, 250, P1, P1, BASE + 0x20, 0, NULL);	/* no such process */
	fork_(f, 1, P1, P1, 300);
	sample(f, 0, 305, P1, P1, BASE + 0x20, 0, NULL);
	comm(f, P1, P1, "new", 1, 310);
	sample(f, 0, 315, P1, P1, BASE + 0x20, 0, NULL);
	mmap_at(f, P1, BASE, LEN, 0, elf_b, 320);
	sample(f, 1, 330, P1, P1, BASE + 0x20, 0, NULL);
	commit(f);

	check_sample(f, 120, elf_a, 0x20);
	check_sample(f, 250, "[unknown]", BASE + 0x20);
	check_sample(f, 305, "[unknown]", BASE + 0x20);
	check_sample(f, 315, "[unknown]", BASE + 0x20);
	check_sample(f, 330, elf_b, 0x20);
	check_sample_comm(f, 120, "old");
	check_sample_comm(f, 305, "");
	check_sample_comm(f, 330, "new");
	assert_int_equal(process_exit(f, P1, 100), 200);
	assert_int_equal(process_exit(f, P1, 300), -1);
	fix_free(f);
}

/*
 * The EXIT of a process was lost and its pid was reused: the FORK that
 * creates the new process (parent unknown or known), or its exec alone,
 * must drop the old address space.
 */
static void test_lost_exit_reuse(void **state)
{
	struct fix *f = fix_new(0);

	/* parent unknown: the new process starts with nothing mapped */
	comm(f, P1, P1, "old", 1, 100);
	mmap_at(f, P1, BASE, LEN, 0, elf_a, 110);
	sample(f, 0, 120, P1, P1, BASE + 0x30, 0, NULL);
	/* EXIT of P1 lost here */
	fork_(f, 1, P1, P1, 300);
	sample(f, 1, 301, P1, P1, BASE + 0x30, 0, NULL);

	/* parent known: the new process has a copy of the parent's maps */
	comm(f, P2, P2, "parent", 1, 400);
	mmap_at(f, P2, BASE + 0x100000, LEN, 0, elf_b, 410);
	comm(f, P3, P3, "old3", 1, 420);
	mmap_at(f, P3, BASE, LEN, 0, elf_a, 430);
	/* EXIT of P3 lost here */
	fork_(f, P2, P3, P3, 500);
	sample(f, 0, 501, P3, P3, BASE + 0x30, 0, NULL);
	sample(f, 1, 502, P3, P3, BASE + 0x100030, 0, NULL);

	/* FORK lost too: the exec alone resets the maps */
	mmap_at(f, P1, BASE, LEN, 0, elf_a, 600);
	sample(f, 0, 610, P1, P1, BASE + 0x30, 0, NULL);
	comm(f, P1, P1, "new", 1, 700);
	sample(f, 0, 701, P1, P1, BASE + 0x30, 0, NULL);
	commit(f);

	check_sample(f, 120, elf_a, 0x30);
	check_sample(f, 301, "[unknown]", BASE + 0x30);
	check_sample_comm(f, 301, "");
	check_sample(f, 501, "[unknown]", BASE + 0x30);
	check_sample(f, 502, elf_b, 0x30);
	check_sample_comm(f, 501, "parent");
	check_sample(f, 610, elf_a, 0x30);
	check_sample(f, 701, "[unknown]", BASE + 0x30);
	check_sample_comm(f, 701, "new");
	fix_free(f);
}

/*
 * The leader thread (tid == pid) exits while other threads run: their
 * samples still resolve to the process's binary until the last thread
 * exits, which is the process's exit.
 */
static void test_leader_exit(void **state)
{
	struct fix *f = fix_new(0);

	comm(f, P1, P1, "threads", 1, 100);
	mmap_at(f, P1, BASE, LEN, 0, elf_a, 110);
	fork_(f, P1, P1, T1, 120);		/* two threads */
	fork_(f, P1, P1, T2, 130);
	fork_(f, P1, P1, T1, 131);		/* seen again (/proc, then FORK) */
	comm(f, P1, T1, "worker", 0, 135);	/* a thread's name: not the process's */
	sample(f, 0, 140, P1, P1, BASE + 0x40, 0, NULL);
	exit_(f, P1, P1, 200);			/* pthread_exit() in main */
	sample(f, 0, 210, P1, T1, BASE + 0x40, 0, NULL);
	sample(f, 1, 220, P1, T2, BASE + 0x50, 0, NULL);
	exit_(f, P1, T1, 300);
	sample(f, 1, 310, P1, T2, BASE + 0x60, 0, NULL);
	exit_(f, P1, T2, 400);			/* the last thread: process gone */
	sample(f, 0, 410, P1, T2, BASE + 0x60, 0, NULL);

	/* the same with the leader exiting last */
	comm(f, P2, P2, "threads2", 1, 500);
	mmap_at(f, P2, BASE, LEN, 0, elf_b, 510);
	fork_(f, P2, P2, T1, 520);
	exit_(f, P2, T1, 530);
	sample(f, 0, 540, P2, P2, BASE + 0x70, 0, NULL);
	exit_(f, P2, P2, 550);
	sample(f, 0, 560, P2, P2, BASE + 0x70, 0, NULL);
	commit(f);

	check_sample(f, 140, elf_a, 0x40);
	check_sample(f, 210, elf_a, 0x40);
	check_sample(f, 220, elf_a, 0x50);
	check_sample(f, 310, elf_a, 0x60);
	check_sample(f, 410, "[unknown]", BASE + 0x60);
	check_sample_comm(f, 310, "threads");
	assert_int_equal(process_exit(f, P1, 100), 400);
	check_sample(f, 540, elf_b, 0x70);
	check_sample(f, 560, "[unknown]", BASE + 0x70);
	assert_int_equal(process_exit(f, P2, 500), 550);
	fix_free(f);
}

/*
 * A thread strobe never saw start (its FORK lost, or started between the
 * /proc scan and the perf events): its samples prove it runs, so the
 * leader's exit leaves the maps to it too.
 */
static void test_leader_exit_unseen_thread(void **state)
{
	struct fix *f = fix_new(0);

	comm(f, P1, P1, "threads", 1, 100);
	mmap_at(f, P1, BASE, LEN, 0, elf_a, 110);
	sample(f, 0, 150, P1, T1, BASE + 0x40, 0, NULL);	/* no FORK of T1 */
	sample(f, 1, 151, P1, T1, BASE + 0x44, 0, NULL);
	exit_(f, P1, P1, 200);
	sample(f, 0, 210, P1, T1, BASE + 0x48, 0, NULL);
	exit_(f, P1, T1, 300);
	sample(f, 0, 310, P1, T1, BASE + 0x48, 0, NULL);
	commit(f);

	check_sample(f, 150, elf_a, 0x40);
	check_sample(f, 210, elf_a, 0x48);
	check_sample(f, 310, "[unknown]", BASE + 0x48);
	assert_int_equal(process_exit(f, P1, 100), 300);
	fix_free(f);
}

/*
 * A process in another mount namespace (a container) maps a file at a path
 * that names another file in strobed's: with no /proc/PID/map_files entry
 * for the mapping (gone, or not readable), the binary is read through the
 * process's own view, /proc/PID/root, and accepted by its device and inode
 * (or build-id); never the file at that path in strobed's namespace.
 * Needs CAP_SYS_ADMIN (unshare, mount): skipped without.
 */
static void test_mount_namespace(void **state)
{
	struct fix *f;
	char target[PATH_MAX + 16], key_b[256];
	int pfd[2];
	pid_t child;
	struct stat sb;
	char c;

	if (geteuid() != 0)
		skip();
	f = fix_new(0);
	snprintf(target, sizeof(target), "%s/bin", f->dir);
	{
		/* strobed's namespace: a copy of A at the path */
		FILE *in = fopen(elf_a, "rb"), *out = fopen(target, "wb");
		char buf[8192];
		size_t n;

		assert_non_null(in);
		assert_non_null(out);
		while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
			assert_int_equal(fwrite(buf, 1, n, out), n);
		fclose(in);
		fclose(out);
	}
	assert_int_equal(pipe(pfd), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		/* the container: B bind-mounted over the path; gone with
		 * the test, even one that fails */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[0]);
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount(elf_b, target, NULL, MS_BIND, NULL) < 0)
			_exit(1);
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1) {
		close(pfd[0]);
		waitpid(child, NULL, 0);
		fix_free(f);
		skip();	/* no mount namespaces here */
	}
	close(pfd[0]);
	assert_int_equal(stat(elf_b, &sb), 0);

	comm(f, (uint32_t)child, (uint32_t)child, "contained", 1, 100);
	/* by device and inode: B's, as the kernel reports the mapping */
	mmap_dev(f, (uint32_t)child, BASE, LEN, 0, target, 110, major(sb.st_dev),
		 minor(sb.st_dev), sb.st_ino);
	sample(f, 0, 120, (uint32_t)child, (uint32_t)child, BASE + 0x10, 0, NULL);
	commit(f);

	check_sample(f, 120, target, 0x10);
	{
		sqlite3_stmt *st;

		assert_int_equal(sqlite3_prepare_v2(db_sqlite(f->db),
			"SELECT key, cached, coalesce(problem, '') FROM binaries WHERE path = ?1",
			-1, &st, NULL), SQLITE_OK);
		sqlite3_bind_text(st, 1, target, -1, SQLITE_STATIC);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		if (sqlite3_column_int(st, 1) != 1)
			fail_msg("not cached: %s", sqlite3_column_text(st, 2));
		snprintf(key_b, sizeof(key_b), "%s", sqlite3_column_text(st, 0));
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_finalize(st);
	}
	{
		/* by build-id: B's, where strobed's namespace has A's */
		uint8_t id[64];
		size_t n = 0;
		struct sink_mmap m = {
			.pid = (uint32_t)child, .start = BASE + 2 * LEN, .len = LEN,
			.prot = PROT_READ | PROT_EXEC, .filename = target, .time_ns = 130,
			.build_id = id,
		};
		const char *hex = key_b + strlen("buildid:");
		struct error e;

		assert_int_equal(strncmp(key_b, "buildid:", 8), 0);
		for (; n < sizeof(id) && sscanf(hex + 2 * n, "%2hhx", &id[n]) == 1; n++)
			;
		m.build_id_len = n;
		if (ingest_mmap(f->in, &m, &e))
			fail_msg("ingest_mmap: %s", e.msg);
		sample(f, 0, 140, (uint32_t)child, (uint32_t)child, BASE + 2 * LEN + 0x10, 0,
		       NULL);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	commit(f);
	check_sample(f, 140, target, 0x10);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE problem IS NOT NULL"), 0);
	/* B's key: what ingest gives B mapped at its own path */
	mmap_at(f, P1, BASE, LEN, 0, elf_b, 200);
	commit(f);
	{
		sqlite3_stmt *st;

		assert_int_equal(sqlite3_prepare_v2(db_sqlite(f->db),
			"SELECT key FROM binaries WHERE path = ?1", -1, &st, NULL), SQLITE_OK);
		sqlite3_bind_text(st, 1, elf_b, -1, SQLITE_STATIC);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_string_equal(key_b, (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	fix_free(f);
}

/*
 * Lost records: ring losses (STROBE_REC_LOST) and drops before the ring
 * (ingest_lost) are rows with their cpu, time, count and kind; throttles
 * too; the session and per-CPU totals add them up.
 */
static void test_lost(void **state)
{
	struct fix *f = fix_new(0);
	struct ingest_stats st;
	struct record r;
	struct error e;

	memset(&r, 0, sizeof(r));
	r.type = STROBE_REC_LOST;
	r.cpu = 1;
	r.time_ns = 500;
	r.lost.lost = 7;
	assert_int_equal(ingest_record(f->in, &r, &e), 0);
	assert_int_equal(ingest_lost(f->in, 0, 600, 3, "samples", &e), 0);
	assert_int_equal(ingest_lost(f->in, 0, 650, 0, "samples", &e), 0);	/* no row */
	r.time_ns = 700;
	r.lost.lost = 5;
	assert_int_equal(ingest_record(f->in, &r, &e), 0);
	assert_int_equal(ingest_throttle(f->in, 1, 800, &e), 0);
	sample(f, 0, 900, 0, 0, 0x1234, 0, NULL);
	commit(f);

	assert_int_equal(q_int(f, "SELECT count(*) FROM lost WHERE session_id = ?", f->s.id), 4);
	assert_int_equal(q_int(f, "SELECT count(*) FROM lost WHERE cpu = 1 AND time_ns = 500 "
			       "AND count = 7 AND kind = 'ring'"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM lost WHERE cpu = 0 AND time_ns = 600 "
			       "AND count = 3 AND kind = 'samples'"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM lost WHERE cpu = 1 AND time_ns = 700 "
			       "AND count = 5 AND kind = 'ring'"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM lost WHERE cpu = 1 AND time_ns = 800 "
			       "AND count = 0 AND kind = 'throttle'"), 1);
	assert_int_equal(q_int(f, "SELECT lost FROM sessions WHERE id = ?", f->s.id), 15);
	assert_int_equal(q_int(f, "SELECT throttled FROM sessions WHERE id = ?", f->s.id), 1);
	assert_int_equal(q_int(f, "SELECT samples FROM sessions WHERE id = ?", f->s.id), 1);
	ingest_get_stats(f->in, &st);
	assert_int_equal(st.lost, 15);
	assert_int_equal(st.throttled, 1);
	assert_int_equal(st.samples, 1);

	assert_int_equal(ingest_finish(f->in, 1050, &e), 0);
	assert_int_equal(q_int(f, "SELECT lost FROM session_cpus WHERE session_id = ? AND cpu = 0",
			       f->s.id), 3);
	assert_int_equal(q_int(f, "SELECT lost FROM session_cpus WHERE session_id = ? AND cpu = 1",
			       f->s.id), 12);
	assert_int_equal(q_int(f, "SELECT samples FROM session_cpus WHERE session_id = ? AND "
			       "cpu = 0", f->s.id), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM sessions WHERE id = ? AND state = 'done' "
			       "AND end_ns = 1050 AND duration_ns = 1000", f->s.id), 1);
	fix_free(f);
}

/* uncertain_ns of pid's process row that started at start_ns (-1: NULL). */
static int64_t process_uncertain(struct fix *f, uint32_t pid, uint64_t start_ns)
{
	return q_int(f, "SELECT uncertain_ns FROM processes WHERE session_id = ? AND pid = ? "
		     "AND start_ns = ?", f->s.id, (int64_t)pid, (int64_t)start_ns);
}

/*
 * PERF_RECORD_LOST counts records of every kind: side-band (mmap, exec,
 * fork, exit) may be among them, so every process alive at the loss may
 * have wrong maps from then on.  Their rows say so (uncertain_ns, the time
 * of the first such loss), and so do those of children forked from them
 * with a copy of their maps; a process started after the loss from a
 * certain parent, or by exec alone, is certain.  A loss of samples only
 * (PERF_RECORD_LOST_SAMPLES, kind "samples") marks nobody.
 */
static void test_lost_sideband(void **state)
{
	struct fix *f = fix_new(0);
	struct error e;

	comm(f, P1, P1, "alive", 1, 100);
	mmap_at(f, P1, BASE, LEN, 0, elf_a, 110);
	assert_int_equal(ingest_lost(f->in, 0, 200, 4, "samples", &e), 0);
	commit(f);
	assert_int_equal(process_uncertain(f, P1, 100), -1);

	assert_int_equal(ingest_lost_records(f->in, 1, 300, 9, &e), 0);
	fork_(f, P1, P2, P2, 400);		/* a copy of maps that may be wrong */
	comm(f, P3, P3, "fresh", 1, 500);	/* new after the loss */
	fork_(f, P3, T1, T1, 510);		/* from a certain parent */
	comm(f, P1, P1, "again", 1, 600);	/* exec: new maps, certain from now */
	fork_(f, P1, T2, T2, 700);
	sample(f, 0, 710, P1, P1, BASE + 0x10, 0, NULL);
	commit(f);

	assert_int_equal(process_uncertain(f, P1, 100), 300);
	assert_int_equal(process_uncertain(f, P2, 400), 400);
	assert_int_equal(process_uncertain(f, P3, 500), -1);
	assert_int_equal(process_uncertain(f, T1, 510), -1);
	assert_int_equal(process_uncertain(f, T2, 700), -1);
	/* still counted as lost, kind "ring", as before */
	assert_int_equal(q_int(f, "SELECT count(*) FROM lost WHERE cpu = 1 AND time_ns = 300 "
			       "AND count = 9 AND kind = 'ring'"), 1);
	assert_int_equal(q_int(f, "SELECT lost FROM sessions WHERE id = ?", f->s.id), 13);
	fix_free(f);
}

/*
 * Records the merge delivered after younger ones (more than its horizon
 * late): counted in sessions.late_records with the largest lateness in
 * late_max_ns; a late side-band record of a process marks it uncertain
 * from its time (its samples in between were resolved without it), a late
 * sample only counts.
 */
static void test_late_records(void **state)
{
	struct fix *f = fix_new(0);
	struct error e;

	comm(f, P1, P1, "late", 1, 100);
	mmap_at(f, P1, BASE, LEN, 0, elf_a, 110);
	comm(f, P2, P2, "intime", 1, 120);
	sample(f, 0, 200, P1, P1, BASE + 0x10, 0, NULL);
	assert_int_equal(ingest_late(f->in, P1, 150, 50, &e), 0);
	mmap_at(f, P1, BASE, LEN, 0, elf_b, 150);	/* its time was before 200 */
	sample(f, 0, 210, P1, P1, BASE + 0x10, 0, NULL);
	assert_int_equal(ingest_late(f->in, 0, 205, 5, &e), 0);
	sample(f, 1, 205, P2, P2, BASE + 0x10, 0, NULL);
	commit(f);

	check_sample(f, 200, elf_a, 0x10);
	check_sample(f, 210, elf_b, 0x10);
	assert_int_equal(q_int(f, "SELECT late_records FROM sessions WHERE id = ?", f->s.id), 2);
	assert_int_equal(q_int(f, "SELECT late_max_ns FROM sessions WHERE id = ?", f->s.id), 50);
	assert_int_equal(process_uncertain(f, P1, 100), 150);
	assert_int_equal(process_uncertain(f, P2, 120), -1);
	fix_free(f);
}

/* c0, c1 of the sample at time t */
static void check_counters(struct fix *f, uint64_t t, int64_t c0, int64_t c1)
{
	assert_int_equal(q_int(f, "SELECT c0 FROM samples WHERE time_ns = ?", (int64_t)t), c0);
	assert_int_equal(q_int(f, "SELECT c1 FROM samples WHERE time_ns = ?", (int64_t)t), c1);
}

/*
 * Attribution rule: each counter's increase since the previous sample on
 * the same CPU goes to the sample (the first sample of a CPU gets the
 * total since the start); what comes after a CPU's last sample is its
 * tail; the histogram sums the increases.
 */
static void test_counters(void **state)
{
	struct fix *f = fix_new(2);
	const uint64_t c[][2] = {
		{ 100, 10 }, { 50, 5 }, { 250, 12 }, { 250, 12 }, { 80, 9 }, { 1000, 40 },
	};
	const uint64_t final0[2] = { 1300, 50 };
	struct error e;

	comm(f, P1, P1, "count", 1, 100);
	mmap_at(f, P1, BASE, LEN, 0, elf_a, 110);
	sample(f, 0, 200, P1, P1, BASE + 0x100, 2, c[0]);
	sample(f, 1, 201, P1, P1, BASE + 0x100, 2, c[1]);
	sample(f, 0, 202, P1, P1, BASE + 0x100, 2, c[2]);
	sample(f, 0, 203, P1, P1, BASE + 0x200, 2, c[3]);
	commit(f);	/* the histogram spans batches */
	sample(f, 1, 204, P1, P1, BASE + 0x200, 2, c[4]);
	sample(f, 0, 205, P1, P1, BASE + 0x100, 2, c[5]);
	ingest_cpu_final(f->in, 0, final0, 2);
	assert_int_equal(ingest_finish(f->in, 1000, &e), 0);

	check_counters(f, 200, 100, 10);
	check_counters(f, 201, 50, 5);
	check_counters(f, 202, 150, 2);
	check_counters(f, 203, 0, 0);
	check_counters(f, 204, 30, 4);
	check_counters(f, 205, 750, 28);
	/* columns of absent events stay NULL */
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples WHERE c2 IS NULL"), 6);
	/* per-CPU tails: cpu 0 from its final totals, cpu 1 had none */
	assert_int_equal(q_int(f, "SELECT tail_c0 FROM session_cpus WHERE cpu = 0"), 300);
	assert_int_equal(q_int(f, "SELECT tail_c1 FROM session_cpus WHERE cpu = 0"), 10);
	assert_int_equal(q_int(f, "SELECT tail_c0 FROM session_cpus WHERE cpu = 1"), 0);
	assert_int_equal(q_int(f, "SELECT samples FROM session_cpus WHERE cpu = 1"), 2);
	/* the histogram: offset 0x100 has samples 200, 201, 202, 205 */
	assert_int_equal(q_int(f, "SELECT samples FROM sample_agg WHERE offset = 256"), 4);
	assert_int_equal(q_int(f, "SELECT c0 FROM sample_agg WHERE offset = 256"), 1050);
	assert_int_equal(q_int(f, "SELECT c1 FROM sample_agg WHERE offset = 256"), 45);
	assert_int_equal(q_int(f, "SELECT c0 FROM sample_agg WHERE offset = 512"), 30);
	/* periods: each sample's own, summed in the histogram */
	assert_int_equal(q_int(f, "SELECT period FROM samples WHERE time_ns = 204"), 204);
	assert_int_equal(q_int(f, "SELECT period FROM sample_agg WHERE offset = 256"),
			 200 + 201 + 202 + 205);
	assert_int_equal(q_int(f, "SELECT period FROM sample_agg WHERE offset = 512"), 203 + 204);
	/* session totals and the rowid range of its samples */
	assert_int_equal(q_int(f, "SELECT samples FROM sessions WHERE id = ?", f->s.id), 6);
	assert_int_equal(q_int(f, "SELECT first_sample FROM sessions"),
			 q_int(f, "SELECT min(rowid) FROM samples"));
	assert_int_equal(q_int(f, "SELECT last_sample FROM sessions"),
			 q_int(f, "SELECT max(rowid) FROM samples"));
	fix_free(f);
}

/*
 * A loss on a CPU: the next sample of that CPU carries no counter increase
 * (what the counters did over the gap is nobody's) and is flagged; the
 * increase goes to the CPU's lost_c<i>, and the other CPU is untouched.
 */
static void test_lost_interval(void **state)
{
	struct fix *f = fix_new(2);
	const uint64_t c[][2] = { { 100, 10 }, { 40, 4 }, { 700, 30 }, { 760, 33 }, { 90, 9 } };
	struct error e;

	comm(f, P1, P1, "count", 1, 100);
	mmap_at(f, P1, BASE, LEN, 0, elf_a, 110);
	sample(f, 0, 200, P1, P1, BASE + 0x100, 2, c[0]);
	sample(f, 1, 201, P1, P1, BASE + 0x100, 2, c[1]);
	assert_int_equal(ingest_lost(f->in, 0, 250, 6, "ring", &e), 0);
	sample(f, 0, 300, P1, P1, BASE + 0x100, 2, c[2]);	/* after the loss */
	sample(f, 0, 301, P1, P1, BASE + 0x100, 2, c[3]);
	sample(f, 1, 302, P1, P1, BASE + 0x100, 2, c[4]);
	assert_int_equal(ingest_finish(f->in, 1000, &e), 0);

	check_counters(f, 200, 100, 10);
	check_counters(f, 300, 0, 0);
	check_counters(f, 301, 60, 3);
	check_counters(f, 302, 50, 5);
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples WHERE flags & 512"), 1);
	assert_int_equal(q_int(f, "SELECT time_ns FROM samples WHERE flags & 512"), 300);
	assert_int_equal(q_int(f, "SELECT flags & 15 FROM samples WHERE time_ns = 300"),
			 q_int(f, "SELECT flags & 15 FROM samples WHERE time_ns = 200"));
	assert_int_equal(q_int(f, "SELECT lost_c0 FROM session_cpus WHERE cpu = 0"), 600);
	assert_int_equal(q_int(f, "SELECT lost_c1 FROM session_cpus WHERE cpu = 0"), 20);
	assert_int_equal(q_int(f, "SELECT lost_c0 FROM session_cpus WHERE cpu = 1"), 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM session_cpus WHERE lost_c2 IS NULL"), 2);
	/* the histogram holds what the samples carry, no more */
	assert_int_equal(q_int(f, "SELECT c0 FROM sample_agg"), 100 + 40 + 60 + 50);
	fix_free(f);
}

/* A switch read (--attribution exact) of tid in pid on cpu: counters c. */
static void switch_read(struct fix *f, uint32_t cpu, uint64_t t, uint32_t pid, uint32_t tid,
			uint64_t c, uint16_t flags)
{
	struct record r;
	struct error e;

	memset(&r, 0, sizeof(r));
	r.type = STROBE_REC_SAMPLE;
	r.cpu = cpu;
	r.time_ns = t;
	r.sample.ip = 0xffffffff81000000ULL;
	r.sample.pid = pid;
	r.sample.tid = tid;
	r.sample.flags = STROBE_SAMPLE_KERNEL | STROBE_SAMPLE_SWITCH | flags;
	r.sample.nr_counters = 1;
	r.sample.counters[0] = c;
	if (ingest_record(f->in, &r, &e))
		fail_msg("ingest_record: %s", e.msg);
}

/* A sample of tid in pid on cpu with one counter c and extra flags. */
static void sample_flags(struct fix *f, uint32_t cpu, uint64_t t, uint32_t pid, uint32_t tid,
			 uint64_t c, uint16_t flags)
{
	struct record r;
	struct error e;

	memset(&r, 0, sizeof(r));
	r.type = STROBE_REC_SAMPLE;
	r.cpu = cpu;
	r.time_ns = t;
	r.sample.ip = BASE + 0x100;
	r.sample.period = t;
	r.sample.pid = pid;
	r.sample.tid = tid;
	r.sample.flags = STROBE_SAMPLE_USER | flags;
	r.sample.nr_counters = 1;
	r.sample.counters[0] = c;
	if (ingest_record(f->in, &r, &e))
		fail_msg("ingest_record: %s", e.msg);
}

/*
 * Exact attribution with switches the kernel counted but wrote no read
 * for (STROBE_SAMPLE_SWITCH_MISSED: a thread the kernel does not report
 * ran in between).  The record after them carries none of the increase
 * since the CPU's previous record: it goes to the CPU's lost_c<i>, the
 * sample is stored flagged AFTER_LOSS with 0 (without the backend's flag),
 * a switch read adds nothing to the thread's carry, and an exited thread's
 * tail is still stored at its last (flagged) switch out.  Every count is
 * somewhere: the processes' own plus lost_c is the counter's last value.
 * (Before: the unseen thread's 45 went to P2's switch read, so to P2, and
 * 38 + 7 more to P2's sample and tail.)
 */
static void test_exact_switch_missed(void **state)
{
	struct fix *f = fix_new(1);
	const uint16_t M = STROBE_SAMPLE_SWITCH_MISSED;
	struct ingest_stats st;
	struct error e;

	comm(f, P1, P1, "one", 1, 10);
	mmap_at(f, P1, BASE, LEN, 0, elf_a, 11);
	comm(f, P2, P2, "two", 1, 12);
	mmap_at(f, P2, BASE, LEN, 0, elf_a, 13);
	sample_flags(f, 0, 100, P1, P1, 10, 0);		/* P1: 10 */
	switch_read(f, 0, 110, P1, P1, 15, 0);		/* P1 carries 5 */
	switch_read(f, 0, 130, P2, P2, 60, M);		/* 45 unseen: lost */
	sample_flags(f, 0, 140, P2, P2, 62, 0);		/* P2: 2 */
	sample_flags(f, 0, 150, P2, P2, 100, M);	/* 38 unseen: lost, sample 0 */
	switch_read(f, 0, 155, P2, P2, 103, 0);		/* P2 carries 3 */
	assert_int_equal(ingest_exit(f->in, P2, P2, 157, &e), 0);
	switch_read(f, 0, 158, P2, P2, 110, M);		/* 7 lost; P2's tail 3 stored */
	ingest_get_stats(f->in, &st);
	assert_int_equal(st.exact_tails, 1);
	sample_flags(f, 0, 160, P1, P1, 111, 0);		/* P1: 1 + its 5 */
	assert_int_equal(ingest_finish(f->in, 1000, &e), 0);

	assert_int_equal(q_int(f, "SELECT sum(c0) FROM sample_agg WHERE pid = ?", (int64_t)P1),
			 10 + 1 + 5);
	assert_int_equal(q_int(f, "SELECT sum(c0) FROM sample_agg WHERE pid = ?", (int64_t)P2),
			 2 + 3);
	assert_int_equal(q_int(f, "SELECT lost_c0 FROM session_cpus WHERE cpu = 0"), 45 + 38 + 7);
	assert_int_equal(q_int(f, "SELECT sum(c0) FROM sample_agg") +
			 q_int(f, "SELECT lost_c0 FROM session_cpus WHERE cpu = 0"), 111);
	/* the sample after unseen switches: 0, AFTER_LOSS, not the backend's bit */
	assert_int_equal(q_int(f, "SELECT c0 FROM samples WHERE time_ns = 150"), 0);
	assert_int_equal(q_int(f, "SELECT flags & 512 FROM samples WHERE time_ns = 150"), 512);
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples WHERE flags & ?", (int64_t)M), 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples WHERE flags & 512"), 1);
	assert_int_equal(q_int(f, "SELECT c0 FROM samples WHERE time_ns = 160"), 6);
	ingest_get_stats(f->in, &st);
	assert_int_equal(st.switch_reads, 4);
	assert_int_equal(st.switch_missed, 3);
	fix_free(f);
}

/*
 * A sampling group not counting: a STROBE_REC_UNSCHED record (multiplexed)
 * and an error state read at the end become rows of unscheduled with the
 * interval they cover; a group that counted all along leaves none; the
 * report's summary sums them per kind and names the CPUs.
 */
static void test_unscheduled(void **state)
{
	struct fix *f = fix_new(0);
	struct record r;
	struct report_unsched u;
	struct error e;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.type = STROBE_REC_UNSCHED;
	r.cpu = 0;
	r.time_ns = 5000;
	r.unsched.enabled_ns = 2000;
	r.unsched.running_ns = 500;
	assert_int_equal(ingest_record(f->in, &r, &e), 0);
	r.cpu = 1;
	r.unsched.running_ns = 2000;	/* counted all along */
	assert_int_equal(ingest_record(f->in, &r, &e), 0);
	r.time_ns = 9000;
	r.unsched.enabled_ns = 1000;
	r.unsched.running_ns = 0;
	assert_int_equal(ingest_record(f->in, &r, &e), 0);
	assert_int_equal(ingest_unscheduled(f->in, 0, 12000, 3000, 0, 1, &e), 0);
	assert_int_equal(ingest_finish(f->in, 20000, &e), 0);

	assert_int_equal(q_int(f, "SELECT count(*) FROM unscheduled"), 3);
	assert_int_equal(q_int(f, "SELECT start_ns FROM unscheduled WHERE cpu=0 AND "
			       "kind='multiplexed' AND end_ns=5000 AND enabled_ns=2000 AND "
			       "running_ns=500"), 3000);
	assert_int_equal(q_int(f, "SELECT start_ns FROM unscheduled WHERE cpu=1 AND "
			       "kind='multiplexed' AND end_ns=9000 AND running_ns=0"), 8000);
	assert_int_equal(q_int(f, "SELECT start_ns FROM unscheduled WHERE cpu=0 AND "
			       "kind='unschedulable' AND end_ns=12000"), 9000);
	assert_int_equal(report_unscheduled(f->db, f->s.id, &u, &e), 0);
	assert_true(u.ns[0] == 1500 + 1000 && u.intervals[0] == 2 && u.nr_cpus[0] == 2);
	assert_string_equal(u.cpus[0], "0, 1");
	assert_true(u.ns[1] == 3000 && u.intervals[1] == 1 && u.first_ns[1] == 9000);
	assert_string_equal(u.cpus[1], "0");
	fix_free(f);
}

static int refuse_commit(void *arg)
{
	return 1;	/* the COMMIT becomes a ROLLBACK */
}

/*
 * A batch that adds binaries, comms and mappings fails to commit: their
 * ids are free again in the database and go to the next batch's rows, so
 * ingest must not keep using them (a sample would get another process's
 * binary or comm, or a binary that does not exist).
 */
static void test_failed_batch_ids(void **state)
{
	struct fix *f = fix_new(0);
	struct error e;

	comm(f, P1, P1, "keep", 1, 100);
	mmap_at(f, P1, BASE, LEN, 0, elf_a, 110);
	sample(f, 0, 120, P1, P1, BASE + 0x20, 0, NULL);
	commit(f);

	sqlite3_commit_hook(db_sqlite(f->db), refuse_commit, NULL);
	comm(f, P2, P2, "gone", 1, 200);
	mmap_at(f, P2, BASE, LEN, 0, "[vdso]", 210);
	mmap_at(f, P1, BASE + 0x100000, LEN, 0, elf_b, 215);
	sample(f, 0, 220, P2, P2, BASE + 0x10, 0, NULL);
	assert_int_equal(ingest_commit(f->in, &e), -1);
	sqlite3_commit_hook(db_sqlite(f->db), NULL, NULL);

	comm(f, P3, P3, "new3", 1, 300);
	mmap_at(f, P3, BASE, LEN, 0, "[heap]", 310);
	sample(f, 1, 320, P2, P2, BASE + 0x10, 0, NULL);
	sample(f, 1, 330, P3, P3, BASE + 0x10, 0, NULL);
	sample(f, 0, 340, P1, P1, BASE + 0x100010, 0, NULL);
	sample(f, 0, 350, P1, P1, BASE + 0x20, 0, NULL);
	commit(f);

	assert_int_equal(q_int(f, "SELECT count(*) FROM samples"), 5);
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples s JOIN binaries b ON "
			       "b.id = s.binary_id"), 5);
	check_sample(f, 120, elf_a, 0x20);
	check_sample(f, 320, "[unknown]", BASE + 0x10);
	check_sample_comm(f, 320, "");
	check_sample(f, 330, "[heap]", BASE + 0x10);
	check_sample_comm(f, 330, "new3");
	check_sample(f, 340, "[unknown]", BASE + 0x100010);
	check_sample(f, 350, elf_a, 0x20);
	check_sample_comm(f, 350, "keep");
	fix_free(f);
}

/*
 * The path of a mapping is the mapping process's word only (its
 * /proc/PID/map_files is gone here: the pids are not real): a file whose
 * device or inode is not the record's, a symlink or a FIFO at the path is
 * never hashed nor copied, and never blocks; nor is a file without the
 * build-id a record carries; the binary is stored unavailable with the
 * reason.
 */
static void test_hostile_paths(void **state)
{
	struct fix *f = fix_new(0);
	char plain[PATH_MAX + 16], link[PATH_MAX + 16], fifo[PATH_MAX + 16];
	struct stat st;
	FILE *fp;

	snprintf(plain, sizeof(plain), "%s/plain", f->dir);
	snprintf(link, sizeof(link), "%s/link", f->dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", f->dir);
	assert_non_null(fp = fopen(plain, "w"));
	fputs("no build-id here\n", fp);
	fclose(fp);
	assert_int_equal(symlink(plain, link), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(stat(plain, &st), 0);

	comm(f, P1, P1, "alpha", 1, 100);
	mmap_at(f, P1, BASE, 0x1000, 0, plain, 110);
	mmap_dev(f, P1, BASE + 0x1000, 0x1000, 0, plain, 120, major(st.st_dev),
		 minor(st.st_dev), st.st_ino + 1);
	mmap_dev(f, P1, BASE + 0x2000, 0x1000, 0, link, 130, major(st.st_dev),
		 minor(st.st_dev), st.st_ino);
	mmap_at(f, P1, BASE + 0x3000, 0x1000, 0, fifo, 140);
	{
		/* a record with a build-id: the file at the path must have it */
		static const uint8_t other_id[20] = { 0xde, 0xad, 0xbe, 0xef };
		struct sink_mmap m = {
			.pid = P1, .start = BASE + 0x4000, .len = 0x1000,
			.prot = PROT_READ | PROT_EXEC, .filename = elf_a, .time_ns = 150,
			.build_id = other_id, .build_id_len = sizeof(other_id),
		};
		struct error e;

		if (ingest_mmap(f->in, &m, &e))
			fail_msg("ingest_mmap: %s", e.msg);
	}
	commit(f);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE cached = 1 AND "
			       "problem IS NULL AND key LIKE 'xxh3:%'"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE cached = 0 AND "
			       "problem LIKE '%no longer the mapped file%'"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE cached = 0 AND "
			       "problem LIKE '%symbolic links%'"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE cached = 0 AND "
			       "problem LIKE '%not a regular file%'"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE cached = 0 AND "
			       "key = 'buildid:deadbeef00000000000000000000000000000000' AND "
			       "problem LIKE '%its build-id changed%'"), 1);
	fix_free(f);
}

/*
 * A path is part of what ingest remembers a mapping by, whole: two hard
 * links whose paths (over 512 bytes) differ only at their end are two
 * binaries, each sample named by its own path.  (The memo key was cut at
 * 512 bytes: the second link was taken for the first, its samples named
 * by the first's path.)
 */
static void test_long_paths(void **state)
{
	struct fix *f = fix_new(0);
	char dir[PATH_MAX], one[PATH_MAX + 8], two[PATH_MAX + 8];
	FILE *fp;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/%0240d", f->dir, 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/%0240d", 1);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(one, sizeof(one), "%s/one", dir);
	snprintf(two, sizeof(two), "%s/two", dir);
	assert_true(strlen(one) > 512);
	assert_non_null(fp = fopen(one, "w"));
	fputs("no build-id here\n", fp);
	fclose(fp);
	assert_int_equal(link(one, two), 0);
	comm(f, P1, P1, "alpha", 1, 100);
	mmap_at(f, P1, BASE, 0x1000, 0, one, 110);
	mmap_at(f, P1, BASE + 0x1000, 0x1000, 0, two, 120);
	sample(f, 0, 130, P1, P1, BASE + 0x10, 0, NULL);
	sample(f, 0, 140, P1, P1, BASE + 0x1010, 0, NULL);
	commit(f);
	check_sample(f, 130, one, 0x10);
	check_sample(f, 140, two, 0x10);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE length(path) > 512"), 2);
	fix_free(f);
}

/* The mode of the cache entry of the binary at path. */
static unsigned entry_mode(struct fix *f, const char *path)
{
	sqlite3_stmt *st;
	struct stat es;
	char *file;

	assert_int_equal(sqlite3_prepare_v2(db_sqlite(f->db),
		"SELECT key FROM binaries WHERE path = ?1 AND cached = 1", -1, &st, NULL),
		SQLITE_OK);
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	file = bincache_path(&f->cache, (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	assert_int_equal(stat(file, &es), 0);
	free(file);
	return es.st_mode & 07777;
}

/* An access ACL (system.posix_acl_access, as setfacl writes it) of
 * user::rwx, user:uid:---, group::r-x, mask::r-x, other::r-x on path. */
static int set_acl_deny(const char *path, uint32_t uid)
{
	struct { uint16_t tag, perm; uint32_t id; } __attribute__((packed)) ent[] = {
		{ 0x01, 7, UINT32_MAX }, { 0x02, 0, uid }, { 0x04, 5, UINT32_MAX },
		{ 0x10, 5, UINT32_MAX }, { 0x20, 5, UINT32_MAX },
	};
	unsigned char buf[4 + sizeof(ent)];
	uint32_t version = 2;

	memcpy(buf, &version, 4);
	memcpy(buf + 4, ent, sizeof(ent));
	return setxattr(path, "system.posix_acl_access", buf, sizeof(buf), 0);
}

/*
 * A file with an access ACL is not "readable by everyone" whatever its
 * mode's other bits say: an ACL may deny a user (here nobody) what they
 * allow.  Three files with mode 0755 in a directory everyone may search:
 * the plain one's cache entry is group strobe's (0640); the one with an
 * ACL denying nobody, and the one in a directory with such an ACL, are
 * root's alone (0600).  (Before: all three 0640, so a member denied the
 * file by its ACL read it in the cache.)
 */
static void test_acl_private(void **state)
{
	struct fix *f = fix_new(0);
	char plain[PATH_MAX + 16], acl[PATH_MAX + 16], sub[PATH_MAX + 16], below[PATH_MAX + 32];
	const char *const files[] = { plain, acl, below };
	FILE *fp;

	(void)state;
	snprintf(plain, sizeof(plain), "%s/plain", f->dir);
	snprintf(acl, sizeof(acl), "%s/acl", f->dir);
	snprintf(sub, sizeof(sub), "%s/sub", f->dir);
	snprintf(below, sizeof(below), "%s/below", sub);
	assert_int_equal(chmod(f->dir, 0755), 0);
	assert_int_equal(mkdir(sub, 0755), 0);
	for (int i = 0; i < 3; i++) {
		assert_non_null(fp = fopen(files[i], "w"));
		fprintf(fp, "file %d, no build-id\n", i);
		fclose(fp);
		assert_int_equal(chmod(files[i], 0755), 0);
	}
	if (set_acl_deny(acl, 65534) < 0 || set_acl_deny(sub, 65534) < 0) {
		print_message("skipped: no POSIX ACLs on %s: %s\n", f->dir, strerror(errno));
		fix_free(f);
		skip();
	}
	comm(f, P1, P1, "alpha", 1, 100);
	for (int i = 0; i < 3; i++)
		mmap_at(f, P1, BASE + i * 0x1000, 0x1000, 0, files[i], 110 + i);
	commit(f);
	assert_int_equal(entry_mode(f, plain), 0640);
	assert_int_equal(entry_mode(f, acl), 0600);
	assert_int_equal(entry_mode(f, below), 0600);
	fix_free(f);
}

/*
 * A sparse file's cache entry is as sparse: 64 MiB holding 8 KiB of data
 * (at its start and its middle) is stored with its size and the same
 * bytes, in about 8 KiB of disk.  (Before: 64 MiB of disk, the holes
 * written out as zeros: a user's eight links to a 1 GiB sparse file made
 * 8 GiB of root's disk from 8 KiB of theirs.)
 */
static void test_sparse_cache(void **state)
{
	struct fix *f = fix_new(0);
	char path[PATH_MAX + 16], block[4096];
	sqlite3_stmt *st;
	struct stat es, ss;
	struct error e;
	char *file;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/sparse", f->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	memset(block, 'x', sizeof(block));
	assert_int_equal(pwrite(fd, block, sizeof(block), 0), (ssize_t)sizeof(block));
	assert_int_equal(pwrite(fd, block, sizeof(block), 32 << 20), (ssize_t)sizeof(block));
	assert_int_equal(ftruncate(fd, 64 << 20), 0);
	close(fd);
	assert_int_equal(stat(path, &ss), 0);
	if ((uint64_t)ss.st_blocks * 512 >= (uint64_t)ss.st_size) {
		print_message("skipped: %s is not sparse on this file system\n", path);
		fix_free(f);
		skip();
	}
	comm(f, P1, P1, "alpha", 1, 100);
	mmap_at(f, P1, BASE, 0x1000, 0, path, 110);
	commit(f);
	assert_int_equal(sqlite3_prepare_v2(db_sqlite(f->db),
		"SELECT key FROM binaries WHERE path = ?1 AND cached = 1", -1, &st, NULL),
		SQLITE_OK);
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	file = bincache_path(&f->cache, (const char *)sqlite3_column_text(st, 0));
	assert_int_equal(stat(file, &es), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(bincache_same(&f->cache, (const char *)sqlite3_column_text(st, 0), fd,
				       &e), 1);
	close(fd);
	sqlite3_finalize(st);
	free(file);
	print_message("64 MiB sparse file: cache entry of %jd bytes in %jd KiB\n",
		      (intmax_t)es.st_size, (intmax_t)es.st_blocks / 2);
	assert_int_equal(es.st_size, 64 << 20);
	assert_true((uint64_t)es.st_blocks * 512 <= 1 << 20);
	fix_free(f);
}

/*
 * A handle held since the drain (binhold.h) is read first: a deleted file
 * whose process is gone (no map_files, no path) is still cached, from it,
 * root's only; without one it is not, and a limit that left it without one
 * is named in the problem.  A held handle of another file than the
 * record's build-id names (the address remapped before it was opened) is
 * set aside for the other ways: here the path, which has that build-id.
 */
static void test_held(void **state)
{
	struct fix *f = fix_new(0);
	char held[PATH_MAX + 16], lost[PATH_MAX + 16];
	uint8_t bid[64];
	struct stat st;
	struct error e;
	int fd, n;
	FILE *fp;

	(void)state;
	snprintf(held, sizeof(held), "%s/held", f->dir);
	snprintf(lost, sizeof(lost), "%s/lost", f->dir);
	for (int i = 0; i < 2; i++) {
		assert_non_null(fp = fopen(i ? lost : held, "w"));
		fprintf(fp, "binary %d, no build-id\n", i);
		fclose(fp);
	}
	fd = open(held, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(unlink(held), 0);
	assert_int_equal(unlink(lost), 0);
	comm(f, P1, P1, "alpha", 1, 100);
	{
		struct sink_mmap m = {
			.pid = P1, .start = BASE, .len = 0x1000,
			.prot = PROT_READ | PROT_EXEC, .filename = held, .time_ns = 110,
			.maj = major(st.st_dev), .min = minor(st.st_dev), .ino = st.st_ino,
			.held = 1, .held_fd = fd,
		};

		if (ingest_mmap(f->in, &m, &e))
			fail_msg("ingest_mmap: %s", e.msg);
		m.start = BASE + 0x1000;
		m.filename = lost;
		m.time_ns = 120;
		m.ino++;
		m.held = 0;
		m.held_over = 1;
		if (ingest_mmap(f->in, &m, &e))
			fail_msg("ingest_mmap: %s", e.msg);
	}
	{
		/* held: another file (the one above); the record's build-id
		 * is elf_a's, at its path */
		int efd = open(elf_a, O_RDONLY | O_CLOEXEC);

		assert_true(efd >= 0);
		n = hashkey_build_id_fd(efd, bid, sizeof(bid), &e);
		close(efd);
		assert_true(n > 0);
		struct sink_mmap m = {
			.pid = P1, .start = BASE + 0x2000, .len = 0x1000,
			.prot = PROT_READ | PROT_EXEC, .filename = elf_a, .time_ns = 130,
			.build_id = bid, .build_id_len = n, .held = 1, .held_fd = fd,
		};

		if (ingest_mmap(f->in, &m, &e))
			fail_msg("ingest_mmap: %s", e.msg);
	}
	close(fd);
	commit(f);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE cached = 1 AND "
			       "problem IS NULL AND key LIKE 'xxh3:%' AND path LIKE '%/held'"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE cached = 0 AND "
			       "path LIKE '%/lost' AND problem LIKE '%held no handle of it%'"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE cached = 1 AND "
			       "problem IS NULL AND key LIKE 'buildid:%' AND path NOT LIKE '%/held' "
			       "AND path NOT LIKE '%/lost'"), 1);
	fix_free(f);
}

/* A session's processes cannot make ingest hold or read without bound:
 * past the limits, names and binaries share one row each and files are
 * not read, all counted. */
/*
 * [vdso]: a mapping as long as strobed's own vDSO mapping is the image
 * (cached, keyed by build-id or content), at offset ip - start whatever
 * its pgoff; one of another length (another ABI's image) stays the
 * file-less [vdso] at offset = address.
 */
static void test_vdso(void **state)
{
	struct fix *f;
	struct vdso_image v;
	struct error e;
	uint64_t vb = 0x7fff00000000ULL;
	char key[128];

	(void)state;
	if (vdso_self(&v, &e) < 0) {
		print_message("no vDSO here: %s\n", e.msg);
		skip();
	}
	f = fix_new(0);
	comm(f, P1, P1, "a", 1, 100);
	mmap_dev(f, P1, vb, v.map_len, 0x5000, "[vdso]", 110, 0, 0, 0);
	sample(f, 0, 120, P1, P1, vb + 0x40, 0, NULL);
	comm(f, P2, P2, "compat", 1, 130);
	mmap_dev(f, P2, vb, v.map_len + 4096, 0, "[vdso]", 140, 0, 0, 0);
	sample(f, 0, 150, P2, P2, vb + 0x40, 0, NULL);
	commit(f);
	check_sample(f, 120, "[vdso]", 0x40);
	check_sample(f, 150, "[vdso]", vb + 0x40);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE path='[vdso]' AND "
			       "cached=1 AND (key LIKE 'buildid:%' OR key LIKE 'xxh3:%') AND "
			       "size=?1", (int64_t)v.size), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE key='[vdso]'"), 1);
	{
		sqlite3_stmt *st;

		assert_int_equal(sqlite3_prepare_v2(db_sqlite(f->db), "SELECT key FROM binaries "
						    "WHERE path='[vdso]' AND cached=1", -1, &st,
						    NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		snprintf(key, sizeof(key), "%s", (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	assert_true(bincache_has(&f->cache, key));
	fix_free(f);
}

/*
 * JIT code: a process with anonymous executable memory has its perf map
 * read at its exit into jit_maps and jit_symbols (this test's own pid, so
 * that /proc/PID gives its uid; the map is written where strobed reads).
 */
static void test_jit_map(void **state)
{
	struct fix *f = fix_new(0);
	uint32_t me = (uint32_t)getpid();
	char path[64];
	FILE *m;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", me);
	m = fopen(path, "w");
	assert_non_null(m);
	fprintf(m, "7f0000001000 40 jit_a\nnot a line\n7f0000001040 20 jit_b\n");
	assert_int_equal(fclose(m), 0);
	comm(f, me, me, "jit", 1, 100);
	mmap_dev(f, me, 0x7f0000000000ULL, 0x10000, 0, "//anon", 110, 0, 0, 0);
	sample(f, 0, 120, me, me, 0x7f0000001010ULL, 0, NULL);
	exit_(f, me, me, 200);
	commit(f);
	unlink(path);
	check_sample(f, 120, "[anon]", 0x7f0000001010ULL);
	assert_int_equal(q_int(f, "SELECT symbols FROM jit_maps WHERE pid=?1 AND problem IS NULL "
			       "AND dropped=1", (int64_t)me), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM jit_symbols WHERE pid=?1 AND "
			       "start_ns=100", (int64_t)me), 2);
	assert_int_equal(q_int(f, "SELECT addr FROM jit_symbols WHERE pid=?1 AND "
			       "name='jit_b'", (int64_t)me), 0x7f0000001040LL);
	/* no executable anonymous memory: no map looked for */
	comm(f, P1, P1, "plain", 1, 300);
	exit_(f, P1, P1, 310);
	commit(f);
	assert_int_equal(q_int(f, "SELECT count(*) FROM jit_maps WHERE pid=?1", (int64_t)P1), 0);
	fix_free(f);
}

/*
 * A JIT process in a container: its own mount namespace with a tmpfs on
 * /tmp, its own pid namespace (it is pid 1 there).  Its perf map is its
 * /tmp/perf-1.map, read through the handle of its /tmp taken when its
 * executable anonymous memory was seen, after the process and its mount
 * namespace are gone; never strobed's /tmp/perf-HOSTPID.map (a decoy
 * here).  Needs CAP_SYS_ADMIN: skipped without.
 */
static void test_jit_map_container(void **state)
{
	struct fix *f;
	char decoy[64];
	int pfd[2];
	pid_t child;
	uint32_t gc = 0;
	FILE *m;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(pipe(pfd), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pid_t g;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[0]);
		if (unshare(CLONE_NEWNS | CLONE_NEWPID) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("tmpfs", "/tmp", "tmpfs", 0, "size=64k") < 0)
			_exit(1);
		g = fork();	/* pid 1 of the new pid namespace */
		if (g < 0)
			_exit(1);
		if (g == 0) {
			FILE *o = fopen("/tmp/perf-1.map", "w");

			if (!o || fprintf(o, "7f0000001000 40 in_container\n") < 0 || fclose(o))
				_exit(1);
			pause();
			_exit(0);
		}
		{
			uint32_t v = (uint32_t)g;	/* its pid in ours */

			usleep(100000);	/* its map written */
			if (write(pfd[1], &v, sizeof(v)) != sizeof(v))
				_exit(1);
		}
		waitpid(g, NULL, 0);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &gc, sizeof(gc)) != sizeof(gc)) {
		close(pfd[0]);
		waitpid(child, NULL, 0);
		skip();	/* no mount or pid namespaces here */
	}
	close(pfd[0]);
	snprintf(decoy, sizeof(decoy), "/tmp/perf-%u.map", gc);
	m = fopen(decoy, "w");
	assert_non_null(m);
	fprintf(m, "7f0000001000 40 on_the_host\n");
	assert_int_equal(fclose(m), 0);

	f = fix_new(0);
	comm(f, gc, gc, "contained", 1, 100);
	mmap_dev(f, gc, 0x7f0000000000ULL, 0x10000, 0, "//anon", 110, 0, 0, 0);
	sample(f, 0, 120, gc, gc, 0x7f0000001010ULL, 0, NULL);
	/* the container goes: its /tmp is kept by the handle alone */
	kill(child, SIGKILL);
	kill((pid_t)gc, SIGKILL);
	waitpid(child, NULL, 0);
	usleep(100000);
	exit_(f, gc, gc, 200);
	commit(f);
	unlink(decoy);
	{
		sqlite3_stmt *st;
		char want[96];

		snprintf(want, sizeof(want), "/proc/%u/root/tmp/perf-1.map", gc);
		assert_int_equal(sqlite3_prepare_v2(db_sqlite(f->db),
			"SELECT m.path, coalesce(m.problem,''), s.name FROM jit_maps AS m "
			"LEFT JOIN jit_symbols AS s ON s.pid = m.pid WHERE m.pid = ?1",
			-1, &st, NULL), SQLITE_OK);
		sqlite3_bind_int64(st, 1, gc);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(st, 0), want);
		assert_string_equal((const char *)sqlite3_column_text(st, 1), "");
		assert_string_equal((const char *)sqlite3_column_text(st, 2), "in_container");
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_finalize(st);
	}
	fix_free(f);
}

/*
 * The handles of JIT processes' /tmp in other mount namespaces are at most
 * INGEST_JIT_ROOTS_MAX, counted as they are taken and given back: a pid
 * forked again (its exit lost) gives back its old one.  Two processes of
 * another mount namespace, the second forked from the first (which has
 * JIT code) more times than the limit: afterwards a new JIT process still
 * gets a handle.  (proc_fork closed the old handle without counting it
 * given back: after 1,024 forks no JIT process got one again.)
 */
static void test_jit_roots_fork(void **state)
{
	struct fix *f;
	struct ingest_stats is;
	int pfd[2];
	pid_t child;
	uint32_t gc = 0;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(pipe(pfd), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pid_t g;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[0]);
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("tmpfs", "/tmp", "tmpfs", 0, "size=64k") < 0)
			_exit(1);
		g = fork();
		if (g < 0)
			_exit(1);
		if (g == 0) {
			pause();
			_exit(0);
		}
		{
			uint32_t v = (uint32_t)g;

			if (write(pfd[1], &v, sizeof(v)) != sizeof(v))
				_exit(1);
		}
		waitpid(g, NULL, 0);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &gc, sizeof(gc)) != sizeof(gc)) {
		close(pfd[0]);
		waitpid(child, NULL, 0);
		skip();	/* no mount namespaces here */
	}
	close(pfd[0]);

	f = fix_new(0);
	comm(f, gc, gc, "jit", 1, 100);
	mmap_dev(f, gc, 0x7f0000000000ULL, 0x10000, 0, "//anon", 110, 0, 0, 0);
	for (uint64_t i = 0; i < INGEST_JIT_ROOTS_MAX + 8; i++)
		fork_(f, gc, (uint32_t)child, (uint32_t)child, 200 + i);
	/* a JIT process after them: its handle (none here: strobed's own
	 * namespace) is not refused for the limit */
	mmap_dev(f, P3, 0x7f0000000000ULL, 0x10000, 0, "//anon", 5000, 0, 0, 0);
	commit(f);
	ingest_get_stats(f->in, &is);
	kill(child, SIGKILL);
	kill((pid_t)gc, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(is.jit_roots_over, 0);
	fix_free(f);
}

/* A jitdump of pid at path: a header, a load of name at addr stamped ts
 * and one stamped 90 (before the process's start at 100: an earlier
 * process's). */
static void write_jitdump(const char *path, uint32_t pid, const char *name, uint64_t addr,
			  uint64_t ts)
{
	unsigned char b[256], *p = b;
	uint32_t u32[] = { 0x4A695444, 1, 40, 62, 0, pid };
	uint64_t u64[] = { 80, 0 };
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	memcpy(p, u32, sizeof(u32));
	p += sizeof(u32);
	memcpy(p, u64, sizeof(u64));
	p += sizeof(u64);
	for (int i = 0; i < 2; i++) {
		const char *n = i ? "stale" : name;
		uint32_t h[] = { 0, (uint32_t)(56 + strlen(n) + 1) , 0, 0 };
		uint64_t t = i ? 90 : ts;
		uint64_t r[] = { addr, addr, 0x40, (uint64_t)i };

		memcpy(p, h, 8);
		memcpy(p + 8, &t, 8);
		h[0] = pid;
		h[1] = pid;
		memcpy(p + 16, h, 8);
		memcpy(p + 24, r, sizeof(r));
		memcpy(p + 56, n, strlen(n) + 1);
		p += 56 + strlen(n) + 1;
	}
	assert_int_equal(fwrite(b, 1, p - b, f), (size_t)(p - b));
	assert_int_equal(fclose(f), 0);
}

/*
 * JIT code named in a jitdump: the process maps jit-<pid>.dump executable;
 * the mapping is no binary, and at the exit the file is read into jit_maps
 * and jit_symbols (with load_ns; the record stamped before the process's
 * start dropped).  The file is deleted before the exit is seen: the row
 * says so.  A file that is not the one mapped (another inode) is refused.
 */
static void test_jitdump(void **state)
{
	struct fix *f = fix_new(0);
	uint32_t me = (uint32_t)getpid();
	char path[PATH_MAX];

	(void)state;
	snprintf(path, sizeof(path), "%s/jit-%u.dump", f->dir, me);
	write_jitdump(path, me, "jit_func", 0x7f0000001000ULL, 150);
	fork_(f, 1, me, me, 100);
	mmap_dev(f, me, 0x7f0000000000ULL, 0x10000, 0, "//anon", 110, 0, 0, 0);
	mmap_at(f, me, 0x7f1000000000ULL, 0x1000, 0, path, 111);
	sample(f, 0, 160, me, me, 0x7f0000001010ULL, 0, NULL);
	exit_(f, me, me, 200);
	commit(f);
	unlink(path);
	check_sample(f, 160, "[anon]", 0x7f0000001010ULL);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE path LIKE '%.dump'"), 0);
	assert_int_equal(q_int(f, "SELECT symbols FROM jit_maps WHERE pid=?1 AND problem IS NULL "
			       "AND dropped=1 AND path LIKE '%/jit-' || ?2 || '.dump'",
			       (int64_t)me, (int64_t)me), 1);
	assert_int_equal(q_int(f, "SELECT load_ns FROM jit_symbols WHERE pid=?1 AND "
			       "name='jit_func' AND addr=?2 AND size=64 AND start_ns=100",
			       (int64_t)me, (int64_t)0x7f0000001000LL), 150);

	/* deleted before the exit was seen */
	write_jitdump(path, me, "jit_func", 0x7f0000001000ULL, 350);
	fork_(f, 1, me, me, 300);
	mmap_at(f, me, 0x7f1000000000ULL, 0x1000, 0, path, 311);
	unlink(path);
	exit_(f, me, me, 400);
	commit(f);
	assert_int_equal(q_int(f, "SELECT symbols FROM jit_maps WHERE pid=?1 AND start_ns=300 "
			       "AND problem LIKE '%gone%'", (int64_t)me), 0);

	/* the path now names another file than the one mapped (the record's
	 * device and inode are not the file's) */
	write_jitdump(path, me, "planted", 0x7f0000001000ULL, 550);
	fork_(f, 1, me, me, 500);
	mmap_dev(f, me, 0x7f1000000000ULL, 0x1000, 0, path, 511, 0, 0, 1);
	exit_(f, me, me, 600);
	commit(f);
	unlink(path);
	assert_int_equal(q_int(f, "SELECT symbols FROM jit_maps WHERE pid=?1 AND start_ns=500 "
			       "AND problem LIKE '%device or inode differ%'", (int64_t)me), 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM jit_symbols WHERE name='planted'"), 0);
	fix_free(f);
}

static void test_limits(void **state)
{
	struct fix *f = fix_new(0);
	struct ingest_limits lim = { .binaries = 3, .comms = 2 };
	struct ingest_stats is;
	char path[PATH_MAX + 32];
	struct stat st;

	(void)state;
	assert_int_equal(stat(elf_a, &st), 0);
	lim.bytes_read = st.st_size - 1;
	ingest_set_limits(f->in, &lim);
	fork_(f, 0, P1, P1, 90);	/* root's (the kernel's child): whole tables */
	comm(f, P1, P1, "one", 1, 100);
	comm(f, P1, P1, "two", 1, 110);
	comm(f, P1, P1, "three", 1, 120);
	comm(f, P1, P1, "four", 1, 130);
	comm(f, P1, P1, "one", 1, 140);
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/nothing-%d", f->dir, i);
		mmap_at(f, P1, BASE + i * 0x1000, 0x1000, 0, path, 150 + i);
	}
	commit(f);
	assert_int_equal(q_int(f, "SELECT count(*) FROM comms WHERE name IN ('one','two')"), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM comms WHERE name IN ('three','four')"), 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM comms WHERE name = '[too many names]'"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE path LIKE '%/nothing-%'"), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE key = '[too many binaries]'"), 1);
	ingest_get_stats(f->in, &is);
	assert_int_equal(is.comms_over, 2);
	assert_int_equal(is.binaries_over, 2);
	fix_free(f);

	/* the read budget: a file larger than what is left is not read */
	f = fix_new(0);
	lim = (struct ingest_limits){ .binaries = 100, .comms = 100, .bytes_read = st.st_size - 1 };
	ingest_set_limits(f->in, &lim);
	mmap_at(f, P1, BASE, 0x1000, 0, elf_a, 100);
	commit(f);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE cached = 0 AND "
			       "problem LIKE 'not read: the session has read its limit%'"), 1);
	ingest_get_stats(f->in, &is);
	assert_int_equal(is.bytes_read, 0);
	fix_free(f);
}

/*
 * Issue 30, item 5: one user's files cannot spend the session's read
 * budget for everyone.  Eight hard links to one sparse file of nobody's
 * are read (and charged) once; nobody's distinct files stop at their
 * share (READBUDGET_SHARE_DIV of the budget); root's binary is still read
 * after both, and the stats say whose files were refused.  (Charged per
 * path, as before, the links alone spent the budget and root's binary
 * was "not read".)
 */
static void test_read_budget_owners(void **state)
{
	struct fix *f;
	struct ingest_limits lim;
	struct ingest_stats is;
	char path[PATH_MAX + 32], lnk[PATH_MAX + 256];
	struct stat st, ra;
	uint64_t share;
	int fd;

	(void)state;
	if (geteuid() != 0) {
		print_message("skipped: needs root: the files must belong to another user (chown)\n");
		skip();
	}
	f = fix_new(0);
	assert_int_equal(stat(elf_a, &ra), 0);
	/* the budget: root's binary and a bit more; nobody's share a quarter */
	lim = (struct ingest_limits){ .binaries = 100, .comms = 100,
				      .bytes_read = (uint64_t)ra.st_size * 4 + 4 * 65536 };
	share = lim.bytes_read / READBUDGET_SHARE_DIV;
	ingest_set_limits(f->in, &lim);
	/* a sparse file of nobody's, a bit under its share, 8 links to it */
	snprintf(path, sizeof(path), "%s/sparse", f->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "x", 1, (off_t)(share - 4096)), 1);
	close(fd);
	assert_int_equal(chown(path, 65534, 65534), 0);
	for (int i = 0; i < 8; i++) {	/* each link changes the file's ctime */
		snprintf(lnk, sizeof(lnk), "%s/link-%d", f->dir, i);
		assert_int_equal(link(path, lnk), 0);
	}
	for (int i = 0; i < 8; i++) {
		snprintf(lnk, sizeof(lnk), "%s/link-%d", f->dir, i);
		mmap_at(f, P1, BASE + i * 0x1000, 0x1000, 0, lnk, 100 + i);
	}
	assert_int_equal(stat(path, &st), 0);
	/* nobody's own distinct files, each a sixteenth of its share: past
	 * the share, refused */
	for (int i = 0; i < 4; i++) {
		snprintf(lnk, sizeof(lnk), "%s/own-%d", f->dir, i);
		fd = open(lnk, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		assert_true(fd >= 0);
		assert_int_equal(pwrite(fd, "y", 1, (off_t)(share / 16) + i), 1);
		close(fd);
		assert_int_equal(chown(lnk, 65534, 65534), 0);
		mmap_at(f, P1, BASE + (16 + i) * 0x1000, 0x1000, 0, lnk, 200 + i);
	}
	mmap_at(f, P2, BASE, 0x1000, 0, elf_a, 300);
	commit(f);
	/* the links are one file, read once: a row each, all cached */
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE path LIKE '%/link-%' "
			       "AND cached = 1 AND problem IS NULL"), 8);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE path LIKE '%/link-%' "
			       "AND (cached = 0 OR problem IS NOT NULL)"), 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE path LIKE '%/own-%' "
			       "AND cached = 0 AND problem LIKE '%uid 65534%share%'"), 4);
	snprintf(lnk, sizeof(lnk), "SELECT count(*) FROM binaries WHERE path = '%s' AND "
		 "cached = 1 AND problem IS NULL", elf_a);
	assert_int_equal(q_int(f, lnk), 1);
	ingest_get_stats(f->in, &is);
	assert_int_equal(is.bytes_read, (uint64_t)st.st_size + (uint64_t)ra.st_size);
	assert_int_equal(is.read_refused, 4);
	assert_non_null(strstr(is.read_refusals, "uid 65534: 4 files refused"));
	fix_free(f);
}

static void sample_cg(struct fix *f, uint64_t t, uint32_t pid, uint64_t cgroup)
{
	struct record r;
	struct error e;

	memset(&r, 0, sizeof(r));
	r.type = STROBE_REC_SAMPLE;
	r.time_ns = t;
	r.sample.ip = 0x1000;
	r.sample.pid = r.sample.tid = pid;
	r.sample.flags = STROBE_SAMPLE_USER;
	r.sample.cgroup = cgroup;
	if (ingest_record(f->in, &r, &e))
		fail_msg("ingest_record: %s", e.msg);
}

static void test_cgroups(void **state)
{
	struct fix *f = fix_new(0);
	struct cgset cs;
	struct error e;

	(void)state;
	assert_int_equal(ingest_cgroups_start(f->in, 1, "", &e), 0);
	assert_int_equal(ingest_cgroup(f->in, 11, "/a", &e), 0);
	assert_int_equal(ingest_cgroup(f->in, 12, "/b", &e), 0);
	assert_int_equal(ingest_cgroup(f->in, 12, "/b2", &e), 0);	/* id reused */
	assert_int_equal(ingest_cgroup(f->in, 13, "no-slash", &e), 0);	/* refused */
	comm(f, P1, P1, "one", 1, 100);
	comm(f, P2, P2, "two", 1, 100);
	sample_cg(f, 110, P1, 11);
	sample_cg(f, 120, P1, 11);
	sample_cg(f, 130, P1, 12);	/* moved */
	sample_cg(f, 140, P1, 11);	/* and back */
	sample_cg(f, 150, P2, 0);	/* not known */
	sample_cg(f, 160, 0, 1);	/* idle: no processes row */
	comm(f, P3, P3, "brief", 1, 100);
	sample_cg(f, 170, P3, 12);
	exit_(f, P3, P3, 180);		/* stored at its exit, before the commit */
	commit(f);
	assert_int_equal(q_int(f, "SELECT cgroup_id FROM processes WHERE pid=?", (int64_t)P3), 12);
	assert_int_equal(q_int(f, "SELECT cgroup_id FROM processes WHERE pid=?", (int64_t)P1), 11);
	assert_int_equal(q_int(f, "SELECT cgroup_moves FROM processes WHERE pid=?", (int64_t)P1), 2);
	assert_int_equal(q_int(f, "SELECT cgroup_id FROM processes WHERE pid=?", (int64_t)P2), -1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM cgroups WHERE id=12 AND path='/b2'"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM cgroups"), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM sessions WHERE cgroup_source='sample'"), 1);

	assert_int_equal(cgset_load(f->db, f->s.id, &cs, &e), 0);
	assert_string_equal(cs.names[cgset_lookup(&cs, P1, 100)], "/a");
	assert_string_equal(cs.names[cgset_lookup(&cs, P1, 0)], "/a");	/* its one process */
	assert_string_equal(cs.names[cgset_lookup(&cs, P2, 100)], CGSET_UNKNOWN);
	assert_string_equal(cs.names[cgset_lookup(&cs, 0, 0)], "/");	/* idle */
	assert_string_equal(cs.names[cgset_lookup(&cs, 99999, 0)], CGSET_UNKNOWN);
	assert_int_equal(cs.moved, 1);
	assert_string_equal(cs.source, "sample");
	cgset_free(&cs);
}

/* Without the sample's cgroup (the driver, kernels before 5.7): the
 * process's own /proc/PID/cgroup at its first sample, once. */
static void test_cgroups_proc(void **state)
{
	struct fix *f;
	struct error e;
	char root[256], path[CGROUP_PATH_MAX], full[CGROUP_PATH_MAX + 256];
	struct stat st;
	uint32_t me = (uint32_t)getpid();

	(void)state;
	if (cgroups_find_root(root, sizeof(root)) < 0 ||
	    cgroups_of_pid(me, path, sizeof(path)) < 0) {
		print_message("no cgroup v2 here: /proc/PID/cgroup is not tested\n");
		return;
	}
	snprintf(full, sizeof(full), "%s%s", root, path);
	if (stat(full, &st) < 0) {
		print_message("%s: not in this mount namespace's view: not tested\n", full);
		return;
	}
	f = fix_new(0);
	assert_int_equal(ingest_cgroups_start(f->in, 0, root, &e), 0);
	comm(f, me, me, "self", 1, 100);
	sample_cg(f, 110, me, 0);
	sample_cg(f, 120, me, 0);
	commit(f);
	assert_true(q_int(f, "SELECT cgroup_id FROM processes WHERE pid=?", (int64_t)me) ==
		    (int64_t)st.st_ino);
	assert_int_equal(q_int(f, "SELECT count(*) FROM cgroups WHERE id=? AND path LIKE '/%'",
			       (int64_t)st.st_ino), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM sessions WHERE cgroup_source='proc'"), 1);
}

/* A sample of pid with callchain ips[0..n) (perf's layout) in mode. */
static void sample_cc(struct fix *f, uint64_t t, uint32_t pid, uint16_t mode, uint64_t ip,
		      const uint64_t *ips, size_t n)
{
	struct record r;
	struct error e;

	memset(&r, 0, sizeof(r));
	r.type = STROBE_REC_SAMPLE;
	r.time_ns = t;
	r.sample.ip = ip;
	r.sample.period = 10;
	r.sample.pid = r.sample.tid = pid;
	r.sample.flags = mode | STROBE_SAMPLE_CALLCHAIN;
	r.sample.nr_ips = (uint16_t)n;
	r.sample.ips = (const unsigned char *)ips;
	if (ingest_record(f->in, &r, &e))
		fail_msg("ingest_record: %s", e.msg);
}

/* Frame i of the stack of the sample at time t: its binary's path and
 * offset; the stack's frame count and flags. */
static void check_frame(struct fix *f, uint64_t t, int i, const char *path, uint64_t offset)
{
	sqlite3_stmt *st;
	const unsigned char *fr;
	int64_t bid = 0;
	uint64_t off = 0;
	char sql[256];

	assert_int_equal(sqlite3_prepare_v2(db_sqlite(f->db),
		"SELECT k.frames FROM samples s JOIN stacks k ON k.session_id = s.session_id "
		"AND k.id = s.stack_id WHERE s.time_ns = ?1", -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_int64(st, 1, (int64_t)t);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_true(sqlite3_column_bytes(st, 0) >= 16 * (i + 1));
	fr = sqlite3_column_blob(st, 0);
	for (int b = 7; b >= 0; b--) {
		bid = (int64_t)((uint64_t)bid << 8 | fr[16 * i + b]);
		off = off << 8 | fr[16 * i + 8 + b];
	}
	sqlite3_finalize(st);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM binaries WHERE id = ? AND path = '%s'",
		 path);
	if (q_int(f, sql, bid) != 1 || off != offset)
		fail_msg("sample at %llu frame %d: binary %lld offset %#llx, want %s %#llx",
			 (unsigned long long)t, i, (long long)bid, (unsigned long long)off, path,
			 (unsigned long long)offset);
}

static int64_t stack_of(struct fix *f, uint64_t t)
{
	return q_int(f, "SELECT stack_id FROM samples WHERE time_ns = ?", (int64_t)t);
}

/*
 * Call stacks (schema 14) from callchains: frame 0 is the sample's own
 * location, callers are return addresses less one through the maps,
 * kernel ones through the kernel, [unknown] outside any mapping; markers
 * skipped; the same stack twice is one row; stack_agg sums them; the
 * limit of distinct stacks leaves later samples without one; a hostile
 * callchain breaks nothing.
 */
static void test_stacks(void **state)
{
	struct fix *f = fix_new(0);
	const uint64_t U = (uint64_t)PERF_CONTEXT_USER, K = (uint64_t)PERF_CONTEXT_KERNEL;
	const uint64_t KA = 0xffffffff81001000ULL;
	int have_kernel;
	struct error e;
	struct ingest_stats st;

	have_kernel = ingest_kernel(f->in, &e) == 0;
	fork_(f, 0, P1, P1, 90);	/* root's (the kernel's child): whole tables */
	comm(f, P1, P1, "alpha", 1, 100);
	mmap_at(f, P1, BASE, LEN, PGOFF, elf_a, 110);
	mmap_at(f, P1, BASE + 0x100000, LEN, 0, elf_b, 120);
	{	/* user: leaf in A, called from B, from A; a return address at the
		 * start of B's mapping is inside the call before it: unknown */
		uint64_t ips[] = { U, BASE + 0x10, BASE + 0x100000 + 0x21, BASE + 0x301,
				   BASE + 0x100000, 0 };

		sample_cc(f, 200, P1, STROBE_SAMPLE_USER, BASE + 0x10, ips, 6);
		sample_cc(f, 201, P1, STROBE_SAMPLE_USER, BASE + 0x10, ips, 6);	/* the same */
		sample_cc(f, 202, P1, STROBE_SAMPLE_USER, BASE + 0x10, ips, 4);	/* shorter */
	}
	{	/* kernel mode: kernel frames, then the user context */
		uint64_t ips[] = { K, KA, KA + 0x200, U, BASE + 0x41, BASE + 0x801 };

		sample_cc(f, 300, P1, STROBE_SAMPLE_KERNEL, KA, ips, 6);
	}
	{	/* hostile: markers only, unknown markers, garbage, a first
		 * address that is not the IP */
		uint64_t ips[STROBE_MAX_IPS];

		for (size_t i = 0; i < STROBE_MAX_IPS; i++)
			ips[i] = i % 7 == 0 ? (uint64_t)-(int64_t)(i % 4000) : i * 0x9E3779B97F4A7C15ULL;
		ips[0] = (uint64_t)PERF_CONTEXT_GUEST;
		ips[1] = U;
		sample_cc(f, 400, P1, STROBE_SAMPLE_USER, BASE + 0x10, ips, STROBE_MAX_IPS);
		sample_cc(f, 401, P1, STROBE_SAMPLE_USER, BASE + 0x10, ips, 1);
		sample_cc(f, 402, P1, STROBE_SAMPLE_KERNEL, KA, ips, 2);
	}
	sample(f, 0, 500, P1, P1, BASE + 0x10, 0, NULL);	/* no callchain: no stack */
	commit(f);

	/* frames */
	check_frame(f, 200, 0, elf_a, PGOFF + 0x10);
	check_frame(f, 200, 1, elf_b, 0x20);
	check_frame(f, 200, 2, elf_a, PGOFF + 0x300);
	check_frame(f, 200, 3, "[unknown]", BASE + 0x100000 - 1);
	assert_int_equal(q_int(f, "SELECT nr FROM stacks WHERE id = ?", stack_of(f, 200)), 4);
	assert_int_equal(q_int(f, "SELECT flags FROM stacks WHERE id = ?", stack_of(f, 200)), 4);
	/* dedup: the same stack twice is one row; a shorter one another */
	assert_int_equal(stack_of(f, 200), stack_of(f, 201));
	assert_true(stack_of(f, 202) != stack_of(f, 200));
	assert_int_equal(q_int(f, "SELECT nr FROM stacks WHERE id = ?", stack_of(f, 202)), 3);
	/* kernel and user */
	check_frame(f, 300, 0, have_kernel ? "[kernel.kallsyms]" : "[unknown]", KA);
	check_frame(f, 300, 1, have_kernel ? "[kernel.kallsyms]" : "[unknown]", KA + 0x1ff);
	check_frame(f, 300, 2, elf_a, PGOFF + 0x40);
	check_frame(f, 300, 3, elf_a, PGOFF + 0x800);
	if (have_kernel)
		assert_int_equal(q_int(f, "SELECT flags FROM stacks WHERE id = ?", stack_of(f, 300)),
				 2 | 4);
	/* the hostile ones are stored, bounded */
	assert_true(stack_of(f, 400) > 0);
	assert_true(q_int(f, "SELECT nr FROM stacks WHERE id = ?", stack_of(f, 400)) <=
		    STROBE_MAX_IPS);
	assert_int_equal(q_int(f, "SELECT flags & 1 FROM stacks WHERE id = ?", stack_of(f, 400)), 1);
	assert_int_equal(q_int(f, "SELECT nr FROM stacks WHERE id = ?", stack_of(f, 401)), 1);
	assert_int_equal(q_int(f, "SELECT nr FROM stacks WHERE id = ?", stack_of(f, 402)), 1);
	assert_int_equal(stack_of(f, 500), -1);	/* NULL */
	/* each row's hash is XXH3-64 of its frames: equal frames, equal hash */
	assert_int_equal(q_int(f, "SELECT count(*) FROM stacks WHERE length(frames) != 16 * nr"), 0);
	assert_int_equal(q_int(f, "SELECT count(DISTINCT hash) FROM stacks"),
			 q_int(f, "SELECT count(*) FROM stacks"));

	/* the limit: one more distinct stack, then none */
	{
		struct ingest_limits lim = { .binaries = 100, .comms = 100, .bytes_read = 1 << 30 };
		uint64_t n = (uint64_t)q_int(f, "SELECT count(*) FROM stacks");
		uint64_t a[] = { U, BASE + 0x10, BASE + 0x1001 }, b[] = { U, BASE + 0x10, BASE + 0x2001 };

		lim.stacks = n + 1;
		ingest_set_limits(f->in, &lim);
		sample_cc(f, 600, P1, STROBE_SAMPLE_USER, BASE + 0x10, a, 3);
		sample_cc(f, 601, P1, STROBE_SAMPLE_USER, BASE + 0x10, b, 3);
		sample_cc(f, 602, P1, STROBE_SAMPLE_USER, BASE + 0x10, a, 3);	/* known: kept */
		ingest_get_stats(f->in, &st);
		assert_int_equal(st.stacks_over, 1);
		assert_int_equal(st.samples_no_stack, 1);
		assert_int_equal(st.stacks, n + 1);
	}
	if (ingest_finish(f->in, 1000, &e))
		fail_msg("ingest_finish: %s", e.msg);
	assert_true(stack_of(f, 600) > 0);
	assert_int_equal(stack_of(f, 601), -1);
	assert_int_equal(stack_of(f, 602), stack_of(f, 600));
	/* stack_agg: every sample with a stack, once */
	assert_int_equal(q_int(f, "SELECT sum(samples) FROM stack_agg"),
			 q_int(f, "SELECT count(*) FROM samples WHERE stack_id IS NOT NULL"));
	assert_int_equal(q_int(f, "SELECT samples FROM stack_agg WHERE stack_id = ?",
			       stack_of(f, 200)), 2);
	assert_int_equal(q_int(f, "SELECT period FROM stack_agg WHERE stack_id = ?",
			       stack_of(f, 200)), 20);
	fix_free(f);
}

/* A batch whose commit fails takes its stacks with it: their ids are
 * given again, and the rows that follow refer to rows that exist. */
static void test_stacks_rollback(void **state)
{
	struct fix *f = fix_new(0);
	const uint64_t U = (uint64_t)PERF_CONTEXT_USER;
	uint64_t a[] = { U, BASE + 0x10, BASE + 0x1001 }, b[] = { U, BASE + 0x10, BASE + 0x2001 };
	struct error e;

	comm(f, P1, P1, "alpha", 1, 100);
	mmap_at(f, P1, BASE, LEN, PGOFF, elf_a, 110);
	sample_cc(f, 200, P1, STROBE_SAMPLE_USER, BASE + 0x10, a, 3);
	commit(f);
	assert_int_equal(ingest_begin(f->in, &e), 0);
	sample_cc(f, 300, P1, STROBE_SAMPLE_USER, BASE + 0x10, b, 3);
	/* SQLite rolls the batch back under ingest (as on a full disk) */
	assert_int_equal(sqlite3_exec(db_sqlite(f->db), "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	assert_int_not_equal(ingest_commit(f->in, &e), 0);
	sample_cc(f, 400, P1, STROBE_SAMPLE_USER, BASE + 0x10, b, 3);
	sample_cc(f, 401, P1, STROBE_SAMPLE_USER, BASE + 0x10, a, 3);
	commit(f);
	assert_int_equal(q_int(f, "SELECT count(*) FROM stacks"), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples s WHERE NOT EXISTS (SELECT 1 FROM "
			       "stacks k WHERE k.id = s.stack_id)"), 0);
	assert_int_equal(stack_of(f, 401), stack_of(f, 200));
	assert_int_equal(stack_of(f, 400), 2);
	fix_free(f);
}

/* A --call-graph dwarf sample: kernel callchain ips[0..n), user
 * registers and stack copy (abi 0: none). */
static void sample_dwarf(struct fix *f, uint64_t t, uint32_t pid, uint16_t mode, uint64_t ip,
			 const uint64_t *ips, size_t n, uint32_t abi, uint64_t mask,
			 const uint64_t *regs, const unsigned char *stack, uint64_t stack_size)
{
	struct record r;
	struct error e;

	memset(&r, 0, sizeof(r));
	r.type = STROBE_REC_SAMPLE;
	r.time_ns = t;
	r.sample.ip = ip;
	r.sample.period = 10;
	r.sample.pid = r.sample.tid = pid;
	r.sample.flags = mode | STROBE_SAMPLE_USTACK | (n ? STROBE_SAMPLE_CALLCHAIN : 0);
	r.sample.nr_ips = (uint16_t)n;
	r.sample.ips = (const unsigned char *)ips;
	r.sample.regs_abi = abi;
	r.sample.regs_mask = mask;
	r.sample.nr_regs = (uint32_t)__builtin_popcountll(mask);
	r.sample.regs = (const unsigned char *)regs;
	r.sample.stack = stack;
	r.sample.stack_size = stack_size;
	if (ingest_record(f->in, &r, &e))
		fail_msg("ingest_record: %s", e.msg);
}

/*
 * --call-graph dwarf: a kernel thread's sample (no user registers) has its
 * kernel frames and is complete; a user sample without registers is
 * incomplete and counted in unwind_errors ('no registers', no binary), at
 * the commit; one whose registers the unwinder cannot use is counted too
 * and keeps frame 0; --keep-stacks stores the register and stack bytes by
 * the sample's rowid, in DB.stacks (rawstk.raw_stacks), none in the
 * database's own raw_stacks.
 */
static void test_stacks_dwarf(void **state)
{
	struct fix *f = fix_new(0);
	const uint64_t K = (uint64_t)PERF_CONTEXT_KERNEL, KA = 0xffffffff81001000ULL;
	uint64_t kips[] = { K, KA, KA + 0x300 };
	uint64_t regs[2] = { 0x1234, 0x5678 };
	unsigned char stack[24] = { 1, 2, 3, 4, 5 };
	struct ingest_stats st;
	struct error e;
	int have_kernel = ingest_kernel(f->in, &e) == 0;

	if (ingest_call_graph(f->in, "dwarf", 1, &e))
		fail_msg("ingest_call_graph: %s", e.msg);
	comm(f, P1, P1, "alpha", 1, 100);
	mmap_at(f, P1, BASE, LEN, PGOFF, elf_a, 110);
	sample_dwarf(f, 200, 0, STROBE_SAMPLE_KERNEL, KA, kips, 3, 0, 0, NULL, NULL, 0);
	sample_dwarf(f, 201, P1, STROBE_SAMPLE_USER, BASE + 0x10, NULL, 0, 0, 0, NULL, NULL, 0);
	sample_dwarf(f, 202, P1, STROBE_SAMPLE_USER, BASE + 0x10, NULL, 0, 1, 0x3, regs, stack,
		     sizeof(stack) - 3);
	commit(f);

	assert_int_equal(q_int(f, "SELECT nr FROM stacks WHERE id = ?", stack_of(f, 200)), 2);
	check_frame(f, 200, 1, have_kernel ? "[kernel.kallsyms]" : "[unknown]", KA + 0x2ff);
	assert_int_equal(q_int(f, "SELECT flags & 1 FROM stacks WHERE id = ?", stack_of(f, 200)), 0);
	assert_int_equal(q_int(f, "SELECT flags & 1 FROM stacks WHERE id = ?", stack_of(f, 201)), 1);
	assert_int_equal(q_int(f, "SELECT nr FROM stacks WHERE id = ?", stack_of(f, 201)), 1);
	check_frame(f, 202, 0, elf_a, PGOFF + 0x10);
	assert_int_equal(q_int(f, "SELECT flags & 1 FROM stacks WHERE id = ?", stack_of(f, 202)), 1);
	assert_int_equal(q_int(f, "SELECT count FROM unwind_errors WHERE binary_id IS NULL AND "
			       "reason = 'no registers'"), 1);
	assert_int_equal(q_int(f, "SELECT sum(count) FROM unwind_errors"), 2);
	ingest_get_stats(f->in, &st);
	assert_int_equal(st.unwind_failures, 2);
	/* raw_stacks: struct strobe_ustack, the registers, the stack bytes,
	 * in DB.stacks (rawstk.h), none in the group-readable database */
	assert_int_equal(q_int(f, "SELECT count(*) FROM rawstk.raw_stacks"), 3);
	assert_int_equal(q_int(f, "SELECT count(*) FROM main.raw_stacks"), 0);
	assert_int_equal(q_int(f, "SELECT length(ustack) FROM rawstk.raw_stacks r JOIN samples s ON "
			       "s.rowid = r.sample_row WHERE s.time_ns = 202"),
			 sizeof(struct strobe_ustack) + 16 + sizeof(stack) - 3);
	assert_int_equal(q_int(f, "SELECT instr(ustack, X'3412000000000000785600000000000001020304"
			       "05000000000000000000000000') FROM rawstk.raw_stacks r JOIN samples s ON "
			       "s.rowid = r.sample_row WHERE s.time_ns = 202"),
			 sizeof(struct strobe_ustack) + 1);
	/* counted again in the next batch: added to the same row */
	sample_dwarf(f, 203, P1, STROBE_SAMPLE_USER, BASE + 0x10, NULL, 0, 0, 0, NULL, NULL, 0);
	commit(f);
	assert_int_equal(q_int(f, "SELECT count FROM unwind_errors WHERE binary_id IS NULL AND "
			       "reason = 'no registers'"), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM unwind_errors WHERE reason = "
			       "'no registers'"), 1);
	fix_free(f);
}

/* Each sample's row (in rowid order), its stack and the unwind errors, as
 * text, for comparing two sessions sample by sample. */
static char *dwarf_digest(struct fix *f)
{
	static const char *const q[] = {
		"SELECT s.time_ns, s.binary_id, s.offset, ifnull(k.nr, -1), ifnull(k.flags, -1), "
		"ifnull(hex(k.frames), '') FROM samples s LEFT JOIN stacks k ON "
		"k.session_id = s.session_id AND k.id = s.stack_id ORDER BY s.rowid",
		"SELECT ifnull(binary_id, 0), reason, count FROM unwind_errors ORDER BY 1, 2",
	};
	char *out = NULL;
	size_t len = 0, cap = 0;

	for (size_t i = 0; i < 2; i++) {
		sqlite3_stmt *st;

		assert_int_equal(sqlite3_prepare_v2(db_sqlite(f->db), q[i], -1, &st, NULL),
				 SQLITE_OK);
		while (sqlite3_step(st) == SQLITE_ROW) {
			for (int c = 0; c < sqlite3_column_count(st); c++) {
				const char *v = (const char *)sqlite3_column_text(st, c);

				ARRAY_GROW(out, cap, len + strlen(v ? v : "") + 3);
				len += (size_t)sprintf(out + len, "%s%c", v ? v : "",
						       c + 1 < sqlite3_column_count(st) ? ' ' : '\n');
			}
		}
		sqlite3_finalize(st);
	}
	return out;
}

/* The session of test_stacks_dwarf_batch: samples of P1 with registers
 * whose IP is in split603010's text and a stack copy of addresses in it
 * (each unwound as far as its CFI and the copy go), a flush point (an
 * mmap) and a sample not held (no registers) among them; flush_each:
 * stats read after each sample, which flushes: one round trip a sample. */
static char *dwarf_burst(int flush_each, struct ingest_stats *st)
{
	struct fix *f = fix_new(0);
	uint64_t regs[64] = { 0 }, mask = unwind_regs_mask();
	unsigned char stack[512];
	int sp = __builtin_popcountll(mask & ((1ULL << PERF_REG_X86_SP) - 1));
	int ip = __builtin_popcountll(mask & ((1ULL << PERF_REG_X86_IP) - 1));
	struct error e;
	char *d;

	if (ingest_call_graph(f->in, "dwarf", 0, &e))
		fail_msg("ingest_call_graph: %s", e.msg);
	comm(f, P1, P1, "alpha", 1, 100);
	mmap_at(f, P1, BASE, LEN, 0, elf_a, 110);
	/* split603010's functions (nm), as mapped whole at BASE */
	static const uint64_t fn[] = { 0x1100, 0x1130, 0x1160, 0x11a0, 0x11e0, 0x1200, 0x1314,
				       0x1435 };
	const size_t nfn = sizeof(fn) / sizeof(fn[0]);

	for (uint64_t i = 0; i < 40; i++) {
		for (size_t j = 0; j < sizeof(stack) / 8; j++) {
			uint64_t a = BASE + fn[(i + j) % nfn] + (j % 3 ? 0x9 : 0x1);

			memcpy(stack + 8 * j, &a, 8);
		}
		regs[sp] = 0x7ffc00000000ULL;
		regs[ip] = BASE + fn[i % nfn] + (i % 2 ? 0 : 0x4);
		if (i == 15)	/* a flush point: the samples before keep split603010 */
			mmap_at(f, P1, BASE, LEN, 0, elf_b, 300 + i);
		if (i == 25)	/* not held (no registers): after those held */
			sample_dwarf(f, 300 + i, P1, STROBE_SAMPLE_USER, BASE + 0x1010, NULL, 0, 0,
				     0, NULL, NULL, 0);
		else
			sample_dwarf(f, 300 + i, P1, STROBE_SAMPLE_USER, regs[ip], NULL, 0,
				     PERF_SAMPLE_REGS_ABI_64, mask, regs, stack,
				     sizeof(stack) - 8 * (i % 3));
		if (flush_each)
			ingest_get_stats(f->in, st);
	}
	commit(f);
	ingest_get_stats(f->in, st);
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples"), 40);
	d = dwarf_digest(f);
	fix_free(f);
	return d;
}

/*
 * --call-graph dwarf through the worker in batches (lib/ingest/ubatch.c):
 * a burst of samples of one process goes in fewer round trips than
 * samples, and every sample is stored as when each is unwound alone (a
 * flush after each): the same rows in the same order, the same stacks,
 * the same unwind errors.  Red with UWORKER_BATCH 1 (as many round trips
 * as samples).
 */
static void test_stacks_dwarf_batch(void **state)
{
	struct ingest_stats bst, ost;
	char *batched, *alone;

	(void)state;
#if defined(__x86_64__)
	if (!unwind_regs_mask())
		skip();
	batched = dwarf_burst(0, &bst);
	alone = dwarf_burst(1, &ost);
	printf("batched: %llu samples in %llu round trips; alone: %llu in %llu\n",
	       (unsigned long long)bst.unwinder_samples, (unsigned long long)bst.unwinder_calls,
	       (unsigned long long)ost.unwinder_samples, (unsigned long long)ost.unwinder_calls);
	assert_int_equal(bst.unwinder_samples, 39);
	assert_int_equal(ost.unwinder_samples, 39);
	assert_int_equal(ost.unwinder_calls, 39);
	assert_true(bst.unwinder_calls <= 4);	/* before 15, 25, the commit, and one more */
	assert_int_equal(bst.unwind_failures, ost.unwind_failures);
	assert_string_equal(batched, alone);
	printf("%s", batched + strlen(batched) - MIN(strlen(batched), (size_t)300));
	free(batched);
	free(alone);
#else
	skip();
#endif
}

/*
 * Issue 30 (SECURITY.md R1): one user cannot fill a session's tables of
 * names, binaries and stacks for everyone.  A process of nobody's renames
 * itself, maps paths and makes stacks past its share (a quarter of each
 * table); root's process still gets its own; a process of nobody's gone
 * by ingest's look is charged to its parent (nobody), one with no known
 * parent to "gone processes"; the stop's line names them.
 */
static void test_table_shares(void **state)
{
	const uint64_t U = (uint64_t)PERF_CONTEXT_USER;
	struct ingest_limits lim = { .binaries = 8, .comms = 16, .bytes_read = 1 << 30,
				     .stacks = 8 };
	struct fix *f;
	struct ingest_stats is;
	char path[PATH_MAX + 32], name[16];
	uint32_t nob;
	int64_t n;
	pid_t kid;
	int pipefd[2];

	(void)state;
	if (geteuid() != 0)
		skip();	/* a process of another user's */
	assert_int_equal(pipe(pipefd), 0);
	kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		char c;

		close(pipefd[1]);
		if (setgid(65534) || setuid(65534))
			_exit(1);
		(void)!read(pipefd[0], &c, 1);	/* until the test ends */
		_exit(0);
	}
	close(pipefd[0]);
	nob = (uint32_t)kid;
	f = fix_new(0);
	ingest_set_limits(f->in, &lim);
	for (int tries = 0; tries < 100; tries++) {	/* the child's setuid */
		char st[64], line[256];
		FILE *sf;
		int done = 0;

		snprintf(st, sizeof(st), "/proc/%u/status", nob);
		sf = fopen(st, "r");
		while (sf && fgets(line, sizeof(line), sf))
			if (!strncmp(line, "Uid:", 4))
				done = strtoul(line + 4, NULL, 10) == 65534;
		if (sf)
			fclose(sf);
		if (done)
			break;
		usleep(10000);
	}
	fork_(f, 0, P1, P1, 90);	/* root's */
	/* nobody's: 6 names, 4 kept (16 / 4), 2 "[too many names]" */
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "nob%d", i);
		comm(f, nob, nob, name, 1, 100 + i);
	}
	/* root's: all 5 */
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "root%d", i);
		comm(f, P1, P1, name, 1, 110 + i);
	}
	/* nobody's binaries: 4 paths, 2 rows */
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/nob-%d", f->dir, i);
		mmap_at(f, nob, BASE + (uint64_t)i * 0x1000, 0x1000, 0, path, 120 + i);
	}
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/root-%d", f->dir, i);
		mmap_at(f, P1, BASE + (uint64_t)i * 0x1000, 0x1000, 0, path, 130 + i);
	}
	/* a child of nobody's gone before ingest looks: nobody's still */
	fork_(f, nob, P2, P2, 140);
	comm(f, P2, P2, "nobchild", 0, 141);
	/* stacks: nobody's 4 distinct, 2 kept; root's 4, all kept */
	for (int i = 0; i < 4; i++) {
		uint64_t a[] = { U, BASE + 0x10, BASE + 0x100 + (uint64_t)i };

		sample_cc(f, 200 + (uint64_t)i, nob, STROBE_SAMPLE_USER, BASE + 0x10, a, 3);
		a[2] += 0x1000;
		sample_cc(f, 210 + (uint64_t)i, P1, STROBE_SAMPLE_USER, BASE + 0x10, a, 3);
	}
	/* a process nobody knows the owner of: 5 names, 4 kept */
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "ghost%d", i);
		comm(f, P3, P3, name, 1, 220 + i);
	}
	commit(f);
	assert_int_equal(q_int(f, "SELECT count(*) FROM comms WHERE name LIKE 'nob_'"), 4);
	assert_int_equal(q_int(f, "SELECT count(*) FROM comms WHERE name LIKE 'root_'"), 5);
	assert_int_equal(q_int(f, "SELECT count(*) FROM comms WHERE name = 'nobchild'"), 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM comms WHERE name LIKE 'ghost_'"), 4);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE path LIKE '%/nob-%'"), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM binaries WHERE path LIKE '%/root-%'"), 4);
	n = q_int(f, "SELECT count(*) FROM samples WHERE pid = ? AND stack_id IS NULL", nob);
	assert_int_equal(n, 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples WHERE pid = ? AND stack_id IS NULL",
			       P1), 0);
	ingest_get_stats(f->in, &is);
	assert_int_equal(is.share_refused, 2 + 1 + 1 + 2 + 2);
	snprintf(path, sizeof(path), "names: uid 65534 refused 3, gone processes refused 1; "
		 "binaries: uid 65534 refused 2; stacks: uid 65534 refused 2");
	assert_string_equal(is.share_refusals, path);
	fix_free(f);
	close(pipefd[1]);
	waitpid(kid, NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_sideband_order, teardown),
		cmocka_unit_test_teardown(test_pid_reuse, teardown),
		cmocka_unit_test_teardown(test_lost_exit_reuse, teardown),
		cmocka_unit_test_teardown(test_leader_exit, teardown),
		cmocka_unit_test_teardown(test_leader_exit_unseen_thread, teardown),
		cmocka_unit_test_teardown(test_lost, teardown),
		cmocka_unit_test_teardown(test_lost_sideband, teardown),
		cmocka_unit_test_teardown(test_late_records, teardown),
		cmocka_unit_test_teardown(test_counters, teardown),
		cmocka_unit_test_teardown(test_lost_interval, teardown),
		cmocka_unit_test_teardown(test_exact_switch_missed, teardown),
		cmocka_unit_test_teardown(test_unscheduled, teardown),
		cmocka_unit_test_teardown(test_failed_batch_ids, teardown),
		cmocka_unit_test_teardown(test_hostile_paths, teardown),
		cmocka_unit_test_teardown(test_long_paths, teardown),
		cmocka_unit_test_teardown(test_acl_private, teardown),
		cmocka_unit_test_teardown(test_sparse_cache, teardown),
		cmocka_unit_test_teardown(test_held, teardown),
		cmocka_unit_test_teardown(test_mount_namespace, teardown),
		cmocka_unit_test_teardown(test_limits, teardown),
		cmocka_unit_test_teardown(test_read_budget_owners, teardown),
		cmocka_unit_test_teardown(test_vdso, teardown),
		cmocka_unit_test_teardown(test_jit_map, teardown),
		cmocka_unit_test_teardown(test_jitdump, teardown),
		cmocka_unit_test_teardown(test_jit_map_container, teardown),
		cmocka_unit_test_teardown(test_jit_roots_fork, teardown),
		cmocka_unit_test_teardown(test_cgroups, teardown),
		cmocka_unit_test_teardown(test_cgroups_proc, teardown),
		cmocka_unit_test_teardown(test_stacks, teardown),
		cmocka_unit_test_teardown(test_stacks_rollback, teardown),
		cmocka_unit_test_teardown(test_stacks_dwarf, teardown),
		cmocka_unit_test_teardown(test_stacks_dwarf_batch, teardown),
		cmocka_unit_test(test_table_shares),
	};

	if (find_fixtures()) {
		fprintf(stderr, "test_ingest: tests/workloads/split603010 and pagetouch not "
			"found: build them (make) or set STROBE_BUILD\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
