/*
 * strobed.c - the strobe daemon: owns the database, listens on the control
 * socket, runs one session at a time and drains its buffers into SQLite.
 *
 * One thread.  An epoll loop waits on the control socket, a signalfd
 * (SIGTERM/SIGINT stop cleanly), a 100 ms timerfd and the session's ring
 * fds (woken at the ring's watermark), and drains on each wake-up.
 *
 * Only root and members of group 'strobe' may talk to it: the socket is
 * mode 0660 group strobe, and each peer's credentials (SO_PEERCRED and its
 * supplementary groups) are checked again on accept.
 *
 * One strobed per database: it takes DB.lock (dblock.h) before it opens
 * the database, and marks the sessions a strobed that died left running
 * as interrupted (recover.h) before it listens.  Another process may hold
 * a lock on the database (any member of group strobe can take one on its
 * files): strobed then never waits in SQLite, it leaves the records in the
 * rings and tries again on the next tick, naming the holder in its log.
 * Between drains the timer tick removes sessions marked for removal in
 * bounded batches (retention.h), applies --keep and --max-size, keeps the
 * WAL under --max-wal when it can, and records the database's stamp.
 *
 * Settings come from the configuration file (--config, STROBE_CONFIG or
 * STROBE_CONFIG_PATH: lib/base/conffile.h), then STROBE_DB/STROBE_SOCKET,
 * then the options; one function (apply_option) checks them all.  Under
 * systemd (dist/systemd/strobed.socket) the listening socket is passed in
 * as fd 3 and strobed neither binds nor removes it.
 */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <libgen.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "bincache.h"
#include "cachegc.h"
#include "conffile.h"
#include "chchild.h"
#include "pusher.h"
#include "countsave.h"
#include "countstore.h"
#include "db.h"
#include "dblock.h"
#include "dbdir.h"
#include "lockinfo.h"
#include "log.h"
#include "proto.h"
#include "recover.h"
#include "retention.h"
#include "session.h"
#include "strobe_dev.h"
#include "markerparse.h"
#include "selfexec.h"
#include "uworker.h"

#define DEFAULT_DB	"/var/lib/strobe/strobe.db"
#define DEFAULT_SOCKET	"/run/strobe/strobed.sock"
/* the configuration file read when neither --config nor STROBE_CONFIG names one */
#ifndef STROBE_CONFIG_PATH
#define STROBE_CONFIG_PATH "/etc/strobe/strobed.conf"
#endif
#define CLIENT_TIMEOUT_MS 2000
/* SQLite's wait for a lock, once started: the event loop must not sleep in
 * it (no other process has a reason to hold the write lock) */
#define BUSY_TIMEOUT_MS	20
/* exiting while the database stays locked: how long to try to store the
 * running session before leaving it to the next strobed */
#define QUIT_WAIT_MS	10000
/* rows removed per retention step: while a session runs, one step a tick;
 * otherwise steps for up to REAP_IDLE_MS a tick */
#define REAP_ROWS_RUNNING 5000
#define REAP_ROWS_IDLE	20000
#define REAP_IDLE_MS	50
#define PLAN_INTERVAL_MS 60000	/* --keep / --max-size */
#define WAL_CHECK_MS	1000
#define DEFAULT_INGEST_NICE 19
#define QUIESCE_DELAY_NS (50 * 1000 * 1000ULL)
#define DEFAULT_MAX_WAL	(64ULL << 20)

/* The daemon's top-level state: the only mutable state it has. */
/*
 * A client being read: requests arrive on non-blocking sockets and are
 * collected here between epoll wake-ups, so a client that sends its line a
 * byte at a time holds nothing but its own slot.  At most MAX_CLIENTS at
 * once; each has CLIENT_TIMEOUT_MS to complete its line.
 */
#define MAX_CLIENTS 16
/* strobed's soft RLIMIT_NOFILE is raised to its hard limit, up to this */
#define NOFILE_WANT 65536
/* out of fds (EMFILE, ENFILE) with no spare fd: how long the listening
 * socket is left unwatched, instead of waking on it in a loop */
#define ACCEPT_PAUSE_NS (500 * 1000000ULL)
#define MAX_CLIENTS_PER_UID 4	/* so one user cannot take every slot */

struct client {
	int fd;			/* -1: free slot */
	struct ucred cr;
	uint64_t deadline_ns;
	size_t n;
	char buf[PROTO_MAX_LINE];
};

struct daemon {
	struct client *clients;	/* MAX_CLIENTS slots */
	struct db *db;
	struct dblock lock;	/* DB.lock, held while strobed runs */
	char stamp[DBLOCK_STAMP_MAX];	/* the database file's, as last recorded */
	char *cache_dir;
	struct bincache cache;
	const char *socket_path;
	int listen_fd, sig_fd, timer_fd, ep;
	int spare_fd;		/* /dev/null, closed to accept and refuse a client
				 * when strobed is out of fds; -1: none */
	uint64_t accept_paused;	/* listen_fd out of the epoll set since then */
	unsigned long fd_refused;	/* connections refused for want of an fd */
	int fd_short;		/* out of fds now: logged once until it passes */
	gid_t strobe_gid;
	int have_group;
	struct session *session;
	enum backend_kind backend;	/* what sessions capture with */
	char ended[600];	/* why strobed stopped the last session itself */
	struct error stop_err;	/* why ingest failed while a stop waited for it */
	int quit;
	uint64_t quit_deadline;	/* exiting: until when to try storing the session */
	int watching;		/* the session's ring fds are in the epoll set */
	/* another process holds a lock on the database */
	uint64_t blocked_since;	/* CLOCK_MONOTONIC ns; 0: not blocked */
	char holder[256];	/* lockinfo_describe() of the holder, or "" */
	/* a 'stop' (or an exit) waiting for the database */
	int stop_pending;
	int stop_drained;	/* ... and drained since the lock went */
	uint64_t quiesce_ns;	/* ... and sampling ends then (0: now) */
	int stop_fd;		/* the client waiting for the reply, or -1 */
	/* retention and the WAL */
	struct retention_policy policy;
	uint64_t max_wal;
	struct spool_limits spool;	/* --spool-mem, --spool-disk */
	int base_nice;		/* strobed's nice: its drain threads' */
	int ingest_nice;	/* --ingest-nice: added for each session's ingest thread */
	int ingest_idle;	/* --ingest-nice idle: SCHED_IDLE instead */
	int ingest_defer;	/* --ingest-defer: not off */
	int ingest_defer_set;	/* --ingest-defer given (else: see session_params) */
	uint64_t ingest_defer_max_ns;	/* --ingest-defer SECONDS; 0: busy (no limit) */
	char *spool_dir;		/* DB.spool: a directory per session */
	int reaping;		/* sessions marked 'deleting' remain */
	int64_t reaped;		/* sessions removed since reaping began */
	int gc_pending;		/* binaries and cache to collect when idle */
	uint64_t next_plan_ns, next_wal_ns, wal_logged;
	int wal_named;		/* the last WAL message named the holder */
	int over_logged;
	size_t push_held;		/* sessions retention kept for --push */
	/* sessions a strobed that died left running, not yet marked (the
	 * database was locked at start-up): those up to this id */
	int64_t recover_max_id;
	/* --push: the thread pushing stopped sessions (NULL: none) */
	struct pusher *pusher;
	const char *push_url;
	unsigned push_interval;
};

/* Tracepoint events need tracefs; mount it where the kernel expects it if
 * nothing has (systemd does this at boot, containers often do not). */
static void tracefs_ensure(void)
{
	if (access("/sys/kernel/tracing/events", F_OK) == 0 ||
	    access("/sys/kernel/debug/tracing/events", F_OK) == 0)
		return;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0)
		daemon_log("mounted tracefs on /sys/kernel/tracing for tracepoint events");
}

static void usage(FILE *f)
{
	fputs("usage: strobed [--config FILE] [--db PATH] [--socket PATH] [-f|--foreground]\n"
	      "               [--backend auto|perf|driver] [--keep DAYS] [--max-size SIZE]\n"
	      "               [--max-wal SIZE] [--spool-mem SIZE] [--spool-disk SIZE]\n"
	      "               [--ingest-nice N|idle] [--push URL|none] [--push-interval S]\n"
	      "               [--push-password-file FILE|none]\n"
	      "       strobed --version | --help\n", f);
}

/* --help: every option, one per line (doc/man/strobed.8.scd follows it). */
static void help(void)
{
	usage(stdout);
	fputs("The strobe daemon: runs system-wide profiling sessions for the 'strobe' command\n"
	      "and stores them in a SQLite database.  Runs as root; root and members of group\n"
	      "strobe may use its socket.  Options override the configuration file; STROBE_DB and\n"
	      "STROBE_SOCKET override the file's db and socket.\n", stdout);
	printf("  --config FILE        read settings from FILE: lines 'key = value', the keys the\n"
	       "                       options --db to --push-password-file (default: env STROBE_CONFIG,\n"
	       "                       else %s if it exists)\n", STROBE_CONFIG_PATH);
	fputs("  --db PATH            the database (default " DEFAULT_DB ")\n"
	      "  --socket PATH        the control socket (default " DEFAULT_SOCKET "; ignored when\n"
	      "                       systemd passes it, strobed.socket)\n"
	      "  -f, --foreground     stay in the foreground and log to stderr (default: detach, log to DB.log)\n"
	      "  --backend auto|perf|driver  capture with perf_event_open or the strobe driver\n"
	      "                       (" STROBE_DEV_PATH "); auto (default): the driver when it is loaded\n"
	      "  --keep DAYS          remove finished sessions that ended more than DAYS ago (default: keep)\n"
	      "  --max-size SIZE      remove the oldest finished sessions while the database and its\n"
	      "                       cache take more than SIZE (500M, 2G; default: no limit)\n"
	      "  --max-wal SIZE       keep the write-ahead log under SIZE when it can (default 64M)\n"
	      "  --spool-mem SIZE     memory for records ingest has not caught up with (default 256M;\n"
	      "                       0: none)\n"
	      "  --spool-disk SIZE    disk (DB.spool/) for them once memory is full (default 4G; 0: none)\n"
	      "  --ingest-nice N|idle nice of ingest above strobed's own, 0 to 19 (default 19), or idle\n"
	      "                       (SCHED_IDLE)\n"
	      "  --ingest-defer busy|SECONDS|off  while no CPU is idle, ingest waits and the spool\n"
	      "                       holds the records, until it is half full (busy, the default),\n"
	      "                       or also at most SECONDS behind (1 to 86400; with --push and no\n"
	      "                       --ingest-defer: --push-interval); off: never waits\n"
	      "  --push URL|none      push each session to ClickHouse, in intervals while it runs\n"
	      "                       and the rest when it stops (default none)\n"
	      "                       (http://HOST:8123/?database=strobe; doc/FLEET.md)\n"
	      "  --push-interval S    with --push: push an interval of each running session and\n"
	      "                       look for stopped ones every S seconds,\n"
	      "                       1 to 86400 (default 60)\n"
	      "  --push-password-file FILE|none  with --push: the ClickHouse password, first\n"
	      "                       line of FILE (an absolute path), which only its owner may\n"
	      "                       read (default none: env\n"
	      "                       STROBE_CLICKHOUSE_PASSWORD_FILE; user: STROBE_CLICKHOUSE_USER)\n"
	      "  -h, --help           show this help\n"
	      "  --version            print strobed's version\n", stdout);
}

/*
 * Give the binary cache directory to group strobe, setgid so that entries
 * it gets later stay readable by the group.  Through a handle opened with
 * O_NOFOLLOW and checked to be root's own directory: when --db lies in a
 * directory others can write, DB.cache could be a symlink planted to make
 * strobed chown and fill another directory.
 */
static int cache_dir_claim(const struct daemon *d, const char *dir, struct error *e)
{
	struct stat st;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return error_set(e, "cache directory %s: %s (it must be a directory of "
				 "root's, not a symlink)", dir, strerror(errno));
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
		close(fd);
		return error_set(e, "cache directory %s belongs to uid %u, not to strobed's: "
				 "remove it or choose another --db", dir, (unsigned)st.st_uid);
	}
	if (d->have_group && (fchown(fd, 0, d->strobe_gid) < 0 || fchmod(fd, 02750) < 0))
		daemon_log("cannot give %s to group strobe: %s", dir, strerror(errno));
	close(fd);
	return 0;
}

static int listen_socket(struct daemon *d, struct error *e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *dir = xstrdup(d->socket_path);
	mode_t old_mask;
	int fd, ret;

	if (strlen(d->socket_path) >= sizeof(sa.sun_path))
		return error_set(e, "socket path too long: %s", d->socket_path);
	mkdir_p(dirname(dir), 0755);
	free(dir);
	strcpy(sa.sun_path, d->socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(e, "socket: %s", strerror(errno));
	/* a live daemon answers; a stale socket file is replaced */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		return error_set(e, "another strobed is already listening on %s: stop it "
				 "first or use --socket", d->socket_path);
	}
	unlink(d->socket_path);
	old_mask = umask(0117);
	ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old_mask);
	if (ret < 0) {
		close(fd);
		return error_set(e, "cannot bind %s: %s", d->socket_path, strerror(errno));
	}
	/* The socket file was created 0660 by bind() under umask 0117 (set
	 * below); lchown, not chown: in a shared directory the name could
	 * already be a symlink to something else by now. */
	if (d->have_group && lchown(d->socket_path, 0, d->strobe_gid) < 0) {
		close(fd);
		return error_set(e, "cannot set the mode of %s: %s", d->socket_path, strerror(errno));
	}
	if (listen(fd, 16) < 0) {
		close(fd);
		return error_set(e, "listen: %s", strerror(errno));
	}
	d->listen_fd = fd;
	return 0;
}

/* Is the peer on sock root or a member of group strobe (primary or
 * supplementary)?  The groups are those SO_PEERGROUPS gives (peer.h): the
 * peer's as it connected, not what /proc/PID says now of a pid that may
 * have exited and been reused. */
static int peer_allowed(const struct daemon *d, int sock, const struct ucred *cr)
{
	struct peer who;
	int ok = 0;

	if (cr->uid == 0)
		return 1;
	if (!d->have_group)
		return 0;
	if (cr->gid == d->strobe_gid)
		return 1;
	peer_init(&who, sock, cr->uid, cr->gid);
	for (int i = 0; i < who.ngroups && !ok; i++)
		ok = who.groups[i] == d->strobe_gid;
	peer_free(&who);
	return ok;
}

static void reply(int fd, struct proto_msg *m)
{
	char *line = proto_format(m);
	size_t len = strlen(line), off = 0;

	while (off < len) {
		ssize_t w = write(fd, line + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += w;
	}
	free(line);
	proto_free(m);
}

/* key=N,N,...: n numbers (unsigned, or CPU numbers when cpus is set). */
static void add_list(struct proto_msg *m, const char *key, const uint64_t *v,
		     const int *cpus, int n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;
	for (int i = 0; i < n; i++)
		fprintf(f, i ? ",%llu" : "%llu",
			cpus ? (unsigned long long)cpus[i] : (unsigned long long)v[i]);
	if (fclose(f) == 0)
		proto_add(m, key, buf);
	free(buf);
}

/* The database's size on disk as its file and WAL (st_size; a file that is
 * not there counts 0), for status: its caller may not be able to stat it. */
static void add_db_size(struct proto_msg *m, const char *path)
{
	char *wal = xasprintf("%s-wal", path);
	struct stat st;
	uint64_t db = 0, w = 0;

	if (stat(path, &st) == 0)
		db = (uint64_t)st.st_size;
	if (stat(wal, &st) == 0)
		w = (uint64_t)st.st_size;
	free(wal);
	proto_addf(m, "db_bytes", "%llu", (unsigned long long)(db + w));
	proto_addf(m, "db_wal_bytes", "%llu", (unsigned long long)w);
}

static void reply_error(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply_error(int fd, const char *fmt, ...)
{
	struct proto_msg m;
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	proto_init(&m, "error");
	proto_add(&m, "msg", msg);
	reply(fd, &m);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Add (or remove) the session's ring fds to the epoll set, once. */
static int watch_session(struct daemon *d, int add)
{
	const int *fds;
	size_t n;
	int ret = 0;

	if (!d->session || d->watching == add)
		return 0;
	n = session_fds(d->session, &fds);
	for (size_t i = 0; i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[i] };

		if (epoll_ctl(d->ep, add ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fds[i], &ev) < 0)
			ret = -1;
	}
	d->watching = add;
	return ret;
}

/*
 * Who holds a lock that keeps strobed from writing: SQLite's WAL write
 * lock (byte 120 of DB-shm) first, then any other byte of DB-shm (the
 * checkpoint, recovery and read-mark locks), then the database file.
 */
static void find_holder_of(const char *db, char *buf, size_t len)
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

static void find_holder(const struct daemon *d, char *buf, size_t len)
{
	find_holder_of(db_path(d->db), buf, len);
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
	uint64_t now = now_ns();

	if (!w->since)
		w->since = now;
	if (!w->holder[0] && now - w->since > 500000000ULL) {
		find_holder_of(w->db, w->holder, sizeof(w->holder));
		daemon_log("waiting for the database: it is locked by %s", w->holder);
	}
	if (now - w->since > START_WAIT_MS * 1000000ULL)
		return 0;
	usleep(10000);
	return 1;
}

/* A write found the database locked by another process: say so once,
 * with the holder, and stop watching the rings (the timer retries). */
static void db_blocked(struct daemon *d)
{
	if (d->blocked_since)
		return;
	d->blocked_since = now_ns();
	find_holder(d, d->holder, sizeof(d->holder));
	watch_session(d, 0);
	if (d->session)
		daemon_log("session %lld: the database is locked by %s: its records wait in the "
		       "ring buffers (the kernel counts what does not fit as lost); retrying "
		       "every 100 ms", (long long)session_status_id(d->session), d->holder);
	else
		daemon_log("the database is locked by %s: retrying every 100 ms", d->holder);
}

/* A write went through again: say for how long it could not. */
static void db_unblocked(struct daemon *d)
{
	if (!d->blocked_since)
		return;
	daemon_log("the database is writable again after %.1f s (it was locked by %s)",
	       (now_ns() - d->blocked_since) / 1e9, d->holder);
	d->blocked_since = 0;
	d->holder[0] = 0;
	if (d->session && !d->stop_pending)
		watch_session(d, 1);
}

/* After a refusal of SQLite's: e's message, with the holder when it was
 * a lock another process holds. */
static void lock_error(struct daemon *d, int fd, const struct error *e)
{
	char who[256];

	if (!db_busy(d->db) || !strstr(e->msg, "is locked")) {
		reply_error(fd, "%s", e->msg);
		return;
	}
	find_holder(d, who, sizeof(who));
	reply_error(fd, "the database %s is locked by %s: try again when it lets go",
		    db_path(d->db), who);
}

/*
 * Stop the running session: 0 when it is stored (m, when given, is the
 * reply), SESSION_BLOCKED when the database is locked by another process
 * and the session goes on; a stop is then pending and the timer retries.
 */
static int stop_session(struct daemon *d, struct proto_msg *m)
{
	struct session_status st;
	struct error e;
	int ret;

	/* ingest catches up first (stop_retry), the events off after a tick */
	if (!d->stop_pending && session_behind(d->session)) {
		d->stop_pending = 1;
		d->stop_drained = 0;
		d->quiesce_ns = now_ns() + QUIESCE_DELAY_NS;
		session_spool_accepting(d->session);
		return SESSION_BLOCKED;
	}
	ret = session_stop(d->session, &st, &e);
	if (ret == SESSION_BLOCKED) {
		d->stop_pending = 1;
		d->stop_drained = 0;
		db_blocked(d);
		return SESSION_BLOCKED;
	}
	if (ret == 0 && d->stop_err.msg[0]) {
		/* ingest failed while the stop waited (a full disk, say): what
		 * it had not stored is not in the session, which is aborted
		 * (session_fail), and the stop says why, not "ok" */
		e = d->stop_err;
		ret = -1;
	}
	d->stop_err.msg[0] = 0;
	db_unblocked(d);
	d->session = NULL;
	pusher_kick(d->pusher);
	d->watching = 0;
	d->stop_pending = 0;
	d->stop_drained = 0;
	d->quiesce_ns = 0;
	if (ret < 0)
		daemon_log("session %lld stopped with an error: %s", (long long)st.id, e.msg);
	else
		daemon_log("session %lld stopped: %llu samples, %llu lost, %llu out of time order "
		       "(up to %llu ns late)", (long long)st.id,
		       (unsigned long long)st.samples, (unsigned long long)st.lost,
		       (unsigned long long)st.late, (unsigned long long)st.late_max_ns);
	if (st.ingest.binaries_over || st.ingest.comms_over || st.ingest.collisions)
		daemon_log("session %lld: %llu mappings past the limit of binaries, %llu names past "
		       "the limit of names, %llu build-ids already cached with other contents "
		       "(keyed by contents instead); %llu MB of binaries read", (long long)st.id,
		       (unsigned long long)st.ingest.binaries_over,
		       (unsigned long long)st.ingest.comms_over,
		       (unsigned long long)st.ingest.collisions,
		       (unsigned long long)(st.ingest.bytes_read >> 20));
	if (st.ingest.read_refused)
		daemon_log("session %lld: %llu binaries not read for the budget of %llu MiB of "
			   "binaries a session reads (%s)", (long long)st.id,
			   (unsigned long long)st.ingest.read_refused,
			   (unsigned long long)(INGEST_READ_MAX >> 20), st.ingest.read_refusals);
	if (st.ingest.share_refused)
		daemon_log("session %lld: %llu names, binaries, cgroups or stacks refused past a "
			   "user's share (a quarter of each table, root's unlimited): %s",
			   (long long)st.id, (unsigned long long)st.ingest.share_refused,
			   st.ingest.share_refusals);
	if (st.ingest.cgroups_over || st.ingest.cgroup_unknown || st.ingest.cgroup_moved ||
	    st.ingest.jit_roots_over)
		daemon_log("session %lld: %llu cgroups past the limit (not stored), %llu processes "
		       "whose cgroup could not be read, %llu processes that changed cgroup, %llu "
		       "JIT processes of other mount namespaces past the limit of held /tmp "
		       "handles", (long long)st.id, (unsigned long long)st.ingest.cgroups_over,
		       (unsigned long long)st.ingest.cgroup_unknown,
		       (unsigned long long)st.ingest.cgroup_moved,
		       (unsigned long long)st.ingest.jit_roots_over);
	if (st.held.over)
		daemon_log("session %lld: %llu executable mappings left without a held file past "
		       "the limits of files and records held from drain to ingest (their "
		       "binaries read when ingest reached them, if still there); %llu files "
		       "held at most", (long long)st.id, (unsigned long long)st.held.over,
		       (unsigned long long)st.held.files_peak);
	if (st.ingest.stacks || st.ingest.stacks_over || st.ingest.unwind_failures)
		daemon_log("session %lld: %llu distinct call stacks, %llu past the limit (their "
		       "%llu samples stored without a stack), %llu samples whose user stack "
		       "unwinding stopped early (unwind_errors says where)", (long long)st.id,
		       (unsigned long long)st.ingest.stacks,
		       (unsigned long long)st.ingest.stacks_over,
		       (unsigned long long)st.ingest.samples_no_stack,
		       (unsigned long long)st.ingest.unwind_failures);
	if (st.ingest.unwinder_crashes || st.ingest.unwinder_hangs)
		daemon_log("session %lld: the unwind worker crashed %llu times and hung %llu "
			   "(killed); %llu workers started (at most %d new): the samples in flight "
			   "were counted as 'unwinder failed'", (long long)st.id,
			   (unsigned long long)st.ingest.unwinder_crashes,
			   (unsigned long long)st.ingest.unwinder_hangs,
			   (unsigned long long)st.ingest.unwinder_started,
			   UWORKER_KINDS * (UWORKER_RESTARTS + 1));
	if (st.ingest.parse_failed)
		daemon_log("session %lld: the ingest worker did not parse %llu files (crash, hang "
			   "or an answer that did not make sense): those binaries were keyed by "
			   "their contents, those JIT files stored without symbols",
			   (long long)st.id, (unsigned long long)st.ingest.parse_failed);
	if (st.ingest.worker_failed[0] || st.ingest.worker_failed[1] || st.ingest.worker_failed[2])
		daemon_log("session %lld: the ingest worker failed (crash, hang, bad answer) %llu "
			   "times on unwinding, %llu on build-ids, %llu on JIT files; a kind is "
			   "not asked again after %d: %llu, %llu, %llu requests refused",
			   (long long)st.id, (unsigned long long)st.ingest.worker_failed[0],
			   (unsigned long long)st.ingest.worker_failed[1],
			   (unsigned long long)st.ingest.worker_failed[2], UWORKER_RESTARTS + 1,
			   (unsigned long long)st.ingest.worker_refused[0],
			   (unsigned long long)st.ingest.worker_refused[1],
			   (unsigned long long)st.ingest.worker_refused[2]);
	if (st.ingest.switch_reads)
		daemon_log("session %lld: --attribution exact: %llu counter reads at context "
		       "switches, %llu threads' last runs stored after their last sample",
		       (long long)st.id, (unsigned long long)st.ingest.switch_reads,
		       (unsigned long long)st.ingest.exact_tails);
	if (st.have_handler) {
		daemon_log("session %lld: driver overflow handler %llu ns per sample on average, "
		       "%llu ns at most, over %llu samples", (long long)st.id,
		       (unsigned long long)st.handler_avg_ns, (unsigned long long)st.handler_max_ns,
		       (unsigned long long)st.handler_samples);
		daemon_log("session %lld: driver STATS %llu samples written, %llu dropped",
		       (long long)st.id, (unsigned long long)(st.handler_samples - st.handler_dropped),
		       (unsigned long long)st.handler_dropped);
	}
	/* what waited for the end of the session (retention, the cache):
	 * the next tick */
	d->next_plan_ns = 0;
	if (!m)
		return 0;
	if (ret < 0) {
		proto_init(m, "error");
		proto_add(m, "msg", d->ended[0] ? d->ended : e.msg);
		d->ended[0] = 0;	/* told */
		return 0;
	}
	proto_init(m, "ok");
	proto_addf(m, "session", "%lld", (long long)st.id);
	proto_addf(m, "samples", "%llu", (unsigned long long)st.samples);
	proto_addf(m, "lost", "%llu", (unsigned long long)st.lost);
	proto_addf(m, "throttled", "%llu", (unsigned long long)st.throttled);
	proto_addf(m, "unscheduled_ns", "%llu", (unsigned long long)st.ingest.unscheduled_ns);
	proto_addf(m, "late", "%llu", (unsigned long long)st.late);
	proto_addf(m, "late_max_ns", "%llu", (unsigned long long)st.late_max_ns);
	proto_addf(m, "uncertain", "%llu", (unsigned long long)st.ingest.uncertain);
	proto_addf(m, "duration_ns", "%llu", (unsigned long long)st.elapsed_ns);
	return 0;
}

/*
 * The ring buffers are pinned kernel memory, per CPU, and perf does not apply
 * kernel.perf_event_mlock_kb to root, which strobed is.  So strobed applies
 * a limit itself to everyone but root: per CPU, the larger of that sysctl
 * and MEMBER_RING_BYTES (the default ring, 512 pages, fits under it).
 */
#define MEMBER_RING_BYTES (8ULL << 20)

static int ring_over_limit(const struct ucred *cr, const struct backend_config *cfg,
			   struct error *e)
{
	char *s = file_read_all("/proc/sys/kernel/perf_event_mlock_kb", NULL);
	uint64_t limit = MEMBER_RING_BYTES, kb = 0, want;
	long pg = sysconf(_SC_PAGESIZE);

	if (s && parse_u64(strtok(s, "\n"), &kb) == 0 && kb * 1024 > limit)
		limit = kb * 1024;
	free(s);
	if (cr->uid == 0 || !cfg->buffer_pages || pg <= 0)
		return 0;
	want = (uint64_t)cfg->buffer_pages * (uint64_t)pg;
	if (want <= limit)
		return 0;
	return error_set(e, "a ring of %u pages per CPU (%llu KiB) is above the %llu KiB "
			 "that users other than root may pin (the larger of "
			 "kernel.perf_event_mlock_kb and %llu KiB): lower -m",
			 cfg->buffer_pages, (unsigned long long)(want >> 10),
			 (unsigned long long)(limit >> 10),
			 (unsigned long long)(MEMBER_RING_BYTES >> 10));
}

/* --keep-stacks is root's: a raw copy holds the registers and stack bytes
 * of whatever process was sampled, anyone's (rawstk.h). */
static int keep_stacks_refused(const struct ucred *cr, const struct backend_config *cfg,
			       struct error *e)
{
	if (!cfg->keep_stacks || cr->uid == 0)
		return 0;
	return error_set(e, "permission denied: --keep-stacks is root's: raw stack copies hold "
			 "other users' stack bytes and registers (secrets); record as root, "
			 "or without --keep-stacks");
}

/* May this peer stop or mark the running session?  Root, or whoever
 * started it: members of group strobe do not control each other's. */
static int peer_owns(const struct daemon *d, const struct ucred *cr, int fd)
{
	uint32_t owner = session_owner_uid(d->session);

	if (cr->uid == 0 || cr->uid == owner)
		return 1;
	reply_error(fd, "permission denied: session %lld belongs to uid %u; only it and "
		    "root may stop or mark it", (long long)session_status_id(d->session),
		    (unsigned)owner);
	return 0;
}

static void handle_start(struct daemon *d, int fd, const struct proto_msg *req,
			 const struct ucred *cr)
{
	const char *markers[SESSION_MAX_MARKERS + 1];
	struct session_params p;
	struct proto_msg m;
	struct error e;
	struct peer who;
	int nm = 0, r;

	if (d->session && d->stop_pending) {
		reply_error(fd, "session %lld is still being stopped: strobed waits for the "
			    "database, locked by %s; try again when 'strobe status' shows no "
			    "session running", (long long)session_status_id(d->session),
			    d->holder[0] ? d->holder : "another process");
		return;
	}
	if (d->session) {
		reply_error(fd, "session %lld is already running: stop it first with 'strobe stop'",
			    (long long)session_status_id(d->session));
		return;
	}
	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "%s", proto_get(req, "name") ? proto_get(req, "name") : "");
	p.owner_uid = cr->uid;
	if (session_parse_request(&p, proto_get(req, "events"), proto_get(req, "sample_event"),
				  proto_get(req, "freq"), proto_get(req, "period"),
				  proto_get(req, "buffer_pages"), &e) < 0) {
		reply_error(fd, "%s", e.msg);
		return;
	}
	if (session_parse_call_graph(&p, proto_get(req, "call_graph"),
				     proto_get(req, "keep_stacks"), &e) < 0 ||
	    session_parse_attribution(&p, proto_get(req, "attribution"), d->backend, &e) < 0) {
		reply_error(fd, "%s", e.msg);
		return;
	}
	/* marker0, marker1, ...: the USDT probes to record */
	for (; nm <= SESSION_MAX_MARKERS; nm++) {
		char key[16];

		snprintf(key, sizeof(key), "marker%d", nm);
		if (!(markers[nm] = proto_get(req, key)))
			break;
	}
	/* the marker files are opened with the requester's rights */
	peer_init(&who, fd, cr->uid, cr->gid);
	r = session_parse_markers(&p, markers, nm, &who, &e);
	peer_free(&who);
	if (r < 0) {
		session_params_free(&p);
		reply_error(fd, "%s", e.msg);
		return;
	}
	if (ring_over_limit(cr, &p.cfg, &e) || keep_stacks_refused(cr, &p.cfg, &e)) {
		session_params_free(&p);
		reply_error(fd, "%s", e.msg);
		return;
	}
	p.cfg.kind = d->backend;
	p.cfg.drain_nice = d->base_nice;
	p.cfg.drain_rt = 1;
	p.ingest_nice = MIN(19, d->base_nice + d->ingest_nice);
	p.ingest_idle = d->ingest_idle;
	p.ingest_defer = d->ingest_defer;
	p.ingest_defer_max_ns = d->ingest_defer_max_ns;
	/* a running session is pushed every push_interval s: unless told
	 * otherwise, ingest falls no further behind than that */
	if (d->push_url && !d->ingest_defer_set)
		p.ingest_defer_max_ns = (uint64_t)d->push_interval * 1000000000ULL;
	p.base_nice = d->base_nice;
	p.spool = d->spool;
	p.spool_dir = d->spool_dir;
	d->ended[0] = 0;
	d->stop_err.msg[0] = 0;
	d->session = session_start(d->db, &d->cache, &p, &e);
	session_params_free(&p);
	if (!d->session) {
		lock_error(d, fd, &e);
		return;
	}
	d->watching = 0;
	if (watch_session(d, 1) < 0)
		daemon_log("epoll: %s (draining on the timer only)", strerror(errno));
	daemon_log("session %lld started by uid %u", (long long)session_status_id(d->session),
	       (unsigned)cr->uid);
	proto_init(&m, "ok");
	proto_addf(&m, "session", "%lld", (long long)session_status_id(d->session));
	reply(fd, &m);
}

/* Exit: store the running session first; while the database stays locked
 * by another process, keep trying (from the timer) for QUIT_WAIT_MS. */
static void begin_quit(struct daemon *d)
{
	if (!d->session || stop_session(d, NULL) == 0) {
		d->quit = 1;
		return;
	}
	if (!d->quit_deadline) {
		d->quit_deadline = now_ns() + QUIT_WAIT_MS * 1000000ULL;
		daemon_log("exiting: session %lld waits for the database (locked by %s) for up to "
		       "%d s", (long long)session_status_id(d->session), d->holder,
		       QUIT_WAIT_MS / 1000);
	}
}

#define RM_MAX_SESSIONS 1024

/* 'rm sessions=1,2,3': mark them for removal (retention_remove checks
 * each); the timer deletes their rows. */
static void handle_rm(struct daemon *d, int fd, const struct proto_msg *req,
		      const struct ucred *cr)
{
	const char *list = proto_get(req, "sessions");
	int64_t ids[RM_MAX_SESSIONS];
	size_t n = 0;
	struct proto_msg m;
	struct error e;
	struct sbuf done = { 0 };
	const char *p = list;
	int r;

	if (!list || !*list) {
		reply_error(fd, "malformed request: rm needs sessions=ID[,ID...]");
		return;
	}
	while (*p) {
		char *end;
		long long v;

		if (*p < '0' || *p > '9') {
			reply_error(fd, "malformed request: bad session list '%s': give session "
				    "numbers separated by commas", list);
			return;
		}
		v = strtoll(p, &end, 10);
		if (v <= 0 || (*end && *end != ',')) {
			reply_error(fd, "malformed request: bad session list '%s': give session "
				    "numbers separated by commas", list);
			return;
		}
		if (n == RM_MAX_SESSIONS) {
			reply_error(fd, "too many sessions at once: at most %d", RM_MAX_SESSIONS);
			return;
		}
		ids[n++] = v;
		p = *end ? end + 1 : end;
	}
	if (d->session)
		session_lock(d->session);
	r = retention_remove(d->db, ids, n, cr->uid,
			     d->session ? session_status_id(d->session) : 0, &e);
	if (r < 0)
		lock_error(d, fd, &e);
	if (d->session)
		session_unlock(d->session);
	if (r < 0)
		return;
	for (size_t i = 0; i < n; i++)
		sbuf_addf(&done, "%s%lld", i ? "," : "", (long long)ids[i]);
	daemon_log("uid %u removes session%s %s", (unsigned)cr->uid, n > 1 ? "s" : "", done.s);
	d->reaping = 1;
	proto_init(&m, "ok");
	proto_add(&m, "removed", done.s);
	free(done.s);
	reply(fd, &m);
}

/* A session id, a start or an end time from a request: -1 when bad. */
static int request_i64(const struct proto_msg *req, const char *key, int64_t *v)
{
	const char *s = proto_get(req, key);
	uint64_t u;

	if (!s || s[0] < '0' || s[0] > '9' || parse_u64(s, &u) < 0 || u > INT64_MAX)
		return -1;
	*v = (int64_t)u;
	return 0;
}

/*
 * strobe count --save (proto.h): count-begin makes a count session of the
 * caller's, count-data adds values to it, count-end ends it.  Everything
 * is checked (countsave_decode, countstore_add): the client is any member
 * of the strobe group.
 */
static void handle_count(struct daemon *d, int fd, const struct proto_msg *req,
			 const struct ucred *cr)
{
	struct proto_msg m;
	struct error e;
	int64_t id = 0;
	int r;

	if (!strcmp(req->verb, "count-begin")) {
		struct db_session s;
		struct utsname u;
		const char *name = proto_get(req, "name");
		int64_t wall = 0;

		memset(&s, 0, sizeof(s));
		if (request_i64(req, "start_ns", &s.start_ns) < 0 ||
		    request_i64(req, "wall_offset_ns", &wall) < 0) {
			reply_error(fd, "malformed request: count-begin needs start_ns= and "
				    "wall_offset_ns=");
			return;
		}
		s.wall_offset_ns = wall;
		if (name) {
			if (strlen(name) >= sizeof(s.name)) {
				reply_error(fd, "session name too long: at most %zu bytes",
					    sizeof(s.name) - 1);
				return;
			}
			for (const char *p = name; *p; p++)
				if ((unsigned char)*p < 0x20 || *p == 0x7f) {
					reply_error(fd, "session name with a control character");
					return;
				}
			snprintf(s.name, sizeof(s.name), "%s", name);
		}
		for (int i = 0; i < STROBE_MAX_COUNTERS; i++) {
			char key[16];
			const char *ev;
			struct db_event *de = &s.events[i];

			snprintf(key, sizeof(key), "ev%d", i);
			if (!(ev = proto_get(req, key)))
				break;
			if (countsave_event_decode(ev, de->name, sizeof(de->name), &de->type,
						   &de->config, &de->config1, &de->config2, &e) < 0) {
				reply_error(fd, "%s", e.msg);
				return;
			}
			s.nr_events = i + 1;
		}
		if (!s.nr_events) {
			reply_error(fd, "malformed request: count-begin needs ev0= (at most %d events)",
				    STROBE_MAX_COUNTERS);
			return;
		}
		s.owner_uid = cr->uid;
		if (uname(&u) == 0) {
			snprintf(s.hostname, sizeof(s.hostname), "%s", u.nodename);
			snprintf(s.kernel_release, sizeof(s.kernel_release), "%s", u.release);
		}
		s.nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
		if (d->session)
			session_lock(d->session);
		r = countstore_begin(d->db, &s, &e);
		if (d->session)
			session_unlock(d->session);
		if (r < 0) {
			lock_error(d, fd, &e);
			return;
		}
		daemon_log("uid %u saves count session %lld", (unsigned)cr->uid, (long long)s.id);
		proto_init(&m, "ok");
		proto_addf(&m, "session", "%lld", (long long)s.id);
		reply(fd, &m);
		return;
	}
	if (request_i64(req, "session", &id) < 0 || id <= 0) {
		reply_error(fd, "malformed request: %s needs session=ID", req->verb);
		return;
	}
	if (!strcmp(req->verb, "count-data")) {
		struct count_saved *v;
		size_t n;
		const char *vals = proto_get(req, "values");

		if (!vals || countsave_decode(vals, &v, &n, COUNTSAVE_MAX_BYTES / 10, &e) < 0) {
			reply_error(fd, "%s", vals ? e.msg : "malformed request: count-data needs values=");
			return;
		}
		if (d->session)
			session_lock(d->session);
		r = countstore_add(d->db, id, cr->uid, v, n, &e);
		if (d->session)
			session_unlock(d->session);
		free(v);
	} else {
		int64_t end;

		if (request_i64(req, "end_ns", &end) < 0) {
			reply_error(fd, "malformed request: count-end needs end_ns=");
			return;
		}
		if (d->session)
			session_lock(d->session);
		r = countstore_end(d->db, id, cr->uid, end, &e);
		if (d->session)
			session_unlock(d->session);
	}
	if (r < 0) {
		lock_error(d, fd, &e);
		return;
	}
	proto_init(&m, "ok");
	proto_addf(&m, "session", "%lld", (long long)id);
	reply(fd, &m);
}

/* The complete request line c->buf[0..n) (its newline included, or the
 * reason it is not complete) of client c: answered, then the client is
 * done.  Returns 1 when the reply is deferred and the caller must keep
 * the connection open (a stop waiting for the database). */
static int handle_request(struct daemon *d, struct client *c, const char *why)
{
	char *buf = c->buf, *nl;
	const struct ucred cr = c->cr;
	int fd = c->fd, keep = 0;
	struct proto_msg req, m;
	struct error e;
	size_t n = c->n;

	buf[n < sizeof(c->buf) ? n : sizeof(c->buf) - 1] = 0;
	if (!memchr(buf, '\n', n)) {
		reply_error(fd, "malformed request: no complete line received (%s)", why);
		return 0;
	}
	/* memchr, not strchr: a NUL byte before the newline must not crash us */
	nl = memchr(buf, '\n', n);
	*nl = 0;
	if (strlen(buf) != (size_t)(nl - buf)) {
		reply_error(fd, "malformed request: it contains a NUL byte");
		return 0;
	}
	if (proto_parse(buf, &req, &e) < 0) {
		if (daemon_log_ratelimit((unsigned)cr.uid, "malformed requests"))
			daemon_log("uid %u: %s", (unsigned)cr.uid, e.msg);
		reply_error(fd, "%s", e.msg);
		return 0;
	}
	if (!strcmp(req.verb, "ping")) {
		proto_init(&m, "ok");
		proto_add(&m, "version", PACKAGE_VERSION);
		proto_add(&m, "db", db_path(d->db));
		reply(fd, &m);
	} else if (!strcmp(req.verb, "start")) {
		handle_start(d, fd, &req, &cr);
	} else if (!strcmp(req.verb, "stop")) {
		if (!d->session && d->ended[0]) {
			reply_error(fd, "%s", d->ended);
			d->ended[0] = 0;
		} else if (!d->session) {
			reply_error(fd, "no session is running");
		} else if (d->stop_fd >= 0) {
			if (d->blocked_since)
				reply_error(fd, "session %lld is already being stopped: strobed waits "
					    "for the database, locked by %s",
					    (long long)session_status_id(d->session),
					    d->holder[0] ? d->holder : "another process");
			else
				reply_error(fd, "session %lld is already being stopped: strobed is "
					    "storing the records it spooled ('strobe status' shows "
					    "how many)", (long long)session_status_id(d->session));
		} else if (peer_owns(d, &cr, fd)) {
			if (stop_session(d, &m) == SESSION_BLOCKED) {
				if (d->blocked_since)
					daemon_log("session %lld: the stop waits for the database; "
						   "the session records on until it can be stored",
						   (long long)session_status_id(d->session));
				d->stop_fd = fd;
				keep = 1;
			} else {
				reply(fd, &m);
			}
		}
	} else if (!strcmp(req.verb, "mark")) {
		const char *text = proto_get(&req, "text"), *t = proto_get(&req, "time_ns");
		uint64_t time_ns = 0;

		if (t && parse_u64(t, &time_ns) < 0)
			time_ns = 0;
		if (!d->session) {
			reply_error(fd, "no session running: start one with 'strobe start'");
		} else if (!peer_owns(d, &cr, fd)) {
			;
		} else if (session_mark(d->session, text ? text : "", time_ns, cr.pid, &e) < 0) {
			reply_error(fd, "%s", e.msg);
		} else {
			proto_init(&m, "ok");
			proto_addf(&m, "session", "%lld", (long long)session_status_id(d->session));
			reply(fd, &m);
		}
	} else if (!strcmp(req.verb, "rm")) {
		handle_rm(d, fd, &req, &cr);
	} else if (!strcmp(req.verb, "count-begin") || !strcmp(req.verb, "count-data") ||
		   !strcmp(req.verb, "count-end")) {
		handle_count(d, fd, &req, &cr);
	} else if (!strcmp(req.verb, "status")) {
		proto_init(&m, "ok");
		if (d->session) {
			struct session_status st;

			session_get_status(d->session, &st);
			proto_add(&m, "running", "1");
			proto_addf(&m, "session", "%lld", (long long)st.id);
			proto_addf(&m, "samples", "%llu", (unsigned long long)st.samples);
			proto_addf(&m, "lost", "%llu", (unsigned long long)st.lost);
			proto_addf(&m, "throttled", "%llu", (unsigned long long)st.throttled);
			proto_addf(&m, "elapsed_ns", "%llu", (unsigned long long)st.elapsed_ns);
			proto_addf(&m, "rate", "%.1f", st.rate);
			proto_addf(&m, "lag_records", "%llu", (unsigned long long)st.lag_records);
			proto_addf(&m, "lag_ns", "%llu", (unsigned long long)st.lag_ns);
			/* ingest waits for an idle CPU (--ingest-defer), for so long */
			proto_addf(&m, "ingest_deferred_ns", "%llu",
				   (unsigned long long)(st.deferred_since_ns ?
				   clock_monotonic_ns() - st.deferred_since_ns : 0));
			proto_addf(&m, "spool_mem", "%llu", (unsigned long long)st.spool.mem_bytes);
			proto_addf(&m, "spool_disk", "%llu", (unsigned long long)st.spool.disk_bytes);
			proto_addf(&m, "spool_mem_max", "%llu", (unsigned long long)d->spool.mem_max);
			proto_addf(&m, "spool_disk_max", "%llu", (unsigned long long)d->spool.disk_max);
			proto_addf(&m, "spool_refused", "%llu", (unsigned long long)st.spool.refused);
			/* binaries held open from drain to ingest (binhold.h) */
			proto_addf(&m, "held_files", "%llu", (unsigned long long)st.held.files_now);
			proto_addf(&m, "held_over", "%llu", (unsigned long long)st.held.over);
			/* samples taken from the rings (stored or not), and per
			 * CPU, in the order of cpus= (the first
			 * SESSION_STATUS_MAX_CPUS of nr_cpus=), those and the
			 * lost records */
			proto_addf(&m, "taken", "%llu", (unsigned long long)st.taken);
			proto_addf(&m, "nr_cpus", "%d", st.nr_cpus);
			add_list(&m, "cpus", NULL, st.cpu, st.nr_cpu_counts);
			add_list(&m, "cpu_samples", st.cpu_samples, NULL, st.nr_cpu_counts);
			add_list(&m, "cpu_lost", st.cpu_lost, NULL, st.nr_cpu_counts);
			if (d->stop_pending)
				proto_add(&m, "stopping", "1");
		} else {
			proto_add(&m, "running", "0");
		}
		if (d->blocked_since) {
			proto_addf(&m, "blocked_ms", "%llu",
				   (unsigned long long)((now_ns() - d->blocked_since) / 1000000));
			proto_add(&m, "lock_holder", d->holder);
		}
		if (d->reaping)
			proto_add(&m, "removing", "1");
		if (d->pusher) {
			struct pusher_state ps;

			pusher_state(d->pusher, &ps);
			proto_add(&m, "push_to", d->push_url);
			proto_addf(&m, "push_interval", "%u", d->push_interval);
			proto_addf(&m, "push_last_session", "%lld", (long long)ps.last_session);
			proto_addf(&m, "push_last_ok_wall_ns", "%lld", (long long)ps.last_ok_wall_ns);
			proto_addf(&m, "push_pending", "%llu", (unsigned long long)ps.pending);
			proto_addf(&m, "push_failures", "%llu", (unsigned long long)ps.failures);
			if (d->push_held)
				proto_addf(&m, "push_held", "%zu", d->push_held);
			if (ps.down)
				proto_add(&m, "push_error", ps.error);
		}
		proto_add(&m, "db", db_path(d->db));
		add_db_size(&m, db_path(d->db));
		reply(fd, &m);
	} else if (!strcmp(req.verb, "shutdown") && cr.uid != 0) {
		reply_error(fd, "permission denied: only root may shut strobed down");
	} else if (!strcmp(req.verb, "shutdown")) {
		proto_init(&m, "ok");
		reply(fd, &m);
		begin_quit(d);
	} else {
		reply_error(fd, "malformed request: unknown request '%s' (expected start, stop, "
			    "status, mark, rm, ping or shutdown)", req.verb);
	}
	proto_free(&req);
	return keep;
}

static void stop_retry(struct daemon *d);

static void drain(struct daemon *d)
{
	struct error e;
	int r;

	if (!d->session)
		return;
	if (d->stop_pending) {
		/* catching up before a stop: as fast as the spool is fed */
		if (!d->stop_drained)
			stop_retry(d);
		return;
	}
	r = session_poll(d->session, &e);
	if (r == SESSION_BLOCKED) {
		db_blocked(d);
		return;
	}
	if (r == 0) {
		db_unblocked(d);
		return;
	}
	daemon_log("stopping the session: %s", e.msg);
	/* the next 'stop' tells the client why its session ended early */
	snprintf(d->ended, sizeof(d->ended), "session %lld was stopped early by "
		 "strobed: %s", (long long)session_status_id(d->session), e.msg);
	d->stop_err = e;	/* also a stop that comes while it catches up */
	session_fail(d->session);
	watch_session(d, 0);
	stop_session(d, NULL);
}

/*
 * A stop (or an exit) waiting for the database or for ingest to catch up
 * with the spool: try again.  Sampling ends QUIESCE_DELAY_NS after the
 * stop was asked for, once the spool refused nothing for that long: the
 * drain thread empties the rings meanwhile, whatever ingest does, and a
 * ring that overflowed is reported (PERF_RECORD_LOST) only in the next
 * record the kernel writes to it with room, which a stopped event never
 * writes (while the spool is full, the events stay on).  Then ingest catches up with
 * the spool, the events off: not sampling strobed's own catching up, as
 * it did with them on (at 50 kHz a minute of extra samples, of strobed
 * itself, each one costing it more time).  The stop is stored once the
 * spool is empty and the database's lock free.
 */
static void stop_retry(struct daemon *d)
{
	struct proto_msg m;

	if (d->quiesce_ns && now_ns() >= d->quiesce_ns) {
		if (session_spool_accepting(d->session)) {
			session_quiesce(d->session);
			d->quiesce_ns = 0;
		} else {
			/* full: the rings may hold a loss not reported yet */
			d->quiesce_ns = now_ns() + QUIESCE_DELAY_NS;
		}
	}

	if (!d->stop_drained) {
		struct error e;
		int r;

		session_hurry(d->session);
		r = session_poll(d->session, &e);

		if (r == 0) {
			db_unblocked(d);
			d->stop_drained = !session_behind(d->session);
			return;
		}
		if (r < 0) {
			daemon_log("stopping the session: %s", e.msg);
			d->stop_err = e;	/* the stop's answer (stop_session) */
			session_fail(d->session);
			d->stop_drained = 1;	/* stop it as it is */
		} else {
			db_blocked(d);
		}
	}
	if (d->stop_drained && stop_session(d, d->stop_fd >= 0 ? &m : NULL) == 0) {
		if (d->stop_fd >= 0) {
			reply(d->stop_fd, &m);
			close(d->stop_fd);
			d->stop_fd = -1;
		}
		if (d->quit_deadline)
			d->quit = 1;
		return;
	}
	if (!d->quit_deadline || now_ns() < d->quit_deadline)
		return;
	daemon_log("exiting with session %lld not stored to its end: the database stayed locked "
	       "by %s; its committed batches stay, and the next strobed marks it interrupted",
	       (long long)session_status_id(d->session), d->holder);
	if (d->stop_fd >= 0) {
		reply_error(d->stop_fd, "strobed is exiting and could not store session %lld: the "
			    "database stayed locked by %s; the next strobed marks it interrupted",
			    (long long)session_status_id(d->session), d->holder);
		close(d->stop_fd);
		d->stop_fd = -1;
	}
	watch_session(d, 0);
	session_abandon(d->session);
	d->session = NULL;
	d->stop_pending = 0;
	d->quit = 1;
}

/* ---- between drains: the stamp, retention, the WAL ---- */

/* The database file's stamp, recorded in DB.lock whenever it changed (a
 * checkpoint wrote it): the next strobed trusts a file with that stamp
 * without reading it whole. */
static void stamp_refresh(struct daemon *d)
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
			db_blocked(d);
		else
			daemon_log("removing unused binaries: %s", e.msg);
		return;		/* gc_pending stays: the next tick tries again */
	}
	db_unblocked(d);
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
	uint64_t until = now_ns() + REAP_IDLE_MS * 1000000ULL;
	struct error e;
	int64_t removed;
	int r;

	do {
		r = retention_step(d->db, d->session ? REAP_ROWS_RUNNING : REAP_ROWS_IDLE,
				   &removed, &e);
		if (r < 0) {
			if (db_busy(d->db)) {
				db_blocked(d);
			} else {
				daemon_log("removing sessions: %s (strobed tries again when it "
				       "restarts)", e.msg);
				d->reaping = 0;
			}
			return;
		}
		db_unblocked(d);
		d->reaped += removed;
	} while (r > 0 && !d->session && now_ns() < until);
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

	d->next_plan_ns = now_ns() + PLAN_INTERVAL_MS * 1000000ULL;
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
			db_blocked(d);
			d->next_plan_ns = now_ns() + WAL_CHECK_MS * 1000000ULL;
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

	d->next_wal_ns = now_ns() + WAL_CHECK_MS * 1000000ULL;
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

static void log_recovered(const struct recover_session *r, size_t n, size_t shown,
			  uint64_t took_ns);

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
static int spool_orphans(struct daemon *d, struct error *e)
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
	uint64_t t = now_ns();
	struct error e;
	size_t n;

	if (spool_orphans(d, &e) < 0 ||
	    recover_interrupted(d->db, d->recover_max_id, rec, ARRAY_SIZE(rec), &n, &e) < 0) {
		if (db_busy(d->db))
			db_blocked(d);
		else
			daemon_log("marking interrupted sessions: %s", e.msg);
		return;
	}
	db_unblocked(d);
	d->recover_max_id = 0;
	log_recovered(rec, n, ARRAY_SIZE(rec), now_ns() - t);
}

static void maintain_db(struct daemon *d);

static void maintain(struct daemon *d)
{
	stamp_refresh(d);
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

/* What maintain writes: with the session locked while one runs. */
static void maintain_db(struct daemon *d)
{
	uint64_t now = now_ns();

	if (d->blocked_since && d->session)
		return;		/* the drain retries; nothing else can be written */
	if (d->blocked_since) {
		struct error e;	/* no drain to notice the lock going: look */

		if (db_begin(d->db, &e) < 0)
			return;
		db_rollback(d->db);
		db_unblocked(d);
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

static void client_close(struct daemon *d, struct client *c)
{
	epoll_ctl(d->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
}

/* The request was answered, or its reply deferred (keep): free the slot. */
static void client_done(struct daemon *d, struct client *c, int keep)
{
	if (!keep) {
		client_close(d, c);
		return;
	}
	epoll_ctl(d->ep, EPOLL_CTL_DEL, c->fd, NULL);
	c->fd = -1;
}

static struct client *client_find(struct daemon *d, int fd)
{
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (d->clients[i].fd == fd)
			return &d->clients[i];
	return NULL;
}

static int clients_of(const struct daemon *d, uid_t uid)
{
	int n = 0;

	for (int i = 0; i < MAX_CLIENTS; i++)
		n += d->clients[i].fd >= 0 && d->clients[i].cr.uid == uid;
	return n;
}

/* Every slot is taken and root is asking: the oldest client goes. */
static struct client *client_evict(struct daemon *d)
{
	struct client *old = &d->clients[0];

	for (int i = 1; i < MAX_CLIENTS; i++)
		if (d->clients[i].deadline_ns < old->deadline_ns)
			old = &d->clients[i];
	reply_error(old->fd, "malformed request: no complete line received (strobed needed "
		    "the slot)");
	client_close(d, old);
	return old;
}

/* Out of fds (EMFILE, ENFILE) on an accept: the connection waiting is
 * taken with the spare fd and refused with the reason, so that the listening
 * socket is no longer readable; without a spare (another thread took it),
 * the socket leaves the epoll set for ACCEPT_PAUSE_NS (the timer puts it
 * back).  Either way epoll_wait does not return at once again: no spin.
 * Logged once until an accept succeeds again, then with the count. */
static void accept_no_fd(struct daemon *d, int err)
{
	int fd = -1;

	d->fd_refused++;
	if (!d->fd_short)
		daemon_log("out of file descriptors (%s): connections are refused until some "
			   "close; raise LimitNOFILE= or ulimit -n", err == EMFILE ?
			   "EMFILE, RLIMIT_NOFILE" : "ENFILE, the system's file table");
	d->fd_short = 1;
	if (d->spare_fd >= 0) {
		close(d->spare_fd);
		d->spare_fd = -1;
		fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd >= 0) {
			reply_error(fd, "strobed is out of file descriptors (%s): try again later",
				    strerror(err));
			close(fd);
		}
		d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			return;
	}
	if (!d->accept_paused && epoll_ctl(d->ep, EPOLL_CTL_DEL, d->listen_fd, NULL) == 0)
		d->accept_paused = now_ns();
}

/* On each timer tick: the listening socket back in the epoll set after a
 * pause for want of fds. */
static void accept_resume(struct daemon *d)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (!d->accept_paused || now_ns() - d->accept_paused < ACCEPT_PAUSE_NS)
		return;
	if (d->spare_fd < 0)
		d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ev.data.fd = d->listen_fd;
	if (epoll_ctl(d->ep, EPOLL_CTL_ADD, d->listen_fd, &ev) == 0)
		d->accept_paused = 0;
}

/* A new connection: refused at once if the peer may not use strobed or
 * every slot is taken, else watched until its line is complete. */
static void client_accept(struct daemon *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	socklen_t crlen = sizeof(struct ucred);
	struct client *c = client_find(d, -1);
	struct ucred cr;
	int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE)
			accept_no_fd(d, errno);
		return;
	}
	if (d->fd_short) {
		daemon_log("file descriptors available again: %lu connections were refused for "
			   "want of one", d->fd_refused);
		d->fd_short = 0;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) < 0) {
		close(fd);
		return;
	}
	if (!peer_allowed(d, fd, &cr)) {
		daemon_log("refused uid %u (pid %d): not root nor in group strobe",
		       (unsigned)cr.uid, (int)cr.pid);
		reply_error(fd, "permission denied: uid %u is neither root nor a member of group "
			    "'strobe' (an administrator can run: usermod -aG strobe USER)",
			    (unsigned)cr.uid);
		close(fd);
		return;
	}
	if (cr.uid == 0 && !c)
		c = client_evict(d);
	if (!c || (cr.uid != 0 && clients_of(d, cr.uid) >= MAX_CLIENTS_PER_UID)) {
		reply_error(fd, "strobed is busy: too many of your requests are still being "
			    "sent (at most %d at once); try again", MAX_CLIENTS_PER_UID);
		close(fd);
		return;
	}
	ev.data.fd = fd;
	if (epoll_ctl(d->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->cr = cr;
	c->n = 0;
	c->deadline_ns = now_ns() + CLIENT_TIMEOUT_MS * 1000000ULL;
}

/* Client c is readable: take what it sent; answer once its line is
 * complete, it closed, or its buffer is full. */
static void client_read(struct daemon *d, struct client *c)
{
	const char *why = NULL;

	for (;;) {
		ssize_t r = read(c->fd, c->buf + c->n, sizeof(c->buf) - 1 - c->n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r <= 0) {
			why = "timed out or closed";
			break;
		}
		c->n += r;
		if (memchr(c->buf + c->n - r, '\n', r))
			break;
		if (c->n >= sizeof(c->buf) - 1) {
			why = "too long";
			break;
		}
	}
	client_done(d, c, handle_request(d, c, why ? why : ""));
}

/* On each timer tick: clients that did not complete their line in time. */
static void clients_expire(struct daemon *d)
{
	uint64_t now = now_ns();

	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct client *c = &d->clients[i];

		if (c->fd >= 0 && now >= c->deadline_ns)
			client_done(d, c, handle_request(d, c, "timed out or closed"));
	}
}

static int run(struct daemon *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct itimerspec its = { { 0, 100 * 1000 * 1000 }, { 0, 100 * 1000 * 1000 } };
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC);
	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	d->ep = epoll_create1(EPOLL_CLOEXEC);
	if (d->sig_fd < 0 || d->timer_fd < 0 || d->ep < 0)
		return -1;
	timerfd_settime(d->timer_fd, 0, &its, NULL);
	ev.data.fd = d->listen_fd;
	epoll_ctl(d->ep, EPOLL_CTL_ADD, d->listen_fd, &ev);
	ev.data.fd = d->sig_fd;
	epoll_ctl(d->ep, EPOLL_CTL_ADD, d->sig_fd, &ev);
	ev.data.fd = d->timer_fd;
	epoll_ctl(d->ep, EPOLL_CTL_ADD, d->timer_fd, &ev);

	while (!d->quit) {
		struct epoll_event evs[64];
		int n = epoll_wait(d->ep, evs, 64, -1);
		int wake_drain = 0, tick = 0;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			struct client *c;

			if (fd == d->listen_fd) {
				client_accept(d);
			} else if ((c = client_find(d, fd))) {
				client_read(d, c);
			} else if (fd == d->sig_fd) {
				struct signalfd_siginfo si;

				if (read(d->sig_fd, &si, sizeof(si)) == sizeof(si))
					daemon_log("signal %u: shutting down", si.ssi_signo);
				begin_quit(d);
			} else if (fd == d->timer_fd) {
				uint64_t ticks;

				if (read(d->timer_fd, &ticks, sizeof(ticks)) < 0)
					ticks = 0;
				clients_expire(d);
				accept_resume(d);
				if (d->stop_pending)
					stop_retry(d);
				else
					wake_drain = 1;
				tick = 1;
			} else {
				wake_drain = 1;
			}
		}
		if (wake_drain)
			drain(d);
		if (tick && !d->quit)
			maintain(d);
	}
	if (d->session && stop_session(d, NULL) == SESSION_BLOCKED) {
		watch_session(d, 0);
		session_abandon(d->session);
		d->session = NULL;
	}
	return 0;
}

/* The end of the interrupted sessions' stored data, for the log. */
static void log_recovered(const struct recover_session *r, size_t n, size_t shown,
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

/* Settings before they take effect: from the configuration file, the
 * environment, then the command line, each overriding the one before. */
struct settings {
	struct daemon *d;
	const char *db;
	const char *backend;
	int foreground;
	const char *push_password_file;
};

static const struct option opts[] = {
	{ "db", required_argument, NULL, 'd' },
	{ "socket", required_argument, NULL, 's' },
	{ "foreground", no_argument, NULL, 'f' },
	{ "backend", required_argument, NULL, 'b' },
	{ "keep", required_argument, NULL, 'k' },
	{ "max-size", required_argument, NULL, 'M' },
	{ "max-wal", required_argument, NULL, 'W' },
	{ "spool-mem", required_argument, NULL, 'S' },
	{ "spool-disk", required_argument, NULL, 'D' },
	{ "ingest-nice", required_argument, NULL, 'N' },
	{ "ingest-defer", required_argument, NULL, 'E' },
	{ "push", required_argument, NULL, 'P' },
	{ "push-interval", required_argument, NULL, 'I' },
	{ "push-password-file", required_argument, NULL, 'F' },
	{ "config", required_argument, NULL, 'C' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* The options a configuration file may set: those that take a value and
 * say how strobed runs (not --foreground, --config, --help, --version). */
#define FILE_KEYS "db, socket, backend, keep, max-size, max-wal, spool-mem, spool-disk, ingest-nice, " \
	"ingest-defer, " \
	"push, push-interval, push-password-file"

/*
 * Apply option c with argument arg (from the command line or, by its long
 * name, from the configuration file): 0, or -1 with e saying what is
 * wrong with the value and what to give instead.  arg must outlive strobed.
 */
static int apply_option(struct settings *o, int c, const char *arg, struct error *e)
{
	struct daemon *d = o->d;

	switch (c) {
	case 'd': o->db = arg; break;
	case 's': d->socket_path = arg; break;
	case 'f': o->foreground = 1; break;
	case 'b':
		if (strcmp(arg, "auto") && strcmp(arg, "perf") && strcmp(arg, "driver"))
			return error_set(e, "unknown backend '%s': use auto, perf or driver", arg);
		o->backend = arg;
		break;
	case 'k':
		return retention_parse_days(arg, &d->policy.keep_ns, e);
	case 'M':
		return retention_parse_size(arg, &d->policy.max_bytes, e);
	case 'W':
		if (retention_parse_size(arg, &d->max_wal, e) < 0)
			return error_set(e, "bad --max-wal '%s': give a size in bytes or with K, "
					 "M, G or T, e.g. --max-wal 64M", arg);
		break;
	case 'S':
	case 'D':
		/* 0: none (no disk: loss once memory is full) */
		if (!strcmp(arg, "0"))
			*(c == 'S' ? &d->spool.mem_max : &d->spool.disk_max) = 0;
		else if (retention_parse_size(arg, c == 'S' ? &d->spool.mem_max :
					      &d->spool.disk_max, e) < 0)
			return error_set(e, "bad --spool-%s '%s': give a size in bytes or with "
					 "K, M, G or T, e.g. --spool-%s 1G", c == 'S' ? "mem" : "disk",
					 arg, c == 'S' ? "mem" : "disk");
		break;
	case 'N': {
		char *end;
		long v = strtol(arg, &end, 10);

		if (!strcmp(arg, "idle")) {
			d->ingest_idle = 1;
			break;
		}
		if (end == arg || *end || v < 0 || v > 19)
			return error_set(e, "bad --ingest-nice '%s': give a number from 0 (ingest "
					 "competes with the workload as an equal) to 19, or idle "
					 "(SCHED_IDLE: only CPU time nothing else wants)", arg);
		d->ingest_nice = (int)v;
		d->ingest_idle = 0;
		break;
	}
	case 'E': {
		char *end;
		long v = strtol(arg, &end, 10);

		d->ingest_defer_set = 1;
		if (!strcmp(arg, "busy") || !strcmp(arg, "off")) {
			d->ingest_defer = !strcmp(arg, "busy");
			d->ingest_defer_max_ns = 0;
			break;
		}
		if (end == arg || *end || v < 1 || v > 86400)
			return error_set(e, "bad --ingest-defer '%s': give busy (ingest waits while "
					 "no CPU is idle, up to half the spool), a number of seconds "
					 "from 1 to 86400 (busy, and at most that far behind) or off",
					 arg);
		d->ingest_defer = 1;
		d->ingest_defer_max_ns = (uint64_t)v * 1000000000ULL;
		break;
	}
	case 'P': {
		struct chclient_url u;

		if (!strcmp(arg, "none")) {	/* strobed.conf's default */
			d->push_url = NULL;
			break;
		}
		if (chclient_url_parse(arg, &u, e) < 0)
			return error_prefix(e, "bad --push '%s'", arg);
		d->push_url = arg;
		break;
	}
	case 'I': {
		char *end;
		long v = strtol(arg, &end, 10);

		if (end == arg || *end || v < 1 || v > PUSH_INTERVAL_MAX)
			return error_set(e, "bad --push-interval '%s': give seconds from 1 to %d "
					 "(default %d; 10 or more in production)", arg,
					 PUSH_INTERVAL_MAX, PUSH_INTERVAL_DEFAULT);
		d->push_interval = (unsigned)v;
		break;
	}
	case 'F':	/* none: env STROBE_CLICKHOUSE_PASSWORD_FILE */
		if (strcmp(arg, "none") && arg[0] != '/')
			return error_set(e, "bad --push-password-file '%s': give an absolute path "
					 "(or none: env STROBE_CLICKHOUSE_PASSWORD_FILE)", arg);
		o->push_password_file = strcmp(arg, "none") ? arg : NULL;
		break;
	default:
		return error_set(e, "unknown option");
	}
	return 0;
}

/* One key = value of the configuration file: the option of that name. */
static int apply_key(void *arg, const char *key, const char *value, struct error *e)
{
	for (const struct option *o = opts; o->name; o++)
		if (!strcmp(o->name, key) && o->has_arg == required_argument && o->val != 'C')
			return apply_option(arg, o->val, xstrdup(value), e);
	return error_set(e, "unknown key '%s': the keys are " FILE_KEYS, key);
}

/*
 * A listening socket systemd passed (socket activation, sd_listen_fds(3)):
 * LISTEN_PID is this process and LISTEN_FDS one fd, 3, which must be a
 * listening AF_UNIX stream socket.  1 when there is one (d->listen_fd set,
 * d->socket_path its address), 0 when none was passed, -1 with e set when
 * what was passed is not usable.  The variables are removed either way, so
 * that no child takes the fd for its own.
 */
#define LISTEN_FDS_START 3

static int inherited_socket(struct daemon *d, struct error *e)
{
	const char *pid_s = getenv("LISTEN_PID"), *fds_s = getenv("LISTEN_FDS");
	struct sockaddr_un sa;
	socklen_t len = sizeof(int), salen = sizeof(sa);
	int type = 0, domain = 0, listening = 0, fd = LISTEN_FDS_START;
	char *end;
	long pid, n;

	if (!pid_s || !fds_s)
		return 0;
	pid = strtol(pid_s, &end, 10);
	if (*end || pid != getpid())
		return 0;	/* meant for another process */
	n = strtol(fds_s, &end, 10);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (*end || n < 1)
		return 0;
	if (n != 1)
		return error_set(e, "socket activation passed %ld sockets: strobed takes one "
				 "(ListenStream= once in strobed.socket)", n);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) < 0)
		return error_set(e, "socket activation: fd %d is not a socket: %s", fd,
				 strerror(errno));
	if (domain != AF_UNIX || type != SOCK_STREAM || !listening)
		return error_set(e, "socket activation: fd %d is not a listening unix stream "
				 "socket: strobed.socket must say ListenStream=PATH", fd);
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return error_set(e, "socket activation: fd %d: %s", fd, strerror(errno));
	memset(&sa, 0, sizeof(sa));
	if (getsockname(fd, (struct sockaddr *)&sa, &salen) == 0 &&
	    salen > offsetof(struct sockaddr_un, sun_path) && sa.sun_path[0])
		d->socket_path = xasprintf("%.*s", (int)strnlen(sa.sun_path,
				salen - offsetof(struct sockaddr_un, sun_path)), sa.sun_path);
	else
		d->socket_path = "(socket passed by systemd)";
	d->listen_fd = fd;
	return 1;
}

/* The soft RLIMIT_NOFILE up to the hard one, at most NOFILE_WANT: a ring
 * and an event fd per CPU, binhold's files (a quarter of the limit, at most
 * 512), the spool's, the clients'.  Said in the log when still low. */
static void raise_nofile(void)
{
	struct rlimit rl;
	rlim_t want;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > NOFILE_WANT ? NOFILE_WANT :
	       rl.rlim_max;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rl.rlim_cur = want;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 1024)
		daemon_log("RLIMIT_NOFILE is %llu (hard limit %llu): fewer binaries are held and "
			   "fewer CPUs can be sampled than with 1024 or more; raise LimitNOFILE= "
			   "or ulimit -Hn", (unsigned long long)rl.rlim_cur,
			   (unsigned long long)rl.rlim_max);
}

int main(int argc, char **argv)
{
	struct daemon d = { .listen_fd = -1, .spare_fd = -1, .stop_fd = -1, .max_wal = DEFAULT_MAX_WAL,
			    .ingest_nice = DEFAULT_INGEST_NICE, .ingest_defer = 1,
			    .spool = { SPOOL_MEM_DEFAULT, SPOOL_DISK_DEFAULT } };
	struct settings set = { .d = &d, .backend = "auto" };
	struct client clients[MAX_CLIENTS];
	struct recover_session rec[16];
	struct start_wait wait = { 0 };
	const char *db_path_arg, *config = NULL, *env;
	const char *backend;
	uint64_t started = now_ns(), rec_ns;
	int foreground, c, trusted, existed, activated, nargs = 0;
	int *argc_opt = xcalloc(argc + 1, sizeof(int));
	char **argv_opt = xcalloc(argc + 1, sizeof(char *));
	size_t nrec = 0;
	struct group *g;
	struct error e;
	char *dir, stamp[DBLOCK_STAMP_MAX];
	struct chclient_url push_url;
	struct chclient_cred push_cred;
	char push_host[256];
	uint64_t started_wall = clock_realtime_ns();
	static const struct symworker_ext *const worker_exts[] = { &uworker_ext, NULL };

	/* a worker executed afresh (selfexec.h): nothing of strobed runs */
	if (argc > 2 && !strcmp(argv[1], SELFEXEC_ARG))
		return !strcmp(argv[2], "marker") ? marker_reader_main(argc, argv) :
			!strcmp(argv[2], "fleet") ? chchild_exec_main(argc, argv) :
			symworker_exec_main(argc, argv, worker_exts);
	/* the command line first, applied last: it overrides the file */
	while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (c) {
		case 'C': config = optarg; break;
		case 'h': help(); return 0;
		case 'V': printf("strobed %s\n", PACKAGE_VERSION); return 0;
		case '?': usage(stderr); return 2;
		default:
			argc_opt[nargs] = c;
			argv_opt[nargs++] = optarg;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (!config && (env = getenv("STROBE_CONFIG")) && *env)
		config = env;
	if (config && !*config) {
		fprintf(stderr, "strobed: --config: empty file name: give the path of a "
			"configuration file\n");
		return 2;
	}
	/* an explicit file must exist; the default one may not */
	if (conffile_read(config ? config : STROBE_CONFIG_PATH,
			  CONFFILE_STRICT | (config ? 0 : CONFFILE_MISSING_OK), apply_key, &set,
			  &e) < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return 2;
	}
	if ((env = getenv("STROBE_DB")) && *env)
		set.db = env;
	if ((env = getenv("STROBE_SOCKET")) && *env)
		d.socket_path = env;
	for (int i = 0; i < nargs; i++)
		if (apply_option(&set, argc_opt[i], argv_opt[i], &e) < 0) {
			fprintf(stderr, "strobed: %s\n", e.msg);
			return 2;
		}
	free(argc_opt);
	free(argv_opt);
	if (d.push_url) {
		/* the password file is checked (and read) now: a wrong one is a
		 * usage error, not a push that fails for ever */
		if (set.push_password_file &&
		    setenv("STROBE_CLICKHOUSE_PASSWORD_FILE", set.push_password_file, 1) < 0) {
			fprintf(stderr, "strobed: setenv: %s\n", strerror(errno));
			return 1;
		}
		if (chclient_url_parse(d.push_url, &push_url, &e) < 0 ||
		    chclient_credentials(&push_cred, &e) < 0) {
			fprintf(stderr, "strobed: --push: %s\n", e.msg);
			return 2;
		}
		if (!d.push_interval)
			d.push_interval = PUSH_INTERVAL_DEFAULT;
		/* --push names sampled locations with what is local: strobed, as
		 * root, fetches nothing from debuginfod servers */
		unsetenv("DEBUGINFOD_URLS");
		if (gethostname(push_host, sizeof(push_host)) < 0 || !push_host[0]) {
			fprintf(stderr, "strobed: --push: cannot tell this machine's host name\n");
			return 1;
		}
		push_host[sizeof(push_host) - 1] = 0;
	}
	db_path_arg = set.db;
	backend = set.backend;
	foreground = set.foreground;
	if (!db_path_arg || !*db_path_arg)
		db_path_arg = DEFAULT_DB;
	if (!d.socket_path || !*d.socket_path)
		d.socket_path = DEFAULT_SOCKET;
	/* auto: the driver when its device exists, perf_event_open otherwise */
	if (!strcmp(backend, "driver") ||
	    (!strcmp(backend, "auto") && access(STROBE_DEV_PATH, F_OK) == 0))
		d.backend = BACKEND_DRIVER;
	if (d.backend == BACKEND_DRIVER && access(STROBE_DEV_PATH, F_OK) < 0) {
		fprintf(stderr, "strobed: --backend driver needs %s: load the driver "
			"(insmod kernel/strobe.ko) or use --backend perf\n", STROBE_DEV_PATH);
		return 1;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "strobed: must run as root: system-wide profiling needs it\n");
		return 1;
	}
	/* systemd's socket, when started by strobed.socket: --socket is moot */
	activated = inherited_socket(&d, &e);
	if (activated < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return 1;
	}
	/*
	 * Each session's ingest thread yields to the workload (nice
	 * base + ingest_nice): when the CPUs are busy it falls behind and the
	 * spool holds the records, as perf record leaves all the work to perf
	 * report.  This thread (clients, the timer) and each session's drain
	 * thread keep strobed's own priority, so that a status answers at once.
	 */
	errno = 0;
	d.base_nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		d.base_nice = 0;
	for (int i = 0; i < MAX_CLIENTS; i++)
		clients[i].fd = -1;
	d.clients = clients;
	umask(027);
	raise_nofile();
	d.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	tracefs_ensure();
	g = getgrnam("strobe");
	if (g) {
		d.have_group = 1;
		d.strobe_gid = g->gr_gid;
	}
	dir = xstrdup(db_path_arg);
	if (access(dirname(dir), F_OK) < 0 && mkdir_p(dir, 0750) == 0 && d.have_group &&
	    chown(dir, 0, d.strobe_gid) < 0)
		daemon_log("cannot give %s to group strobe: %s", dir, strerror(errno));
	free(dir);
	/* a directory others may write is refused before anything in it is
	 * touched (lib/store/dbdir.h) */
	if (dbdir_check(db_path_arg, &e) < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return 1;
	}
	/* one strobed per database, decided before the database is touched */
	if (dblock_acquire(&d.lock, db_path_arg, &e) < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return 1;
	}
	/* a file exactly as the last strobed left it needs no whole-file check */
	existed = dblock_stamp(db_path_arg, stamp, sizeof(stamp)) == 0;
	trusted = existed && d.lock.stamp[0] && !strcmp(stamp, d.lock.stamp);
	wait.db = db_path_arg;
	{
		/* SQLite waits in silence when it must rebuild the WAL index */
		char *shm = xasprintf("%s-shm", db_path_arg);
		struct lock_holder h;

		if (lockinfo_find(shm, 120, 1, &h) == 1) {
			find_holder_of(db_path_arg, wait.holder, sizeof(wait.holder));
			wait.since = now_ns();
			daemon_log("waiting for the database: it is locked by %s", wait.holder);
		}
		free(shm);
	}
	d.db = db_open_busy(db_path_arg, trusted ? DB_WRITE_TRUSTED : DB_WRITE, start_busy, &wait,
			    &e);
	if (!d.db) {
		if (wait.holder[0])
			fprintf(stderr, "strobed: %s (strobed waited %d s; it was locked by %s)\n",
				e.msg, START_WAIT_MS / 1000, wait.holder);
		else
			fprintf(stderr, "strobed: %s\n", e.msg);
		return 1;
	}
	if (wait.holder[0])
		daemon_log("the database is free again after %.1f s", (now_ns() - wait.since) / 1e9);
	/* no process but strobed takes the write lock: a lock held elsewhere
	 * is never waited for long (the migration above had 5 s) */
	db_set_busy_timeout(d.db, BUSY_TIMEOUT_MS);
	/* sessions a strobed that died left 'running'; when the database is
	 * locked, strobed starts anyway and marks them once it can */
	rec_ns = now_ns();
	d.spool_dir = xasprintf("%s.spool", db_path_arg);
	if (db_session_max_id(d.db, &d.recover_max_id, &e) < 0 ||
	    (spool_orphans(&d, &e) < 0 && !db_busy(d.db)) ||
	    (recover_interrupted(d.db, d.recover_max_id, rec, ARRAY_SIZE(rec), &nrec, &e) < 0 &&
	     !db_busy(d.db))) {
		fprintf(stderr, "strobed: marking the sessions of a strobed that died as "
			"interrupted: %s\n", e.msg);
		return 1;
	}
	if (!db_busy(d.db))
		d.recover_max_id = 0;	/* done */
	rec_ns = now_ns() - rec_ns;
	{
		int64_t pending;

		if (retention_pending(d.db, &pending, &e) < 0) {
			fprintf(stderr, "strobed: %s\n", e.msg);
			return 1;
		}
		d.reaping = pending > 0;	/* removals a strobed did not finish */
	}
	if (d.max_wal != DEFAULT_MAX_WAL) {
		char pragma[64];

		snprintf(pragma, sizeof(pragma), "PRAGMA journal_size_limit=%llu",
			 (unsigned long long)d.max_wal);
		sqlite3_exec(db_sqlite(d.db), pragma, NULL, NULL, NULL);
	}
	d.cache_dir = db_cache_dir(d.db);
	if (bincache_open(&d.cache, d.cache_dir, &e) < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return 1;
	}
	if (cache_dir_claim(&d, d.cache_dir, &e) < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return 1;
	}
	if (!activated && listen_socket(&d, &e) < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return 1;
	}
	if (!d.have_group)
		daemon_log("group 'strobe' does not exist: only root may use %s (groupadd --system strobe)",
		       d.socket_path);
	if (!foreground) {
		char *log = xasprintf("%s.log", db_path_arg);
		int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW |
			       O_NONBLOCK, 0640);
		pid_t pid;

		if (lfd >= 0)
			daemon_log_file(log);
		free(log);
		pid = fork();
		if (pid < 0) {
			fprintf(stderr, "strobed: fork: %s\n", strerror(errno));
			return 1;
		}
		if (pid > 0)
			return 0;	/* the child holds DB.lock: the same open file */
		setsid();
		if (lfd >= 0) {
			dup2(lfd, 2);
			close(lfd);
		}
		int nul = open("/dev/null", O_RDWR);

		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
			close(nul);
		}
	}
	d.stamp[0] = 0;
	stamp_refresh(&d);	/* DB.lock: this pid, the file as it is now */
	/* workers run as fresh images of strobed, holding none of its memory
	 * (the ClickHouse password, other users' names); failing that, forked */
	if (selfexec_init(&e) < 0)
		daemon_log("%s: the workers are forked copies of strobed instead", e.msg);
	log_recovered(rec, nrec, ARRAY_SIZE(rec), rec_ns);
	if (d.recover_max_id) {
		char who[256];

		find_holder(&d, who, sizeof(who));
		daemon_log("sessions a strobed that died left running cannot be marked interrupted "
		       "yet: the database is locked by %s; retrying every 100 ms", who);
	}
	daemon_log("listening on %s%s, database %s, backend %s (started in %.1f ms%s)",
	       d.socket_path, activated ? " (passed by systemd)" : "", db_path(d.db), d.backend == BACKEND_DRIVER ? "driver (" STROBE_DEV_PATH ")" : "perf",
	       (now_ns() - started) / 1e6, !existed || trusted ? "" :
	       ", the database checked whole: strobed did not leave it as it is");
	if (d.push_url) {
		/* the sessions started from now on, and those an earlier
		 * strobed left unpushed (pusher.c, scope()) */
		d.pusher = pusher_start(db_path_arg, d.push_url, &push_url, &push_cred, push_host,
					d.push_interval, (int64_t)started_wall, &e);
		if (!d.pusher) {
			daemon_log("%s", e.msg);
			return 1;
		}
		daemon_log("pushing each session to %s as host %s, in intervals of %u s while it "
			   "runs and the rest once it stops", d.push_url, push_host, d.push_interval);
	}
	c = run(&d);
	pusher_stop(d.pusher);	/* pushes the last session first */
	close(d.listen_fd);
	if (!activated)		/* systemd's socket stays, to start the next strobed */
		unlink(d.socket_path);
	bincache_close(&d.cache);
	db_close(d.db);
	/* the checkpoint at close wrote the file: its stamp for the next strobed */
	if (dblock_stamp(db_path_arg, stamp, sizeof(stamp)) == 0)
		dblock_write(&d.lock, getpid(), stamp, &e);
	dblock_release(&d.lock);
	free(d.cache_dir);
	daemon_log("exiting");
	return c < 0 ? 1 : 0;
}
