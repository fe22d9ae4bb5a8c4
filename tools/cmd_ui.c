/*
 * cmd_ui.c - "strobe ui": the explorer in the browser.  Parses the
 * options, opens the source (source.h), starts the server (lib/ui/
 * uiserver.h), prints the URL to open (with its token), opens it on a
 * desktop, and waits for SIGINT or SIGTERM.
 */
#include "config.h"
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cmd.h"
#include "source.h"
#include "uiserver.h"

extern char **environ;

static const char usage_text[] =
	"usage: strobe ui [--db PATH | --source URL [--host NAME]] [--session ID]\n"
	"                 [--listen ADDR:PORT] [--no-open]\n"
	"\n"
	"Serve the explorer: a page in the browser where a window brushed on the\n"
	"timeline of any event drives the hot spots, the flame graph and the\n"
	"diff of two windows, computed as 'strobe report', 'strobe export' (folded\n"
	"stacks) and 'strobe diff' compute them.  Prints one line,\n"
	"  strobe ui: http://127.0.0.1:PORT/?token=TOKEN\n"
	"the URL to open (its random token is needed by every request), opens it\n"
	"on a desktop (xdg-open), and serves until interrupted (Ctrl-C).\n"
	"\n"
	"Options:\n"
	"  --db PATH           the database (default $STROBE_DB, else\n"
	"                      /var/lib/strobe/strobe.db)\n"
	"  --source URL        the fleet's sessions in ClickHouse (as 'strobe report\n"
	"                      --source')\n"
	"  --host NAME         with --source: that host's sessions\n"
	"  --session ID        the session to open first\n"
	"  --listen ADDR:PORT  where to listen (default 127.0.0.1:0, a free port);\n"
	"                      another address than loopback lets other machines\n"
	"                      ask, with the token\n"
	"  --no-open           do not start a browser\n"
	"  -h, --help          this text\n"
	"Usage errors exit 2 after one line on stderr; a database that cannot be\n"
	"read or an address that cannot be listened on exits 1.\n";

enum { OPT_DB = 256, OPT_SOURCE, OPT_HOST, OPT_SESSION, OPT_LISTEN, OPT_NO_OPEN };

static const struct option long_opts[] = {
	{ "db",		required_argument, NULL, OPT_DB },
	{ "source",	required_argument, NULL, OPT_SOURCE },
	{ "host",	required_argument, NULL, OPT_HOST },
	{ "session",	required_argument, NULL, OPT_SESSION },
	{ "listen",	required_argument, NULL, OPT_LISTEN },
	{ "no-open",	no_argument,	   NULL, OPT_NO_OPEN },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* ADDR:PORT ("127.0.0.1:8080", "[::1]:0") into sa.  0, or -1. */
static int parse_listen(const char *arg, struct sockaddr_storage *sa, socklen_t *len,
			int *loopback)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(arg, ':');
	uint64_t port;
	size_t n;

	if (!colon || parse_u64(colon + 1, &port) < 0 || port > 65535)
		return -1;
	n = (size_t)(colon - arg);
	if (n < 1 || n >= sizeof(host))
		return -1;
	memcpy(host, arg, n);
	host[n] = 0;
	memset(sa, 0, sizeof(*sa));
	if (host[0] == '[' && host[n - 1] == ']') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;

		host[n - 1] = 0;
		if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1)
			return -1;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*s6);
		*loopback = IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)sa;

		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return -1;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*len = sizeof(*s4);
		*loopback = (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	}
	return 0;
}

/* xdg-open url, without a shell; a failure is only noted. */
static void open_browser(const char *url)
{
	char *argv[] = { "xdg-open", (char *)url, NULL };
	pid_t pid;
	int rc = posix_spawnp(&pid, "xdg-open", NULL, NULL, argv, environ);

	if (rc)
		fprintf(stderr, "strobe ui: note: cannot start xdg-open (%s): open the URL "
			"above\n", strerror(rc));
}

int cmd_ui(int argc, char **argv)
{
	struct sockaddr_storage sa;
	socklen_t salen = 0;
	const char *dbpath = NULL, *source = NULL, *host = NULL, *listen = NULL;
	struct error err = { "" };
	struct ui_server *srv;
	struct source src;
	int64_t session = 0;
	int no_open = 0, loopback = 1, c, rc, sig;
	char optbuf[256], url[256], where[80];
	sigset_t set;
	uint64_t v;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_DB:
			dbpath = optarg;
			break;
		case OPT_SOURCE:
			source = optarg;
			break;
		case OPT_HOST:
			if (!*optarg || strlen(optarg) > 255)
				return cmd_usage_error("ui", "bad --host: give a host name of 1 to "
						       "255 bytes, as pushed");
			host = optarg;
			break;
		case OPT_SESSION:
			if (parse_u64(optarg, &v) < 0 || v == 0 || v > INT64_MAX)
				return cmd_usage_error("ui", "bad --session '%s': give a session id "
						       "('strobe sessions' lists them)", optarg);
			session = (int64_t)v;
			break;
		case OPT_LISTEN:
			listen = optarg;
			break;
		case OPT_NO_OPEN:
			no_open = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cmd_usage_error("ui", "option %s needs a value: see 'strobe ui --help'",
					       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
		default:
			return cmd_usage_error("ui", "unknown option '%s': see 'strobe ui --help'",
					       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
		}
	}
	if (optind < argc)
		return cmd_usage_error("ui", "unexpected argument '%s': see 'strobe ui --help'",
				       argv[optind]);
	if (source && dbpath)
		return cmd_usage_error("ui", "--source reads the fleet, --db a local database: "
				       "give one of them");
	if (host && !source)
		return cmd_usage_error("ui", "--host is of the fleet: give --source URL");
	if (parse_listen(listen ? listen : "127.0.0.1:0", &sa, &salen, &loopback) < 0)
		return cmd_usage_error("ui", "bad --listen '%s': give ADDR:PORT, e.g. "
				       "127.0.0.1:8080 or [::1]:0", listen);
	if (!loopback)
		fprintf(stderr, "strobe ui: warning: listening on %s, not loopback: other "
			"machines can reach it (the token is still needed)\n", listen);
	rc = source_open(&(struct source_spec){ .url = source, .host = host, .session = session,
						 .db = source ? NULL : dbpath ? dbpath :
						       cmd_default_db() }, &src, &err);
	if (rc == SOURCE_BAD_SPEC)
		return cmd_usage_error("ui", "bad --source: %s", err.msg);
	if (rc < 0) {
		fprintf(stderr, "strobe ui: %s\n", err.msg);
		return 1;
	}
	/* SIGINT and SIGTERM are waited for, not delivered: block them before
	 * the server's thread starts, so that it inherits the mask */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (!(srv = ui_server_start(&src, (struct sockaddr *)&sa, salen, &err))) {
		fprintf(stderr, "strobe ui: %s\n", err.msg);
		source_close(&src);
		return 1;
	}
	if (sa.ss_family == AF_INET6) {
		where[0] = '[';
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr, where + 1,
			  sizeof(where) - 2);
		strcat(where, "]");
	} else {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, where, sizeof(where));
	}
	snprintf(url, sizeof(url), "http://%s:%u/?token=%s", where, ui_server_port(srv),
		 ui_server_token(srv));
	if (session)
		snprintf(url + strlen(url), sizeof(url) - strlen(url), "&session=%" PRId64,
			 session);
	printf("strobe ui: %s\n", url);
	fflush(stdout);
	if (!no_open && (getenv("DISPLAY") || getenv("WAYLAND_DISPLAY")))
		open_browser(url);
	do
		rc = sigwait(&set, &sig);
	while (rc == EINTR);
	ui_server_stop(srv);
	source_close(&src);
	return 0;
}
