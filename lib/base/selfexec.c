/*
 * selfexec.c - workers started as a fresh image of the program (see
 * selfexec.h).  The handle is taken once, at start-up, so that the file
 * executed is the one that runs even if a package upgrade replaces the
 * path later; it sits at descriptor 5 or above so that a child can move
 * its socket to 3 and the handle to 4 without either clobbering the
 * other.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "selfexec.h"

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

static int exe_fd = -1;

int selfexec_init(struct error *e)
{
	int fd, hi;

	if (exe_fd >= 0)
		return 0;
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error_set(e, "cannot open /proc/self/exe: %s", strerror(errno));
	hi = fcntl(fd, F_DUPFD_CLOEXEC, 5);
	close(fd);
	if (hi < 0)
		return error_set(e, "cannot keep /proc/self/exe open: %s", strerror(errno));
	exe_fd = hi;
	return 0;
}

int selfexec_enabled(void)
{
	return exe_fd >= 0;
}

int selfexec_run(int sock, char *const argv[])
{
	static char *const envp[] = { NULL };

	if (exe_fd < 0) {
		errno = ENOENT;
		return -1;
	}
	/* dup2 leaves the copies without FD_CLOEXEC: both survive the exec;
	 * the worker's entry point closes 4 (and anything else) itself */
	if (sock == 3) {
		if (fcntl(3, F_SETFD, 0) < 0)
			return -1;
	} else if (dup2(sock, 3) < 0) {
		return -1;
	}
	if (dup2(exe_fd, 4) < 0)
		return -1;
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 0U, 2U, 0U) < 0 ||
	    syscall(SYS_close_range, 5U, ~0U, 0U) < 0)
#endif
		for (int fd = 0; fd < 65536; fd++)
			if (fd != 3 && fd != 4)
				close(fd);
	syscall(SYS_execveat, 4, "", argv, envp, AT_EMPTY_PATH);
	return -1;
}
