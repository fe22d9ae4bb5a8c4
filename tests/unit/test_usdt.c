/*
 * test_usdt.c - lib/capture/usdt.c: PATH:PROVIDER:NAME specs, and finding
 * probes in ELF files (their arguments: test_usdtargs).  The setup compiles a small program with
 * <sys/sdt.h> probes (PIE and non-PIE): one probe at two sites, one
 * without arguments, one with a semaphore in a second file; every site
 * found must be a nop at its file offset, and a copy of the file whose
 * notes are moved as prelink would move them must give the same offsets.
 * The _fd readers read the open file whatever becomes of its path, and a
 * FIFO does not block.  Copies of the program with a header table too
 * long or past the file's end are refused, naming the table, and one
 * marked as built for the other architecture is listed but not found.
 */
#include "config.h"
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* nftw */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <elf.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "usdt.h"
#include "shellrun.h"

static char tmpdir[64], pie[128], nopie[128], moved[128], text[128];

static const char prog_src[] =
	"#include <sys/sdt.h>\n"
	"void guarded(long x);\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	long x = argc * 3;\n"
	"	(void)argv;\n"
	"	DTRACE_PROBE2(demo, twice, x, 5);\n"
	"	if (argc > 5)\n"
	"		DTRACE_PROBE2(demo, twice, argc, x);\n"
	"	DTRACE_PROBE(demo, noargs);\n"
	"	guarded(x);\n"
	"	return 0;\n"
	"}\n";

static const char sem_src[] =
	"#define _SDT_HAS_SEMAPHORES 1\n"
	"#include <sys/sdt.h>\n"
	"unsigned short demo_guarded_semaphore __attribute__((section(\".probes\")));\n"
	"void guarded(long x)\n"
	"{\n"
	"	if (demo_guarded_semaphore)\n"
	"		DTRACE_PROBE1(demo, guarded, x);\n"
	"}\n";

static int write_text(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(s, f);
	return fclose(f);
}

static unsigned char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n);
	assert_int_equal(fread(buf, 1, n, f), (size_t)n);
	fclose(f);
	*len = n;
	return buf;
}

/* A copy of path whose stapsdt notes say the file was linked 0x1000 lower
 * (site, base and semaphore addresses all moved), as prelink leaves them. */
static int make_moved(const char *path, const char *out)
{
	size_t len;
	unsigned char *d = read_file(path, &len);
	int nnotes = 0;
	FILE *f;

	for (size_t p = 0; p + 12 + 8 + 24 <= len; p += 4) {
		uint64_t a, b, sem;

		if (memcmp(d + p + 12, "stapsdt", 8) || d[p + 8] != 3 || d[p] != 8)
			continue;
		memcpy(&a, d + p + 20, 8);
		memcpy(&b, d + p + 28, 8);
		memcpy(&sem, d + p + 36, 8);
		a -= 0x1000;
		b -= 0x1000;
		if (sem)
			sem -= 0x1000;
		memcpy(d + p + 20, &a, 8);
		memcpy(d + p + 28, &b, 8);
		memcpy(d + p + 36, &sem, 8);
		nnotes++;
	}
	f = fopen(out, "wb");
	if (!f || fwrite(d, 1, len, f) != len || fclose(f))
		return -1;
	free(d);
	return nnotes == 4 ? 0 : -1;
}

static int setup(void **state)
{
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	char path[160];

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/strobe-test-usdt-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(path, sizeof(path), "%s/prog.c", tmpdir);
	if (write_text(path, prog_src))
		return -1;
	snprintf(path, sizeof(path), "%s/sem.c", tmpdir);
	if (write_text(path, sem_src))
		return -1;
	snprintf(text, sizeof(text), "%s/prog.c", tmpdir);
	snprintf(pie, sizeof(pie), "%s/prog-pie", tmpdir);
	snprintf(nopie, sizeof(nopie), "%s/prog-nopie", tmpdir);
	snprintf(moved, sizeof(moved), "%s/prog-moved", tmpdir);
	if (run("cd %s && %s -O0 -g -fPIE -pie -o prog-pie prog.c sem.c", tmpdir, cc) ||
	    run("cd %s && %s -O2 -fno-pie -no-pie -o prog-nopie prog.c sem.c", tmpdir, cc))
		return -1;
	return make_moved(pie, moved);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	(void)state;
	return nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void test_spec(void **state)
{
	char path[256], prov[USDT_MAX_NAME], name[USDT_MAX_NAME];
	static const char *const bad[] = {
		"prog", "prog:name", ":p:n", "prog::n", "prog:p:", "prog:p-x:n", "prog:p:1n",
	};
	struct error e;

	(void)state;
	assert_int_equal(usdt_parse_spec("/usr/bin/prog:myapp:start", path, sizeof(path), prov,
					 name, &e), 0);
	assert_string_equal(path, "/usr/bin/prog");
	assert_string_equal(prov, "myapp");
	assert_string_equal(name, "start");
	assert_int_equal(usdt_parse_spec("/a:b/c:d:e_1", path, sizeof(path), prov, name, &e), 0);
	assert_string_equal(path, "/a:b/c");
	assert_string_equal(prov, "d");
	assert_string_equal(name, "e_1");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e.msg[0] = 0;
		assert_int_equal(usdt_parse_spec(bad[i], path, sizeof(path), prov, name, &e), -1);
		if (!strstr(e.msg, "bad marker '") || !strstr(e.msg, bad[i]))
			fail_msg("'%s': message '%s'", bad[i], e.msg);
	}
}

/* The nop <sys/sdt.h> puts at a site, in the program's machine. */
#if defined(__aarch64__)
static const unsigned char nop[] = { 0x1f, 0x20, 0x03, 0xd5 };
#define FRAME_REG	USDT_REG_ARM64_SP	/* -O0 keeps locals sp-relative */
#else
static const unsigned char nop[] = { 0x90 };
#define FRAME_REG	USDT_REG_BP
#endif

/* Every site of path is a nop at its offset; returns them. */
static void check_sites(const char *path, struct usdt_site **out, size_t *nout)
{
	size_t len, n;
	unsigned char *d = read_file(path, &len);
	struct usdt_site *s;
	struct error e;

	if (usdt_list(path, &s, &n, &e) < 0)
		fail_msg("usdt_list(%s): %s", path, e.msg);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(s[i].provider, "demo");
		assert_string_equal(s[i].path, path);
		assert_int_equal(s[i].nargs, -1);
		assert_true(s[i].offset + sizeof(nop) <= len);
		if (memcmp(d + s[i].offset, nop, sizeof(nop)))
			fail_msg("%s: %s:%s at offset 0x%llx is byte 0x%02x, not a nop", path,
				 s[i].provider, s[i].name, (unsigned long long)s[i].offset,
				 d[s[i].offset]);
		if (!strcmp(s[i].name, "guarded")) {
			uint16_t sem;

			assert_true(s[i].semaphore != 0);
			assert_true(s[i].semaphore_offset + 2 <= len);
			memcpy(&sem, d + s[i].semaphore_offset, 2);
			assert_int_equal(sem, 0);
		} else {
			assert_true(s[i].semaphore == 0);
		}
	}
	free(d);
	*out = s;
	*nout = n;
}

static void test_find(void **state)
{
	const char *const files[] = { pie, nopie };
	struct usdt_site *s, *m;
	size_t n, nm;
	struct error e;

	(void)state;
	for (size_t f = 0; f < 2; f++) {
		check_sites(files[f], &s, &n);
		free(s);
		if (usdt_find(files[f], "demo", "twice", &s, &n, &e) < 0)
			fail_msg("usdt_find: %s", e.msg);
		assert_int_equal(n, 2);
		assert_int_equal(s[0].nargs, 2);
		assert_int_equal(s[1].nargs, 2);
		assert_true(s[0].offset != s[1].offset);
		/* x * 3 and the constant 5 */
		assert_int_equal(s[0].args[1].kind, USDT_ARG_CONST);
		assert_int_equal(s[0].args[1].value, 5);
		free(s);
		assert_int_equal(usdt_find(files[f], "demo", "noargs", &s, &n, &e), 0);
		assert_int_equal(n, 1);
		assert_int_equal(s[0].nargs, 0);
		free(s);
	}
	/* at -O0, x lives in the frame: a memory argument (rbp-relative) */
	assert_int_equal(usdt_find(pie, "demo", "guarded", &s, &n, &e), 0);
	assert_int_equal(s[0].nargs, 1);
	assert_int_equal(s[0].args[0].kind, USDT_ARG_MEM);
	assert_int_equal(s[0].args[0].reg, FRAME_REG);
	free(s);

	/* prelink moved the notes: the same offsets */
	check_sites(pie, &s, &n);
	check_sites(moved, &m, &nm);
	for (size_t i = 0; i < n; i++) {
		assert_true(m[i].offset == s[i].offset);
		assert_true(m[i].semaphore_offset == s[i].semaphore_offset);
		assert_true(m[i].addr == s[i].addr);
	}
	free(s);
	free(m);
}

static void test_find_errors(void **state)
{
	struct usdt_site *s;
	struct error e;
	size_t n;

	(void)state;
	assert_int_equal(usdt_find(pie, "demo", "nosuch", &s, &n, &e), -1);
	assert_non_null(strstr(e.msg, "no USDT probe demo:nosuch in "));
	assert_non_null(strstr(e.msg, "it has demo:twice, demo:noargs, demo:guarded"));
	assert_null(s);
	assert_int_equal(usdt_find(text, "demo", "twice", &s, &n, &e), -1);
	assert_non_null(strstr(e.msg, "is not an ELF file"));
	assert_int_equal(usdt_find("/nonexistent/prog", "demo", "twice", &s, &n, &e), -1);
	assert_string_equal(e.msg, "cannot read /nonexistent/prog: No such file or directory");
	assert_int_equal(usdt_find("/bin/sh", "demo", "twice", &s, &n, &e), -1);
	assert_non_null(strstr(e.msg, "no USDT probe demo:twice in /bin/sh"));
}

/* Set the len bytes at off of the file at path to v, little-endian. */
static void put_le(const char *path, uint64_t off, size_t len, uint64_t v)
{
	unsigned char b[8];
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, b, len, (off_t)off), (ssize_t)len);
	close(fd);
}

/* A copy of the PIE as name (its path into out), and its ELF header. */
static void copy_pie(const char *name, char *out, size_t outlen, Elf64_Ehdr *h, size_t *len)
{
	unsigned char *d = read_file(pie, len);
	FILE *f;

	snprintf(out, outlen, "%s/%s", tmpdir, name);
	f = fopen(out, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(d, 1, *len, f), *len);
	assert_int_equal(fclose(f), 0);
	memcpy(h, d, sizeof(*h));
	free(d);
}

static void expect_error(const char *path, const char *msg)
{
	struct usdt_site *s;
	struct error e;
	size_t n;

	assert_int_equal(usdt_list(path, &s, &n, &e), -1);
	assert_null(s);
	if (!strstr(e.msg, msg))
		fail_msg("%s: \"%s\", not \"%s\"", path, e.msg, msg);
}

/* The section and program header tables: too many entries, or past the
 * end of the file, each named in the error. */
static void test_bad_tables(void **state)
{
	char path[160];
	Elf64_Ehdr h;
	size_t len;

	(void)state;
	copy_pie("shoff-end", path, sizeof(path), &h, &len);
	put_le(path, offsetof(Elf64_Ehdr, e_shoff), 8, len - 8);
	expect_error(path, ": malformed ELF file (section headers past its end)");

	copy_pie("phoff-end", path, sizeof(path), &h, &len);
	put_le(path, offsetof(Elf64_Ehdr, e_phoff), 8, len - 8);
	expect_error(path, ": malformed ELF file (program headers past its end)");

	copy_pie("phnum", path, sizeof(path), &h, &len);
	put_le(path, offsetof(Elf64_Ehdr, e_phnum), 2, 5000);
	expect_error(path, ": malformed ELF file (5000 segments)");

	/* e_shnum 0: the count is section 0's sh_size */
	copy_pie("shnum", path, sizeof(path), &h, &len);
	put_le(path, offsetof(Elf64_Ehdr, e_shnum), 2, 0);
	put_le(path, h.e_shoff + offsetof(Elf64_Shdr, sh_size), 8, 70000);
	expect_error(path, ": malformed ELF file (70000 sections)");
}

/*
 * The _fd readers read the open file, not the path again: the path is
 * swapped for a symlink to /bin/sh after the open, and the sites are still
 * the program's, named by the path given; the fd stays open and its offset
 * unmoved.  The path readers take regular files only, and a FIFO without a
 * writer is refused at once instead of blocking the open (alarm: a hang
 * fails the test rather than the suite).
 */
static void test_find_fd(void **state)
{
	char swap[160], link[160], fifo[160];
	struct usdt_site *s;
	struct error e;
	size_t n, len;
	unsigned char *d = read_file(pie, &len);
	FILE *f;
	int fd, dfd;

	(void)state;
	snprintf(swap, sizeof(swap), "%s/swap", tmpdir);
	snprintf(link, sizeof(link), "%s/swap.new", tmpdir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", tmpdir);
	f = fopen(swap, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(d, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	free(d);
	fd = open(swap, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(symlink("/bin/sh", link), 0);
	assert_int_equal(rename(link, swap), 0);

	if (usdt_find_fd(fd, swap, "demo", "twice", &s, &n, &e) < 0)
		fail_msg("usdt_find_fd: %s", e.msg);
	assert_int_equal(n, 2);
	assert_string_equal(s[0].path, swap);
	free(s);
	assert_int_equal(usdt_list_fd(fd, swap, &s, &n, &e), 0);
	assert_int_equal(n, 4);
	free(s);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 0);
	assert_int_equal(fcntl(fd, F_GETFD) >= 0, 1);
	close(fd);
	/* the path itself now leads to /bin/sh */
	assert_int_equal(usdt_find(swap, "demo", "twice", &s, &n, &e), -1);
	assert_non_null(strstr(e.msg, "no USDT probe demo:twice in "));

	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(10);
	assert_int_equal(usdt_find(fifo, "demo", "twice", &s, &n, &e), -1);
	assert_int_equal(usdt_list(fifo, &s, &n, &e), -1);
	alarm(0);
	assert_null(s);
	assert_true(strstr(e.msg, "is not a regular file") != NULL);
	dfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	assert_int_equal(usdt_find_fd(dfd, tmpdir, "demo", "twice", &s, &n, &e), -1);
	assert_true(strstr(e.msg, "is not a regular file") != NULL);
	close(dfd);
}

/*
 * A copy of the program marked as built for the other architecture
 * (aarch64 here on x86_64, x86_64 on aarch64): its probes are listed, but
 * finding one is refused in one line naming both, the register numbers
 * of this strobe's perf samples being its own machine's.
 */
static void test_other_machine(void **state)
{
	unsigned other = USDT_HOST_MACHINE == EM_AARCH64 ? EM_X86_64 : EM_AARCH64;
	const char *names[] = { "twice", "noargs" };
	char path[160], want[256];
	struct usdt_site *s;
	struct error e;
	Elf64_Ehdr h;
	size_t n, len;

	(void)state;
	copy_pie("other-arch", path, sizeof(path), &h, &len);
	assert_int_equal(h.e_machine, USDT_HOST_MACHINE);
	put_le(path, offsetof(Elf64_Ehdr, e_machine), 2, other);
	assert_int_equal(usdt_list(path, &s, &n, &e), 0);
	assert_int_equal(n, 4);
	assert_int_equal(s[0].machine, other);
	free(s);
	snprintf(want, sizeof(want), "%s is a binary for %s, and this strobe runs on %s", path,
		 other == EM_AARCH64 ? "aarch64" : "x86_64",
		 other == EM_AARCH64 ? "x86_64" : "aarch64");
	for (size_t i = 0; i < 2; i++) {
		e.msg[0] = 0;
		assert_int_equal(usdt_find(path, "demo", names[i], &s, &n, &e), -1);
		assert_null(s);
		if (!strstr(e.msg, want) || strchr(e.msg, '\n'))
			fail_msg("demo:%s: \"%s\", not \"%s\"", names[i], e.msg, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_other_machine),
		cmocka_unit_test(test_spec),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_find_errors),
		cmocka_unit_test(test_find_fd),
		cmocka_unit_test(test_bad_tables),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
