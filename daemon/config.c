/*
 * config.c - strobed's settings: the configuration file (--config,
 * STROBE_CONFIG or STROBE_CONFIG_PATH: lib/base/conffile.h), then
 * STROBE_DB and STROBE_SOCKET, then the options, each overriding the one
 * before; one function (apply_option) checks them all.  Also --help, and
 * what --push needs before strobed starts (its password file, the host
 * name), and the choice of backend.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "conffile.h"
#include "pusher.h"
#include "strobe_dev.h"
#include "strobed.h"

static void usage(FILE *f)
{
	fputs("usage: strobed [--config FILE] [--db PATH] [--socket PATH] [-f|--foreground]\n"
	      "               [--backend auto|perf|driver] [--keep DAYS] [--max-size SIZE]\n"
	      "               [--max-wal SIZE] [--spool-mem SIZE] [--spool-disk SIZE]\n"
	      "               [--ingest-nice N|idle] [--push URL|none] [--push-interval S]\n"
	      "               [--push-password-file FILE|none]\n"
	      "       strobed --version | --help\n", f);
}

/* --help: every option, one per line (doc/man/strobed.8.scd follows it). */
static void help(void)
{
	usage(stdout);
	fputs("The strobe daemon: runs system-wide profiling sessions for the 'strobe' command\n"
	      "and stores them in a SQLite database.  Runs as root; root and members of group\n"
	      "strobe may use its socket.  Options override the configuration file; STROBE_DB and\n"
	      "STROBE_SOCKET override the file's db and socket.\n", stdout);
	printf("  --config FILE        read settings from FILE: lines 'key = value', the keys the\n"
	       "                       options --db to --push-password-file (default: env STROBE_CONFIG,\n"
	       "                       else %s if it exists)\n", STROBE_CONFIG_PATH);
	fputs("  --db PATH            the database (default " DEFAULT_DB ")\n"
	      "  --socket PATH        the control socket (default " DEFAULT_SOCKET "; ignored when\n"
	      "                       systemd passes it, strobed.socket)\n"
	      "  -f, --foreground     stay in the foreground and log to stderr (default: detach, log to DB.log)\n"
	      "  --backend auto|perf|driver  capture with perf_event_open or the strobe driver\n"
	      "                       (" STROBE_DEV_PATH "); auto (default): the driver when it is loaded\n"
	      "  --keep DAYS          remove finished sessions that ended more than DAYS ago (default: keep)\n"
	      "  --max-size SIZE      remove the oldest finished sessions while the database and its\n"
	      "                       cache take more than SIZE (500M, 2G; default: no limit)\n"
	      "  --max-wal SIZE       keep the write-ahead log under SIZE when it can (default 64M)\n"
	      "  --spool-mem SIZE     memory for records ingest has not caught up with (default 256M;\n"
	      "                       0: none)\n"
	      "  --spool-disk SIZE    disk (DB.spool/) for them once memory is full (default 4G; 0: none)\n"
	      "  --ingest-nice N|idle nice of ingest above strobed's own, 0 to 19 (default 19), or idle\n"
	      "                       (SCHED_IDLE)\n"
	      "  --ingest-defer busy|SECONDS|off  while no CPU is idle, ingest waits and the spool\n"
	      "                       holds the records, until it is half full (busy, the default),\n"
	      "                       or also at most SECONDS behind (1 to 86400; with --push and no\n"
	      "                       --ingest-defer: --push-interval); off: never waits\n"
	      "  --push URL|none      push each session to ClickHouse, in intervals while it runs\n"
	      "                       and the rest when it stops (default none)\n"
	      "                       (http://HOST:8123/?database=strobe; doc/FLEET.md)\n"
	      "  --push-interval S    with --push: push an interval of each running session and\n"
	      "                       look for stopped ones every S seconds,\n"
	      "                       1 to 86400 (default 60)\n"
	      "  --push-password-file FILE|none  with --push: the ClickHouse password, first\n"
	      "                       line of FILE (an absolute path), which only its owner may\n"
	      "                       read (default none: env\n"
	      "                       STROBE_CLICKHOUSE_PASSWORD_FILE; user: STROBE_CLICKHOUSE_USER)\n"
	      "  -h, --help           show this help\n"
	      "  --version            print strobed's version\n", stdout);
}

/* Settings before they take effect: from the configuration file, the
 * environment, then the command line, each overriding the one before. */
struct settings {
	struct daemon *d;
	struct config *cfg;
	const char *backend;
	const char *push_password_file;
};

static const struct option opts[] = {
	{ "db", required_argument, NULL, 'd' },
	{ "socket", required_argument, NULL, 's' },
	{ "foreground", no_argument, NULL, 'f' },
	{ "backend", required_argument, NULL, 'b' },
	{ "keep", required_argument, NULL, 'k' },
	{ "max-size", required_argument, NULL, 'M' },
	{ "max-wal", required_argument, NULL, 'W' },
	{ "spool-mem", required_argument, NULL, 'S' },
	{ "spool-disk", required_argument, NULL, 'D' },
	{ "ingest-nice", required_argument, NULL, 'N' },
	{ "ingest-defer", required_argument, NULL, 'E' },
	{ "push", required_argument, NULL, 'P' },
	{ "push-interval", required_argument, NULL, 'I' },
	{ "push-password-file", required_argument, NULL, 'F' },
	{ "config", required_argument, NULL, 'C' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* The options a configuration file may set: those that take a value and
 * say how strobed runs (not --foreground, --config, --help, --version). */
#define FILE_KEYS "db, socket, backend, keep, max-size, max-wal, spool-mem, spool-disk, ingest-nice, " \
	"ingest-defer, " \
	"push, push-interval, push-password-file"

/*
 * Apply option c with argument arg (from the command line or, by its long
 * name, from the configuration file): 0, or -1 with e saying what is
 * wrong with the value and what to give instead.  arg must outlive strobed.
 */
static int apply_option(struct settings *o, int c, const char *arg, struct error *e)
{
	struct daemon *d = o->d;

	switch (c) {
	case 'd': o->cfg->db = arg; break;
	case 's': d->socket_path = arg; break;
	case 'f': o->cfg->foreground = 1; break;
	case 'b':
		if (strcmp(arg, "auto") && strcmp(arg, "perf") && strcmp(arg, "driver"))
			return error_set(e, "unknown backend '%s': use auto, perf or driver", arg);
		o->backend = arg;
		break;
	case 'k':
		return retention_parse_days(arg, &d->policy.keep_ns, e);
	case 'M':
		return retention_parse_size(arg, &d->policy.max_bytes, e);
	case 'W':
		if (retention_parse_size(arg, &d->max_wal, e) < 0)
			return error_set(e, "bad --max-wal '%s': give a size in bytes or with K, "
					 "M, G or T, e.g. --max-wal 64M", arg);
		break;
	case 'S':
	case 'D':
		/* 0: none (no disk: loss once memory is full) */
		if (!strcmp(arg, "0"))
			*(c == 'S' ? &d->spool.mem_max : &d->spool.disk_max) = 0;
		else if (retention_parse_size(arg, c == 'S' ? &d->spool.mem_max :
					      &d->spool.disk_max, e) < 0)
			return error_set(e, "bad --spool-%s '%s': give a size in bytes or with "
					 "K, M, G or T, e.g. --spool-%s 1G", c == 'S' ? "mem" : "disk",
					 arg, c == 'S' ? "mem" : "disk");
		break;
	case 'N': {
		char *end;
		long v = strtol(arg, &end, 10);

		if (!strcmp(arg, "idle")) {
			d->ingest_idle = 1;
			break;
		}
		if (end == arg || *end || v < 0 || v > 19)
			return error_set(e, "bad --ingest-nice '%s': give a number from 0 (ingest "
					 "competes with the workload as an equal) to 19, or idle "
					 "(SCHED_IDLE: only CPU time nothing else wants)", arg);
		d->ingest_nice = (int)v;
		d->ingest_idle = 0;
		break;
	}
	case 'E': {
		char *end;
		long v = strtol(arg, &end, 10);

		d->ingest_defer_set = 1;
		if (!strcmp(arg, "busy") || !strcmp(arg, "off")) {
			d->ingest_defer = !strcmp(arg, "busy");
			d->ingest_defer_max_ns = 0;
			break;
		}
		if (end == arg || *end || v < 1 || v > 86400)
			return error_set(e, "bad --ingest-defer '%s': give busy (ingest waits while "
					 "no CPU is idle, up to half the spool), a number of seconds "
					 "from 1 to 86400 (busy, and at most that far behind) or off",
					 arg);
		d->ingest_defer = 1;
		d->ingest_defer_max_ns = (uint64_t)v * 1000000000ULL;
		break;
	}
	case 'P': {
		struct chclient_url u;

		if (!strcmp(arg, "none")) {	/* strobed.conf's default */
			d->push_url = NULL;
			break;
		}
		if (chclient_url_parse(arg, &u, e) < 0)
			return error_prefix(e, "bad --push '%s'", arg);
		d->push_url = arg;
		break;
	}
	case 'I': {
		char *end;
		long v = strtol(arg, &end, 10);

		if (end == arg || *end || v < 1 || v > PUSH_INTERVAL_MAX)
			return error_set(e, "bad --push-interval '%s': give seconds from 1 to %d "
					 "(default %d; 10 or more in production)", arg,
					 PUSH_INTERVAL_MAX, PUSH_INTERVAL_DEFAULT);
		d->push_interval = (unsigned)v;
		break;
	}
	case 'F':	/* none: env STROBE_CLICKHOUSE_PASSWORD_FILE */
		if (strcmp(arg, "none") && arg[0] != '/')
			return error_set(e, "bad --push-password-file '%s': give an absolute path "
					 "(or none: env STROBE_CLICKHOUSE_PASSWORD_FILE)", arg);
		o->push_password_file = strcmp(arg, "none") ? arg : NULL;
		break;
	default:
		return error_set(e, "unknown option");
	}
	return 0;
}

/* One key = value of the configuration file: the option of that name. */
static int apply_key(void *arg, const char *key, const char *value, struct error *e)
{
	for (const struct option *o = opts; o->name; o++)
		if (!strcmp(o->name, key) && o->has_arg == required_argument && o->val != 'C')
			return apply_option(arg, o->val, xstrdup(value), e);
	return error_set(e, "unknown key '%s': the keys are " FILE_KEYS, key);
}


/*
 * The command line first, applied last: it overrides the file.  -1 to go
 * on, else the exit status.
 */
static int read_settings(struct settings *set, int argc, char **argv)
{
	struct daemon *d = set->d;
	const char *config = NULL, *env;
	int *argc_opt = xcalloc(argc + 1, sizeof(int));
	char **argv_opt = xcalloc(argc + 1, sizeof(char *));
	int c, nargs = 0;
	struct error e;

	while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (c) {
		case 'C': config = optarg; break;
		case 'h': help(); return 0;
		case 'V': printf("strobed %s\n", PACKAGE_VERSION); return 0;
		case '?': usage(stderr); return 2;
		default:
			argc_opt[nargs] = c;
			argv_opt[nargs++] = optarg;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (!config && (env = getenv("STROBE_CONFIG")) && *env)
		config = env;
	if (config && !*config) {
		fprintf(stderr, "strobed: --config: empty file name: give the path of a "
			"configuration file\n");
		return 2;
	}
	/* an explicit file must exist; the default one may not */
	if (conffile_read(config ? config : STROBE_CONFIG_PATH,
			  CONFFILE_STRICT | (config ? 0 : CONFFILE_MISSING_OK), apply_key, set,
			  &e) < 0) {
		fprintf(stderr, "strobed: %s\n", e.msg);
		return 2;
	}
	if ((env = getenv("STROBE_DB")) && *env)
		set->cfg->db = env;
	if ((env = getenv("STROBE_SOCKET")) && *env)
		d->socket_path = env;
	for (int i = 0; i < nargs; i++)
		if (apply_option(set, argc_opt[i], argv_opt[i], &e) < 0) {
			fprintf(stderr, "strobed: %s\n", e.msg);
			return 2;
		}
	free(argc_opt);
	free(argv_opt);
	return -1;
}

/* --push: the password file is checked (and read) now: a wrong one is a
 * usage error, not a push that fails for ever.  -1 to go on, else the
 * exit status. */
static int push_prepare(struct settings *set)
{
	struct daemon *d = set->d;
	struct config *cfg = set->cfg;
	struct error e;

	if (set->push_password_file &&
	    setenv("STROBE_CLICKHOUSE_PASSWORD_FILE", set->push_password_file, 1) < 0) {
		fprintf(stderr, "strobed: setenv: %s\n", strerror(errno));
		return 1;
	}
	if (chclient_url_parse(d->push_url, &cfg->push_url, &e) < 0 ||
	    chclient_credentials(&cfg->push_cred, &e) < 0) {
		fprintf(stderr, "strobed: --push: %s\n", e.msg);
		return 2;
	}
	if (!d->push_interval)
		d->push_interval = PUSH_INTERVAL_DEFAULT;
	/* --push names sampled locations with what is local: strobed, as
	 * root, fetches nothing from debuginfod servers */
	unsetenv("DEBUGINFOD_URLS");
	if (gethostname(cfg->push_host, sizeof(cfg->push_host)) < 0 || !cfg->push_host[0]) {
		fprintf(stderr, "strobed: --push: cannot tell this machine's host name\n");
		return 1;
	}
	cfg->push_host[sizeof(cfg->push_host) - 1] = 0;
	return -1;
}

int config_load(struct daemon *d, struct config *cfg, int argc, char **argv)
{
	struct settings set = { .d = d, .cfg = cfg, .backend = "auto" };
	int r;

	if ((r = read_settings(&set, argc, argv)) >= 0)
		return r;
	if (d->push_url && (r = push_prepare(&set)) >= 0)
		return r;
	if (!cfg->db || !*cfg->db)
		cfg->db = DEFAULT_DB;
	if (!d->socket_path || !*d->socket_path)
		d->socket_path = DEFAULT_SOCKET;
	/* auto: the driver when its device exists, perf_event_open otherwise */
	if (!strcmp(set.backend, "driver") ||
	    (!strcmp(set.backend, "auto") && access(STROBE_DEV_PATH, F_OK) == 0))
		d->backend = BACKEND_DRIVER;
	if (d->backend == BACKEND_DRIVER && access(STROBE_DEV_PATH, F_OK) < 0) {
		fprintf(stderr, "strobed: --backend driver needs %s: load the driver "
			"(insmod kernel/strobe.ko) or use --backend perf\n", STROBE_DEV_PATH);
		return 1;
	}
	return -1;
}
