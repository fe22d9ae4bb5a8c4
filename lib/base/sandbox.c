/*
 * sandbox.c - the seccomp filter (see sandbox.h).  An allow list: what
 * glibc, libbfd (reading through a descriptor it was given), libiberty's
 * demangler and liblzma (MiniDebugInfo into a memfd) need, found by
 * running the symbol worker under it (tests/unit/test_symworker.c).  The
 * default is EPERM rather than a kill: a call the list missed fails that
 * binary's lookup, not the process.
 */
#include "config.h"
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef HAVE_SECCOMP
#include <seccomp.h>
#endif
#include "sandbox.h"

#ifdef HAVE_SECCOMP
static const char *const allowed[] = {
	"read", "readv", "pread64", "preadv", "write", "writev", "pwrite64", "lseek",
	"close", "fstat", "newfstatat", "fcntl", "ftruncate", "memfd_create",
	"mmap", "munmap", "mremap", "mprotect", "brk", "madvise",
	"recvmsg", "sendmsg", "sendto", "recvfrom",
	"exit", "exit_group", "rt_sigreturn", "rt_sigprocmask", "rt_sigaction",
	"getpid", "gettid", "getuid", "geteuid", "getgid", "getegid", "getgroups", "capget",
	"futex", "clock_gettime", "gettimeofday", "getrandom", "sysinfo", "sched_yield",
	"restart_syscall", "nanosleep", "clock_nanosleep",
};

int sandbox_seccomp(struct error *e)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	int rc = 0;

	if (!ctx)
		return error_set(e, "seccomp_init failed");
	for (size_t i = 0; i < sizeof(allowed) / sizeof(*allowed) && !rc; i++) {
		int nr = seccomp_syscall_resolve_name(allowed[i]);

		if (nr != __NR_SCMP_ERROR)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	}
	/* abort(): a signal to itself only */
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
				      SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
	if (!rc)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc)
		return error_set(e, "seccomp filter: %s", strerror(-rc));
	return 1;
}

int sandbox_seccomp_built(void)
{
	return 1;
}
#else
int sandbox_seccomp(struct error *e)
{
	(void)e;
	return 0;
}

int sandbox_seccomp_built(void)
{
	return 0;
}
#endif

int sandbox_worker_ids(uid_t *uid, gid_t *gid, char *name, size_t len, struct error *e)
{
	static const char *const users[] = { SANDBOX_USER, "nobody" };
	char buf[4096];

	*uid = *gid = 65534;
	snprintf(name, len, "uid 65534");
	for (size_t i = 0; i < sizeof(users) / sizeof(*users); i++) {
		struct passwd pw, *res = NULL;

		if (getpwnam_r(users[i], &pw, buf, sizeof(buf), &res) == 0 && res) {
			*uid = pw.pw_uid;
			*gid = pw.pw_gid;
			snprintf(name, len, "%s", users[i]);
			break;
		}
	}
	if (*uid == 0 || *gid == 0)
		return error_set(e, "the workers' user %s is root or in group root", name);
	return 0;
}
