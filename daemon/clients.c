/*
 * clients.c - strobed's control socket and its clients: listening (or
 * the socket systemd passed, dist/systemd/strobed.socket), accepting, and
 * reading each client's request line into its slot until it is complete;
 * request.c answers it.
 *
 * Only root and members of group 'strobe' may talk to strobed: the socket
 * is mode 0660 group strobe, and each peer's credentials (SO_PEERCRED and
 * its supplementary groups) are checked again on accept.  At most
 * MAX_CLIENTS at once, MAX_CLIENTS_PER_UID of one user's (root takes the
 * oldest slot when all are taken); out of fds, a connection is refused
 * with the reason rather than left to wake the loop again and again.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "log.h"
#include "peer.h"
#include "strobed.h"

/* out of fds (EMFILE, ENFILE) with no spare fd: how long the listening
 * socket is left unwatched, instead of waking on it in a loop */
#define ACCEPT_PAUSE_NS (500 * 1000000ULL)

/*
 * A listening socket systemd passed (socket activation, sd_listen_fds(3)):
 * LISTEN_PID is this process and LISTEN_FDS one fd, 3, which must be a
 * listening AF_UNIX stream socket.  1 when there is one (d->listen_fd set,
 * d->socket_path its address), 0 when none was passed, -1 with e set when
 * what was passed is not usable.  The variables are removed either way, so
 * that no child takes the fd for its own.
 */
#define LISTEN_FDS_START 3

int clients_inherit(struct daemon *d, struct error *e)
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

/* Bind d->socket_path (a stale socket file replaced, a live strobed
 * refused) and listen. */
int clients_listen(struct daemon *d, struct error *e)
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
	 * above); lchown, not chown: in a shared directory the name could
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

struct client *clients_find(struct daemon *d, int fd)
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
		d->accept_paused = clock_monotonic_ns();
}

/* On each timer tick: the listening socket back in the epoll set after a
 * pause for want of fds. */
static void accept_resume(struct daemon *d)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (!d->accept_paused || clock_monotonic_ns() - d->accept_paused < ACCEPT_PAUSE_NS)
		return;
	if (d->spare_fd < 0)
		d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ev.data.fd = d->listen_fd;
	if (epoll_ctl(d->ep, EPOLL_CTL_ADD, d->listen_fd, &ev) == 0)
		d->accept_paused = 0;
}

/* A new connection: refused at once if the peer may not use strobed or
 * every slot is taken, else watched until its line is complete. */
void clients_accept(struct daemon *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	socklen_t crlen = sizeof(struct ucred);
	struct client *c = clients_find(d, -1);
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
	c->deadline_ns = clock_monotonic_ns() + CLIENT_TIMEOUT_MS * 1000000ULL;
}

/* Client c is readable: take what it sent; answer once its line is
 * complete, it closed, or its buffer is full. */
void clients_read(struct daemon *d, struct client *c)
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
	client_done(d, c, request_handle(d, c, why ? why : ""));
}

/* On each timer tick: clients that did not complete their line in time. */
static void clients_expire(struct daemon *d)
{
	uint64_t now = clock_monotonic_ns();

	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct client *c = &d->clients[i];

		if (c->fd >= 0 && now >= c->deadline_ns)
			client_done(d, c, request_handle(d, c, "timed out or closed"));
	}
}

void clients_tick(struct daemon *d)
{
	clients_expire(d);
	accept_resume(d);
}
