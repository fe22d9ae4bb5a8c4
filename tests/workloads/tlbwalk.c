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
 *   - print "n ns_per_access" (with -R: of its fastest round, and a third
 *     column, the share of the rounds' time lost against the fastest),
 *     and munmap.
 *
 * Options for the onset experiment (strobe onsets, t0964), where the
 * time the walk takes is seen against code of a fixed cost, on machines
 * with no TLB events:
 *   -S STEP      sizes A, A + STEP, ... up to B (default 1);
 *   -A LOADS     walk LOADS / n passes (about LOADS loads) instead of -P's,
 *                so that each size does the same work;
 *   -R ROUNDS    per size, ROUNDS rounds of the walk (default 1), each
 *   -C ITERS     followed by ITERS steps of a fixed computation in
 *                function steady() (default 0: none).
 * The walk's loads are in function chase(), so that a profile's share of
 * chase against steady steps up where n passes the dTLB's reach (the
 * loads' latency does; steady's cost does not).  The probe's arg1 is then
 * the passes of all rounds, arg2 the time of all walks.
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

/* The pointer chase: `loads` dependent loads from p; where it ends. */
static __attribute__((noinline)) void **chase(void **p, long loads)
{
	for (long i = 0; i < loads; i++)
		p = (void **)*p;
	return p;
}

/* A fixed cost, in registers: iters steps of a xorshift. */
static __attribute__((noinline)) void steady(long iters)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	for (long i = 0; i < iters; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = (uintptr_t)x;
}

/* n pages, touched once each, walked `passes` times per round, rounds
 * times, each round followed by steady(iters): the walks' ns, and in
 * *fastest the fastest round's (a round the machine took the CPU from is
 * slower: the least is the walk's own) */
static __attribute__((noinline)) uint64_t walk(long n, long passes, long rounds, long iters,
					       long pg, uint64_t *fastest)
{
	char *base = mmap(NULL, n * pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void **p;
	uint64_t ns = 0;

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
	p = (void **)base;
	for (long r = 0; r < rounds; r++) {
		uint64_t t0 = now_ns(), d;

		p = chase(p, passes * n);
		d = now_ns() - t0;
		ns += d;
		if (!r || d < *fastest)
			*fastest = d;
		if (iters)
			steady(iters);
	}
	sink = (uintptr_t)p;
	munmap(base, n * pg);
	return ns;
}

int main(int argc, char **argv)
{
	long a, b, passes = 500, pg = sysconf(_SC_PAGESIZE);
	long step = 1, loads = 0, rounds = 1, iters = 0;
	int c, bad = 0;

	while ((c = getopt(argc, argv, "P:S:A:R:C:")) != -1) {
		switch (c) {
		case 'P': bad |= parse_long(optarg, 1, &passes); break;
		case 'S': bad |= parse_long(optarg, 1, &step); break;
		case 'A': bad |= parse_long(optarg, 1, &loads); break;
		case 'R': bad |= parse_long(optarg, 1, &rounds); break;
		case 'C': bad |= parse_long(optarg, 0, &iters); break;
		default: bad = -1;
		}
	}
	if (bad || argc - optind != 2 || parse_long(argv[optind], 1, &a) < 0 ||
	    parse_long(argv[optind + 1], a, &b) < 0 || b > 1L << 24) {
		fprintf(stderr, "usage: tlbwalk A B [-P PASSES | -A LOADS] [-S STEP] [-R ROUNDS] "
			"[-C ITERS]  (1 <= A <= B pages)\n");
		return 2;
	}
	for (long n = a; n <= b; n += step) {
		long np = loads ? (loads / n > 0 ? loads / n : 1) : passes;
		uint64_t fastest, ns = walk(n, np, rounds, iters, pg, &fastest);
		long all = np * rounds;

		DTRACE_PROBE3(tlbwalk, size, n, all, ns);
		/* with -R, a third column: the share of the walks' time the
		 * machine took (against rounds all as fast as the fastest) */
		if (rounds > 1)
			printf("%ld %.2f %.3f\n", n, (double)fastest / ((double)n * np),
			       ns ? 1.0 - (double)fastest * rounds / (double)ns : 0.0);
		else
			printf("%ld %.2f\n", n, (double)fastest / ((double)n * np));
		fflush(stdout);
	}
	return 0;
}
