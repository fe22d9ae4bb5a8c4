/*
 * strobed.c - the strobe daemon: owns the database, listens on the control
 * socket, runs one session at a time and has its records stored in SQLite.
 * main reads as what strobed does: the configuration (config.c), the
 * database opened, the socket listened on (clients.c), the event loop run,
 * everything closed.
 *
 * Threads.  This file's event loop is strobed's main thread: an epoll loop
 * waits on the control socket and its clients (clients.c, request.c), a
 * signalfd (SIGTERM, SIGINT and SIGHUP stop cleanly), a 100 ms timerfd
 * (stop.c's retries, maint.c's work between drains) and the running
 * session's eventfd.  Each session brings its own threads (session.h):
 * the backend's drain thread empties the rings into the spool, the
 * ingest thread stores the spool in the database, binhold's thread opens
 * the binaries mapped; with --push a thread pushes to ClickHouse
 * (pusher.h).  strobed.h says what they share with the main thread.
 *
 * One strobed per database: it takes DB.lock (dblock.h) before it opens
 * the database, and marks the sessions a strobed that died left running
 * as interrupted (recover.h) before it listens.  Another process may hold
 * a lock on the database (lockdiag.c).  Under systemd
 * (dist/systemd/strobed.socket) the listening socket is passed in as fd 3
 * and strobed neither binds nor removes it.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include "chchild.h"
#include "dbdir.h"
#include "log.h"
#include "markerparse.h"
#include "pusher.h"
#include "selfexec.h"
#include "strobe_dev.h"
#include "strobed.h"
#include "uworker.h"

/* strobed's soft RLIMIT_NOFILE is raised to its hard limit, up to this */
#define NOFILE_WANT 65536

/* What start-up learns that strobed says once it listens. */
struct startup {
	uint64_t started_ns, started_wall_ns;
	int activated;		/* systemd passed the listening socket */
	int existed, trusted;	/* the database file; as the last strobed left it */
	struct recover_session rec[16];	/* the interrupted sessions marked */
	size_t nrec;
	uint64_t rec_ns;	/* marking them took so long */
};

/* ---- the event loop ---- */

int strobed_watch(struct daemon *d, int add)
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

/* The session's ingest thread finished a pass (or a tick came): its
 * outcome.  A stop pending moves on (stop_retry); an error ends the
 * session (stop_failed). */
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
		lockdiag_blocked(d);
		return;
	}
	if (r == 0) {
		lockdiag_unblocked(d);
		return;
	}
	stop_failed(d, &e);
}

/* The signalfd, the timerfd and the listening socket in a new epoll set. */
static int loop_open(struct daemon *d)
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
	return 0;
}

/* The 100 ms tick: 1 when the session is to be drained. */
static int loop_tick(struct daemon *d)
{
	uint64_t ticks;

	if (read(d->timer_fd, &ticks, sizeof(ticks)) < 0)
		ticks = 0;
	clients_tick(d);
	if (d->stop_pending) {
		stop_retry(d);
		return 0;
	}
	return 1;
}

/* Until a shutdown or a signal has stored (or abandoned) the session. */
static int run(struct daemon *d)
{
	if (loop_open(d) < 0)
		return -1;
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
				clients_accept(d);
			} else if ((c = clients_find(d, fd))) {
				clients_read(d, c);
			} else if (fd == d->sig_fd) {
				struct signalfd_siginfo si;

				if (read(d->sig_fd, &si, sizeof(si)) == sizeof(si))
					daemon_log("signal %u: shutting down", si.ssi_signo);
				stop_quit(d);
			} else if (fd == d->timer_fd) {
				wake_drain |= loop_tick(d);
				tick = 1;
			} else {
				wake_drain = 1;
			}
		}
		if (wake_drain)
			drain(d);
		if (tick && !d->quit)
			maint_tick(d);
	}
	if (d->session && stop_session(d, NULL) == SESSION_BLOCKED) {
		strobed_watch(d, 0);
		session_abandon(d->session);
		d->session = NULL;
	}
	return 0;
}

/* ---- start-up ---- */

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

/* The process before anything is opened: priorities, limits, umask,
 * tracefs, group strobe. */
static void process_setup(struct daemon *d)
{
	struct group *g;

	/*
	 * Each session's ingest thread yields to the workload (nice
	 * base + ingest_nice): when the CPUs are busy it falls behind and the
	 * spool holds the records, as perf record leaves all the work to perf
	 * report.  The main thread (clients, the timer) and each session's
	 * drain thread keep strobed's own priority, so that a status answers
	 * at once.
	 */
	errno = 0;
	d->base_nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		d->base_nice = 0;
	for (int i = 0; i < MAX_CLIENTS; i++)
		d->clients[i].fd = -1;
	umask(027);
	raise_nofile();
	d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	tracefs_ensure();
	g = getgrnam("strobe");
	if (g) {
		d->have_group = 1;
		d->strobe_gid = g->gr_gid;
	}
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

/* The database's directory (made if missing), checked, DB.lock taken and
 * the database opened: 0, or -1 said on stderr. */
static int db_open_locked(struct daemon *d, const char *path, struct startup *su)
{
	char *dir = xstrdup(path), stamp[DBLOCK_STAMP_MAX], waited[400];
	struct error e;

	if (access(dirname(dir), F_OK) < 0 && mkdir_p(dir, 0750) == 0 && d->have_group &&
	    chown(dir, 0, d->strobe_gid) < 0)
		daemon_log("cannot give %s to group strobe: %s", dir, strerror(errno));
	free(dir);
	/* a directory others may write is refused before anything in it is
	 * touched (lib/store/dbdir.h) */
	if (dbdir_check(path, &e) < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return -1;
	}
	/* one strobed per database, decided before the database is touched */
	if (dblock_acquire(&d->lock, path, &e) < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return -1;
	}
	/* a file exactly as the last strobed left it needs no whole-file check */
	su->existed = dblock_stamp(path, stamp, sizeof(stamp)) == 0;
	su->trusted = su->existed && d->lock.stamp[0] && !strcmp(stamp, d->lock.stamp);
	d->db = lockdiag_open(path, su->trusted, waited, sizeof(waited), &e);
	if (!d->db) {
		fprintf(stderr, "strobed: %s%s\n", e.msg, waited);
		return -1;
	}
	/* no process but strobed takes the write lock: a lock held elsewhere
	 * is never waited for long (the migration above had 5 s) */
	db_set_busy_timeout(d->db, BUSY_TIMEOUT_MS);
	return 0;
}

/* What strobed left undone: the sessions a strobed that died left
 * 'running' (when the database is locked, strobed starts anyway and marks
 * them once it can: maint.c), and removals it did not finish. */
static int db_recover(struct daemon *d, const char *path, struct startup *su)
{
	struct error e;
	int64_t pending;

	su->rec_ns = clock_monotonic_ns();
	d->spool_dir = xasprintf("%s.spool", path);
	if (db_session_max_id(d->db, &d->recover_max_id, &e) < 0 ||
	    (maint_spool_orphans(d, &e) < 0 && !db_busy(d->db)) ||
	    (recover_interrupted(d->db, d->recover_max_id, su->rec, ARRAY_SIZE(su->rec),
				 &su->nrec, &e) < 0 && !db_busy(d->db))) {
		fprintf(stderr, "strobed: marking the sessions of a strobed that died as "
			"interrupted: %s\n", e.msg);
		return -1;
	}
	if (!db_busy(d->db))
		d->recover_max_id = 0;	/* done */
	su->rec_ns = clock_monotonic_ns() - su->rec_ns;
	if (retention_pending(d->db, &pending, &e) < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return -1;
	}
	d->reaping = pending > 0;	/* removals a strobed did not finish */
	return 0;
}

/* The database and its binary cache, ready for sessions: 0, or -1 said on
 * stderr. */
static int open_all(struct daemon *d, const struct config *cfg, struct startup *su)
{
	struct error e;

	if (db_open_locked(d, cfg->db, su) < 0 || db_recover(d, cfg->db, su) < 0)
		return -1;
	if (d->max_wal != DEFAULT_MAX_WAL) {
		char pragma[64];

		snprintf(pragma, sizeof(pragma), "PRAGMA journal_size_limit=%llu",
			 (unsigned long long)d->max_wal);
		sqlite3_exec(db_sqlite(d->db), pragma, NULL, NULL, NULL);
	}
	d->cache_dir = db_cache_dir(d->db);
	if (bincache_open(&d->cache, d->cache_dir, &e) < 0 ||
	    cache_dir_claim(d, d->cache_dir, &e) < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return -1;
	}
	return 0;
}

/* The control socket, unless systemd passed it: 0, or -1 said on stderr. */
static int listen_all(struct daemon *d, const struct startup *su)
{
	struct error e;

	if (!su->activated && clients_listen(d, &e) < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return -1;
	}
	if (!d->have_group)
		daemon_log("group 'strobe' does not exist: only root may use %s (groupadd --system strobe)",
		       d->socket_path);
	return 0;
}

/* Without --foreground: the log to DB.log, and strobed in the background.
 * -1 in the child that goes on, else the parent's exit status. */
static int detach(const char *db_path)
{
	char *log = xasprintf("%s.log", db_path);
	int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW |
		       O_NONBLOCK, 0640), nul;
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
	nul = open("/dev/null", O_RDWR);
	if (nul >= 0) {
		dup2(nul, 0);
		dup2(nul, 1);
		close(nul);
	}
	return -1;
}

/* In the process that runs: DB.lock's stamp, the workers, what start-up
 * found said in the log, and --push's thread.  0, or -1. */
static int announce(struct daemon *d, struct config *cfg, const struct startup *su)
{
	struct error e;

	d->stamp[0] = 0;
	maint_stamp(d);		/* DB.lock: this pid, the file as it is now */
	/* workers run as fresh images of strobed, holding none of its memory
	 * (the ClickHouse password, other users' names); failing that, forked */
	if (selfexec_init(&e) < 0)
		daemon_log("%s: the workers are forked copies of strobed instead", e.msg);
	maint_log_recovered(su->rec, su->nrec, ARRAY_SIZE(su->rec), su->rec_ns);
	if (d->recover_max_id) {
		char who[256];

		lockdiag_holder(d, who, sizeof(who));
		daemon_log("sessions a strobed that died left running cannot be marked interrupted "
		       "yet: the database is locked by %s; retrying every 100 ms", who);
	}
	daemon_log("listening on %s%s, database %s, backend %s (started in %.1f ms%s)",
	       d->socket_path, su->activated ? " (passed by systemd)" : "", db_path(d->db), d->backend == BACKEND_DRIVER ? "driver (" STROBE_DEV_PATH ")" : "perf",
	       (clock_monotonic_ns() - su->started_ns) / 1e6, !su->existed || su->trusted ? "" :
	       ", the database checked whole: strobed did not leave it as it is");
	if (!d->push_url)
		return 0;
	/* the sessions started from now on, and those an earlier
	 * strobed left unpushed (pusher.c, scope()) */
	d->pusher = pusher_start(cfg->db, d->push_url, &cfg->push_url, &cfg->push_cred,
				 cfg->push_host, d->push_interval, (int64_t)su->started_wall_ns, &e);
	if (!d->pusher) {
		daemon_log("%s", e.msg);
		return -1;
	}
	daemon_log("pushing each session to %s as host %s, in intervals of %u s while it "
		   "runs and the rest once it stops", d->push_url, cfg->push_host, d->push_interval);
	return 0;
}

/* ---- the end ---- */

static void teardown(struct daemon *d, const struct config *cfg, const struct startup *su)
{
	char stamp[DBLOCK_STAMP_MAX];
	struct error e;

	pusher_stop(d->pusher);	/* pushes the last session first */
	close(d->listen_fd);
	if (!su->activated)	/* systemd's socket stays, to start the next strobed */
		unlink(d->socket_path);
	bincache_close(&d->cache);
	db_close(d->db);
	/* the checkpoint at close wrote the file: its stamp for the next strobed */
	if (dblock_stamp(cfg->db, stamp, sizeof(stamp)) == 0)
		dblock_write(&d->lock, getpid(), stamp, &e);
	dblock_release(&d->lock);
	free(d->cache_dir);
	daemon_log("exiting");
}

/* A worker executed afresh (selfexec.h): nothing of strobed runs. */
static int worker_main(int argc, char **argv)
{
	static const struct symworker_ext *const worker_exts[] = { &uworker_ext, NULL };

	return !strcmp(argv[2], "marker") ? marker_reader_main(argc, argv) :
		!strcmp(argv[2], "fleet") ? chchild_exec_main(argc, argv) :
		symworker_exec_main(argc, argv, worker_exts);
}

int main(int argc, char **argv)
{
	struct daemon state = {
		.listen_fd = -1, .spare_fd = -1, .stop_fd = -1, .max_wal = DEFAULT_MAX_WAL,
		.ingest_nice = DEFAULT_INGEST_NICE, .ingest_defer = 1,
		.spool = { SPOOL_MEM_DEFAULT, SPOOL_DISK_DEFAULT },
	}, *d = &state;
	struct startup su = { .started_ns = clock_monotonic_ns(),
			      .started_wall_ns = clock_realtime_ns() };
	struct config cfg;
	struct error e;
	int r;

	if (argc > 2 && !strcmp(argv[1], SELFEXEC_ARG))
		return worker_main(argc, argv);
	memset(&cfg, 0, sizeof(cfg));
	if ((r = config_load(d, &cfg, argc, argv)) >= 0)
		return r;
	if (geteuid() != 0) {
		fprintf(stderr, "strobed: must run as root: system-wide profiling needs it\n");
		return 1;
	}
	/* systemd's socket, when started by strobed.socket: --socket is moot */
	su.activated = clients_inherit(d, &e);
	if (su.activated < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return 1;
	}
	process_setup(d);
	if (open_all(d, &cfg, &su) < 0 || listen_all(d, &su) < 0)
		return 1;
	if (!cfg.foreground && (r = detach(cfg.db)) >= 0)
		return r;
	if (announce(d, &cfg, &su) < 0)
		return 1;
	r = run(d);
	teardown(d, &cfg, &su);
	return r < 0 ? 1 : 0;
}
