/*
 * pagetouch - a workload with a known number of page faults.
 *
 * Usage: pagetouch N [--phases]
 *
 * Maps N pages of anonymous private memory (no MAP_POPULATE), turns off
 * transparent huge pages for it (MADV_NOHUGEPAGE, which also rules out
 * multi-size THP), then touch_pages() writes one byte to each page.
 *
 * Known answer: exactly N first-touch (minor) page faults come from
 * touch_pages(), one per page, at the store in its loop; the rest of the
 * process adds a small constant (exec, ld.so, libc: ~50-100).
 *
 * With --phases: spin_before() burns ~300 ms of CPU, then
 *   phase fault_start <CLOCK_MONOTONIC ns>
 * is printed just before touching and
 *   phase fault_end <CLOCK_MONOTONIC ns>
 * just after, then spin_after() burns ~300 ms.  The phase lines go to
 * stdout at once (written with write(2), nothing buffered); the printing
 * path is warmed up beforehand so that no other faults of this process
 * fall between the two timestamps.  Exits 0.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Burn CPU for ms milliseconds. */
#define DEFINE_SPIN(name)						\
	__attribute__((noinline)) void name(unsigned ms)		\
	{								\
		uint64_t end = now_ns() + ms * 1000000ULL;		\
		uint64_t x = 0x9e3779b97f4a7c15ULL;			\
		int i;							\
									\
		do {							\
			for (i = 0; i < 20000; i++) {			\
				x ^= x << 13;				\
				x ^= x >> 7;				\
				x ^= x << 17;				\
				__asm__ __volatile__("" : "+r"(x));	\
			}						\
		} while (now_ns() < end);				\
		sink = x;						\
	}

void spin_before(unsigned ms);
void spin_after(unsigned ms);
DEFINE_SPIN(spin_before)
DEFINE_SPIN(spin_after)

/* One write per page: one first-touch fault per page. */
__attribute__((noinline)) void touch_pages(volatile char *p, size_t npages,
					   size_t pagesize)
{
	size_t i;

	for (i = 0; i < npages; i++)
		p[i * pagesize] = 1;
}

/* Format "phase NAME NS\n" into buf; returns its length. */
static size_t phase_line(char *buf, size_t size, const char *name, uint64_t ns)
{
	int n = snprintf(buf, size, "phase %s %llu\n", name, (unsigned long long)ns);

	return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long n;
	long pagesize = sysconf(_SC_PAGESIZE);
	int phases = 0;
	char line[128], *e;
	size_t len;
	void *mem;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--phases"))) {
		fprintf(stderr, "usage: pagetouch N [--phases]\n");
		return 1;
	}
	phases = argc == 3;
	errno = 0;
	n = strtoull(argv[1], &e, 10);
	if (errno || e == argv[1] || *e || argv[1][0] == '-' || n == 0 ||
	    pagesize <= 0 || n > SIZE_MAX / (unsigned long long)pagesize) {
		fprintf(stderr, "pagetouch: bad N '%s' (want a page count >= 1)\n", argv[1]);
		return 1;
	}
	mem = mmap(NULL, (size_t)n * (size_t)pagesize, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "pagetouch: mmap %llu pages: %s\n", n, strerror(errno));
		return 1;
	}
	if (madvise(mem, (size_t)n * (size_t)pagesize, MADV_NOHUGEPAGE) < 0) {
		fprintf(stderr, "pagetouch: madvise: %s\n", strerror(errno));
		return 1;
	}
	if (phases) {
		/* Warm up the clock, snprintf and this stack depth. */
		len = phase_line(line, sizeof(line), "warmup", now_ns());
		(void)len;
		spin_before(300);
		len = phase_line(line, sizeof(line), "fault_start", now_ns());
		if (write_all(STDOUT_FILENO, line, len) < 0) {
			fprintf(stderr, "pagetouch: write: %s\n", strerror(errno));
			return 1;
		}
	}
	touch_pages(mem, (size_t)n, (size_t)pagesize);
	if (phases) {
		len = phase_line(line, sizeof(line), "fault_end", now_ns());
		if (write_all(STDOUT_FILENO, line, len) < 0) {
			fprintf(stderr, "pagetouch: write: %s\n", strerror(errno));
			return 1;
		}
		spin_after(300);
	}
	return 0;
}
