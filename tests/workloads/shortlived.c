/*
 * shortlived - many short processes, one after another.
 *
 * Usage: shortlived N [MS]        (MS default 30)
 *        shortlived --child MS    (what the children run)
 *
 * The parent runs N children one at a time: fork, then exec of its own
 * binary (the path read from /proc/self/exe, so the child's comm stays
 * "shortlived" rather than "exe") as `shortlived --child MS`, then waits
 * for it.  A child burns MS milliseconds of its own CPU time
 * (CLOCK_PROCESS_CPUTIME_ID) in short_spin and exits 0.
 *
 * Known answer: N distinct child pids, each with ~MS ms of CPU almost all
 * in short_spin; the parent itself uses next to no CPU.  Exits 0 when
 * every child exited 0, else 1.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile uint64_t shortlived_sink;

static int cpu_ns(uint64_t *ns)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
		return -1;
	*ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	return 0;
}

/* Burn ms milliseconds of process CPU time; the clock (a system call) is
 * read about every 30 us. */
__attribute__((noinline)) int short_spin(unsigned ms)
{
	uint64_t now, end, x = 0x9e3779b97f4a7c15ULL;
	int i;

	if (cpu_ns(&now) < 0)
		return -1;
	end = now + ms * 1000000ULL;
	do {
		for (i = 0; i < 20000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			__asm__ __volatile__("" : "+r"(x));
		}
		if (cpu_ns(&now) < 0)
			return -1;
	} while (now < end);
	shortlived_sink = x;
	return 0;
}

static int parse_uint(const char *s, unsigned max, unsigned *v)
{
	unsigned long x;
	char *e;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	x = strtoul(s, &e, 10);
	if (errno || *e || x > max)
		return -1;
	*v = (unsigned)x;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned n, ms = 30, i;
	char self[PATH_MAX], msarg[16];
	ssize_t len;
	int failed = 0;

	if (argc == 3 && !strcmp(argv[1], "--child")) {
		if (parse_uint(argv[2], 3600000, &ms) < 0) {
			fprintf(stderr, "shortlived: bad MS '%s'\n", argv[2]);
			return 1;
		}
		if (short_spin(ms) < 0) {
			fprintf(stderr, "shortlived: clock_gettime: %s\n", strerror(errno));
			return 1;
		}
		return 0;
	}
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: shortlived N [MS]\n");
		return 1;
	}
	if (parse_uint(argv[1], 1000000, &n) < 0 || n == 0) {
		fprintf(stderr, "shortlived: bad N '%s' (want 1..1000000)\n", argv[1]);
		return 1;
	}
	if (argc == 3 && parse_uint(argv[2], 3600000, &ms) < 0) {
		fprintf(stderr, "shortlived: bad MS '%s'\n", argv[2]);
		return 1;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0 || (size_t)len >= sizeof(self) - 1) {
		fprintf(stderr, "shortlived: readlink /proc/self/exe: %s\n",
			len < 0 ? strerror(errno) : "path too long");
		return 1;
	}
	self[len] = 0;
	snprintf(msarg, sizeof(msarg), "%u", ms);

	for (i = 0; i < n; i++) {
		char *cargv[] = { argv[0], "--child", msarg, NULL };
		pid_t pid;
		int st;

		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			fprintf(stderr, "shortlived: fork: %s\n", strerror(errno));
			return 1;
		}
		if (pid == 0) {
			execv(self, cargv);
			fprintf(stderr, "shortlived: exec %s: %s\n", self, strerror(errno));
			_exit(127);
		}
		while (waitpid(pid, &st, 0) < 0) {
			if (errno != EINTR) {
				fprintf(stderr, "shortlived: waitpid: %s\n", strerror(errno));
				return 1;
			}
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed = 1;
	}
	return failed;
}
