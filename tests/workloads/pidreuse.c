/*
 * pidreuse - two processes with one pid, one after the other.
 *
 * Usage: pidreuse MS_FIRST MS_SECOND      (as root)
 *
 * Forks a child that burns MS_FIRST milliseconds of its own CPU time in
 * reuse_first and exits; waits for it.  Then makes the kernel hand out
 * that pid again: writes pid - 1 to /proc/sys/kernel/ns_last_pid (the
 * last pid given out in this pid namespace; needs CAP_SYS_ADMIN) and
 * forks.  A child that did not get the pid (another process took it
 * first) exits at once with status 3, and the parent tries again, up to
 * 1000 times.  The child that got it burns MS_SECOND milliseconds in
 * reuse_second and exits.
 *
 * Prints one line "PID TRIES" on stdout: the pid both processes had and
 * how many forks the second took.  Exits 0; 77 with a line on stderr when
 * ns_last_pid cannot be written (not root, a read-only /proc/sys); 1 when
 * the pid never came back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile uint64_t pidreuse_sink;

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#define SPIN(ms)							\
	do {								\
		uint64_t end_ = cpu_ns() + (ms) * 1000000ULL;		\
		uint64_t x_ = 0x9e3779b97f4a7c15ULL;			\
		do {							\
			for (int i_ = 0; i_ < 20000; i_++) {		\
				x_ ^= x_ << 13;				\
				x_ ^= x_ >> 7;				\
				x_ ^= x_ << 17;				\
				__asm__ __volatile__("" : "+r"(x_));	\
			}						\
		} while (cpu_ns() < end_);				\
		pidreuse_sink = x_;					\
	} while (0)

__attribute__((noinline)) void reuse_first(unsigned ms)
{
	SPIN(ms);
}

__attribute__((noinline)) void reuse_second(unsigned ms)
{
	SPIN(ms);
}

static int wait_child(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int set_last_pid(pid_t last)
{
	char buf[32];
	int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
	int n = snprintf(buf, sizeof(buf), "%d", (int)last), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, buf, (size_t)n) == n;
	close(fd);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	unsigned ms1, ms2;
	pid_t first, p;
	int tries;

	if (argc != 3 || (ms1 = (unsigned)atoi(argv[1])) == 0 ||
	    (ms2 = (unsigned)atoi(argv[2])) == 0 || ms1 > 600000 || ms2 > 600000) {
		fprintf(stderr, "usage: pidreuse MS_FIRST MS_SECOND\n");
		return 2;
	}
	first = fork();
	if (first < 0)
		return perror("pidreuse: fork"), 1;
	if (!first) {
		reuse_first(ms1);
		_exit(0);
	}
	if (wait_child(first) != 0)
		return fprintf(stderr, "pidreuse: the first child failed\n"), 1;
	for (tries = 1; tries <= 1000; tries++) {
		if (set_last_pid(first - 1) < 0) {
			fprintf(stderr, "pidreuse: cannot write /proc/sys/kernel/ns_last_pid: %s "
				"(needs root and a writable /proc/sys)\n", strerror(errno));
			return 77;
		}
		p = fork();
		if (p < 0)
			return perror("pidreuse: fork"), 1;
		if (!p) {
			if (getpid() != first)
				_exit(3);
			reuse_second(ms2);
			_exit(0);
		}
		if (wait_child(p) == 0 && p == first) {
			printf("%d %d\n", (int)first, tries);
			return 0;
		}
	}
	fprintf(stderr, "pidreuse: pid %d never came back in 1000 forks\n", (int)first);
	return 1;
}
