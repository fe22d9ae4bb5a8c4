/*
 * test_debuginfo.c - the pure parts of finding separate debug files:
 * the .gnu_debuglink CRC-32, the .build-id path, the debuglink candidate
 * paths and the names refused, and debuginfo_find on files the test
 * writes (a CRC match, a CRC mismatch refused with a note), and the
 * MiniDebugInfo xz decoding.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lzma.h>
#include "debuginfo.h"

static void test_crc32(void **state)
{
	(void)state;
	/* the CRC-32 check value, and the same in two pieces */
	assert_int_equal(debuginfo_crc32(0, "123456789", 9), 0xcbf43926u);
	assert_int_equal(debuginfo_crc32(debuginfo_crc32(0, "1234", 4), "56789", 5),
			 0xcbf43926u);
	assert_int_equal(debuginfo_crc32(0, "", 0), 0);
}

/* The file CRC (table-driven, 64 KiB reads) equals the bitwise one over
 * several reads. */
static void test_crc32_fd(void **state)
{
	static unsigned char buf[200003];
	char path[] = "/tmp/test_debuginfo_crc.XXXXXX";
	struct error err = { "" };
	uint32_t crc = 0;
	size_t i;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 2654435761u >> 13);
	assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	assert_int_equal(debuginfo_crc32_fd(fd, &crc, &err), 0);
	assert_int_equal(crc, debuginfo_crc32(0, buf, sizeof(buf)));
	close(fd);
}

static void test_build_id_path(void **state)
{
	char *p;

	(void)state;
	p = debuginfo_build_id_path("/usr/lib/debug", "93ac61ec5a8e");
	assert_string_equal(p, "/usr/lib/debug/.build-id/93/ac61ec5a8e.debug");
	free(p);
	assert_null(debuginfo_build_id_path("/r", "93a"));	/* odd length */
	assert_null(debuginfo_build_id_path("/r", "ab"));	/* too short */
	assert_null(debuginfo_build_id_path("/r", "../../etc"));
	assert_null(debuginfo_build_id_path("/r", "ABCD"));	/* keys are lowercase */
	assert_null(debuginfo_build_id_path("/r", NULL));
}

static void test_link_paths(void **state)
{
	char *c[DEBUGINFO_MAX_LINK_PATHS];
	size_t i;

	(void)state;
	assert_int_equal(debuginfo_link_paths("/usr/bin/ls", "ls.debug", "/usr/lib/debug", c), 3);
	assert_string_equal(c[0], "/usr/bin/ls.debug");
	assert_string_equal(c[1], "/usr/bin/.debug/ls.debug");
	assert_string_equal(c[2], "/usr/lib/debug/usr/bin/ls.debug");
	for (i = 0; i < 3; i++)
		free(c[i]);
	assert_int_equal(debuginfo_link_paths("/usr/bin/ls", "../../etc/shadow", "/r", c), 0);
	assert_int_equal(debuginfo_link_paths("/usr/bin/ls", "a/b", "/r", c), 0);
	assert_int_equal(debuginfo_link_paths("/usr/bin/ls", "..", "/r", c), 0);
	assert_int_equal(debuginfo_link_paths("/usr/bin/ls", "", "/r", c), 0);
	assert_int_equal(debuginfo_link_paths("ls", "ls.debug", "/r", c), 0);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_find_link(void **state)
{
	char dir[] = "/tmp/test_debuginfo.XXXXXX", *bin, *dbg, *sub;
	struct debuginfo_want w = { 0 };
	struct debuginfo_found f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	bin = xasprintf("%s/prog", dir);
	sub = xasprintf("%s/.debug", dir);
	dbg = xasprintf("%s/.debug/prog.debug", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	write_file(bin, "not read");
	write_file(dbg, "123456789");
	w.bin_path = bin;
	w.link = "prog.debug";
	w.link_crc = 0xcbf43926u;
	w.roots = dir;		/* no .build-id there */
	w.build_id = "abcdef";
	assert_int_equal(debuginfo_find(&w, &f), 1);
	assert_true(f.fd >= 0);
	assert_string_equal(f.path, dbg);
	assert_null(f.refused);
	debuginfo_found_free(&f);

	w.link_crc ^= 1;
	assert_int_equal(debuginfo_find(&w, &f), 0);
	assert_int_equal(f.fd, -1);
	assert_non_null(f.refused);
	assert_non_null(strstr(f.refused, "prog.debug refused: its CRC-32"));
	debuginfo_found_free(&f);

	w.link = "../prog";	/* never looked up */
	assert_int_equal(debuginfo_find(&w, &f), 0);
	assert_null(f.refused);
	debuginfo_found_free(&f);

	unlink(dbg);
	unlink(bin);
	rmdir(sub);
	rmdir(dir);
	free(bin);
	free(sub);
	free(dbg);
}

/* MiniDebugInfo decoding: an xz stream the test encodes round-trips, as a
 * buffer and as a memfd; bytes that are not xz are refused. */
static void test_xz(void **state)
{
	static unsigned char plain[200000], xzbuf[300000];
	struct error err = { "" };
	size_t xzlen = 0, n, i;
	void *out;
	int fd;

	(void)state;
	for (i = 0; i < sizeof(plain); i++)
		plain[i] = (unsigned char)(i * 7 / 13);
	assert_int_equal(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, plain, sizeof(plain),
						 xzbuf, &xzlen, sizeof(xzbuf)), LZMA_OK);
	assert_int_equal(debuginfo_xz_decode(xzbuf, xzlen, &out, &n, &err), 0);
	assert_int_equal(n, sizeof(plain));
	assert_memory_equal(out, plain, n);
	free(out);
	fd = debuginfo_mini_fd(xzbuf, xzlen, &err);
	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, 0, SEEK_END), (off_t)sizeof(plain));
	close(fd);
	assert_int_equal(debuginfo_xz_decode(plain, 4096, &out, &n, &err), -1);
	assert_null(out);
	assert_non_null(strstr(err.msg, "not a valid xz stream"));
	xzbuf[xzlen / 2] ^= 0xff;	/* corrupted: the check fails */
	assert_int_equal(debuginfo_xz_decode(xzbuf, xzlen, &out, &n, &err), -1);
}

/* MiniDebugInfo bombs: xz of zeros decodes to at most 64 times its size
 * (4 MiB at least), and to 64 MiB at most whatever its size; both refused
 * with the limit named.  A large section within its ratio still decodes. */
static void test_xz_bomb(void **state)
{
	size_t plen = (size_t)(80 << 20), xzlen = 0, xcap = (size_t)(2 << 20), n, i;
	unsigned char *plain = calloc(1, plen), *xzbuf = malloc(xcap);
	struct error err = { "" };
	void *out = (void *)1;
	uint64_t x;

	(void)state;
	/* 8 MiB of zeros: about 1.2 KB of xz, so the limit is 4 MiB */
	assert_int_equal(lzma_easy_buffer_encode(0, LZMA_CHECK_CRC64, NULL, plain, 8 << 20,
						 xzbuf, &xzlen, xcap), LZMA_OK);
	assert_true(xzlen < 64 << 10);
	assert_int_equal(debuginfo_xz_decode(xzbuf, xzlen, &out, &n, &err), -1);
	assert_null(out);
	print_message("%zu bytes: %s\n", xzlen, err.msg);
	assert_non_null(strstr(err.msg, "decodes to more than 4 MiB"));
	/* 1.5 MiB that xz cannot shrink, then 78.5 MiB of zeros: the ratio
	 * would allow 96 MiB, the cap is 64 */
	for (i = 0, x = 88172645463325252ULL; i < (3U << 19); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		plain[i] = (unsigned char)(x >> 32);
	}
	xzlen = 0;
	assert_int_equal(lzma_easy_buffer_encode(0, LZMA_CHECK_CRC64, NULL, plain, plen,
						 xzbuf, &xzlen, xcap), LZMA_OK);
	assert_true(xzlen > (1U << 20));
	err.msg[0] = 0;
	out = (void *)1;
	assert_int_equal(debuginfo_xz_decode(xzbuf, xzlen, &out, &n, &err), -1);
	assert_null(out);
	print_message("%zu bytes: %s\n", xzlen, err.msg);
	assert_non_null(strstr(err.msg, "decodes to more than 64 MiB"));
	/* 6 MiB decoded from that 1.5 MiB start and zeros: within 64 times */
	xzlen = 0;
	assert_int_equal(lzma_easy_buffer_encode(0, LZMA_CHECK_CRC64, NULL, plain, 6 << 20,
						 xzbuf, &xzlen, xcap), LZMA_OK);
	assert_int_equal(debuginfo_xz_decode(xzbuf, xzlen, &out, &n, &err), 0);
	assert_int_equal(n, 6 << 20);
	assert_memory_equal(out, plain, n);
	free(out);
	free(plain);
	free(xzbuf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32),
		cmocka_unit_test(test_crc32_fd),
		cmocka_unit_test(test_build_id_path),
		cmocka_unit_test(test_link_paths),
		cmocka_unit_test(test_find_link),
		cmocka_unit_test(test_xz),
		cmocka_unit_test(test_xz_bomb),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
