/*
 * mapswap - a hostile process for strobed's path handling (t0400).
 *
 * Usage: mapswap FILE [REPLACEMENT]
 *
 * Maps the first page of FILE with PROT_READ|PROT_EXEC (so strobed sees an
 * executable MMAP2 record for FILE), renames REPLACEMENT (a symlink, a
 * FIFO, ...) over FILE when given, prints "pid PID" and exits at once, so
 * that /proc/PID/map_files is gone when strobed ingests the record and only
 * the path is left to open.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	void *p;
	int fd;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: mapswap FILE [REPLACEMENT]\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	if (argc == 3 && rename(argv[2], argv[1]) < 0) {
		perror("rename");
		return 1;
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	_exit(0);
}
