/*
 * test_jitmap.c - lib/symbols/jitmap.c: perf map lines well-formed and not
 * (malformed numbers, missing names, overlong names, huge and wrapping
 * sizes, control bytes, CRLF, no final newline), and jitmap_read()'s
 * refusals: a symlink, a FIFO, a directory, a file owned by another user,
 * one larger than the limit.  Also lib/symbols/vdso.c: this process's vDSO image
 * and vdso_image_size() on truncated headers.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "jitmap.h"
#include "vdso.h"

static void parse_str(const char *s, struct jitmap *m)
{
	jitmap_parse(s, strlen(s), m);
}

static void test_parse_good(void **state)
{
	struct jitmap m;

	(void)state;
	parse_str("7f0000001000 40 jit_hot_loop\n"
		  "0x7f0000002000 0x10 LazyCompile:*foo /a b.js:3\r\n"
		  "\n"
		  "10\t8\tpy::f:x.py\n"
		  "20 1 last", &m);
	assert_int_equal(m.nr, 4);
	assert_int_equal(m.dropped, 0);
	assert_int_equal(m.syms[0].start, 0x7f0000001000ULL);
	assert_int_equal(m.syms[0].size, 0x40);
	assert_string_equal(m.syms[0].name, "jit_hot_loop");
	assert_int_equal(m.syms[1].start, 0x7f0000002000ULL);
	assert_string_equal(m.syms[1].name, "LazyCompile:*foo /a b.js:3");
	assert_string_equal(m.syms[2].name, "py::f:x.py");
	assert_int_equal(m.syms[3].start, 0x20);
	assert_string_equal(m.syms[3].name, "last");
	jitmap_free(&m);
}

static void test_parse_malformed(void **state)
{
	struct jitmap m;

	(void)state;
	parse_str("zz 10 bad_start\n"
		  "10 zz bad_size\n"
		  "10 20\n"			/* no name */
		  "10 20   \n"			/* blank name */
		  "10\n"
		  " 10 20 leading_space\n"
		  "10-20 dash\n"
		  "0x 10 empty_hex\n"
		  "10 0 zero_size\n"
		  "11111111111111111 1 seventeen_digits\n"
		  "ffffffffffffff00 1000 wraps\n"
		  "10 40000001 huge\n"
		  "10 20 ok\n", &m);
	assert_int_equal(m.nr, 1);
	assert_int_equal(m.dropped, 12);
	assert_string_equal(m.syms[0].name, "ok");
	jitmap_free(&m);
}

static void test_parse_names(void **state)
{
	char *buf = malloc(2 * JITMAP_NAME_MAX + 64);
	struct jitmap m;
	size_t n;

	(void)state;
	/* exactly the limit is kept, one more byte is dropped */
	n = (size_t)sprintf(buf, "10 1 ");
	memset(buf + n, 'a', JITMAP_NAME_MAX);
	n += JITMAP_NAME_MAX;
	buf[n++] = '\n';
	n += (size_t)sprintf(buf + n, "20 1 ");
	memset(buf + n, 'b', JITMAP_NAME_MAX + 1);
	n += JITMAP_NAME_MAX + 1;
	jitmap_parse(buf, n, &m);
	assert_int_equal(m.nr, 1);
	assert_int_equal(m.dropped, 1);
	assert_int_equal(strlen(m.syms[0].name), JITMAP_NAME_MAX);
	jitmap_free(&m);
	free(buf);

	/* control bytes and a NUL in a name are replaced, not kept */
	jitmap_parse("10 1 a\x1b[31mb\0c\x7f\n", 17, &m);
	assert_int_equal(m.nr, 1);
	assert_string_equal(m.syms[0].name, "a?[31mb?c?");
	jitmap_free(&m);
}

static void test_parse_limit(void **state)
{
	size_t n = JITMAP_SYMS_MAX + 3, len = 0;
	char *buf = malloc(n * 8);
	struct jitmap m;

	(void)state;
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(buf + len, "%zx 1 f\n", i % 0x100 + 1);
	jitmap_parse(buf, len, &m);
	assert_int_equal(m.nr, JITMAP_SYMS_MAX);
	assert_int_equal(m.dropped, 3);
	jitmap_free(&m);
	free(buf);
}

static char dir[] = "/tmp/test_jitmap.XXXXXX";

static void path_in(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

static void write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(s, f);
	assert_int_equal(fclose(f), 0);
}

static void test_read_rules(void **state)
{
	char p[256], q[256], *buf;
	struct error e;
	size_t len;
	uid_t me = geteuid();

	(void)state;
	path_in(p, sizeof(p), "perf-1.map");
	write_file(p, "10 1 f\n");
	assert_int_equal(jitmap_read(p, me, 0, &buf, &len, &e), 1);
	assert_int_equal(len, 7);
	assert_string_equal(buf, "10 1 f\n");
	free(buf);

	/* missing: nothing, no error */
	path_in(q, sizeof(q), "perf-2.map");
	assert_int_equal(jitmap_read(q, me, 0, &buf, &len, &e), 0);
	assert_null(buf);

	/* a symlink to a good file is refused */
	assert_int_equal(symlink(p, q), 0);
	assert_int_equal(jitmap_read(q, me, 0, &buf, &len, &e), -1);
	assert_non_null(strstr(e.msg, "symbolic link"));
	unlink(q);

	/* a FIFO: refused without blocking */
	assert_int_equal(mkfifo(q, 0600), 0);
	assert_int_equal(jitmap_read(q, me, 0, &buf, &len, &e), -1);
	assert_non_null(strstr(e.msg, "not a regular file"));
	unlink(q);

	/* a directory */
	assert_int_equal(mkdir(q, 0700), 0);
	assert_int_equal(jitmap_read(q, me, 0, &buf, &len, &e), -1);
	rmdir(q);

	/* larger than the limit */
	{
		int fd = open(q, O_WRONLY | O_CREAT | O_EXCL, 0600);

		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, (off_t)JITMAP_FILE_MAX + 1), 0);
		close(fd);
		assert_int_equal(jitmap_read(q, me, 0, &buf, &len, &e), -1);
		assert_non_null(strstr(e.msg, "larger than"));
		unlink(q);
	}
	unlink(p);
}

/* Planted by another user for a process it does not own: refused.  A
 * root-owned file is taken for any process (root could write its memory
 * anyway). */
static void test_read_owner(void **state)
{
	char p[256], *buf;
	struct error e;
	size_t len;
	uid_t owner;

	(void)state;
	path_in(p, sizeof(p), "perf-3.map");
	write_file(p, "10 1 planted\n");
	if (geteuid() == 0) {
		assert_int_equal(chown(p, 12345, 12345), 0);
		owner = 12345;
	} else {
		owner = geteuid();
	}
	assert_int_equal(jitmap_read(p, owner, 0, &buf, &len, &e), 1);
	free(buf);
	assert_int_equal(jitmap_read(p, owner + 1, 0, &buf, &len, &e), -1);
	assert_non_null(strstr(e.msg, "not by the process's uid"));
	assert_null(buf);
	if (geteuid() == 0) {
		assert_int_equal(chown(p, 0, 0), 0);
		assert_int_equal(jitmap_read(p, 4242, 0, &buf, &len, &e), 1);
		free(buf);
	}
	/* a hard link is another file's name (review R7: with
	 * fs.protected_hardlinks 0, even another user's file): refused */
	{
		char q[256];

		path_in(q, sizeof(q), "perf-3-link");
		assert_int_equal(link(p, q), 0);
		assert_int_equal(jitmap_read(p, geteuid() == 0 ? 0 : owner, 0, &buf, &len, &e), -1);
		assert_non_null(strstr(e.msg, "hard links"));
		assert_null(buf);
		unlink(q);
	}
	unlink(p);
}

/* A map last modified before the process started is an earlier process's. */
static void test_read_stale(void **state)
{
	char p[256], *buf;
	struct error e;
	struct stat st;
	size_t len;
	int64_t mt;

	(void)state;
	path_in(p, sizeof(p), "perf-4.map");
	write_file(p, "10 1 f\n");
	assert_int_equal(stat(p, &st), 0);
	mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	assert_int_equal(jitmap_read(p, geteuid(), mt, &buf, &len, &e), 1);
	free(buf);
	assert_int_equal(jitmap_read(p, geteuid(), mt + 1, &buf, &len, &e), -1);
	assert_non_null(strstr(e.msg, "before the process started"));
	unlink(p);
}

static void test_vdso_self(void **state)
{
	struct vdso_image v;
	struct error e;
	size_t size;
	const ElfW(Ehdr) *eh;

	(void)state;
	if (vdso_self(&v, &e) < 0) {
		print_message("no vDSO here: %s\n", e.msg);
		skip();
	}
	assert_true(v.size > sizeof(ElfW(Ehdr)));
	assert_true(v.size <= v.map_len);
	assert_true(vdso_matches(&v, v.map_len));
	assert_false(vdso_matches(&v, v.map_len + 4096));
	eh = v.image;
	/* its PT_LOAD: file offsets are address offsets from the load base */
	for (int i = 0; i < eh->e_phnum; i++) {
		const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff) + i;

		if (ph->p_type == PT_LOAD)
			assert_int_equal(ph->p_offset, 0);
	}
	/* truncated images are refused, never read past */
	assert_int_equal(vdso_image_size(v.image, v.size, &size, &e), 0);
	assert_int_equal(size, v.size);
	assert_int_equal(vdso_image_size(v.image, v.size - 1, &size, &e), -1);
	assert_int_equal(vdso_image_size(v.image, 16, &size, &e), -1);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_parse_names),
		cmocka_unit_test(test_parse_limit),
		cmocka_unit_test(test_read_rules),
		cmocka_unit_test(test_read_owner),
		cmocka_unit_test(test_read_stale),
		cmocka_unit_test(test_vdso_self),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
