/*
 * samplescan.h - a session's raw samples, read straight from sample_blocks
 * (sampleblk.h) and filtered in C: the rows of
 *
 *	SELECT rowid,* FROM samples WHERE session_id = ? AND rowid BETWEEN ? AND ?
 *	  [AND time_ns BETWEEN ? AND ?] [AND pid = ?] [AND comm_id = ?]
 *	  [AND binary_id IN (...)]
 *	  ORDER BY rowid		(or, with .by_time, ORDER BY time_ns, rowid)
 *
 * (then, optionally, only rows within given time ranges, or that a
 * caller's function keeps: sample_scan_filter's keep and row_keep)
 * without SQLite's per-row work: what 'strobe export' and the time views
 * read.  In rowid order the blocks are decoded one at a time; in time
 * order (a session with samples stored late, sessions.late_samples) the
 * query above is run through the samples virtual table, which sorts.
 */
#ifndef STROBE_SAMPLESCAN_H
#define STROBE_SAMPLESCAN_H

#include <stdint.h>
#include "db.h"
#include "sampleblk.h"

struct sample_scan_filter {
	int64_t session_id;
	int64_t row_lo, row_hi;		/* rowids, inclusive */
	int has_time;
	int64_t time_lo, time_hi;	/* time_ns, inclusive */
	int has_pid, has_comm;
	int64_t pid, comm_id;
	const int64_t *binaries;	/* sorted, kept by the caller while the scan is open */
	size_t nbinaries;
	int by_time;			/* ORDER BY time_ns, rowid */
	/* Further conditions in C, after the others (the query's rows
	 * counted by the progress are those before them): */
	const int64_t *keep;		/* nkeep sorted, disjoint time_ns ranges
					 * [keep[2k], keep[2k + 1]], inclusive,
					 * kept by the caller while the scan is
					 * open: with has_keep only rows in one
					 * pass (none with nkeep 0) */
	size_t nkeep;
	int has_keep;
	int (*row_keep)(void *ctx, const struct sampleblk_row *r);	/* non-NULL:
					 * only rows it returns nonzero for pass
					 * (it sees the columns of cols) */
	void *row_ctx;
	uint32_t cols;			/* 1 << SB_* of the columns read (those of
					 * the filters added); 0: all.  Others
					 * may read as NULL */
};

/* The rowid range of session s's stored samples, as strobe reads them:
 * first_sample..last_sample of a finished session, first_sample.. of one
 * still being written (its last_sample may lag), none when it has no
 * first_sample and is finished (*lo > *hi then). */
void sample_scan_range(const struct db_session *s, int64_t *lo, int64_t *hi);

/* sample_scan_total() of all of session s's samples, or (has_from,
 * has_to) of those from its start + from_ns up to its start + to_ns. */
uint64_t sample_scan_session_total(struct db *db, const struct db_session *s, int has_from,
				   int64_t from_ns, int has_to, int64_t to_ns);

struct sample_scan_row {
	int64_t rowid;
	const struct sampleblk_row *r;	/* r->v[SB_*]; r->null bit SB_*: NULL */
};

struct sample_scan;

/* The rows of the sample blocks that a scan of f decodes (those of its
 * session overlapping its rowid and time ranges): the total to give the
 * progress of the scan (db_set_progress(), db.h).  0 on error. */
uint64_t sample_scan_total(struct db *db, const struct sample_scan_filter *f);

struct sample_scan *sample_scan_open(struct db *db, const struct sample_scan_filter *f,
				     struct error *e);
/* 1 and *row (valid until the next call) for the next row, 0 after the
 * last, -1 on error (a malformed block is a corrupt database). */
int sample_scan_next(struct sample_scan *sc, const struct sample_scan_row **row,
		     struct error *e);
void sample_scan_close(struct sample_scan *sc);

#endif
