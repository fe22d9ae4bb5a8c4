/*
 * test_conffile.c - strobed's configuration file syntax (conffile.h):
 * comments, blank lines and blanks around keys and values; every kind of
 * bad line refused with its line number; overlong lines; duplicate keys
 * (an error naming the first line); the callback's refusal prefixed with
 * FILE:LINE.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "conffile.h"

struct got {
	int n;
	char keys[8][32];
	char values[8][128];
	const char *refuse;	/* a key the callback refuses */
};

static int collect(void *arg, const char *key, const char *value, struct error *e)
{
	struct got *g = arg;

	if (g->refuse && !strcmp(key, g->refuse))
		return error_set(e, "bad --%s '%s'", key, value);
	assert_true(g->n < 8);
	snprintf(g->keys[g->n], sizeof(g->keys[0]), "%s", key);
	snprintf(g->values[g->n], sizeof(g->values[0]), "%s", value);
	g->n++;
	return 0;
}

static int parse(const char *text, struct got *g, struct error *e)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	assert_non_null(f);
	ret = conffile_parse(f, "t.conf", collect, g, e);
	fclose(f);
	return ret;
}

static void test_good(void **state)
{
	struct got g = { 0 };
	struct error e;

	assert_int_equal(parse("# a comment\n"
			       "\n"
			       "   \t\n"
			       "  # indented comment = not a key\n"
			       "db = /var/lib/strobe/strobe.db\n"
			       "\tsocket=/run/x.sock  \r\n"
			       "max-size\t=\t2G\n"
			       "keep = 30 # days\n"
			       "backend = perf", &g, &e), 0);
	assert_int_equal(g.n, 5);
	assert_string_equal(g.keys[0], "db");
	assert_string_equal(g.values[0], "/var/lib/strobe/strobe.db");
	assert_string_equal(g.keys[1], "socket");
	assert_string_equal(g.values[1], "/run/x.sock");
	assert_string_equal(g.keys[2], "max-size");
	assert_string_equal(g.values[2], "2G");
	/* a '#' after a value is part of it (the caller refuses "30 # days") */
	assert_string_equal(g.values[3], "30 # days");
	/* the last line without a newline counts */
	assert_string_equal(g.keys[4], "backend");
	assert_string_equal(g.values[4], "perf");
}

static void test_empty(void **state)
{
	struct got g = { 0 };
	struct error e;

	assert_int_equal(parse("", &g, &e), 0);
	assert_int_equal(parse("\n\n# only comments\n", &g, &e), 0);
	assert_int_equal(g.n, 0);
}

/* text is refused, e naming t.conf:line and matching what */
static void refused(const char *text, unsigned line, const char *what)
{
	struct got g = { 0 };
	struct error e;
	char pre[32];

	memset(e.msg, 0, sizeof(e.msg));
	assert_int_equal(parse(text, &g, &e), -1);
	snprintf(pre, sizeof(pre), "t.conf:%u: ", line);
	if (strncmp(e.msg, pre, strlen(pre)) || !strstr(e.msg, what))
		fail_msg("'%s': got '%s', want '%s...%s'", text, e.msg, pre, what);
}

static void test_bad_lines(void **state)
{
	refused("db /x\n", 1, "expected '=' after 'db'");
	refused("# c\n\nDB = /x\n", 3, "expected 'key = value'");
	refused("= /x\n", 1, "expected 'key = value'");
	refused("db =\n", 1, "no value for 'db'");
	refused("db =   \t\n", 1, "no value for 'db'");
	refused("keep = 1\nmax_size = 2G\n", 2, "expected '=' after 'max'");
	refused("db = /a\x01b\n", 1, "control character");
	refused("[section]\n", 1, "expected 'key = value'");
}

static void test_nul(void **state)
{
	static const char text[] = "db = /x\0y\n";
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");
	struct got g = { 0 };
	struct error e;

	assert_int_equal(conffile_parse(f, "t.conf", collect, &g, &e), -1);
	assert_non_null(strstr(e.msg, "t.conf:1: a NUL byte"));
	fclose(f);
}

static void test_duplicate(void **state)
{
	refused("db = /a\n# x\nsocket = /s\ndb = /b\n", 4, "'db' is set twice (first on line 1)");
}

static void test_callback_refusal(void **state)
{
	struct got g = { .refuse = "keep" };
	struct error e;

	assert_int_equal(parse("db = /a\n\nkeep = soon\nsocket = /s\n", &g, &e), -1);
	assert_string_equal(e.msg, "t.conf:3: bad --keep 'soon'");
	assert_int_equal(g.n, 1);	/* stops at the first bad line */
}

static void test_long_line(void **state)
{
	size_t max = CONFFILE_LINE_MAX - 1;	/* characters, without the newline */
	char *text = malloc(max + 64);
	struct got g = { 0 };
	struct error e;
	size_t n;

	/* exactly the limit: accepted */
	n = (size_t)sprintf(text, "# ok\ndb = ");
	memset(text + n, 'a', max - 5);
	strcpy(text + n + max - 5, "\n");
	assert_int_equal(parse(text, &g, &e), 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(strlen(g.values[0]), sizeof(g.values[0]) - 1);	/* truncated copy */
	/* one more: refused, on its line */
	n = (size_t)sprintf(text, "# ok\ndb = ");
	memset(text + n, 'a', max - 4);
	strcpy(text + n + max - 4, "\n");
	refused(text, 2, "line too long (the limit is 4095 characters)");
	/* a long comment is no exception */
	text[0] = '#';
	memset(text + 1, 'c', max + 10);
	strcpy(text + max + 11, "\n");
	refused(text, 1, "line too long");
	free(text);
}

static void test_files(void **state)
{
	char dir[] = "/tmp/test_conffile.XXXXXX", path[64];
	struct got g = { 0 };
	struct error e;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/strobed.conf", dir);
	/* missing: an error unless CONFFILE_MISSING_OK */
	assert_int_equal(conffile_read(path, 0, collect, &g, &e), -1);
	assert_non_null(strstr(e.msg, path));
	assert_non_null(strstr(e.msg, "No such file"));
	assert_int_equal(conffile_read(path, CONFFILE_MISSING_OK, collect, &g, &e), 1);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("socket = /s\n", f);
	fclose(f);
	chmod(path, 0644);
	assert_int_equal(conffile_read(path, CONFFILE_STRICT, collect, &g, &e), 0);
	assert_int_equal(g.n, 1);
	/* writable by the group: refused when strict */
	chmod(path, 0664);
	assert_int_equal(conffile_read(path, CONFFILE_STRICT, collect, &g, &e), -1);
	assert_non_null(strstr(e.msg, "mode 0664"));
	assert_int_equal(conffile_read(path, 0, collect, &g, &e), 0);
	/* a directory is not a configuration file */
	assert_int_equal(conffile_read(dir, 0, collect, &g, &e), -1);
	assert_non_null(strstr(e.msg, "not a regular file"));
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_nul),
		cmocka_unit_test(test_duplicate),
		cmocka_unit_test(test_callback_refusal),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
