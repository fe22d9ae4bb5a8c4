/*
 * symworker.c - symbol reading in a process without privileges (see
 * symworker.h): the parent's side (start, requests with a deadline,
 * reaping and respawning, checking what comes back) and the worker's
 * (dropping its rights, the seccomp filter, serving requests with
 * symtab.c).
 *
 * Messages are SOCK_SEQPACKET datagrams: a request is struct wreq (its
 * offsets only as many as n), with at most one descriptor (SCM_RIGHTS);
 * OPEN, DEBUG, MINI and the start-up hello answer a struct winfo, LOOKUP a
 * count k (1 <= k <= n) and the names of the first k offsets (a u16 length,
 * NAME_NONE for none, then the bytes, no NUL): as many as fit in REPLY_MAX
 * bytes, the parent asks again for the rest.  BUILD_ID answers a struct
 * wbid; SELF a struct symworker_self; CLOSE has no answer.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "debuginfo.h"
#include "hashkey.h"
#include "symtab.h"
#include "symworker.h"
#include "sandbox.h"
#include "selfexec.h"

enum { OP_HELLO, OP_OPEN, OP_DEBUG, OP_MINI, OP_LOOKUP, OP_CLOSE, OP_SELF, OP_EXT, OP_FD,
       OP_BUILD_ID };
/* The worker's messages during an OP_EXT request: a u32 kind, then the
 * key of a descriptor it asks for (u64, answered by an OP_FD request with
 * the descriptor or none), or the answer. */
enum { EXT_NEED = 1, EXT_DONE = 2 };

#define NAME_NONE	0xffff
#define ERR_MAX		256
/* one reply: a count, then names; always room for one name of
 * SYMWORKER_NAME_MAX behind SYMWORKER_BATCH - 1 empty ones, and within an
 * AF_UNIX socket's default send buffer (net.core.wmem_default, 208 KiB) */
#define REPLY_MAX	(128 * 1024)
_Static_assert(4 + 2 * SYMWORKER_BATCH + SYMWORKER_NAME_MAX <= REPLY_MAX, "a reply holds a name");

struct wreq {
	uint32_t op, h, n, raw;
	uint64_t off[SYMWORKER_BATCH];
};
#define WREQ_HEAD	offsetof(struct wreq, off)

struct winfo {
	int32_t status;		/* OPEN: 0 or -1; DEBUG, MINI: 1, 0 or -1 */
	uint32_t nsyms, has_symtab, link_crc;
	char link[SYMWORKER_LINK_MAX];
	char err[ERR_MAX];
};

struct wbid {			/* BUILD_ID: the length (0: none), the bytes */
	int32_t n;
	uint8_t id[BUILD_ID_MAX];
};

struct whandle {
	int used, failed;
	int fd, dbg_fd;		/* kept for a new worker; -1: none */
	int mini;		/* MiniDebugInfo was attached */
	unsigned gen;		/* the worker generation it is open in */
	char *name;
};

struct symworker {
	struct symworker_opts o;
	int drop;		/* started as root: change ids */
	uid_t uid;
	gid_t gid;
	pid_t pid;		/* 0: none running */
	int sock;
	unsigned gen;
	struct whandle *h;	/* SYMWORKER_HANDLES */
	struct symworker_stats st;
	unsigned char *xbuf;	/* an OP_EXT answer: 4 + SYMWORKER_EXT_MAX */
	char comm[16];
};

/* The request buffer of the worker: a struct wreq, or an OP_EXT request's
 * head and bytes. */
union wbuf {
	struct wreq q;
	unsigned char b[offsetof(struct wreq, off) + SYMWORKER_EXT_MAX];
};

/* --- the worker --- */

static void w_send(int sock, const void *buf, size_t len)
{
	while (send(sock, buf, len, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

static void w_info(int sock, struct symtab *st, int status, const struct error *err)
{
	struct winfo in;
	char *link;
	uint32_t crc = 0;

	memset(&in, 0, sizeof(in));
	in.status = status;
	if (st) {
		in.nsyms = (uint32_t)symtab_count(st);
		in.has_symtab = symtab_has_symtab(st);
		link = symtab_debuglink(st, &crc);
		if (link && strlen(link) < sizeof(in.link)) {
			strcpy(in.link, link);
			in.link_crc = crc;
		}
		free(link);
	}
	if (err && status < 0)
		memcpy(in.err, err->msg, strnlen(err->msg, sizeof(in.err) - 1));
	w_send(sock, &in, sizeof(in));
}

static void w_lookup(int sock, struct symtab *st, const struct wreq *q)
{
	static unsigned char out[REPLY_MAX];
	size_t pos = 4;
	uint32_t i;

	for (i = 0; i < q->n; i++) {
		struct symtab_hit hit;
		uint16_t len = NAME_NONE;
		size_t l = 0;

		if (st && symtab_lookup(st, q->off[i], 0, &hit) == 0 && hit.name) {
			l = strnlen(hit.name, SYMWORKER_NAME_MAX);
			len = (uint16_t)l;
		}
		if (pos + 2 + l > sizeof(out))
			break;	/* the rest in the next reply (i >= 1: see REPLY_MAX) */
		memcpy(out + pos, &len, 2);
		if (l)
			memcpy(out + pos + 2, hit.name, l);
		pos += 2 + l;
	}
	memcpy(out, &i, 4);
	w_send(sock, out, pos);
}

/* A debug file candidate's build-id, for the parent to compare. */
static void w_build_id(int sock, int fd)
{
	struct error err = { "" };
	struct wbid b;

	memset(&b, 0, sizeof(b));
	if (fd >= 0)
		b.n = hashkey_build_id_fd(fd, b.id, sizeof(b.id), &err);
	if (b.n < 0)
		b.n = 0;	/* unreadable: no build-id, refused */
	w_send(sock, &b, sizeof(b));
}

static void w_self(int sock, int seccomp_on)
{
	struct __user_cap_header_struct hd = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	struct symworker_self s;
	int fd;

	memset(&s, 0, sizeof(s));
	memset(d, 0, sizeof(d));
	s.uid = getuid();
	s.euid = geteuid();
	s.gid = getgid();
	s.egid = getegid();
	s.ngroups = (uint32_t)getgroups(0, NULL);
	if (syscall(SYS_capget, &hd, d) == 0) {
		s.cap_eff = d[0].effective | (uint64_t)d[1].effective << 32;
		s.cap_prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
		s.cap_inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	} else {
		s.cap_eff = s.cap_prm = s.cap_inh = ~0ULL;
	}
	s.no_new_privs = 1;	/* set before the hello, or there was none */
	s.seccomp = seccomp_on;
	fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	s.open_errno = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	w_send(sock, &s, sizeof(s));
}

/* One request and its descriptor (or -1); 0 at EOF or on a bad message. */
static ssize_t w_recv(int sock, union wbuf *wb, int *fd)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct wreq *q = &wb->q;
	struct iovec iov = { wb, sizeof(*wb) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	ssize_t n;

	*fd = -1;
	do
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int x;

			memcpy(&x, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*fd < 0)
				*fd = x;
			else
				close(x);
		}
	}
	if (n < (ssize_t)WREQ_HEAD || (m.msg_flags & MSG_TRUNC) ||
	    (q->op != OP_EXT && (q->n > SYMWORKER_BATCH ||
				 (size_t)n < WREQ_HEAD + q->n * sizeof(uint64_t)))) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return 0;
	}
	return n;
}

static int w_sock = -1;
static union wbuf w_buf;

int symworker_ext_fd(uint64_t key)
{
	static union wbuf in;	/* not w_buf: the request being served */
	unsigned char msg[12];
	uint32_t kind = EXT_NEED;
	int fd;

	if (w_sock < 0)
		return -1;
	memcpy(msg, &kind, 4);
	memcpy(msg + 4, &key, 8);
	w_send(w_sock, msg, sizeof(msg));
	if (w_recv(w_sock, &in, &fd) <= 0)
		_exit(0);	/* the parent is gone */
	if (in.q.op != OP_FD && fd >= 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void w_ext(int sock, const struct symworker_ext *ext, void **state, size_t len)
{
	static unsigned char out[4 + SYMWORKER_EXT_MAX];
	uint32_t kind = EXT_DONE;
	size_t n = 0;

	if (ext)
		n = ext->serve(state, w_buf.b + WREQ_HEAD, len - WREQ_HEAD, out + 4,
			       SYMWORKER_EXT_MAX);
	memcpy(out, &kind, 4);
	w_send(sock, out, 4 + MIN(n, (size_t)SYMWORKER_EXT_MAX));
}

static void __attribute__((noreturn)) w_serve(int sock, int seccomp_on,
					      const struct symworker_ext *ext)
{
	static struct symtab *st[SYMWORKER_HANDLES];
	struct wreq *const qp = &w_buf.q;
	void *ext_state = NULL;
	ssize_t len;
	int fd;

#define q (*qp)
	w_sock = sock;
	while ((len = w_recv(sock, &w_buf, &fd)) > 0) {
		struct error err = { "" };
		struct symtab **s = q.h < SYMWORKER_HANDLES ? &st[q.h] : NULL;
		int rc = -1;

		switch (q.op) {
		case OP_OPEN:
			if (s && *s)
				symtab_close(*s);
			if (s)
				*s = fd < 0 ? NULL : symtab_open_fd(fd, "the binary", &err);
			if (s && *s) {
				symtab_set_demangle(*s, !q.raw);
				rc = 0;
			} else if (!err.msg[0]) {
				error_set(&err, "bad request");
			}
			w_info(sock, s ? *s : NULL, rc, &err);
			break;
		case OP_DEBUG:
		case OP_MINI:
			if (!s || !*s) {
				error_set(&err, "no such binary");
			} else if (q.op == OP_DEBUG) {
				rc = fd < 0 ? error_set(&err, "no descriptor") :
					symtab_use_debug_fd(*s, fd, "the debug file", &err);
			} else {
				void *buf;
				size_t len;
				int mfd;

				rc = 0;
				if (symtab_debugdata(*s, &buf, &len)) {
					mfd = debuginfo_mini_fd(buf, len, &err);
					free(buf);
					rc = mfd < 0 ? -1 : symtab_use_debug_fd(*s, mfd, ".gnu_debugdata",
										&err);
					if (mfd >= 0)
						close(mfd);
				}
			}
			w_info(sock, s ? *s : NULL, rc, &err);
			break;
		case OP_LOOKUP:
			w_lookup(sock, s ? *s : NULL, &q);
			break;
		case OP_CLOSE:
			if (s && *s)
				symtab_close(*s);
			if (s)
				*s = NULL;
			break;
		case OP_SELF:
			w_self(sock, seccomp_on);
			break;
		case OP_BUILD_ID:
			w_build_id(sock, fd);
			break;
		case OP_EXT:
			w_ext(sock, ext, &ext_state, (size_t)len);
			break;
		}
		if (fd >= 0)
			close(fd);
	}
#undef q
	_exit(0);
}


/* Drop every right for good (sandbox.h); 0, or -1 with err set. */
static int w_drop(const struct symworker *w, struct error *err)
{
	struct sandbox_limits l = {
		.as = w->o.mem_max, .cpu_s = w->o.cpu_s,
		.nofile = 2 * SYMWORKER_HANDLES + 16,
		.fsize = DEBUGINFO_MINI_MAX,	/* the memfd */
		.nproc_zero = 1,
	};

	return sandbox_drop(w->drop, w->uid, w->gid, &l, err);
}

/* In the worker, its socket at 3: drop every right, then serve. */
static void __attribute__((noreturn)) w_run(const struct symworker *w, int sock)
{
	struct error err = { "" };
	sigset_t all;
	int on = 0;

	fd_close_others(sock);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	prctl(PR_SET_NAME, w->comm, 0, 0, 0);
	if (w_drop(w, &err) == 0 && (on = sandbox_seccomp(&err)) >= 0) {
		w_info(sock, NULL, 0, NULL);
		w_serve(sock, on, w->o.ext);
	}
	w_info(sock, NULL, -1, &err);
	_exit(1);
}

/* The forked child: executed afresh when the program allows it (argv,
 * symworker_exec_main), else the copy of the parent serves. */
static void __attribute__((noreturn)) w_main(const struct symworker *w, int sock,
					     char *const *argv)
{
	struct error err = { "" };

	if (argv) {
		selfexec_run(sock, argv);
		error_set(&err, "cannot execute the worker afresh: %s", strerror(errno));
		w_info(3, NULL, -1, &err);
		_exit(1);
	}
	if (sock != 3) {
		if (dup2(sock, 3) < 0)
			_exit(1);
		sock = 3;
	}
	w_run(w, sock);
}

/* The worker's command line, for selfexec_run: built before the fork. */
struct wargv {
	char num[5][24];
	char *argv[10];
};

static char *const *w_argv(const struct symworker *w, struct wargv *a)
{
	const unsigned long long v[5] = { w->drop, w->uid, w->gid, w->o.mem_max, w->o.cpu_s };

	if (!selfexec_enabled())
		return NULL;
	for (int i = 0; i < 5; i++)
		snprintf(a->num[i], sizeof(a->num[i]), "%llu", v[i]);
	a->argv[0] = (char *)w->comm;
	a->argv[1] = (char *)SELFEXEC_ARG;
	a->argv[2] = (char *)"symworker";
	a->argv[3] = (char *)(w->o.ext ? w->o.ext->name : "-");
	for (int i = 0; i < 5; i++)
		a->argv[4 + i] = a->num[i];
	a->argv[9] = NULL;
	return a->argv;
}

static int w_num(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || end == s || *end || *v > max ? -1 : 0;
}

int symworker_exec_main(int argc, char **argv, const struct symworker_ext *const *exts)
{
	static struct symworker w;
	unsigned long long v[5];
	const unsigned long long max[5] = { 1, UINT32_MAX, UINT32_MAX, UINT64_MAX, UINT32_MAX };

	if (argc != 9 || strcmp(argv[1], SELFEXEC_ARG) || strcmp(argv[2], "symworker"))
		return 2;
	for (int i = 0; i < 5; i++)
		if (w_num(argv[4 + i], max[i], &v[i]) < 0)
			return 2;
	if (strcmp(argv[3], "-")) {
		for (; exts && *exts && strcmp((*exts)->name, argv[3]); exts++)
			;
		if (!exts || !*exts)
			return 2;
		w.o.ext = *exts;
	}
	w.drop = (int)v[0];
	w.uid = (uid_t)v[1];
	w.gid = (gid_t)v[2];
	w.o.mem_max = v[3];
	w.o.cpu_s = (unsigned)v[4];
	if (w.drop && (w.uid == 0 || w.gid == 0))
		return 2;
	memcpy(w.comm, argv[0], strnlen(argv[0], sizeof(w.comm) - 1));
	w_run(&w, 3);
}

/* --- the parent --- */

static int64_t now_ms(void)
{
	return (int64_t)(clock_monotonic_ns() / 1000000);
}

/* The worker is gone or must go: kill it, reap it; blame h (>= 0) for it. */
static void gone(struct symworker *w, int h, int timed_out)
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
	if (w->o.ext)	/* room for an OP_EXT request or answer */
		for (int i = 0; i < 2; i++) {
			int sz = 2 * (WREQ_HEAD + SYMWORKER_EXT_MAX) + 4096;

			if (setsockopt(sv[i], SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0)
				setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		}
	argv = w_argv(w, &a);
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return error_set(e, "symbol worker: fork: %s", strerror(errno));
	}
	if (pid == 0)
		w_main(w, sv[1], argv);
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

/* One request, its answer checked for its size: the length, or -1. */
static ssize_t call(struct symworker *w, int h, const struct wreq *q, int fd, void *buf,
		    size_t cap, struct error *e)
{
	reap_idle(w);
	if (w->pid <= 0 && start(w, e) < 0)
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
		gone(w, h, 0);
		error_set(e, "the symbol worker answered garbage: killed");
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

		memcpy(w->comm, c, strnlen(c, sizeof(w->comm) - 1));
	}
	w->o.comm = NULL;	/* not kept */
	if (w->o.ext)
		w->xbuf = xmalloc(4 + SYMWORKER_EXT_MAX);
	if (geteuid() == 0) {
		w->drop = 1;
		if (sandbox_user(w->o.user, &w->uid, &w->gid, e) < 0) {
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
	if (w->pid > 0) {
		kill(w->pid, SIGKILL);
		while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (w->sock >= 0)
		close(w->sock);
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

	if (h < 0 || h >= SYMWORKER_HANDLES || !w->h[h].used) {
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
	if (n != sizeof(b) || b.n < 0 || (size_t)b.n > sizeof(b.id)) {
		gone(w, -1, 0);
		return error_set(e, "the symbol worker answered garbage: killed");
	}
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
	if (h < 0 || h >= SYMWORKER_HANDLES || !w->h[h].used)
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

	if (h < 0 || h >= SYMWORKER_HANDLES || !w->h[h].used)
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

	if (!w->o.ext || len > SYMWORKER_EXT_MAX)
		return error_set(e, "worker: a request of %zu bytes (at most %u)", len,
				 (unsigned)SYMWORKER_EXT_MAX);
	reap_idle(w);
	if (w->pid <= 0 && start(w, e) < 0)
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
	if (n != sizeof(*out)) {
		gone(w, -1, 0);
		return error_set(e, "the symbol worker answered garbage: killed");
	}
	return 0;
}

void symworker_stats(const struct symworker *w, struct symworker_stats *out)
{
	*out = w->st;
}
