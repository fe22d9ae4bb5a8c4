/*
 * lockinfo.h - who holds a lock on a file: for the messages of a strobed
 * whose database another process has locked.
 *
 * SQLite locks a WAL database with POSIX byte-range locks on the database
 * file and on its -shm file (the WAL write lock is byte 120 of -shm, the
 * checkpoint lock 121, the recovery lock 122, the read marks 123..127).
 * Anyone who can open a file for reading can take a read lock on any of
 * its bytes, and so make SQLite's writer wait.  lockinfo names the holder
 * from /proc/locks (and /proc/PID/fdinfo for open file description locks,
 * whose /proc/locks line carries no pid).  It never opens the file itself:
 * closing any descriptor of a file drops every POSIX lock this process
 * holds on it, SQLite's among them.
 */
#ifndef STROBE_LOCKINFO_H
#define STROBE_LOCKINFO_H

#include <stdint.h>
#include <sys/types.h>

struct lock_holder {
	pid_t pid;		/* -1: unknown */
	uid_t uid;		/* (uid_t)-1: unknown */
	char comm[32];		/* "" when unknown */
	int write;		/* a write lock (else a read lock) */
	int ofd;		/* an open file description lock (F_OFD_SETLK) */
	uint64_t start, end;	/* bytes it covers; end UINT64_MAX: to EOF */
};

/*
 * Find a lock on the file at path, held by another process, that
 * conflicts with a write lock on bytes [start, start + len) (len 0: to the
 * end of the file).  1 and *h when there is one, 0 when there is none, -1
 * when path or /proc/locks cannot be read.
 */
int lockinfo_find(const char *path, uint64_t start, uint64_t len, struct lock_holder *h);

/* "pid 1234 (python3, uid 65534), a read lock on bytes 120-120" */
void lockinfo_describe(const struct lock_holder *h, char *buf, size_t size);

#endif
