/*
 * recover.h - sessions a strobed left 'running' when it died.
 *
 * strobed commits a session's rows in batches (every drain), each commit
 * with the session row's running totals, so a strobed killed at any
 * moment leaves every committed batch readable.  What it writes only at
 * stop is missing: the histogram (sample_agg), the per-CPU statistics
 * (session_cpus) and the end of the session.  The next strobed, holding
 * the database's lock (dblock.h) so that no session can really be
 * running, calls recover_interrupted() before anything else: each such
 * session becomes 'interrupted' and gets those rebuilt from its stored
 * rows, so that its reports agree with its raw samples.
 */
#ifndef STROBE_RECOVER_H
#define STROBE_RECOVER_H

#include <stddef.h>
#include <stdint.h>
#include "db.h"

struct recover_session {
	int64_t id;
	int64_t samples;	/* stored rows found */
	int64_t end_ns;		/* its last stored record's time */
};

/*
 * In one transaction, for every session in state 'running' with an id of
 * at most max_id (0: any; a strobed that may have started sessions of its
 * own since it looked passes the largest id it found then): rebuild its
 * sample_agg and stack_agg rows and its session_cpus rows (samples and lost per CPU;
 * tail_c* 0, no final counter values having been read) from its samples
 * and lost rows, set samples, first_sample, last_sample, lost and
 * throttled from them, end_ns to its last stored record's time (sample,
 * loss report or marker; start_ns if none) and duration_ns, and mark it
 * 'interrupted'.  The work is that of those sessions' rows only: they are
 * found through an index, their samples through their rowid range.  Up to
 * max of them go to out; *n says how many there were.  When there are none
 * nothing is written (no write lock is taken).  A lock another process
 * holds fails it with db_busy() set and nothing changed: call it again.
 */
int recover_interrupted(struct db *db, int64_t max_id, struct recover_session *out,
			size_t max, size_t *n, struct error *e);

#endif
