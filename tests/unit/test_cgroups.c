/*
 * test_cgroups.c - the pure parts of cgroups: --cgroup matching
 * (lib/query/cgset.c: exact paths, subtrees ending in '/', never the
 * unknown), the cgroup v2 line of /proc/PID/cgroup (lib/ingest/cgroups.c:
 * v1 lines skipped, missing, empty, too long or NUL-bearing paths
 * refused), and the walk of the cgroup2 mount: refused elsewhere, and
 * where one is mounted its root "/" first with the id of its directory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include <sys/stat.h>
#include "cgroups.h"
#include "cgset.h"

static void test_match(void **state)
{
	(void)state;
	assert_true(cgset_match("/a", "/a"));
	assert_false(cgset_match("/a", "/a/b"));
	assert_false(cgset_match("/a", "/ab"));
	assert_false(cgset_match("/a/b", "/a"));
	/* subtree: the cgroup itself and below, not a sibling sharing a prefix */
	assert_true(cgset_match("/a/", "/a"));
	assert_true(cgset_match("/a/", "/a/b"));
	assert_true(cgset_match("/a/", "/a/b/c"));
	assert_false(cgset_match("/a/", "/ab"));
	assert_false(cgset_match("/a/", "/"));
	assert_true(cgset_match("/", "/"));
	assert_true(cgset_match("/", "/x/y"));
	assert_false(cgset_match("/", CGSET_UNKNOWN));
	assert_false(cgset_match("/", "[cgroup 12]"));
	assert_false(cgset_match("/", NULL));
	assert_int_equal(cgset_check_filter("/a"), 0);
	assert_int_equal(cgset_check_filter("a"), -1);
	assert_int_equal(cgset_check_filter(""), -1);
}

static void test_parse_proc(void **state)
{
	static const char hybrid[] = "9:name=systemd:/\n4:memory:/m/x\n0::/user.slice/a b\n";
	char out[64], small[8];

	(void)state;
	assert_int_equal(cgroups_parse_proc(hybrid, strlen(hybrid), out, sizeof(out)), 0);
	assert_string_equal(out, "/user.slice/a b");
	assert_int_equal(cgroups_parse_proc("0::/\n", 5, out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	/* the last line without its newline */
	assert_int_equal(cgroups_parse_proc("1:cpu:/\n0::/z", 13, out, sizeof(out)), 0);
	assert_string_equal(out, "/z");
	/* none, empty, not absolute, too long, a NUL inside */
	assert_int_equal(cgroups_parse_proc("4:memory:/m\n", 12, out, sizeof(out)), -1);
	assert_int_equal(cgroups_parse_proc("0::\n", 4, out, sizeof(out)), -1);
	assert_int_equal(cgroups_parse_proc("0::x\n", 5, out, sizeof(out)), -1);
	assert_int_equal(cgroups_parse_proc("0::/12345678\n", 13, small, sizeof(small)), -1);
	assert_int_equal(cgroups_parse_proc("0::/a\0b\n", 8, out, sizeof(out)), -1);
	assert_int_equal(cgroups_parse_proc("", 0, out, sizeof(out)), -1);
}

struct seen {
	int n;
	uint64_t first_id;
	char first[64];
};

static int count(void *ctx, uint64_t id, const char *path)
{
	struct seen *s = ctx;

	if (!s->n++) {
		s->first_id = id;
		snprintf(s->first, sizeof(s->first), "%s", path);
	}
	assert_true(path[0] == '/');
	return 0;
}

static void test_scan(void **state)
{
	struct seen s = { 0 };
	uint64_t over = 0;
	struct error e;
	char root[256];
	struct stat st;

	(void)state;
	assert_int_equal(cgroups_scan("/proc", 100, count, &s, &over, &e), -1);
	assert_non_null(strstr(e.msg, "not a cgroup v2 mount"));
	assert_int_equal(s.n, 0);
	if (cgroups_find_root(root, sizeof(root)) < 0) {
		print_message("no cgroup2 mount here: the walk itself is not tested\n");
		return;
	}
	assert_true(cgroups_scan(root, 100, count, &s, &over, &e) >= 1);
	assert_string_equal(s.first, "/");
	assert_int_equal(stat(root, &st), 0);
	assert_true(s.first_id == (uint64_t)st.st_ino);
	assert_true(cgroups_id(root, "/") == (uint64_t)st.st_ino);
	assert_true(cgroups_id(root, "/no such cgroup here") == 0);
	/* at most max, the rest counted */
	memset(&s, 0, sizeof(s));
	over = 0;
	assert_int_equal(cgroups_scan(root, 1, count, &s, &over, &e), 1);
	assert_int_equal(s.n, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_parse_proc),
		cmocka_unit_test(test_scan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
