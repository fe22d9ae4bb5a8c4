/*
 * test_untrusted.c - looking up files a user names without opening
 * anything but a regular file (lib/base/util.c): walk_nofollow, the
 * component walk for kernels without openat2 and for the public-file
 * check, and fd_on_fuse.  A symlink on the way (to /dev, to a directory
 * holding a FIFO) fails, "..", and a directory refused by dir_ok stop it;
 * a FIFO or a device at the end is handed back as an O_PATH handle,
 * without its open (the FIFO's writer is never let through).
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/strobe-test-untrusted-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int walk_errno(const char *path)
{
	int fd = walk_nofollow(AT_FDCWD, path, NULL, NULL);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

static int refuse_named(int dfd, void *arg)
{
	struct stat a, b;

	return fstat(dfd, &a) == 0 && stat(arg, &b) == 0 && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

static void test_walk(void **state)
{
	char p[PATH_MAX], q[PATH_MAX];
	struct stat st, want;
	int fd;

	(void)state;
	snprintf(p, sizeof(p), "%s/d", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/d/file", dir);
	assert_int_equal(close(open(p, O_WRONLY | O_CREAT, 0644)), 0);
	snprintf(p, sizeof(p), "%s/fifod", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/fifod/file", dir);
	assert_int_equal(mkfifo(p, 0600), 0);
	snprintf(p, sizeof(p), "%s/devl", dir);
	assert_int_equal(symlink("/dev", p), 0);
	snprintf(p, sizeof(p), "%s/fifol", dir);
	snprintf(q, sizeof(q), "%s/fifod", dir);
	assert_int_equal(symlink(q, p), 0);
	snprintf(p, sizeof(p), "%s/d/link", dir);
	assert_int_equal(symlink("file", p), 0);

	/* the file itself, by an absolute path with extra slashes and dots */
	snprintf(p, sizeof(p), "%s//d/./file", dir);
	fd = walk_nofollow(AT_FDCWD, p, NULL, NULL);
	assert_true(fd >= 0);
	snprintf(q, sizeof(q), "%s/d/file", dir);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(stat(q, &want), 0);
	assert_int_equal(st.st_ino, want.st_ino);
	/* O_PATH: a handle that reads nothing */
	assert_int_equal(fcntl(fd, F_GETFL) & O_PATH, O_PATH);
	close(fd);
	/* relative to a directory handle */
	fd = open(dir, O_PATH | O_DIRECTORY);
	assert_true(fd >= 0);
	{
		int f2 = walk_nofollow(fd, "d/file", NULL, NULL);

		assert_true(f2 >= 0);
		assert_int_equal(fstat(f2, &st), 0);
		assert_int_equal(st.st_ino, want.st_ino);
		close(f2);
	}
	close(fd);

	/* a directory on the way swapped for a symlink: to /dev, to a FIFO's
	 * directory (the attack of issue 30, item 2) */
	snprintf(p, sizeof(p), "%s/devl/full", dir);
	assert_int_equal(walk_errno(p), ELOOP);
	snprintf(p, sizeof(p), "%s/fifol/file", dir);
	assert_int_equal(walk_errno(p), ELOOP);
	/* "..", a file taken for a directory */
	snprintf(p, sizeof(p), "%s/d/../d/file", dir);
	assert_int_equal(walk_errno(p), EXDEV);
	snprintf(p, sizeof(p), "%s/d/file/x", dir);
	assert_int_equal(walk_errno(p), ENOTDIR);
	/* a symlink at the end is handed back as itself */
	snprintf(p, sizeof(p), "%s/d/link", dir);
	fd = walk_nofollow(AT_FDCWD, p, NULL, NULL);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	close(fd);
	/* a FIFO at the end: a handle, no open (this would block) */
	snprintf(p, sizeof(p), "%s/fifod/file", dir);
	fd = walk_nofollow(AT_FDCWD, p, NULL, NULL);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	close(fd);
	/* and open_regular_untrusted refuses it, also through the walk */
	assert_int_equal(open_regular_untrusted(AT_FDCWD, p, 0, 0, &st), -1);
	assert_int_equal(errno, EFTYPE_NOT_REGULAR);
	/* dir_ok stops the walk at the directory it refuses */
	snprintf(q, sizeof(q), "%s/d", dir);
	snprintf(p, sizeof(p), "%s/d/file", dir);
	fd = walk_nofollow(AT_FDCWD, p, refuse_named, q);
	assert_int_equal(fd, -1);
	assert_int_equal(errno, EACCES);
	snprintf(q, sizeof(q), "%s/fifod", dir);
	fd = walk_nofollow(AT_FDCWD, p, refuse_named, q);
	assert_true(fd >= 0);
	close(fd);
}

/* A file of this test's directory is not on FUSE; /proc can say so. */
static void test_fuse_local(void **state)
{
	int fd = open(dir, O_PATH | O_DIRECTORY);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(fd_on_fuse(fd), 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_walk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fuse_local, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
