/*
 * strobe.c - the strobe command: dispatch to the subcommands of cmd.h.
 */
#include "config.h"
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "conffile.h"

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} cmds[] = {
	{ "start", cmd_start, "start a system-wide session in strobed" },
	{ "stop", cmd_stop, "stop the running session" },
	{ "status", cmd_status, "show the running session" },
	{ "count", cmd_count, "count events while a command runs (like perf stat)" },
	{ "record", cmd_record, "profile the whole system while a command runs" },
	{ "report", cmd_report, "hot spots by binary, symbol or source line" },
	{ "diff", cmd_diff, "compare the hot spots of two sessions" },
	{ "flamegraph", cmd_flamegraph, "call stacks as an interactive SVG flame graph" },
	{ "plot", cmd_plot, "plot events or metrics over time (gnuplot)" },
	{ "onsets", cmd_onsets, "find when an event's rate or a metric changed level" },
	{ "phases", cmd_phases, "cut a session at its onsets: each phase's hot spots and growth" },
	{ "ui", cmd_ui, "explore a session in the browser: timeline, hot spots, flame graph, diff" },
	{ "export", cmd_export, "export samples (CSV, Chrome trace) or stacks (folded, pprof, gecko)" },
	{ "mark", cmd_mark, "drop a marker into the running session" },
	{ "sessions", cmd_sessions, "list the recorded sessions" },
	{ "rm", cmd_rm, "remove recorded sessions" },
	{ "push", cmd_push, "ship sessions to ClickHouse for fleet-wide reports" },
	{ "prune", cmd_prune, "drop the fleet's sessions older than an age from ClickHouse" },
	{ "list", cmd_list, "list the events this machine supports" },
	{ "probe", cmd_probe, "measure the caches and the data TLB by timing" },
};

#ifndef STROBE_CONFIG_PATH
#define STROBE_CONFIG_PATH "/etc/strobe/strobed.conf"
#endif

/* strobed's configuration file, read once: its db and socket (the other
 * keys are strobed's to check). */
static struct {
	int read;
	char *db, *socket;
} conf;

static int conf_key(void *arg, const char *key, const char *value, struct error *e)
{
	if (!strcmp(key, "db"))
		conf.db = xstrdup(value);
	else if (!strcmp(key, "socket"))
		conf.socket = xstrdup(value);
	return 0;
}

/*
 * The file STROBE_CONFIG names, else strobed's default one if it exists.
 * A file that cannot be read or holds a malformed line ends the command
 * (exit 2): its defaults would be wrong.
 */
static void conf_load(void)
{
	const char *path = getenv("STROBE_CONFIG");
	int explicit = path && *path;
	struct error e;

	if (conf.read)
		return;
	conf.read = 1;
	if (conffile_read(explicit ? path : STROBE_CONFIG_PATH,
			  explicit ? 0 : CONFFILE_MISSING_OK, conf_key, NULL, &e) < 0) {
		fprintf(stderr, "strobe: %s%s\n", e.msg, explicit ? " (the file STROBE_CONFIG "
			"names: fix it or unset STROBE_CONFIG)" : "");
		exit(2);
	}
}

/* Precedence: the command's option (the caller), STROBE_DB or
 * STROBE_SOCKET, strobed's configuration file, the built-in default. */
const char *cmd_default_db(void)
{
	const char *s = getenv("STROBE_DB");

	if (s && *s)
		return s;
	conf_load();
	return conf.db ? conf.db : STROBE_DEFAULT_DB;
}

const char *cmd_default_socket(void)
{
	const char *s = getenv("STROBE_SOCKET");

	if (s && *s)
		return s;
	conf_load();
	return conf.socket ? conf.socket : STROBE_DEFAULT_SOCKET;
}

int cmd_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "strobe %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

const char *cmd_bad_option(int argc, char **argv, char *buf, size_t len)
{
	/* a long option as given: getopt's optopt is its short name ('S'
	 * for --socket), which the user did not type */
	if (optind > 0 && optind <= argc && !strncmp(argv[optind - 1], "--", 2))
		snprintf(buf, len, "%.*s", (int)strcspn(argv[optind - 1], "="), argv[optind - 1]);
	else if (optopt > 0 && optopt < 256)
		snprintf(buf, len, "-%c", optopt);
	else if (optind > 0 && optind <= argc)
		snprintf(buf, len, "%s", argv[optind - 1]);
	else
		snprintf(buf, len, "?");
	return buf;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: strobe COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\n'strobe COMMAND --help' describes each command.\n");
	fprintf(f, "'strobe --version' prints the version.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("strobe %s\n", PACKAGE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "strobe: unknown command '%s': run 'strobe --help'\n", argv[1]);
	return 2;
}
