/*
 * kernwork - a workload that spends its time in the kernel.
 *
 * Usage: kernwork [SECONDS]      (default 2)
 *
 * Reads /dev/zero into a 1 MiB buffer (faulted in up front) over and
 * over until SECONDS of CLOCK_MONOTONIC have passed.
 *
 * Known answer: ~99% of samples are kernel samples under read(2) on
 * /dev/zero, in the code that zeroes the user buffer: read_zero itself on
 * recent kernels (clear_user inlined, ~98% on 6.18), read_iter_zero /
 * iov_iter_zero / clear_user / rep_stos_alternative on others.  User
 * space (the loop, libc read, the vDSO clock read) is about 1%.  Exits 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "workload.h"

#define BUFSZ (1 << 20)


int main(int argc, char **argv)
{
	double seconds = 2, end;
	char *buf;
	int fd;

	if (wl_seconds_arg(argc, argv, "kernwork", &seconds) < 0)
		return 1;
	buf = malloc(BUFSZ);
	if (!buf) {
		fprintf(stderr, "kernwork: out of memory\n");
		return 1;
	}
	memset(buf, 1, BUFSZ);
	fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "kernwork: /dev/zero: %s\n", strerror(errno));
		return 1;
	}
	end = wl_now() + seconds;
	do {
		ssize_t r = read(fd, buf, BUFSZ);

		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "kernwork: read /dev/zero: %s\n", strerror(errno));
			return 1;
		}
		if (r == 0) {
			fprintf(stderr, "kernwork: read /dev/zero: unexpected EOF\n");
			return 1;
		}
	} while (wl_now() < end);
	close(fd);
	free(buf);
	return 0;
}
