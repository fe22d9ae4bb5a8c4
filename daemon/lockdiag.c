/*
 * lockdiag.c - a database another process holds locked: who holds it
 * (lockinfo.h reads /proc/locks), said once in the log when a write finds
 * it locked and again when writes go through; replies that name the
 * holder; and the wait for it when strobed opens the database.  Any
 * member of group strobe can take a lock on the database's files: strobed
 * then never waits in SQLite (BUSY_TIMEOUT_MS), it leaves the records in
 * the spool and the rings and tries again on the next tick.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lockinfo.h"
#include "log.h"
#include "strobed.h"

/*
 * Who holds a lock that keeps strobed from writing: SQLite's WAL write
 * lock (byte 120 of DB-shm) first, then any other byte of DB-shm (the
 * checkpoint, recovery and read-mark locks), then the database file.
 */
void lockdiag_holder_of(const char *db, char *buf, size_t len)
{
	char *shm = xasprintf("%s-shm", db);
	struct lock_holder h;

	if (lockinfo_find(shm, 120, 1, &h) == 1 || lockinfo_find(shm, 0, 0, &h) == 1) {
		char what[200];

		lockinfo_describe(&h, what, sizeof(what));
		snprintf(buf, len, "%s of %s", what, shm);
	} else if (lockinfo_find(db, 0, 0, &h) == 1) {
		char what[200];

		lockinfo_describe(&h, what, sizeof(what));
		snprintf(buf, len, "%s of %s", what, db);
	} else {
		snprintf(buf, len, "a process strobed could not identify (no lock of another "
			 "process shows in /proc/locks now)");
	}
	free(shm);
}

void lockdiag_holder(const struct daemon *d, char *buf, size_t len)
{
	lockdiag_holder_of(db_path(d->db), buf, len);
}

/*
 * Opening the database at start-up: a lock another process holds (SQLite
 * needs the WAL write lock to rebuild the WAL index when strobed is the
 * first to open the file) is waited for, up to START_WAIT_MS, the holder
 * named once in the log.
 */
#define START_WAIT_MS 60000

struct start_wait {
	const char *db;
	uint64_t since;
	char holder[256];
};

static int start_busy(void *arg, int n)
{
	struct start_wait *w = arg;
	uint64_t now = clock_monotonic_ns();

	if (!w->since)
		w->since = now;
	if (!w->holder[0] && now - w->since > 500000000ULL) {
		lockdiag_holder_of(w->db, w->holder, sizeof(w->holder));
		daemon_log("waiting for the database: it is locked by %s", w->holder);
	}
	if (now - w->since > START_WAIT_MS * 1000000ULL)
		return 0;
	usleep(10000);
	return 1;
}

struct db *lockdiag_open(const char *path, int trusted, char *waited, size_t len,
			 struct error *e)
{
	struct start_wait wait = { .db = path };
	char *shm = xasprintf("%s-shm", path);
	struct lock_holder h;
	struct db *db;

	/* SQLite waits in silence when it must rebuild the WAL index */
	if (lockinfo_find(shm, 120, 1, &h) == 1) {
		lockdiag_holder_of(path, wait.holder, sizeof(wait.holder));
		wait.since = clock_monotonic_ns();
		daemon_log("waiting for the database: it is locked by %s", wait.holder);
	}
	free(shm);
	waited[0] = 0;
	db = db_open_busy(path, trusted ? DB_WRITE_TRUSTED : DB_WRITE, start_busy, &wait, e);
	if (!db) {
		if (wait.holder[0])
			snprintf(waited, len, " (strobed waited %d s; it was locked by %s)",
				 START_WAIT_MS / 1000, wait.holder);
		return NULL;
	}
	if (wait.holder[0])
		daemon_log("the database is free again after %.1f s",
			   (clock_monotonic_ns() - wait.since) / 1e9);
	return db;
}

/* A write found the database locked by another process: say so once,
 * with the holder, and stop watching the rings (the timer retries). */
void lockdiag_blocked(struct daemon *d)
{
	if (d->blocked_since)
		return;
	d->blocked_since = clock_monotonic_ns();
	lockdiag_holder(d, d->holder, sizeof(d->holder));
	strobed_watch(d, 0);
	if (d->session)
		daemon_log("session %lld: the database is locked by %s: its records wait in the "
		       "ring buffers (the kernel counts what does not fit as lost); retrying "
		       "every 100 ms", (long long)session_status_id(d->session), d->holder);
	else
		daemon_log("the database is locked by %s: retrying every 100 ms", d->holder);
}

/* A write went through again: say for how long it could not. */
void lockdiag_unblocked(struct daemon *d)
{
	if (!d->blocked_since)
		return;
	daemon_log("the database is writable again after %.1f s (it was locked by %s)",
	       (clock_monotonic_ns() - d->blocked_since) / 1e9, d->holder);
	d->blocked_since = 0;
	d->holder[0] = 0;
	if (d->session && !d->stop_pending)
		strobed_watch(d, 1);
}

/* After a refusal of SQLite's: e's message, with the holder when it was
 * a lock another process holds. */
void lockdiag_reply(struct daemon *d, int fd, const struct error *e)
{
	char who[256];

	if (!db_busy(d->db) || !strstr(e->msg, "is locked")) {
		reply_error(fd, "%s", e->msg);
		return;
	}
	lockdiag_holder(d, who, sizeof(who));
	reply_error(fd, "the database %s is locked by %s: try again when it lets go",
		    db_path(d->db), who);
}
