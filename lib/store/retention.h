/*
 * retention.h - removing sessions from the database: 'strobe rm', and
 * strobed's --keep DAYS and --max-size SIZE.
 *
 * Removing is two steps, so that strobed never holds the database for
 * long.  First the sessions are marked 'deleting' in one short
 * transaction (retention_remove, retention_plan): from then on no program
 * shows them.  Then retention_step() deletes their rows a bounded batch
 * at a time (samples by rowid range, the other tables through their
 * session_id keys and indexes), the session row last; strobed calls it
 * between drains.  A strobed that dies in between leaves sessions marked
 * 'deleting', and the next one carries on.
 *
 * Once no session is running or being deleted, retention_gc_binaries()
 * deletes the binaries rows no session refers to any more, and
 * cachegc_prune() (cachegc.h) the cache entries no row refers to.
 */
#ifndef STROBE_RETENTION_H
#define STROBE_RETENTION_H

#include <stddef.h>
#include <stdint.h>
#include "db.h"

struct retention_policy {
	int64_t keep_ns;	/* remove sessions that ended longer ago; 0: none */
	uint64_t max_bytes;	/* keep database + cache under this; 0: no limit */
};

/* Parse --keep DAYS: a positive number of days (decimals allowed). */
int retention_parse_days(const char *s, int64_t *ns, struct error *e);
/* Parse --max-size SIZE: bytes, or with K, M, G or T (powers of 1024). */
int retention_parse_size(const char *s, uint64_t *bytes, struct error *e);

/* What the database and the cache take on disk. */
struct retention_usage {
	uint64_t db_bytes;	/* pages in use: (page_count - freelist_count) * page_size,
				 * of the database and of DB.stacks (rawstk.h) */
	uint64_t wal_bytes;	/* their -wal files */
	uint64_t cache_bytes;	/* the cache's files (cachegc_usage) */
	uint64_t samples;	/* sample rows of all sessions */
};
int retention_usage(struct db *db, const char *cache_dir, struct retention_usage *u,
		    struct error *e);

/*
 * 'strobe rm' for uid: mark sessions ids[0..n) 'deleting', all or none.
 * Refused (nothing changes) when one does not exist ("no session N"), is
 * running (running_id, or state 'running'), or belongs to another uid
 * and uid is not 0 (root).
 */
int retention_remove(struct db *db, const int64_t *ids, size_t n, uint32_t uid,
		     int64_t running_id, struct error *e);

/*
 * Apply p: mark 'deleting' the finished sessions (done, interrupted,
 * aborted) that ended more than p->keep_ns before now_wall_ns (wall-clock
 * ns), then, while the usage u is above p->max_bytes, the oldest others,
 * as many as the estimate of their size (their samples times the
 * database's bytes per sample) says must go; at least one.  Never
 * running_id, and never by size the newest finished session (what was just
 * recorded does not go to make room).  *n receives how many were marked
 * (up to max of their ids in ids), *over whether u stays above the limit
 * with nothing left to remove.
 */
int retention_plan(struct db *db, const struct retention_policy *p,
		   const struct retention_usage *u, int64_t running_id, int64_t now_wall_ns,
		   int64_t *ids, size_t max, size_t *n, int *over, struct error *e);

/* retention_plan(), but never a session with id >= hold_from (0: none):
 * strobed --push keeps what it has not pushed yet.  *held receives how
 * many sessions it kept so that would have gone. */
int retention_plan_hold(struct db *db, const struct retention_policy *p,
			const struct retention_usage *u, int64_t running_id, int64_t now_wall_ns,
			int64_t hold_from, int64_t *ids, size_t max, size_t *n, int *over,
			size_t *held, struct error *e);

/* Sessions marked 'deleting' (an index lookup). */
int retention_pending(struct db *db, int64_t *count, struct error *e);

/*
 * Delete up to max_rows rows of sessions marked 'deleting', in one
 * transaction (a block of up to SAMPLEBLK_MAX samples is one row).  *removed receives how many sessions went completely.
 * Returns 1 when rows remain to delete, 0 when none do, -1 on error
 * (db_busy() tells a lock held elsewhere: nothing was deleted).
 */
int retention_step(struct db *db, int64_t max_rows, int64_t *removed, struct error *e);

/*
 * Delete the binaries rows that no session refers to (its histogram, its
 * kernel, or, for a session stored without a histogram, its samples).
 * Only while no session runs: ingest keeps binaries ids in memory.
 */
int retention_gc_binaries(struct db *db, int64_t *deleted, struct error *e);

#endif
