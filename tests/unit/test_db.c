/*
 * test_db.c - lib/store/db.c on files in a temporary directory: a new database
 * gets the newest schema version and strobe's application_id; one made
 * by schema/001 alone is migrated to the newest, keeping its rows, and
 * left untouched when its migration fails; the raw stack copies of a
 * schema-16 file move to the root-only DB.stacks leaving no byte behind,
 * and a DB.stacks strobed did not make is refused; files
 * that are newer, another program's, or corrupt are refused for writing
 * and reading without a byte of them changing.  A batch whose commit
 * fails (disk full, simulated with PRAGMA max_page_count) is rolled back:
 * the rows committed before it are intact and the session's stored
 * totals count only committed rows, also after the session is closed
 * as aborted the way strobed does.  Every column of sessions round trips,
 * with the NULL conventions of sessions, markers, probe sites and binary
 * notes.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bincache.h"
#include "db.h"
#include "ingest.h"

extern const char *const schema_migrations[];	/* lib/store/schema_sql.c */

#define SCRATCH_NAME "db"
#include "scratch.h"

/* Run sql on path with plain SQLite (no strobe code). */
static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *s;
	char *msg = NULL;

	assert_int_equal(sqlite3_open(path, &s), SQLITE_OK);
	if (sqlite3_exec(s, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	sqlite3_close(s);
}



static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), n);
	fclose(f);
	*len = n;
	return buf;
}

static int file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* db_open must fail in mode (both modes when -1), with msg_part in its
 * message, and leave the file exactly as it was, with no WAL beside it. */
static void check_refused(const char *path, int mode, const char *msg_part)
{
	enum db_mode modes[] = { DB_WRITE, DB_READ };
	size_t len0, len1;
	char *before = read_file(path, &len0), *after;
	char wal[160];
	struct error e;

	snprintf(wal, sizeof(wal), "%s-wal", path);
	for (int i = 0; i < 2; i++) {
		struct db *db;

		if (mode >= 0 && modes[i] != (enum db_mode)mode)
			continue;
		memset(&e, 0, sizeof(e));
		db = db_open(path, modes[i], &e);
		if (db) {
			db_close(db);
			fail_msg("%s was opened (mode %d)", path, modes[i]);
		}
		if (!strstr(e.msg, msg_part))
			fail_msg("message '%s' does not say '%s'", e.msg, msg_part);
		after = read_file(path, &len1);
		assert_int_equal(len0, len1);
		assert_memory_equal(before, after, len0);
		free(after);
		assert_false(file_exists(wal));
	}
	free(before);
}

static void test_fresh(void **state)
{
	const char *path = path_of("fresh.db");
	struct error e;
	struct db *db = db_open(path, DB_WRITE, &e);
	struct stat st;

	if (!db)
		fail_msg("db_open: %s", e.msg);
	assert_int_equal(db_schema_version(), 17);	/* schema/001 to 017 */
	assert_int_equal(db_int(db, "PRAGMA user_version"), db_schema_version());
	assert_int_equal(db_int(db, "PRAGMA application_id"), DB_APPLICATION_ID);
	assert_int_equal(db_int(db, "SELECT count(*) FROM sqlite_master WHERE name IN "
				"('sessions','sample_blocks','sample_agg','lost','markers',"
				"'session_probes','unscheduled','jit_maps','jit_symbols')"), 9);
	assert_int_equal(db_int(db, "SELECT count(*) FROM pragma_table_info('jit_symbols') "
				"WHERE name='load_ns'"), 1);
	/* schema 13: cgroups */
	assert_int_equal(db_int(db, "SELECT count(*) FROM sqlite_master WHERE name='cgroups'"), 1);
	assert_int_equal(db_int(db, "SELECT count(*) FROM pragma_table_info('processes') "
				"WHERE name IN ('cgroup_id','cgroup_moves')"), 2);
	assert_int_equal(db_int(db, "SELECT count(*) FROM pragma_table_info('sessions') "
				"WHERE name='cgroup_source'"), 1);
	/* schema 17: the raw stack copies' table in DB.stacks, attached */
	assert_int_equal(db_int(db, "SELECT count(*) FROM rawstk.sqlite_master WHERE "
				"name='raw_stacks'"), 1);
	db_close(db);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	assert_int_equal(stat(path_of("fresh.db.stacks"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_uid, geteuid());

	/* opened again, for reading and for writing: nothing to migrate; a
	 * reader does not attach DB.stacks */
	db = db_open(path, DB_READ, &e);
	if (!db)
		fail_msg("db_open read: %s", e.msg);
	assert_int_equal(db_int(db, "SELECT count(*) FROM pragma_database_list WHERE "
				"name='rawstk'"), 0);
	db_close(db);
	db = db_open(path, DB_WRITE, &e);
	assert_non_null(db);
	assert_int_equal(db_int(db, "PRAGMA user_version"), db_schema_version());
	db_close(db);

	/* reading needs an existing strobe database */
	assert_null(db_open(path_of("none.db"), DB_READ, &e));
	assert_false(file_exists(path_of("none.db")));
}

static void test_migrate_from_001(void **state)
{
	const char *path = path_of("old.db");
	char sql[512];
	struct error e;
	struct db *db;

	/* what strobe with schema version 1 wrote */
	raw_exec(path, schema_migrations[0]);
	snprintf(sql, sizeof(sql), "PRAGMA user_version=1; PRAGMA application_id=%d;"
		 "INSERT INTO sessions(id,state,backend,owner_uid,nr_cpus,sample_event,"
		 "start_ns,wall_offset_ns,tsc_mult,tsc_shift,tsc_ref,tsc_ref_ns,samples,"
		 "lost,throttled) VALUES(7,'done','perf',0,2,'cpu-clock',5,0,0,0,0,0,42,1,0)",
		 DB_APPLICATION_ID);
	raw_exec(path, sql);

	/* a reader does not migrate */
	check_refused(path, DB_READ, "needs migrating");

	db = db_open(path, DB_WRITE, &e);
	if (!db)
		fail_msg("db_open: %s", e.msg);
	assert_int_equal(db_int(db, "PRAGMA user_version"), db_schema_version());
	assert_int_equal(db_int(db, "PRAGMA application_id"), DB_APPLICATION_ID);
	assert_int_equal(db_int(db, "SELECT count(*) FROM sqlite_master WHERE name IN "
				"('markers','session_probes','markers_by_time')"), 3);
	assert_int_equal(db_int(db, "SELECT samples FROM sessions WHERE id = 7"), 42);
	/* 003: binaries.note */
	{
		struct db_binary b;
		int64_t id = db_binary_intern(db, "buildid:abcd", "/x", 1, 1, NULL, &e);

		assert_true(id > 0);
		assert_int_equal(db_binary_note(db, id, "a warning", &e), 0);
		assert_int_equal(db_binary_get(db, id, &b, &e), 0);
		assert_string_equal(b.note, "a warning");
		assert_int_equal(db_binary_note(db, id, NULL, &e), 0);
		assert_int_equal(db_binary_get(db, id, &b, &e), 0);
		assert_string_equal(b.note, "");
	}
	{
		struct db_session s;

		assert_int_equal(db_session_get(db, 7, &s, &e), 0);
		assert_int_equal(s.samples, 42);
		assert_int_equal(s.lost, 1);
		assert_string_equal(s.state, "done");
	}
	db_close(db);
}

/*
 * Schema 11 keys the sums by process (pid, start_ns).  Rows written before:
 * a pid that was one process in its session gets its start; a reused pid's
 * histogram rows get 0 (unknown), its sample_time rows the start of the
 * process whose life holds all their samples, or 0 when they span a reuse.
 */
static void test_migrate_011(void **state)
{
	const char *path = path_of("v10.db");
	char sql[256];
	struct error e;
	struct db *db;

	for (int i = 0; i < 10; i++)
		raw_exec(path, schema_migrations[i]);
	snprintf(sql, sizeof(sql), "DROP TABLE samples_v5; PRAGMA user_version=10; "
		 "PRAGMA application_id=%d;", DB_APPLICATION_ID);
	raw_exec(path, sql);
	raw_exec(path,
		 "INSERT INTO processes(session_id,pid,start_ns) VALUES(1,10,100),(1,20,100),"
		 "(1,20,500),(2,20,700);"
		 "INSERT INTO sample_agg VALUES(1,1,64,10,0,1,3,NULL,NULL,NULL,NULL,NULL,NULL,"
		 "NULL,NULL,NULL),(1,1,64,20,0,1,4,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL),"
		 "(2,1,64,20,0,1,5,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL),"
		 "(1,1,64,30,0,1,6,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);"
		 "INSERT INTO sample_time(session_id,bucket,cpu,pid,comm_id,binary_id,samples,"
		 "last_row,min_ns,max_ns) VALUES(1,0,0,10,0,1,1,1,150,160),"
		 "(1,0,0,20,0,1,1,2,200,300),(1,1,0,20,0,1,1,3,600,700),"
		 "(1,2,0,20,0,1,1,4,400,600),(1,3,0,30,0,1,1,5,400,600);");
	db = db_open(path, DB_WRITE, &e);
	if (!db)
		fail_msg("db_open: %s", e.msg);
	assert_int_equal(db_int(db, "PRAGMA user_version"), db_schema_version());
	/* one process: its start; reused: unknown; never a process: 0 */
	assert_int_equal(db_int(db, "SELECT start_ns FROM sample_agg WHERE pid=10"), 100);
	assert_int_equal(db_int(db, "SELECT start_ns FROM sample_agg WHERE session_id=1 AND "
				"pid=20"), 0);
	assert_int_equal(db_int(db, "SELECT start_ns FROM sample_agg WHERE session_id=2"), 700);
	assert_int_equal(db_int(db, "SELECT start_ns FROM sample_agg WHERE pid=30"), 0);
	assert_int_equal(db_int(db, "SELECT sum(samples) FROM sample_agg"), 18);
	/* by time: inside the first's life, the second's, across both */
	assert_int_equal(db_int(db, "SELECT start_ns FROM sample_time WHERE pid=10"), 100);
	assert_int_equal(db_int(db, "SELECT start_ns FROM sample_time WHERE bucket=0 AND "
				"pid=20"), 100);
	assert_int_equal(db_int(db, "SELECT start_ns FROM sample_time WHERE bucket=1"), 500);
	assert_int_equal(db_int(db, "SELECT start_ns FROM sample_time WHERE bucket=2"), 0);
	assert_int_equal(db_int(db, "SELECT start_ns FROM sample_time WHERE pid=30"), 0);
	assert_int_equal(db_int(db, "SELECT count(*) FROM sqlite_master WHERE "
				"name='sample_agg_by_binary'"), 1);
	assert_int_equal(db_int(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE "
				"'%_011'"), 0);
	db_close(db);
	/* and it is sound (SQLite's quick_check passes: reopened untrusted) */
	db = db_open(path, DB_WRITE, &e);
	if (!db)
		fail_msg("reopen: %s", e.msg);
	db_close(db);
}

/* Does the file at path hold the bytes what[0..len)? */
static int file_holds(const char *path, const char *what, size_t len)
{
	size_t n;
	char *buf;
	int found = 0;

	if (!file_exists(path))
		return 0;
	buf = read_file(path, &n);
	for (size_t i = 0; i + len <= n && !found; i++)
		found = !memcmp(buf + i, what, len);
	free(buf);
	return found;
}

/*
 * Schema 17: the raw stack copies a schema-16 database holds (the leak of
 * issue 30: other users' stack bytes in a file group strobe reads) move
 * to DB.stacks, and no byte of them stays in the database or its WAL.
 */
static void test_migrate_raw_stacks(void **state)
{
	static const char secret[] = "s3cret-0f-r00ts-stack-7d1c";
	char path[160], sql[512], stk[176], wal[176];
	struct error e;
	struct db *db;

	snprintf(path, sizeof(path), "%s", path_of("v16.db"));
	snprintf(stk, sizeof(stk), "%s.stacks", path);
	snprintf(wal, sizeof(wal), "%s-wal", path);
	db = db_open(path, DB_WRITE, &e);
	if (!db)
		fail_msg("db_open: %s", e.msg);
	db_close(db);
	assert_int_equal(unlink(stk), 0);	/* as strobe 16 left it: no DB.stacks */
	snprintf(sql, sizeof(sql), "PRAGMA user_version=16; INSERT INTO raw_stacks VALUES"
		 "(1,5,CAST('%s' AS BLOB)),(1,6,CAST(replace(hex(zeroblob(35000)),'0','A')||'%s' AS BLOB)),"
		 "(2,9,X'0200000001');", secret, secret);
	raw_exec(path, sql);
	assert_true(file_holds(path, secret, strlen(secret)) ||
		    file_holds(wal, secret, strlen(secret)));

	db = db_open(path, DB_WRITE, &e);
	if (!db)
		fail_msg("db_open: %s", e.msg);
	assert_int_equal(db_int(db, "PRAGMA user_version"), 17);
	assert_int_equal(db_int(db, "SELECT count(*) FROM main.raw_stacks"), 0);
	assert_int_equal(db_int(db, "SELECT count(*) FROM rawstk.raw_stacks"), 3);
	assert_int_equal(db_int(db, "SELECT length(ustack) FROM rawstk.raw_stacks WHERE "
				"session_id=1 AND sample_row=6"), 70000 + strlen(secret));
	assert_int_equal(db_int(db, "SELECT instr(ustack, CAST('s3cret-0f' AS BLOB)) FROM "
				"rawstk.raw_stacks WHERE session_id=1 AND sample_row=5"), 1);
	assert_int_equal(db_int(db, "SELECT hex(ustack)='0200000001' FROM rawstk.raw_stacks "
				"WHERE session_id=2"), 1);
	/* the database's pages were overwritten, not just freed, and they
	 * are in the file (checkpointed) while strobed runs */
	assert_false(file_holds(path, secret, strlen(secret)));
	assert_false(file_holds(wal, secret, strlen(secret)));
	db_close(db);
	assert_false(file_holds(path, secret, strlen(secret)));
	assert_false(file_holds(wal, secret, strlen(secret)));
	assert_true(file_holds(stk, secret, strlen(secret)));
}

/* DB.stacks is strobed's alone: one planted as a symlink, a hard link,
 * with group or other bits, or another uid's is refused (the symlink's
 * target not created), and so is a file that is not strobe's. */
static void test_raw_stacks_file(void **state)
{
	char path[160], stk[176];
	struct error e;
	struct db *db;
	int fd;

	snprintf(path, sizeof(path), "%s", path_of("rs.db"));	/* path_of's buffers rotate */
	snprintf(stk, sizeof(stk), "%s.stacks", path);
	db = db_open(path, DB_WRITE, &e);
	if (!db)
		fail_msg("db_open: %s", e.msg);
	db_close(db);
	assert_int_equal(unlink(stk), 0);

	assert_int_equal(symlink(path_of("rs-target"), stk), 0);
	assert_null(db_open(path, DB_WRITE, &e));
	assert_non_null(strstr(e.msg, "symlink"));
	assert_false(file_exists(path_of("rs-target")));
	unlink(stk);

	fd = open(stk, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(link(stk, path_of("rs-link")), 0);
	assert_null(db_open(path, DB_WRITE, &e));
	assert_non_null(strstr(e.msg, "not a plain file of strobed's"));
	unlink(path_of("rs-link"));
	assert_int_equal(chmod(stk, 0640), 0);
	assert_null(db_open(path, DB_WRITE, &e));
	assert_non_null(strstr(e.msg, "mode 0640"));
	assert_int_equal(chmod(stk, 0600), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(stk, 65534, 65534), 0);
		assert_null(db_open(path, DB_WRITE, &e));
		assert_non_null(strstr(e.msg, "uid 65534"));
		unlink(stk);
	}
	unlink(stk);
	raw_exec(stk, "PRAGMA application_id=1234; CREATE TABLE t(x)");
	assert_int_equal(chmod(stk, 0600), 0);
	assert_null(db_open(path, DB_WRITE, &e));
	assert_non_null(strstr(e.msg, "not strobe's raw stacks file"));
	unlink(stk);

	/* readers never touch it */
	db = db_open(path, DB_READ, &e);
	if (!db)
		fail_msg("db_open read: %s", e.msg);
	db_close(db);
	assert_false(file_exists(stk));
	db = db_open(path, DB_WRITE, &e);
	if (!db)
		fail_msg("db_open: %s", e.msg);
	db_close(db);
	assert_true(file_exists(stk));
}

/* A migration that fails leaves the file as it was: version 1, intact. */
static void test_migrate_fails(void **state)
{
	const char *path = path_of("clash.db");
	char sql[128];

	raw_exec(path, schema_migrations[0]);
	snprintf(sql, sizeof(sql), "PRAGMA user_version=1; PRAGMA application_id=%d;"
		 "CREATE TABLE session_probes(x)", DB_APPLICATION_ID);
	raw_exec(path, sql);
	check_refused(path, DB_WRITE, "migration to schema version 2 failed");
	{
		sqlite3 *s;

		assert_int_equal(sqlite3_open_v2(path, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
		assert_int_equal(raw_int(s, "PRAGMA user_version"), 1);
		assert_int_equal(raw_int(s, "SELECT count(*) FROM sqlite_master WHERE "
					 "name LIKE 'markers%'"), 0);
		sqlite3_close(s);
	}
}

static void test_refuse_newer(void **state)
{
	const char *path = path_of("newer.db");
	char sql[128];

	raw_exec(path, schema_migrations[0]);
	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d; PRAGMA application_id=%d",
		 db_schema_version() + 1, DB_APPLICATION_ID);
	raw_exec(path, sql);
	check_refused(path, -1, "newer than this strobe");
}

static void test_refuse_foreign(void **state)
{
	const char *path = path_of("foreign.db");
	const char *path0 = path_of("foreign0.db");

	raw_exec(path, "PRAGMA application_id=1234; CREATE TABLE t(x); INSERT INTO t VALUES(1)");
	check_refused(path, -1, "not a strobe database");
	/* no application_id at all, but tables: someone else's */
	raw_exec(path0, "CREATE TABLE sessions(x); INSERT INTO sessions VALUES(1)");
	check_refused(path0, -1, "not a strobe database");
}

static void test_refuse_corrupt(void **state)
{
	const char *path = path_of("corrupt.db");
	const char *junk = path_of("junk.db");
	struct error e;
	struct db *db = db_open(path, DB_WRITE, &e);
	char buf[4096];
	int fd;

	assert_non_null(db);
	db_close(db);
	unlink(path_of("corrupt.db-wal"));
	unlink(path_of("corrupt.db-shm"));
	/* page 2 (the first table's root) overwritten */
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	memset(buf, 0x5a, sizeof(buf));
	assert_int_equal(pwrite(fd, buf, sizeof(buf), 4096), sizeof(buf));
	close(fd);
	check_refused(path, DB_WRITE, "strobed will not write to it");
	/* a reader is not checked up front (doc/SCHEMA.md): the query that
	 * reaches the damage fails, saying so, and nothing is written */
	db = db_open(path, DB_READ, &e);
	if (!db)
		fail_msg("db_open read: %s", e.msg);
	{
		sqlite3_stmt *st;
		int rc;

		/* a column of the table itself, not count(*): that may read
		 * the smaller index sessions_by_state (schema 004) instead */
		rc = sqlite3_prepare_v2(db_sqlite(db), "SELECT max(name) FROM sessions", -1, &st,
					NULL);
		if (rc == SQLITE_OK) {
			rc = sqlite3_step(st);
			sqlite3_finalize(st);
		}
		assert_true(rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB);
		db_sql_error(db, &e, "reading sessions");
		assert_non_null(strstr(e.msg, "is corrupt"));
	}
	db_close(db);
	check_refused(path, DB_WRITE, "strobed will not write to it");

	/* not SQLite at all */
	fd = open(junk, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));
	close(fd);
	check_refused(junk, -1, "corrupt or not an SQLite database");
}

static void fill_session(struct db_session *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->state, sizeof(s->state), "running");
	snprintf(s->backend, sizeof(s->backend), "perf");
	snprintf(s->sample_event, sizeof(s->sample_event), "cpu-clock");
	s->nr_cpus = 2;
	s->sample_freq = 1000;
	s->start_ns = 10;
}

static void put_sample(struct ingest *in, uint64_t t, uint32_t cpu, struct error *e, int *rc)
{
	struct record r;

	memset(&r, 0, sizeof(r));
	r.type = STROBE_REC_SAMPLE;
	r.cpu = cpu;
	r.time_ns = t;
	r.sample.ip = 0x1000 + t;
	r.sample.pid = 0;
	r.sample.tid = 0;
	*rc = ingest_record(in, &r, e);
}

/*
 * The disk fills up in the middle of a batch (the database may not grow
 * past its current size): the INSERT that needs a new page fails and
 * SQLite rolls the whole transaction back by itself.  Earlier batches
 * stay, and the totals the session row ends up with (after strobed stops
 * the session and stores it as aborted) count only the stored rows.
 */
static void test_failed_commit(void **state)
{
	const char *path = path_of("full.db");
	struct bincache cache;
	struct db_session s;
	struct ingest *in;
	struct error e;
	struct db *db = db_open(path, DB_WRITE, &e);
	char *cdir, sql[64];
	uint64_t t = 100;
	int rc = 0, failed = 0;

	assert_non_null(db);
	cdir = db_cache_dir(db);
	assert_int_equal(bincache_open(&cache, cdir, &e), 0);
	free(cdir);
	fill_session(&s);
	assert_int_equal(db_session_insert(db, &s, &e), 0);
	in = ingest_new(db, &cache, &s, &e);
	assert_non_null(in);
	for (int i = 0; i < 10; i++, t++) {
		put_sample(in, t, i % 2, &e, &rc);
		assert_int_equal(rc, 0);
	}
	assert_int_equal(ingest_lost(in, 1, t, 4, "samples", &e), 0);
	assert_int_equal(ingest_commit(in, &e), 0);
	assert_int_equal(db_int(db, "SELECT samples FROM sessions"), 10);

	/* the file may not grow any more */
	snprintf(sql, sizeof(sql), "PRAGMA max_page_count=%lld",
		 (long long)db_int(db, "PRAGMA page_count"));
	sqlite3_exec(db_sqlite(db), sql, NULL, NULL, NULL);
	for (int i = 0; i < 100000 && !failed; i++, t++) {
		put_sample(in, t, i % 2, &e, &rc);
		if (rc == 0 && i % 1000 == 999)
			rc = ingest_commit(in, &e);
		failed = rc < 0;
		if (!failed && i % 1000 == 999)
			assert_int_equal(db_int(db, "SELECT count(*) FROM samples"), 10 + i + 1);
	}
	assert_true(failed);
	assert_non_null(strstr(e.msg, "disk full"));
	{
		int64_t stored = db_int(db, "SELECT count(*) FROM samples");

		/* the session row of the last good commit */
		assert_int_equal(db_int(db, "SELECT samples FROM sessions"), stored);
		assert_int_equal(db_int(db, "SELECT lost FROM sessions"), 4);
		/* strobed stops the session: ingest_finish (may fail again), then
		 * the session is stored as aborted from the same struct */
		if (ingest_finish(in, t, &e) < 0) {
			snprintf(s.state, sizeof(s.state), "aborted");
			sqlite3_exec(db_sqlite(db), "PRAGMA max_page_count=1000000", NULL, NULL,
				     NULL);
			assert_int_equal(db_session_update(db, &s, &e), 0);
		}
		assert_int_equal(db_int(db, "SELECT count(*) FROM samples"), stored);
		assert_int_equal(db_int(db, "SELECT samples FROM sessions"), stored);
		assert_int_equal(db_int(db, "SELECT last_sample FROM sessions"),
				 db_int(db, "SELECT max(rowid) FROM samples"));
		assert_int_equal(db_int(db, "SELECT lost FROM sessions"), 4);
		assert_int_equal(db_int(db, "SELECT count(*) FROM lost"), 1);
		/* the first batch is intact */
		assert_int_equal(db_int(db, "SELECT count(*) FROM samples WHERE time_ns "
					"BETWEEN 100 AND 109"), 10);
	}
	ingest_free(in);
	db_close(db);
	bincache_close(&cache);

	/* and the file is sound */
	db = db_open(path, DB_WRITE, &e);
	if (!db)
		fail_msg("reopen: %s", e.msg);
	db_close(db);
}

static int refuse_commit(void *arg)
{
	return 1;	/* the COMMIT becomes a ROLLBACK */
}

/*
 * The COMMIT itself fails (a commit hook refuses it): the batch's samples,
 * lost counts and counter increases are forgotten everywhere, the next
 * batch commits normally, and the per-CPU statistics and the histogram
 * written at the end count exactly the stored rows.
 */
static void test_failed_commit_then_more(void **state)
{
	const char *path = path_of("hook.db");
	struct bincache cache;
	struct db_session s;
	struct ingest_stats ist;
	struct ingest *in;
	struct error e;
	struct db *db = db_open(path, DB_WRITE, &e);
	char *cdir;
	uint64_t t = 100;
	int rc;

	assert_non_null(db);
	cdir = db_cache_dir(db);
	assert_int_equal(bincache_open(&cache, cdir, &e), 0);
	free(cdir);
	fill_session(&s);
	assert_int_equal(db_session_insert(db, &s, &e), 0);
	in = ingest_new(db, &cache, &s, &e);
	assert_non_null(in);
	for (int i = 0; i < 10; i++, t++) {
		put_sample(in, t, i % 2, &e, &rc);
		assert_int_equal(rc, 0);
	}
	assert_int_equal(ingest_lost(in, 0, t, 2, "ring", &e), 0);
	assert_int_equal(ingest_commit(in, &e), 0);

	sqlite3_commit_hook(db_sqlite(db), refuse_commit, NULL);
	for (int i = 0; i < 5; i++, t++) {
		put_sample(in, t, 1, &e, &rc);
		assert_int_equal(rc, 0);
	}
	assert_int_equal(ingest_lost(in, 1, t, 3, "ring", &e), 0);
	assert_int_equal(ingest_throttle(in, 1, t, &e), 0);
	assert_int_equal(ingest_commit(in, &e), -1);
	sqlite3_commit_hook(db_sqlite(db), NULL, NULL);

	assert_int_equal(db_int(db, "SELECT count(*) FROM samples"), 10);
	assert_int_equal(db_int(db, "SELECT samples FROM sessions"), 10);
	assert_int_equal(db_int(db, "SELECT lost FROM sessions"), 2);
	assert_int_equal(db_int(db, "SELECT throttled FROM sessions"), 0);
	assert_int_equal(db_int(db, "SELECT count(*) FROM lost"), 1);
	/* in memory too: the status and the next commit */
	assert_int_equal(s.samples, 10);
	assert_int_equal(s.lost, 2);
	ingest_get_stats(in, &ist);
	assert_int_equal(ist.samples, 10);
	assert_int_equal(ist.lost, 2);
	assert_int_equal(ist.throttled, 0);

	for (int i = 0; i < 2; i++, t++) {
		put_sample(in, t, 0, &e, &rc);
		assert_int_equal(rc, 0);
	}
	assert_int_equal(ingest_commit(in, &e), 0);
	assert_int_equal(db_int(db, "SELECT count(*) FROM samples"), 12);
	assert_int_equal(db_int(db, "SELECT samples FROM sessions"), 12);
	assert_int_equal(db_int(db, "SELECT last_sample FROM sessions"),
			 db_int(db, "SELECT max(rowid) FROM samples"));

	assert_int_equal(ingest_finish(in, t, &e), 0);
	assert_int_equal(db_int(db, "SELECT sum(samples) FROM sample_agg"), 12);
	assert_int_equal(db_int(db, "SELECT samples FROM session_cpus WHERE cpu = 0"), 7);
	assert_int_equal(db_int(db, "SELECT samples FROM session_cpus WHERE cpu = 1"), 5);
	assert_int_equal(db_int(db, "SELECT lost FROM session_cpus WHERE cpu = 0"), 2);
	assert_int_equal(db_int(db, "SELECT lost FROM session_cpus WHERE cpu = 1"), 0);
	assert_int_equal(db_int(db, "SELECT count(*) FROM sessions WHERE state = 'done' AND "
				"samples = 12 AND lost = 2 AND throttled = 0"), 1);
	ingest_free(in);
	db_close(db);
	bincache_close(&cache);
}

/*
 * Every column of sessions round trips through db_session_insert, _update
 * and _get, and the NULL conventions of the rows hold: 0 is NULL where it
 * means unknown (sample_freq, end_ns, ...), "" is NULL for the optional
 * text, a negative late_* is NULL and reads back as -1; likewise a marker's
 * cpu, pid and tid of -1, a probe's semaphore of -1 and an empty binary
 * note are NULL.
 */
static void test_session_row(void **state)
{
	struct error e;
	struct db *db = db_open(path_of("row.db"), DB_WRITE, &e);
	struct db_session a, b, r;

	if (!db)
		fail_msg("db_open: %s", e.msg);
	memset(&a, 0, sizeof(a));
	snprintf(a.name, sizeof(a.name), "full");
	snprintf(a.state, sizeof(a.state), "running");
	snprintf(a.backend, sizeof(a.backend), "perf");
	snprintf(a.hostname, sizeof(a.hostname), "host");
	snprintf(a.kernel_release, sizeof(a.kernel_release), "6.1");
	snprintf(a.sample_event, sizeof(a.sample_event), "cycles");
	snprintf(a.tsc_source, sizeof(a.tsc_source), "perf");
	snprintf(a.kallsyms_key, sizeof(a.kallsyms_key), "kallsyms:1");
	snprintf(a.cgroup_source, sizeof(a.cgroup_source), "proc");
	snprintf(a.call_graph, sizeof(a.call_graph), "dwarf,8192");
	snprintf(a.attribution, sizeof(a.attribution), "exact");
	a.owner_uid = 1000;
	a.nr_cpus = 4;
	a.sample_freq = 999;
	a.start_ns = 11;
	a.end_ns = 12;
	a.wall_offset_ns = -13;
	a.tsc_mult = 14;
	a.tsc_shift = 15;
	a.tsc_ref = 16;
	a.tsc_ref_ns = 17;
	a.kernel_binary_id = 18;
	a.first_sample = 19;
	a.last_sample = 20;
	a.samples = 21;
	a.lost = 22;
	a.throttled = 23;
	a.duration_ns = 24;
	a.time_bucket_ns = 25;
	a.late_samples = 0;
	a.late_records = 27;
	a.late_max_ns = 28;
	a.nr_events = 2;
	snprintf(a.events[0].name, sizeof(a.events[0].name), "instructions");
	a.events[0].config = 1;
	snprintf(a.events[1].name, sizeof(a.events[1].name), "raw");
	a.events[1].type = 4;
	a.events[1].config = 5;
	a.events[1].config1 = 6;
	a.events[1].config2 = 7;
	assert_int_equal(db_session_insert(db, &a, &e), 0);
	assert_true(a.id > 0);
	memset(a.state, 0, sizeof(a.state));	/* compared whole below */
	snprintf(a.state, sizeof(a.state), "done");
	a.samples = 99;
	assert_int_equal(db_session_update(db, &a, &e), 0);
	assert_int_equal(db_session_get(db, a.id, &r, &e), 0);
	assert_int_equal(r.nr_events, 2);
	assert_string_equal(r.events[1].name, "raw");
	assert_int_equal(r.events[1].config2, 7);
	/* the whole row as it was written (the events: compared above) */
	r.nr_events = a.nr_events;
	memcpy(r.events, a.events, sizeof(r.events));
	assert_memory_equal(&r, &a, sizeof(a));

	/* the NULLs: an empty session */
	memset(&b, 0, sizeof(b));
	snprintf(b.state, sizeof(b.state), "done");
	b.late_samples = b.late_records = b.late_max_ns = -1;
	assert_int_equal(db_session_insert(db, &b, &e), 0);
	assert_int_equal(db_int(db, "SELECT count(*) FROM sessions WHERE id = 2 AND name IS NULL "
				"AND hostname IS NULL AND kernel_release IS NULL AND "
				"sample_freq IS NULL AND sample_period IS NULL AND end_ns IS NULL "
				"AND tsc_source IS NULL AND kernel_binary_id IS NULL AND "
				"kallsyms_key IS NULL AND first_sample IS NULL AND last_sample IS "
				"NULL AND duration_ns IS NULL AND time_bucket_ns IS NULL AND "
				"late_samples IS NULL AND late_records IS NULL AND late_max_ns IS "
				"NULL AND cgroup_source IS NULL AND call_graph IS NULL AND "
				"attribution IS NULL AND backend = '' AND sample_event = '' AND "
				"samples = 0 AND start_ns = 0"), 1);
	/* 0 is a count there, not unknown */
	assert_int_equal(db_int(db, "SELECT count(*) FROM sessions WHERE id = 1 AND "
				"late_samples = 0 AND sample_period IS NULL"), 1);
	assert_int_equal(db_session_get(db, 0, &r, &e), 0);	/* the latest */
	assert_int_equal(r.id, b.id);
	assert_memory_equal(&r, &b, sizeof(b));

	/* markers, probe sites, binary notes */
	{
		struct db_marker m = { .time_ns = 5, .cpu = -1, .pid = -1, .tid = -1, .kind = "mark",
				       .name = "text" };
		struct db_probe p = { .spec = "/x:p:n", .offset = 5, .semaphore = -1,
				      .arg_spec = "" };
		int64_t bin;

		assert_int_equal(db_begin(db, &e), 0);
		assert_int_equal(db_marker_insert(db, a.id, &m, &e), 0);
		m.cpu = 0;
		m.pid = 0;
		m.tid = 7;
		m.args = "a";
		assert_int_equal(db_marker_insert(db, a.id, &m, &e), 0);
		assert_int_equal(db_probe_insert(db, a.id, &p, &e), 0);
		p.semaphore = 0;
		assert_int_equal(db_probe_insert(db, a.id, &p, &e), 0);
		bin = db_binary_intern(db, "buildid:1", "/a", 1, 1, NULL, &e);
		assert_true(bin > 0);
		assert_int_equal(db_binary_note(db, bin, "", &e), 0);
		assert_int_equal(db_commit(db, &e), 0);
		assert_int_equal(db_int(db, "SELECT count(*) FROM markers WHERE cpu IS NULL AND "
					"pid IS NULL AND tid IS NULL AND args IS NULL"), 1);
		assert_int_equal(db_int(db, "SELECT count(*) FROM markers WHERE cpu = 0 AND "
					"pid = 0 AND tid = 7 AND args = 'a'"), 1);
		assert_int_equal(db_int(db, "SELECT count(*) FROM session_probes WHERE "
					"semaphore IS NULL"), 1);
		assert_int_equal(db_int(db, "SELECT count(*) FROM session_probes WHERE "
					"semaphore = 0"), 1);
		assert_int_equal(db_int(db, "SELECT count(*) FROM binaries WHERE note IS NULL"), 1);
	}
	db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh),
		cmocka_unit_test(test_migrate_from_001),
		cmocka_unit_test(test_migrate_011),
		cmocka_unit_test(test_migrate_raw_stacks),
		cmocka_unit_test(test_raw_stacks_file),
		cmocka_unit_test(test_migrate_fails),
		cmocka_unit_test(test_refuse_newer),
		cmocka_unit_test(test_refuse_foreign),
		cmocka_unit_test(test_refuse_corrupt),
		cmocka_unit_test(test_failed_commit),
		cmocka_unit_test(test_failed_commit_then_more),
		cmocka_unit_test(test_session_row),
	};

	return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
