/*
 * test_usdt.c - lib/capture/usdt.c and usdtargs.c: the x86_64 argument
 * parser and the values it reads at a hit, PATH:PROVIDER:NAME specs, and
 * finding probes in ELF files.  The setup compiles a small program with
 * <sys/sdt.h> probes (PIE and non-PIE): one probe at two sites, one
 * without arguments, one with a semaphore in a second file; every site
 * found must be a nop at its file offset, and a copy of the file whose
 * notes are moved as prelink would move them must give the same offsets.
 * The _fd readers read the open file whatever becomes of its path, and a
 * FIFO does not block.  Copies of the program with a header table too
 * long or past the file's end are refused, naming the table.
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

static void test_args(void **state)
{
	struct usdt_arg a[USDT_MAX_ARGS];
	struct error e;
	int n;

	(void)state;
	assert_int_equal(usdt_parse_args("-4@%edi 8@%rax 4@$5 8@-8(%rbp)", a, USDT_MAX_ARGS,
					 &n, &e), 0);
	assert_int_equal(n, 4);
	assert_int_equal(a[0].kind, USDT_ARG_REG);
	assert_int_equal(a[0].size, 4);
	assert_true(a[0].is_signed);
	assert_int_equal(a[0].reg, USDT_REG_DI);
	assert_int_equal(a[1].kind, USDT_ARG_REG);
	assert_int_equal(a[1].size, 8);
	assert_false(a[1].is_signed);
	assert_int_equal(a[1].reg, USDT_REG_AX);
	assert_int_equal(a[2].kind, USDT_ARG_CONST);
	assert_int_equal(a[2].value, 5);
	assert_int_equal(a[3].kind, USDT_ARG_MEM);
	assert_int_equal(a[3].reg, USDT_REG_BP);
	assert_int_equal(a[3].value, -8);

	assert_int_equal(usdt_parse_args("  -1@%ah 2@%r9w -8@%r15 1@%r10b 8@$-1 8@$0x10 "
					 "8@(%rsp) -2@0x10(%r12) %esi", a, USDT_MAX_ARGS, &n, &e), 0);
	assert_int_equal(n, 9);
	assert_int_equal(a[0].reg, USDT_REG_AX);
	assert_int_equal(a[0].shift, 8);
	assert_int_equal(a[1].reg, USDT_REG_R8 + 1);
	assert_int_equal(a[1].size, 2);
	assert_int_equal(a[2].reg, USDT_REG_R8 + 7);
	assert_int_equal(a[3].reg, USDT_REG_R8 + 2);
	assert_int_equal(a[4].value, -1);
	assert_int_equal(a[5].value, 16);
	assert_int_equal(a[6].kind, USDT_ARG_MEM);
	assert_int_equal(a[6].reg, USDT_REG_SP);
	assert_int_equal(a[6].value, 0);
	assert_int_equal(a[7].value, 16);
	assert_int_equal(a[7].size, 2);
	/* no size: the register's width */
	assert_int_equal(a[8].size, 4);
	assert_int_equal(a[8].reg, USDT_REG_SI);

	assert_int_equal(usdt_parse_args("", a, USDT_MAX_ARGS, &n, &e), 0);
	assert_int_equal(n, 0);
}

static void test_bad_args(void **state)
{
	static const struct { const char *spec, *msg; } bad[] = {
		{ "8@counter(%rip)", "argument 1 '8@counter(%rip)': a global variable" },
		{ "8@%rax 8@(%rax,%rbx,8)", "argument 2 '8@(%rax,%rbx,8)': memory with an index" },
		{ "3@%eax", "argument 1 '3@%eax': the size" },
		{ "8f@%xmm0", "floating point" },
		{ "8@%xyz", "unknown x86_64 register" },
		{ "8@$sym", "the address of a symbol" },
		{ "8@%fs:0x28", "segment-relative" },
		{ "8@", "no operand" },
		{ "8@abc", "not a register" },
		{ "8@8(%eax)", "not a 64-bit" },
		{ "1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1", "more than 12" },
	};
	struct usdt_arg a[USDT_MAX_ARGS];
	struct error e;
	int n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e.msg[0] = 0;
		assert_int_equal(usdt_parse_args(bad[i].spec, a, USDT_MAX_ARGS, &n, &e), -1);
		if (!strstr(e.msg, bad[i].msg))
			fail_msg("'%s': message '%s' lacks '%s'", bad[i].spec, e.msg, bad[i].msg);
	}
}

/* Without a size before '@' an operand is signed and as wide as its
 * register (else 8 bytes); with one, signed only after a '-'. */
static void test_arg_sizes(void **state)
{
	static const int size[] = { 4, 8, 8, 4, 4, 4, 2, 2, 2 };
	static const int sign[] = { 1, 1, 1, 0, 0, 0, 1, 1, 1 };
	struct usdt_arg a[USDT_MAX_ARGS];
	struct error e;
	int n;

	(void)state;
	assert_int_equal(usdt_parse_args("%esi $7 8(%rbp) 4@%esi 4@$7 4@8(%rbp) "
					 "-2@%si -2@$7 -2@8(%rbp)", a, USDT_MAX_ARGS, &n, &e), 0);
	assert_int_equal(n, 9);
	for (int i = 0; i < n; i++) {
		assert_int_equal(a[i].kind, i % 3 == 0 ? USDT_ARG_REG :
				 i % 3 == 1 ? USDT_ARG_CONST : USDT_ARG_MEM);
		if (a[i].size != size[i] || a[i].is_signed != sign[i])
			fail_msg("argument %d: size %d signed %d, not %d and %d", i + 1,
				 a[i].size, a[i].is_signed, size[i], sign[i]);
	}
}

static void test_values(void **state)
{
	struct usdt_arg a[USDT_MAX_ARGS];
	uint64_t regs[USDT_NR_REGS] = { 0 };
	unsigned char stack[64];
	int64_t v, word = -12345;
	uint32_t u = 0xdeadbeef;
	struct usdt_site s;
	struct error e;
	char buf[256];
	int n, stk;

	(void)state;
	assert_int_equal(usdt_parse_args("-4@%edi 8@%rax -1@%ah 8@$7 -8@16(%rsp) 4@-4(%rbp) "
					 "8@-64(%rbp) 2@%r9w", a, USDT_MAX_ARGS, &n, &e), 0);
	regs[USDT_REG_DI] = 0x12345678fffffffeULL;	/* low 32 bits: -2 */
	regs[USDT_REG_AX] = 0xffffffffffff80aaULL;	/* ah = 0x80: -128 */
	regs[USDT_REG_SP] = 0x7ffc0000;
	regs[USDT_REG_BP] = 0x7ffc0000 + 40;
	regs[USDT_REG_R8 + 1] = 0x10002;
	memset(stack, 0, sizeof(stack));
	memcpy(stack + 16, &word, 8);
	memcpy(stack + 36, &u, 4);
	assert_int_equal(usdt_arg_value(&a[0], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, -2);
	assert_int_equal(usdt_arg_value(&a[1], regs, stack, sizeof(stack), &v), 0);
	assert_true((uint64_t)v == 0xffffffffffff80aaULL);
	assert_int_equal(usdt_arg_value(&a[2], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, -128);
	assert_int_equal(usdt_arg_value(&a[3], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(usdt_arg_value(&a[4], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, -12345);
	assert_int_equal(usdt_arg_value(&a[5], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, 0xdeadbeef);
	/* below the stack pointer: not in the copy */
	assert_int_equal(usdt_arg_value(&a[6], regs, stack, sizeof(stack), &v), -1);
	assert_int_equal(usdt_arg_value(&a[4], regs, NULL, 0, &v), -1);
	assert_int_equal(usdt_arg_value(&a[7], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, 2);

	memset(&s, 0, sizeof(s));
	s.nargs = n;
	memcpy(s.args, a, sizeof(a));
	assert_true(usdt_regs_mask(&s, &stk) == ((1ULL << USDT_REG_DI) | (1ULL << USDT_REG_AX) |
						  (1ULL << USDT_REG_SP) | (1ULL << USDT_REG_BP) |
						  (1ULL << (USDT_REG_R8 + 1))));
	assert_true(stk);
	{
		int64_t vals[8] = { -2, -1, -128, 7, -12345, 5, 0, 2 };

		usdt_format_args(&s, vals, 0xff & ~(1u << 6), buf, sizeof(buf));
		assert_string_equal(buf, "-2,18446744073709551615,-128,7,-12345,5,?,2");
	}
	s.nargs = 0;
	usdt_format_args(&s, NULL, 0, buf, sizeof(buf));
	assert_string_equal(buf, "");
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
		assert_true(s[i].offset < len);
		if (d[s[i].offset] != 0x90)
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
	/* at -O0, x lives in the frame: an rbp-relative memory argument */
	assert_int_equal(usdt_find(pie, "demo", "guarded", &s, &n, &e), 0);
	assert_int_equal(s[0].nargs, 1);
	assert_int_equal(s[0].args[0].kind, USDT_ARG_MEM);
	assert_int_equal(s[0].args[0].reg, USDT_REG_BP);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_arg_sizes),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_spec),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_find_errors),
		cmocka_unit_test(test_find_fd),
		cmocka_unit_test(test_bad_tables),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
