/*
 * symserve.c - the symbol worker's requests (symworker_int.h): in the
 * worker, once it dropped its rights (symchild.c), its loop reads each
 * request of the parent, opens a binary, attaches a debug file or the
 * MiniDebugInfo to it and names offsets in it with symtab.c (libbfd),
 * reads a debug file candidate's build-id, says what it runs as, or
 * serves the caller's own kind of request (opts.ext), and sends the
 * answer.  Everything it parses is hostile; the parent checks every
 * answer (symworker.c), so a worker that parsed garbage can at worst
 * answer garbage.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "debuginfo.h"
#include "hashkey.h"
#include "symtab.h"
#include "symworker_int.h"

/* The request buffer of the worker: a struct wreq, or an OP_EXT request's
 * head and bytes. */
union wbuf {
	struct wreq q;
	unsigned char b[offsetof(struct wreq, off) + SYMWORKER_EXT_MAX];
};

static void w_send(int sock, const void *buf, size_t len)
{
	while (send(sock, buf, len, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

void symserve_info(int sock, struct symtab *st, int status, const struct error *err)
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

/* The binaries open in this worker, by the parent's handle. */
static struct symtab *w_bins[SYMWORKER_HANDLES];

/* Forget the binary at *s (NULL: a handle out of range). */
static void w_forget(struct symtab **s)
{
	if (s && *s)
		symtab_close(*s);
	if (s)
		*s = NULL;
}

/* OP_OPEN: the binary open at fd as *s (replacing the one there). */
static void w_open(int sock, struct symtab **s, int fd, uint32_t raw)
{
	struct error err = { "" };
	int rc = -1;

	w_forget(s);
	if (s && fd >= 0)
		*s = symtab_open_fd(fd, "the binary", &err);
	if (s && *s) {
		symtab_set_demangle(*s, !raw);
		rc = 0;
	} else if (!err.msg[0]) {
		error_set(&err, "bad request");
	}
	symserve_info(sock, s ? *s : NULL, rc, &err);
}

/* st's MiniDebugInfo (.gnu_debugdata, xz), decoded into a memfd and
 * attached: as symtab_use_debug_fd(), 0 when it has none. */
static int w_mini(struct symtab *st, struct error *err)
{
	void *buf;
	size_t len;
	int mfd, rc = 0;

	if (symtab_debugdata(st, &buf, &len)) {
		mfd = debuginfo_mini_fd(buf, len, err);
		free(buf);
		rc = mfd < 0 ? -1 : symtab_use_debug_fd(st, mfd, ".gnu_debugdata", err);
		if (mfd >= 0)
			close(mfd);
	}
	return rc;
}

/* OP_DEBUG (the debug file open at fd) or OP_MINI, for st (NULL: none). */
static void w_attach(int sock, struct symtab *st, uint32_t op, int fd)
{
	struct error err = { "" };
	int rc = -1;

	if (!st)
		error_set(&err, "no such binary");
	else if (op == OP_DEBUG)
		rc = fd < 0 ? error_set(&err, "no descriptor") :
			symtab_use_debug_fd(st, fd, "the debug file", &err);
	else
		rc = w_mini(st, &err);
	symserve_info(sock, st, rc, &err);
}

void symserve_run(int sock, int seccomp_on, const struct symworker_ext *ext)
{
	void *ext_state = NULL;
	ssize_t len;
	int fd;

	w_sock = sock;
	while ((len = w_recv(sock, &w_buf, &fd)) > 0) {
		const struct wreq *q = &w_buf.q;
		struct symtab **s = q->h < SYMWORKER_HANDLES ? &w_bins[q->h] : NULL;

		switch (q->op) {
		case OP_OPEN:
			w_open(sock, s, fd, q->raw);
			break;
		case OP_DEBUG:
		case OP_MINI:
			w_attach(sock, s ? *s : NULL, q->op, fd);
			break;
		case OP_LOOKUP:
			w_lookup(sock, s ? *s : NULL, q);
			break;
		case OP_CLOSE:
			w_forget(s);
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
	_exit(0);
}
