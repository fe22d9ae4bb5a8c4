/*
 * socketopt.c - the command line and the request of the commands that
 * only talk to strobed, 'strobe mark', 'strobe rm' and 'strobe stop'
 * (socketopt.h).
 */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cmd.h"
#include "socketopt.h"

/* the options, by getopt_long() with optstring: "+:h" stops at the first
 * operand, ":h" takes options after operands too */
static int parse(const char *cmd, const char *usage, const char *optstring, int argc,
		 char **argv, const char **socket)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char optbuf[256];
	int c;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, optstring, lo, NULL)) != -1) {
		switch (c) {
		case 'S':
			*socket = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case ':':
			return cmd_usage_error(cmd, "option %s needs a value: see 'strobe %s --help'",
					       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)),
					       cmd);
		default:
			return cmd_usage_error(cmd, "unknown option '%s': see 'strobe %s --help'",
					       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)),
					       cmd);
		}
	}
	return -1;
}

int socketopt_parse(const char *cmd, const char *usage, int argc, char **argv,
		    const char **socket)
{
	return parse(cmd, usage, "+:h", argc, argv, socket);
}

int socketopt_none(const char *cmd, const char *usage, int argc, char **argv,
		   const char **socket)
{
	int ret = parse(cmd, usage, ":h", argc, argv, socket);

	if (ret >= 0)
		return ret;
	if (optind < argc)
		return cmd_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	return -1;
}

int socketopt_call(const char *cmd, const char *socket, const char *unreachable,
		   struct proto_msg *req, struct proto_msg *resp)
{
	struct error e;
	int ret = proto_call(socket, req, resp, &e);

	proto_free(req);
	if (ret >= 0)
		return 0;
	if (unreachable && strstr(e.msg, "cannot reach strobed"))
		fprintf(stderr, "strobe %s: no strobed answers on %s: %s\n", cmd, socket,
			unreachable);
	else
		fprintf(stderr, "strobe %s: %s\n", cmd, e.msg);
	return 1;
}
