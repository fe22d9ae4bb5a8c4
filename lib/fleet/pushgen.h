/*
 * pushgen.h - a session's rows as push makes them, inside lib/fleet's
 * push files only (push.h is the API): the state of one push (struct
 * gen), the batch being filled of one table, and the generator's parts:
 * pushgen.c (the batches of a part of the plan, the rows of tables
 * sessions and intervals, the database read), reagg.c (the aggregates),
 * pushsym.c (the symbols the fleet lacks).  push.c runs the passes.
 */
#ifndef STROBE_PUSHGEN_H
#define STROBE_PUSHGEN_H

#include <stddef.h>
#include <stdint.h>
#include <xxhash.h>
#include "otable.h"
#include "push.h"
#include "reagg.h"

struct chclient;
struct db;
struct db_session;
struct progress;
struct resolver;
struct symworker;

/* A sampled location and its names (g->locs, keyed by binary_id and
 * offset: no padding, otable.h). */
struct loc {
	int64_t binary_id;
	uint64_t offset;
	const char *key, *binary, *symbol;	/* the resolver's; symbol:
						 * NULL until pushsym.c names it */
};

struct gen;
/* A batch ready: rows of table (cols) as TSV, numbered batch.  0 or -1
 * with e set. */
typedef int (*emit_fn)(struct gen *g, uint32_t batch, const char *table, const char *cols,
		       const struct sbuf *rows, struct error *e);

/* The state of a push: of the session g->s while it is pushed, and what
 * its sessions share (comms, the tables, the symbol worker). */
struct gen {
	struct db *db;
	struct db_session *s;		/* re-read at the cut of a running session */
	const char *host;
	int64_t start_day;
	size_t batch_rows;		/* this session's */
	size_t default_rows;		/* a new session's */
	struct resolver *res;
	struct symworker *worker;	/* o->parse_in_worker; NULL: parse here */
	char **comms;			/* by comms.id */
	size_t ncomms;
	struct otable locs;		/* struct loc: those of the part */
	struct reagg agg;		/* its samples_by_loc, samples_by_time */
	emit_fn emit;
	struct progress *progress;
	/* pass 1 */
	XXH3_state_t *hash;		/* of the session (NULL: not hashed) */
	XXH3_state_t *phash;		/* of the part being made */
	uint64_t part_samples;		/* its sample rows */
	uint32_t nbatches;		/* counting batch 0: the end of the plan */
	/* pass 2 */
	struct chclient *c;
	const uint8_t *have;
	uint64_t sent, rows_sent;
	int running;			/* pushing an interval of a running session */
};

/* -- pushgen.c -- */

/* The batch being filled of one table: its rows as TSV, each begun with
 * the prefix host, session, batch, day. */
struct push_table {
	struct push_batcher b;
	struct sbuf rows;
	const char *table, *cols;	/* cols: PUSH_PREFIX_COLS, then its own */
	struct gen *g;			/* its host, session and emit */
};
#define PUSH_PREFIX_COLS	"host, session, batch, day, "

/* Start table (its columns cols) of g at the number prev stands at (the
 * table before, once ended, or a part's start; NULL: batch 1). */
void push_table_start(struct push_table *x, struct gen *g, const struct push_batcher *prev,
		      const char *table, const char *cols);
/* Begin a row of day: the batch filled so far goes first when the row
 * cannot join it; then the prefix.  0 or -1 with e set. */
int push_table_row(struct push_table *x, int64_t day, struct error *e);
/* The end of the table: its last batch goes.  0 or -1 with e set. */
int push_table_end(struct push_table *x, struct error *e);
void push_table_free(struct push_table *x);

/* Every batch of a part of the plan, in order, to g->emit, numbered from
 * first; *end is the number after its last.  The part: the sample rows
 * lo..hi, then the binaries they fell in and their aggregates; final:
 * the session's processes, markers and lost records before them.  Fills
 * g->locs (the part's locations, named in pushsym.c) and counts
 * g->part_samples. */
int pushgen_part(struct gen *g, int final, int64_t lo, int64_t hi, uint32_t first,
		 uint32_t *end, struct error *e);

/* The row of table sessions of g->s (batch 0: hash, g->nbatches,
 * g->batch_rows, the session's description), into out. */
void pushgen_session_row(struct gen *g, const char *hash, struct sbuf *out);
#define PUSH_SESSION_COLS	"host, session, batch, day, content_hash, batches, batch_rows, " \
	"name, state, backend, kernel_release, nr_cpus, sample_event, sample_freq, " \
	"sample_period, start_ns, end_ns, wall_offset_ns, samples, lost, throttled, events"

/* The row of table intervals of interval iv of g->s (its rowids, batches,
 * samples and hash, with the session's description), into out. */
void pushgen_interval_row(struct gen *g, const struct push_interval *iv, struct sbuf *out);
#define PUSH_INTERVAL_COLS	"host, session, interval_no, day, first_row, last_row, " \
	"first_batch, batches, batch_rows, samples, samples_total, content_hash, name, " \
	"backend, kernel_release, nr_cpus, sample_event, sample_freq, sample_period, " \
	"start_ns, wall_offset_ns, events"

/* The comms' names, by id, into g->comms (again: those added since). */
int pushgen_comms(struct gen *g, struct error *e);
/* The newest sample rowid of session g->s committed now (INT64_MIN: none). */
int pushgen_committed(struct gen *g, int64_t *cut, struct error *e);
/* The ids of the stopped sessions (state neither running nor deleting),
 * started at or after since_wall_ns if has_since, by id. */
int pushgen_stopped(struct db *db, int has_since, int64_t since_wall_ns, int64_t **ids,
		    size_t *n, struct error *e);

/* -- pushsym.c -- */

/* The names of g->locs the fleet lacks into its table symbols, named
 * with g->res (while the session runs, not those that may be named
 * later).  0 or -1 with e set. */
int pushsym_send(struct gen *g, struct error *e);

/* The settings of push's INSERTs: each one on every shard it goes to
 * before it returns. */
#define PUSH_INSERT_SETTINGS	"insert_distributed_sync=1"

#endif
