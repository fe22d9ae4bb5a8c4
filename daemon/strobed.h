/*
 * strobed.h - strobed's private header: the daemon's state (struct daemon)
 * and what its files call of each other.  Not an API: only daemon/'s
 * strobed.c, config.c, clients.c, request.c, stop.c, maint.c and
 * lockdiag.c include it.
 *
 * Threads.  struct daemon belongs to strobed's main thread, the event loop
 * (strobed.c, run): it serves the clients, the timer and the signals, and
 * nothing else reads or writes the struct, so no field has a lock.  Other
 * threads run beside it: per session the backend's drain thread, the
 * session's ingest thread and binhold's thread (session.h), and with
 * --push the pusher's (pusher.h).  They share two things the struct
 * points to:
 *   - db, the database connection: while a session runs its ingest
 *     thread writes through it, and the main thread writes only with the
 *     session's lock held (session_lock, session_trylock; session.h).
 *     With no session, db is the main thread's alone.
 *   - cache, the binary cache: the session's ingest thread fills it; the
 *     main thread prunes its directory (cachegc) only with no session.
 * The pusher has its own read-only connection and copies of its settings.
 */
#ifndef STROBE_STROBED_H
#define STROBE_STROBED_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include "backend.h"
#include "bincache.h"
#include "chclient.h"
#include "db.h"
#include "dblock.h"
#include "proto.h"
#include "recover.h"
#include "retention.h"
#include "session.h"
#include "spool.h"
#include "util.h"

#define DEFAULT_DB	"/var/lib/strobe/strobe.db"
#define DEFAULT_SOCKET	"/run/strobe/strobed.sock"
/* the configuration file read when neither --config nor STROBE_CONFIG names one */
#ifndef STROBE_CONFIG_PATH
#define STROBE_CONFIG_PATH "/etc/strobe/strobed.conf"
#endif
#define DEFAULT_INGEST_NICE 19
#define DEFAULT_MAX_WAL	(64ULL << 20)
/* SQLite's wait for a lock, once started: the event loop must not sleep in
 * it (no other process has a reason to hold the write lock) */
#define BUSY_TIMEOUT_MS	20

/*
 * A client being read: requests arrive on non-blocking sockets and are
 * collected here between epoll wake-ups, so a client that sends its line a
 * byte at a time holds nothing but its own slot.  At most MAX_CLIENTS at
 * once; each has CLIENT_TIMEOUT_MS to complete its line.
 */
#define MAX_CLIENTS 16
#define CLIENT_TIMEOUT_MS 2000
#define MAX_CLIENTS_PER_UID 4	/* so one user cannot take every slot */

struct client {
	int fd;			/* -1: free slot */
	struct ucred cr;
	uint64_t deadline_ns;
	size_t n;
	char buf[PROTO_MAX_LINE];
};

/*
 * The daemon's top-level state: the only mutable state the main thread
 * has.  Each group of fields says which file writes it; the others only
 * read it.  Main thread only (see the top of this file).
 */
struct daemon {
	/* settings (config.c), fixed once the configuration is read */
	const char *socket_path;	/* clients.c sets it for systemd's socket */
	enum backend_kind backend;	/* what sessions capture with */
	struct retention_policy policy;	/* --keep, --max-size */
	uint64_t max_wal;		/* --max-wal */
	struct spool_limits spool;	/* --spool-mem, --spool-disk */
	int ingest_nice;	/* --ingest-nice: added for each session's ingest thread */
	int ingest_idle;	/* --ingest-nice idle: SCHED_IDLE instead */
	int ingest_defer;	/* --ingest-defer: not off */
	int ingest_defer_set;	/* --ingest-defer given (else: see session_params) */
	uint64_t ingest_defer_max_ns;	/* --ingest-defer SECONDS; 0: busy (no limit) */
	const char *push_url;	/* --push (NULL: none) */
	unsigned push_interval;	/* --push-interval */

	/* start-up and the event loop (strobed.c) */
	struct db *db;		/* shared with the session's ingest thread: see above */
	struct dblock lock;	/* DB.lock, held while strobed runs */
	char *cache_dir;
	struct bincache cache;	/* shared with the session's ingest thread */
	char *spool_dir;	/* DB.spool: a directory per session */
	int sig_fd, timer_fd, ep;
	gid_t strobe_gid;
	int have_group;
	int base_nice;		/* strobed's nice: its drain threads' */
	struct pusher *pusher;	/* --push: the thread pushing stopped sessions (NULL: none) */
	int watching;		/* the session's fds are in the epoll set (strobed_watch;
				 * 0 again when a session starts or ends) */

	/* the running session (NULL: none): request.c starts it, stop.c
	 * ends it, strobed.c abandons it when exiting leaves no choice */
	struct session *session;

	/* the control socket and its clients (clients.c) */
	struct client clients[MAX_CLIENTS];
	int listen_fd;
	int spare_fd;		/* /dev/null, closed to accept and refuse a client
				 * when strobed is out of fds; -1: none */
	uint64_t accept_paused;	/* listen_fd out of the epoll set since then */
	unsigned long fd_refused;	/* connections refused for want of an fd */
	int fd_short;		/* out of fds now: logged once until it passes */

	/* another process holds a lock on the database (lockdiag.c) */
	uint64_t blocked_since;	/* CLOCK_MONOTONIC ns; 0: not blocked */
	char holder[256];	/* lockinfo_describe() of the holder, or "" */

	/* stopping and exiting (stop.c; request.c clears ended and stop_err
	 * at a start, ended once a 'stop' told it, and sets stop_fd) */
	char ended[600];	/* why strobed stopped the last session itself */
	struct error stop_err;	/* why ingest failed while a stop waited for it */
	int quit;
	uint64_t quit_deadline;	/* exiting: until when to try storing the session */
	int stop_pending;	/* a 'stop' (or an exit) waiting for ingest to catch
				 * up with the spool, or for the database */
	int stop_drained;	/* ... and ingest caught up (or failed): it waits
				 * for the database only */
	uint64_t quiesce_ns;	/* ... and sampling ends then (0: now) */
	int stop_fd;		/* the client waiting for the reply, or -1 */

	/* between drains: the stamp, retention, the WAL (maint.c) */
	char stamp[DBLOCK_STAMP_MAX];	/* the database file's, as last recorded */
	int reaping;		/* sessions marked 'deleting' remain (request.c's
				 * 'rm' and start-up set it too) */
	int64_t reaped;		/* sessions removed since reaping began */
	int gc_pending;		/* binaries and cache to collect when idle */
	uint64_t next_plan_ns, next_wal_ns, wal_logged;	/* stop.c zeroes next_plan_ns */
	int wal_named;		/* the last WAL message named the holder */
	int over_logged;
	size_t push_held;		/* sessions retention kept for --push */
	/* sessions a strobed that died left running, not yet marked (the
	 * database was locked at start-up): those up to this id */
	int64_t recover_max_id;
};

/* What config.c reads beside struct daemon's settings, for start-up. */
struct config {
	const char *db;		/* the database's path */
	int foreground;
	/* --push: the URL parsed, the credentials read, this host's name */
	struct chclient_url push_url;
	struct chclient_cred push_cred;
	char push_host[256];
};

/* ---- config.c: strobed.conf, the environment and the options ---- */

/*
 * Read the configuration file, STROBE_DB and STROBE_SOCKET, then the
 * command line, each overriding the one before, into d's settings and
 * cfg; check --push's password file and choose the backend.  -1: go on;
 * otherwise strobed exits with that status (--help, --version: 0; bad
 * usage 2, other errors 1, said on stderr).
 */
int config_load(struct daemon *d, struct config *cfg, int argc, char **argv);

/* ---- clients.c: the control socket and its clients ---- */

/* A listening socket systemd passed (socket activation): 1 (d->listen_fd
 * and d->socket_path set), 0 when none was passed, -1 with e set. */
int clients_inherit(struct daemon *d, struct error *e);
/* Bind and listen on d->socket_path, mode 0660 group strobe. */
int clients_listen(struct daemon *d, struct error *e);
/* Event loop: a connection waits on the listening socket. */
void clients_accept(struct daemon *d);
/* The client whose socket is fd, or NULL. */
struct client *clients_find(struct daemon *d, int fd);
/* Event loop: client c is readable. */
void clients_read(struct daemon *d, struct client *c);
/* Each timer tick: the clients out of time, the listening socket back
 * after a pause for want of fds. */
void clients_tick(struct daemon *d);

/* ---- request.c: the request protocol (proto.h) ---- */

/* Answer client c's request line (see clients.c); 1 when the reply is
 * deferred and the connection must stay open (a stop waiting). */
int request_handle(struct daemon *d, struct client *c, const char *why);
/* Send m on fd (blocking, whole) and free it. */
void reply(int fd, struct proto_msg *m);
void reply_error(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- stop.c: stopping the running session, exiting ---- */

/* Stop the running session: 0 when it is stored (m, when given, is the
 * reply), SESSION_BLOCKED when a stop is now pending (stop_retry). */
int stop_session(struct daemon *d, struct proto_msg *m);
/* A pending stop: try again (each tick, and on each wake-up). */
void stop_retry(struct daemon *d);
/* The session failed with e (a full disk, say): stop it, and tell why. */
void stop_failed(struct daemon *d, const struct error *e);
/* Exit: store the running session first (d->quit once done). */
void stop_quit(struct daemon *d);

/* ---- maint.c: between drains ---- */

/* Each timer tick: the stamp, recovery, retention, the WAL. */
void maint_tick(struct daemon *d);
/* Record the database file's stamp in DB.lock if it changed. */
void maint_stamp(struct daemon *d);
/* The spools of sessions whose strobed died counted as lost and removed;
 * -1 with db_busy() when the database is locked. */
int maint_spool_orphans(struct daemon *d, struct error *e);
/* Log the interrupted sessions recover_interrupted marked. */
void maint_log_recovered(const struct recover_session *r, size_t n, size_t shown,
			 uint64_t took_ns);

/* ---- lockdiag.c: a database another process holds locked ---- */

/* Who holds the lock that keeps strobed from writing db, for the log. */
void lockdiag_holder_of(const char *db, char *buf, size_t len);
void lockdiag_holder(const struct daemon *d, char *buf, size_t len);
/* Open the database at start-up (DB_WRITE_TRUSTED when trusted, else
 * DB_WRITE), waiting up to a minute for a lock another process holds, the
 * holder named in the log.  NULL with e set, and waited (len bytes) what
 * to add to e's message when it waited: "" or " (strobed waited ...)". */
struct db *lockdiag_open(const char *path, int trusted, char *waited, size_t len,
			 struct error *e);
/* A write found the database locked: say so once, stop watching the rings. */
void lockdiag_blocked(struct daemon *d);
/* A write went through again. */
void lockdiag_unblocked(struct daemon *d);
/* Reply e's error to fd, naming the holder when it was a lock. */
void lockdiag_reply(struct daemon *d, int fd, const struct error *e);

/* ---- strobed.c: the event loop ---- */

/* Add (or remove) the session's fds to the epoll set, once. */
int strobed_watch(struct daemon *d, int add);

#endif
