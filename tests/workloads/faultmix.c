/*
 * faultmix - page faults at two rates, with a known split between them.
 *
 * Usage: faultmix NBURST NTRICKLE USEC
 *
 * burst_pages() touches NBURST fresh pages back to back; then
 * trickle_pages() touches NTRICKLE fresh pages, spinning USEC microseconds
 * after each (busy, on the CPU: an idle CPU's tick stops, and with it the
 * kernel's adjustment of a frequency-mode period).  Both write one byte per page of anonymous memory mapped
 * without MAP_POPULATE and with transparent huge pages off, so each touch
 * is exactly one first-touch (minor) fault.
 *
 * Known answer: burst_pages takes NBURST faults and trickle_pages
 * NTRICKLE, while trickle_pages runs far longer.  A profiler sampling
 * page-faults at a frequency (-F) takes samples about evenly in time, so
 * their counts say trickle_pages; weighted by their periods (the faults
 * each sample stands for) they say NBURST : NTRICKLE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static char *map_pages(long n, long pg)
{
	char *p = mmap(NULL, (size_t)(n * pg), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("faultmix: mmap");
		exit(1);
	}
	madvise(p, (size_t)(n * pg), MADV_NOHUGEPAGE);
	return p;
}

__attribute__((noinline)) static void burst_pages(char *p, long n, long pg)
{
	for (long i = 0; i < n; i++)
		((volatile char *)p)[i * pg] = 1;
}

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

__attribute__((noinline)) static void trickle_pages(char *p, long n, long pg, long usec)
{
	for (long i = 0; i < n; i++) {
		long long end = now_us() + usec;

		((volatile char *)p)[i * pg] = 1;
		while (now_us() < end)
			;
	}
}

int main(int argc, char **argv)
{
	long pg = sysconf(_SC_PAGESIZE), nb, nt, usec;
	char *a, *b;

	if (argc != 4 || (nb = atol(argv[1])) <= 0 || (nt = atol(argv[2])) <= 0 ||
	    (usec = atol(argv[3])) < 0) {
		fprintf(stderr, "usage: faultmix NBURST NTRICKLE USEC\n");
		return 2;
	}
	a = map_pages(nb, pg);
	b = map_pages(nt, pg);
	burst_pages(a, nb, pg);
	trickle_pages(b, nt, pg, usec);
	return 0;
}
