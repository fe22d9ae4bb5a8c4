/*
 * cmd_rm.c - "strobe rm SESSION...": remove recorded sessions.
 *
 * The database is root's (group strobe may only read it), so strobed
 * removes them: it checks each session (it exists, it is not running,
 * it is the caller's or the caller is root), marks them all or none, and
 * deletes their rows in the background; the binary cache entries only
 * they used go once no session runs.  "strobe sessions" no longer lists
 * them as soon as this returns.
 */
#include "config.h"
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "control.h"
#include "proto.h"
#include "socketopt.h"

static const char usage_text[] =
	"usage: strobe rm [--socket PATH] SESSION...\n"
	"\n"
	"Remove sessions (their numbers as 'strobe sessions' lists them) from the\n"
	"database of the strobed on the socket.  Only the user who recorded a\n"
	"session, and root, may remove it; a running session cannot be removed.\n";

int cmd_rm(int argc, char **argv)
{
	const char *socket = cmd_default_socket();
	struct proto_msg req, resp;
	struct sbuf list = { 0 };
	int ret;

	if ((ret = socketopt_parse("rm", usage_text, argc, argv, &socket)) >= 0)
		return ret;
	if (optind >= argc)
		return cmd_usage_error("rm", "no session given: strobe rm SESSION... (the numbers "
				       "'strobe sessions' lists)");
	for (int i = optind; i < argc; i++) {
		uint64_t id;

		if (strspn(argv[i], "0123456789") != strlen(argv[i]) || argv[i][0] == '0' ||
		    parse_u64(argv[i], &id) < 0 || id > INT64_MAX) {
			free(list.s);
			return cmd_usage_error("rm", "bad session '%s': give session numbers as "
					       "'strobe sessions' lists them", argv[i]);
		}
		sbuf_addf(&list, "%s%llu", i > optind ? "," : "", (unsigned long long)id);
	}
	proto_init(&req, "rm");
	proto_add(&req, "sessions", list.s);
	free(list.s);
	if (socketopt_call("rm", socket, "start it on the database (strobed --db PATH); "
			   "sessions are removed by strobed, which owns it", &req, &resp))
		return 1;
	printf("removed session%s %s\n", strchr(proto_get(&resp, "removed") ?
	       proto_get(&resp, "removed") : "", ',') ? "s" : "",
	       proto_get(&resp, "removed") ? proto_get(&resp, "removed") : "?");
	proto_free(&resp);
	return 0;
}
