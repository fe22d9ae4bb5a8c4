/*
 * cmd_list.c - 'strobe list': the events this machine supports, grouped
 * by kind the way 'perf list' shows them.
 */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include "cmd.h"
#include "events.h"

static const char list_usage[] =
	"usage: strobe list [-v]\n"
	"List the events this machine supports (the names -e accepts).\n"
	"\n"
	"  -v, --verbose   also list every tracepoint and libpfm4 event\n"
	"  -h, --help      show this help\n";

int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct error e;
	int verbose = 0, c;

	optind = 0;	/* glibc: restart scanning for this subcommand */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'v':
			verbose = 1;
			break;
		case 'h':
			fputs(list_usage, stdout);
			return 0;
		default:
			fprintf(stderr, "strobe list: unknown option '%s'\n%s",
				argv[optind - 1], list_usage);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "strobe list: unexpected argument '%s'\n%s",
			argv[optind], list_usage);
		return 2;
	}
	if (event_list(stdout, verbose, &e)) {
		fprintf(stderr, "strobe list: %s\n", e.msg);
		return 1;
	}
	return 0;
}
