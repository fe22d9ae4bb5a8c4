/*
 * dblock.c - the database's lock file (see dblock.h).
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "dblock.h"

#define LOCK_FILE_MAX 512

/* The pid recorded in the lock file, or 0. */
static long lock_pid(int fd)
{
	char buf[LOCK_FILE_MAX];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = 0;
	if (strncmp(buf, "pid ", 4))
		return 0;
	return strtol(buf + 4, NULL, 10);
}

static void lock_stamp(int fd, char *stamp, size_t len)
{
	char buf[LOCK_FILE_MAX], *p, *nl;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	stamp[0] = 0;
	if (n <= 0)
		return;
	buf[n] = 0;
	p = strstr(buf, "\nstamp ");
	if (!p)
		return;
	p += 7;
	nl = strchr(p, '\n');
	if (!nl)
		return;		/* cut short: not a stamp to trust */
	*nl = 0;
	snprintf(stamp, len, "%s", p);
}

int dblock_own_file(const char *path, const char *what, int private, struct error *e)
{
	struct stat st;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK |
		  O_CLOEXEC, 0600);
	if (fd >= 0) {
		fchmod(fd, 0600);	/* whatever the umask */
		return fd;
	}
	if (errno == EEXIST)
		fd = open(path, O_RDWR | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return error_set(e, "cannot open %s %s: %s%s", what, path, strerror(errno),
				 errno == ELOOP ? " (it is a symlink: remove it)" : "");
	if (fstat(fd, &st) < 0) {
		error_set(e, "cannot stat %s %s: %s", what, path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1 ||
	    (private && (st.st_mode & 077))) {
		error_set(e, "%s %s is not a plain file of strobed's (uid %u, %lu links, mode "
			  "%04o): remove it, or choose another --db", what, path,
			  (unsigned)st.st_uid, (unsigned long)st.st_nlink,
			  (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	return fd;
}

int dblock_acquire(struct dblock *l, const char *db_path, struct error *e)
{
	int fd;

	l->fd = -1;
	l->stamp[0] = 0;
	l->path = xasprintf("%s.lock", db_path);
	fd = dblock_own_file(l->path, "the lock file", 0, e);
	if (fd < 0)
		goto fail;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;
		long pid = err == EWOULDBLOCK ? lock_pid(fd) : 0;

		if (err != EWOULDBLOCK)
			error_set(e, "cannot lock %s: %s", l->path, strerror(err));
		else if (pid > 0)
			error_set(e, "database %s is in use by strobed pid %ld (it holds %s): "
				  "stop that strobed first (kill %ld), or choose another --db",
				  db_path, pid, l->path, pid);
		else
			error_set(e, "database %s is in use by another strobed (it holds %s): "
				  "stop it first, or choose another --db", db_path, l->path);
		goto fail_fd;
	}
	fchmod(fd, 0600);
	lock_stamp(fd, l->stamp, sizeof(l->stamp));
	l->fd = fd;
	return 0;
fail_fd:
	close(fd);
fail:
	free(l->path);
	l->path = NULL;
	return -1;
}

int dblock_write(struct dblock *l, pid_t pid, const char *stamp, struct error *e)
{
	char buf[LOCK_FILE_MAX];
	int n = snprintf(buf, sizeof(buf), "pid %ld\nstamp %s\n", (long)pid, stamp ? stamp : "");

	if (l->fd < 0)
		return error_set(e, "the database lock is not held");
	/* the stamp line last and whole: a write cut short (a crash) leaves
	 * no stamp to trust, and the next strobed checks the file whole */
	if (ftruncate(l->fd, 0) < 0 || pwrite(l->fd, buf, n, 0) != n)
		return error_set(e, "cannot write the lock file %s: %s", l->path, strerror(errno));
	return 0;
}

void dblock_release(struct dblock *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	free(l->path);
	l->path = NULL;
}

int dblock_stamp(const char *path, char *buf, size_t len)
{
	struct stat st;

	buf[0] = 0;
	if (stat(path, &st) < 0)
		return -1;
	snprintf(buf, len, "%llx:%llu:%lld:%lld.%09ld:%lld.%09ld",
		 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
		 (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
		 (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
	return 0;
}
