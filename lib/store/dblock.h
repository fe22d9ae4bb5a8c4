/*
 * dblock.h - one strobed per database, and what the last one left.
 *
 * strobed takes an exclusive flock(2) on DB.lock (next to the database)
 * before it opens the database, and holds it while it runs; the kernel
 * drops it when the process dies, however it dies.  A second strobed on
 * the same database is refused before it reads or writes a byte of it,
 * with the pid of the one that holds the lock.  The lock file is root's
 * alone (0600, opened O_NOFOLLOW, a regular file with one link, owned by
 * strobed's uid): a member of group strobe, who can read the database
 * itself, can neither take nor hold this lock.
 *
 * The file also keeps the database's stamp (device, inode, size, mtime
 * and ctime of the file) as strobed last saw it after writing: a file
 * whose stamp is unchanged is exactly as a strobed left it, so the next
 * strobed need not read it whole to trust it (db_open DB_WRITE_TRUSTED).
 * Its format is two lines, "pid N" and "stamp S".
 *
 * dblock_own_file() makes and checks such root-only files: the lock file,
 * and the raw stack copies' DB.stacks (rawstk.h).
 */
#ifndef STROBE_DBLOCK_H
#define STROBE_DBLOCK_H

#include <sys/types.h>
#include "util.h"

#define DBLOCK_STAMP_MAX 128

struct dblock {
	int fd;				/* -1: not held */
	char *path;			/* DB.lock */
	char stamp[DBLOCK_STAMP_MAX];	/* as found: "" when none */
};

/*
 * Take the lock of database db_path, creating DB.lock (mode 0600) if
 * needed; l->stamp receives the stamp the previous holder recorded.
 * Fails, changing nothing, when another process holds it ("database X is
 * in use by strobed pid N ...: stop it first ...") and when the lock file
 * is not a plain file of this uid.
 */
int dblock_acquire(struct dblock *l, const char *db_path, struct error *e);

/*
 * A file next to the database that is strobed's alone (DB.lock, DB.stacks):
 * path created by this call (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600), or an
 * existing one opened O_NOFOLLOW and kept only if fstat says it is a
 * regular file of this uid with one link and, when private, no group or
 * other mode bits.  The descriptor (O_RDWR, O_CLOEXEC), or -1 with e
 * saying why; what names the file in it ("the lock file").
 */
int dblock_own_file(const char *path, const char *what, int private, struct error *e);

/* Record the holder's pid and the database's stamp (stamp may be ""). */
int dblock_write(struct dblock *l, pid_t pid, const char *stamp, struct error *e);

/* Release the lock (the file stays). */
void dblock_release(struct dblock *l);

/* The stamp of the file at path into buf: "" (and -1) when it cannot be
 * stat'ed.  Any write to the file (or a copy in its place) changes it. */
int dblock_stamp(const char *path, char *buf, size_t len);

#endif
