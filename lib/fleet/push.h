/*
 * push.h - 'strobe push': a host's sessions from its SQLite database into
 * the ClickHouse tables of schema/clickhouse/ (doc/FLEET.md).
 *
 * A session goes as numbered batches, each one INSERT of at most
 * max_insert_block_size rows of one table, one host (so one shard) and one
 * UTC day (so one partition): ClickHouse writes such an INSERT as one part,
 * all or nothing.  Batch 0 is the session's row, with the number of
 * batches and a content hash (XXH3-128 of every other batch); then its
 * processes, markers, lost records, samples, binaries, and the samples
 * summed per location and per 100 ms (schema 2's samples_by_loc and
 * samples_by_time, computed here from the same rows).  Symbols of the
 * sampled locations go to a ReplacingMergeTree table keyed by binary key
 * and offset, outside the numbering: sending them twice is harmless.
 *
 * The rows of a session are generated twice, the same way: once to count
 * and hash them, once to send the batches the server does not have yet
 * (asked with one query per session).  A push interrupted anywhere is
 * resumed by pushing again; a session already there with another content
 * hash is refused before anything is sent.
 *
 * strobed --push also pushes running sessions in intervals (schema 3,
 * pushplan.c): each a range of the session's sample rowids as a range of
 * its batch numbers, with a row in table intervals that is the plan of
 * those batches; the push of the stopped session follows them.
 *
 * The files: push.c runs a push (the sessions, each one's plan, its two
 * passes); pushgen.c makes the rows (pushgen.h, inside lib/fleet only),
 * reagg.c the aggregates, pushsym.c the symbols; pushstate.c asks the
 * server what it has.  Each of the pure parts below names its file.
 */
#ifndef STROBE_PUSH_H
#define STROBE_PUSH_H

#include <stddef.h>
#include <stdint.h>
#include "util.h"

struct db;
struct chclient;
struct progress;
struct sbuf;

#define PUSH_SCHEMA_VERSION	3
/* Rows of a batch by default, and at most (ClickHouse's default
 * max_insert_block_size; the server's own value caps it further). */
#define PUSH_BATCH_ROWS		65536
#define PUSH_BATCH_MAX		1048576

struct push_opts {
	const char *host;		/* the host column */
	const int64_t *sessions;	/* these (nsessions > 0), else all stopped ones */
	size_t nsessions;
	int has_since;
	int64_t since_wall_ns;		/* sessions started at or after (CLOCK_REALTIME) */
	size_t batch_rows;		/* 0: PUSH_BATCH_ROWS */
	/* strobed --push: a running session of sessions[] gets its next
	 * interval (what was committed since the last one), not refused;
	 * one neither running nor stopped whole (aborted) is left out */
	int intervals;
	/* name code in a symbol worker (symworker.h) without privileges
	 * instead of parsing binaries in this process: strobed, as root */
	int parse_in_worker;
	struct progress *progress;	/* NULL: none */
	/* called after each session with a line for the user (no newline) */
	void (*note)(void *arg, const char *line);
	void *note_arg;
};

struct push_stats {
	uint64_t sessions, sessions_sent;
	uint64_t batches, batches_sent, rows_sent;
	uint64_t intervals_sent;	/* interval rows */
	/* with parse_in_worker: workers started, crashed (or answering
	 * garbage) and killed after the timeout, binaries whose names that
	 * cost (their locations read [binary unavailable]), and the first
	 * of those by path */
	unsigned worker_started, worker_crashes, worker_timeouts, worker_failed;
	char worker_failed_names[256];
};

/* Check the server's schema version (one line naming both when it is not
 * PUSH_SCHEMA_VERSION).  0, or -1 with e set. */
int push_check_schema(struct chclient *c, struct error *e);

/* Push the sessions of o from db to c.  0, or -1 with e set (what was
 * sent before stays: pushing again resumes). */
int push_run(struct db *db, struct chclient *c, const struct push_opts *o,
	     struct push_stats *st, struct error *e);

/* -- the pure parts, for the unit tests -- */

/* tsv.c: append s to b as a TabSeparated field: backslash, tab, newline,
 * carriage return, NUL-free; \b \f \0 ' escaped as ClickHouse reads them. */
void push_tsv_escape(struct sbuf *b, const char *s);
/* Append s as a ClickHouse string literal '...'. */
void push_sql_quote(struct sbuf *b, const char *s);
/* Append v in decimal, then sep unless it is 0. */
void push_tsv_i64(struct sbuf *b, int64_t v, char sep);
void push_tsv_u64(struct sbuf *b, uint64_t v, char sep);

/* calendar.c: UTC day number (days since 1970-01-01) of a wall time in
 * ns, and its date as "YYYY-MM-DD" (clamped to ClickHouse's Date,
 * 1970-01-01 to 2105-12-31); the day number of a date y-m-d (proleptic
 * Gregorian, any year: the inverse of push_day_str() within its range). */
int64_t push_day(int64_t wall_ns);
void push_day_str(int64_t day, char out[11]);
int64_t push_day_of_date(int64_t y, int64_t m, int64_t d);

/* pushgen.c: cutting rows into batches: a batch ends after max rows, or
 * before a row of another day. */
struct push_batcher {
	size_t max, rows;
	int64_t day;
	uint32_t batch;		/* the number of the batch being filled */
};
void push_batcher_init(struct push_batcher *b, size_t max, uint32_t first);
/* A row of day is next: 1 when the batch being filled must be sent first
 * (and b moves to the next number), 0 when the row joins it. */
int push_batcher_row(struct push_batcher *b, int64_t day);
/* The end of a table: 1 when a batch is left to send (b moves on). */
int push_batcher_end(struct push_batcher *b);

/* reagg.c: the 100 ms bucket of samples_by_time of a time since the
 * session's start in ns (time_ns - start_ns, as the local sample_time's
 * buckets): t rounded down (towards minus infinity) to a multiple of
 * PUSH_BUCKET_NS. */
#define PUSH_BUCKET_NS		100000000LL
int64_t push_bucket_ns(int64_t t);

/* pushstate.c: parse the server's answer to the batches query (one
 * number a line) into have[0..n): have[i] = 1 for each batch i listed.
 * -1 on a malformed line or a number >= n. */
int push_parse_batches(const char *text, uint8_t *have, size_t n);

/*
 * pushplan.c: intervals (schema 3): interval k of a running session is
 * its sample rows with rowids first_row..last_row, as batches
 * first_batch .. first_batch + batches - 1.  Interval 1 starts at batch
 * 1, each next one where the one before ends, in rowids and in batches.
 */
struct push_interval {
	uint32_t k;
	int64_t first_row, last_row;
	uint32_t first_batch, batches;
	size_t batch_rows;
	uint64_t samples, samples_total;
	char hash[33];
};
/* Parse the server's rows (k, first_row, last_row, first_batch, batches,
 * batch_rows, samples, samples_total, content_hash; TSV, any order, a row
 * stored twice counted once) into *iv (malloc'ed, by k) and check that
 * they follow each other.  0, or -1 with e set. */
int push_parse_intervals(const char *text, struct push_interval **iv, size_t *n,
			 struct error *e);
/* Where what follows intervals iv[0..n) starts: the rowid (lo, the
 * session's first, when there is no interval) and the batch number. */
void push_plan_next(const struct push_interval *iv, size_t n, int64_t lo, int64_t *row,
		    uint32_t *batch);
/* The next interval when cut (the newest committed rowid of the session)
 * is past the plan: 1 and *out (k, rows, first_batch, samples_total of the
 * ones before), else 0. */
int push_plan_cut(const struct push_interval *iv, size_t n, int64_t lo, int64_t cut,
		  struct push_interval *out);

#endif
