/*
 * vdsoloop - clock_gettime in a tight loop: the vDSO path (no system call
 * for CLOCK_MONOTONIC on a clock source the vDSO can read).
 *
 * Usage: vdsoloop [SECONDS]       (default 2)
 *
 * Known answer: almost all its user-mode samples are in the vDSO's
 * clock_gettime (and the vDSO functions it calls); exits 0.
 */
#include "workload.h"

int main(int argc, char **argv)
{
	double seconds = 2, end;
	struct timespec ts;
	uint64_t n = 0;

	if (wl_seconds_arg(argc, argv, "vdsoloop", &seconds) < 0)
		return 2;
	end = wl_now() + seconds;
	do {
		for (int i = 0; i < 1000; i++)
			clock_gettime(CLOCK_MONOTONIC, &ts);
		n += 1000;
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < end);
	printf("%llu calls\n", (unsigned long long)n);
	return 0;
}
