/*
 * test_binhold.c - the files of executable mappings held from drain to
 * ingest (lib/capture/binhold.c), on mappings of this process's own: a
 * file noted while mapped is still read, whole, after it was unmapped and
 * deleted; one file mapped twice is opened once and closed after the last
 * take; a record whose device or inode is not the mapping's gets nothing;
 * past the file limit and the record limit a record gets no handle and
 * both count; every record is taken once, and one taken before the
 * holder thread got to it leaves nothing held.  Opening /proc/self/map_files
 * needs CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE): skipped without it.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "binhold.h"

#define SCRATCH_NAME "binhold"
#define SCRATCH_FILES_ONLY
#include "scratch.h"

struct mapped {
	char *path;
	void *addr;
	size_t len;
	struct stat st;
	unsigned char fill;
};

/* A file of 2 pages of byte fill, mapped executable. */
static void map_file(struct mapped *m, const char *name, unsigned char fill)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *buf;
	int fd;

	m->path = path_of(name);
	m->len = 2 * pg;
	m->fill = fill;
	buf = malloc(m->len);
	assert_non_null(buf);
	memset(buf, fill, m->len);
	fd = open(m->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, m->len), (ssize_t)m->len);
	free(buf);
	assert_int_equal(fstat(fd, &m->st), 0);
	m->addr = mmap(NULL, m->len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m->addr == MAP_FAILED)
		skip();		/* noexec scratch directory */
}

static struct binhold_rec rec_of(const struct mapped *m, uint64_t t, int has_ino)
{
	return (struct binhold_rec){
		.pid = (uint32_t)getpid(), .time = t, .start = (uintptr_t)m->addr,
		.end = (uintptr_t)m->addr + m->len, .has_ino = has_ino,
		.maj = major(m->st.st_dev), .min = minor(m->st.st_dev), .ino = m->st.st_ino,
		.gen = 7,
	};
}

static void need_map_files(const struct mapped *m)
{
	char p[96];
	int fd;

	snprintf(p, sizeof(p), "/proc/self/map_files/%lx-%lx", (unsigned long)(uintptr_t)m->addr,
		 (unsigned long)((uintptr_t)m->addr + m->len));
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		skip();
	close(fd);
}

/* fd holds m's bytes, all of them */
static void same_bytes(int fd, const struct mapped *m)
{
	unsigned char b[64];
	struct stat st;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, (off_t)m->len);
	assert_int_equal(pread(fd, b, sizeof(b), (off_t)m->len - sizeof(b)), (ssize_t)sizeof(b));
	for (size_t i = 0; i < sizeof(b); i++)
		assert_int_equal(b[i], m->fill);
}

static void test_deleted(void **state)
{
	struct binhold *h = binhold_new(4, 16);
	struct binhold_stats st;
	struct mapped m;
	struct binhold_rec r;
	int over, fd;

	(void)state;
	map_file(&m, "deleted", 0x5a);
	need_map_files(&m);
	r = rec_of(&m, 100, 1);
	binhold_note(h, &r);
	binhold_sync(h);
	/* gone from the process and from the file system */
	assert_int_equal(munmap(m.addr, m.len), 0);
	assert_int_equal(unlink(m.path), 0);
	fd = binhold_take(h, r.pid, 100, r.start, &over);
	same_bytes(fd, &m);
	assert_int_equal(over, 0);
	close(fd);
	/* taken once */
	assert_int_equal(binhold_take(h, r.pid, 100, r.start, &over), -1);
	binhold_get_stats(h, &st);
	assert_int_equal(st.noted, 1);
	assert_int_equal(st.opened, 1);
	assert_int_equal(st.files_now, 0);
	binhold_free(h);
}

static void test_shared_and_checked(void **state)
{
	struct binhold *h = binhold_new(4, 16);
	struct binhold_stats st;
	struct mapped m;
	struct binhold_rec r1, r2, bad;
	int over, fd;

	(void)state;
	map_file(&m, "shared", 0x11);
	need_map_files(&m);
	r1 = rec_of(&m, 200, 1);
	r2 = rec_of(&m, 201, 1);	/* the same file (its second mapping, say) */
	binhold_note(h, &r1);
	binhold_sync(h);
	binhold_note(h, &r2);
	binhold_sync(h);
	/* a build-id record: no device or inode to check, held all the same */
	r2.time = 202;
	r2.has_ino = 0;
	binhold_note(h, &r2);
	binhold_sync(h);
	bad = rec_of(&m, 203, 1);
	bad.ino++;			/* not what is mapped there */
	binhold_note(h, &bad);
	binhold_sync(h);
	binhold_get_stats(h, &st);
	assert_int_equal(st.noted, 3);
	assert_int_equal(st.opened, 1);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.files_now, 1);
	assert_int_equal(binhold_take(h, bad.pid, 203, bad.start, &over), -1);
	assert_int_equal(munmap(m.addr, m.len), 0);
	for (uint64_t t = 200; t <= 202; t++) {
		fd = binhold_take(h, r1.pid, t, r1.start, &over);
		same_bytes(fd, &m);
		close(fd);
		binhold_get_stats(h, &st);
		assert_int_equal(st.files_now, t < 202 ? 1 : 0);
	}
	binhold_free(h);
}

static void test_limits(void **state)
{
	struct binhold *h = binhold_new(1, 3);
	struct binhold_stats st;
	struct mapped a, b;
	struct binhold_rec r;
	int over, fd;

	(void)state;
	map_file(&a, "a", 1);
	map_file(&b, "b", 2);
	need_map_files(&a);
	r = rec_of(&a, 300, 1);
	binhold_note(h, &r);
	binhold_sync(h);
	r = rec_of(&b, 301, 1);		/* a second file: past the limit of 1 */
	binhold_note(h, &r);
	binhold_sync(h);
	binhold_get_stats(h, &st);
	assert_int_equal(st.over, 1);
	assert_int_equal(st.files_now, 1);
	assert_int_equal(binhold_take(h, r.pid, 301, r.start, &over), -1);
	assert_int_equal(over, 1);
	/* 3 records at most: the fourth pushes out the oldest (300) */
	for (uint64_t t = 302; t <= 304; t++) {
		r = rec_of(&a, t, 1);
		binhold_note(h, &r);
		binhold_sync(h);
	}
	binhold_get_stats(h, &st);
	assert_int_equal(st.over, 2);
	assert_int_equal(binhold_take(h, r.pid, 300, r.start, &over), -1);
	for (uint64_t t = 302; t <= 304; t++) {
		fd = binhold_take(h, r.pid, t, r.start, &over);
		same_bytes(fd, &a);
		close(fd);
	}
	binhold_get_stats(h, &st);
	assert_int_equal(st.files_now, 0);
	/* a full ring whose oldest record is the file's last (then two of
	 * b, past the file limit): noting the same file again (no open:
	 * device, inode and generation known) keeps it held */
	r = rec_of(&a, 320, 1);
	binhold_note(h, &r);
	binhold_sync(h);
	for (uint64_t t = 321; t <= 322; t++) {
		r = rec_of(&b, t, 1);
		binhold_note(h, &r);
		binhold_sync(h);
	}
	r = rec_of(&a, 323, 1);
	binhold_note(h, &r);
	binhold_sync(h);
	assert_int_equal(binhold_take(h, r.pid, 320, r.start, &over), -1);
	fd = binhold_take(h, r.pid, 323, r.start, &over);
	same_bytes(fd, &a);
	close(fd);
	binhold_get_stats(h, &st);
	assert_int_equal(st.files_now, 0);
	munmap(a.addr, a.len);
	munmap(b.addr, b.len);
	binhold_free(h);
}

/* A record taken before the thread held its file (ingest ahead of it)
 * leaves nothing held behind. */
static void test_taken_first(void **state)
{
	struct binhold *h = binhold_new(4, 16);
	struct binhold_stats st;
	struct mapped m;
	struct binhold_rec r;
	int over, fd, got = 0;

	(void)state;
	map_file(&m, "first", 0x33);
	need_map_files(&m);
	for (uint64_t t = 1; t <= 200; t++) {
		r = rec_of(&m, t, 0);
		binhold_note(h, &r);
		fd = binhold_take(h, r.pid, t, r.start, &over);
		if (fd >= 0) {
			same_bytes(fd, &m);
			close(fd);
			got++;
		}
	}
	binhold_sync(h);
	binhold_get_stats(h, &st);
	assert_int_equal(st.files_now, 0);
	print_message("%d of 200 held before they were taken\n", got);
	munmap(m.addr, m.len);
	binhold_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deleted),
		cmocka_unit_test(test_shared_and_checked),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_taken_first),
	};

	return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
