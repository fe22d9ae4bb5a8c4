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
#include "socketopt.h"

#define MARK_MAX_TEXT 256	/* strobed's SESSION_MAX_MARK_TEXT */

static const char usage_text[] =
	"usage: strobe mark [--socket PATH] TEXT...\n"
	"\n"
	"Drop a marker named TEXT into the running session, at the moment this\n"
	"command runs; 'strobe report --markers' lists the session's markers.\n";

int cmd_mark(int argc, char **argv)
{
	uint64_t now = clock_monotonic_ns();
	const char *socket = cmd_default_socket();
	struct proto_msg req, resp;
	char *text;
	size_t len = 0;
	int ret;

	if ((ret = socketopt_parse("mark", usage_text, argc, argv, &socket)) >= 0)
		return ret;
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
	if (socketopt_call("mark", socket, NULL, &req, &resp))
		return 1;
	proto_free(&resp);
	return 0;
}
