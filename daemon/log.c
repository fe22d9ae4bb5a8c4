/*
 * log.c - strobed's log lines (see log.h).
 */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "log.h"
#include "util.h"

void daemon_log(const char *fmt, ...)
{
	va_list ap;
	char ts[32], msg[2048];
	time_t t = time(NULL);
	struct tm tm;

	/* the ingest, drain and push threads log too: localtime_r */
	strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* paths, names and server answers in it: one line a terminal shows */
	text_sanitize(msg);
	fprintf(stderr, "strobed[%d] %s: %s\n", (int)getpid(), ts, msg);
}
