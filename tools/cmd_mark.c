/*
 * cmd_mark.c - strobe mark TEXT: drop a marker into the running session.
 *
 * The marker's time is this command's start (CLOCK_MONOTONIC, the clock of
 * the samples), sent with the text; strobed stores it with this process's
 * pid as a row of kind "mark" in table markers.  The words of TEXT are
 * joined by spaces, as echo does.  Quiet on success.
 */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "proto.h"

#define MARK_MAX_TEXT 256	/* strobed's SESSION_MAX_MARK_TEXT */

static const char usage_text[] =
	"usage: strobe mark [--socket PATH] TEXT...\n"
	"\n"
	"Drop a marker named TEXT into the running session, at the moment this\n"
	"command runs; 'strobe report --markers' lists the session's markers.\n";

int cmd_mark(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t now = clock_monotonic_ns();
	const char *socket = cmd_default_socket();
	struct proto_msg req, resp;
	struct error e;
	char optbuf[256], *text;
	size_t len = 0;
	int c, ret;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "+:h", lo, NULL)) != -1) {
		switch (c) {
		case 'S':
			socket = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cmd_usage_error("mark", "option %s needs a value: see 'strobe mark --help'",
					       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
		default:
			return cmd_usage_error("mark", "unknown option '%s': see 'strobe mark --help'",
					       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
		}
	}
	if (optind >= argc)
		return cmd_usage_error("mark", "no text given: strobe mark TEXT");
	for (int i = optind; i < argc; i++)
		len += strlen(argv[i]) + 1;
	text = xmalloc(len + 1);
	text[0] = 0;
	for (int i = optind; i < argc; i++) {
		if (i > optind)
			strcat(text, " ");
		strcat(text, argv[i]);
	}
	len = strlen(text);
	if (!len || strspn(text, " \t") == len) {
		free(text);
		return cmd_usage_error("mark", "empty marker text: give the text to mark");
	}
	if (len > MARK_MAX_TEXT) {
		free(text);
		return cmd_usage_error("mark", "marker text of %zu bytes is too long: at most %d",
				       len, MARK_MAX_TEXT);
	}
	for (const char *p = text; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			free(text);
			return cmd_usage_error("mark", "marker text contains a control character: "
					       "give printable text on one line");
		}
	proto_init(&req, "mark");
	proto_add(&req, "text", text);
	proto_addf(&req, "time_ns", "%llu", (unsigned long long)now);
	free(text);
	ret = proto_call(socket, &req, &resp, &e);
	proto_free(&req);
	if (ret < 0) {
		fprintf(stderr, "strobe mark: %s\n", e.msg);
		return 1;
	}
	proto_free(&resp);
	return 0;
}
