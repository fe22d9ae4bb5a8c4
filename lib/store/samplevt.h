/*
 * samplevt.h - the table "samples" as SQL sees it: a eponymous
 * virtual table that unpacks sample_blocks (schema 006, sampleblk.h).
 *
 * It has the columns of the old samples table (session_id, time_ns, tsc,
 * cpu, pid, tid, comm_id, binary_id, offset, flags, c0..c7) and its
 * rowids, and yields rows in rowid order.  INSERT, UPDATE and DELETE work
 * row by row, each rewriting the row's block: for tests and repairs, not
 * for bulk work (strobed writes sample_blocks itself).  Constraints on rowid and
 * session_id narrow the blocks read through sample_blocks' primary key and
 * index, constraints on time_ns skip blocks by their min_ns/max_ns; SQLite
 * still checks every constraint on the rows.  A malformed block is an
 * SQLITE_CORRUPT error naming its first rowid.
 *
 * db_open() registers it on strobe's own connections.  Other programs get
 * it from the loadable extension lib/strobe_samples.so, built from the
 * same source:  sqlite3 -cmd '.load lib/strobe_samples' strobe.db
 */
#ifndef STROBE_SAMPLEVT_H
#define STROBE_SAMPLEVT_H

#include <stdint.h>
#include <sqlite3.h>

int samplevt_register(sqlite3 *db);

/* Told of each block the table decodes for a read, with its number of
 * rows: how strobe shows the progress of a long query (progress.h). */
struct samplevt_hook {
	void (*fn)(void *arg, int64_t rows);
	void *arg;
};

/* samplevt_register() with a hook, kept by the caller while db is open
 * (its fn may be NULL and set later). */
int samplevt_register_hook(sqlite3 *db, struct samplevt_hook *hook);

#endif
