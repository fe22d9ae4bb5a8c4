/*
 * maint.c - what strobed does between drains, on each 100 ms tick: record
 * the database file's stamp in DB.lock, mark the sessions a strobed that
 * died left running once the database lets it (their spools counted as
 * lost), remove sessions marked for removal in bounded batches
 * (retention.h), apply --keep and --max-size, collect binaries and cache
 * entries nothing refers to, and keep the WAL under --max-wal when it can.
 * While a session runs, only with the session's lock, taken without
 * waiting: ingest comes first.
 */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cachegc.h"
#include "lockinfo.h"
#include "log.h"
#include "pusher.h"
#include "strobed.h"

/* rows removed per retention step: while a session runs, one step a tick;
 * otherwise steps for up to REAP_IDLE_MS a tick */
#define REAP_ROWS_RUNNING 5000
#define REAP_ROWS_IDLE	20000
#define REAP_IDLE_MS	50
#define PLAN_INTERVAL_MS 60000	/* --keep / --max-size */
#define WAL_CHECK_MS	1000

/* The database file's stamp, recorded in DB.lock whenever it changed (a
 * checkpoint wrote it): the next strobed trusts a file with that stamp
 * without reading it whole. */
void maint_stamp(struct daemon *d)
{
	char now[DBLOCK_STAMP_MAX];
	struct error e;

	if (dblock_stamp(db_path(d->db), now, sizeof(now)) < 0 || !strcmp(now, d->stamp))
		return;
	snprintf(d->stamp, sizeof(d->stamp), "%s", now);
	if (dblock_write(&d->lock, getpid(), d->stamp, &e) < 0)
		daemon_log("%s", e.msg);
}

static double mib(uint64_t bytes)
{
	return bytes / 1048576.0;
}

/* With no session running: the binaries rows and cache entries nothing
 * refers to any more. */
static void gc_collect(struct daemon *d)
{
	struct cachegc_stats cs;
	struct error e;
	int64_t bins;

	if (d->session) {
		d->gc_pending = 1;
		return;
	}
	if (retention_gc_binaries(d->db, &bins, &e) < 0) {
		if (db_busy(d->db))
			lockdiag_blocked(d);
		else
			daemon_log("removing unused binaries: %s", e.msg);
		return;		/* gc_pending stays: the next tick tries again */
	}
	lockdiag_unblocked(d);
	d->gc_pending = 0;
	if (cachegc_prune(d->db, d->cache_dir, &cs, &e) < 0) {
		daemon_log("pruning the binary cache: %s", e.msg);
		return;
	}
	if (bins || cs.removed || cs.tmp_removed)
		daemon_log("binary cache: removed %llu entries (%.1f MiB) no session refers to and %llu "
		       "left-over temporary files, kept %llu; %lld binaries rows deleted",
		       (unsigned long long)cs.removed, mib(cs.removed_bytes),
		       (unsigned long long)cs.tmp_removed, (unsigned long long)cs.kept,
		       (long long)bins);
}

/* Delete rows of the sessions marked for removal, a bounded batch at a
 * time: one step a tick while a session runs, else for up to REAP_IDLE_MS. */
static void reap(struct daemon *d)
{
	uint64_t until = clock_monotonic_ns() + REAP_IDLE_MS * 1000000ULL;
	struct error e;
	int64_t removed;
	int r;

	do {
		r = retention_step(d->db, d->session ? REAP_ROWS_RUNNING : REAP_ROWS_IDLE,
				   &removed, &e);
		if (r < 0) {
			if (db_busy(d->db)) {
				lockdiag_blocked(d);
			} else {
				daemon_log("removing sessions: %s (strobed tries again when it "
				       "restarts)", e.msg);
				d->reaping = 0;
			}
			return;
		}
		lockdiag_unblocked(d);
		d->reaped += removed;
	} while (r > 0 && !d->session && clock_monotonic_ns() < until);
	if (r > 0)
		return;
	d->reaping = 0;
	if (d->reaped)
		daemon_log("removed %lld session%s", (long long)d->reaped, d->reaped > 1 ? "s" : "");
	d->reaped = 0;
	d->next_plan_ns = 0;	/* still over --max-size? */
	gc_collect(d);
}

/* --keep and --max-size: mark what must go; reap() deletes it. */
static void plan(struct daemon *d)
{
	struct retention_usage u;
	int64_t ids[8], hold = 0;
	size_t n, held = 0;
	int over;
	struct error e;

	d->next_plan_ns = clock_monotonic_ns() + PLAN_INTERVAL_MS * 1000000ULL;
	if (d->pusher) {
		struct pusher_state ps;

		pusher_state(d->pusher, &ps);
		hold = ps.hold_from;
	}
	if (retention_usage(d->db, d->cache_dir, &u, &e) < 0 ||
	    retention_plan_hold(d->db, &d->policy, &u, d->session ? session_status_id(d->session) : 0,
				(int64_t)clock_realtime_ns(), hold, ids, ARRAY_SIZE(ids), &n, &over,
				&held, &e) < 0) {
		if (db_busy(d->db)) {
			lockdiag_blocked(d);
			d->next_plan_ns = clock_monotonic_ns() + WAL_CHECK_MS * 1000000ULL;
		} else {
			daemon_log("retention: %s", e.msg);
		}
		return;
	}
	if (n) {
		struct sbuf list = { 0 };

		for (size_t i = 0; i < n && i < ARRAY_SIZE(ids); i++)
			sbuf_addf(&list, "%s%lld", i ? ", " : "", (long long)ids[i]);
		daemon_log("retention: removing %zu session%s (%s%s): the database uses %.1f MiB and "
		       "the cache %.1f MiB", n, n > 1 ? "s" : "", list.s,
		       n > ARRAY_SIZE(ids) ? ", ..." : "", mib(u.db_bytes), mib(u.cache_bytes));
		free(list.s);
		d->reaping = 1;
	}
	/* --push: what is not pushed yet stays; said once, until it has gone */
	if (held && !d->push_held)
		daemon_log("retention: keeping %zu session%s from session %lld on that --push has "
			   "not pushed to %s yet: %s removed once pushed", held, held > 1 ? "s" : "",
			   (long long)hold, d->push_url, held > 1 ? "they are" : "it is");
	d->push_held = held;
	if (held)
		over = 0;
	if (over && !d->over_logged)
		daemon_log("retention: the database (%.1f MiB) and the cache (%.1f MiB) are over "
		       "--max-size %.1f MiB, and only the running and the newest finished "
		       "sessions are left (they are not removed to make room)",
		       mib(u.db_bytes), mib(u.cache_bytes), mib(d->policy.max_bytes));
	d->over_logged = over;
}

/* Say that the WAL of size bytes cannot be checkpointed, and who keeps
 * it: once per doubling, and once more when a message that could name no
 * one can now. */
static void wal_log_holder(struct daemon *d, const char *wal, uint64_t size)
{
	char *shm = xasprintf("%s-shm", db_path(d->db)), who[400];
	struct lock_holder h;
	/* the checkpoint, recovery and read-mark locks */
	int named = lockinfo_find(shm, 121, 7, &h) == 1;

	if (d->wal_logged && size < 2 * d->wal_logged && (d->wal_named || !named)) {
		free(shm);
		return;
	}
	if (named) {
		char what[200];

		lockinfo_describe(&h, what, sizeof(what));
		snprintf(who, sizeof(who), "%s of %s keeps", what, shm);
	} else {
		snprintf(who, sizeof(who), "a reader (no lock of another process shows in "
			 "/proc/locks now) keeps");
	}
	daemon_log("the WAL %s is %.1f MiB, over --max-wal %.1f MiB, and cannot be "
		   "checkpointed: %s an old snapshot of the database; the WAL grows until "
		   "that process lets go", wal, mib(size), mib(d->max_wal), who);
	free(shm);
	d->wal_logged = size;
	d->wal_named = named;
}

/* Keep the WAL under --max-wal: a TRUNCATE checkpoint when it is above
 * (without waiting: a reader on an old snapshot makes it fail), and, when
 * it cannot, say who keeps it (wal_log_holder). */
static void wal_check(struct daemon *d)
{
	char *wal = xasprintf("%s-wal", db_path(d->db));
	struct stat st;
	int rc;

	d->next_wal_ns = clock_monotonic_ns() + WAL_CHECK_MS * 1000000ULL;
	if (stat(wal, &st) < 0 || (uint64_t)st.st_size <= d->max_wal) {
		d->wal_logged = 0;
		free(wal);
		return;
	}
	db_set_busy_timeout(d->db, 0);
	rc = sqlite3_wal_checkpoint_v2(db_sqlite(d->db), NULL, SQLITE_CHECKPOINT_TRUNCATE,
				       NULL, NULL);
	db_set_busy_timeout(d->db, BUSY_TIMEOUT_MS);
	if (rc == SQLITE_OK && stat(wal, &st) == 0 && (uint64_t)st.st_size <= d->max_wal) {
		if (d->wal_logged)
			daemon_log("the WAL %s is checkpointed and truncated again", wal);
		d->wal_logged = 0;
	} else {
		wal_log_holder(d, wal, (uint64_t)st.st_size);
	}
	free(wal);
}

/* ---- the sessions of a strobed that died ---- */

/* The end of the interrupted sessions' stored data, for the log. */
void maint_log_recovered(const struct recover_session *r, size_t n, size_t shown,
			 uint64_t took_ns)
{
	for (size_t i = 0; i < n && i < shown; i++)
		daemon_log("session %lld was interrupted (the strobed recording it ended without "
		       "storing its end): marked interrupted, its histogram and totals rebuilt "
		       "from its %lld stored samples",
		       (long long)r[i].id, (long long)r[i].samples);
	if (n > shown)
		daemon_log("%zu more interrupted sessions marked and rebuilt", n - shown);
	if (n)
		daemon_log("rebuilding %zu interrupted session%s took %.1f ms", n, n > 1 ? "s" : "",
		       took_ns / 1e6);
}

struct orphan {
	struct db *db;
	int64_t id;
	uint64_t last_ns, samples;
};

static int orphan_lost(void *ctx, int cpu, uint64_t samples, struct error *e)
{
	struct orphan *o = ctx;

	o->samples += samples;
	return db_lost_insert(o->db, o->id, cpu < 0 ? 0 : cpu, o->last_ns, samples, "spool", e);
}

/*
 * The spools of sessions whose strobed died (DB.spool/ID): the samples
 * they held that were never stored become lost rows of kind 'spool' at the
 * time of the last chunk spooled, per CPU, which recover_interrupted then
 * counts into the session's totals; logged, and the spool removed.  A
 * locked database: -1 with db_busy(), to be tried again.
 */
int maint_spool_orphans(struct daemon *d, struct error *e)
{
	DIR *dir = opendir(d->spool_dir);
	struct dirent *de;
	int ret = 0;

	if (!dir)
		return errno == ENOENT ? 0 : error_set(e, "cannot list %s: %s", d->spool_dir,
						      strerror(errno));
	while (ret == 0 && (de = readdir(dir))) {
		struct orphan o = { .db = d->db };
		struct db_session row;
		struct error ignore;
		uint64_t records = 0;
		char *end, *path;
		int r = 0;

		o.id = strtoll(de->d_name, &end, 10);
		if (*end || o.id <= 0 || (d->session && o.id == session_status_id(d->session)))
			continue;
		path = xasprintf("%s/%s", d->spool_dir, de->d_name);
		if (db_session_get(d->db, o.id, &row, &ignore) == 0) {
			if (db_begin(d->db, e) < 0) {
				free(path);
				ret = -1;
				break;
			}
			r = spool_orphan(path, orphan_lost, &o, &records, &o.last_ns, e);
			if (r < 0 || db_commit(d->db, e) < 0) {
				db_rollback(d->db);
				daemon_log("session %lld: counting what its spool lost: %s",
					   (long long)o.id, e->msg);
				r = 0;
			}
		}
		if (r > 0 && records)
			daemon_log("session %lld: its strobed stopped with %llu records spooled "
				   "but not stored, %llu of them samples: counted as lost (kind "
				   "spool) at CLOCK_MONOTONIC %llu ns", (long long)o.id,
				   (unsigned long long)records, (unsigned long long)o.samples,
				   (unsigned long long)o.last_ns);
		if (spool_remove(path, &ignore) < 0)
			daemon_log("%s", ignore.msg);
		free(path);
	}
	closedir(dir);
	return ret;
}

/* Interrupted sessions strobed could not mark at start-up. */
static void recover_retry(struct daemon *d)
{
	struct recover_session rec[16];
	uint64_t t = clock_monotonic_ns();
	struct error e;
	size_t n;

	if (maint_spool_orphans(d, &e) < 0 ||
	    recover_interrupted(d->db, d->recover_max_id, rec, ARRAY_SIZE(rec), &n, &e) < 0) {
		if (db_busy(d->db))
			lockdiag_blocked(d);
		else
			daemon_log("marking interrupted sessions: %s", e.msg);
		return;
	}
	lockdiag_unblocked(d);
	d->recover_max_id = 0;
	maint_log_recovered(rec, n, ARRAY_SIZE(rec), clock_monotonic_ns() - t);
}

/* What maint_tick writes: with the session locked while one runs. */
static void maintain_db(struct daemon *d)
{
	uint64_t now = clock_monotonic_ns();

	if (d->blocked_since && d->session)
		return;		/* the ingest thread retries; nothing else can be written */
	if (d->blocked_since) {
		struct error e;	/* no drain to notice the lock going: look */

		if (db_begin(d->db, &e) < 0)
			return;
		db_rollback(d->db);
		lockdiag_unblocked(d);
	}
	if (d->recover_max_id)
		recover_retry(d);
	if (d->reaping && !d->blocked_since)
		reap(d);
	else if (d->gc_pending && !d->session && !d->blocked_since)
		gc_collect(d);
	if (d->blocked_since)
		return;
	if ((d->policy.keep_ns || d->policy.max_bytes) && !d->reaping && now >= d->next_plan_ns)
		plan(d);
	if (now >= d->next_wal_ns)
		wal_check(d);
}

void maint_tick(struct daemon *d)
{
	maint_stamp(d);
	if (d->blocked_since && d->session)
		return;		/* the ingest thread retries; nothing else can be written */
	if (!d->session) {
		maintain_db(d);
		return;
	}
	/* while ingest is behind, this waits: ingest comes first, and
	 * SQLite's own checkpoints bound the WAL meanwhile */
	if (session_trylock(d->session) < 0)
		return;
	maintain_db(d);
	session_unlock(d->session);
}
