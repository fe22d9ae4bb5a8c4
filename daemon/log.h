/*
 * log.h - strobed's log: one line per message on its stderr (the log file
 * once it is in the background), "strobed[PID] YYYY-MM-DD HH:MM:SS: text".
 * Only the daemon logs; lib/ returns errors instead.
 */
#ifndef STROBE_DAEMON_LOG_H
#define STROBE_DAEMON_LOG_H

void daemon_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
