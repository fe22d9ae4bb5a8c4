/*
 * cmd_prune.c - "strobe prune --source URL... --older-than AGE": drop the
 * fleet's sessions older than AGE from every ClickHouse server of the
 * cluster, whole sessions only (lib/fleet/prune.h, doc/FLEET.md).
 */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "chclient.h"
#include "cmd.h"
#include "fleetsource.h"
#include "prune.h"
#include "push.h"

static const char usage_text[] =
	"usage: strobe prune --source URL [--source URL]... --older-than AGE [--dry-run]\n"
	"\n"
	"Drop the fleet's sessions older than AGE (30d, 4w) from ClickHouse: the day\n"
	"partitions of every strobe table before the cutoff day (today, UTC, minus\n"
	"AGE), on every server of the cluster strobe_fleet, whole sessions only: a\n"
	"session with a row on the cutoff day or later is kept whole, and so is any\n"
	"session the drop would cut (the drop then stops at its first day).\n"
	"Give every server's HTTP URL, http://HOST:PORT/?database=NAME, with\n"
	"--source, each once: the servers' system.clusters must list exactly those.\n"
	"--dry-run lists what would be dropped and drops nothing.\n"
	"\n"
	"Credentials come from the environment, never the command line:\n"
	"STROBE_CLICKHOUSE_USER (default: default), and STROBE_CLICKHOUSE_PASSWORD or\n"
	"STROBE_CLICKHOUSE_PASSWORD_FILE (a file only its owner may read).\n";

static void note(void *arg, const char *line)
{
	printf("%s\n", TEXT_SAFE(line));
	fflush(stdout);
}

int cmd_prune(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "source", required_argument, NULL, 's' },
		{ "older-than", required_argument, NULL, 'o' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *src[PRUNE_SERVERS_MAX];
	struct prune_server sv[PRUNE_SERVERS_MAX];
	struct chclient *cl[PRUNE_SERVERS_MAX];
	struct prune_opts o = { 0 };
	struct prune_stats st;
	struct error e = { "" };
	size_t nsrc = 0, nsv = 0;
	char buf[32];
	int ch, ret = 1;

	opterr = 0;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "+:h", lo, NULL)) != -1) {
		switch (ch) {
		case 's':
			if (nsrc == PRUNE_SERVERS_MAX)
				return cmd_usage_error("prune", "more than %d --source servers",
						       PRUNE_SERVERS_MAX);
			src[nsrc++] = optarg;
			break;
		case 'o':
			if (prune_parse_age(optarg, &o.days) < 0)
				return cmd_usage_error("prune", "bad --older-than '%.40s': give days "
						       "or weeks such as 30d or 4w (1d to %dd)",
						       optarg, PRUNE_DAYS_MAX);
			break;
		case 'n':
			o.dry_run = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cmd_usage_error("prune", "option %s needs a value: see 'strobe prune "
					       "--help'", argv[optind - 1]);
		default:
			return cmd_usage_error("prune", "unknown option '%s': see 'strobe prune "
					       "--help'", cmd_bad_option(argc, argv, buf, sizeof(buf)));
		}
	}
	if (optind < argc)
		return cmd_usage_error("prune", "unexpected argument '%s': give servers with "
				       "--source URL", argv[optind]);
	if (!nsrc)
		return cmd_usage_error("prune", "no --source URL: give every ClickHouse server "
				       "of the fleet as --source http://HOST:8123/?database=strobe");
	if (!o.days)
		return cmd_usage_error("prune", "no --older-than: give the age of the sessions "
				       "to drop, such as 30d");
	for (size_t i = 0; i < nsrc; i++)
		if (source_check(&(struct source_spec){ .url = src[i] }, &e) < 0)
			return cmd_usage_error("prune", "%s", e.msg);
	/* the clients as every command opens them (no schema: prune checks
	 * the cluster's tables itself) */
	if (fleetsource_clients(src, nsrc, cl, &e) < 0)
		goto out;
	for (; nsv < nsrc; nsv++) {
		sv[nsv].c = cl[nsv];
		sv[nsv].name = src[nsv];
	}
	o.today = push_day((int64_t)time(NULL) * 1000000000);
	o.note = note;
	if (prune_run(sv, nsv, &o, &st, &e) < 0)
		goto out;
	if (!st.partitions) {
		char day[11];

		push_day_str(st.boundary, day);
		printf("nothing to drop: no partition before %s on %zu servers\n", day, nsv);
	} else
		printf("%s %llu partitions (%llu parts, %llu rows) on %zu servers: %llu "
		       "sessions\n", o.dry_run ? "dry run: would drop" : "dropped",
		       (unsigned long long)st.partitions, (unsigned long long)st.parts,
		       (unsigned long long)st.rows, nsv, (unsigned long long)st.sessions);
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "strobe prune: %s\n", e.msg);
	for (size_t i = 0; i < nsv; i++)
		chclient_free(sv[i].c);
	return ret;
}
