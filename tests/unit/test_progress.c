/*
 * test_progress.c - the progress meter (progress.h): the line it draws for
 * done/total/elapsed/width, the parts left out when the terminal is
 * narrow, and that it draws nothing on a file or when turned off, and
 * nothing before its delay.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "progress.h"

static void test_full_line(void **state)
{
	char buf[256];
	size_t n = progress_format(buf, sizeof(buf), "strobe export", 1200000, 2800000,
				   "samples", 2100000000ULL, 200);

	/* 2.1 s for 1.2 M: 1.6 M more at that rate take 2.8 s */
	assert_string_equal(buf, "strobe export: 42% 1.2 M of 2.8 M samples, 2.1 s, 0:03 left");
	assert_int_equal(n, strlen(buf));
}

static void test_numbers(void **state)
{
	char buf[256];

	progress_format(buf, sizeof(buf), "x", 999, 1000, "rows", 0, 0);
	assert_string_equal(buf, "x: 99% 999 of 1.0 k rows, 0.0 s, 0:00 left");
	progress_format(buf, sizeof(buf), "x", 123456789, 987654321000ULL, "rows", 60e9, 0);
	/* 60 s for 0.0125%: 479940 s left */
	assert_string_equal(buf, "x: 0% 123 M of 988 G rows, 60.0 s, 133:19:00 left");
	progress_format(buf, sizeof(buf), "x", 5, 0, "rows", 1500000000ULL, 0);
	assert_string_equal(buf, "x: 5 rows, 1.5 s");	/* total unknown */
}

static void test_done_and_over(void **state)
{
	char buf[256];

	progress_format(buf, sizeof(buf), "x", 3000, 3000, "samples", 1e9, 0);
	assert_string_equal(buf, "x: 100% 3.0 k of 3.0 k samples, 1.0 s");
	/* more than the total (a planned total too small): 100%, not more */
	progress_format(buf, sizeof(buf), "x", 4000, 3000, "samples", 1e9, 0);
	assert_string_equal(buf, "x: 100% 3.0 k of 3.0 k samples, 1.0 s");
	/* nothing done yet: no estimate */
	progress_format(buf, sizeof(buf), "x", 0, 3000, "samples", 1e9, 0);
	assert_string_equal(buf, "x: 0% 0 of 3.0 k samples, 1.0 s");
}

static void test_narrow(void **state)
{
	char buf[256];
	const char *full = "strobe export: 42% 1.2 M of 2.8 M samples, 2.1 s, 0:03 left";
	int w;

	/* every width: at most width - 1 characters, whole parts dropped
	 * from the end first, then clipped */
	for (w = 2; w < 80; w++) {
		size_t n = progress_format(buf, sizeof(buf), "strobe export", 1200000, 2800000,
					   "samples", 2100000000ULL, w);

		assert_true(n <= (size_t)w - 1);
		assert_int_equal(n, strlen(buf));
		assert_memory_equal(buf, full, n);
		if (w - 1 >= (int)strlen(full))
			assert_string_equal(buf, full);
		else if (w - 1 >= (int)strlen("strobe export: 42% 1.2 M of 2.8 M samples, 2.1 s"))
			assert_string_equal(buf, "strobe export: 42% 1.2 M of 2.8 M samples, 2.1 s");
		else if (w - 1 >= (int)strlen("strobe export: 42% 1.2 M of 2.8 M samples"))
			assert_string_equal(buf, "strobe export: 42% 1.2 M of 2.8 M samples");
	}
	/* a small buffer: clipped to it */
	assert_int_equal(progress_format(buf, 10, "strobe export", 1, 2, "s", 0, 0), 9);
	assert_string_equal(buf, "strobe ex");
}

/* Drive a meter on fd and return what it wrote. */
static size_t drive(int fd, const char *env_on, const char *delay, char *out, size_t size)
{
	struct progress p;
	char path[] = "/tmp/test_progress.XXXXXX";
	int tmp = mkstemp(path);
	ssize_t n;

	assert_true(tmp >= 0);
	unlink(path);
	if (env_on)
		setenv("STROBE_PROGRESS", env_on, 1);
	else
		unsetenv("STROBE_PROGRESS");
	setenv("STROBE_PROGRESS_DELAY_MS", delay, 1);
	progress_init(&p, "t", fd < 0 ? tmp : fd, 1000, "rows");
	if (fd < 0)
		assert_false(p.on);	/* a file is not a terminal */
	else
		p.fd = tmp, p.on = !env_on || strcmp(env_on, "0");	/* as if a terminal */
	for (int i = 1; i <= 1000; i++)
		progress_update(&p, (uint64_t)i);
	progress_done(&p);
	n = pread(tmp, out, size - 1, 0);
	assert_true(n >= 0);
	out[n] = 0;
	close(tmp);
	unsetenv("STROBE_PROGRESS");
	unsetenv("STROBE_PROGRESS_DELAY_MS");
	return (size_t)n;
}

static void test_draw(void **state)
{
	char out[4096];

	/* not a terminal: nothing */
	assert_int_equal(drive(-1, NULL, "0", out, sizeof(out)), 0);
	/* "a terminal", no delay: one line at once, then the erase */
	assert_true(drive(1, NULL, "0", out, sizeof(out)) > 0);
	assert_memory_equal(out, "\rt: 0% 1 of 1.0 k rows", strlen("\rt: 0% 1 of 1.0 k rows"));
	assert_non_null(strstr(out, "\033[K"));
	assert_string_equal(out + strlen(out) - 4, "\r\033[K");
	/* turned off: nothing */
	assert_int_equal(drive(1, "0", "0", out, sizeof(out)), 0);
	/* done before the delay: nothing */
	assert_int_equal(drive(1, NULL, "60000", out, sizeof(out)), 0);
}

static void test_null(void **state)
{
	/* libraries take an optional meter */
	progress_update(NULL, 1);
	progress_add(NULL, 1);
	progress_phase(NULL, 1, "x");
	progress_total(NULL, 1);
	progress_done(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_line),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_done_and_over),
		cmocka_unit_test(test_narrow),
		cmocka_unit_test(test_draw),
		cmocka_unit_test(test_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
