/*
 * test_binname.c - the name a binary is shown with (lib/store/binname.c)
 * for each kind of row of table binaries, and util_path_base() (a path's
 * last component) it uses.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "binname.h"
#include "util.h"

static void test_path_base(void **state)
{
	(void)state;
	assert_string_equal(util_path_base("/usr/lib/libc.so.6"), "libc.so.6");
	assert_string_equal(util_path_base("prog"), "prog");
	assert_string_equal(util_path_base("./prog"), "prog");
	assert_string_equal(util_path_base("/a/dir/"), "/a/dir/");
	assert_string_equal(util_path_base("/"), "/");
	assert_string_equal(util_path_base(""), "");
	assert_string_equal(util_path_base("/tmp/x (deleted)"), "x (deleted)");
}

static void test_kinds(void **state)
{
	static const struct {
		const char *key, *path, *full, *base;
	} rows[] = {
		/* no binary */
		{ NULL, NULL, "[unknown]", "[unknown]" },
		/* the kernel, whatever its path */
		{ "kernel:0123abcd", "[kernel.kallsyms]", "[kernel.kallsyms]",
		  "[kernel.kallsyms]" },
		{ "kernel:unknown", "", "[kernel.kallsyms]", "[kernel.kallsyms]" },
		/* no file: the key */
		{ "[heap]", "[heap]", "[heap]", "[heap]" },
		{ "[anon]", "", "[anon]", "[anon]" },
		/* a file: its path, or its last component */
		{ "buildid:00ff", "/usr/lib/libc.so.6", "/usr/lib/libc.so.6", "libc.so.6" },
		{ "xxh3:0123456789abcdef0123456789abcdef", "/opt/app/bin/app", "/opt/app/bin/app",
		  "app" },
		/* the vDSO keyed by its image */
		{ "buildid:77", "[vdso]", "[vdso]", "[vdso]" },
		/* a file without a path: its key */
		{ "buildid:00ff", "", "buildid:00ff", "buildid:00ff" },
		{ "buildid:00ff", NULL, "buildid:00ff", "buildid:00ff" },
		/* no key: nothing names it but its path */
		{ "", "", "[unknown]", "[unknown]" },
		{ "", "/bin/sh", "/bin/sh", "sh" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const char *full = binname_of(rows[i].key, rows[i].path, 0);
		const char *base = binname_of(rows[i].key, rows[i].path, BINNAME_BASE);

		if (strcmp(full, rows[i].full) || strcmp(base, rows[i].base))
			fail_msg("row %zu (%s, %s): \"%s\" and \"%s\", not \"%s\" and \"%s\"", i,
				 rows[i].key ? rows[i].key : "NULL",
				 rows[i].path ? rows[i].path : "NULL", full, base, rows[i].full,
				 rows[i].base);
	}
}

static void test_classes(void **state)
{
	(void)state;
	assert_true(binname_is_kernel("kernel:abc"));
	assert_false(binname_is_kernel("buildid:abc"));
	assert_false(binname_is_kernel("kernel"));
	assert_true(binname_is_nofile("[heap]"));
	assert_true(binname_is_nofile(""));
	assert_false(binname_is_nofile("buildid:00"));
	assert_false(binname_is_nofile("kernel:00"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_base),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_classes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
