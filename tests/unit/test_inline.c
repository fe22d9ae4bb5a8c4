/*
 * test_inline.c - symtab_inline (lib/symbols/symtab.c): the inline chain
 * of every byte of two functions that inline a two-deep chain, checked
 * against what "addr2line -f -i -a" says for the same addresses, on the
 * binary itself and on a stripped copy named from its separate debug file.
 * The setup compiles the program with cc -O2 -g; without addr2line or cc
 * the test is skipped.
 */
#include "config.h"
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
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
#define SCRATCH_NAME "inline"
#define SCRATCH_FILES_ONLY
#include "scratch.h"
#include "symtab.h"
#include "shellrun.h"

static const char prog_src[] =
	"static inline __attribute__((always_inline)) unsigned long step(unsigned long x)\n"
	"{\n"
	"	x ^= x << 13;\n"
	"	x ^= x >> 7;\n"
	"	x ^= x << 17;\n"
	"	__asm__ __volatile__(\"\" : \"+r\"(x));\n"
	"	return x;\n"
	"}\n"
	"\n"
	"static inline __attribute__((always_inline)) unsigned long mix(unsigned long n,\n"
	"								unsigned long x)\n"
	"{\n"
	"	for (unsigned long i = 0; i < n; i++)\n"
	"		x = step(x);\n"
	"	return x;\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) unsigned long outer_a(unsigned long n, unsigned long x)\n"
	"{\n"
	"	return mix(n, x) + 1;\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) unsigned long outer_b(unsigned long n, unsigned long x)\n"
	"{\n"
	"	return mix(n, x ^ 5) * 3;\n"
	"}\n"
	"\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	(void)argv;\n"
	"	return (int)(outer_a(argc, 1) + outer_b(argc, 2));\n"
	"}\n";

static int skip;


static int setup(void **state)
{
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	FILE *f;

	if (scratch_setup(state) < 0)
		return -1;
	if (system("addr2line --version >/dev/null 2>&1")) {
		skip = 1;
		return 0;
	}
	f = fopen(path_of("prog.c"), "w");
	if (!f)
		return -1;
	fputs(prog_src, f);
	if (fclose(f))
		return -1;
	/* prog: with its DWARF; prog-stripped: none, prog.debug: only it */
	if (run("cd %s && %s -O2 -g -o prog prog.c", dir, cc) ||
	    run("cd %s && objcopy --only-keep-debug prog prog.debug && "
		"objcopy --strip-all prog prog-stripped", dir))
		return -1;
	return 0;
}

/* "file:line" without addr2line's " (discriminator N)". */
static void chomp(char *s)
{
	char *d = strstr(s, " (discriminator");

	if (d)
		*d = 0;
	s[strcspn(s, "\n")] = 0;
}

struct a2l {
	uint64_t vma;
	int n;
	char func[SYMTAB_INLINE_MAX][128];
	char where[SYMTAB_INLINE_MAX][512];
};

/* Check every offset of outer_a and outer_b in s (named from bin, whose
 * addresses addr2line reads from dbg) against addr2line; the number of
 * offsets whose chain is three deep (outer -> mix -> step). */
static int check_against_addr2line(struct symtab *s, const char *bin_path, const char *dbg_path)
{
	char bin[128], dbg[128];
	struct a2l *want = NULL;
	uint64_t *offs = NULL;
	size_t n = 0, cap = 0, i, k;
	char line[1024];
	int deep = 0, in_a = 0, in_b = 0;
	struct stat sb;
	FILE *f;

	snprintf(bin, sizeof(bin), "%s", bin_path);	/* path_of reuses its buffers */
	snprintf(dbg, sizeof(dbg), "%s", dbg_path);
	assert_int_equal(stat(bin, &sb), 0);
	f = fopen(path_of("addrs"), "w");
	assert_non_null(f);
	for (uint64_t off = 0; off < (uint64_t)sb.st_size; off++) {
		struct symtab_hit h;
		uint64_t vma;

		if (symtab_lookup(s, off, 0, &h) < 0 || !h.name ||
		    (strcmp(h.name, "outer_a") && strcmp(h.name, "outer_b")))
			continue;
		assert_int_equal(symtab_offset_to_vma(s, off, &vma), 0);
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			offs = realloc(offs, cap * sizeof(*offs));
			want = realloc(want, cap * sizeof(*want));
			assert_true(offs && want);
		}
		offs[n] = off;
		memset(&want[n], 0, sizeof(want[n]));
		want[n].vma = vma;
		n++;
		fprintf(f, "%#llx\n", (unsigned long long)vma);
	}
	assert_int_equal(fclose(f), 0);
	assert_true(n > 16);
	assert_int_equal(run("addr2line -f -i -a -e %s < %s > %s", dbg, path_of("addrs"),
			     path_of("a2l")), 0);

	/* "0xADDR" then (function, file:line) pairs, innermost first */
	f = fopen(path_of("a2l"), "r");
	assert_non_null(f);
	i = (size_t)-1;
	while (fgets(line, sizeof(line), f)) {
		struct a2l *w;

		if (!strncmp(line, "0x", 2)) {
			i++;
			assert_true(i < n);
			assert_int_equal(strtoull(line, NULL, 16), want[i].vma);
			continue;
		}
		assert_true(i < n);
		w = &want[i];
		assert_true(w->n < SYMTAB_INLINE_MAX);
		chomp(line);
		snprintf(w->func[w->n], sizeof(w->func[0]), "%.127s", line);
		assert_non_null(fgets(line, sizeof(line), f));
		chomp(line);
		snprintf(w->where[w->n], sizeof(w->where[0]), "%.511s", line);
		w->n++;
	}
	fclose(f);
	assert_int_equal(i + 1, n);

	for (i = 0; i < n; i++) {
		struct symtab_frame fr[SYMTAB_INLINE_MAX];
		int got = symtab_inline(s, offs[i], fr, SYMTAB_INLINE_MAX);

		if (got != want[i].n)
			fail_msg("offset %#llx: %d frames, addr2line says %d (%s)",
				 (unsigned long long)offs[i], got, want[i].n, want[i].func[0]);
		for (k = 0; k < (size_t)got; k++) {
			char where[600];

			assert_string_equal(fr[k].func ? fr[k].func : "??", want[i].func[k]);
			if (strchr(want[i].where[k], '?'))	/* unknown to addr2line */
				assert_true(!fr[k].file || !fr[k].line);
			else {
				snprintf(where, sizeof(where), "%s:%u",
					 fr[k].file ? fr[k].file : "??", fr[k].line);
				assert_string_equal(where, want[i].where[k]);
			}
		}
		if (got == 3 && !strcmp(fr[0].func, "step") && !strcmp(fr[1].func, "mix")) {
			deep++;
			in_a |= !strcmp(fr[2].func, "outer_a");
			in_b |= !strcmp(fr[2].func, "outer_b");
			/* max cuts the chain, innermost frames kept */
			assert_int_equal(symtab_inline(s, offs[i], fr, 1), 1);
			assert_string_equal(fr[0].func, "step");
		}
	}
	/* not vacuous: the two-deep chain was found in both callers */
	assert_true(in_a && in_b);
	free(offs);
	free(want);
	return deep;
}

static void test_inline_chain(void **state)
{
	struct error e = { "" };
	struct symtab *s;

	(void)state;
	if (skip)
		skip();
	s = symtab_open(path_of("prog"), &e);
	assert_non_null(s);
	assert_true(check_against_addr2line(s, path_of("prog"), path_of("prog")) > 0);
	symtab_close(s);
}

/* A stripped binary: the chain comes from its separate debug file. */
static void test_inline_chain_debug_file(void **state)
{
	struct symtab_frame fr[4];
	struct error e = { "" };
	struct symtab *s;

	(void)state;
	if (skip)
		skip();
	s = symtab_open(path_of("prog-stripped"), &e);
	assert_non_null(s);
	/* before: no DWARF, so no chain and no file (a symbol name at most) */
	for (uint64_t off = 0; off < 0x4000; off++) {
		int n = symtab_inline(s, off, fr, 4);

		assert_true(n <= 1);
		assert_true(!n || !fr[0].file);
	}
	assert_int_equal(symtab_use_debug(s, path_of("prog.debug"), &e), 1);
	assert_true(check_against_addr2line(s, path_of("prog-stripped"),
					    path_of("prog.debug")) > 0);
	symtab_close(s);
}

/* Not an offset of the file, or no room: no frames. */
static void test_inline_none(void **state)
{
	struct symtab_frame fr[2];
	struct error e = { "" };
	struct symtab *s;

	(void)state;
	if (skip)
		skip();
	s = symtab_open(path_of("prog"), &e);
	assert_non_null(s);
	assert_int_equal(symtab_inline(s, UINT64_MAX - 1, fr, 2), 0);
	assert_int_equal(symtab_inline(s, 0, fr, 0), 0);
	symtab_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inline_chain),
		cmocka_unit_test(test_inline_chain_debug_file),
		cmocka_unit_test(test_inline_none),
	};

	return cmocka_run_group_tests(tests, setup, scratch_teardown);
}
