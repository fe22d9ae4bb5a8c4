/*
 * log.c - strobed's log lines (see log.h).
 */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "log.h"

void daemon_log(const char *fmt, ...)
{
	va_list ap;
	char ts[32];
	time_t t = time(NULL);

	strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", localtime(&t));
	fprintf(stderr, "strobed[%d] %s: ", (int)getpid(), ts);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
