/*
 * test_jitdump.c - lib/symbols/jitdump.c on jitdump files built here: a
 * valid one (loads, a move, records the parser skips), one in the other
 * byte order, a wrong magic, truncated files and records, huge and
 * wrapping sizes, names without a NUL, too long or empty, another pid's,
 * records stamped before the process started, overlapping loads; and
 * jitdump_read_fd()'s refusals and jitdump_name_matches().
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
#include <sys/stat.h>
#include <unistd.h>
#include "jitdump.h"

/* A jitdump under construction, in native or swapped byte order. */
struct dump {
	unsigned char b[1 << 16];
	size_t n;
	int swap;
};

static void p32(struct dump *d, uint32_t v)
{
	if (d->swap)
		v = __builtin_bswap32(v);
	memcpy(d->b + d->n, &v, 4);
	d->n += 4;
}

static void p64(struct dump *d, uint64_t v)
{
	if (d->swap)
		v = __builtin_bswap64(v);
	memcpy(d->b + d->n, &v, 8);
	d->n += 8;
}

static void header(struct dump *d, int swap, uint32_t pid, uint64_t flags)
{
	memset(d, 0, sizeof(*d));
	d->swap = swap;
	p32(d, JITDUMP_MAGIC);
	p32(d, 1);
	p32(d, JITDUMP_HEADER_SIZE);
	p32(d, 62);
	p32(d, 0);
	p32(d, pid);
	p64(d, 1000);
	p64(d, flags);
}

/* A JIT_CODE_LOAD record of name (namelen bytes, no NUL added when nul is
 * 0) with code_bytes bytes of code present. */
static void load(struct dump *d, uint64_t ts, uint64_t addr, uint64_t size, uint64_t index,
		 const char *name, size_t namelen, int nul, size_t code_bytes)
{
	uint32_t total = 56 + namelen + !!nul + code_bytes;

	p32(d, JITDUMP_CODE_LOAD);
	p32(d, total);
	p64(d, ts);
	p32(d, 7);
	p32(d, 8);
	p64(d, addr);
	p64(d, addr);
	p64(d, size);
	p64(d, index);
	memcpy(d->b + d->n, name, namelen);
	d->n += namelen;
	if (nul)
		d->b[d->n++] = 0;
	memset(d->b + d->n, 0xc3, code_bytes);
	d->n += code_bytes;
}

static void load_s(struct dump *d, uint64_t ts, uint64_t addr, uint64_t size, uint64_t index,
		   const char *name)
{
	load(d, ts, addr, size, index, name, strlen(name), 1, size < 64 ? size : 64);
}

static void move(struct dump *d, uint64_t ts, uint64_t from, uint64_t to, uint64_t size,
		 uint64_t index)
{
	p32(d, JITDUMP_CODE_MOVE);
	p32(d, 64);
	p64(d, ts);
	p32(d, 7);
	p32(d, 8);
	p64(d, from);
	p64(d, from);
	p64(d, to);
	p64(d, size);
	p64(d, index);
}

/* A record the parser skips: id with size bytes in all. */
static void other(struct dump *d, uint32_t id, uint32_t size)
{
	p32(d, id);
	p32(d, size);
	p64(d, 5000);
	memset(d->b + d->n, 0xee, size - 16);
	d->n += size - 16;
}

static int parse(const struct dump *d, size_t len, uint32_t pid, uint64_t not_before,
		 struct jitmap *m, struct jitdump_info *info)
{
	struct error e;
	int rc = jitdump_parse(d->b, len, pid, not_before, m, info, &e);

	if (rc < 0)
		print_message("refused: %s\n", e.msg);
	return rc;
}

static void check_valid(int swap)
{
	struct dump d;
	struct jitmap m;
	struct jitdump_info info;

	header(&d, swap, 42, 0);
	load_s(&d, 2000, 0x7f0000001000ULL, 0x40, 1, "jit_func_a");
	other(&d, JITDUMP_CODE_DEBUG_INFO, 48);
	load_s(&d, 3000, 0x7f0000002000ULL, 0x80, 2, "Interpreted:foo\x01" "bar");
	other(&d, JITDUMP_CODE_UNWINDING_INFO, 40);
	move(&d, 4000, 0x7f0000001000ULL, 0x7f0000009000ULL, 0x40, 1);
	other(&d, 99, 16);	/* an id from the future */
	other(&d, JITDUMP_CODE_CLOSE, 16);
	assert_int_equal(parse(&d, d.n, 42, 0, &m, &info), 0);
	assert_int_equal(info.swapped, swap);
	assert_int_equal(info.pid, 42);
	assert_int_equal(info.version, 1);
	assert_int_equal(info.elf_mach, 62);
	assert_int_equal(info.records, 7);
	assert_int_equal(m.dropped, 0);
	assert_int_equal(m.nr, 3);
	assert_int_equal(m.syms[0].start, 0x7f0000001000ULL);
	assert_int_equal(m.syms[0].size, 0x40);
	assert_int_equal(m.syms[0].load_ns, 2000);
	assert_string_equal(m.syms[0].name, "jit_func_a");
	assert_int_equal(m.syms[1].start, 0x7f0000002000ULL);
	assert_string_equal(m.syms[1].name, "Interpreted:foo?bar");
	/* the move: the name of code_index 1's load at the new address */
	assert_int_equal(m.syms[2].start, 0x7f0000009000ULL);
	assert_int_equal(m.syms[2].size, 0x40);
	assert_int_equal(m.syms[2].load_ns, 4000);
	assert_string_equal(m.syms[2].name, "jit_func_a");
	jitmap_free(&m);
}

static void test_valid(void **state)
{
	(void)state;
	check_valid(0);
}

static void test_swapped(void **state)
{
	(void)state;
	check_valid(1);
}

static void test_header_refused(void **state)
{
	struct dump d;
	struct jitmap m;
	struct jitdump_info info;
	uint32_t v;

	(void)state;
	header(&d, 0, 42, 0);
	load_s(&d, 2000, 0x1000, 0x40, 1, "f");
	/* shorter than a header */
	for (size_t n = 0; n < JITDUMP_HEADER_SIZE; n++) {
		assert_int_equal(parse(&d, n, 42, 0, &m, &info), -1);
		assert_int_equal(m.nr, 0);
	}
	/* another process's */
	assert_int_equal(parse(&d, d.n, 43, 0, &m, &info), -1);
	assert_int_equal(m.nr, 0);
	/* wrong magic: an ELF file, a half-swapped magic */
	memcpy(d.b, "\177ELF", 4);
	assert_int_equal(parse(&d, d.n, 42, 0, &m, &info), -1);
	v = 0x44546944;
	memcpy(d.b, &v, 4);
	assert_int_equal(parse(&d, d.n, 42, 0, &m, &info), -1);
	assert_int_equal(m.nr, 0);
	/* header sizes it cannot hold: too small, past the end, huge */
	header(&d, 0, 42, 0);
	load_s(&d, 2000, 0x1000, 0x40, 1, "f");
	for (int i = 0; i < 3; i++) {
		uint32_t hs[] = { 39, (uint32_t)d.n + 1, 0xffffffffu };

		memcpy(d.b + 8, &hs[i], 4);
		assert_int_equal(parse(&d, d.n, 42, 0, &m, &info), -1);
		assert_int_equal(m.nr, 0);
	}
	/* a larger header (a later version's) is skipped */
	header(&d, 0, 42, 0);
	v = JITDUMP_HEADER_SIZE + 8;
	memcpy(d.b + 8, &v, 4);
	p64(&d, 0xdeadbeef);
	load_s(&d, 2000, 0x1000, 0x40, 1, "after_big_header");
	assert_int_equal(parse(&d, d.n, 42, 0, &m, &info), 0);
	assert_int_equal(m.nr, 1);
	assert_string_equal(m.syms[0].name, "after_big_header");
	jitmap_free(&m);
}

static void test_truncated(void **state)
{
	struct dump d;
	struct jitmap m;
	struct jitdump_info info;
	size_t first_end;

	(void)state;
	header(&d, 0, 42, 0);
	load_s(&d, 2000, 0x1000, 0x40, 1, "first");
	first_end = d.n;
	load_s(&d, 2001, 0x2000, 0x40, 2, "second");
	/* every cut inside the second record: the first kept, the cut one
	 * counted, nothing read past the end (ASan/valgrind would tell) */
	for (size_t n = first_end + 1; n < d.n; n++) {
		unsigned char *copy = malloc(n);	/* exactly n bytes */
		struct error e;

		memcpy(copy, d.b, n);
		assert_int_equal(jitdump_parse(copy, n, 42, 0, &m, &info, &e), 0);
		assert_int_equal(m.nr, 1);
		assert_string_equal(m.syms[0].name, "first");
		assert_int_equal(m.dropped, 1);
		jitmap_free(&m);
		free(copy);
	}
	assert_int_equal(parse(&d, first_end, 42, 0, &m, &info), 0);
	assert_int_equal(m.nr, 1);
	assert_int_equal(m.dropped, 0);
	jitmap_free(&m);
}

static void test_bad_records(void **state)
{
	struct dump d;
	struct jitmap m;
	struct jitdump_info info;
	char longname[JITMAP_NAME_MAX + 2];
	size_t at;

	(void)state;
	memset(longname, 'x', sizeof(longname));
	header(&d, 0, 42, 0);
	load(&d, 2000, 0x1000, 0x10, 1, "no_nul", 6, 0, 0);	 /* name runs to the end */
	load(&d, 2000, 0x1000, 0x10, 1, "", 0, 1, 0);		 /* empty name */
	load(&d, 2000, 0x1000, 0x10, 1, longname, sizeof(longname), 1, 0);
	load(&d, 2000, 0x1000, 0, 1, "zero_size", 9, 1, 0);
	load(&d, 2000, 0x1000, JITMAP_SIZE_MAX + 1, 1, "huge", 4, 1, 0);
	load(&d, 2000, UINT64_MAX - 0xf, 0x20, 1, "wraps", 5, 1, 0);
	move(&d, 3000, 0x1000, 0x5000, 0x10, 77);		 /* no load of index 77 */
	/* a load shorter than its fixed part */
	p32(&d, JITDUMP_CODE_LOAD);
	p32(&d, 40);
	p64(&d, 2000);
	memset(d.b + d.n, 0, 24);
	d.n += 24;
	/* code bytes are not required */
	load(&d, 2000, 0x3000, 0x10, 3, "no_code", 7, 1, 0);
	/* overlapping ranges: both kept, in file order */
	load_s(&d, 2000, 0x4000, 0x40, 4, "old");
	load_s(&d, 2100, 0x4010, 0x10, 5, "new");
	assert_int_equal(parse(&d, d.n, 42, 0, &m, &info), 0);
	assert_int_equal(m.dropped, 8);
	assert_int_equal(m.nr, 3);
	assert_string_equal(m.syms[0].name, "no_code");
	assert_string_equal(m.syms[1].name, "old");
	assert_string_equal(m.syms[2].name, "new");
	jitmap_free(&m);

	/* a record size past the end, or smaller than a record header: the
	 * walk stops there */
	for (int i = 0; i < 3; i++) {
		uint32_t sizes[] = { 0xffffffffu, 15, 0 };

		header(&d, 0, 42, 0);
		load_s(&d, 2000, 0x1000, 0x10, 1, "kept");
		at = d.n;
		load_s(&d, 2000, 0x2000, 0x10, 2, "lost");
		load_s(&d, 2000, 0x3000, 0x10, 3, "after");
		memcpy(d.b + at + 4, &sizes[i], 4);
		assert_int_equal(parse(&d, d.n, 42, 0, &m, &info), 0);
		assert_int_equal(m.nr, 1);
		assert_string_equal(m.syms[0].name, "kept");
		assert_int_equal(m.dropped, 1);
		jitmap_free(&m);
	}
}

static void test_not_before(void **state)
{
	struct dump d;
	struct jitmap m;
	struct jitdump_info info;

	(void)state;
	header(&d, 0, 42, 0);
	load_s(&d, 500, 0x1000, 0x10, 1, "earlier_process");
	move(&d, 600, 0x1000, 0x2000, 0x10, 1);
	load_s(&d, 1500, 0x3000, 0x10, 2, "ours");
	assert_int_equal(parse(&d, d.n, 42, 1000, &m, &info), 0);
	assert_int_equal(m.nr, 1);
	assert_string_equal(m.syms[0].name, "ours");
	assert_int_equal(m.dropped, 2);
	assert_int_equal(info.early, 2);
	jitmap_free(&m);
	/* arch timestamps (TSC) cannot be compared: nothing dropped */
	header(&d, 0, 42, JITDUMP_FLAG_ARCH_TIMESTAMP);
	load_s(&d, 500, 0x1000, 0x10, 1, "tsc_stamped");
	assert_int_equal(parse(&d, d.n, 42, 1000, &m, &info), 0);
	assert_int_equal(m.nr, 1);
	jitmap_free(&m);
}

static void test_many_moves(void **state)
{
	struct dump *d = malloc(sizeof(*d) * 8);
	struct jitmap m;
	struct jitdump_info info;
	struct error e;
	unsigned char *big;
	size_t n = 0;

	(void)state;
	/* 200 loads then 2000 moves among them: the index map grows */
	header(d, 0, 42, 0);
	for (int i = 0; i < 200; i++) {
		char name[32];

		snprintf(name, sizeof(name), "f%d", i);
		load(d, 2000, 0x100000 + i * 0x100, 0x10, i, name, strlen(name), 1, 0);
	}
	big = malloc(d->n + 2000 * 64);
	memcpy(big, d->b, d->n);
	n = d->n;
	for (int i = 0; i < 2000; i++) {
		d->n = 0;
		move(d, 3000 + i, 0, 0x900000 + i * 0x100, 0x10, i % 200);
		memcpy(big + n, d->b, d->n);
		n += d->n;
	}
	assert_int_equal(jitdump_parse(big, n, 42, 0, &m, &info, &e), 0);
	assert_int_equal(m.nr, 2200);
	assert_int_equal(m.dropped, 0);
	assert_string_equal(m.syms[200 + 1999].name, "f199");
	assert_int_equal(m.syms[200 + 1999].start, 0x900000 + 1999 * 0x100);
	jitmap_free(&m);
	free(big);
	free(d);
}

static void test_read_fd(void **state)
{
	char dir[] = "/tmp/test_jitdump.XXXXXX", path[128];
	unsigned char *buf;
	size_t len;
	struct error e;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/jit-1.dump", dir);
	fd = open(path, O_CREAT | O_RDWR, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "JiTD....", 8), 8);
	assert_int_equal(jitdump_read_fd(fd, path, getuid(), &buf, &len, &e), 0);
	assert_int_equal(len, 8);
	assert_memory_equal(buf, "JiTD....", 8);
	free(buf);
	if (getuid() == 0) {
		/* owned by root: not taken for another user's process (unlike
		 * a perf map), nor one of a third user's */
		assert_int_equal(jitdump_read_fd(fd, path, 12345, &buf, &len, &e), -1);
		assert_non_null(strstr(e.msg, "owned by uid 0, not by the process's uid 12345"));
		assert_null(buf);
		assert_int_equal(fchown(fd, 12345, 12345), 0);
		assert_int_equal(jitdump_read_fd(fd, path, 12345, &buf, &len, &e), 0);
		free(buf);
		assert_int_equal(fchown(fd, 54321, 54321), 0);
		assert_int_equal(jitdump_read_fd(fd, path, 12345, &buf, &len, &e), -1);
		assert_non_null(strstr(e.msg, "owned by uid 54321"));
		assert_null(buf);
		assert_int_equal(fchown(fd, 0, 0), 0);
	}
	/* larger than the limit (sparse) */
	assert_int_equal(ftruncate(fd, (off_t)JITDUMP_FILE_MAX + 1), 0);
	assert_int_equal(jitdump_read_fd(fd, path, getuid(), &buf, &len, &e), -1);
	assert_non_null(strstr(e.msg, "larger than"));
	close(fd);
	unlink(path);
	/* a directory */
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_int_equal(jitdump_read_fd(fd, dir, getuid(), &buf, &len, &e), -1);
	assert_non_null(strstr(e.msg, "not a regular file"));
	close(fd);
	rmdir(dir);
}

static void test_name_matches(void **state)
{
	(void)state;
	assert_true(jitdump_name_matches("/tmp/jit-123.dump", 123));
	assert_true(jitdump_name_matches("/home/u/.debug/jit/java-jit-x/jit-123.dump", 123));
	assert_false(jitdump_name_matches("/tmp/jit-1234.dump", 123));
	assert_false(jitdump_name_matches("/tmp/jit-123.dump.x", 123));
	assert_false(jitdump_name_matches("/tmp/xjit-123.dump", 123));
	assert_false(jitdump_name_matches("/tmp/jit-123.dump/", 123));
	assert_false(jitdump_name_matches("/tmp/perf-123.map", 123));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_swapped),
		cmocka_unit_test(test_header_refused),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_not_before),
		cmocka_unit_test(test_many_moves),
		cmocka_unit_test(test_read_fd),
		cmocka_unit_test(test_name_matches),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
