/*
 * rawstk.h - the raw stack copies of --keep-stacks, root's alone.
 *
 * A dwarf sample's raw copy (struct strobe_ustack: its user registers and
 * up to 64 KiB of its stack) holds whatever the sampled process had there:
 * root's processes' secrets as much as anyone's.  The database is readable
 * by group strobe, so these copies are not in it: they are in the table
 * rawstk.raw_stacks of a companion SQLite file, DB.stacks, mode 0600 and
 * strobed's own (made and checked by handle, dblock_own_file()), which
 * every connection that writes the database (db_open DB_WRITE) attaches
 * as schema "rawstk".  So ingest stores a sample's copy in the same SQL
 * transaction as the sample, retention deletes it with its session, and
 * readers, who open the database read-only, never see it.  Only root may
 * ask for them (strobed refuses --keep-stacks to anyone else).
 *
 * Both files are in WAL mode: a commit is atomic in each file, not across
 * the two, so a crash may lose the copies of the last batch or keep those
 * of samples that were lost with it (by session and sample rowid, removed
 * with their session).
 */
#ifndef STROBE_RAWSTK_H
#define STROBE_RAWSTK_H

#include <sqlite3.h>
#include "util.h"

#define RAWSTK_SCHEMA "rawstk"
#define RAWSTK_APPLICATION_ID 0x5354524b	/* "STRK" */

/*
 * Attach db_path's DB.stacks to sql as schema rawstk, creating it (and its
 * table) when there is none.  Refused when DB.stacks is not a plain file
 * of this uid with one link and no group or other mode bits, is replaced
 * while SQLite opens it, or is another program's file.  Not inside a
 * transaction (SQLite cannot attach there).
 */
int rawstk_attach(sqlite3 *sql, const char *db_path, struct error *e);

#endif
