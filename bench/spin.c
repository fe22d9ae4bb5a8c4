/*
 * spin.c - a fixed amount of CPU work for the benchmarks: N million rounds
 * of a xorshift generator, so that a profiler's cost shows as a longer run
 * (bench/lossless.sh).  Prints nothing unless asked: "spin N [-v]".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	uint64_t x = 88172645463325252ULL, sum = 0;
	long n = argc > 1 ? atol(argv[1]) : 100;

	if (n <= 0) {
		fprintf(stderr, "usage: spin MILLION_ROUNDS [-v]\n");
		return 2;
	}
	for (long i = 0; i < n * 1000000L; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sum += x & 0xff;
	}
	if (argc > 2 && !strcmp(argv[2], "-v"))
		printf("%llu\n", (unsigned long long)sum);
	return sum == 1;	/* keeps the loop: the result is used */
}
