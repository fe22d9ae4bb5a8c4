/*
 * peer.c - the requester's credentials, and opening a file with them (see
 * peer.h).
 *
 * Why a child process and not setfsuid(): with only the file system ids
 * switched, strobed keeps CAP_SYS_PTRACE and the rest, and a lookup
 * through /proc/PID/root or /proc/PID/exe of someone else's process (a
 * ptrace access check) would still succeed, so the requester would reach
 * files they cannot reach themselves.  The child drops every id and, with
 * them, every capability, for good; it holds none of strobed's files
 * (closed first) and is not dumpable, so the requester, whose uid it now
 * has, can do nothing to it but signal it, which ends in the timeout.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "peer.h"

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif
#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif

/* What the opener found (the child's answer). */
enum open_status {
	NO_ANSWER = 0,	/* the child ended or was killed before answering */
	OPENED,		/* the fd comes with it */
	FAILED,		/* err: the errno of the lookup or open */
	NOT_REGULAR,
	ON_FUSE,
	NO_RIGHTS,	/* err: the errno of dropping to the requester's ids */
	TIMED_OUT,
};

struct open_reply {
	int32_t status, err;
};

void peer_init(struct peer *p, int sock, uid_t uid, gid_t gid)
{
	socklen_t len = 32 * sizeof(gid_t);

	memset(p, 0, sizeof(*p));
	p->uid = uid;
	p->gid = gid;
	/* ERANGE sets len to what the groups need; they do not change */
	for (int tries = 0; tries < 2; tries++) {
		gid_t *g = xmalloc(len);
		socklen_t got = len;

		if (getsockopt(sock, SOL_SOCKET, SO_PEERGROUPS, g, &got) == 0) {
			p->groups = g;
			p->ngroups = got / sizeof(gid_t);
			return;
		}
		free(g);
		if (errno != ERANGE || got <= len)
			return;
		len = got;
	}
}

void peer_free(struct peer *p)
{
	free(p->groups);
	p->groups = NULL;
	p->ngroups = 0;
}

/*
 * Look path up O_PATH (nothing is opened yet: a FIFO cannot block, a
 * device is not touched), check what it is, then open that same inode for
 * reading through /proc/self/fd, which checks read permission on it.
 */
static int open_regular(const char *path, int no_fuse, struct open_reply *r)
{
	char proc[40];
	struct stat a, b;
	struct statfs sf;
	int fd = -1, pfd = open(path, O_PATH | O_CLOEXEC);

	r->status = FAILED;
	r->err = 0;
	if (pfd < 0) {
		r->err = errno;
		return -1;
	}
	if (fstat(pfd, &a) < 0) {
		r->err = errno;
		goto out;
	}
	if (!S_ISREG(a.st_mode)) {
		r->status = NOT_REGULAR;
		goto out;
	}
	if (no_fuse) {
		if (fstatfs(pfd, &sf) < 0) {
			r->err = errno;
			goto out;
		}
		if (sf.f_type == FUSE_SUPER_MAGIC) {
			r->status = ON_FUSE;
			goto out;
		}
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		r->err = errno;
		goto out;
	}
	if (fstat(fd, &b) < 0 || b.st_dev != a.st_dev || b.st_ino != a.st_ino) {
		r->err = ESTALE;
		close(fd);
		fd = -1;
		goto out;
	}
	r->status = OPENED;
out:
	close(pfd);
	return fd;
}


static void send_reply(int sock, const struct open_reply *r, int fd)
{
	fd_send_with(sock, r, sizeof(*r), fd);
}

/* The child: become the requester for good, open, answer, exit. */
static void __attribute__((noreturn)) opener(const struct peer *p, const char *path, int sock)
{
	struct open_reply r = { NO_RIGHTS, 0 };
	int fd = -1;

	fd_close_others(sock);
	/* not dumpable nor ptrace-able by the requester before the ids change
	 * (strobed's memory is this child's), and again after: changing the
	 * euid sets dumpable to fs.suid_dumpable */
	if (prctl(PR_SET_DUMPABLE, 0) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		r.err = errno;
	else if (setgroups(p->ngroups, p->groups) < 0 || setresgid(p->gid, p->gid, p->gid) < 0 ||
	    setresuid(p->uid, p->uid, p->uid) < 0)
		r.err = errno;
	else if (prctl(PR_SET_DUMPABLE, 0) < 0)
		r.err = errno;
	else if (setuid(0) == 0 || getuid() != p->uid || geteuid() != p->uid)
		r.err = EPERM;		/* the drop did not hold: open nothing */
	else
		fd = open_regular(path, 1, &r);
	send_reply(sock, &r, fd);
	_exit(0);
}

/* The child's answer on sock, and the fd that came with it (or -1). */
static int recv_reply(int sock, struct open_reply *r)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { r, sizeof(*r) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	ssize_t n;
	int fd = -1;

	do
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	for (c = n > 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)) && fd < 0)
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (n != sizeof(*r) || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || r->status != OPENED ||
	    fd < 0) {
		if (n != sizeof(*r) || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
			r->status = NO_ANSWER;
		else if (r->status == OPENED)
			r->status = NO_ANSWER;	/* opened, but no fd came */
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int open_error(const struct peer *p, const char *path, const struct open_reply *r,
		      struct error *e)
{
	unsigned uid = p->uid;

	switch (r->status) {
	case NOT_REGULAR:
		return error_set(e, "%s is not a regular file: give the executable or library "
				 "that holds the probe", path);
	case ON_FUSE:
		return error_set(e, "%s is on a FUSE file system, whose daemon could stall "
				 "strobed: copy it to a local file system", path);
	case NO_RIGHTS:
		return error_set(e, "cannot take the rights of uid %u to open %s: %s", uid, path,
				 strerror(r->err));
	case TIMED_OUT:
		return error_set(e, "looking up %s as uid %u took more than %d ms: give a file "
				 "on a local file system", path, uid, PEER_OPEN_TIMEOUT_MS);
	case FAILED:
		if (!uid)
			return error_set(e, "cannot read %s: %s", path, strerror(r->err));
		switch (r->err) {
		case ENOENT:
		case EACCES:
		case EPERM:
		case ENOTDIR:
		case ELOOP:
			/* one answer: no telling what exists where uid may not look */
			return error_set(e, "cannot read %s as uid %u: permission denied or no "
					 "such file (give a file that uid %u can read)", path, uid,
					 uid);
		}
		return error_set(e, "cannot read %s as uid %u: %s", path, uid, strerror(r->err));
	}
	return error_set(e, "cannot read %s as uid %u: the process opening it ended without "
			 "an answer: try again", path, uid);
}

/*
 * Children killed but not gone: one waiting on a hung file system may
 * sit in an uninterruptible wait (another lookup holds the directory's
 * lock), where SIGKILL takes effect only once the file system answers.
 * strobed must not wait for that (a member's FUSE daemon would hold it
 * for ever): such children are reaped later, and while PEER_HUNG_MAX of
 * them are left, no more lookups are made.
 */
#define PEER_HUNG_MAX 16
static pid_t hung[PEER_HUNG_MAX];
static int nr_hung;

static void reap_hung(void)
{
	for (int i = 0; i < nr_hung;) {
		if (waitpid(hung[i], NULL, WNOHANG) != 0) {	/* gone, or not ours */
			hung[i] = hung[--nr_hung];
			continue;
		}
		i++;
	}
}

int peer_open_file(const struct peer *p, const char *path, uint64_t deadline_ns,
		   struct error *e)
{
	struct open_reply r = { NO_ANSWER, 0 };
	struct stat st;
	int sv[2], fd = -1;
	pid_t pid;

	if (p->uid == 0) {
		fd = open_regular(path, 0, &r);
		return fd >= 0 ? fd : open_error(p, path, &r, e);
	}
	reap_hung();
	if (nr_hung == PEER_HUNG_MAX)
		return error_set(e, "cannot read %s as uid %u: %d earlier lookups are still "
				 "stuck in their file systems (killed, not yet gone): try again "
				 "later, with a path on a local file system", path,
				 (unsigned)p->uid, nr_hung);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return error_set(e, "cannot read %s as uid %u: socketpair: %s", path,
				 (unsigned)p->uid, strerror(errno));
	pid = fork();
	if (pid < 0) {
		int err = errno;

		close(sv[0]);
		close(sv[1]);
		return error_set(e, "cannot read %s as uid %u: fork: %s", path, (unsigned)p->uid,
				 strerror(err));
	}
	if (pid == 0)
		opener(p, path, sv[1]);
	close(sv[1]);
	for (;;) {
		uint64_t now = clock_monotonic_ns();
		struct pollfd pf = { .fd = sv[0], .events = POLLIN };
		int ms = now >= deadline_ns ? 0 : (int)((deadline_ns - now + 999999) / 1000000);
		int n = poll(&pf, 1, ms);

		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0)
			fd = recv_reply(sv[0], &r);
		else
			r.status = TIMED_OUT;
		break;
	}
	/* whatever it is doing (stopped by the requester, or waiting on a
	 * file system: FUSE and NFS wait killably), it ends here */
	kill(pid, SIGKILL);
	if (r.status == TIMED_OUT) {
		/* it may not die before its file system answers: not waited for */
		usleep(1000);
		if (waitpid(pid, NULL, WNOHANG) == 0)
			hung[nr_hung++] = pid;
	} else {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	close(sv[0]);
	if (fd < 0)
		return open_error(p, path, &r, e);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		r.status = NOT_REGULAR;
		return open_error(p, path, &r, e);
	}
	return fd;
}
