/*
 * mapswap - a hostile process for strobed's path handling (t0400).
 *
 * Usage: mapswap FILE [REPLACEMENT [TARGET]]
 *
 * Maps the first page of FILE with PROT_READ|PROT_EXEC (so strobed sees an
 * executable MMAP2 record for FILE), renames REPLACEMENT (a symlink, a
 * FIFO, ...) over FILE when given and exits at once (having printed
 * "pid PID" first, to keep that window short), so
 * that /proc/PID/map_files is gone when strobed ingests the record and only
 * the path is left to open.  With TARGET, REPLACEMENT and TARGET are
 * exchanged instead (renameat2 RENAME_EXCHANGE): e.g. a directory on
 * FILE's path and a symlink to another directory.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	void *p;
	int fd;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: mapswap FILE [REPLACEMENT [TARGET]]\n");
		return 2;
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
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
	if (argc == 4 && renameat2(AT_FDCWD, argv[2], AT_FDCWD, argv[3],
				   RENAME_EXCHANGE) < 0) {
		perror("renameat2");
		return 1;
	}
	_exit(0);
}
