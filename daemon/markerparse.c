/*
 * markerparse.c - a --marker file's USDT notes read in a child without
 * rights (markerparse.h).
 *
 * The exchange is a stream socketpair: the parent sends a struct mrequest
 * (whom to become, what to look for), the requester's supplementary
 * groups, then one byte with the file's descriptor; the child answers a
 * struct mreply, then n struct usdt_site, and exits.  The request goes
 * over the socket, not the command line, because strobed executes the
 * child afresh (selfexec.h, marker_reader_main) and a command line is
 * every user's to read.
 */
#include "config.h"
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "markerparse.h"
#include "sandbox.h"
#include "selfexec.h"

#define CHILD_MEM_MAX	(512ULL << 20)	/* the parser reads headers and notes */
#define CHILD_CPU_S	2

#define MREQ_GROUPS_MAX	65536	/* NGROUPS_MAX */

struct mrequest {
	uint32_t uid, gid, ngroups;
	char provider[USDT_MAX_NAME], name[USDT_MAX_NAME];
	char path[PATH_MAX];
};

struct mreply {
	int32_t status;		/* 0: n sites follow; -1: err says why */
	uint32_t n;
	char key[HASHKEY_MAX];	/* hashkey_file's, "" when none */
	char err[sizeof(((struct error *)0)->msg)];
};

static int send_all(int sock, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		long k = fd_send_with(sock, p, len, -1);

		if (k <= 0)
			return -1;
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

/* The descriptor the parent passes, or -1. */
static int recv_fd(int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char c;
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *h;
	int fd = -1;

	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	for (h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
		if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS &&
		    h->cmsg_len == CMSG_LEN(sizeof(int)) && fd < 0)
			memcpy(&fd, CMSG_DATA(h), sizeof(int));
	return fd;
}

/* Become p (never root: see marker_sites) for good, with no right left;
 * 0 or -1. */
static int child_drop(const struct peer *p, struct error *e)
{
	struct rlimit as = { CHILD_MEM_MAX, CHILD_MEM_MAX }, cpu = { CHILD_CPU_S, CHILD_CPU_S };
	struct rlimit zero = { 0, 0 };
	uid_t uid = p->uid;
	gid_t gid = p->gid;
	int ng = p->ngroups;

	if (uid == 0)
		return error_set(e, "the marker reader must not run as root");
	if (prctl(PR_SET_DUMPABLE, 0) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return error_set(e, "prctl: %s", strerror(errno));
	if (setrlimit(RLIMIT_AS, &as) < 0 || setrlimit(RLIMIT_CPU, &cpu) < 0 ||
	    setrlimit(RLIMIT_CORE, &zero) < 0 || setrlimit(RLIMIT_FSIZE, &zero) < 0)
		return error_set(e, "setrlimit: %s", strerror(errno));
	if (setgroups((size_t)ng, ng ? p->groups : NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0)
		return error_set(e, "cannot become uid %u: %s", (unsigned)uid, strerror(errno));
	/* all uids non-zero: the capability sets are empty now */
	if (setuid(0) == 0 || getuid() != uid || geteuid() != uid)
		return error_set(e, "the drop to uid %u did not hold", (unsigned)uid);
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		return error_set(e, "prctl: %s", strerror(errno));
	return sandbox_seccomp(e) < 0 ? -1 : 0;
}

/* len bytes from sock, blocking (the child: the parent's deadline kills
 * it): 0, or -1 when the socket closed short */
static int nul_in(const char *s, size_t size);

static int recv_all(int sock, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t k = recv(sock, p, len, 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

/* The reader, its socket at sock: read the request, the groups and the
 * file, become the requester, answer. */
static void __attribute__((noreturn)) reader(int sock)
{
	static gid_t groups[MREQ_GROUPS_MAX];
	static struct mrequest q;
	struct mreply r = { -1, 0, "", "" };
	struct usdt_site *s = NULL;
	struct error e = { "" };
	struct peer p = { 0 };
	size_t n = 0;
	int fd = -1;

	fd_close_others(sock);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	prctl(PR_SET_NAME, "strobe-marker", 0, 0, 0);
	if (recv_all(sock, &q, sizeof(q)) < 0 || q.ngroups > MREQ_GROUPS_MAX ||
	    recv_all(sock, groups, q.ngroups * sizeof(*groups)) < 0 ||
	    !nul_in(q.provider, sizeof(q.provider)) || !nul_in(q.name, sizeof(q.name)) ||
	    !nul_in(q.path, sizeof(q.path)))
		error_set(&e, "a malformed request came to the marker reader");
	else if ((fd = recv_fd(sock)) < 0)
		error_set(&e, "no file came to the marker reader");
	if (fd >= 0) {
		p.uid = q.uid;
		p.gid = q.gid;
		p.groups = groups;
		p.ngroups = (int)q.ngroups;
	}
	if (fd >= 0 && child_drop(&p, &e) == 0 &&
	    usdt_find_fd(fd, q.path, q.provider, q.name, &s, &n, &e) == 0) {
		struct error ke;

		r.status = 0, r.n = (uint32_t)n;
		if (hashkey_file(NULL, fd, r.key, &ke) < 0)
			r.key[0] = 0;
	}
	memcpy(r.err, e.msg, sizeof(r.err));
	r.err[sizeof(r.err) - 1] = 0;
	if (send_all(sock, &r, sizeof(r)) == 0 && n)
		send_all(sock, s, n * sizeof(*s));
	_exit(0);
}

int marker_reader_main(int argc, char **argv)
{
	if (argc != 3 || strcmp(argv[1], SELFEXEC_ARG) || strcmp(argv[2], "marker"))
		return 2;
	reader(3);
}

/* len bytes from sock by deadline_ns: 0, 1 (timed out), -1 (closed short) */
static int read_all(int sock, void *buf, size_t len, uint64_t deadline_ns)
{
	char *p = buf;

	while (len) {
		uint64_t now = clock_monotonic_ns();
		struct pollfd pf = { .fd = sock, .events = POLLIN };
		int ms = now >= deadline_ns ? 0 : (int)((deadline_ns - now + 999999) / 1000000);
		int k = poll(&pf, 1, ms);
		ssize_t got;

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return 1;
		got = recv(sock, p, len, MSG_DONTWAIT);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0)
			return -1;
		p += got;
		len -= (size_t)got;
	}
	return 0;
}

static int nul_in(const char *s, size_t size)
{
	return memchr(s, 0, size) != NULL;
}

/* The child's site s, checked and made strobed's own (see markerparse.h). */
static int site_check(struct usdt_site *s, const char *path, const char *provider,
		      const char *name, uint64_t size, struct error *e)
{
	int nargs;

	if (!nul_in(s->provider, sizeof(s->provider)) || !nul_in(s->name, sizeof(s->name)) ||
	    strcmp(s->provider, provider) || strcmp(s->name, name))
		return error_set(e, "a probe of another name");
	if (s->offset >= size || (s->semaphore && s->semaphore_offset >= size))
		return error_set(e, "an offset past the file's end");
	if (!nul_in(s->arg_spec, sizeof(s->arg_spec)))
		return error_set(e, "an argument string without its end");
	snprintf(s->path, sizeof(s->path), "%s", path);
	memset(s->args, 0, sizeof(s->args));
	if (usdt_machine_check(s->machine, path, e) < 0 ||
	    usdt_parse_args(s->machine, s->arg_spec, s->args, USDT_MAX_ARGS, &nargs, e) < 0)
		return -1;
	if (nargs != s->nargs)
		return error_set(e, "%d arguments said, %d in its string", s->nargs, nargs);
	return 0;
}

/* A key of hashkey's forms: buildid: or xxh3: and lowercase hex. */
static int key_ok(const char *k, size_t size)
{
	const char *hex;
	size_t len;

	if (!nul_in(k, size))
		return 0;
	if (!strncmp(k, "buildid:", 8))
		hex = k + 8;
	else if (!strncmp(k, "xxh3:", 5))
		hex = k + 5;
	else
		return 0;
	len = strlen(hex);
	return len >= 2 && len % 2 == 0 && strspn(hex, "0123456789abcdef") == len;
}

int marker_check_answer(const char *path, const char *provider, const char *name,
			uint64_t size, struct usdt_site *s, uint32_t n, const char key[HASHKEY_MAX],
			struct error *e)
{
	if (n == 0 || n > USDT_MAX_SITES)
		return error_set(e, "reading the probes of %s: the reader answered %u sites", path,
				 n);
	for (uint32_t i = 0; i < n; i++) {
		struct error ce = { "" };

		if (site_check(&s[i], path, provider, name, size, &ce) < 0)
			return error_set(e, "reading the probes of %s: the reader's site %u is "
					 "wrong: %s", path, i + 1, ce.msg);
	}
	if (key[0] && !key_ok(key, HASHKEY_MAX))
		return error_set(e, "reading the probes of %s: the reader's key is malformed", path);
	return 0;
}

int marker_sites(const struct peer *p, int fd, const char *path, const char *provider,
		 const char *name, uint64_t deadline_ns, struct usdt_site **sites, size_t *n,
		 char key[HASHKEY_MAX], struct error *e)
{
	struct mreply r;
	struct usdt_site *s = NULL;
	struct stat st;
	int sv[2], rc, hung = 0;
	char one = 0;
	struct peer as = *p;	/* whom the child becomes */
	struct mrequest *q;
	static char *const argv[] = { "strobe-marker", SELFEXEC_ARG, "marker", NULL };
	pid_t pid;

	*sites = NULL;
	*n = 0;
	key[0] = 0;
	if (!as.uid) {
		/* root asked: the workers' user, looked up here (no name
		 * service in a child forked from threads: its locks may be
		 * held) */
		if (sandbox_user(NULL, &as.uid, &as.gid, e) < 0)
			return error_prefix(e, "the marker reader");
		as.groups = NULL;
		as.ngroups = 0;
	}
	if (fstat(fd, &st) < 0)
		return error_set(e, "%s: fstat: %s", path, strerror(errno));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return error_set(e, "reading the probes of %s: socketpair: %s", path,
				 strerror(errno));
	q = xcalloc(1, sizeof(*q));
	q->uid = as.uid;
	q->gid = as.gid;
	q->ngroups = as.ngroups > 0 ? (uint32_t)MIN(as.ngroups, MREQ_GROUPS_MAX) : 0;
	snprintf(q->provider, sizeof(q->provider), "%s", provider);
	snprintf(q->name, sizeof(q->name), "%s", name);
	snprintf(q->path, sizeof(q->path), "%s", path);
	pid = fork();
	if (pid < 0) {
		int err = errno;

		close(sv[0]);
		close(sv[1]);
		free(q);
		return error_set(e, "reading the probes of %s: fork: %s", path, strerror(err));
	}
	if (pid == 0) {
		/* afresh when strobed allows it: nothing of strobed's memory */
		if (selfexec_enabled())
			selfexec_run(sv[1], argv);
		reader(sv[1]);
	}
	close(sv[1]);
	/* a send fails only when the reader has closed its end: it ended
	 * (crashed, killed) before it took the request, reported as below */
	if (send_all(sv[0], q, sizeof(*q)) < 0 ||
	    send_all(sv[0], as.groups, q->ngroups * sizeof(*as.groups)) < 0 ||
	    fd_send_with(sv[0], &one, 1, fd) != 1)
		rc = -1;
	else
		rc = read_all(sv[0], &r, sizeof(r), deadline_ns);
	if (rc == 0 && r.status == 0 && r.n <= USDT_MAX_SITES && r.n > 0) {
		s = xcalloc(r.n, sizeof(*s));
		rc = read_all(sv[0], s, r.n * sizeof(*s), deadline_ns);
	}
	hung = rc == 1;
	if (rc) {
		rc = error_set(e, "reading the probes of %s: the reader (as uid %u) %s", path,
			       (unsigned)p->uid, hung ? "took too long: killed" :
			       "ended without an answer");
		goto out;
	}
	if (r.status != 0) {
		r.err[sizeof(r.err) - 1] = 0;
		rc = error_set(e, "%s", r.err[0] ? r.err : "the probe reader failed");
		goto out;
	}
	rc = marker_check_answer(path, provider, name, (uint64_t)st.st_size, s, r.n, r.key, e);
	if (rc < 0)
		goto out;
	memcpy(key, r.key, HASHKEY_MAX);
	*sites = s;
	*n = r.n;
	s = NULL;
	rc = 0;
out:
	free(s);
	free(q);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	close(sv[0]);
	return rc;
}
