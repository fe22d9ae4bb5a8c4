/*
 * db_int.h - what the files of the database (db.h) share: struct db, the
 * ingest path's prepared statements, and the helpers that bind, step and
 * read them.  Not for use outside lib/store's db*.c.
 *
 * The files, one concern each:
 *   db.c         the connection: db_open (the file, its mode and group,
 *                the pragmas), db_close, errors, the busy wait,
 *                transactions, and the statements prepared once at open;
 *   dbschema.c   the schema: is the file ours, new, foreign or newer, the
 *                whole-file check, and the migrations (schema/NNN-*.sql);
 *   dbsession.c  the rows of sessions and session_events;
 *   dbsample.c   samples packed into sample_blocks, the histograms
 *                (sample_agg, sample_time, stack_agg), stacks, raw stack
 *                copies and unwinding failures;
 *   dbrefs.c     the rows samples refer to: binaries, comms, processes,
 *                cgroups, and the JIT maps of processes;
 *   dbrecords.c  the session's other records: lost counts, unscheduled
 *                intervals, markers, probe sites, per-CPU totals.
 */
#ifndef STROBE_DB_INT_H
#define STROBE_DB_INT_H

#include <stdio.h>
#include "db.h"
#include "sampleblk.h"
#include "samplevt.h"

/* The ingest path's statements, prepared once by db_open on a connection
 * that writes (their SQL: db_stmt_sql, db.c). */
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

extern const char *const db_stmt_sql[NR_STMTS];

struct db {
	sqlite3 *sql;
	char *path;
	enum db_mode mode;
	int (*busy)(void *, int);	/* db_open_busy's */
	void *busy_arg;
	sqlite3_stmt *stmt[NR_STMTS];
	/* the open transaction's samples not yet packed into a block
	 * (dbsample.c) */
	struct sampleblk_row *blk;	/* SAMPLEBLK_MAX rows */
	uint8_t *blk_out;		/* sampleblk_bound(SAMPLEBLK_MAX) bytes */
	size_t blk_nr;
	int64_t blk_session, blk_min, blk_max;
	int64_t next_row;		/* rowid of the next sample; 0: not read yet */
	struct progress *progress;	/* db_set_progress()'s */
	struct samplevt_hook hook;	/* the samples table's, to it */
};

/* db.c: run sql (no rows), e = the path and SQLite's message. */
int db_exec(struct db *db, const char *sql, struct error *e);
/* db.c: *v = the first column of sql's first row.  While the database is
 * being opened, a lock another connection holds is waited for as db's busy
 * handler says. */
int db_pragma_int(struct db *db, const char *sql, int64_t *v, struct error *e);
/* db.c: step st once and reset it; e names what (db_sql_error). */
int db_step_done(struct db *db, sqlite3_stmt *st, struct error *e, const char *what);
/* db.c: one statement prepared for a rare write, ?1..?4 bound to a..d and
 * ?5 to text (NULL: left NULL). */
int db_exec_bound(struct db *db, const char *sql, struct error *e, const char *what,
		  int64_t a, int64_t b, int64_t c, int64_t d, const char *text);

/* dbschema.c: decide whether the file is ours, new, foreign or newer;
 * check it whole (DB_WRITE), attach DB.stacks and migrate (not DB_READ). */
int db_check_schema(struct db *db, enum db_mode mode, struct error *e);

/* dbsample.c: rows[0..nr) as the sample_blocks row of first (st: its
 * INSERT, db_stmt_sql[STMT_SAMPLE]), their times between lo and hi; out
 * has room for sampleblk_bound(nr). */
int db_block_write(struct db *db, sqlite3_stmt *st, int64_t first, int64_t session,
		   const struct sampleblk_row *rows, size_t nr, int64_t lo, int64_t hi,
		   uint8_t *out, struct error *e);
/* dbsample.c: pack the open transaction's pending samples into one
 * sample_blocks row (db_commit); forget them, and the next rowid, when a
 * transaction begins or is rolled back (db_begin, db_rollback). */
int db_blk_flush(struct db *db, struct error *e);
void db_blk_reset(struct db *db);

/* text, NULL when s is NULL or "" */
static inline void db_bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
	if (s && *s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* v, NULL when 0 */
static inline void db_bind_opt_int(sqlite3_stmt *st, int i, int64_t v)
{
	if (v)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

/* v, NULL when negative (-1: unknown, none) */
static inline void db_bind_known(sqlite3_stmt *st, int i, int64_t v)
{
	if (v >= 0)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

/* The counter columns first.. of a row: nr of c, the rest NULL. */
static inline void db_bind_counters(sqlite3_stmt *st, int first, int nr, const uint64_t *c)
{
	for (int i = 0; i < STROBE_MAX_COUNTERS; i++) {
		if (i < nr)
			sqlite3_bind_int64(st, first + i, (int64_t)c[i]);
		else
			sqlite3_bind_null(st, first + i);
	}
}

/* Column i as text into buf ("" when NULL). */
static inline void db_col_text(sqlite3_stmt *st, int i, char *buf, size_t len)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	snprintf(buf, len, "%s", t ? (const char *)t : "");
}

/* Column i, -1 when NULL (the inverse of db_bind_known). */
static inline int64_t db_col_known(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, i);
}

#endif
