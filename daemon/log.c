/*
 * log.c - strobed's log lines (see log.h).
 */
#include "config.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "log.h"
#include "util.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char *log_file;		/* daemon_log_file(): rotated past LOG_MAX_BYTES */

/* Rate limits (daemon_log_ratelimit), by key: a uid. */
#define LIMIT_SLOTS	16
static struct {
	unsigned key;
	time_t window;		/* start of the current minute; 0: slot free */
	unsigned logged, dropped;
} limits[LIMIT_SLOTS];

void daemon_log_file(const char *path)
{
	free(log_file);
	log_file = path ? xstrdup(path) : NULL;
}

/* Past LOG_MAX_BYTES, the log becomes PATH.1 (the older one dropped) and
 * a new PATH takes stderr; with log_lock held. */
static void rotate(void)
{
	struct stat st;
	char *old;
	int fd;

	if (!log_file || fstat(2, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < LOG_MAX_BYTES)
		return;
	old = xasprintf("%s.1", log_file);
	if (rename(log_file, old) == 0) {
		fd = open(log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW |
			  O_NONBLOCK, 0640);
		if (fd >= 0) {
			dup2(fd, 2);
			close(fd);
		}
	}
	free(old);
}

static void log_line(const char *msg)
{
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;

	/* the ingest, drain and push threads log too: localtime_r */
	strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
	pthread_mutex_lock(&log_lock);
	fprintf(stderr, "strobed[%d] %s: %s\n", (int)getpid(), ts, msg);
	rotate();
	pthread_mutex_unlock(&log_lock);
}

void daemon_log(const char *fmt, ...)
{
	va_list ap;
	char msg[2048];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* paths, names and server answers in it: one line a terminal shows */
	text_sanitize(msg);
	log_line(msg);
}

int daemon_log_ratelimit(unsigned key, const char *what)
{
	time_t now = time(NULL), minute = now - now % 60;
	int i, free_slot = -1, oldest = 0;

	for (i = 0; i < LIMIT_SLOTS; i++) {
		if (limits[i].window && limits[i].key == key)
			break;
		if (!limits[i].window && free_slot < 0)
			free_slot = i;
		if (limits[i].window < limits[oldest].window)
			oldest = i;
	}
	if (i == LIMIT_SLOTS) {
		i = free_slot >= 0 ? free_slot : oldest;
		if (limits[i].window && limits[i].dropped)
			daemon_log("uid %u: %u more %s not logged", limits[i].key,
				   limits[i].dropped, what);
		limits[i].key = key;
		limits[i].window = minute;
		limits[i].logged = limits[i].dropped = 0;
	}
	if (limits[i].window != minute) {
		if (limits[i].dropped)
			daemon_log("uid %u: %u more %s not logged in the minute from %lld",
				   key, limits[i].dropped, what, (long long)limits[i].window);
		limits[i].window = minute;
		limits[i].logged = limits[i].dropped = 0;
	}
	if (limits[i].logged < LOG_LIMIT_PER_MINUTE) {
		limits[i].logged++;
		return 1;
	}
	limits[i].dropped++;
	return 0;
}
