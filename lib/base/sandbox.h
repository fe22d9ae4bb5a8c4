/*
 * sandbox.h - how a process forked by strobed to handle untrusted bytes
 * gives up its rights: sandbox_user() (whom to become, looked up before
 * the fork), sandbox_drop() (the ids, capabilities and limits, for good)
 * and the seccomp filter of the symbol worker (symworker.h).  Used by the
 * symbol worker and the fleet child (chchild.h).  The filter is built with
 * libseccomp when configure found it (HAVE_SECCOMP); else there is no
 * filter and callers say so.
 */
#ifndef STROBE_SANDBOX_H
#define STROBE_SANDBOX_H

#include <stdint.h>
#include <sys/types.h>
#include "util.h"

/*
 * Whom a child of root becomes: user's uid and gid.  NULL: the workers'
 * user, SANDBOX_USER when it exists (dist/sysusers.d/strobe.conf creates
 * it: a user of their own, so that no other service's processes may
 * signal them), else "nobody", else 65534.  Call it in the parent before the
 * fork: a child forked from a threaded process must not use the name
 * service (another thread may hold its locks).  0, or -1 with e set (no
 * such user when one was named, or the user is root).
 */
#define SANDBOX_USER	"_strobe"
int sandbox_user(const char *user, uid_t *uid, gid_t *gid, struct error *e);

/* Resource limits of a dropped process; 0 in a field: left as it is. */
struct sandbox_limits {
	uint64_t as;		/* RLIMIT_AS, bytes */
	uint64_t cpu_s;		/* RLIMIT_CPU (the hard limit one second more) */
	uint64_t nofile;	/* RLIMIT_NOFILE */
	uint64_t fsize;		/* RLIMIT_FSIZE, bytes */
	int nproc_zero;		/* RLIMIT_NPROC 0 after the drop: no fork, no thread */
};

/*
 * Give up every right for good: the limits above and RLIMIT_CORE 0; when
 * change_ids (the caller is root), the capability bounding set emptied,
 * no supplementary groups, real, effective and saved ids uid and gid (and
 * a check that root cannot be regained); then no capability (ambient,
 * effective, permitted, inheritable), PR_SET_NO_NEW_PRIVS, not dumpable
 * (no ptrace, no core by another user), working directory /.  0, or -1
 * with e set: the caller must then exit, not go on with rights.
 */
int sandbox_drop(int change_ids, uid_t uid, gid_t gid, const struct sandbox_limits *l,
		 struct error *e);

/*
 * Allow from now on only what reading, mapping and sending on descriptors
 * already open needs (read, pread, lseek, fstat, mmap, brk, recvmsg,
 * sendmsg, memfd_create, exit, signals to itself ...); every other system
 * call, open and openat, socket, connect, execve, clone, ptrace, kill,
 * setuid and friends among them, fails with EPERM.  For good: the filter
 * holds for the process and every child.  PR_SET_NO_NEW_PRIVS must be set
 * (or the caller have CAP_SYS_ADMIN).  Returns 1 when installed, 0 when
 * libseccomp was not built in, -1 with e set on failure.
 */
int sandbox_seccomp(struct error *e);

/* Whether sandbox_seccomp() can install a filter in this build. */
int sandbox_seccomp_built(void);


#endif
