/*
 * tlbwalk - a workload whose working set grows one page at a time, with a
 * USDT probe at each size: the TLB experiment of OProfile's "Extended"
 * studies, and the known answer of the marker tests.
 *
 * Usage: tlbwalk A B [-P PASSES]		(1 <= A <= B, PASSES default 500)
 *
 * For n = A .. B pages:
 *   - mmap a fresh region of n pages (MAP_PRIVATE | MAP_ANONYMOUS, no
 *     MAP_POPULATE) and turn off transparent huge pages for it
 *     (MADV_NOHUGEPAGE), so each page is its own 4 KiB TLB entry;
 *   - write one word in each page: exactly n first-touch page faults.  The
 *     words form a ring of pointers, page i's pointing into page i + 1, at
 *     offset (i * 64) % page size so the n words sit in different cache
 *     sets (a fixed offset would put them all in one L1 set);
 *   - walk the ring PASSES times, n dependent loads per pass, one per page
 *     (a pointer chase: the CPU cannot overlap the loads, so the time per
 *     load shows the latency of each TLB miss);
 *   - fire the probe  tlbwalk:size  with three arguments:
 *       arg0 = n (pages), arg1 = PASSES, arg2 = the walk's time in ns
 *     (DTRACE_PROBE3 from <sys/sdt.h>: a nop and an ELF note, free when
 *     nobody listens; 'strobe start --marker PATH:tlbwalk:size' records
 *     every hit with its arguments);
 *   - print "n ns_per_access", and munmap.
 *
 * Known answer: B - A + 1 hits of tlbwalk:size, in order, arg0 = A .. B;
 * sum(A..B) page faults from the touches, plus the process's constant few
 * (exec, ld.so, libc: ~50-100).
 *
 * The experiment: once n exceeds the number of entries of the L1 data TLB
 * (64 on many x86 cores), every load of the walk misses it, and the time
 * per access steps up.  On hardware with TLB events:
 *     strobe record -e dTLB-load-misses --marker ./tlbwalk:tlbwalk:size \
 *         -- ./tlbwalk 22 41 -P 20000
 *     strobe plot --event dTLB-load-misses
 * shows the misses over time, and the probe's markers (one per n, drawn
 * on the plot; 'strobe report --markers' lists them) say which working-set
 * size each stretch belongs to: the onset of thrashing is where the miss
 * rate jumps.  Shift A and B to bracket the TLB size of the machine (e.g.
 * 50 80 for a 64-entry L1 dTLB).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sdt.h>
#include <time.h>
#include <unistd.h>

static volatile uintptr_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static int parse_long(const char *s, long min, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return errno || end == s || *end || *v < min ? -1 : 0;
}

/* n pages, touched once each, walked `passes` times: the walk's ns */
static __attribute__((noinline)) uint64_t walk(long n, long passes, long pg)
{
	char *base = mmap(NULL, n * pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void **p, **first;
	uint64_t t0, t1;

	if (base == MAP_FAILED) {
		fprintf(stderr, "tlbwalk: mmap of %ld pages: %s\n", n, strerror(errno));
		exit(1);
	}
	madvise(base, n * pg, MADV_NOHUGEPAGE);
	/* the first touch of each page: one fault per page */
	for (long i = 0; i < n; i++) {
		void **w = (void **)(base + i * pg + (i * 64) % pg);
		long j = (i + 1) % n;

		*w = base + j * pg + (j * 64) % pg;
	}
	first = (void **)base;
	p = first;
	t0 = now_ns();
	for (long k = 0; k < passes; k++)
		for (long i = 0; i < n; i++)
			p = (void **)*p;
	t1 = now_ns();
	sink = (uintptr_t)p;
	munmap(base, n * pg);
	return t1 - t0;
}

int main(int argc, char **argv)
{
	long a, b, passes = 500, pg = sysconf(_SC_PAGESIZE);
	int c;

	while ((c = getopt(argc, argv, "P:")) != -1) {
		if (c != 'P' || parse_long(optarg, 1, &passes) < 0) {
			fprintf(stderr, "usage: tlbwalk A B [-P PASSES]\n");
			return 2;
		}
	}
	if (argc - optind != 2 || parse_long(argv[optind], 1, &a) < 0 ||
	    parse_long(argv[optind + 1], a, &b) < 0 || b > 1L << 24) {
		fprintf(stderr, "usage: tlbwalk A B [-P PASSES]  (1 <= A <= B pages)\n");
		return 2;
	}
	for (long n = a; n <= b; n++) {
		uint64_t ns = walk(n, passes, pg);

		DTRACE_PROBE3(tlbwalk, size, n, passes, ns);
		printf("%ld %.2f\n", n, (double)ns / ((double)n * passes));
	}
	return 0;
}
