/*
 * countrun.c - one 'strobe count' run (see countrun.h): a command held
 * before its exec on a pipe while its counters open (so they count from
 * its first instruction, enable_on_exec), and the wait with -I readings.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "countrun.h"

int count_cmd_prepare(struct count_cmd *c, char **argv, struct error *e)
{
	int go[2], err[2];

	c->pid = -1;
	c->name = argv[0];
	c->go_fd = c->err_fd = -1;
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		return error_set(e, "pipe: %s", strerror(errno));
	c->pid = fork();
	if (c->pid < 0) {
		close(go[0]);
		close(go[1]);
		close(err[0]);
		close(err[1]);
		return error_set(e, "fork: %s", strerror(errno));
	}
	if (c->pid == 0) {
		char b;
		int en;

		close(go[1]);
		close(err[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (read(go[0], &b, 1) != 0)	/* EOF: go; a byte: abort */
			_exit(127);
		execvp(argv[0], argv);
		en = errno;
		if (write(err[1], &en, sizeof(en)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	c->go_fd = go[1];
	c->err_fd = err[0];
	return 0;
}

int count_cmd_start(struct count_cmd *c, struct error *e)
{
	int en;
	ssize_t r;

	close(c->go_fd);
	c->go_fd = -1;
	do
		r = read(c->err_fd, &en, sizeof(en));
	while (r < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	if (r == (ssize_t)sizeof(en))
		return error_set(e, "cannot run %s: %s", c->name, strerror(en));
	return 0;
}

void count_cmd_abort(struct count_cmd *c)
{
	int status;

	if (c->go_fd >= 0) {
		if (write(c->go_fd, "x", 1) < 0) {
			/* the child is gone already */
		}
		close(c->go_fd);
	}
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->go_fd = c->err_fd = -1;
	if (c->pid > 0)
		while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
			;
	c->pid = -1;
}

static int pidfd_open_(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* Is pid (a process or a thread) still there and not a zombie? */
static int alive(pid_t pid)
{
	char path[64], *s, *p;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	s = file_read_all(path, NULL);
	if (!s)
		return 0;
	p = strrchr(s, ')');
	r = !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
	free(s);
	return r;
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

int count_run(const struct count_run_opts *o, struct count_run_result *res, struct error *e)
{
	struct counter_set *cs = o->cs;
	size_t nv = cs->nev * cs->nunits;
	struct count_value *cur = xcalloc(nv + 1, sizeof(*cur));
	uint64_t t0, next, now, last_tick;
	int pidfd = -1, done = 0, status = 0;
	struct rusage ru;

	memset(res, 0, sizeof(*res));
	memset(&ru, 0, sizeof(ru));
	/* a command's own counters start at its exec (enable_on_exec); the
	 * others (-a, -p, -t) count since they were opened (enabling them
	 * again changes nothing) */
	if (cs->kind != COUNT_TARGET_CMD && counter_enable(cs, e) < 0)
		goto fail;
	t0 = clock_monotonic_ns();
	if (o->cmd) {
		if (count_cmd_start(o->cmd, e) < 0) {
			counter_disable(cs, NULL);
			while (waitpid(o->cmd->pid, &status, 0) < 0 && errno == EINTR)
				;
			o->cmd->pid = -1;
			goto fail;
		}
		pidfd = pidfd_open_(o->cmd->pid);
	} else if (o->watch_pid > 0) {
		pidfd = pidfd_open_(o->watch_pid);	/* fails for a non-leader thread */
	}
	last_tick = t0;
	next = t0 + (uint64_t)o->interval_ns;
	while (!done) {
		struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
		struct timespec ts, *tsp = NULL;

		if (o->cmd) {
			pid_t r = wait4(o->cmd->pid, &status, WNOHANG, &ru);

			if (r == o->cmd->pid || (r < 0 && errno == ECHILD)) {
				o->cmd->pid = -1;
				break;
			}
		} else {
			if (o->watch_pid > 0 && !alive(o->watch_pid))
				break;
			if (o->stop && *o->stop)
				break;
		}
		now = clock_monotonic_ns();
		if (o->interval_ns && now >= next) {
			if (counter_read(cs, cur, e) < 0 ||
			    o->on_interval(o->ctx, secs(now - t0), cur, e) < 0)
				goto fail;
			last_tick = now;
			while (next <= now)
				next += (uint64_t)o->interval_ns;
			continue;
		}
		if (o->interval_ns) {
			ts.tv_sec = (time_t)((next - now) / 1000000000ULL);
			ts.tv_nsec = (long)((next - now) % 1000000000ULL);
			tsp = &ts;
		} else if (pidfd < 0) {
			/* no descriptor to wait on: look again every 100 ms */
			ts.tv_sec = 0;
			ts.tv_nsec = 100 * 1000 * 1000;
			tsp = &ts;
		}
		if (ppoll(pidfd >= 0 ? &pfd : NULL, pidfd >= 0 ? 1 : 0, tsp, NULL) < 0 &&
		    errno != EINTR) {
			error_set(e, "poll: %s", strerror(errno));
			goto fail;
		}
	}
	now = clock_monotonic_ns();
	if (counter_disable(cs, e) < 0 || counter_read(cs, cur, e) < 0)
		goto fail;
	if (o->interval_ns && now > last_tick &&
	    o->on_interval(o->ctx, secs(now - t0), cur, e) < 0)
		goto fail;
	if (pidfd >= 0)
		close(pidfd);
	res->status = status;
	res->start_ns = t0;
	res->elapsed = secs(now - t0);
	res->end_t = secs(now - t0);
	res->user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	res->sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	res->total = cur;
	return 0;
fail:
	if (pidfd >= 0)
		close(pidfd);
	if (o->cmd && o->cmd->pid > 0) {
		kill(o->cmd->pid, SIGKILL);
		while (waitpid(o->cmd->pid, &status, 0) < 0 && errno == EINTR)
			;
		o->cmd->pid = -1;
	}
	free(cur);
	return -1;
}
