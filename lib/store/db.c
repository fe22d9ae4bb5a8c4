/*
 * db.c - the connection to the strobe database (see db.h; its files:
 * db_int.h): db_open (the file created with its mode and group, the
 * schema checked, the pragmas of a writer, the ingest path's statements
 * prepared once), db_close, what failed in SQLite, the busy wait, and
 * transactions.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "db_int.h"
#include "progress.h"

/* The ingest path's statements (db_int.h), prepared once by db_open. */
const char *const db_stmt_sql[NR_STMTS] = {
	[STMT_SAMPLE] = "INSERT INTO sample_blocks VALUES(?1,?2,?3,?4,?5,?6)",
	[STMT_NEXT_ROW] = "SELECT coalesce((SELECT first_row+nr FROM sample_blocks "
			  "ORDER BY first_row DESC LIMIT 1),1)",
	[STMT_AGG] = "INSERT INTO sample_agg(session_id,binary_id,offset,pid,comm_id,flags,"
		     "samples,c0,c1,c2,c3,c4,c5,c6,c7,period,start_ns) VALUES(?1,?2,?3,?4,?5,?6,?7,"
		     "?8,?9,?10,?11,?12,?13,?14,?15,?16,?17) "
		     "ON CONFLICT(session_id,binary_id,offset,pid,comm_id,flags,start_ns) "
		     "DO UPDATE SET "
		     "samples=samples+excluded.samples,period=period+excluded.period,"
		     "c0=c0+excluded.c0,c1=c1+excluded.c1,"
		     "c2=c2+excluded.c2,c3=c3+excluded.c3,c4=c4+excluded.c4,"
		     "c5=c5+excluded.c5,c6=c6+excluded.c6,c7=c7+excluded.c7",
	[STMT_TIME_AGG] = "INSERT INTO sample_time(session_id,bucket,cpu,pid,comm_id,binary_id,"
			  "samples,last_row,min_ns,max_ns,c0,c1,c2,c3,c4,c5,c6,c7,start_ns) "
			  "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,"
			  "?10,?11,?12,?13,?14,?15,?16,?17,?18,?19) "
			  "ON CONFLICT(session_id,bucket,cpu,pid,comm_id,binary_id,start_ns) "
			  "DO UPDATE SET "
			  "samples=samples+excluded.samples,"
			  "last_row=max(last_row,excluded.last_row),"
			  "min_ns=min(min_ns,excluded.min_ns),"
			  "max_ns=max(max_ns,excluded.max_ns),c0=c0+excluded.c0,c1=c1+excluded.c1,"
			  "c2=c2+excluded.c2,c3=c3+excluded.c3,c4=c4+excluded.c4,"
			  "c5=c5+excluded.c5,c6=c6+excluded.c6,c7=c7+excluded.c7",
	[STMT_LOST] = "INSERT INTO lost VALUES(?1,?2,?3,?4,?5)",
	[STMT_UNSCHED] = "INSERT INTO unscheduled VALUES(?1,?2,?3,?4,?5,?6,?7)",
	[STMT_MARKER] = "INSERT INTO markers(session_id,time_ns,cpu,pid,tid,kind,name,args) "
			"VALUES(?1,?2,?3,?4,?5,?6,?7,?8)",
	[STMT_BINARY_FIND] = "SELECT id FROM binaries WHERE key=?1 AND path=?2",
	[STMT_BINARY_ADD] = "INSERT INTO binaries(key,path,size,cached,problem) VALUES(?1,?2,?3,?4,?5)",
	[STMT_BINARY_SET] = "UPDATE binaries SET size=coalesce(?3,size),"
			    "cached=max(cached,?4),problem=CASE WHEN ?4 THEN NULL ELSE coalesce(?5,problem) END "
			    "WHERE id=?1",
	[STMT_COMM_FIND] = "SELECT id FROM comms WHERE name=?1",
	[STMT_COMM_ADD] = "INSERT INTO comms(name) VALUES(?1)",
	[STMT_PROCESS] = "INSERT INTO processes(session_id,pid,ppid,comm_id,start_ns,exit_ns,"
			 "uncertain_ns) VALUES(?1,?2,?3,?4,?5,?6,?7) "
			 "ON CONFLICT DO UPDATE SET ppid=coalesce(excluded.ppid,ppid),"
			 "comm_id=coalesce(excluded.comm_id,comm_id),"
			 "exit_ns=coalesce(excluded.exit_ns,exit_ns),"
			 "uncertain_ns=coalesce(uncertain_ns,excluded.uncertain_ns)",
	[STMT_CPU] = "INSERT OR REPLACE INTO session_cpus(session_id,cpu,samples,lost,"
		     "tail_c0,tail_c1,tail_c2,tail_c3,tail_c4,tail_c5,tail_c6,tail_c7,"
		     "lost_c0,lost_c1,lost_c2,lost_c3,lost_c4,lost_c5,lost_c6,lost_c7) "
		     "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,"
		     "?13,?14,?15,?16,?17,?18,?19,?20)",
	[STMT_STACK] = "INSERT INTO stacks(session_id,id,hash,nr,flags,frames) "
		       "VALUES(?1,?2,?3,?4,?5,?6)",
	[STMT_STACK_AGG] = "INSERT INTO stack_agg(session_id,stack_id,pid,comm_id,start_ns,"
			   "samples,period,c0,c1,c2,c3,c4,c5,c6,c7) VALUES(?1,?2,?3,?4,?5,?6,?7,"
			   "?8,?9,?10,?11,?12,?13,?14,?15) "
			   "ON CONFLICT(session_id,stack_id,pid,comm_id,start_ns) DO UPDATE SET "
			   "samples=samples+excluded.samples,period=period+excluded.period,"
			   "c0=c0+excluded.c0,c1=c1+excluded.c1,"
			   "c2=c2+excluded.c2,c3=c3+excluded.c3,c4=c4+excluded.c4,"
			   "c5=c5+excluded.c5,c6=c6+excluded.c6,c7=c7+excluded.c7",
	[STMT_RAW_STACK] = "INSERT OR REPLACE INTO rawstk.raw_stacks(session_id,sample_row,ustack) "
			   "VALUES(?1,?2,?3)",
	[STMT_UNWIND_ERR_SET] = "UPDATE unwind_errors SET count=count+?4 WHERE session_id=?1 "
				"AND binary_id IS ?2 AND reason=?3",
	[STMT_UNWIND_ERR_ADD] = "INSERT INTO unwind_errors(session_id,binary_id,reason,count) "
				"VALUES(?1,?2,?3,?4)",
};

static void blocks_read(void *arg, int64_t rows)
{
	struct db *db = arg;

	progress_add(db->progress, (uint64_t)rows);
}

void db_set_progress(struct db *db, struct progress *p)
{
	db->progress = p;
}

struct progress *db_progress(struct db *db)
{
	return db->progress;
}

sqlite3 *db_sqlite(struct db *db)
{
	return db->sql;
}

const char *db_path(const struct db *db)
{
	return db->path;
}

char *db_cache_dir(const struct db *db)
{
	return xasprintf("%s.cache", db->path);
}

/* e = the disk filled while what (a statement's own code, or the last) */
static int disk_full(struct db *db, struct error *e, const char *what)
{
	return error_set(e, "%s: disk full while %s: free space (stored data is intact)",
			 db->path, what);
}

int db_sql_error(struct db *db, struct error *e, const char *what)
{
	int rc = sqlite3_errcode(db->sql);

	if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB)
		return error_set(e, "%s is corrupt (%s while %s): restore it from a backup "
				 "or move it away and choose another file with --db", db->path,
				 sqlite3_errmsg(db->sql), what);
	if (rc == SQLITE_FULL)
		return disk_full(db, e, what);
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		return error_set(e, "%s: the database is locked while %s (another process holds "
				 "a lock on it or its -shm file): try again", db->path, what);
	return error_set(e, "%s: %s: %s", db->path, what, sqlite3_errmsg(db->sql));
}

void db_set_busy_timeout(struct db *db, int ms)
{
	sqlite3_busy_timeout(db->sql, ms);
}

int db_busy(struct db *db)
{
	int rc = sqlite3_errcode(db->sql);

	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

int db_exec(struct db *db, const char *sql, struct error *e)
{
	char *msg = NULL;

	if (sqlite3_exec(db->sql, sql, NULL, NULL, &msg) != SQLITE_OK) {
		error_set(e, "%s: %s", db->path, msg ? msg : sqlite3_errmsg(db->sql));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

int db_pragma_int(struct db *db, const char *sql, int64_t *v, struct error *e)
{
	sqlite3_stmt *st;
	int rc, n = 0;

again:
	rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			*v = sqlite3_column_int64(st, 0);
			rc = SQLITE_OK;
		}
		sqlite3_finalize(st);
	}
	if (rc == SQLITE_OK)
		return 0;
	/* SQLite gives up on its own (SQLITE_PROTOCOL after about 10 s of
	 * retries) when it cannot take the lock that rebuilds the WAL index:
	 * the caller's busy handler decides whether to go on waiting */
	if ((rc == SQLITE_PROTOCOL || rc == SQLITE_BUSY) && db->busy && db->busy(db->busy_arg, n++))
		goto again;
	if (rc == SQLITE_PROTOCOL)
		return error_set(e, "%s: the database's -shm file stayed locked by another "
				 "process while opening it: try again", db->path);
	if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT)
		return error_set(e, "%s is corrupt or not an SQLite database (%s): move it "
				 "away or choose another file with --db", db->path,
				 sqlite3_errstr(rc));
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		return db_sql_error(db, e, "opening it");
	return error_set(e, "%s: cannot read the database: %s", db->path,
			 sqlite3_errmsg(db->sql));
}

/* Create the file ourselves so that its mode (and that of -wal/-shm,
 * which SQLite copies) keeps other users out: 0640, group strobe. */
static int db_create_file(const char *path, struct error *e)
{
	struct group *g;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	if (fd < 0) {
		if (errno == EEXIST)
			return 0;
		return error_set(e, "cannot create database %s: %s", path, strerror(errno));
	}
	g = getgrnam("strobe");
	if (g && geteuid() == 0 && fchown(fd, 0, g->gr_gid) < 0) {
		close(fd);
		return error_set(e, "cannot give %s to group strobe: %s", path, strerror(errno));
	}
	fchmod(fd, 0640);
	close(fd);
	return 0;
}

/* Before SQLite opens it: path is a regular file this process may open
 * as mode needs, or (not DB_READ) is created. */
static int db_file_check(const char *path, enum db_mode mode, struct error *e)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		if (mode == DB_READ || errno != ENOENT) {
			int err = errno;

			return error_set(e, "cannot open database %s: %s%s", path, strerror(err),
					 err == ENOENT ? ": record a session first (strobe record "
					 "-- CMD) or choose the file with --db" : err == EACCES ?
					 ": it needs root or membership of group 'strobe'" : "");
		}
		return db_create_file(path, e);
	}
	if (!S_ISREG(st.st_mode))
		return error_set(e, "%s is not a regular file: choose a database file with --db",
				 path);
	if (access(path, mode == DB_READ ? R_OK : R_OK | W_OK) < 0 && errno == EACCES)
		return error_set(e, "permission denied on database %s: it needs root or "
				 "membership of group 'strobe' (an administrator can run: "
				 "usermod -aG strobe USER)", path);
	return 0;
}

/* A connection that writes: the WAL and its pragmas, and the ingest
 * path's statements prepared. */
static int writer_setup(struct db *db, struct error *e)
{
	int one = 1;

	/* journal_size_limit: a WAL that grew (a long batch, a reader
	 * holding an old snapshot) shrinks back to 64 MiB once
	 * checkpointed and restarted */
	if (db_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
		    "PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;"
		    "PRAGMA journal_size_limit=67108864", e))
		return -1;
	/* Keep -wal and -shm after the daemon closes: readers in group
	 * strobe open read-only and cannot create them in the directory. */
	sqlite3_file_control(db->sql, "main", SQLITE_FCNTL_PERSIST_WAL, &one);
	for (int i = 0; i < NR_STMTS; i++)
		if (sqlite3_prepare_v3(db->sql, db_stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
				       &db->stmt[i], NULL) != SQLITE_OK)
			return db_sql_error(db, e, "preparing statements");
	return 0;
}

struct db *db_open(const char *path, enum db_mode mode, struct error *e)
{
	return db_open_busy(path, mode, NULL, NULL, e);
}

struct db *db_open_busy(const char *path, enum db_mode mode, int (*busy)(void *, int),
			void *arg, struct error *e)
{
	struct db *db;
	int flags, rc;

	if (db_file_check(path, mode, e))
		return NULL;
	db = xcalloc(1, sizeof(*db));
	db->path = xstrdup(path);
	db->mode = mode;
	flags = (mode == DB_READ ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
		SQLITE_OPEN_NOMUTEX;
	rc = sqlite3_open_v2(path, &db->sql, flags, NULL);
	if (rc != SQLITE_OK) {
		error_set(e, "cannot open database %s: %s", path,
			  db->sql ? sqlite3_errmsg(db->sql) : sqlite3_errstr(rc));
		goto fail;
	}
	db->hook.fn = blocks_read;
	db->hook.arg = db;
	rc = samplevt_register_hook(db->sql, &db->hook);
	if (rc != SQLITE_OK) {
		error_set(e, "%s: cannot register the samples table: %s", path,
			  sqlite3_errstr(rc));
		goto fail;
	}
	db->busy = busy;
	db->busy_arg = arg;
	if (busy)
		sqlite3_busy_handler(db->sql, busy, arg);
	else
		sqlite3_busy_timeout(db->sql, 5000);
	if (db_check_schema(db, mode, e) || (mode != DB_READ && writer_setup(db, e)))
		goto fail;
	return db;
fail:
	db_close(db);
	return NULL;
}

void db_close(struct db *db)
{
	if (!db)
		return;
	for (int i = 0; i < NR_STMTS; i++)
		sqlite3_finalize(db->stmt[i]);
	/* the WAL persists for readers (see db_open): leave it empty */
	if (db->stmt[0])
		sqlite3_exec(db->sql, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	sqlite3_close(db->sql);
	free(db->blk);
	free(db->blk_out);
	free(db->path);
	free(db);
}

int db_begin(struct db *db, struct error *e)
{
	db_blk_reset(db);
	if (db->mode == DB_READ)
		return db_exec(db, "BEGIN", e);
	if (sqlite3_exec(db->sql, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return db_sql_error(db, e, "starting a transaction");
	return 0;
}

int db_commit(struct db *db, struct error *e)
{
	if (db_blk_flush(db, e)) {
		db_rollback(db);
		return -1;
	}
	if (db_exec(db, "COMMIT", e)) {
		if (sqlite3_errcode(db->sql) == SQLITE_FULL)
			error_set(e, "%s: disk full: the last batch was not stored; free space "
				  "and try again (stored data is intact)", db->path);
		db_rollback(db);
		return -1;
	}
	return 0;
}

int db_rollback(struct db *db)
{
	db_blk_reset(db);
	return sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

int db_step_done(struct db *db, sqlite3_stmt *st, struct error *e, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_FULL)
		return disk_full(db, e, what);
	return db_sql_error(db, e, what);
}

int db_exec_bound(struct db *db, const char *sql, struct error *e, const char *what,
		  int64_t a, int64_t b, int64_t c, int64_t d, const char *text)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL))
		return db_sql_error(db, e, what);
	sqlite3_bind_int64(st, 1, a);
	sqlite3_bind_int64(st, 2, b);
	sqlite3_bind_int64(st, 3, c);
	sqlite3_bind_int64(st, 4, d);
	if (text)
		sqlite3_bind_text(st, 5, text, -1, SQLITE_STATIC);
	rc = db_step_done(db, st, e, what);
	sqlite3_finalize(st);
	return rc ? -1 : 0;
}
