/*
 * log.h - strobed's log: one line per message on its stderr (the log file
 * once it is in the background), "strobed[PID] YYYY-MM-DD HH:MM:SS: text".
 * Only the daemon logs; lib/ returns errors instead.  Any thread may log;
 * each line is text (text_sanitize: no terminal controls).
 *
 * What others cause is bounded: the log file (daemon_log_file) becomes
 * FILE.1 past LOG_MAX_BYTES, so it takes at most twice that; lines a
 * client causes (a malformed request) go through daemon_log_ratelimit.
 */
#ifndef STROBE_DAEMON_LOG_H
#define STROBE_DAEMON_LOG_H

#define LOG_MAX_BYTES		(16L << 20)
#define LOG_LIMIT_PER_MINUTE	5

void daemon_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* stderr is the log file at path (strobed in the background): rotate it. */
void daemon_log_file(const char *path);

/*
 * Whether to log one more line of what (e.g. "malformed requests") for
 * key (a uid): at most LOG_LIMIT_PER_MINUTE a minute; what was not
 * logged is counted and said in one line when the minute is over and the
 * key is seen again.  Main thread only.
 */
int daemon_log_ratelimit(unsigned key, const char *what);

#endif
