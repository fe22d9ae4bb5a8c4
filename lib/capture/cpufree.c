/*
 * cpufree.c - idle CPU time, from /proc/stat, plus the calling thread's
 * own; see cpufree.h.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cpufree.h"

int cpufree_parse(const char *buf, size_t len, uint64_t *idle)
{
	/* "cpu  user nice system idle iowait irq softirq ...": fields 4, 5 */
	uint64_t v[5] = { 0 };
	size_t i = 4;

	if (len < 5 || memcmp(buf, "cpu ", 4))
		return -1;
	for (int f = 0; f < 5; f++) {
		int digits = 0;

		while (i < len && buf[i] == ' ')
			i++;
		while (i < len && buf[i] >= '0' && buf[i] <= '9') {
			if (v[f] > (UINT64_MAX - 9) / 10)
				return -1;
			v[f] = v[f] * 10 + (uint64_t)(buf[i++] - '0');
			digits++;
		}
		if (!digits || i >= len || (buf[i] != ' ' && buf[i] != '\n'))
			return -1;
	}
	*idle = v[3] + v[4];
	return 0;
}

double cpufree_of(uint64_t idle_ticks, long hz, uint64_t own_ns, uint64_t wall_ns)
{
	if (!wall_ns || hz <= 0)
		return 0;
	return ((double)idle_ticks / (double)hz * 1e9 + (double)own_ns) / (double)wall_ns;
}

/* This thread's CPU time, ns (the monotonic clock is util.h's). */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The idle ticks now: 0, or -1. */
static int idle_now(struct cpufree *c, uint64_t *idle)
{
	/* the first line is short; the whole file grows with the CPUs */
	char buf[512];
	ssize_t n = pread(c->fd, buf, sizeof(buf), 0);

	if (n <= 0)
		return -1;
	return cpufree_parse(buf, (size_t)n, idle);
}

int cpufree_open(struct cpufree *c, struct error *e)
{
	*c = (struct cpufree){ .fd = open("/proc/stat", O_RDONLY | O_CLOEXEC) };
	if (c->fd < 0)
		return error_set(e, "cannot open /proc/stat: %s", strerror(errno));
	c->hz = sysconf(_SC_CLK_TCK);
	if (c->hz <= 0 || idle_now(c, &c->idle) < 0) {
		cpufree_close(c);
		return error_set(e, "cannot read the idle time in /proc/stat");
	}
	c->own_ns = thread_cpu_ns();
	c->at_ns = clock_monotonic_ns();
	return 0;
}

int cpufree_read(struct cpufree *c, uint64_t min_ns, double *free)
{
	uint64_t now = clock_monotonic_ns(), idle, own;

	if (now - c->at_ns < min_ns)
		return 1;
	if (idle_now(c, &idle) < 0)
		return -1;
	own = thread_cpu_ns();
	/* idle ticks never go back; guard anyway (a CPU taken offline) */
	*free = cpufree_of(idle >= c->idle ? idle - c->idle : 0, c->hz,
			   own - c->own_ns, now - c->at_ns);
	c->idle = idle;
	c->own_ns = own;
	c->at_ns = now;
	return 0;
}

void cpufree_close(struct cpufree *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
