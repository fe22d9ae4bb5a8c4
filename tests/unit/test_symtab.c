/*
 * test_symtab.c - lib/symbols/symtab.c and lib/symbols/kallsyms.c.  The setup compiles a
 * small program (PIE, non-PIE, and stripped with only .dynsym left) and a
 * shared library with cc; the program prints the file offsets of its own
 * functions and of call sites (address - mapping start + mapping offset,
 * from /proc/self/maps), and those must name the right function, file
 * and line.  kallsyms is checked on a synthetic snapshot and, when
 * readable, on the live /proc/kallsyms.
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
#include <dlfcn.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kallsyms.h"
#include "symtab.h"
#include "shellrun.h"

static const char prog_src[] =
	"#include <stdio.h>\n"
	"\n"
	"static unsigned long file_off(void *addr)\n"
	"{\n"
	"	FILE *f = fopen(\"/proc/self/maps\", \"r\");\n"
	"	unsigned long lo, hi, pgoff, a = (unsigned long)addr;\n"
	"	char line[512];\n"
	"\n"
	"	while (f && fgets(line, sizeof(line), f))\n"
	"		if (sscanf(line, \"%lx-%lx %*s %lx\", &lo, &hi, &pgoff) == 3 &&\n"
	"		    a >= lo && a < hi) {\n"
	"			fclose(f);\n"
	"			return a - lo + pgoff;\n"
	"		}\n"
	"	return 0;\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) void *here(void)\n"
	"{\n"
	"	return __builtin_return_address(0);\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) int alpha(int x)\n"
	"{\n"
	"	void *ra;\n"
	"\n"
	"	x *= 3;\n"
	"	ra = here(); /* L_ALPHA_CALL */\n"
	"	printf(\"alpha_call %lx\\n\", file_off((char *)ra - 1));\n"
	"	return x + 1;\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) static int hidden(int x) { /* L_HIDDEN */\n"
	"	return x ^ 0x5a;\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) int beta(int x)\n"
	"{\n"
	"	void *ra = here(); /* L_BETA_CALL */\n"
	"\n"
	"	printf(\"beta_call %lx\\n\", file_off((char *)ra - 1));\n"
	"	return alpha(x) * 2 + hidden(x);\n"
	"}\n"
	"\n"
	"int main(void)\n"
	"{\n"
	"	printf(\"alpha %lx\\n\", file_off((void *)alpha));\n"
	"	printf(\"hidden %lx\\n\", file_off((void *)hidden));\n"
	"	printf(\"beta %lx\\n\", file_off((void *)beta));\n"
	"	printf(\"main %lx\\n\", file_off((void *)main));\n"
	"	return beta(1) == 0;\n"
	"}\n";

/* The asm label gives a C function a C++ mangled name. */
static const char lib_src[] =
	"__attribute__((noinline)) void *lib_here(void)\n"
	"{\n"
	"	return __builtin_return_address(0);\n"
	"}\n"
	"\n"
	"void *lib_alpha(void) { /* L_LIB_ALPHA */\n"
	"	void *ra = lib_here(); /* L_LIB_CALL */\n"
	"\n"
	"	return ra;\n"
	"}\n"
	"\n"
	"int cxx_like(int x) __asm__(\"_ZN6strobe3fooEi\");\n"
	"int cxx_like(int x)\n"
	"{\n"
	"	return x + 1;\n"
	"}\n"
	"\n"
	"/* aliases: perf names the address al_fn_longer_name (global, the\n"
	" * fewest leading underscores, then the longest name; weak last) */\n"
	"int al_fn(int x) { return x * 7 + 1; }\n"
	"int al_fn_longer_name(int x) __attribute__((alias(\"al_fn\")));\n"
	"int __al_fn_underscored_longest_name(int x) __attribute__((alias(\"al_fn\")));\n"
	"__attribute__((weak)) int al_fn_weak_and_the_longest_name_of_all(int x)\n"
	"	__attribute__((alias(\"al_fn\")));\n"
	"/* a local name before a weak one */\n"
	"static int al2_local(int x) { return x * 5 - 3; }\n"
	"__attribute__((weak)) int al2_weak_and_longer(int x) __attribute__((alias(\"al2_local\")));\n";

static char tmpdir[64];
static char pie[128], nopie[128], stripped[128], lib[128], csrc[128];

/* 1-based line of the first occurrence of marker in src.  Functions
 * whose entry line is checked have their '{' on the declaration line:
 * gcc gives the entry the line of the brace, clang that of the name. */
static unsigned line_of(const char *src, const char *marker)
{
	const char *m = strstr(src, marker), *p;
	unsigned line = 1;

	assert_non_null(m);
	for (p = src; p < m; p++)
		line += *p == '\n';
	return line;
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}


static int setup(void **state)
{
	const char *cc = getenv("CC") ? getenv("CC") : "cc";

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/strobe-test-symtab-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(csrc, sizeof(csrc), "%s/prog.c", tmpdir);
	snprintf(pie, sizeof(pie), "%s/prog-pie", tmpdir);
	snprintf(nopie, sizeof(nopie), "%s/prog-nopie", tmpdir);
	snprintf(stripped, sizeof(stripped), "%s/prog-stripped", tmpdir);
	if (write_text(csrc, prog_src))
		return -1;
	snprintf(lib, sizeof(lib), "%s/lib.c", tmpdir);
	if (write_text(lib, lib_src))
		return -1;
	snprintf(lib, sizeof(lib), "%s/libt.so", tmpdir);
	/* Relative source names, so DWARF says "prog.c" and "lib.c". */
	if (run("cd %s && %s -O0 -g -fPIE -pie -o prog-pie prog.c", tmpdir, cc) ||
	    run("cd %s && %s -O0 -g -fno-pie -no-pie -o prog-nopie prog.c", tmpdir, cc) ||
	    run("cd %s && %s -O0 -g -fPIE -pie -rdynamic -o prog-stripped prog.c && "
		"strip --strip-all prog-stripped", tmpdir, cc) ||
	    run("cd %s && %s -O0 -g -fPIC -shared -o libt.so lib.c", tmpdir, cc))
		return -1;
	return 0;
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

struct offs {
	uint64_t alpha, alpha_call, hidden, beta, beta_call, main;
};

/* Run prog and read the offsets it prints. */
static void run_prog(const char *prog, struct offs *o)
{
	FILE *p = popen(prog, "r");
	char name[64];
	unsigned long v;
	int n = 0;

	assert_non_null(p);
	memset(o, 0, sizeof(*o));
	while (fscanf(p, "%63s %lx", name, &v) == 2) {
		n++;
		if (!strcmp(name, "alpha"))
			o->alpha = v;
		else if (!strcmp(name, "alpha_call"))
			o->alpha_call = v;
		else if (!strcmp(name, "hidden"))
			o->hidden = v;
		else if (!strcmp(name, "beta"))
			o->beta = v;
		else if (!strcmp(name, "beta_call"))
			o->beta_call = v;
		else if (!strcmp(name, "main"))
			o->main = v;
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(n, 6);
	assert_true(o->alpha && o->alpha_call && o->hidden && o->beta &&
		    o->beta_call && o->main);
}

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

static void expect(struct symtab *s, uint64_t off, int want_line,
		   const char *name, uint64_t sym_offset, const char *file,
		   unsigned line)
{
	struct symtab_hit h;
	int r = symtab_lookup(s, off, want_line, &h);

	if (!name) {
		assert_int_equal(r, -1);
		assert_null(h.name);
		return;
	}
	assert_int_equal(r, 0);
	assert_non_null(h.name);
	assert_string_equal(h.name, name);
	assert_int_equal(h.sym_offset, sym_offset);
	if (!want_line)
		return;
	if (file) {
		assert_non_null(h.file);
		assert_string_equal(base(h.file), file);
	} else {
		assert_null(h.file);
	}
	assert_int_equal(h.line, line);
}

/* A -g build: names from .symtab, static functions included, lines. */
static void check_debug_build(const char *prog)
{
	unsigned alpha_line = line_of(prog_src, "L_ALPHA_CALL");
	unsigned beta_line = line_of(prog_src, "L_BETA_CALL");
	struct error e = { "" };
	struct symtab *s;
	struct offs o;
	uint64_t vma;

	run_prog(prog, &o);
	s = symtab_open(prog, &e);
	if (!s)
		print_error("%s\n", e.msg);
	assert_non_null(s);
	assert_true(symtab_count(s) >= 5);

	expect(s, o.alpha, 0, "alpha", 0, NULL, 0);
	expect(s, o.alpha + 3, 0, "alpha", 3, NULL, 0);
	expect(s, o.alpha_call, 1, "alpha", o.alpha_call - o.alpha, "prog.c", alpha_line);
	expect(s, o.beta_call, 1, "beta", o.beta_call - o.beta, "prog.c", beta_line);
	expect(s, o.hidden, 1, "hidden", 0, "prog.c", line_of(prog_src, "L_HIDDEN"));
	expect(s, o.main, 0, "main", 0, NULL, 0);
	/* Without want_line, no file. */
	{
		struct symtab_hit h;

		assert_int_equal(symtab_lookup(s, o.beta_call, 0, &h), 0);
		assert_null(h.file);
		assert_int_equal(h.line, 0);
	}
	assert_int_equal(symtab_offset_to_vma(s, o.alpha, &vma), 0);
	/* The ELF header is in no section; nor is anything past the end. */
	assert_int_equal(symtab_offset_to_vma(s, 0, &vma), -1);
	assert_int_equal(symtab_offset_to_vma(s, 1ULL << 40, &vma), -1);
	expect(s, 0, 1, NULL, 0, NULL, 0);
	symtab_close(s);
}

static void test_pie(void **state)
{
	(void)state;
	check_debug_build(pie);
}

static void test_nopie(void **state)
{
	struct error e;
	struct symtab *s;
	struct offs o;
	uint64_t vma;

	(void)state;
	check_debug_build(nopie);
	/* A fixed executable: addresses are the link-time ones. */
	run_prog(nopie, &o);
	s = symtab_open(nopie, &e);
	assert_non_null(s);
	assert_int_equal(symtab_offset_to_vma(s, o.alpha, &vma), 0);
	assert_true(vma >= 0x400000);
	symtab_close(s);
}

/* strip --strip-all: only .dynsym (-rdynamic) names the functions; the
 * static one is not in it and must not be blamed on its neighbour. */
static void test_stripped(void **state)
{
	struct error e = { "" };
	struct symtab *s;
	struct offs o;

	(void)state;
	run_prog(stripped, &o);
	s = symtab_open(stripped, &e);
	if (!s)
		print_error("%s\n", e.msg);
	assert_non_null(s);
	assert_true(symtab_count(s) >= 3);
	expect(s, o.alpha, 1, "alpha", 0, NULL, 0);
	expect(s, o.alpha_call, 1, "alpha", o.alpha_call - o.alpha, NULL, 0);
	expect(s, o.beta_call, 0, "beta", o.beta_call - o.beta, NULL, 0);
	expect(s, o.main, 0, "main", 0, NULL, 0);
	expect(s, o.hidden, 0, NULL, 0, NULL, 0);
	symtab_close(s);
}

/* File offset of addr in this process. */
static uint64_t self_offset(const void *addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi, pgoff, a = (unsigned long)addr;
	char line[512];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &pgoff) == 3 &&
		    a >= lo && a < hi) {
			fclose(f);
			return a - lo + pgoff;
		}
	fclose(f);
	fail_msg("%p is not mapped", addr);
	return 0;
}

static void test_shared_lib(void **state)
{
	struct error e = { "" };
	struct symtab *s;
	void *h, *fn, *ra, *cxx;
	uint64_t off_fn, off_call, off_cxx;

	(void)state;
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		print_error("%s\n", dlerror());
	assert_non_null(h);
	fn = dlsym(h, "lib_alpha");
	cxx = dlsym(h, "_ZN6strobe3fooEi");
	assert_non_null(fn);
	assert_non_null(cxx);
	ra = ((void *(*)(void))fn)();
	off_fn = self_offset(fn);
	off_call = self_offset((char *)ra - 1);
	off_cxx = self_offset(cxx);

	s = symtab_open(lib, &e);
	if (!s)
		print_error("%s\n", e.msg);
	assert_non_null(s);
	expect(s, off_fn, 1, "lib_alpha", 0, "lib.c", line_of(lib_src, "L_LIB_ALPHA"));
	expect(s, off_call, 1, "lib_alpha", off_call - off_fn, "lib.c",
	       line_of(lib_src, "L_LIB_CALL"));
	expect(s, off_cxx + 1, 0, "strobe::foo(int)", 1, NULL, 0);
	symtab_close(s);
	dlclose(h);
}

/* Of several names at one address, the one perf shows (its
 * choose_best_symbol order), so that strobe's reports and perf's agree. */
static void test_aliases(void **state)
{
	struct error e = { "" };
	struct symtab *s;
	void *h, *al, *al2;
	uint64_t off, off2;

	(void)state;
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	al = dlsym(h, "al_fn");
	al2 = dlsym(h, "al2_weak_and_longer");
	assert_non_null(al);
	assert_non_null(al2);
	assert_ptr_equal(al, dlsym(h, "al_fn_weak_and_the_longest_name_of_all"));
	off = self_offset(al);
	off2 = self_offset(al2);
	s = symtab_open(lib, &e);
	if (!s)
		print_error("%s\n", e.msg);
	assert_non_null(s);
	expect(s, off, 0, "al_fn_longer_name", 0, NULL, 0);
	expect(s, off + 2, 0, "al_fn_longer_name", 2, NULL, 0);
	expect(s, off2, 0, "al2_local", 0, NULL, 0);
	symtab_close(s);
	dlclose(h);
}

static void test_not_elf(void **state)
{
	struct error e = { "" };
	char path[160];

	(void)state;
	assert_null(symtab_open(csrc, &e));
	assert_non_null(strstr(e.msg, "cannot read symbols of"));
	assert_non_null(strstr(e.msg, csrc));
	snprintf(path, sizeof(path), "%s/missing", tmpdir);
	assert_null(symtab_open(path, &e));
	assert_non_null(strstr(e.msg, path));
}

static const char snap[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 t __pfx_startup\n"
	"ffffffff81000000 T startup_64\n"
	"ffffffff81000100 t helper\n"
	"ffffffff81000200 T do_thing\n"
	"ffffffff81000300 d some_data\n"	/* data: dropped */
	"ffffffff81000400 W weak_fn\n"
	"ffffffff81000500 T _etext\n"
	"ffffffffc0001000 t mod_fn\t[mymod]\n"	/* raw /proc/kallsyms form */
	"ffffffffc0001080 T mod_fn2 [mymod]\n"
	"ffffffffc0200000 t other_fn [othermod]\n";

static void check_lookup(const struct kallsyms *k, uint64_t addr,
			 const char *name, uint64_t off, const char *module)
{
	const char *mod = "unset", *got;
	uint64_t o = 12345;

	got = kallsyms_lookup(k, addr, &o, &mod);
	if (!name) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, name);
	assert_int_equal(o, off);
	if (module) {
		assert_non_null(mod);
		assert_string_equal(mod, module);
	} else {
		assert_null(mod);
	}
}

static void test_kallsyms_parse(void **state)
{
	struct error e = { "" };
	struct kallsyms *k;

	(void)state;
	k = kallsyms_parse(snap, strlen(snap), &e);
	if (!k)
		print_error("%s\n", e.msg);
	assert_non_null(k);
	check_lookup(k, 0xffffffff80ffffffULL, NULL, 0, NULL);	/* below all */
	check_lookup(k, 0xffffffff81000000ULL, "startup_64", 0, NULL);
	check_lookup(k, 0xffffffff810000ffULL, "startup_64", 0xff, NULL);
	check_lookup(k, 0xffffffff81000100ULL, "helper", 0, NULL);
	check_lookup(k, 0xffffffff81000350ULL, "do_thing", 0x150, NULL);
	check_lookup(k, 0xffffffff81000404ULL, "weak_fn", 4, NULL);
	check_lookup(k, 0xffffffff81000510ULL, "_etext", 0x10, NULL);
	check_lookup(k, 0xffffffffc0001010ULL, "mod_fn", 0x10, "mymod");
	check_lookup(k, 0xffffffffc0001100ULL, "mod_fn2", 0x80, "mymod");
	/* The last of a module ends 64 KiB on, not at the next module. */
	check_lookup(k, 0xffffffffc0011080ULL, NULL, 0, NULL);
	check_lookup(k, 0xffffffffc0200010ULL, "other_fn", 0x10, "othermod");
	check_lookup(k, 0xffffffffc0210000ULL, NULL, 0, NULL);
	assert_non_null(kallsyms_lookup(k, 0xffffffff81000000ULL, NULL, NULL));
	kallsyms_free(k);

	/* Bad input. */
	assert_null(kallsyms_parse("zzz T foo\n", 10, &e));
	assert_non_null(strstr(e.msg, "line 1"));
	assert_null(kallsyms_parse("ffffffff81000000 T\n", 19, &e));
	assert_null(kallsyms_parse("", 0, &e));
	assert_null(kallsyms_parse("0000000000000000 T a\n0000000000000000 t b\n", 42, &e));
}

/* kallsyms_snapshot on a file: filtered, sorted, refusing zeros. */
static void test_kallsyms_snapshot_file(void **state)
{
	static const char raw[] =
		"ffffffff81000200 T do_thing\n"
		"ffffffffc0001000 t mod_fn\t[mymod]\n"
		"ffffffff81000300 D some_data\n"
		"ffffffff81000000 T startup_64\n";
	static const char want[] =
		"ffffffff81000000 T startup_64\n"
		"ffffffff81000200 T do_thing\n"
		"ffffffffc0001000 t mod_fn [mymod]\n";
	struct error e = { "" };
	char path[160], *buf = NULL;
	struct kallsyms *k;
	size_t len = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/kallsyms", tmpdir);
	assert_int_equal(write_text(path, raw), 0);
	assert_int_equal(kallsyms_snapshot(path, &buf, &len, &e), 0);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(buf, want, len);
	k = kallsyms_parse(buf, len, &e);
	assert_non_null(k);
	check_lookup(k, 0xffffffffc0001004ULL, "mod_fn", 4, "mymod");
	kallsyms_free(k);
	free(buf);

	/* kallsyms_load reads a stored snapshot. */
	assert_int_equal(write_text(path, want), 0);
	k = kallsyms_load(path, &e);
	assert_non_null(k);
	check_lookup(k, 0xffffffff81000201ULL, "do_thing", 1, NULL);
	kallsyms_free(k);

	assert_int_equal(write_text(path, "0000000000000000 T a\n0000000000000000 t b\n"), 0);
	assert_int_equal(kallsyms_snapshot(path, &buf, &len, &e), -1);
	assert_non_null(strstr(e.msg, "kptr_restrict"));
	snprintf(path, sizeof(path), "%s/nonexistent", tmpdir);
	assert_int_equal(kallsyms_snapshot(path, &buf, &len, &e), -1);
	assert_non_null(strstr(e.msg, path));
	assert_null(kallsyms_load(path, &e));
}

/* The live kernel, as root. */
static void test_kallsyms_live(void **state)
{
	struct error e = { "" };
	struct kallsyms *k;
	char *buf = NULL, *line;
	const char *names[] = { "schedule", "do_syscall_64" };
	size_t len, i;
	int found = 0;

	(void)state;
	if (geteuid() != 0 || access("/proc/kallsyms", R_OK)) {
		skip();
		return;
	}
	if (kallsyms_snapshot(NULL, &buf, &len, &e) < 0)
		print_error("%s\n", e.msg);
	assert_non_null(buf);
	assert_true(len > 1000);
	assert_true(strncmp(buf, "0000000000000000", 16) != 0);
	k = kallsyms_parse(buf, len, &e);
	assert_non_null(k);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		char pat[64];
		unsigned long long addr;
		const char *got, *mod;
		uint64_t off;

		snprintf(pat, sizeof(pat), " %s\n", names[i]);
		line = strstr(buf, pat);
		if (!line)
			continue;
		while (line > buf && line[-1] != '\n')
			line--;
		assert_int_equal(sscanf(line, "%llx", &addr), 1);
		assert_true(addr != 0);
		got = kallsyms_lookup(k, addr + 1, &off, &mod);
		assert_non_null(got);
		assert_string_equal(got, names[i]);
		assert_int_equal(off, 1);
		assert_null(mod);
		found++;
	}
	assert_true(found > 0);
	kallsyms_free(k);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_nopie),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_shared_lib),
		cmocka_unit_test(test_aliases),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_kallsyms_parse),
		cmocka_unit_test(test_kallsyms_snapshot_file),
		cmocka_unit_test(test_kallsyms_live),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
