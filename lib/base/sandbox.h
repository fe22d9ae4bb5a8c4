/*
 * sandbox.h - the seccomp filter of processes that parse untrusted bytes
 * for strobed without its rights (symworker.h).  Built with libseccomp
 * when configure found it (HAVE_SECCOMP); else there is no filter and
 * callers say so.
 */
#ifndef STROBE_SANDBOX_H
#define STROBE_SANDBOX_H

#include <sys/types.h>
#include "util.h"

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

/*
 * The user that strobe's workers run as when root starts them: SANDBOX_USER
 * when it exists (dist/sysusers.d/strobe.conf creates it: its own, so that
 * no other service's processes can signal the workers), else "nobody",
 * else uid and gid 65534.  Its name into name (at most len bytes).  A
 * name-service lookup: call it before forking from threads.  0, or -1 with
 * e set when the user found is root or in group root.
 */
#define SANDBOX_USER	"_strobe"
int sandbox_worker_ids(uid_t *uid, gid_t *gid, char *name, size_t len, struct error *e);

#endif
