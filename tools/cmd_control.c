/*
 * cmd_control.c - strobe start and stop: a session started in strobed,
 * and stopped.  The start options and the requests are control.c.
 */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "control.h"
#include "proto.h"
#include "socketopt.h"

static const struct option start_long[] = {
	START_LONG_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_start(int argc, char **argv)
{
	struct start_opts o;
	struct error e;
	long long id;
	char optbuf[256];
	int c, r;

	start_opts_init(&o);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:" START_SHORT_OPTIONS "h", start_long, NULL)) != -1) {
		if (c == ':')
			return cmd_usage_error("start", "option %s needs a value: see 'strobe start "
					       "--help'", cmd_bad_option(argc, argv, optbuf,
									 sizeof(optbuf)));
		if (c == '?')
			return cmd_usage_error("start", "unknown option '%s': see 'strobe start "
					       "--help'", cmd_bad_option(argc, argv, optbuf,
									 sizeof(optbuf)));
		if (c == 'h') {
			printf("usage: strobe start " START_USAGE "\n"
			       "Start a system-wide session in strobed; print its id.\n"
			       START_HELP);
			return 0;
		}
		r = start_opts_parse(&o, c, optarg, "start");
		if (r < 0)
			return 2;
		if (r == 0) {
			fprintf(stderr, "usage: strobe start " START_USAGE "\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "strobe start: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (start_opts_check(&o, "start") < 0)
		return 2;
	if (control_start(&o, &id, &e) < 0) {
		fprintf(stderr, "strobe start: %s\n", e.msg);
		return 1;
	}
	printf("%lld\n", id);
	return 0;
}

int cmd_stop(int argc, char **argv)
{
	struct proto_msg resp;
	const char *socket = cmd_default_socket();
	struct error e;
	int r = socketopt_none("stop", "usage: strobe stop [--socket PATH]\n", argc, argv,
			       &socket);

	if (r >= 0)
		return r;
	if (control_stop(socket, &resp, &e) < 0) {
		fprintf(stderr, "strobe stop: %s\n", e.msg);
		return 1;
	}
	control_print_stop(stdout, &resp);
	proto_free(&resp);
	return 0;
}
