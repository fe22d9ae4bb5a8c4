/*
 * filteropt.h - the one option table of the filters that select a session
 * and its samples, as 'strobe report' spells them (--session, --pid,
 * --comm, --cgroup, --binary, --kernel, --user, --from, --to,
 * --no-demangle, and the metric condition --where, --invert,
 * --where-sample, --where-bucket), parsed into a report_opts (the filters' one record) for
 * every command that filters: report, diff, flamegraph take them all;
 * plot and export the ones that apply to them (their getopt tables list
 * those entries) and copy the result into their own options
 * (filteropt_timeline() for plot).
 */
#ifndef STROBE_FILTEROPT_H
#define STROBE_FILTEROPT_H

#include <getopt.h>
#include "report.h"
#include "timeline.h"

enum {
	FOPT_SESSION = 1000, FOPT_PID, FOPT_COMM, FOPT_CGROUP, FOPT_BINARY, FOPT_KERNEL,
	FOPT_USER, FOPT_FROM, FOPT_TO, FOPT_NO_DEMANGLE, FOPT_SYMBOL,
	FOPT_WHERE, FOPT_WHERE_SAMPLE, FOPT_INVERT, FOPT_WHERE_BUCKET,
};

/* The entries of a getopt_long table, to put in a command's own: one
 * each, or all of them. */
#define FILTEROPT_LONG_SESSION	{ "session",	required_argument, NULL, FOPT_SESSION }
#define FILTEROPT_LONG_PID	{ "pid",	required_argument, NULL, FOPT_PID }
#define FILTEROPT_LONG_COMM	{ "comm",	required_argument, NULL, FOPT_COMM }
#define FILTEROPT_LONG_BINARY	{ "binary",	required_argument, NULL, FOPT_BINARY }
#define FILTEROPT_LONG_KERNEL	{ "kernel",	no_argument,	   NULL, FOPT_KERNEL }
#define FILTEROPT_LONG_USER	{ "user",	no_argument,	   NULL, FOPT_USER }
#define FILTEROPT_LONG_FROM	{ "from",	required_argument, NULL, FOPT_FROM }
#define FILTEROPT_LONG_TO	{ "to",		required_argument, NULL, FOPT_TO }
#define FILTEROPT_LONG_NO_DEMANGLE { "no-demangle", no_argument,  NULL, FOPT_NO_DEMANGLE }
#define FILTEROPT_LONG_CGROUP	{ "cgroup",	required_argument, NULL, FOPT_CGROUP }
/* --symbol: the rows of one symbol of a hot-spot table (report only: not
 * in FILTEROPT_LONG_OPTS, as it selects rows, not samples) */
#define FILTEROPT_LONG_SYMBOL	{ "symbol",	required_argument, NULL, FOPT_SYMBOL }
/* the metric condition (where.h): --where EXPR OP NUMBER, and how it
 * applies: --invert, --where-sample, --where-bucket T */
#define FILTEROPT_LONG_WHERE \
	{ "where",	required_argument, NULL, FOPT_WHERE }, \
	{ "where-sample", no_argument,	   NULL, FOPT_WHERE_SAMPLE }, \
	{ "invert",	no_argument,	   NULL, FOPT_INVERT }, \
	{ "where-bucket", required_argument, NULL, FOPT_WHERE_BUCKET }
#define FILTEROPT_LONG_OPTS \
	FILTEROPT_LONG_SESSION, FILTEROPT_LONG_PID, FILTEROPT_LONG_COMM, \
	FILTEROPT_LONG_BINARY, FILTEROPT_LONG_KERNEL, FILTEROPT_LONG_USER, \
	FILTEROPT_LONG_FROM, FILTEROPT_LONG_TO, FILTEROPT_LONG_NO_DEMANGLE, \
	FILTEROPT_LONG_CGROUP, FILTEROPT_LONG_WHERE

/* The --help paragraph of the metric condition, for every command that
 * takes it. */
#define FILTEROPT_WHERE_HELP \
	"--where 'EXPR OP X' keeps the samples of the time buckets where the metric\n" \
	"EXPR (as plot --metric takes it: a metric of 'strobe list --metrics', or an\n" \
	"expression of the session's events, samples and seconds) compares so to the\n" \
	"number X (OP: > >= < <=), evaluated over the range and the other filters\n" \
	"in buckets of --where-bucket T (ms, or with a unit; default: as 'strobe\n" \
	"onsets' chooses).  --invert keeps the buckets where it is false instead;\n" \
	"buckets where it is undefined (a division by zero) are kept by neither.\n" \
	"--where-sample evaluates it on each sample's own counter increases\n" \
	"instead (samples: 1; no seconds).  A note says how much was kept.\n"

/* How a command takes the filters: its name for messages, and what
 * --pid takes. */
struct filteropt {
	const char *cmd;		/* "report": "strobe report: bad ..." */
	const char *pid_at;		/* PID or PID@START, START as the message
					 * says the user sees it (FILTEROPT_AT_*);
					 * NULL: a process id only, at most
					 * UINT32_MAX */
};
#define FILTEROPT_AT_REPORT	"the report's process column shows it"
#define FILTEROPT_AT_PLOT	"'plot --by pid' labels it"

/*
 * Take option c (its value arg, as spelled on the command line: spelled)
 * into o: 1 when c is one of these options and its value is good, 0 when
 * c is not one of them, 2 after printing a usage error for f->cmd.
 */
int filteropt_parse(const struct filteropt *f, int c, const char *arg, const char *spelled,
		    struct report_opts *o);
/* After the options: 0, or 2 after a usage error (--from after --to;
 * --invert, --where-sample or --where-bucket without --where;
 * --where-bucket with --where-sample). */
int filteropt_check(const char *cmd, const struct report_opts *o);
/* Only the metric condition's part of filteropt_check() (for the
 * commands that check the range with filteropt_check_nonempty()). */
int filteropt_check_where(const char *cmd, const struct report_opts *o);
/* What the options allocated in o (o->where), freed; o->where NULL. */
void filteropt_free(struct report_opts *o);
/* The same for commands whose range may not be empty (plot, export):
 * 0, or 1 after printing "strobe CMD: empty time range: ..." (the
 * command's exit status is its own). */
int filteropt_check_nonempty(const char *cmd, const struct report_opts *o);

/* o's filters (session, pid, comm, binary, cgroup, range, no_demangle)
 * into a timeline's options (plot). */
void filteropt_timeline(const struct report_opts *o, struct timeline_opts *to);

#endif
