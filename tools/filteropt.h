/*
 * filteropt.h - the options that select a session and its samples, as
 * 'strobe report' spells them (--session, --pid, --comm, --cgroup,
 * --binary, --kernel, --user, --from, --to, --no-demangle), shared by the
 * commands that take them all (report, flamegraph) into a report_opts.
 */
#ifndef STROBE_FILTEROPT_H
#define STROBE_FILTEROPT_H

#include <getopt.h>
#include "report.h"

enum {
	FOPT_SESSION = 1000, FOPT_PID, FOPT_COMM, FOPT_CGROUP, FOPT_BINARY, FOPT_KERNEL,
	FOPT_USER, FOPT_FROM, FOPT_TO, FOPT_NO_DEMANGLE,
};

/* The entries of a getopt_long table, to put in a command's own. */
#define FILTEROPT_LONG_OPTS \
	{ "session",	required_argument, NULL, FOPT_SESSION }, \
	{ "pid",	required_argument, NULL, FOPT_PID }, \
	{ "comm",	required_argument, NULL, FOPT_COMM }, \
	{ "binary",	required_argument, NULL, FOPT_BINARY }, \
	{ "kernel",	no_argument,	   NULL, FOPT_KERNEL }, \
	{ "user",	no_argument,	   NULL, FOPT_USER }, \
	{ "from",	required_argument, NULL, FOPT_FROM }, \
	{ "to",		required_argument, NULL, FOPT_TO }, \
	{ "no-demangle", no_argument,	   NULL, FOPT_NO_DEMANGLE }, \
	{ "cgroup",	required_argument, NULL, FOPT_CGROUP }

/*
 * Take option c (its value arg, as spelled on the command line: spelled)
 * into o: 1 when c is one of these options and its value is good, 0 when
 * c is not one of them, 2 after printing a usage error for cmd.
 */
int filteropt_parse(const char *cmd, int c, const char *arg, const char *spelled,
		    struct report_opts *o);
/* After the options: 0, or 2 after a usage error (--from after --to). */
int filteropt_check(const char *cmd, const struct report_opts *o);

#endif
