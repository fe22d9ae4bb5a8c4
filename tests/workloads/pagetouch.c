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
 * With --phases: spin_before() burns ~300 ms of CPU, touch_pages() makes
 * the burst, spin_after() burns ~300 ms.  The process takes a reading at
 * four points: "start" (just before spin_before), "fault_start" (just
 * before touch_pages), "fault_end" (just after it) and "end" (just after
 * spin_after).  A reading is the process's own page faults so far
 * (getrusage: ru_minflt + ru_majflt, counted since the fork that made it,
 * exec included), its context switches so far (ru_nvcsw + ru_nivcsw), and
 * CLOCK_MONOTONIC; on x86_64 also the TSC (rdtsc) just before and just
 * after the clock is read.  Known answer: the faults of fault_end minus
 * those of fault_start are N (the only faults in between are touch_pages's;
 * the reading path is warmed up beforehand), and the spins add none.
 * After the end reading it prints, with write(2):
 *   pid PID
 *   phase NAME NS FAULTS CSWITCHES           (one per point, in order)
 *   tsc NAME TSC_BEFORE NS TSC_AFTER         (x86_64, one per point)
 * or, on other architectures,
 *   tsc none REASON...
 * and exits 0.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
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

/* One reading: see the header comment. */
struct reading {
	const char *name;
	uint64_t tsc0, ns, tsc1, faults, cswitches;
};

static inline uint64_t tsc_now(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return 0;
#endif
}

__attribute__((noinline)) void take_reading(struct reading *r, const char *name)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	r->name = name;
	r->faults = (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt;
	r->cswitches = (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
	r->tsc0 = tsc_now();
	r->ns = now_ns();
	r->tsc1 = tsc_now();
}

static int print_readings(const struct reading *r, int n)
{
	char line[256];
	int i, len;

	len = snprintf(line, sizeof(line), "pid %ld\n", (long)getpid());
	if (write_all(STDOUT_FILENO, line, (size_t)len) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		len = snprintf(line, sizeof(line), "phase %s %llu %llu %llu\n", r[i].name,
			       (unsigned long long)r[i].ns, (unsigned long long)r[i].faults,
			       (unsigned long long)r[i].cswitches);
		if (write_all(STDOUT_FILENO, line, (size_t)len) < 0)
			return -1;
	}
#if defined(__x86_64__)
	for (i = 0; i < n; i++) {
		len = snprintf(line, sizeof(line), "tsc %s %llu %llu %llu\n", r[i].name,
			       (unsigned long long)r[i].tsc0, (unsigned long long)r[i].ns,
			       (unsigned long long)r[i].tsc1);
		if (write_all(STDOUT_FILENO, line, (size_t)len) < 0)
			return -1;
	}
#else
	len = snprintf(line, sizeof(line), "tsc none: pagetouch reads the TSC with rdtsc, x86_64 only\n");
	if (write_all(STDOUT_FILENO, line, (size_t)len) < 0)
		return -1;
#endif
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long n;
	long pagesize = sysconf(_SC_PAGESIZE);
	int phases = 0;
	struct reading rd[4];
	char *e;
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
		/* Warm up the reading path, its stack depth and the array. */
		memset(rd, 0, sizeof(rd));
		take_reading(&rd[0], "warmup");
		take_reading(&rd[0], "start");
		spin_before(300);
		take_reading(&rd[1], "fault_start");
	}
	touch_pages(mem, (size_t)n, (size_t)pagesize);
	if (phases) {
		take_reading(&rd[2], "fault_end");
		spin_after(300);
		take_reading(&rd[3], "end");
		if (print_readings(rd, 4) < 0) {
			fprintf(stderr, "pagetouch: write: %s\n", strerror(errno));
			return 1;
		}
	}
	return 0;
}
