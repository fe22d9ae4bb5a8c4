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
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "bincache.h"
#include "db.h"
#include "proto.h"
#include "session.h"
#include "strobe_dev.h"

#define DEFAULT_DB	"/var/lib/strobe/strobe.db"
#define DEFAULT_SOCKET	"/run/strobe/strobed.sock"
#define CLIENT_TIMEOUT_MS 2000

/* The daemon's top-level state: the only mutable state it has. */
/*
 * A client being read: requests arrive on non-blocking sockets and are
 * collected here between epoll wake-ups, so a client that sends its line a
 * byte at a time holds nothing but its own slot.  At most MAX_CLIENTS at
 * once; each has CLIENT_TIMEOUT_MS to complete its line.
 */
#define MAX_CLIENTS 16
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
	struct bincache cache;
	const char *socket_path;
	int listen_fd, sig_fd, timer_fd, ep;
	gid_t strobe_gid;
	int have_group;
	struct session *session;
	enum backend_kind backend;	/* what sessions capture with */
	char ended[600];	/* why strobed stopped the last session itself */
	int quit;
};

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logmsg(const char *fmt, ...)
{
	va_list ap;
	char ts[32];
	time_t t = time(NULL);

	strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", localtime(&t));
	fprintf(stderr, "strobed[%d] %s: ", (int)getpid(), ts);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Tracepoint events need tracefs; mount it where the kernel expects it if
 * nothing has (systemd does this at boot, containers often do not). */
static void tracefs_ensure(void)
{
	if (access("/sys/kernel/tracing/events", F_OK) == 0 ||
	    access("/sys/kernel/debug/tracing/events", F_OK) == 0)
		return;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0)
		logmsg("mounted tracefs on /sys/kernel/tracing for tracepoint events");
}

static void usage(FILE *f)
{
	fputs("usage: strobed [--db PATH] [--socket PATH] [--foreground] "
	      "[--backend auto|perf|driver]\n", f);
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
		logmsg("cannot give %s to group strobe: %s", dir, strerror(errno));
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

/* Is the peer root or a member of group strobe (primary or supplementary)? */
static int peer_allowed(const struct daemon *d, const struct ucred *cr)
{
	char path[64], *status, *g;
	int ok = 0;

	if (cr->uid == 0)
		return 1;
	if (!d->have_group)
		return 0;
	if (cr->gid == d->strobe_gid)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)cr->pid);
	status = file_read_all(path, NULL);
	if (!status)
		return 0;
	g = strstr(status, "\nGroups:");
	if (g) {
		char *p = g + 8;

		while (*p && *p != '\n') {
			char *end;
			unsigned long v = strtoul(p, &end, 10);

			if (end == p) {
				p++;
				continue;
			}
			if (v == d->strobe_gid)
				ok = 1;
			p = end;
		}
	}
	free(status);
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

static void stop_session(struct daemon *d, struct proto_msg *m)
{
	struct session_status st;
	struct error e;
	int ret = session_stop(d->session, &st, &e);

	d->session = NULL;
	if (ret < 0)
		logmsg("session %lld stopped with an error: %s", (long long)st.id, e.msg);
	else
		logmsg("session %lld stopped: %llu samples, %llu lost, %llu out of time order "
		       "(up to %llu ns late)", (long long)st.id,
		       (unsigned long long)st.samples, (unsigned long long)st.lost,
		       (unsigned long long)st.late, (unsigned long long)st.late_max_ns);
	if (st.ingest.binaries_over || st.ingest.comms_over || st.ingest.collisions)
		logmsg("session %lld: %llu mappings past the limit of binaries, %llu names past "
		       "the limit of names, %llu build-ids already cached with other contents "
		       "(keyed by contents instead); %llu MB of binaries read", (long long)st.id,
		       (unsigned long long)st.ingest.binaries_over,
		       (unsigned long long)st.ingest.comms_over,
		       (unsigned long long)st.ingest.collisions,
		       (unsigned long long)(st.ingest.bytes_read >> 20));
	if (st.have_handler) {
		logmsg("session %lld: driver overflow handler %llu ns per sample on average, "
		       "%llu ns at most, over %llu samples", (long long)st.id,
		       (unsigned long long)st.handler_avg_ns, (unsigned long long)st.handler_max_ns,
		       (unsigned long long)st.handler_samples);
		logmsg("session %lld: driver STATS %llu samples written, %llu dropped",
		       (long long)st.id, (unsigned long long)(st.handler_samples - st.handler_dropped),
		       (unsigned long long)st.handler_dropped);
	}
	if (!m)
		return;
	if (ret < 0) {
		proto_init(m, "error");
		proto_add(m, "msg", e.msg);
		return;
	}
	proto_init(m, "ok");
	proto_addf(m, "session", "%lld", (long long)st.id);
	proto_addf(m, "samples", "%llu", (unsigned long long)st.samples);
	proto_addf(m, "lost", "%llu", (unsigned long long)st.lost);
	proto_addf(m, "throttled", "%llu", (unsigned long long)st.throttled);
	proto_addf(m, "duration_ns", "%llu", (unsigned long long)st.elapsed_ns);
}

static int watch_session(struct daemon *d, int add)
{
	const int *fds;
	size_t n = session_fds(d->session, &fds);

	for (size_t i = 0; i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[i] };

		if (epoll_ctl(d->ep, add ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fds[i], &ev) < 0)
			return -1;
	}
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
	if (ring_over_limit(cr, &p.cfg, &e)) {
		session_params_free(&p);
		reply_error(fd, "%s", e.msg);
		return;
	}
	p.cfg.kind = d->backend;
	d->ended[0] = 0;
	d->session = session_start(d->db, &d->cache, &p, &e);
	session_params_free(&p);
	if (!d->session) {
		reply_error(fd, "%s", e.msg);
		return;
	}
	if (watch_session(d, 1) < 0)
		logmsg("epoll: %s (draining on the timer only)", strerror(errno));
	logmsg("session %lld started by uid %u", (long long)session_status_id(d->session),
	       (unsigned)cr->uid);
	proto_init(&m, "ok");
	proto_addf(&m, "session", "%lld", (long long)session_status_id(d->session));
	reply(fd, &m);
}

/* The complete request line c->buf[0..n) (its newline included, or the
 * reason it is not complete) of client c: answered, then the client is done. */
static void handle_request(struct daemon *d, struct client *c, const char *why)
{
	char *buf = c->buf, *nl;
	const struct ucred cr = c->cr;
	int fd = c->fd;
	struct proto_msg req, m;
	struct error e;
	size_t n = c->n;

	buf[n < sizeof(c->buf) ? n : sizeof(c->buf) - 1] = 0;
	if (!memchr(buf, '\n', n)) {
		reply_error(fd, "malformed request: no complete line received (%s)", why);
		return;
	}
	/* memchr, not strchr: a NUL byte before the newline must not crash us */
	nl = memchr(buf, '\n', n);
	*nl = 0;
	if (strlen(buf) != (size_t)(nl - buf)) {
		reply_error(fd, "malformed request: it contains a NUL byte");
		return;
	}
	if (proto_parse(buf, &req, &e) < 0) {
		logmsg("uid %u: %s", (unsigned)cr.uid, e.msg);
		reply_error(fd, "%s", e.msg);
		return;
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
		} else if (peer_owns(d, &cr, fd)) {
			watch_session(d, 0);
			stop_session(d, &m);
			reply(fd, &m);
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
		} else {
			proto_add(&m, "running", "0");
		}
		proto_add(&m, "db", db_path(d->db));
		reply(fd, &m);
	} else if (!strcmp(req.verb, "shutdown") && cr.uid != 0) {
		reply_error(fd, "permission denied: only root may shut strobed down");
	} else if (!strcmp(req.verb, "shutdown")) {
		if (d->session) {
			watch_session(d, 0);
			stop_session(d, NULL);
		}
		proto_init(&m, "ok");
		reply(fd, &m);
		d->quit = 1;
	} else {
		reply_error(fd, "malformed request: unknown request '%s' (expected start, stop, "
			    "status, mark, ping or shutdown)", req.verb);
	}
	proto_free(&req);
}

static void drain(struct daemon *d)
{
	struct error e;

	if (!d->session)
		return;
	if (session_drain(d->session, &e) < 0) {
		logmsg("stopping the session: %s", e.msg);
		/* the next 'stop' tells the client why its session ended early */
		snprintf(d->ended, sizeof(d->ended), "session %lld was stopped early by "
			 "strobed: %s", (long long)session_status_id(d->session), e.msg);
		session_fail(d->session);
		watch_session(d, 0);
		stop_session(d, NULL);
	}
}


static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void client_close(struct daemon *d, struct client *c)
{
	epoll_ctl(d->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
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

/* A new connection: refused at once if the peer may not use strobed or
 * every slot is taken, else watched until its line is complete. */
static void client_accept(struct daemon *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	socklen_t crlen = sizeof(struct ucred);
	struct client *c = client_find(d, -1);
	struct ucred cr;
	int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) < 0) {
		close(fd);
		return;
	}
	if (!peer_allowed(d, &cr)) {
		logmsg("refused uid %u (pid %d): not root nor in group strobe",
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
	handle_request(d, c, why ? why : "");
	client_close(d, c);
}

/* On each timer tick: clients that did not complete their line in time. */
static void clients_expire(struct daemon *d)
{
	uint64_t now = now_ns();

	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct client *c = &d->clients[i];

		if (c->fd >= 0 && now >= c->deadline_ns) {
			handle_request(d, c, "timed out or closed");
			client_close(d, c);
		}
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
		int wake_drain = 0;

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
					logmsg("signal %u: shutting down", si.ssi_signo);
				d->quit = 1;
			} else if (fd == d->timer_fd) {
				uint64_t ticks;

				if (read(d->timer_fd, &ticks, sizeof(ticks)) < 0)
					ticks = 0;
				clients_expire(d);
				wake_drain = 1;
			} else {
				wake_drain = 1;
			}
		}
		if (wake_drain)
			drain(d);
	}
	if (d->session) {
		watch_session(d, 0);
		stop_session(d, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "socket", required_argument, NULL, 's' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "backend", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct daemon d = { .listen_fd = -1 };
	struct client clients[MAX_CLIENTS];
	const char *db_path_arg = getenv("STROBE_DB");
	const char *backend = "auto";
	int foreground = 0, c;
	struct group *g;
	struct error e;
	char *cache_dir, *dir;

	d.socket_path = getenv("STROBE_SOCKET");
	while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (c) {
		case 'd': db_path_arg = optarg; break;
		case 's': d.socket_path = optarg; break;
		case 'f': foreground = 1; break;
		case 'b': backend = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (!db_path_arg || !*db_path_arg)
		db_path_arg = DEFAULT_DB;
	if (!d.socket_path || !*d.socket_path)
		d.socket_path = DEFAULT_SOCKET;
	if (strcmp(backend, "auto") && strcmp(backend, "perf") && strcmp(backend, "driver")) {
		fprintf(stderr, "strobed: unknown backend '%s': use auto, perf or driver\n", backend);
		return 2;
	}
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
	for (int i = 0; i < MAX_CLIENTS; i++)
		clients[i].fd = -1;
	d.clients = clients;
	umask(027);
	tracefs_ensure();
	g = getgrnam("strobe");
	if (g) {
		d.have_group = 1;
		d.strobe_gid = g->gr_gid;
	}
	dir = xstrdup(db_path_arg);
	if (access(dirname(dir), F_OK) < 0 && mkdir_p(dir, 0750) == 0 && d.have_group &&
	    chown(dir, 0, d.strobe_gid) < 0)
		logmsg("cannot give %s to group strobe: %s", dir, strerror(errno));
	free(dir);
	d.db = db_open(db_path_arg, DB_WRITE, &e);
	if (!d.db) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return 1;
	}
	if (db_session_abort_stale(d.db, &e) < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return 1;
	}
	cache_dir = db_cache_dir(d.db);
	if (bincache_open(&d.cache, cache_dir, &e) < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return 1;
	}
	if (cache_dir_claim(&d, cache_dir, &e) < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return 1;
	}
	free(cache_dir);
	if (listen_socket(&d, &e) < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return 1;
	}
	if (!d.have_group)
		logmsg("group 'strobe' does not exist: only root may use %s (groupadd --system strobe)",
		       d.socket_path);
	if (!foreground) {
		char *log = xasprintf("%s.log", db_path_arg);
		int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW |
			       O_NONBLOCK, 0640);
		pid_t pid;

		free(log);
		pid = fork();
		if (pid < 0) {
			fprintf(stderr, "strobed: fork: %s\n", strerror(errno));
			return 1;
		}
		if (pid > 0)
			return 0;
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
	logmsg("listening on %s, database %s, backend %s", d.socket_path, db_path(d.db),
	       d.backend == BACKEND_DRIVER ? "driver (" STROBE_DEV_PATH ")" : "perf");
	c = run(&d);
	close(d.listen_fd);
	unlink(d.socket_path);
	bincache_close(&d.cache);
	db_close(d.db);
	logmsg("exiting");
	return c < 0 ? 1 : 0;
}
