/*
 * sandbox.c - dropping rights and the seccomp filter (see sandbox.h).
 *
 * The filter is an allow list: what
 * glibc, libbfd (reading through a descriptor it was given), libiberty's
 * demangler and liblzma (MiniDebugInfo into a memfd) need, found by
 * running the symbol worker under it (tests/unit/test_symworker.c).  The
 * default is EPERM rather than a kill: a call the list missed fails that
 * binary's lookup, not the process.
 */
#include "config.h"
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef HAVE_SECCOMP
#include <seccomp.h>
#endif
#include "sandbox.h"

int sandbox_user(const char *user, uid_t *uid, gid_t *gid, struct error *e)
{
	static const char *const workers[] = { SANDBOX_USER, "nobody" };
	const char *const *names = user ? &user : workers;
	size_t n = user ? 1 : sizeof(workers) / sizeof(*workers);
	const char *name = "uid 65534";
	char buf[4096];

	*uid = *gid = 65534;
	for (size_t i = 0; i < n; i++) {
		struct passwd pw, *res = NULL;

		if (getpwnam_r(names[i], &pw, buf, sizeof(buf), &res) == 0 && res) {
			*uid = pw.pw_uid;
			*gid = pw.pw_gid;
			name = names[i];
			break;
		}
		if (user)
			return error_set(e, "no user '%s'", user);
	}
	if (*uid == 0 || *gid == 0)
		return error_set(e, "user '%s' is root or in group root", name);
	return 0;
}

static int limit(int res, rlim_t soft, rlim_t hard)
{
	struct rlimit r = { soft, hard };

	return setrlimit(res, &r);
}

int sandbox_drop(int change_ids, uid_t uid, gid_t gid, const struct sandbox_limits *l,
		 struct error *e)
{
	struct __user_cap_header_struct hd = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if ((l->as && limit(RLIMIT_AS, l->as, l->as) < 0) ||
	    (l->cpu_s && limit(RLIMIT_CPU, l->cpu_s, l->cpu_s + 1) < 0) ||
	    (l->nofile && limit(RLIMIT_NOFILE, l->nofile, l->nofile) < 0) ||
	    (l->fsize && limit(RLIMIT_FSIZE, l->fsize, l->fsize) < 0) ||
	    limit(RLIMIT_CORE, 0, 0) < 0)
		return error_set(e, "setrlimit: %s", strerror(errno));
	if (change_ids) {
		/* those still in the set: dropping one needs CAP_SETPCAP */
		for (int cap = 0; cap < 64; cap++)
			if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) > 0 &&
			    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
				return error_set(e, "cannot empty the capability bounding set "
						 "(PR_CAPBSET_DROP: %s): strobed needs CAP_SETPCAP",
						 strerror(errno));
		if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
		    setresuid(uid, uid, uid) < 0)
			return error_set(e, "cannot become uid %u: %s", (unsigned)uid,
					 strerror(errno));
		if (setuid(0) == 0 || getuid() != uid || geteuid() != uid ||
		    getgid() != gid || getgroups(0, NULL) != 0)
			return error_set(e, "the drop to uid %u did not hold", (unsigned)uid);
		/* one process of that user, this one: no fork (set after the
		 * drop, as RLIMIT_NPROC counts the uid's processes) */
		if (l->nproc_zero)
			limit(RLIMIT_NPROC, 0, 0);
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &hd, d) < 0)
		return error_set(e, "capset: %s", strerror(errno));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return error_set(e, "prctl: %s", strerror(errno));
	if (syscall(SYS_capget, &hd, d) < 0)
		return error_set(e, "capget: %s", strerror(errno));
	for (int i = 0; i < 2; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable)
			return error_set(e, "capabilities left after the drop");
	if (chdir("/") < 0)
		return error_set(e, "chdir /: %s", strerror(errno));
	return 0;
}

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
