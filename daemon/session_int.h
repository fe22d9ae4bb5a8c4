/*
 * session_int.h - the inside of a session in strobed (session.h), shared
 * by its files and by nothing else:
 *
 *   session.c         its life: the start (row, backend, spool, ingest,
 *                     snapshot), the status, the stop and the abandon
 *   session_ingest.c  its ingest thread: the passes over the spool, the
 *                     wait for idle CPUs (--ingest-defer), 'strobe mark's
 *                     queued for a pass, the lock the main thread shares
 *                     with it, and the copy a status reads
 *   session_params.c  a start request into struct session_params: events,
 *                     rates, call graph, attribution, --marker probes
 */
#ifndef STROBE_SESSION_INT_H
#define STROBE_SESSION_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include "session.h"

/*
 * Threads: the backend's drain thread fills the spool; the session's
 * ingest thread (ingest_main, session_ingest.c) empties it into the database at its own
 * priority; strobed's main thread serves clients.  lock guards the
 * database connection, the ingest state and the backend's merge: the
 * ingest thread holds it for one pass at a time (DRAIN_BUDGET_NS), the
 * main thread through session_lock.  What 'strobe status' shows is a copy
 * the ingest thread publishes after each pass (pub, under pub_lock, held
 * only to copy), so that a status never waits for a pass.
 */
struct session {
	struct db *db;
	struct db_session row;
	struct backend *b;
	struct ingest *in;
	struct spool *spool;
	int notify_fd;		/* eventfd: the drain thread spooled records */
	uint64_t end_ns;	/* session_quiesce: when sampling ended; 0: on */
	uint64_t refused_seen;	/* session_spool_accepting */
	uint64_t last_status_ns, last_status_samples;

	pthread_t thread;
	int thread_on;
	pid_t thread_tid;	/* for its priority: set by the thread */
	int nice, hurry_nice;	/* its nice, and once a stop waits for it */
	int idle;		/* SCHED_IDLE until a stop waits for it */
	/* --ingest-defer (session_params): on, the lag limit (0: none), and
	 * the spool bytes from which ingest runs on busy CPUs anyway */
	int defer;
	uint64_t defer_max_ns, defer_bytes;
	int busy;		/* the ingest thread's: no CPU was idle at last look */
	uint64_t deferred_since;	/* atomic: ingest waits since (ns), 0: not */
	pthread_mutex_t lock;
	int waiting;		/* main threads waiting for lock (atomic) */
	int wake_fd;		/* eventfd: quit or hurry */
	int done_fd;		/* eventfd: the ingest thread has news */
	int hurry;		/* atomic: a stop waits for ingest */
	/* under lock */
	int quit, failed;
	/* under pub_lock */
	pthread_mutex_t pub_lock;
	int result;		/* the last pass: 0, SESSION_BLOCKED or -1 */
	struct error result_err;
	struct ingest_stats pub_ingest;
	struct spool_stats pub_spool;
	uint64_t pub_late, pub_late_max_ns;
	uint64_t pub_ns;	/* when it was copied */
	/* and the lost records per CPU, of the first nr_pub_cpus CPUs of the
	 * backend's */
	int nr_pub_cpus;
	uint64_t *pub_cpu_lost;
	struct pending_mark {	/* 'strobe mark': stored by the next pass */
		uint64_t time_ns;
		int64_t pid;
		char text[SESSION_MAX_MARK_TEXT + 1];
	} marks[SESSION_MAX_PENDING_MARKS];
	size_t nr_marks;
};

/* session_ingest.c: copy what a status shows (result: the last pass's
 * outcome, e its error), with s->lock held (by the ingest thread, or by
 * the main thread once the ingest thread is parked). */
void session_publish(struct session *s, int result, const struct error *e);
/* session_ingest.c: store the markers 'strobe mark' queued, with s->lock
 * held and a batch open. */
int session_marks_store(struct session *s, struct error *e);
/* session_ingest.c: start the ingest thread; park it (with s->lock not
 * held; nothing when it is not running). */
int session_thread_start(struct session *s, struct error *e);
void session_thread_stop(struct session *s);

#endif
