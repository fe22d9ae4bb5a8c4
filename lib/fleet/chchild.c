/*
 * chchild.c - the ClickHouse client in a child without privileges: the
 * parent's side (start, requests with a deadline, killing, reaping and
 * restarting, checking each answer) and the child's (chchild_serve).
 * See chchild.h for the protocol.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "chchild.h"
#include "sandbox.h"
#include "selfexec.h"

enum { F_HELLO = 1, F_QUERY, F_INSERT, F_ANSWER };

struct frame {
	uint32_t kind;
	uint32_t zero;
	uint64_t len;		/* of the payload that follows */
};

/* F_HELLO's payload: all the child knows. */
struct hello {
	uint32_t change_ids;	/* the parent is root: become uid, gid */
	uint32_t uid, gid;
	uint32_t zero;
	struct chclient_url url;
	struct chclient_cred cred;
};

/* F_INSERT's payload: this, the insert, the settings, the gzip rows. */
struct ins {
	uint32_t insert_len;
	uint32_t settings_len;	/* NO_SETTINGS: none */
};
#define NO_SETTINGS	UINT32_MAX

/* F_ANSWER's payload: this, err_len bytes of error line, the answer. */
struct ans {
	int32_t status;		/* 0, or -1: failed, the error line says why */
	uint32_t err_len;
};

struct chchild {
	struct hello hello;	/* sent to each new child */
	size_t answer_max;
	unsigned timeout_s;
	pid_t pid;		/* 0: none running */
	int sock;
	unsigned started;
};

/* --- the child --- */

/* All of len bytes read (out 0) or sent (out 1), blocking; 0, or -1 (the
 * parent hung up). */
static int c_io(int sock, char *p, size_t len, int out)
{
	while (len) {
		ssize_t n = out ? send(sock, p, len, MSG_NOSIGNAL) : read(sock, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int c_read(int sock, void *buf, size_t len)
{
	return c_io(sock, buf, len, 0);
}

static int c_write(int sock, const void *buf, size_t len)
{
	return c_io(sock, (char *)buf, len, 1);
}

/* One F_ANSWER: status, the error line (when status < 0), body. */
static void c_answer(int sock, int status, const struct error *err, const void *body,
		     size_t len)
{
	const char *m = err->msg[0] ? err->msg : "the request failed";
	size_t elen = status < 0 ? strnlen(m, CHCHILD_ERR_MAX) : 0;
	struct ans a = { status, (uint32_t)elen };
	char msg[CHCHILD_ERR_MAX];

	/* printable, as root checks it to be: a byte of the server's in a
	 * libcurl message must not cost the child */
	for (size_t i = 0; i < elen; i++)
		msg[i] = m[i] >= 0x20 && m[i] <= 0x7e ? m[i] : '?';
	struct frame f = { F_ANSWER, 0, sizeof(a) + elen + len };

	if (c_write(sock, &f, sizeof(f)) < 0 || c_write(sock, &a, sizeof(a)) < 0 ||
	    c_write(sock, msg, elen) < 0 || c_write(sock, body, len) < 0)
		_exit(0);
}

/* The next request: its kind, its payload (malloc'ed, NUL-terminated) and
 * length; the parent hung up or sent garbage: exit. */
static uint32_t c_request(int sock, char **buf, size_t *len)
{
	struct frame f;

	if (c_read(sock, &f, sizeof(f)) < 0)
		_exit(0);
	if (f.len > CHCHILD_REQUEST_MAX + sizeof(struct hello))
		_exit(1);
	*buf = malloc(f.len + 1);
	if (!*buf || c_read(sock, *buf, f.len) < 0)
		_exit(1);
	(*buf)[f.len] = 0;
	*len = f.len;
	return f.kind;
}

/* A QUERY: the answer checked before it goes to root. */
static void c_query(int sock, struct chclient *c, const char *base, const char *sql)
{
	struct sbuf out = { 0 };
	struct error err = { "" };
	int rc = chclient_pin_host(c, &err);

	if (rc == 0)
		rc = chclient_query(c, sql, &out, &err);
	if (rc == 0 && chchild_check_answer(out.s, out.n, &err) < 0)
		rc = error_prefix(&err, "ClickHouse at %s", base);
	c_answer(sock, rc, &err, out.s, rc == 0 ? out.n : 0);
	free(out.s);
}

static void c_insert(int sock, struct chclient *c, char *p, size_t len)
{
	struct error err = { "" };
	struct ins h;
	char *insert, *settings = NULL;
	size_t slen;
	int rc;

	if (len < sizeof(h))
		_exit(1);
	memcpy(&h, p, sizeof(h));
	slen = h.settings_len == NO_SETTINGS ? 0 : h.settings_len;
	if (h.insert_len > len - sizeof(h) || slen > len - sizeof(h) - h.insert_len)
		_exit(1);
	/* the insert and the settings NUL-terminated in copies (short) */
	insert = malloc(h.insert_len + 1);
	if (h.settings_len != NO_SETTINGS)
		settings = malloc(slen + 1);
	if (!insert || (h.settings_len != NO_SETTINGS && !settings))
		_exit(1);
	memcpy(insert, p + sizeof(h), h.insert_len);
	insert[h.insert_len] = 0;
	if (settings) {
		memcpy(settings, p + sizeof(h) + h.insert_len, slen);
		settings[slen] = 0;
	}
	rc = chclient_pin_host(c, &err);
	if (rc == 0)
		rc = chclient_insert_gz(c, insert, settings, p + sizeof(h) + h.insert_len + slen,
					len - sizeof(h) - h.insert_len - slen, &err);
	c_answer(sock, rc, &err, NULL, 0);
	free(insert);
	free(settings);
}

void chchild_serve(int sock)
{
	struct sandbox_limits l = { .nproc_zero = 1 };
	struct error err = { "" };
	struct hello h;
	struct chclient *c = NULL;
	sigset_t none;
	size_t len;
	char *p;

	/* nothing of the parent's but the socket; default signals */
	if (sock != 3) {
		if (dup2(sock, 3) < 0)
			_exit(1);
		sock = 3;
	}
	fd_close_others(sock);
	/* 0, 1 and 2 on /dev/null: a library's message to stderr must not go
	 * down a connection that took descriptor 2 */
	for (int fd = open("/dev/null", O_RDWR | O_CLOEXEC); fd >= 0 && fd < 2;)
		fd = dup(fd);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);	/* a server that hangs up is an error, not death */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_NAME, "strobe-fleet", 0, 0, 0);
	if (c_request(sock, &p, &len) != F_HELLO || len != sizeof(h))
		_exit(1);
	memcpy(&h, p, sizeof(h));
	memset(p, 0, len);
	free(p);
	if (!memchr(h.url.base, 0, sizeof(h.url.base)) ||
	    !memchr(h.url.database, 0, sizeof(h.url.database)) ||
	    !memchr(h.cred.user, 0, sizeof(h.cred.user)) ||
	    !memchr(h.cred.password, 0, sizeof(h.cred.password)))
		_exit(1);
	if (!h.cred.limits.answer_max)
		h.cred.limits.answer_max = CHCLIENT_ANSWER_MAX;
	/* the answer and a copy of it, one request, and libcurl with TLS */
	l.as = 2 * (uint64_t)h.cred.limits.answer_max + CHCHILD_REQUEST_MAX + (256ULL << 20);
	if (sandbox_drop((int)h.change_ids, h.uid, h.gid, &l, &err) == 0)
		c = chclient_new(&h.url, &h.cred, &err);
	memset(&h.cred.password, 0, sizeof(h.cred.password));
	if (!c) {
		error_prefix(&err, "the fleet child did not start");
		c_answer(sock, -1, &err, NULL, 0);
		_exit(1);
	}
	c_answer(sock, 0, &err, NULL, 0);
	for (;;) {
		uint32_t kind = c_request(sock, &p, &len);

		if (kind == F_QUERY && !memchr(p, 0, len))
			c_query(sock, c, h.url.base, p);
		else if (kind == F_INSERT)
			c_insert(sock, c, p, len);
		else
			_exit(1);
		free(p);
	}
}

int chchild_check_answer(const char *s, size_t n, struct error *e)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if ((ch < 0x20 || ch > 0x7e) && ch != '\t' && ch != '\n')
			return error_set(e, "the ClickHouse server's answer holds a byte that is "
					 "not printable ASCII (0x%02x at offset %zu): refused",
					 ch, i);
	}
	return 0;
}

/* --- the parent --- */

/* The child is gone or must go: kill it, reap it. */
static void gone(struct chchild *k)
{
	if (k->pid > 0) {
		kill(k->pid, SIGKILL);
		while (waitpid(k->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (k->sock >= 0)
		close(k->sock);
	k->sock = -1;
	k->pid = 0;
}

/* Wait for events on the socket until deadline_ns: 0, or -1 with the
 * child killed and e set. */
static int wait_sock(struct chchild *k, short events, uint64_t deadline_ns, unsigned limit_ms,
		     struct error *e)
{
	for (;;) {
		struct pollfd p = { k->sock, events, 0 };
		uint64_t now = clock_monotonic_ns();
		int r;

		if (now >= deadline_ns) {
			gone(k);
			return error_set(e, "the fleet child did not answer within %u ms (the "
					 "request's timeout and a margin): killed", limit_ms);
		}
		r = poll(&p, 1, (int)((deadline_ns - now + 999999) / 1000000));
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR) {
			gone(k);
			return error_set(e, "fleet child: poll: %s", strerror(errno));
		}
	}
}

/* Send the iovecs' bytes by the deadline; 0, or -1 with the child gone. */
static int send_all(struct chchild *k, struct iovec *iov, int n, uint64_t deadline_ns,
		    unsigned limit_ms, struct error *e)
{
	while (n > 0) {
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };
		ssize_t w = sendmsg(k->sock, &m, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (wait_sock(k, POLLOUT, deadline_ns, limit_ms, e) < 0)
				return -1;
			continue;
		}
		if (w < 0) {
			gone(k);
			return error_set(e, "the fleet child died (sending a request to it: %s)",
					 strerror(errno));
		}
		for (; n > 0 && (size_t)w >= iov->iov_len; iov++, n--)
			w -= (ssize_t)iov->iov_len;
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

static int recv_all(struct chchild *k, void *buf, size_t len, uint64_t deadline_ns,
		    unsigned limit_ms, struct error *e)
{
	char *p = buf;

	while (len) {
		ssize_t r = recv(k->sock, p, len, MSG_DONTWAIT);

		if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (wait_sock(k, POLLIN, deadline_ns, limit_ms, e) < 0)
				return -1;
			continue;
		}
		if (r <= 0) {
			gone(k);
			return error_set(e, "the fleet child died during the request");
		}
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/* A frame that breaks the protocol: the child is not to be trusted. */
static int garbage(struct chchild *k, const char *what, struct error *e)
{
	gone(k);
	return error_set(e, "the fleet child sent %s: killed", what);
}

/*
 * The answer to a request, by the deadline: its status (0 or -1, e then
 * the child's error line) with the body appended to *out; or -2 with the
 * child killed and e set.  Every part checked: the frame's kind and size,
 * the error line printable, the body printable text of at most answer_max.
 */
static int recv_answer(struct chchild *k, struct sbuf *out, uint64_t deadline_ns,
		       unsigned limit_ms, struct error *e)
{
	struct frame f;
	struct ans a;
	char line[CHCHILD_ERR_MAX + 1];
	size_t body;

	if (recv_all(k, &f, sizeof(f), deadline_ns, limit_ms, e) < 0)
		return -2;
	if (f.kind != F_ANSWER || f.zero || f.len < sizeof(a))
		return garbage(k, "a malformed frame", e) - 1;
	if (f.len > sizeof(a) + CHCHILD_ERR_MAX + (out ? k->answer_max : 0))
		return garbage(k, "a frame larger than allowed", e) - 1;
	if (recv_all(k, &a, sizeof(a), deadline_ns, limit_ms, e) < 0)
		return -2;
	if ((a.status != 0 && a.status != -1) || a.err_len > CHCHILD_ERR_MAX ||
	    a.err_len > f.len - sizeof(a) || (a.status == 0) != (a.err_len == 0))
		return garbage(k, "a malformed answer", e) - 1;
	body = f.len - sizeof(a) - a.err_len;
	if ((a.status < 0 || !out) && body)
		return garbage(k, "a malformed answer", e) - 1;
	if (recv_all(k, line, a.err_len, deadline_ns, limit_ms, e) < 0)
		return -2;
	line[a.err_len] = 0;
	if (a.status < 0) {
		for (size_t i = 0; i < a.err_len; i++)
			if (line[i] < 0x20 || line[i] > 0x7e)
				return garbage(k, "an error line that is not printable", e) - 1;
		error_set(e, "%s", line);
		return -1;
	}
	if (!body)
		return 0;
	{
		size_t at = out->n;

		/* room for the body, then read into it directly */
		ARRAY_GROW(out->s, out->cap, at + body + 1);
		if (recv_all(k, out->s + at, body, deadline_ns, limit_ms, e) < 0)
			return -2;
		/* again here: the child may be the server's now */
		if (chchild_check_answer(out->s + at, body, e) < 0) {
			out->s[at] = 0;
			return garbage(k, "an answer that is not printable text", e) - 1;
		}
		out->n = at + body;
		out->s[out->n] = 0;
	}
	return 0;
}

int chchild_exec_main(int argc, char **argv)
{
	if (argc != 3 || strcmp(argv[1], SELFEXEC_ARG) || strcmp(argv[2], "fleet"))
		return 2;
	chchild_serve(3);
}

static int start(struct chchild *k, struct error *e)
{
	static char *const argv[] = { "strobe-fleet", SELFEXEC_ARG, "fleet", NULL };
	struct frame f = { F_HELLO, 0, sizeof(k->hello) };
	struct iovec iov[2] = { { &f, sizeof(f) }, { &k->hello, sizeof(k->hello) } };
	uint64_t deadline = clock_monotonic_ns() + CHCHILD_START_MS * 1000000ULL;
	int sv[2], rc;
	pid_t pid;

	if (k->started > CHCHILD_RESTARTS)
		return error_set(e, "no fleet child: %u started and failed in this push, the "
				 "limit", k->started);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return error_set(e, "fleet child: socketpair: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return error_set(e, "fleet child: fork: %s", strerror(errno));
	}
	if (pid == 0) {
		/* afresh when the program allows it: nothing of its memory */
		if (selfexec_enabled())
			selfexec_run(sv[1], argv);
		chchild_serve(sv[1]);
	}
	close(sv[1]);
	k->sock = sv[0];
	k->pid = pid;
	k->started++;
	if (send_all(k, iov, 2, deadline, CHCHILD_START_MS, e) < 0)
		return error_prefix(e, "starting the fleet child");
	rc = recv_answer(k, NULL, deadline, CHCHILD_START_MS, e);
	if (rc == -2)
		return error_prefix(e, "starting the fleet child");
	if (rc < 0)
		gone(k);
	return rc;
}

/* A child that died between requests: reaped. */
static void reap_idle(struct chchild *k)
{
	if (k->pid > 0 && waitpid(k->pid, NULL, WNOHANG) == k->pid) {
		k->pid = 0;
		gone(k);
	}
}

/* One request (the iovecs after the frame head, len bytes) and its answer. */
static int call(struct chchild *k, uint32_t kind, struct iovec *iov, int n, size_t len,
		struct sbuf *out, struct error *e)
{
	struct frame f = { kind, 0, len };
	struct iovec all[5] = { { &f, sizeof(f) } };
	unsigned limit_ms = k->timeout_s * 1000 + CHCHILD_MARGIN_MS;
	uint64_t deadline;

	if (len > CHCHILD_REQUEST_MAX)
		return error_set(e, "a ClickHouse request of %zu bytes: more than %u MiB", len,
				 CHCHILD_REQUEST_MAX >> 20);
	reap_idle(k);
	if (k->pid <= 0 && start(k, e) < 0)
		return -1;
	memcpy(all + 1, iov, (size_t)n * sizeof(*iov));
	deadline = clock_monotonic_ns() + limit_ms * 1000000ULL;
	if (send_all(k, all, n + 1, deadline, limit_ms, e) < 0)
		return -1;
	return recv_answer(k, out, deadline, limit_ms, e) < 0 ? -1 : 0;
}

struct chchild *chchild_new(const struct chclient_url *u, const struct chclient_cred *cred,
			    struct error *e)
{
	struct chchild *k = xcalloc(1, sizeof(*k));

	k->sock = -1;
	k->hello.url = *u;
	k->hello.cred = *cred;
	k->answer_max = cred->limits.answer_max ? cred->limits.answer_max : CHCLIENT_ANSWER_MAX;
	k->timeout_s = cred->limits.timeout_s ? cred->limits.timeout_s : CHCLIENT_TIMEOUT_S;
	if (geteuid() == 0) {
		k->hello.change_ids = 1;
		if (sandbox_user(NULL, &k->hello.uid, &k->hello.gid, e) < 0) {
			error_prefix(e, "fleet child");
			goto fail;
		}
	}
	if (start(k, e) < 0)
		goto fail;
	return k;
fail:
	chchild_free(k);
	return NULL;
}

void chchild_free(struct chchild *k)
{
	if (!k)
		return;
	gone(k);
	memset(k->hello.cred.password, 0, sizeof(k->hello.cred.password));
	free(k);
}

int chchild_query(struct chchild *k, const char *sql, struct sbuf *out, struct error *e)
{
	size_t at = out->n;
	struct iovec iov = { (void *)sql, strlen(sql) };
	int rc = call(k, F_QUERY, &iov, 1, iov.iov_len, out, e);

	if (rc < 0 && out->s) {
		out->n = at;
		out->s[at] = 0;
	}
	return rc;
}

int chchild_insert(struct chchild *k, const char *insert, const char *settings,
		   const void *gz, size_t gzlen, struct error *e)
{
	struct ins h = { (uint32_t)strlen(insert),
			 settings ? (uint32_t)strlen(settings) : NO_SETTINGS };
	struct iovec iov[4] = {
		{ &h, sizeof(h) }, { (void *)insert, h.insert_len },
		{ (void *)settings, settings ? h.settings_len : 0 }, { (void *)gz, gzlen },
	};

	return call(k, F_INSERT, iov, 4, sizeof(h) + iov[1].iov_len + iov[2].iov_len + gzlen,
		    NULL, e);
}

pid_t chchild_pid(const struct chchild *k)
{
	return k->pid;
}

unsigned chchild_started(const struct chchild *k)
{
	return k->started;
}
