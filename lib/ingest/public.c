/*
 * public.c - whether everyone could read a mapped file (see public.h):
 * mode bits, links, the directories above it by handle, and ACLs.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/xattr.h>
#include "public.h"

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

int file_public(const char *path, int fd, const struct stat *st)
{
	char buf[4096], *comp, *next;
	struct stat ds;
	int dfd, ok = 0;

	if (!(st->st_mode & S_IROTH) || st->st_nlink == 0 || path[0] != '/' ||
	    strlen(path) >= sizeof(buf))
		return 0;
	if (fd >= 0 && fd_has_acl(fd))
		return 0;
	strcpy(buf, path);
	dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (comp = buf + 1; dfd >= 0; comp = next) {
		int nfd;

		if (fstat(dfd, &ds) < 0 || !(ds.st_mode & S_IXOTH) || fd_has_acl(dfd))
			break;
		next = strchr(comp, '/');
		if (!next) {
			nfd = openat(dfd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			ok = nfd >= 0 && fstat(nfd, &ds) == 0 && S_ISREG(ds.st_mode) &&
			     ds.st_dev == st->st_dev && ds.st_ino == st->st_ino &&
			     (fd >= 0 || !fd_has_acl(nfd));
			if (nfd >= 0)
				close(nfd);
			break;
		}
		*next++ = 0;
		if (!*comp || !strcmp(comp, ".") || !strcmp(comp, ".."))
			break;
		nfd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(dfd);
		dfd = nfd;
	}
	if (dfd >= 0)
		close(dfd);
	return ok;
}
