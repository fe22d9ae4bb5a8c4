/*
 * cmd_push.c - "strobe push --to URL": ship recorded sessions to the
 * ClickHouse tables of a fleet (lib/fleet/push.h, doc/FLEET.md).
 */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "chclient.h"
#include "cmd.h"
#include "db.h"
#include "progress.h"
#include "push.h"

static const char usage_text[] =
	"usage: strobe push --to URL [--session ID]... [--since T] [--host NAME] [--db PATH]\n"
	"\n"
	"Ship recorded sessions to ClickHouse over its HTTP interface: their samples\n"
	"with every counter, markers, lost records, processes, binaries and the symbols\n"
	"of the sampled locations.  URL is http://HOST:PORT/?database=NAME (the\n"
	"database holds the tables of schema/clickhouse/).  Every stopped session of\n"
	"the database by default; --session (repeatable) names some, --since T those\n"
	"started in the last T (90s, 15m, 2h, 7d).  --host names this machine in the\n"
	"fleet (default: its host name).\n"
	"\n"
	"Pushing is idempotent: a session already there is not sent again, and a push\n"
	"that was interrupted resumes where it stopped when run again.\n"
	"\n"
	"Credentials come from the environment, never the command line:\n"
	"STROBE_CLICKHOUSE_USER (default: default), and STROBE_CLICKHOUSE_PASSWORD or\n"
	"STROBE_CLICKHOUSE_PASSWORD_FILE (a file only its owner may read).\n";

static void note(void *arg, const char *line)
{
	struct progress *p = arg;

	progress_done(p);
	printf("%s\n", TEXT_SAFE(line));
	fflush(stdout);
}

/* "90s", "15m", "2h", "7d", or parse_duration_ns() */
static int parse_ago(const char *s, int64_t *ns)
{
	size_t n = strlen(s);
	int64_t mult = 0;
	uint64_t v;
	char num[32];

	if (n >= 2 && n < sizeof(num)) {
		switch (s[n - 1]) {
		case 'm': mult = 60; break;
		case 'h': mult = 3600; break;
		case 'd': mult = 86400; break;
		}
	}
	if (mult && s[n - 2] != 'm' && s[n - 2] != 'u' && s[n - 2] != 'n') {
		memcpy(num, s, n - 1);
		num[n - 1] = 0;
		if (strspn(num, "0123456789") != n - 1 || parse_u64(num, &v) < 0 ||
		    v > INT64_MAX / 1000000000 / mult)
			return -1;
		*ns = (int64_t)v * mult * 1000000000;
		return 0;
	}
	return parse_duration_ns(s, ns);
}

/* The command's options, as given. */
struct pushopts {
	const char *to, *dbpath, *host;
	int64_t *ids, ago;
	size_t nids;
	int has_since;
};

/* Option ch (getopt_long's, its value in optarg) into p: -1 to go on, else
 * the exit status. */
static int parse_option(struct pushopts *p, int ch, int argc, char **argv)
{
	char buf[32];

	switch (ch) {
	case 't':
		p->to = optarg;
		break;
	case 's': {
		uint64_t id;

		if (strspn(optarg, "0123456789") != strlen(optarg) || optarg[0] == '0' ||
		    parse_u64(optarg, &id) < 0 || id > INT64_MAX)
			return cmd_usage_error("push", "bad session '%s': give session "
					       "numbers as 'strobe sessions' lists them",
					       optarg);
		p->ids = xrealloc(p->ids, (p->nids + 1) * sizeof(*p->ids));
		p->ids[p->nids++] = (int64_t)id;
		break;
	}
	case 'S':
		if (parse_ago(optarg, &p->ago) < 0 || p->ago <= 0)
			return cmd_usage_error("push", "bad --since '%s': give a time "
					       "ago such as 90s, 15m, 2h or 7d", optarg);
		p->has_since = 1;
		break;
	case 'H':
		p->host = optarg;
		break;
	case 'd':
		p->dbpath = optarg;
		break;
	case 'h':
		fputs(usage_text, stdout);
		return 0;
	case ':':
		return cmd_usage_error("push", "option %s needs a value: see 'strobe push "
				       "--help'", argv[optind - 1]);
	default:
		return cmd_usage_error("push", "unknown option '%s': see 'strobe push --help'",
				       cmd_bad_option(argc, argv, buf, sizeof(buf)));
	}
	return -1;
}

/* Check the options together and turn them into o, url and (unless --host)
 * hostbuf's name: -1 to go on, else the exit status. */
static int check_options(struct pushopts *p, int argc, char **argv, struct push_opts *o,
			 struct chclient_url *url, char *hostbuf, size_t hostlen)
{
	struct error e = { "" };
	const char *env;

	if (optind < argc)
		return cmd_usage_error("push", "unexpected argument '%s': give sessions with "
				       "--session ID", argv[optind]);
	if (!p->to)
		return cmd_usage_error("push", "no --to URL: give the ClickHouse server as "
				       "--to http://HOST:8123/?database=strobe");
	if (p->nids && p->has_since)
		return cmd_usage_error("push", "--session and --since exclude each other");
	if (p->host && (!*p->host || strlen(p->host) > 255))
		return cmd_usage_error("push", "bad --host: give a name of 1 to 255 bytes");
	if (chclient_url_parse(p->to, url, &e) < 0)
		return cmd_usage_error("push", "%s", e.msg);
	if (!p->host) {
		if (gethostname(hostbuf, hostlen) < 0 || !hostbuf[0]) {
			fprintf(stderr, "strobe push: cannot tell this machine's host name: give "
				"--host NAME\n");
			return 1;
		}
		hostbuf[hostlen - 1] = 0;
		p->host = hostbuf;
	}
	o->has_since = p->has_since;
	if (o->has_since) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		o->since_wall_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - p->ago;
	}
	if ((env = getenv("STROBE_PUSH_BATCH_ROWS")) && *env) {
		uint64_t v;

		if (parse_u64(env, &v) < 0 || v == 0 || v > PUSH_BATCH_MAX)
			return cmd_usage_error("push", "bad STROBE_PUSH_BATCH_ROWS '%.40s': give 1 "
					       "to %d", env, PUSH_BATCH_MAX);
		o->batch_rows = v;
	}
	return -1;
}

/* Push with options p and o to url; print the result. Returns the exit
 * status. */
static int push(const struct pushopts *p, struct push_opts *o, const struct chclient_url *url)
{
	struct push_stats st;
	struct chclient_cred cred;
	struct chclient *c = NULL;
	struct progress prog = { 0 };
	struct error e = { "" };
	struct db *db = NULL;
	int ret = 1;

	if (chclient_credentials(&cred, &e) < 0)
		goto out;
	db = db_open(p->dbpath ? p->dbpath : cmd_default_db(), DB_READ, &e);
	if (!db)
		goto out;
	c = chclient_new(url, &cred, &e);
	memset(cred.password, 0, sizeof(cred.password));
	if (!c)
		goto out;
	progress_init(&prog, "strobe push", STDERR_FILENO, 0, "samples");
	o->host = p->host;
	o->sessions = p->ids;
	o->nsessions = p->nids;
	o->progress = &prog;
	o->note = note;
	o->note_arg = &prog;
	if (push_run(db, c, o, &st, &e) < 0)
		goto out;
	progress_done(&prog);
	printf("pushed %llu of %llu sessions: %llu of %llu batches, %llu rows, %zu bytes "
	       "compressed\n", (unsigned long long)st.sessions_sent,
	       (unsigned long long)st.sessions, (unsigned long long)st.batches_sent,
	       (unsigned long long)st.batches, (unsigned long long)st.rows_sent,
	       chclient_bytes_sent(c));
	ret = 0;
out:
	progress_done(&prog);
	if (ret)
		fprintf(stderr, "strobe push: %s\n", e.msg);
	chclient_free(c);
	if (db)
		db_close(db);
	return ret;
}

int cmd_push(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "to", required_argument, NULL, 't' },
		{ "session", required_argument, NULL, 's' },
		{ "since", required_argument, NULL, 'S' },
		{ "host", required_argument, NULL, 'H' },
		{ "db", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pushopts p = { 0 };
	struct push_opts o = { 0 };
	struct chclient_url url;
	char hostbuf[256];
	int ch, ret = -1;

	opterr = 0;
	optind = 0;
	while (ret < 0 && (ch = getopt_long(argc, argv, "+:h", lo, NULL)) != -1)
		ret = parse_option(&p, ch, argc, argv);
	if (ret < 0)
		ret = check_options(&p, argc, argv, &o, &url, hostbuf, sizeof(hostbuf));
	if (ret < 0)
		ret = push(&p, &o, &url);
	free(p.ids);
	return ret;
}
