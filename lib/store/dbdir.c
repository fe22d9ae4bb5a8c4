/*
 * dbdir.c - the database's directory must be strobed's own (dbdir.h).
 */
#include "config.h"
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "dbdir.h"

/* dir (resolved, absolute) and each directory above it, by lstat: each
 * must be root's or euid's and not group- or other-writable; those above
 * the last may be sticky instead. */
static int check_chain(char *dir, uid_t euid, struct error *e)
{
	int last = 1;

	for (;;) {
		struct stat st;
		int others_write;

		if (lstat(dir, &st) < 0)
			return error_set(e, "the database's directory %s: %s", dir, strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return error_set(e, "%s on the database's path is not a directory", dir);
		others_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
		if ((st.st_uid != 0 && st.st_uid != euid) ||
		    (others_write && (last || !(st.st_mode & S_ISVTX))))
			return error_set(e, "the database's %sdirectory %s belongs to uid %u, mode %04o: "
					 "others could plant or swap the files strobed keeps beside "
					 "the database; use a --db in a directory only root can write "
					 "(e.g. /var/lib/strobe)", last ? "" : "path's ", dir,
					 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		if (!strcmp(dir, "/"))
			return 0;
		last = 0;
		dir = dirname(dir);
	}
}

int dbdir_check(const char *db_path, struct error *e)
{
	char *copy = xstrdup(db_path), real[PATH_MAX];
	int r;

	if (!realpath(dirname(copy), real)) {
		r = error_set(e, "the database's directory for %s: %s", db_path, strerror(errno));
		free(copy);
		return r;
	}
	free(copy);
	return check_chain(real, geteuid(), e);
}
