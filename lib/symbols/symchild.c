/*
 * symchild.c - becoming the symbol worker (symworker_int.h): the child
 * the parent forked is executed afresh when the program allows it
 * (selfexec.h: the program's own file, its command line read back by
 * symworker_exec_main), so that it holds nothing of the parent's memory;
 * either way it then keeps no descriptor but its socket (at 3), resets
 * its signals, drops every right for good and installs the seccomp filter
 * (sandbox.h), says hello and serves (symserve.c).  A worker that cannot
 * drop its rights says why and exits without serving.
 */
#include "config.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "debuginfo.h"
#include "sandbox.h"
#include "selfexec.h"
#include "symworker_int.h"

/* Drop every right for good (sandbox.h); 0, or -1 with err set. */
static int w_drop(const struct wconf *c, struct error *err)
{
	struct sandbox_limits l = {
		.as = c->mem_max, .cpu_s = c->cpu_s,
		.nofile = 2 * SYMWORKER_HANDLES + 16,
		.fsize = DEBUGINFO_MINI_MAX,	/* the memfd */
		.nproc_zero = 1,
	};

	return sandbox_drop(c->drop, c->uid, c->gid, &l, err);
}

/* In the worker, its socket at 3: drop every right, then serve. */
static void __attribute__((noreturn)) w_run(const struct wconf *c, int sock)
{
	struct error err = { "" };
	sigset_t all;
	int on = 0;

	fd_close_others(sock);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	prctl(PR_SET_NAME, c->comm, 0, 0, 0);
	if (w_drop(c, &err) == 0 && (on = sandbox_seccomp(&err)) >= 0) {
		symserve_info(sock, NULL, 0, NULL);
		symserve_run(sock, on, c->ext);
	}
	symserve_info(sock, NULL, -1, &err);
	_exit(1);
}

void symchild_main(const struct wconf *c, int sock, char *const *argv)
{
	struct error err = { "" };

	if (argv) {
		selfexec_run(sock, argv);
		error_set(&err, "cannot execute the worker afresh: %s", strerror(errno));
		symserve_info(3, NULL, -1, &err);
		_exit(1);
	}
	if (sock != 3) {
		if (dup2(sock, 3) < 0)
			_exit(1);
		sock = 3;
	}
	w_run(c, sock);
}

char *const *symchild_argv(const struct wconf *c, struct wargv *a)
{
	const unsigned long long v[5] = { c->drop, c->uid, c->gid, c->mem_max, c->cpu_s };

	if (!selfexec_enabled())
		return NULL;
	for (int i = 0; i < 5; i++)
		snprintf(a->num[i], sizeof(a->num[i]), "%llu", v[i]);
	a->argv[0] = (char *)c->comm;
	a->argv[1] = (char *)SELFEXEC_ARG;
	a->argv[2] = (char *)"symworker";
	a->argv[3] = (char *)(c->ext ? c->ext->name : "-");
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
	static struct wconf c;
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
		c.ext = *exts;
	}
	c.drop = (int)v[0];
	c.uid = (uid_t)v[1];
	c.gid = (gid_t)v[2];
	c.mem_max = v[3];
	c.cpu_s = (unsigned)v[4];
	if (c.drop && (c.uid == 0 || c.gid == 0))
		return 2;
	memcpy(c.comm, argv[0], strnlen(argv[0], sizeof(c.comm) - 1));
	w_run(&c, 3);
}
