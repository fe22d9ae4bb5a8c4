/*
 * dbsample.c - the samples of the ingest path into the strobe database
 * (db.h): each sample row, packed with the transaction's others into
 * sample_blocks rows (sampleblk.h; read back through the samples table,
 * samplevt.h); the histograms sample_agg, sample_time and stack_agg; the
 * call stacks, the raw stack copies (--keep-stacks) and the unwinding
 * failures.  Every call here is made inside db_begin .. db_commit.
 */
#include "config.h"
#include <stdlib.h>
#include "db_int.h"

int db_block_write(struct db *db, sqlite3_stmt *st, int64_t first, int64_t session,
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
	return db_step_done(db, st, e, "storing samples");
}

/* Pack the open transaction's pending samples into one sample_blocks row. */
int db_blk_flush(struct db *db, struct error *e)
{
	size_t nr = db->blk_nr;

	if (!nr)
		return 0;
	db->blk_nr = 0;
	return db_block_write(db, db->stmt[STMT_SAMPLE], db->next_row - (int64_t)nr,
			      db->blk_session, db->blk, nr, db->blk_min, db->blk_max, db->blk_out,
			      e);
}

/* A new transaction, or one rolled back: nothing pending, rowids unknown. */
void db_blk_reset(struct db *db)
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
			return db_sql_error(db, e, "finding the next sample's rowid");
	}
	if (db->blk_nr && (db->blk_nr == SAMPLEBLK_MAX || db->blk_session != s->session_id) &&
	    db_blk_flush(db, e))
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

/* The period sum of a histogram row: NULL when a sample had none (a NULL
 * sum stays NULL). */
static void bind_period(sqlite3_stmt *st, int i, const struct db_sums *sums)
{
	if (sums->period_unknown)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, (int64_t)sums->period);
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
	db_bind_counters(st, 8, nr, a->c);
	bind_period(st, 16, &a->sums);
	sqlite3_bind_int64(st, 17, (int64_t)a->start_ns);
	return db_step_done(db, st, e, "storing the session histogram");
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
	db_bind_counters(st, 11, nr, a->c);
	sqlite3_bind_int64(st, 19, (int64_t)a->start_ns);
	return db_step_done(db, st, e, "storing the session's time sums");
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
	return db_step_done(db, st, e, "storing a call stack");
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
	bind_period(st, 7, &a->sums);
	db_bind_counters(st, 8, nr, a->c);
	return db_step_done(db, st, e, "storing the session's stack histogram");
}

int db_unwind_error_add(struct db *db, int64_t session_id, int64_t binary_id,
			const char *reason, uint64_t count, struct error *e)
{
	for (int i = STMT_UNWIND_ERR_SET; i <= STMT_UNWIND_ERR_ADD; i++) {
		sqlite3_stmt *st = db->stmt[i];

		sqlite3_bind_int64(st, 1, session_id);
		db_bind_opt_int(st, 2, binary_id);	/* 0: no binary */
		sqlite3_bind_text(st, 3, reason, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, (int64_t)count);
		if (db_step_done(db, st, e, "storing unwinding failures") < 0)
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
	return db_step_done(db, st, e, "storing a raw user stack");
}
