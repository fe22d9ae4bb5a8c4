/*
 * public.c - whether everyone could read a mapped file (see public.h):
 * mode bits, links, the directories above it by handle (walk_nofollow,
 * lib/base/util.c), and ACLs.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/xattr.h>
#include "public.h"
#include "util.h"

int fd_has_acl(int fd)
{
	static const char *const names[] = {
		"system.posix_acl_access", "system.nfs4_acl",
	};
	char self[40];

	/* an O_PATH handle has no f*xattr: its magic link does */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (getxattr(self, names[i], NULL, 0) >= 0)
			return 1;
		if (errno != ENODATA && errno != ENOTSUP)
			return 1;	/* cannot tell: not public */
	}
	return 0;
}

/* A directory everyone may search, with no ACL (walk_nofollow's dir_ok:
 * nonzero stops the walk). */
static int dir_not_public(int dfd, void *arg)
{
	struct stat ds;

	(void)arg;
	return fstat(dfd, &ds) < 0 || !(ds.st_mode & S_IXOTH) || fd_has_acl(dfd);
}

int file_public(const char *path, int fd, const struct stat *st)
{
	struct stat fs;
	int pfd, ok;

	if (!(st->st_mode & S_IROTH) || st->st_nlink == 0 || path[0] != '/')
		return 0;
	if (fd >= 0 && fd_has_acl(fd))
		return 0;
	pfd = walk_nofollow(AT_FDCWD, path, dir_not_public, NULL);
	if (pfd < 0)
		return 0;
	ok = fstat(pfd, &fs) == 0 && S_ISREG(fs.st_mode) && fs.st_dev == st->st_dev &&
	     fs.st_ino == st->st_ino && (fd >= 0 || !fd_has_acl(pfd));
	close(pfd);
	return ok;
}
