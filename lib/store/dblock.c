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

int dblock_acquire(struct dblock *l, const char *db_path, struct error *e)
{
	struct stat st;
	int fd;

	l->fd = -1;
	l->stamp[0] = 0;
	l->path = xasprintf("%s.lock", db_path);
	fd = open(l->path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		error_set(e, "cannot open the lock file %s: %s%s", l->path, strerror(errno),
			  errno == ELOOP ? " (it is a symlink: remove it)" : "");
		goto fail;
	}
	if (fstat(fd, &st) < 0) {
		error_set(e, "cannot stat the lock file %s: %s", l->path, strerror(errno));
		goto fail_fd;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1) {
		error_set(e, "the lock file %s is not a plain file of strobed's (uid %u, %lu "
			  "links): remove it, or choose another --db", l->path,
			  (unsigned)st.st_uid, (unsigned long)st.st_nlink);
		goto fail_fd;
	}
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
