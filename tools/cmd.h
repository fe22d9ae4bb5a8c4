/*
 * cmd.h - the subcommands of the strobe CLI. Each takes the arguments
 * after "strobe" (argv[0] is the subcommand name), parses them with
 * getopt_long, and returns the process exit status: 0 on success, 1 on
 * failure after printing one line "strobe CMD: problem: what to do" to
 * stderr, 2 on a usage error.
 */
#ifndef STROBE_CMD_H
#define STROBE_CMD_H

#include <stddef.h>

int cmd_start(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_sessions(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_onsets(int argc, char **argv);
int cmd_phases(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_mark(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_count(int argc, char **argv);
int cmd_push(int argc, char **argv);
int cmd_prune(int argc, char **argv);
int cmd_ui(int argc, char **argv);

/* Defaults, overridden by strobed's configuration file (its db and socket;
 * STROBE_CONFIG names another file), then by STROBE_DB and STROBE_SOCKET. */
#define STROBE_DEFAULT_DB	"/var/lib/strobe/strobe.db"
#define STROBE_DEFAULT_SOCKET	"/run/strobe/strobed.sock"
const char *cmd_default_db(void);

/* Print "strobe CMD: message" on stderr; returns 2 (usage error). */
int cmd_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* After getopt_long rejected an option: its name, for the message. */
const char *cmd_bad_option(int argc, char **argv, char *buf, size_t len);
const char *cmd_default_socket(void);

#endif
