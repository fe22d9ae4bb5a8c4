/*
 * cmd_list.c - 'strobe list': the events this machine supports, grouped
 * by kind the way 'perf list' shows them; with --metrics the metric
 * catalogue (metrics.h) and which metrics this machine can compute.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cmd.h"
#include "events.h"
#include "metrics.h"
#include "output.h"

static const char list_usage[] =
	"usage: strobe list [-v]\n"
	"       strobe list --metrics [--format text|csv|json]\n"
	"List the events this machine supports (the names -e accepts), or the\n"
	"metrics that 'strobe report -M', 'strobe plot --metric' and 'strobe count -M'\n"
	"take by name.\n"
	"\n"
	"  -v, --verbose      also list every tracepoint and libpfm4 event\n"
	"  --metrics          list the metric catalogue instead: name, group, unit,\n"
	"                     computable (yes/no: whether this machine has every event\n"
	"                     the metric needs), expression (its scale written in; the\n"
	"                     name seconds is the length of the interval the counts\n"
	"                     cover), description and, when not computable, why not\n"
	"  --format FMT       with --metrics: text (default), csv or json\n"
	"  -h, --help         show this help\n";

enum { OPT_METRICS = 256, OPT_FORMAT };

int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "metrics", no_argument, NULL, OPT_METRICS },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum output_format fmt = OUTPUT_TEXT;
	const char *format = NULL;
	char optbuf[64];
	struct error e;
	int verbose = 0, metrics = 0, c;

	optind = 0;	/* glibc: restart scanning for this subcommand */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vh", opts, NULL)) != -1) {
		switch (c) {
		case 'v':
			verbose = 1;
			break;
		case OPT_METRICS:
			metrics = 1;
			break;
		case OPT_FORMAT:
			format = optarg;
			if (output_parse_format(optarg, &fmt))
				return cmd_usage_error("list", "unknown --format '%s': "
						       "use text, csv or json", optarg);
			break;
		case 'h':
			fputs(list_usage, stdout);
			return 0;
		case ':':
			return cmd_usage_error("list", "option %s needs a value: see 'strobe list --help'",
					       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
		default:
			return cmd_usage_error("list", "unknown option '%s': see 'strobe list --help'",
					       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
		}
	}
	if (optind < argc)
		return cmd_usage_error("list", "unexpected argument '%s': see 'strobe list --help'",
				       argv[optind]);
	if (format && !metrics)
		return cmd_usage_error("list", "--format applies to --metrics only: "
				       "add --metrics or drop --format");
	if (metrics && verbose)
		return cmd_usage_error("list", "-v applies to the event list, not to --metrics: "
				       "drop one");
	if (metrics) {
		struct table *t = metrics_table();
		int ret = table_write(t, fmt, stdout) < 0 || fflush(stdout) == EOF || ferror(stdout);

		if (ret)
			fprintf(stderr, "strobe list: writing the list: %s\n", strerror(errno));
		table_free(t);
		return ret ? 1 : 0;
	}
	if (event_list(stdout, verbose, &e)) {
		fprintf(stderr, "strobe list: %s\n", e.msg);
		return 1;
	}
	return 0;
}
