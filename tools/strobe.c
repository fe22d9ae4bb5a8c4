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
	{ "export", cmd_export, "export samples (CSV, Chrome trace) or stacks (folded, pprof, gecko)" },
	{ "mark", cmd_mark, "drop a marker into the running session" },
	{ "sessions", cmd_sessions, "list the recorded sessions" },
	{ "rm", cmd_rm, "remove recorded sessions" },
	{ "list", cmd_list, "list the events this machine supports" },
	{ "probe", cmd_probe, "measure the caches and the data TLB by timing" },
};

const char *cmd_default_db(void)
{
	const char *s = getenv("STROBE_DB");

	return s && *s ? s : STROBE_DEFAULT_DB;
}

const char *cmd_default_socket(void)
{
	const char *s = getenv("STROBE_SOCKET");

	return s && *s ? s : STROBE_DEFAULT_SOCKET;
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
	if (optopt > 0 && optopt < 256)
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
