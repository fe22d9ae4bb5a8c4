/*
 * db.c - the strobe database (see db.h): safe open, migrations, and the
 * prepared statements of the ingest path.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "db.h"
#include "progress.h"
#include "rawstk.h"
#include "sampleblk.h"
#include "samplevt.h"

extern const char *const schema_migrations[];
extern const size_t schema_nr_migrations;

enum {
	STMT_SAMPLE,
	STMT_NEXT_ROW,
	STMT_AGG,
	STMT_TIME_AGG,
	STMT_LOST,
	STMT_UNSCHED,
	STMT_MARKER,
	STMT_BINARY_FIND,
	STMT_BINARY_ADD,
	STMT_BINARY_SET,
	STMT_COMM_FIND,
	STMT_COMM_ADD,
	STMT_PROCESS,
	STMT_CPU,
	STMT_STACK,
	STMT_STACK_AGG,
	STMT_RAW_STACK,
	STMT_UNWIND_ERR_SET,
	STMT_UNWIND_ERR_ADD,
	NR_STMTS
};

static const char *const stmt_sql[NR_STMTS] = {
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

struct db {
	sqlite3 *sql;
	char *path;
	enum db_mode mode;
	int (*busy)(void *, int);	/* db_open_busy's */
	void *busy_arg;
	sqlite3_stmt *stmt[NR_STMTS];
	/* the open transaction's samples not yet packed into a block */
	struct sampleblk_row *blk;	/* SAMPLEBLK_MAX rows */
	uint8_t *blk_out;		/* sampleblk_bound(SAMPLEBLK_MAX) bytes */
	size_t blk_nr;
	int64_t blk_session, blk_min, blk_max;
	int64_t next_row;		/* rowid of the next sample; 0: not read yet */
	struct progress *progress;	/* db_set_progress()'s */
	struct samplevt_hook hook;	/* the samples table's, to it */
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

int db_schema_version(void)
{
	return (int)schema_nr_migrations;
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

int db_sql_error(struct db *db, struct error *e, const char *what)
{
	int rc = sqlite3_errcode(db->sql);

	if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB)
		return error_set(e, "%s is corrupt (%s while %s): restore it from a backup "
				 "or move it away and choose another file with --db", db->path,
				 sqlite3_errmsg(db->sql), what);
	if (rc == SQLITE_FULL)
		return error_set(e, "%s: disk full while %s: free space (stored data is intact)",
				 db->path, what);
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

static int sql_error(struct db *db, struct error *e, const char *what)
{
	return db_sql_error(db, e, what);
}

/* strobed writes only into a sound file: PRAGMA quick_check reads it all. */
static int quick_check(struct db *db, struct error *e)
{
	sqlite3_stmt *st;
	char why[256] = "";
	int rc;

	rc = sqlite3_prepare_v2(db->sql, "PRAGMA quick_check(1)", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			const unsigned char *t = sqlite3_column_text(st, 0);

			if (t && strcmp((const char *)t, "ok")) {
				const char *m = (const char *)t, *hdr = "*** in database main ***\n";

				if (!strncmp(m, hdr, strlen(hdr)))
					m += strlen(hdr);
				snprintf(why, sizeof(why), "%s", m);
				for (char *c = why; *c; c++)	/* one line */
					if ((unsigned char)*c < ' ')
						*c = ' ';
			}
			rc = SQLITE_OK;
		}
		sqlite3_finalize(st);
	}
	if (rc != SQLITE_OK)
		return sql_error(db, e, "checking it");
	if (why[0])
		return error_set(e, "%s is corrupt (%s): strobed will not write to it; restore "
				 "it from a backup or move it away and choose another file with "
				 "--db", db->path, why);
	return 0;
}

static int exec(struct db *db, const char *sql, struct error *e)
{
	char *msg = NULL;

	if (sqlite3_exec(db->sql, sql, NULL, NULL, &msg) != SQLITE_OK) {
		error_set(e, "%s: %s", db->path, msg ? msg : sqlite3_errmsg(db->sql));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int pragma_int(struct db *db, const char *sql, int64_t *v, struct error *e)
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

static int step_done(struct db *db, sqlite3_stmt *st, struct error *e, const char *what);

/* rows[0..nr) as the sample_blocks row of first (st: its INSERT), their
 * times between lo and hi; out has room for sampleblk_bound(nr). */
static int block_write(struct db *db, sqlite3_stmt *st, int64_t first, int64_t session,
		       const struct sampleblk_row *rows, size_t nr, int64_t lo, int64_t hi,
		       uint8_t *out, struct error *e)
{
	size_t len = sampleblk_encode(rows, nr, out);

	sqlite3_bind_int64(st, 1, first);
	sqlite3_bind_int64(st, 2, session);
	sqlite3_bind_int64(st, 3, (int64_t)nr);
	sqlite3_bind_int64(st, 4, lo);
	sqlite3_bind_int64(st, 5, hi);
	sqlite3_bind_blob(st, 6, out, (int)len, SQLITE_STATIC);
	return step_done(db, st, e, "storing samples");
}
static int blk_flush(struct db *db, struct error *e);
static void blk_reset(struct db *db);

/*
 * Schema 006: pack the rows of the old samples table (renamed samples_v5
 * by the migration) into sample_blocks, keeping their rowids, and drop it.
 * A block never spans two sessions or a gap in the rowids.
 */
static int pack_legacy_samples(struct db *db, struct error *e)
{
	sqlite3_stmt *rd = NULL, *wr = NULL;
	struct sampleblk_row *rows = xmalloc(SAMPLEBLK_MAX * sizeof(*rows));
	uint8_t *out = xmalloc(sampleblk_bound(SAMPLEBLK_MAX));
	int64_t first = 0, session = 0, lo = 0, hi = 0;
	size_t nr = 0;
	int rc, ret = -1;

	if (sqlite3_prepare_v2(db->sql, "SELECT rowid,* FROM samples_v5 ORDER BY rowid", -1,
			       &rd, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->sql, "INSERT INTO sample_blocks VALUES(?1,?2,?3,?4,?5,?6)",
			       -1, &wr, NULL) != SQLITE_OK) {
		sql_error(db, e, "packing the samples into blocks");
		goto out;
	}
	for (;;) {
		int64_t rowid = 0, sid = 0;

		rc = sqlite3_step(rd);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			sql_error(db, e, "reading the old samples table");
			goto out;
		}
		if (rc == SQLITE_ROW) {
			rowid = sqlite3_column_int64(rd, 0);
			sid = sqlite3_column_int64(rd, 1);
		}
		if (nr && (rc == SQLITE_DONE || nr == SAMPLEBLK_MAX || sid != session ||
			   rowid != first + (int64_t)nr)) {
			if (block_write(db, wr, first, session, rows, nr, lo, hi, out, e))
				goto out;
			nr = 0;
		}
		if (rc == SQLITE_DONE)
			break;
		if (!nr) {
			first = rowid;
			session = sid;
		}
		/* no period before schema 8, no stack before 14 */
		rows[nr].null = 1u << SB_PERIOD | 1u << SB_STACK;
		rows[nr].v[SB_PERIOD] = rows[nr].v[SB_STACK] = 0;
		for (int c = 0; c < SB_PERIOD; c++) {
			if (sqlite3_column_type(rd, 2 + c) == SQLITE_NULL)
				rows[nr].null |= 1u << c;
			rows[nr].v[c] = sqlite3_column_int64(rd, 2 + c);
		}
		if (!nr || rows[nr].v[SB_TIME_NS] < lo)
			lo = rows[nr].v[SB_TIME_NS];
		if (!nr || rows[nr].v[SB_TIME_NS] > hi)
			hi = rows[nr].v[SB_TIME_NS];
		nr++;
	}
	ret = exec(db, "DROP TABLE samples_v5", e);
out:
	sqlite3_finalize(rd);
	sqlite3_finalize(wr);
	free(rows);
	free(out);
	return ret;
}

/* Decide whether the file is ours, new, foreign or newer; migrate if asked. */
static int db_check_schema(struct db *db, enum db_mode mode, struct error *e)
{
	int64_t app, ver, tables;
	int want = db_schema_version();

	if (pragma_int(db, "PRAGMA application_id", &app, e) ||
	    pragma_int(db, "PRAGMA user_version", &ver, e) ||
	    pragma_int(db, "SELECT count(*) FROM sqlite_master", &tables, e))
		return -1;
	if (app != DB_APPLICATION_ID && (app != 0 || tables != 0))
		return error_set(e, "%s is not a strobe database (it belongs to another "
				 "program): refusing to touch it; choose another file with --db",
				 db->path);
	if (app == 0 && mode == DB_READ)
		return error_set(e, "%s is empty, not a strobe database: record a session "
				 "first (strobe record -- CMD)", db->path);
	if (ver > want)
		return error_set(e, "%s has schema version %lld, newer than this strobe "
				 "(%d): upgrade strobe to read it; the file was not changed",
				 db->path, (long long)ver, want);
	if (mode == DB_WRITE && tables != 0 && quick_check(db, e))	/* not DB_WRITE_TRUSTED */
		return -1;
	/* the raw stack copies' own file (rawstk.h), before any migration:
	 * schema 17 moves them there */
	if (mode != DB_READ && rawstk_attach(db->sql, db->path, e))
		return -1;
	if (ver == want)
		return 0;
	if (mode == DB_READ)
		return error_set(e, "%s has schema version %lld and needs migrating to %d: "
				 "start strobed on it once (strobed --db %s)", db->path,
				 (long long)ver, want, db->path);
	if (exec(db, "BEGIN IMMEDIATE", e))
		return -1;
	for (int v = (int)ver; v < want; v++) {
		char pragma[96];

		/* 17 empties main.raw_stacks: its rows go to DB.stacks first */
		if ((v + 1 == 17 &&
		     exec(db, "INSERT OR REPLACE INTO rawstk.raw_stacks(session_id,sample_row,"
			  "ustack) SELECT session_id,sample_row,ustack FROM main.raw_stacks", e)) ||
		    exec(db, schema_migrations[v], e) ||
		    (v + 1 == 6 && pack_legacy_samples(db, e))) {
			db_rollback(db);
			return error_prefix(e, "migration to schema version %d failed", v + 1);
		}
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version=%d", v + 1);
		if (exec(db, pragma, e)) {
			db_rollback(db);
			return -1;
		}
	}
	{
		char pragma[96];

		snprintf(pragma, sizeof(pragma), "PRAGMA application_id=%d", DB_APPLICATION_ID);
		if (exec(db, pragma, e)) {
			db_rollback(db);
			return -1;
		}
	}
	if (db_commit(db, e))
		return -1;
	/* schema 17 zeroed the raw stacks' pages in the WAL: into the file,
	 * which members read, now (a reader's snapshot may delay it) */
	if (ver < 17 && tables != 0)
		sqlite3_wal_checkpoint_v2(db->sql, "main", SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	return 0;
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

struct db *db_open(const char *path, enum db_mode mode, struct error *e)
{
	return db_open_busy(path, mode, NULL, NULL, e);
}

struct db *db_open_busy(const char *path, enum db_mode mode, int (*busy)(void *, int),
			void *arg, struct error *e)
{
	struct db *db;
	struct stat st;
	int flags, rc;

	if (stat(path, &st) < 0) {
		if (mode == DB_READ || errno != ENOENT) {
			int err = errno;

			error_set(e, "cannot open database %s: %s%s", path, strerror(err),
				  err == ENOENT ? ": record a session first (strobe record -- CMD) "
				  "or choose the file with --db" : err == EACCES ? ": it needs root "
				  "or membership of group 'strobe'" : "");
			return NULL;
		}
		if (db_create_file(path, e))
			return NULL;
	} else if (!S_ISREG(st.st_mode)) {
		error_set(e, "%s is not a regular file: choose a database file with --db", path);
		return NULL;
	} else if (access(path, mode == DB_READ ? R_OK : R_OK | W_OK) < 0 && errno == EACCES) {
		error_set(e, "permission denied on database %s: it needs root or membership "
			  "of group 'strobe' (an administrator can run: usermod -aG strobe USER)",
			  path);
		return NULL;
	}
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
	if (db_check_schema(db, mode, e))
		goto fail;
	if (mode != DB_READ) {
		/* journal_size_limit: a WAL that grew (a long batch, a reader
		 * holding an old snapshot) shrinks back to 64 MiB once
		 * checkpointed and restarted */
		if (exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
			 "PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;"
			 "PRAGMA journal_size_limit=67108864", e))
			goto fail;
		/* Keep -wal and -shm after the daemon closes: readers in group
		 * strobe open read-only and cannot create them in the directory. */
		{
			int one = 1;

			sqlite3_file_control(db->sql, "main", SQLITE_FCNTL_PERSIST_WAL, &one);
		}
		for (int i = 0; i < NR_STMTS; i++) {
			if (sqlite3_prepare_v3(db->sql, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
					       &db->stmt[i], NULL) != SQLITE_OK) {
				sql_error(db, e, "preparing statements");
				goto fail;
			}
		}
	}
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
	blk_reset(db);
	if (db->mode == DB_READ)
		return exec(db, "BEGIN", e);
	if (sqlite3_exec(db->sql, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return sql_error(db, e, "starting a transaction");
	return 0;
}

int db_commit(struct db *db, struct error *e)
{
	if (blk_flush(db, e)) {
		db_rollback(db);
		return -1;
	}
	if (exec(db, "COMMIT", e)) {
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
	blk_reset(db);
	return sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

static int step_done(struct db *db, sqlite3_stmt *st, struct error *e, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_FULL)
		return error_set(e, "%s: disk full while %s: free space (stored data is intact)",
				 db->path, what);
	return sql_error(db, e, what);
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
	if (s && *s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_opt_int(sqlite3_stmt *st, int i, int64_t v)
{
	if (v)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

#define SESSION_COLS "id,name,state,backend,owner_uid,hostname,kernel_release,nr_cpus," \
	"sample_event,sample_freq,sample_period,start_ns,end_ns,wall_offset_ns," \
	"tsc_mult,tsc_shift,tsc_ref,tsc_ref_ns,tsc_source,kernel_binary_id,kallsyms_key," \
	"first_sample,last_sample,samples,lost,throttled,duration_ns,time_bucket_ns," \
	"late_samples,late_records,late_max_ns,cgroup_source,call_graph,attribution"

static void session_bind(sqlite3_stmt *st, const struct db_session *s)
{
	int i = 1;

	sqlite3_bind_int64(st, i++, s->id);
	bind_text_or_null(st, i++, s->name);
	sqlite3_bind_text(st, i++, s->state, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, i++, s->backend, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, i++, s->owner_uid);
	bind_text_or_null(st, i++, s->hostname);
	bind_text_or_null(st, i++, s->kernel_release);
	sqlite3_bind_int64(st, i++, s->nr_cpus);
	sqlite3_bind_text(st, i++, s->sample_event, -1, SQLITE_TRANSIENT);
	bind_opt_int(st, i++, s->sample_freq);
	bind_opt_int(st, i++, s->sample_period);
	sqlite3_bind_int64(st, i++, s->start_ns);
	bind_opt_int(st, i++, s->end_ns);
	sqlite3_bind_int64(st, i++, s->wall_offset_ns);
	sqlite3_bind_int64(st, i++, s->tsc_mult);
	sqlite3_bind_int64(st, i++, s->tsc_shift);
	sqlite3_bind_int64(st, i++, s->tsc_ref);
	sqlite3_bind_int64(st, i++, s->tsc_ref_ns);
	bind_text_or_null(st, i++, s->tsc_source);
	bind_opt_int(st, i++, s->kernel_binary_id);
	bind_text_or_null(st, i++, s->kallsyms_key);
	bind_opt_int(st, i++, s->first_sample);
	bind_opt_int(st, i++, s->last_sample);
	sqlite3_bind_int64(st, i++, s->samples);
	sqlite3_bind_int64(st, i++, s->lost);
	sqlite3_bind_int64(st, i++, s->throttled);
	bind_opt_int(st, i++, s->duration_ns);
	bind_opt_int(st, i++, s->time_bucket_ns);
	if (s->late_samples >= 0)
		sqlite3_bind_int64(st, i++, s->late_samples);
	else
		sqlite3_bind_null(st, i++);
	if (s->late_records >= 0)
		sqlite3_bind_int64(st, i++, s->late_records);
	else
		sqlite3_bind_null(st, i++);
	if (s->late_max_ns >= 0)
		sqlite3_bind_int64(st, i++, s->late_max_ns);
	else
		sqlite3_bind_null(st, i++);
	bind_text_or_null(st, i++, s->cgroup_source[0] ? s->cgroup_source : NULL);
	bind_text_or_null(st, i++, s->call_graph[0] ? s->call_graph : NULL);
	bind_text_or_null(st, i++, s->attribution[0] ? s->attribution : NULL);
}

static int session_write(struct db *db, struct db_session *s, int insert, struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db->sql, "INSERT OR REPLACE INTO sessions(" SESSION_COLS ") "
			       "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,"
			       "?18,?19,?20,?21,?22,?23,?24,?25,?26,?27,?28,?29,?30,?31,?32,?33,?34)", -1, &st, NULL))
		return sql_error(db, e, "storing the session");
	session_bind(st, s);
	if (insert)
		sqlite3_bind_null(st, 1);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_error(db, e, "storing the session");
	if (!insert)
		return 0;
	s->id = sqlite3_last_insert_rowid(db->sql);
	for (int i = 0; i < s->nr_events; i++) {
		const struct db_event *ev = &s->events[i];

		if (sqlite3_prepare_v2(db->sql, "INSERT INTO session_events VALUES(?1,?2,?3,?4,?5,?6,?7)",
				       -1, &st, NULL))
			return sql_error(db, e, "storing the session's events");
		sqlite3_bind_int64(st, 1, s->id);
		sqlite3_bind_int(st, 2, i);
		sqlite3_bind_text(st, 3, ev->name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, ev->type);
		sqlite3_bind_int64(st, 5, (int64_t)ev->config);
		sqlite3_bind_int64(st, 6, (int64_t)ev->config1);
		sqlite3_bind_int64(st, 7, (int64_t)ev->config2);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return sql_error(db, e, "storing the session's events");
	}
	return 0;
}

int db_session_insert(struct db *db, struct db_session *s, struct error *e)
{
	if (db_begin(db, e))
		return -1;
	if (session_write(db, s, 1, e)) {
		db_rollback(db);
		return -1;
	}
	return db_commit(db, e);
}

int db_session_update(struct db *db, const struct db_session *s, struct error *e)
{
	return session_write(db, (struct db_session *)s, 0, e);
}

static void col_text(sqlite3_stmt *st, int i, char *buf, size_t len)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	snprintf(buf, len, "%s", t ? (const char *)t : "");
}

int db_session_get(struct db *db, int64_t id, struct db_session *s, struct error *e)
{
	sqlite3_stmt *st;
	int rc, i = 0;

	memset(s, 0, sizeof(*s));
	if (sqlite3_prepare_v2(db->sql, id ?
			       "SELECT " SESSION_COLS " FROM sessions WHERE id=?1 AND "
			       "state!='deleting'" :
			       "SELECT " SESSION_COLS " FROM sessions WHERE state!='deleting' "
			       "ORDER BY id DESC LIMIT 1",
			       -1, &st, NULL))
		return sql_error(db, e, "reading sessions");
	if (id)
		sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return sql_error(db, e, "reading sessions");
		if (id)
			return error_set(e, "no session %lld in %s: 'strobe sessions' lists them",
					 (long long)id, db->path);
		return error_set(e, "no sessions in %s yet: record one with 'strobe record -- CMD'",
				 db->path);
	}
	s->id = sqlite3_column_int64(st, i++);
	col_text(st, i++, s->name, sizeof(s->name));
	col_text(st, i++, s->state, sizeof(s->state));
	col_text(st, i++, s->backend, sizeof(s->backend));
	s->owner_uid = sqlite3_column_int64(st, i++);
	col_text(st, i++, s->hostname, sizeof(s->hostname));
	col_text(st, i++, s->kernel_release, sizeof(s->kernel_release));
	s->nr_cpus = sqlite3_column_int64(st, i++);
	col_text(st, i++, s->sample_event, sizeof(s->sample_event));
	s->sample_freq = sqlite3_column_int64(st, i++);
	s->sample_period = sqlite3_column_int64(st, i++);
	s->start_ns = sqlite3_column_int64(st, i++);
	s->end_ns = sqlite3_column_int64(st, i++);
	s->wall_offset_ns = sqlite3_column_int64(st, i++);
	s->tsc_mult = sqlite3_column_int64(st, i++);
	s->tsc_shift = sqlite3_column_int64(st, i++);
	s->tsc_ref = sqlite3_column_int64(st, i++);
	s->tsc_ref_ns = sqlite3_column_int64(st, i++);
	col_text(st, i++, s->tsc_source, sizeof(s->tsc_source));
	s->kernel_binary_id = sqlite3_column_int64(st, i++);
	col_text(st, i++, s->kallsyms_key, sizeof(s->kallsyms_key));
	s->first_sample = sqlite3_column_int64(st, i++);
	s->last_sample = sqlite3_column_int64(st, i++);
	s->samples = sqlite3_column_int64(st, i++);
	s->lost = sqlite3_column_int64(st, i++);
	s->throttled = sqlite3_column_int64(st, i++);
	s->duration_ns = sqlite3_column_int64(st, i++);
	s->time_bucket_ns = sqlite3_column_int64(st, i++);
	s->late_samples = sqlite3_column_type(st, i) == SQLITE_NULL ? -1 :
			  sqlite3_column_int64(st, i);
	i++;
	s->late_records = sqlite3_column_type(st, i) == SQLITE_NULL ? -1 :
			  sqlite3_column_int64(st, i);
	i++;
	s->late_max_ns = sqlite3_column_type(st, i) == SQLITE_NULL ? -1 :
			 sqlite3_column_int64(st, i);
	i++;
	col_text(st, i++, s->cgroup_source, sizeof(s->cgroup_source));
	col_text(st, i++, s->call_graph, sizeof(s->call_graph));
	col_text(st, i++, s->attribution, sizeof(s->attribution));
	sqlite3_finalize(st);

	if (sqlite3_prepare_v2(db->sql, "SELECT idx,name,type,config,config1,config2 FROM "
			       "session_events WHERE session_id=?1 ORDER BY idx", -1, &st, NULL))
		return sql_error(db, e, "reading session events");
	sqlite3_bind_int64(st, 1, s->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int idx = sqlite3_column_int(st, 0);
		struct db_event *ev;

		if (idx < 0 || idx >= STROBE_MAX_COUNTERS)
			continue;
		ev = &s->events[idx];
		col_text(st, 1, ev->name, sizeof(ev->name));
		ev->type = sqlite3_column_int64(st, 2);
		ev->config = sqlite3_column_int64(st, 3);
		ev->config1 = sqlite3_column_int64(st, 4);
		ev->config2 = sqlite3_column_int64(st, 5);
		if (idx + 1 > s->nr_events)
			s->nr_events = idx + 1;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sql_error(db, e, "reading session events");
}

int db_session_max_id(struct db *db, int64_t *id, struct error *e)
{
	return pragma_int(db, "SELECT coalesce(max(id),0) FROM sessions", id, e);
}

int db_session_complete(const struct db_session *s)
{
	return !strcmp(s->state, "done") || !strcmp(s->state, "interrupted");
}

static void bind_counters(sqlite3_stmt *st, int first, int nr, const uint64_t *c)
{
	for (int i = 0; i < STROBE_MAX_COUNTERS; i++) {
		if (i < nr)
			sqlite3_bind_int64(st, first + i, (int64_t)c[i]);
		else
			sqlite3_bind_null(st, first + i);
	}
}

/* Pack the open transaction's pending samples into one sample_blocks row. */
static int blk_flush(struct db *db, struct error *e)
{
	size_t nr = db->blk_nr;

	if (!nr)
		return 0;
	db->blk_nr = 0;
	return block_write(db, db->stmt[STMT_SAMPLE], db->next_row - (int64_t)nr,
			   db->blk_session, db->blk, nr, db->blk_min, db->blk_max, db->blk_out, e);
}

/* A new transaction, or one rolled back: nothing pending, rowids unknown. */
static void blk_reset(struct db *db)
{
	db->blk_nr = 0;
	db->next_row = 0;
}

int64_t db_sample_insert(struct db *db, const struct db_sample *s, struct error *e)
{
	struct sampleblk_row *r;

	if (!db->next_row) {
		sqlite3_stmt *st = db->stmt[STMT_NEXT_ROW];
		int rc = sqlite3_step(st);

		db->next_row = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
		sqlite3_reset(st);
		if (rc != SQLITE_ROW)
			return sql_error(db, e, "finding the next sample's rowid");
	}
	if (db->blk_nr && (db->blk_nr == SAMPLEBLK_MAX || db->blk_session != s->session_id) &&
	    blk_flush(db, e))
		return -1;
	if (!db->blk) {
		db->blk = xmalloc(SAMPLEBLK_MAX * sizeof(*db->blk));
		db->blk_out = xmalloc(sampleblk_bound(SAMPLEBLK_MAX));
	}
	r = &db->blk[db->blk_nr];
	r->v[SB_TIME_NS] = (int64_t)s->time_ns;
	r->v[SB_TSC] = (int64_t)s->tsc;
	r->v[SB_CPU] = s->cpu;
	r->v[SB_PID] = s->pid;
	r->v[SB_TID] = s->tid;
	r->v[SB_COMM_ID] = s->comm_id;
	r->v[SB_BINARY_ID] = s->binary_id;
	r->v[SB_OFFSET] = (int64_t)s->offset;
	r->v[SB_FLAGS] = s->flags;
	for (int i = 0; i < STROBE_MAX_COUNTERS; i++)
		r->v[SB_C0 + i] = i < s->nr ? (int64_t)s->c[i] : 0;
	/* the counter columns past the session's events are NULL */
	r->null = (((1u << STROBE_MAX_COUNTERS) - 1) << (SB_C0 + s->nr)) &
		  (((1u << STROBE_MAX_COUNTERS) - 1) << SB_C0);
	r->v[SB_PERIOD] = (int64_t)s->period;
	if (!s->period)
		r->null |= 1u << SB_PERIOD;	/* unknown */
	r->v[SB_STACK] = s->stack_id;
	if (!s->stack_id)
		r->null |= 1u << SB_STACK;	/* none */
	if (!db->blk_nr) {
		db->blk_session = s->session_id;
		db->blk_min = db->blk_max = (int64_t)s->time_ns;
	} else {
		db->blk_min = MIN(db->blk_min, (int64_t)s->time_ns);
		db->blk_max = MAX(db->blk_max, (int64_t)s->time_ns);
	}
	db->blk_nr++;
	return db->next_row++;
}

int db_agg_add(struct db *db, int64_t session_id, int nr, const struct db_agg *a,
	       struct error *e)
{
	sqlite3_stmt *st = db->stmt[STMT_AGG];

	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int64(st, 2, a->binary_id);
	sqlite3_bind_int64(st, 3, (int64_t)a->offset);
	sqlite3_bind_int(st, 4, a->pid);
	sqlite3_bind_int64(st, 5, a->comm_id);
	sqlite3_bind_int(st, 6, a->flags);
	sqlite3_bind_int64(st, 7, (int64_t)a->samples);
	bind_counters(st, 8, nr, a->c);
	if (a->period_unknown)
		sqlite3_bind_null(st, 16);	/* a NULL sum stays NULL */
	else
		sqlite3_bind_int64(st, 16, (int64_t)a->period);
	sqlite3_bind_int64(st, 17, (int64_t)a->start_ns);
	return step_done(db, st, e, "storing the session histogram");
}

int db_time_agg_add(struct db *db, int64_t session_id, int nr, const struct db_time_agg *a,
		    struct error *e)
{
	sqlite3_stmt *st = db->stmt[STMT_TIME_AGG];

	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int64(st, 2, a->bucket);
	sqlite3_bind_int(st, 3, a->cpu);
	sqlite3_bind_int(st, 4, a->pid);
	sqlite3_bind_int64(st, 5, a->comm_id);
	sqlite3_bind_int64(st, 6, a->binary_id);
	sqlite3_bind_int64(st, 7, (int64_t)a->samples);
	sqlite3_bind_int64(st, 8, a->last_row);
	sqlite3_bind_int64(st, 9, a->min_ns);
	sqlite3_bind_int64(st, 10, a->max_ns);
	bind_counters(st, 11, nr, a->c);
	sqlite3_bind_int64(st, 19, (int64_t)a->start_ns);
	return step_done(db, st, e, "storing the session's time sums");
}

int db_stack_insert(struct db *db, int64_t session_id, int64_t id, int64_t hash, uint32_t nr,
		    uint32_t flags, const void *frames, struct error *e)
{
	sqlite3_stmt *st = db->stmt[STMT_STACK];

	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int64(st, 2, id);
	sqlite3_bind_int64(st, 3, hash);
	sqlite3_bind_int64(st, 4, nr);
	sqlite3_bind_int64(st, 5, flags);
	sqlite3_bind_blob(st, 6, frames, (int)(nr * 16u), SQLITE_STATIC);
	return step_done(db, st, e, "storing a call stack");
}

int db_stack_agg_add(struct db *db, int64_t session_id, int nr, const struct db_stack_agg *a,
		     struct error *e)
{
	sqlite3_stmt *st = db->stmt[STMT_STACK_AGG];

	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int64(st, 2, a->stack_id);
	sqlite3_bind_int64(st, 3, a->pid);
	sqlite3_bind_int64(st, 4, a->comm_id);
	sqlite3_bind_int64(st, 5, (int64_t)a->start_ns);
	sqlite3_bind_int64(st, 6, (int64_t)a->samples);
	if (a->period_unknown)
		sqlite3_bind_null(st, 7);	/* a NULL sum stays NULL */
	else
		sqlite3_bind_int64(st, 7, (int64_t)a->period);
	bind_counters(st, 8, nr, a->c);
	return step_done(db, st, e, "storing the session's stack histogram");
}

int db_unwind_error_add(struct db *db, int64_t session_id, int64_t binary_id,
			const char *reason, uint64_t count, struct error *e)
{
	for (int i = STMT_UNWIND_ERR_SET; i <= STMT_UNWIND_ERR_ADD; i++) {
		sqlite3_stmt *st = db->stmt[i];

		sqlite3_bind_int64(st, 1, session_id);
		if (binary_id)
			sqlite3_bind_int64(st, 2, binary_id);
		else
			sqlite3_bind_null(st, 2);
		sqlite3_bind_text(st, 3, reason, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, (int64_t)count);
		if (step_done(db, st, e, "storing unwinding failures") < 0)
			return -1;
		if (sqlite3_changes(db->sql))
			return 0;	/* the row was there: added to */
	}
	return 0;
}

int db_raw_stack_insert(struct db *db, int64_t session_id, int64_t rowid, const void *ustack,
			size_t len, struct error *e)
{
	sqlite3_stmt *st = db->stmt[STMT_RAW_STACK];

	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int64(st, 2, rowid);
	sqlite3_bind_blob(st, 3, ustack, (int)len, SQLITE_STATIC);
	return step_done(db, st, e, "storing a raw user stack");
}

int db_lost_insert(struct db *db, int64_t session_id, uint32_t cpu, uint64_t time_ns,
		   uint64_t count, const char *kind, struct error *e)
{
	sqlite3_stmt *st = db->stmt[STMT_LOST];

	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int(st, 2, cpu);
	sqlite3_bind_int64(st, 3, (int64_t)time_ns);
	sqlite3_bind_int64(st, 4, (int64_t)count);
	sqlite3_bind_text(st, 5, kind, -1, SQLITE_STATIC);
	return step_done(db, st, e, "storing lost counts");
}

int db_unscheduled_insert(struct db *db, int64_t session_id, uint32_t cpu, uint64_t end_ns,
			  uint64_t enabled_ns, uint64_t running_ns, const char *kind,
			  struct error *e)
{
	sqlite3_stmt *st = db->stmt[STMT_UNSCHED];

	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int(st, 2, cpu);
	sqlite3_bind_int64(st, 3, (int64_t)(end_ns - enabled_ns));
	sqlite3_bind_int64(st, 4, (int64_t)end_ns);
	sqlite3_bind_int64(st, 5, (int64_t)enabled_ns);
	sqlite3_bind_int64(st, 6, (int64_t)running_ns);
	sqlite3_bind_text(st, 7, kind, -1, SQLITE_STATIC);
	return step_done(db, st, e, "storing when a sampling group was not counting");
}

int db_marker_insert(struct db *db, int64_t session_id, const struct db_marker *m,
		     struct error *e)
{
	sqlite3_stmt *st = db->stmt[STMT_MARKER];

	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int64(st, 2, (int64_t)m->time_ns);
	if (m->cpu >= 0)
		sqlite3_bind_int(st, 3, m->cpu);
	else
		sqlite3_bind_null(st, 3);
	if (m->pid >= 0)
		sqlite3_bind_int64(st, 4, m->pid);
	else
		sqlite3_bind_null(st, 4);
	if (m->tid >= 0)
		sqlite3_bind_int64(st, 5, m->tid);
	else
		sqlite3_bind_null(st, 5);
	sqlite3_bind_text(st, 6, m->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, m->name, -1, SQLITE_STATIC);
	if (m->args)
		sqlite3_bind_text(st, 8, m->args, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 8);
	return step_done(db, st, e, "storing a marker");
}

int db_probe_insert(struct db *db, int64_t session_id, const struct db_probe *p,
		    struct error *e)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db->sql, "INSERT INTO session_probes(session_id,spec,binary_key,"
			       "offset,semaphore,nargs,arg_spec) VALUES(?1,?2,?3,?4,?5,?6,?7)",
			       -1, &st, NULL))
		return db_sql_error(db, e, "storing the session's probes");
	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_text(st, 2, p->spec, -1, SQLITE_STATIC);
	if (p->binary_key)
		sqlite3_bind_text(st, 3, p->binary_key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, (int64_t)p->offset);
	if (p->semaphore >= 0)
		sqlite3_bind_int64(st, 5, p->semaphore);
	sqlite3_bind_int(st, 6, p->nargs);
	sqlite3_bind_text(st, 7, p->arg_spec, -1, SQLITE_STATIC);
	if (step_done(db, st, e, "storing the session's probes") < 0) {
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

int db_cpu_stats_put(struct db *db, int64_t session_id, int nr,
		     const struct db_cpu_stats *cs, struct error *e)
{
	sqlite3_stmt *st = db->stmt[STMT_CPU];

	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int(st, 2, cs->cpu);
	sqlite3_bind_int64(st, 3, (int64_t)cs->samples);
	sqlite3_bind_int64(st, 4, (int64_t)cs->lost);
	bind_counters(st, 5, nr, cs->tail);
	bind_counters(st, 13, nr, cs->lost_inc);
	return step_done(db, st, e, "storing CPU statistics");
}

static int64_t find_id(struct db *db, sqlite3_stmt *st, const char *key, const char *key2)
{
	int64_t id = 0;

	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (key2)
		sqlite3_bind_text(st, 2, key2, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return id;
}

int64_t db_binary_intern(struct db *db, const char *key, const char *path,
			 int64_t size, int cached, const char *problem, struct error *e)
{
	int64_t id = find_id(db, db->stmt[STMT_BINARY_FIND], key, path);
	sqlite3_stmt *st = db->stmt[id ? STMT_BINARY_SET : STMT_BINARY_ADD];

	if (id)
		sqlite3_bind_int64(st, 1, id);
	else
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	bind_opt_int(st, 3, size);
	sqlite3_bind_int(st, 4, cached);
	bind_text_or_null(st, 5, problem);
	if (step_done(db, st, e, "storing a binary"))
		return -1;
	return id ? id : sqlite3_last_insert_rowid(db->sql);
}

int db_binary_get(struct db *db, int64_t id, struct db_binary *b, struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	memset(b, 0, sizeof(*b));
	if (sqlite3_prepare_v2(db->sql, "SELECT id,key,path,size,cached,problem,note FROM binaries "
			       "WHERE id=?1", -1, &st, NULL))
		return sql_error(db, e, "reading binaries");
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		b->id = sqlite3_column_int64(st, 0);
		col_text(st, 1, b->key, sizeof(b->key));
		col_text(st, 2, b->path, sizeof(b->path));
		b->size = sqlite3_column_int64(st, 3);
		b->cached = sqlite3_column_int(st, 4);
		col_text(st, 5, b->problem, sizeof(b->problem));
		col_text(st, 6, b->note, sizeof(b->note));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return error_set(e, "%s: no binary %lld", db->path, (long long)id);
	return 0;
}

int db_binary_note(struct db *db, int64_t id, const char *note, struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db->sql, "UPDATE binaries SET note=?2 WHERE id=?1", -1, &st, NULL))
		return sql_error(db, e, "noting a binary");
	sqlite3_bind_int64(st, 1, id);
	bind_text_or_null(st, 2, note);
	rc = step_done(db, st, e, "noting a binary");
	sqlite3_finalize(st);
	return rc ? -1 : 0;
}

int db_jit_map_put(struct db *db, int64_t session_id, uint32_t pid, uint64_t start_ns,
		   const char *path, uint64_t symbols, uint64_t dropped,
		   const char *problem, struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db->sql, "INSERT INTO jit_maps(session_id,pid,start_ns,path,"
			       "symbols,dropped,problem) VALUES(?1,?2,?3,?4,?5,?6,?7)",
			       -1, &st, NULL))
		return sql_error(db, e, "storing a perf map");
	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int64(st, 2, pid);
	sqlite3_bind_int64(st, 3, (int64_t)start_ns);
	sqlite3_bind_text(st, 4, path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, (int64_t)symbols);
	sqlite3_bind_int64(st, 6, (int64_t)dropped);
	bind_text_or_null(st, 7, problem);
	rc = step_done(db, st, e, "storing a perf map");
	sqlite3_finalize(st);
	return rc ? -1 : 0;
}

int db_jit_symbols_put(struct db *db, int64_t session_id, uint32_t pid, uint64_t start_ns,
		       const struct jitmap *m, struct error *e)
{
	sqlite3_stmt *st;
	int rc = 0;

	if (sqlite3_prepare_v2(db->sql, "INSERT INTO jit_symbols(session_id,pid,start_ns,seq,"
			       "addr,size,name,load_ns) VALUES(?1,?2,?3,?4,?5,?6,?7,?8)", -1,
			       &st, NULL))
		return sql_error(db, e, "storing perf map symbols");
	for (size_t i = 0; i < m->nr && !rc; i++) {
		sqlite3_bind_int64(st, 1, session_id);
		sqlite3_bind_int64(st, 2, pid);
		sqlite3_bind_int64(st, 3, (int64_t)start_ns);
		sqlite3_bind_int64(st, 4, (int64_t)i);
		sqlite3_bind_int64(st, 5, (int64_t)m->syms[i].start);
		sqlite3_bind_int64(st, 6, (int64_t)m->syms[i].size);
		sqlite3_bind_text(st, 7, m->syms[i].name, -1, SQLITE_STATIC);
		if (m->syms[i].load_ns)
			sqlite3_bind_int64(st, 8, (int64_t)m->syms[i].load_ns);
		else
			sqlite3_bind_null(st, 8);
		rc = step_done(db, st, e, "storing perf map symbols");
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc ? -1 : 0;
}

int64_t db_comm_intern(struct db *db, const char *name, struct error *e)
{
	int64_t id = find_id(db, db->stmt[STMT_COMM_FIND], name, NULL);
	sqlite3_stmt *st = db->stmt[STMT_COMM_ADD];

	if (id)
		return id;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (step_done(db, st, e, "storing a command name"))
		return -1;
	return sqlite3_last_insert_rowid(db->sql);
}

int db_process_put(struct db *db, int64_t session_id, uint32_t pid, uint32_t ppid,
		   int64_t comm_id, uint64_t start_ns, uint64_t exit_ns, struct error *e)
{
	return db_process_put_uncertain(db, session_id, pid, ppid, comm_id, start_ns, exit_ns,
					0, e);
}

int db_process_put_uncertain(struct db *db, int64_t session_id, uint32_t pid, uint32_t ppid,
			     int64_t comm_id, uint64_t start_ns, uint64_t exit_ns,
			     uint64_t uncertain_ns, struct error *e)
{
	sqlite3_stmt *st = db->stmt[STMT_PROCESS];

	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int(st, 2, pid);
	bind_opt_int(st, 3, ppid);
	bind_opt_int(st, 4, comm_id);
	sqlite3_bind_int64(st, 5, (int64_t)start_ns);
	bind_opt_int(st, 6, (int64_t)exit_ns);
	bind_opt_int(st, 7, (int64_t)uncertain_ns);
	return step_done(db, st, e, "storing a process");
}

/* one statement, prepared for a rare write */
static int exec_bound(struct db *db, const char *sql, struct error *e, const char *what,
		      int64_t a, int64_t b, int64_t c, int64_t d, const char *text)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL))
		return sql_error(db, e, what);
	sqlite3_bind_int64(st, 1, a);
	sqlite3_bind_int64(st, 2, b);
	sqlite3_bind_int64(st, 3, c);
	sqlite3_bind_int64(st, 4, d);
	if (text)
		sqlite3_bind_text(st, 5, text, -1, SQLITE_STATIC);
	rc = step_done(db, st, e, what);
	sqlite3_finalize(st);
	return rc ? -1 : 0;
}

int db_session_set_call_graph(struct db *db, int64_t id, const char *call_graph,
			      struct error *e)
{
	return exec_bound(db, "UPDATE sessions SET call_graph=?5 WHERE id=?1", e,
			  "storing the session's call graph mode", id, 0, 0, 0, call_graph);
}

int db_cgroup_put(struct db *db, int64_t session_id, uint64_t id, const char *path,
		  struct error *e)
{
	return exec_bound(db, "INSERT OR REPLACE INTO cgroups(session_id,id,path) "
			  "VALUES(?1,?2,?5)", e, "storing a cgroup", session_id,
			  (int64_t)id, 0, 0, path);
}

int db_process_cgroup(struct db *db, int64_t session_id, uint32_t pid, uint64_t start_ns,
		      uint64_t cgroup_id, uint64_t moves, struct error *e)
{
	return exec_bound(db, "UPDATE processes SET cgroup_id=nullif(?4,0) "
			  "WHERE session_id=?1 AND pid=?2 AND "
			  "start_ns=?3", e, "storing a process's cgroup", session_id, pid,
			  (int64_t)start_ns, (int64_t)cgroup_id, NULL) < 0 ? -1 :
	       moves ? exec_bound(db, "UPDATE processes SET cgroup_moves=?4 WHERE "
				  "session_id=?1 AND pid=?2 AND start_ns=?3", e,
				  "storing a process's cgroup", session_id, pid,
				  (int64_t)start_ns, (int64_t)moves, NULL) : 0;
}
