/*
 * symworker.c - symbol reading in a process without privileges (see
 * symworker.h): the parent's side.  It starts a worker (symchild.c),
 * sends each request with a deadline, kills and reaps a worker that hangs,
 * dies or answers garbage, blames the binary the request was about and
 * starts a new worker for the next request (reopening the binaries it had
 * open from the descriptors kept here), and checks every answer: its
 * size, counts, name lengths and NUL bytes (the worker parsed hostile
 * bytes: what it says is untrusted).  The protocol: symworker_int.h.
 */
#include "config.h"
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "sandbox.h"
#include "symworker_int.h"

struct whandle {
	int used, failed;
	int fd, dbg_fd;		/* kept for a new worker; -1: none */
	int mini;		/* MiniDebugInfo was attached */
	unsigned gen;		/* the worker generation it is open in */
	char *name;
};

struct symworker {
	struct symworker_opts o;	/* with its defaults; user and comm not kept */
	struct wconf c;		/* what each worker is started with */
	pid_t pid;		/* 0: none running */
	int sock;
	unsigned gen;
	struct whandle *h;	/* SYMWORKER_HANDLES */
	struct symworker_stats st;
	unsigned char *xbuf;	/* an OP_EXT answer: 4 + SYMWORKER_EXT_MAX */
};

static int64_t now_ms(void)
{
	return (int64_t)(clock_monotonic_ns() / 1000000);
}

/* Kill the worker if one runs, reap it, close its socket. */
static void stop(struct symworker *w)
{
	if (w->pid > 0) {
		kill(w->pid, SIGKILL);
		while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (w->sock >= 0)
		close(w->sock);
	w->sock = -1;
	w->pid = 0;
}

/* The worker is gone or must go: kill it, reap it; blame h (>= 0) for it. */
static void gone(struct symworker *w, int h, int timed_out)
{
	stop(w);
	if (timed_out)
		w->st.timeouts++;
	else
		w->st.crashes++;
	if (h >= 0 && !w->h[h].failed) {
		char *list = w->st.failed_names;
		size_t len = strlen(list), room = sizeof(w->st.failed_names) - len;

		w->h[h].failed = timed_out ? 2 : 1;
		w->st.failed++;
		if (room > 4 && (len < 3 || strcmp(list + len - 3, "...")) &&
		    snprintf(list + len, room, "%s%s", len ? ", " : "", w->h[h].name) >=
		    (int)room)
			strcpy(list + sizeof(w->st.failed_names) - 4, "...");
	}
}

static int send_req(struct symworker *w, const struct wreq *q, int fd)
{
	return fd_send_with(w->sock, q, WREQ_HEAD + q->n * sizeof(uint64_t), fd) < 0 ? -1 : 0;
}

/* The answer, of at most cap bytes, within the deadline: its length; -1
 * when the worker died or answered nothing in time (the worker is gone
 * then, h blamed, e says which). */
static ssize_t recv_reply(struct symworker *w, int h, void *buf, size_t cap, struct error *e)
{
	int64_t end = now_ms() + w->o.timeout_ms;
	ssize_t n;

	for (;;) {
		struct pollfd p = { w->sock, POLLIN, 0 };
		int64_t left = end - now_ms();
		int r;

		if (left <= 0) {
			gone(w, h, 1);
			return error_set(e, "the symbol worker did not answer within %u ms: "
					 "killed", w->o.timeout_ms);
		}
		r = poll(&p, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r > 0)
			break;
		if (r < 0) {
			gone(w, h, 0);
			return error_set(e, "symbol worker: poll: %s", strerror(errno));
		}
	}
	do
		n = recv(w->sock, buf, cap, MSG_TRUNC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		gone(w, h, 0);
		return error_set(e, "the symbol worker died");
	}
	if ((size_t)n > cap) {
		gone(w, h, 0);
		return error_set(e, "the symbol worker answered %zd bytes (at most %zu): killed",
				 n, cap);
	}
	return n;
}

static int start(struct symworker *w, struct error *e)
{
	struct wargv a;
	char *const *argv;
	struct winfo in;
	int sv[2];
	pid_t pid;

	if (w->st.started > w->o.max_restarts)
		return error_set(e, "no symbol worker: it failed %u times", w->st.started);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return error_set(e, "symbol worker: socketpair: %s", strerror(errno));
	if (w->c.ext)	/* room for an OP_EXT request or answer */
		for (int i = 0; i < 2; i++) {
			int sz = 2 * (WREQ_HEAD + SYMWORKER_EXT_MAX) + 4096;

			if (setsockopt(sv[i], SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0)
				setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		}
	argv = symchild_argv(&w->c, &a);
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return error_set(e, "symbol worker: fork: %s", strerror(errno));
	}
	if (pid == 0)
		symchild_main(&w->c, sv[1], argv);
	close(sv[1]);
	w->sock = sv[0];
	w->pid = pid;
	w->gen++;
	w->st.started++;
	if (recv_reply(w, -1, &in, sizeof(in), e) != (ssize_t)sizeof(in)) {
		if (w->pid)
			gone(w, -1, 0);
		return error_prefix(e, "starting the symbol worker");
	}
	if (in.status) {
		in.err[sizeof(in.err) - 1] = 0;
		gone(w, -1, 0);
		return error_set(e, "the symbol worker did not start: %s", in.err);
	}
	return 0;
}

/* A worker that died between requests: reaped, no binary to blame. */
static void reap_idle(struct symworker *w)
{
	if (w->pid > 0 && waitpid(w->pid, NULL, WNOHANG) == w->pid) {
		w->pid = 0;
		gone(w, -1, 0);
	}
}

/* A worker running (one started if none is): 0, or -1 with e set. */
static int running(struct symworker *w, struct error *e)
{
	reap_idle(w);
	return w->pid <= 0 ? start(w, e) : 0;
}

/* The worker answered what makes no sense: it goes, h (>= 0) blamed;
 * -1 with e set. */
static int garbage(struct symworker *w, int h, struct error *e)
{
	gone(w, h, 0);
	return error_set(e, "the symbol worker answered garbage: killed");
}

/* Whether h is an open handle of w. */
static int handle_ok(const struct symworker *w, int h)
{
	return h >= 0 && h < SYMWORKER_HANDLES && w->h[h].used;
}

/* One request, its answer checked for its size: the length, or -1. */
static ssize_t call(struct symworker *w, int h, const struct wreq *q, int fd, void *buf,
		    size_t cap, struct error *e)
{
	if (running(w, e) < 0)
		return -1;
	if (send_req(w, q, fd) < 0) {
		gone(w, h, 0);
		return error_set(e, "the symbol worker died");
	}
	return recv_reply(w, h, buf, cap, e);
}

/* An info answer (OPEN, DEBUG, MINI): its status, or -2 when the call
 * failed (e set); *info filled when status >= 0. */
static int call_info(struct symworker *w, int h, uint32_t op, int fd,
		     struct symworker_bin *info, struct error *e)
{
	struct wreq q = { .op = op, .h = (uint32_t)h, .raw = (uint32_t)w->o.raw_names };
	struct winfo in;
	ssize_t n = call(w, h, &q, fd, &in, sizeof(in), e);

	if (n < 0)
		return -2;
	if (n != sizeof(in) || !memchr(in.link, 0, sizeof(in.link)) ||
	    in.status < -1 || in.status > 1) {
		garbage(w, h, e);
		return -2;
	}
	in.err[sizeof(in.err) - 1] = 0;
	if (in.status < 0) {
		error_set(e, "%s", in.err);
		return -1;
	}
	if (info) {
		info->nsyms = in.nsyms;
		info->has_symtab = !!in.has_symtab;
		memcpy(info->link, in.link, sizeof(info->link));
		info->link_crc = in.link_crc;
	}
	return in.status;
}

static int failed(struct symworker *w, int h, struct error *e)
{
	const struct whandle *x = &w->h[h];

	return error_set(e, "%s: the symbol worker %s reading it", x->name,
			 x->failed == 2 ? "hung (killed after the timeout)" : "crashed");
}

/* h open in the current worker (reopened after a new one started): 0, or
 * -1 with e set. */
static int ensure(struct symworker *w, int h, struct error *e)
{
	struct whandle *x = &w->h[h];
	int rc;

	if (x->failed)
		return failed(w, h, e);
	reap_idle(w);
	if (w->pid > 0 && x->gen == w->gen)
		return 0;
	rc = call_info(w, h, OP_OPEN, x->fd, NULL, e);
	if (rc >= 0 && x->dbg_fd >= 0)
		rc = call_info(w, h, OP_DEBUG, x->dbg_fd, NULL, e);
	else if (rc >= 0 && x->mini)
		rc = call_info(w, h, OP_MINI, -1, NULL, e);
	if (rc < 0)
		return x->failed ? failed(w, h, e) : -1;
	x->gen = w->gen;
	return 0;
}

struct symworker *symworker_new(const struct symworker_opts *o, struct error *e)
{
	struct symworker *w = xcalloc(1, sizeof(*w));

	if (o)
		w->o = *o;
	if (!w->o.timeout_ms)
		w->o.timeout_ms = SYMWORKER_TIMEOUT_MS;
	if (!w->o.max_restarts)
		w->o.max_restarts = SYMWORKER_RESTARTS;
	if (!w->o.mem_max)
		w->o.mem_max = 1ULL << 30;
	if (!w->o.cpu_s)
		w->o.cpu_s = 60;
	w->sock = -1;
	w->h = xcalloc(SYMWORKER_HANDLES, sizeof(*w->h));
	{
		const char *c = w->o.comm ? w->o.comm : "strobe-symworker";

		memcpy(w->c.comm, c, strnlen(c, sizeof(w->c.comm) - 1));
	}
	w->o.comm = NULL;	/* not kept */
	w->c.mem_max = w->o.mem_max;
	w->c.cpu_s = w->o.cpu_s;
	w->c.ext = w->o.ext;
	if (w->c.ext)
		w->xbuf = xmalloc(4 + SYMWORKER_EXT_MAX);
	if (geteuid() == 0) {
		w->c.drop = 1;
		if (sandbox_user(w->o.user, &w->c.uid, &w->c.gid, e) < 0) {
			error_prefix(e, "symbol worker");
			goto fail;
		}
	}
	w->o.user = NULL;	/* not kept */
	if (start(w, e) < 0)
		goto fail;
	return w;
fail:
	symworker_free(w);
	return NULL;
}

void symworker_free(struct symworker *w)
{
	if (!w)
		return;
	stop(w);	/* before the handles: no OP_CLOSE to a worker gone */
	for (int i = 0; i < SYMWORKER_HANDLES; i++)
		if (w->h[i].used)
			symworker_close(w, i);
	free(w->h);
	free(w->xbuf);
	free(w);
}

int symworker_open(struct symworker *w, int fd, const char *name, struct symworker_bin *info,
		   struct error *e)
{
	struct whandle *x = NULL;
	int h, rc;

	for (h = 0; h < SYMWORKER_HANDLES; h++)
		if (!w->h[h].used) {
			x = &w->h[h];
			break;
		}
	if (!x) {
		close(fd);
		return error_set(e, "%s: more than %d binaries open in the symbol worker", name,
				 SYMWORKER_HANDLES);
	}
	memset(x, 0, sizeof(*x));
	x->used = 1;
	x->fd = fd;
	x->dbg_fd = -1;
	x->name = xstrdup(name);
	rc = call_info(w, h, OP_OPEN, fd, info, e);
	if (rc < 0) {
		if (x->failed)
			failed(w, h, e);
		symworker_close(w, h);
		return -1;
	}
	x->gen = w->gen;
	return h;
}

static int attach(struct symworker *w, int h, int fd, struct symworker_bin *info,
		  struct error *e)
{
	struct whandle *x;
	int rc;

	if (!handle_ok(w, h)) {
		if (fd >= 0)
			close(fd);
		return error_set(e, "symbol worker: no handle %d", h);
	}
	x = &w->h[h];
	if (ensure(w, h, e) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	rc = call_info(w, h, fd >= 0 ? OP_DEBUG : OP_MINI, fd, info, e);
	if (rc == 1 && fd >= 0 && x->dbg_fd < 0 && !x->mini)
		x->dbg_fd = fd;
	else if (fd >= 0)
		close(fd);
	if (rc == 1 && fd < 0)
		x->mini = 1;
	if (rc == -2 && x->failed)
		return failed(w, h, e);
	return rc < 0 ? -1 : rc;
}

int symworker_debug(struct symworker *w, int h, int fd, struct symworker_bin *info,
		    struct error *e)
{
	if (fd < 0)
		return error_set(e, "symbol worker: no debug file");
	return attach(w, h, fd, info, e);
}

int symworker_build_id(struct symworker *w, int fd, uint8_t *id, size_t cap, struct error *e)
{
	struct wreq q = { .op = OP_BUILD_ID };
	struct wbid b;
	ssize_t n;

	if (fd < 0)
		return error_set(e, "symbol worker: no file");
	n = call(w, -1, &q, fd, &b, sizeof(b), e);	/* fd dup'ed by SCM_RIGHTS */
	if (n < 0)
		return -1;
	if (n != sizeof(b) || b.n < 0 || (size_t)b.n > sizeof(b.id))
		return garbage(w, -1, e);
	if ((size_t)b.n > cap)
		return 0;	/* longer than any the caller wants: not it */
	memcpy(id, b.id, (size_t)b.n);
	return b.n;
}

int symworker_mini(struct symworker *w, int h, struct symworker_bin *info, struct error *e)
{
	return attach(w, h, -1, info, e);
}

/* The names of one answer to at most n offsets into names[]: how many
 * (1 to n), or -1 (garbage). */
static long parse_names(const unsigned char *buf, size_t len, size_t n, char **names)
{
	size_t pos = 4;
	uint32_t got;

	if (len < 4)
		return -1;
	memcpy(&got, buf, 4);
	if (got < 1 || got > n)
		return -1;
	for (size_t i = 0; i < got; i++) {
		uint16_t l;

		if (len - pos < 2)
			return -1;
		memcpy(&l, buf + pos, 2);
		pos += 2;
		if (l == NAME_NONE)
			continue;
		if (l > SYMWORKER_NAME_MAX || len - pos < l || memchr(buf + pos, 0, l))
			return -1;
		names[i] = xmalloc(l + 1u);
		memcpy(names[i], buf + pos, l);
		names[i][l] = 0;
		pos += l;
	}
	return pos == len ? (long)got : -1;
}

int symworker_lookup(struct symworker *w, int h, const uint64_t *off, size_t n, char **names,
		     struct error *e)
{
	static unsigned char buf[REPLY_MAX + 1];
	size_t i, done;

	for (i = 0; i < n; i++)
		names[i] = NULL;
	if (!handle_ok(w, h))
		return error_set(e, "symbol worker: no handle %d", h);
	for (done = 0; done < n;) {
		struct wreq q = { .op = OP_LOOKUP, .h = (uint32_t)h };
		ssize_t len;
		long got;

		q.n = n - done < SYMWORKER_BATCH ? (uint32_t)(n - done) : SYMWORKER_BATCH;
		memcpy(q.off, off + done, q.n * sizeof(*off));
		if (ensure(w, h, e) < 0)
			goto fail;
		len = call(w, h, &q, -1, buf, sizeof(buf), e);
		if (len < 0) {
			failed(w, h, e);
			goto fail;
		}
		if ((got = parse_names(buf, (size_t)len, q.n, names + done)) < 0) {
			gone(w, h, 0);
			error_set(e, "%s: the symbol worker answered garbage: killed", w->h[h].name);
			goto fail;
		}
		done += (size_t)got;
	}
	return 0;
fail:
	for (i = 0; i < n; i++) {
		free(names[i]);
		names[i] = NULL;
	}
	return -1;
}

void symworker_close(struct symworker *w, int h)
{
	struct whandle *x;

	if (!handle_ok(w, h))
		return;
	x = &w->h[h];
	if (w->pid > 0 && x->gen == w->gen && !x->failed) {
		struct wreq q = { .op = OP_CLOSE, .h = (uint32_t)h };

		if (send_req(w, &q, -1) < 0)
			gone(w, -1, 0);
	}
	if (x->fd >= 0)
		close(x->fd);
	if (x->dbg_fd >= 0)
		close(x->dbg_fd);
	free(x->name);
	memset(x, 0, sizeof(*x));
}

ssize_t symworker_call(struct symworker *w, const void *req, size_t len, void *out, size_t cap,
		       int (*give_fd)(void *ctx, uint64_t key), void *ctx, struct error *e)
{
	struct wreq head = { .op = OP_EXT };
	struct iovec iov[2] = { { &head, WREQ_HEAD }, { (void *)req, len } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
	unsigned needs = 0;
	ssize_t n;

	if (!w->c.ext || len > SYMWORKER_EXT_MAX)
		return error_set(e, "worker: a request of %zu bytes (at most %u)", len,
				 (unsigned)SYMWORKER_EXT_MAX);
	if (running(w, e) < 0)
		return -1;
	do
		n = sendmsg(w->sock, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		int err = errno;

		gone(w, -1, 0);
		return error_set(e, "the worker died (sending: %s)", strerror(err));
	}
	for (;;) {
		uint32_t kind;
		uint64_t key;

		n = recv_reply(w, -1, w->xbuf, 4 + SYMWORKER_EXT_MAX, e);
		if (n < 0)
			return -1;
		if (n < 4)
			break;
		memcpy(&kind, w->xbuf, 4);
		if (kind == EXT_DONE) {
			if ((size_t)n - 4 > cap)
				break;
			memcpy(out, w->xbuf + 4, (size_t)n - 4);
			return n - 4;
		}
		if (kind != EXT_NEED || n != 12 || ++needs > SYMWORKER_EXT_FDS)
			break;
		memcpy(&key, w->xbuf + 4, 8);
		{
			struct wreq q = { .op = OP_FD };
			int fd = give_fd ? give_fd(ctx, key) : -1;
			long rc = fd_send_with(w->sock, &q, WREQ_HEAD, fd);

			if (fd >= 0)
				close(fd);
			if (rc < 0) {
				gone(w, -1, 0);
				return error_set(e, "the worker died");
			}
		}
	}
	gone(w, -1, 0);
	return error_set(e, "the worker answered garbage: killed");
}

void symworker_discard(struct symworker *w)
{
	gone(w, -1, 0);
}

pid_t symworker_pid(const struct symworker *w)
{
	return w->pid;
}

int symworker_selftest(struct symworker *w, struct symworker_self *out, struct error *e)
{
	struct wreq q = { .op = OP_SELF };
	ssize_t n = call(w, -1, &q, -1, out, sizeof(*out), e);

	if (n < 0)
		return -1;
	if (n != sizeof(*out))
		return garbage(w, -1, e);
	return 0;
}

void symworker_stats(const struct symworker *w, struct symworker_stats *out)
{
	*out = w->st;
}
