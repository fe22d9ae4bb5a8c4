/*
 * shellrun.h - for unit tests that build their own test programs: run a
 * command line the test formats itself (a compiler, objcopy, strip), and
 * say which one failed.  Header-only, included once per test program.
 */
#ifndef STROBE_TEST_SHELLRUN_H
#define STROBE_TEST_SHELLRUN_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* 0 when the command exited 0, else -1 after a line on stderr. */
static int run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	r = system(cmd);
	if (r)
		fprintf(stderr, "setup failed (%d): %s\n", r, cmd);
	return r ? -1 : 0;
}

#endif
