/*
 * session.h - one profiling session inside strobed: from a validated start
 * request to the finalised row in the database.  The files behind it, one
 * concern each, are listed in session_int.h.
 */
#ifndef STROBE_SESSION_H
#define STROBE_SESSION_H

#include <stdint.h>
#include "backend.h"
#include "bincache.h"
#include "binhold.h"
#include "db.h"
#include "hashkey.h"
#include "ingest.h"
#include "peer.h"
#include "spool.h"

#define SESSION_MAX_MARKERS	16	/* --marker probes of a session */
#define SESSION_MAX_SITES	64	/* their sites, all together */
#define SESSION_MAX_MARK_TEXT	256	/* bytes of a 'strobe mark' text */
#define SESSION_MAX_PENDING_MARKS 64	/* 'strobe mark's waiting for ingest */

struct session_params {
	char name[128];
	uint32_t owner_uid;
	struct backend_config cfg;
	struct usdt_site *sites;	/* the --marker probes' sites (malloc'ed) */
	int nr_sites;
	int *site_fds;			/* per site: the file its notes were read from */
	int marker_fds[SESSION_MAX_MARKERS];	/* those files, one per --marker */
	char marker_keys[SESSION_MAX_MARKERS][HASHKEY_MAX];	/* their binary keys
						 * (markerparse.h), "" unknown */
	int nr_marker_fds;
	/* the spool between the drain thread and ingest: its bounds, and the
	 * directory its session's own directory (named by the session id) is
	 * made in; NULL: memory only, no crash accounting */
	struct spool_limits spool;
	const char *spool_dir;
	/* the ingest thread's nice (or SCHED_IDLE with ingest_idle); and its
	 * nice once a stop waits for it (strobed's own, SCHED_OTHER) */
	int ingest_nice, base_nice, ingest_idle;
	/* --ingest-defer: while no CPU is idle, ingest waits (the spool holds
	 * the records) until the spool is half full, or for at most
	 * ingest_defer_max_ns at a time (0: no limit); ingest_defer 0: never */
	int ingest_defer;
	uint64_t ingest_defer_max_ns;
};

struct session;

/* Parse and check the events of a start request into p->cfg; errors name
 * the bad event and point at 'strobe list'. */
int session_parse_request(struct session_params *p, const char *events,
			  const char *sampler, const char *freq, const char *period,
			  const char *pages, struct error *e);

/* The --call-graph and --keep-stacks of a start request (NULL or "":
 * none) into p->cfg; call after session_parse_request.  keep_stacks is
 * "1" or "0" (NULL: 0); whether the requester may keep stacks (root only)
 * is the start request's check, with the ring cap (daemon/request.c). */
int session_parse_call_graph(struct session_params *p, const char *call_graph,
			     const char *keep_stacks, struct error *e);

/* The --attribution of a start request ("exact", "sample"; NULL or "":
 * sample) into p->cfg.exact; call after session_parse_request.  kind: the
 * backend (exact needs perf's, and counting events). */
int session_parse_attribution(struct session_params *p, const char *attribution,
			      enum backend_kind kind, struct error *e);

/*
 * Resolve the --marker specs (PATH:PROVIDER:NAME, PATH absolute) of a
 * start request by who into p->sites and p->cfg; call after
 * session_parse_request.  Each PATH is opened once, with who's rights
 * (peer_open_file), and everything after works on that open file: its
 * notes are read from it, its hash stored from it, and the backend places
 * the uprobes on it through /proc/self/fd/N, so swapping PATH for a
 * symlink meanwhile changes nothing.  For anyone but root, setuid and
 * setgid files and files with capabilities are refused.  Errors name the
 * spec.
 */
int session_parse_markers(struct session_params *p, const char *const *specs, int n,
			  const struct peer *who, struct error *e);
/* Free what session_parse_markers allocated and close its files (the
 * uprobes hold their files themselves once placed). */
void session_params_free(struct session_params *p);

/* Store the session row, open the backend, snapshot the kernel and the
 * running processes, enable sampling, and start the session's ingest
 * thread: from then on it moves what the drain thread spooled into the
 * database, at nice p->ingest_nice, one pass (at most DRAIN_BUDGET_NS) at
 * a time with the session's lock held. */
struct session *session_start(struct db *db, struct bincache *cache,
			      const struct session_params *p, struct error *e);

/* The session's lock: the caller's turn on the database connection, the
 * ingest state and the backend, between two passes of the ingest thread.
 * The main thread takes it around everything else it writes while a
 * session runs ('strobe rm', retention, checkpoints).  session_lock waits
 * for the pass under way, which at the ingest thread's priority on busy
 * CPUs may take seconds; session_trylock does not wait (-1: taken), so
 * what it guards waits until ingest has caught up with the spool. */
void session_lock(struct session *s);
int session_trylock(struct session *s);
void session_unlock(struct session *s);

/* 'strobe mark TEXT': a marker of kind "mark" at time_ns (the client's
 * CLOCK_MONOTONIC; now when 0 or outside the session so far), by pid,
 * queued for the ingest thread's next pass (it never waits for a pass).
 * Errors: empty, too long or control characters in text; more than
 * SESSION_MAX_PENDING_MARKS waiting. */
int session_mark(struct session *s, const char *text, uint64_t time_ns, int64_t pid,
		 struct error *e);

/* session_poll and session_stop: another process holds a lock on the
 * database, so nothing was done; the records wait in the spool (then the
 * rings: the kernel counts what does not fit as lost) and ingest retries
 * every 100 ms. */
#define SESSION_BLOCKED 1

/* The outcome of the ingest thread's last pass, without waiting: 0,
 * SESSION_BLOCKED, or -1 on an error that ends the session (e says which;
 * the thread then ingests no more).  Call when the session's fd is
 * readable (the outcome changed) and on the timer. */
int session_poll(struct session *s, struct error *e);

/* A stop waits for ingest: the ingest thread takes strobed's own priority
 * again, and posts the session's fd after every pass. */
void session_hurry(struct session *s);

/* 1 while records wait in the spool for ingest (a stop waits for them). */
int session_behind(struct session *s);

/* End the sampling now (the session's end time), ahead of session_stop:
 * ingest then catches up with what was spooled, the events off, instead
 * of with the events still sampling it. */
void session_quiesce(struct session *s);

/* 1 when the spool refused nothing since the last call (the first call
 * after the start counts from the start): the rings were emptied, and a
 * loss the kernel still had to report is reported by now.  A stop may
 * quiesce then; while the spool refuses, the events must stay on until
 * ingest makes room, or the kernel's LOST record would never be written. */
int session_spool_accepting(struct session *s);

/* The fds to poll for session_poll: one eventfd, set by the ingest thread. */
size_t session_fds(struct session *s, const int **fds);
int64_t session_status_id(const struct session *s);
/* The uid that started the session (SO_PEERCRED of its 'start'). */
uint32_t session_owner_uid(const struct session *s);

/*
 * The CPUs whose samples and lost records a status gives one by one: the
 * first this many of the session's.  The status reply carries them as
 * three lists of numbers (daemon/request.c), which must fit in one protocol line
 * (PROTO_MAX_LINE, 64 KiB) with the other fields: 1024 CPUs of two
 * 20-digit counts and a CPU number each take about 48 KiB.
 */
#define SESSION_STATUS_MAX_CPUS	1024

struct session_status {
	int64_t id;
	uint64_t samples, lost, throttled;
	/*
	 * Per CPU: the samples taken from its ring so far (backend_cpu_samples:
	 * sampled, maybe not stored yet), and its records lost as counted in
	 * lost (by ingest, as of its last pass).  Over all the session's
	 * CPUs they sum to taken (read with them) and to lost.
	 */
	uint64_t taken;
	int nr_cpus;		/* the session's CPUs */
	int nr_cpu_counts;	/* of them in cpu[] (at most SESSION_STATUS_MAX_CPUS) */
	int cpu[SESSION_STATUS_MAX_CPUS];
	uint64_t cpu_samples[SESSION_STATUS_MAX_CPUS], cpu_lost[SESSION_STATUS_MAX_CPUS];
	uint64_t elapsed_ns;
	double rate;		/* samples/s over the last status interval */
	/* driver backend, after stop: overflow handler cost */
	int have_handler;
	uint64_t handler_samples, handler_dropped, handler_avg_ns, handler_max_ns;
	/* after stop: records the time merge delivered out of order */
	uint64_t late, late_max_ns;
	/* what the session's processes cost strobed (see ingest.h) */
	struct ingest_stats ingest;
	/* the spool: what waits for ingest, and how late it is */
	struct spool_stats spool;
	uint64_t lag_records, lag_ns;
	/* ingest waits because no CPU is idle (--ingest-defer): since when
	 * (CLOCK_MONOTONIC ns), 0: it does not */
	uint64_t deferred_since_ns;
	/* the files of executable mappings held from drain to ingest */
	struct binhold_stats held;
};
void session_get_status(struct session *s, struct session_status *st);

/* Mark s as cut short by an error (e.g. disk full): session_stop then
 * stores it as 'aborted', not 'done', so reports say data is missing. */
void session_fail(struct session *s);

/* Disable, drain, finalise; frees s. st receives the final figures.
 * SESSION_BLOCKED: the database's write lock is held elsewhere, and s
 * goes on untouched (still running, not freed): call again later. */
int session_stop(struct session *s, struct session_status *st, struct error *e);

/* Stop sampling and free s without storing anything more: for a strobed
 * that must exit while the database stays locked.  The session's row
 * stays 'running', and the next strobed marks it interrupted. */
void session_abandon(struct session *s);

#endif
