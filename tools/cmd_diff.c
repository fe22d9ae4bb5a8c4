/*
 * cmd_diff.c - "strobe diff A B": two recorded sessions' hot spots side by
 * side, with the differences of their shares (lib/query/diff.h does the
 * work; this parses options and prints).
 *
 * Text output starts with '#' header lines (the two sessions, the
 * filters, notes), then the table, then a footnote on the noise mark.
 * CSV and JSON carry only the table; notes go to stderr.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "diff.h"
#include "filteropt.h"
#include "fleetexport.h"
#include "output.h"
#include "progress.h"
#include "report.h"
#include "source.h"
#include <unistd.h>

static const char usage_text[] =
	"usage: strobe diff [--db PATH] [--by binary|symbol|line] [--pid PID[@START]]\n"
	"                   [--comm NAME] [--binary PATH] [--kernel|--user] [--cgroup PATH]\n"
	"                   [--from T] [--to T] [--no-demangle] [--format text|csv|json]\n"
	"                   [--limit N] [--where 'EXPR OP X' [--invert] [--where-sample]\n"
	"                   [--where-bucket T]] A B\n"
	"       strobe diff [--db PATH] [options] ID@FROM-TO ID@FROM-TO\n"
	"       strobe diff [--db PATH] [options] --where 'EXPR OP X' [--invert]\n"
	"                   [--where-sample] [--where-bucket T] [ID]\n"
	"       strobe diff --source URL [--host NAME] [--by binary|symbol] [--pid PID]\n"
	"                   [--comm NAME] [--binary PATH] [--kernel|--user] [--from T]\n"
	"                   [--to T] [--format text|csv|json] [--limit N] A B\n"
	"\n"
	"Compare the hot spots of two recorded sessions, A and B (session ids, as\n"
	"'strobe sessions' lists them): for each row, its samples and percent in\n"
	"A and in B as 'strobe report' computes them (percent of the samples that\n"
	"pass the filters, or of their periods when the session weighs samples\n"
	"by period), and delta_percent = B's percent - A's, in points.  Rows are\n"
	"matched by name, not by address or build-id: the binary's path as the\n"
	"report shows it, the symbol, and with --by line the source file:line; so\n"
	"a program rebuilt at the same path still matches.  A row found in one\n"
	"session only has 0 in the other.  Rows are sorted by |delta_percent|,\n"
	"largest first.  For each counting event both sessions counted (-e, by\n"
	"name), columns a_EV, b_EV and delta_EV (B - A) hold the counts\n"
	"attributed to the row; events only one session counted are left out\n"
	"(a note says which).\n"
	"\n"
	"Sampling noise: a difference is within noise when\n"
	"  |pB - pA| <= 2 * sqrt(p * (1 - p) * (1/nA + 1/nB)),\n"
	"p = (pA*nA + pB*nB) / (nA + nB), with pA, pB the row's shares (0..1)\n"
	"and nA, nB the sessions' samples that pass the filters (the two-\n"
	"proportion test at two standard errors: about 1 in 20 rows whose share\n"
	"did not change is still outside it).  Text marks such rows \"~\" in the\n"
	"column noise; CSV and JSON have within_noise, 1 or 0.\n"
	"\n"
	"Columns: binary, symbol (empty with --by binary), a_samples, b_samples,\n"
	"a_percent, b_percent, delta_percent, within_noise, then a_EV, b_EV,\n"
	"delta_EV per common event, then with --by line source (file:line).\n"
	"\n"
	"Options:\n"
	"  --db PATH           the database (default $STROBE_DB, else\n"
	"                      /var/lib/strobe/strobe.db)\n"
	"  --by binary|symbol|line\n"
	"                      what a row is (default symbol)\n"
	"  --format text|csv|json\n"
	"                      text (default: '#' header lines, the table, a\n"
	"                      footnote), CSV, or JSON {\"meta\": ..., \"rows\": [...]}\n"
	"  --limit N           the N largest differences (default 0: all rows)\n"
	"The filters are 'strobe report's, applied to both sessions alike:\n"
	"  --pid PID[@START]   samples of that process (@START: the one started\n"
	"                      last by START seconds after each session's start)\n"
	"  --comm NAME         samples of processes of that command name\n"
	"  --binary PATH       samples in that binary (a path or a file name)\n"
	"  --kernel | --user   kernel-mode or user-mode samples only\n"
	"  --cgroup PATH       processes of that cgroup (PATH/: and below it)\n"
	"  --from T, --to T    samples in that time since each session's start\n"
	"                      (1.5, 1.5s, 250ms, 20us; both ends included)\n"
	"  --no-demangle       keep C++ and Rust symbol names raw\n"
	"  --source URL        compare pushed sessions of the ClickHouse fleet at URL\n"
	"                      (http://HOST:8123/?database=strobe; credentials as for\n"
	"                      'strobe push'): A and B are ID, a session of --host's\n"
	"                      host, or HOST:ID, so that two hosts' sessions can be\n"
	"                      compared; --by binary or symbol only, the filters\n"
	"                      but --cgroup, --no-demangle and --pid PID@START\n"
	"  --host NAME         with --source: the host of A or B given as ID\n"
	"A side may be a window of a session, ID@FROM-TO (3@1.5s-2s): the\n"
	"samples of session ID from FROM (included) to TO (not included), times\n"
	"since its start as --from takes them (1.5, 1.5s, 250ms, 20us, 100ns);\n"
	"with --source, ID@FROM-TO of --host's host or HOST:ID@FROM-TO.\n"
	"Then both sides are windows, of one session or two (before and after\n"
	"an onset); --from and --to do not apply; the JSON meta adds a_window\n"
	"and b_window.\n"
	"With --where, a condition on a metric (below), A and B keep the samples\n"
	"it keeps (evaluated in each session, or window, on its own).  Given one\n"
	"session ID (default: the latest) and --where C, diff compares that\n"
	"session with itself: A (the base) its samples where C is false, B those\n"
	"where C holds (with --invert the other way round), so what runs while a\n"
	"metric is high against the rest is one command; the header and the JSON\n"
	"meta (a_where, b_where) say each side's condition.\n"
	FILTEROPT_WHERE_HELP
	"  -h, --help          this text\n"
	"A session still running cannot be compared: stop it first.  Usage\n"
	"errors (a bad option, A or B not a finished session, A equal to B) exit\n"
	"2 after one line on stderr; a database that cannot be read exits 1.\n";

enum { OPT_DB = 256, OPT_BY, OPT_FORMAT, OPT_LIMIT, OPT_SOURCE, OPT_HOST };

static const struct option long_opts[] = {
	{ "db",		required_argument, NULL, OPT_DB },
	{ "by",		required_argument, NULL, OPT_BY },
	{ "format",	required_argument, NULL, OPT_FORMAT },
	{ "limit",	required_argument, NULL, OPT_LIMIT },
	{ "source",	required_argument, NULL, OPT_SOURCE },
	{ "host",	required_argument, NULL, OPT_HOST },
	FILTEROPT_LONG_OPTS,
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_session(const char *arg, const char *which, int64_t *id)
{
	uint64_t v;

	if (parse_u64(arg, &v) < 0 || v == 0 || v > INT64_MAX)
		return cmd_usage_error("diff", "bad session %s '%s': give a session id "
				       "('strobe sessions' lists them)", which, arg);
	*id = (int64_t)v;
	return 0;
}

static void print_header(const struct diff *d, FILE *f)
{
	for (int s = 0; s < 2; s++) {
		const struct report_summary *sum = d->sum[s];
		const struct db_session *ss = &sum->session;

		fprintf(f, "# %s: session %lld", s ? "B" : "A", (long long)ss->id);
		if (d->host[s][0])
			fprintf(f, " of host %s", TEXT_SAFE(d->host[s]));
		if (ss->name[0])
			fprintf(f, " \"%s\"", TEXT_SAFE(ss->name));
		fprintf(f, " (%s), sampling %s: %" PRIu64 " samples", TEXT_SAFE(ss->state),
			TEXT_SAFE(ss->sample_event), sum->samples);
		if (ss->samples > 0 && sum->samples != (uint64_t)ss->samples)
			fprintf(f, " of %lld pass the filters", (long long)ss->samples);
		if (sum->weighted)
			fprintf(f, "; percent of %s's count, %" PRIu64, TEXT_SAFE(ss->sample_event),
				sum->weight);
		if (d->where[s][0])
			fprintf(f, "; %s", TEXT_SAFE(d->where[s]));
		fputc('\n', f);
	}
}

/* --source: what the fleet's comparison takes, and its sides A and B
 * (args: ID of --host, or HOST:ID) into side, their hosts malloc'ed in
 * hn.  -1 to go on, else the exit status (2: a usage error). */
static int fleet_sides(const char *dbpath, const char *host, const struct report_opts *o,
		       char **args, struct source_side *side, char **hn)
{
	struct error err = { "" };

	if (dbpath)
		return cmd_usage_error("diff", "--source reads the fleet, --db a local "
				       "database: give one of them");
	if (o->by == REPORT_BY_LINE)
		return cmd_usage_error("diff", "--by line is not supported with --source "
				       "(no source lines are pushed): give --by symbol or "
				       "binary");
	if (filteropt_check("diff", o))
		return 2;
	if (o->cgroup || o->no_demangle || o->has_pid_at || o->where)
		return cmd_usage_error("diff", "%s is not supported with --source (the "
				       "filters --pid PID, --comm, --binary, --kernel, "
				       "--user, --from and --to are)", o->cgroup ?
				       "--cgroup" : o->no_demangle ? "--no-demangle" :
				       o->where ? "--where" : "--pid PID@START");
	for (int i = 0; i < 2; i++) {
		const char *h;
		size_t hl;

		if (fleetdiff_parse_side(args[i], host, &h, &hl, &side[i].id, &err) < 0)
			return cmd_usage_error("diff", "%s: %s", i ? "B" : "A", err.msg);
		hn[i] = xmalloc(hl + 1);	/* HOST:ID: the host without ":ID" */
		memcpy(hn[i], h, hl);
		hn[i][hl] = 0;
		side[i].host = hn[i];
	}
	return -1;
}

/* Whether arg is a window side, ID@FROM-TO. */
static int is_window(const char *arg)
{
	return strchr(arg, '@') != NULL;
}

/* Side arg "ID@FROM-TO" into w ([FROM, TO), ns since session ID's
 * start); with the fleet (hn non-NULL) ID is as fleet_sides() takes it,
 * ID of host or HOST:ID, the host malloc'ed in *hn.  0, or 2 after a
 * usage error. */
static int parse_window(const char *arg, const char *which, const char *host, char **hn,
			struct diff_window *w)
{
	const char *at = strrchr(arg, '@'), *dash = at ? strchr(at + 1, '-') : NULL;
	struct error err = { "" };
	char buf[300];
	size_t n = at ? (size_t)(at - arg) : 0;

	if (!at || !dash || n == 0 || n >= sizeof(buf) || strlen(at) >= sizeof(buf))
		goto bad;
	memcpy(buf, arg, n);
	buf[n] = 0;
	if (hn) {
		const char *h;
		size_t hl;

		if (fleetdiff_parse_side(buf, host, &h, &hl, &w->session, &err) < 0)
			return cmd_usage_error("diff", "%s: %s", which, err.msg);
		*hn = xmalloc(hl + 1);	/* HOST:ID: the host without ":ID" */
		memcpy(*hn, h, hl);
		(*hn)[hl] = 0;
	} else if (parse_session(buf, which, &w->session)) {
		return 2;
	}
	n = (size_t)(dash - at - 1);
	memcpy(buf, at + 1, n);
	buf[n] = 0;
	if (!n || parse_duration_ns(buf, &w->from_ns) < 0 || !dash[1] ||
	    parse_duration_ns(dash + 1, &w->to_ns) < 0)
		goto bad;
	return 0;
bad:
	return cmd_usage_error("diff", "bad window %s '%s': give ID@FROM-TO, a session id "
			       "and two times since its start (3@1.5s-2s%s)", which, arg,
			       hn ? "; with --source HOST:ID@FROM-TO too" : "");
}

/* Two windows (args ID@FROM-TO) of the local database or (source) the
 * fleet: their comparison in *d (source_diff_windows()).  -1 to go on,
 * else the exit status. */
static int window_diff(const char *dbpath, const char *source, const char *host,
		       const struct report_opts *o, char **args, struct diff **d)
{
	struct diff_window w[2];
	struct error err = { "" };
	struct source src;
	struct source_side side[2] = { { NULL, 0 }, { NULL, 0 } };
	char *hn[2] = { NULL, NULL };
	int filtered = o->pid >= 0 || o->comm || o->binary || o->mode != REPORT_ALL;
	int rc;

	if (host && !source)
		return cmd_usage_error("diff", "--host is of the fleet's sessions: give "
				       "--source URL");
	if (source && dbpath)
		return cmd_usage_error("diff", "--source reads the fleet, --db a local "
				       "database: give one of them");
	if (!is_window(args[0]) || !is_window(args[1]))
		return cmd_usage_error("diff", "give both sides as windows, ID@FROM-TO, or "
				       "both as session ids");
	if (o->has_from || o->has_to)
		return cmd_usage_error("diff", "--from and --to do not apply to windows: "
				       "give the times in ID@FROM-TO");
	if (source && o->by == REPORT_BY_LINE)
		return cmd_usage_error("diff", "--by line is not supported with --source "
				       "(no source lines are pushed): give --by symbol or "
				       "binary");
	if (source && (o->cgroup || o->no_demangle || o->has_pid_at || o->where))
		return cmd_usage_error("diff", "%s is not supported with --source (the "
				       "filters --pid PID, --comm, --binary, --kernel and "
				       "--user are)", o->cgroup ? "--cgroup" : o->no_demangle ?
				       "--no-demangle" : o->where ? "--where" : "--pid PID@START");
	rc = parse_window(args[0], "A", host, source ? &hn[0] : NULL, &w[0]);
	if (!rc)
		rc = parse_window(args[1], "B", host, source ? &hn[1] : NULL, &w[1]);
	if (!rc && filteropt_check("diff", o))
		rc = 2;
	if (rc)
		goto out;
	side[0].host = hn[0];
	side[1].host = hn[1];
	rc = source_open(&(struct source_spec){ .url = source, .db = source ? NULL : dbpath ?
						 dbpath : cmd_default_db() }, &src, &err);
	if (rc == SOURCE_BAD_SPEC) {
		rc = cmd_usage_error("diff", "bad --source: %s", err.msg);
		goto out;
	}
	if (rc < 0) {
		fprintf(stderr, "strobe diff: %s\n", err.msg);
		rc = 1;
		goto out;
	}
	rc = source_diff_windows(&src, &side[0], &side[1], w, o, filtered, d, &err);
	source_close(&src);
	if (rc == -2) {
		rc = cmd_usage_error("diff", "%s", err.msg);
	} else if (rc < 0) {
		fprintf(stderr, "strobe diff: %s\n", err.msg);
		rc = 1;
	} else {
		rc = -1;	/* *d to print */
	}
out:
	free(hn[0]);
	free(hn[1]);
	return rc;
}

/* A local comparison: sessions A and B (args) into side.  -1 to go on,
 * else the exit status. */
static int local_sides(const char *host, const struct report_opts *o, char **args,
		       struct source_side *side)
{
	if (host)
		return cmd_usage_error("diff", "--host is of fleet comparisons: give "
				       "--source URL");
	if (parse_session(args[0], "A", &side[0].id) ||
	    parse_session(args[1], "B", &side[1].id))
		return 2;
	if (filteropt_check("diff", o))
		return 2;
	return -1;
}

/* Print the comparison d: header lines and notes, the table, the
 * footnote.  0, or 1 when writing failed. */
static int print_diff(const struct diff *d, const struct report_opts *o,
		      enum output_format fmt, size_t limit)
{
	struct table *t = diff_table(d, o, fmt, limit);
	int i, ret = 0;

	if (fmt == OUTPUT_TEXT) {
		print_header(d, stdout);
		if (o->pid >= 0 || o->comm || o->binary || o->cgroup || o->mode != REPORT_ALL ||
		    o->has_from || o->has_to || o->where) {
			struct sbuf f = { 0 };

			report_filters_str(o, &f);
			printf("# filter (both sessions): %s\n", f.s ? f.s : "");
			free(f.s);
		}
		for (i = 0; i < d->nr_notes; i++)
			printf("# note: %s\n", TEXT_SAFE(d->notes[i]));
	} else {
		for (i = 0; i < d->nr_notes; i++)
			fprintf(stderr, "strobe diff: note: %s\n", TEXT_SAFE(d->notes[i]));
	}
	if (table_write(t, fmt, stdout) < 0) {
		ret = 1;
	} else if (fmt == OUTPUT_TEXT) {
		printf("# delta_percent: B's percent - A's, in points; ~: within sampling "
		       "noise (|delta| <= %g standard errors of the difference of two "
		       "shares of %" PRIu64 " and %" PRIu64 " samples)\n", DIFF_NOISE_SE,
		       d->total[0], d->total[1]);
	}
	if (ret || fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr, "strobe diff: writing the comparison: %s\n", strerror(errno));
		ret = 1;
	}
	table_free(t);
	return ret;
}

/* strobe diff [ID] --where C: the rest of session ID (default: the
 * latest) against its samples where C holds (diff_build_where()). */
static int where_diff(const char *dbpath, const char *source, const char *host,
		      struct report_opts *o, const char *arg, enum output_format fmt,
		      size_t limit)
{
	struct error err = { "" };
	struct diff *d = NULL;
	struct progress prog;
	struct source src;
	int rc;

	if (source || host)
		return cmd_usage_error("diff", "%s: a session against itself by --where is "
				       "of the local database", source ? "--source" : "--host");
	if (arg && is_window(arg))
		return cmd_usage_error("diff", "bad session '%s': with --where give one "
				       "session id (--from and --to select its range)", arg);
	if (arg && parse_session(arg, "ID", &o->session))
		return 2;
	if (filteropt_check("diff", o))
		return 2;
	if (source_open(&(struct source_spec){ .db = dbpath ? dbpath : cmd_default_db() },
			&src, &err) < 0) {
		fprintf(stderr, "strobe diff: %s\n", err.msg);
		return 1;
	}
	progress_init(&prog, "strobe diff", STDERR_FILENO, 0, "samples");
	o->progress = &prog;
	rc = diff_build_where(src.db, o->by, o, &d, &err);
	progress_done(o->progress);
	o->progress = NULL;
	source_close(&src);
	if (rc == -2)
		return cmd_usage_error("diff", "%s", err.msg);
	if (rc < 0) {
		fprintf(stderr, "strobe diff: %s\n", err.msg);
		return 1;
	}
	rc = print_diff(d, o, fmt, limit);
	diff_free(d);
	return rc;
}

int cmd_diff(int argc, char **argv)
{
	struct report_opts o = { .session = 0, .by = REPORT_BY_SYMBOL, .pid = -1,
				 .mode = REPORT_ALL };
	enum output_format fmt = OUTPUT_TEXT;
	static const struct filteropt fopt = { "diff", FILTEROPT_AT_REPORT };
	const char *dbpath = NULL;
	struct error err = { "" };
	struct diff *d = NULL;
	struct source src;
	struct source_side side[2] = { { NULL, 0 }, { NULL, 0 } };
	char *hn[2] = { NULL, NULL };
	struct progress prog;
	uint64_t v;
	size_t limit = 0;
	char optbuf[256];
	const char *source = NULL, *host = NULL;
	int filtered = 0;
	int c, rc, ret;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		int f;

		if (c == FOPT_SESSION)
			return cmd_usage_error("diff", "--session does not apply: give the two "
					       "sessions as A B ('strobe diff 3 4')");
		f = filteropt_parse(&fopt, c, optarg, argv[optind - 1], &o);
		if (f == 2)
			return 2;
		if (f) {
			filtered = 1;
			continue;
		}
		switch (c) {
		case OPT_DB:
			dbpath = optarg;
			break;
		case OPT_SOURCE:
			source = optarg;
			break;
		case OPT_HOST:
			if (!*optarg)
				return cmd_usage_error("diff", "bad --host '': give a host name as "
						       "pushed");
			host = optarg;
			break;
		case OPT_BY:
			if (report_parse_by(optarg, &o.by) < 0 || o.by == REPORT_BY_CGROUP)
				return cmd_usage_error("diff", "bad --by '%s': use binary, symbol "
						       "or line", optarg);
			break;
		case OPT_FORMAT:
			if (output_parse_format(optarg, &fmt) < 0)
				return cmd_usage_error("diff", "bad --format '%s': use text, csv "
						       "or json", optarg);
			break;
		case OPT_LIMIT:
			if (parse_u64(optarg, &v) < 0 || v > SIZE_MAX)
				return cmd_usage_error("diff", "bad --limit '%s': give a number of "
						       "rows (0: all)", optarg);
			limit = (size_t)v;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cmd_usage_error("diff", "option %s needs a value: see 'strobe diff "
					       "--help'", cmd_bad_option(argc, argv, optbuf,
									 sizeof(optbuf)));
		default:
			return cmd_usage_error("diff", "unknown option '%s': see 'strobe diff "
					       "--help'", cmd_bad_option(argc, argv, optbuf,
									 sizeof(optbuf)));
		}
	}
	if (o.where && argc - optind <= 1) {
		ret = where_diff(dbpath, source, host, &o, argc - optind ? argv[optind] : NULL,
				 fmt, limit);
		filteropt_free(&o);
		return ret;
	}
	if (argc - optind != 2)
		return cmd_usage_error("diff", "%s: give two session ids, A B ('strobe "
				       "sessions' lists them)%s", argc - optind < 2 ?
				       "missing session" : "too many arguments", argc - optind < 2 ?
				       ", or one with --where" : "");
	if (is_window(argv[optind]) || is_window(argv[optind + 1])) {
		if ((rc = window_diff(dbpath, source, host, &o, argv + optind, &d)) >= 0)
			return rc;
		ret = print_diff(d, &o, fmt, limit);
		diff_free(d);
		filteropt_free(&o);
		return ret;
	}
	rc = source ? fleet_sides(dbpath, host, &o, argv + optind, side, hn) :
		      local_sides(host, &o, argv + optind, side);
	if (rc >= 0) {
		free(hn[0]);
		free(hn[1]);
		return rc;
	}
	rc = source_open(&(struct source_spec){ .url = source, .db = source ? NULL : dbpath ?
						 dbpath : cmd_default_db() }, &src, &err);
	if (rc < 0) {
		free(hn[0]);
		free(hn[1]);
		if (rc == SOURCE_BAD_SPEC)
			return cmd_usage_error("diff", "bad --source: %s", err.msg);
		fprintf(stderr, "strobe diff: %s\n", err.msg);
		return 1;
	}
	if (!source) {
		/* on stderr, when it is a terminal and this takes long */
		progress_init(&prog, "strobe diff", STDERR_FILENO, 0, "samples");
		o.progress = &prog;
	}
	rc = source_diff(&src, &side[0], &side[1], &o, filtered, &d, &err);
	progress_done(o.progress);
	o.progress = NULL;
	source_close(&src);
	free(hn[0]);
	free(hn[1]);
	if (rc == -2)
		return cmd_usage_error("diff", "%s", err.msg);
	if (rc < 0) {
		fprintf(stderr, "strobe diff: %s\n", err.msg);
		return 1;
	}

	ret = print_diff(d, &o, fmt, limit);
	diff_free(d);
	filteropt_free(&o);
	return ret;
}
