/*
 * cmd_onsets.c - "strobe onsets": when an event's rate or a metric of a
 * recorded session changed level, how sure that is, and by how much; and
 * "strobe phases": the session cut there, each phase's hot spots and what
 * grew or shrank against the one before.
 *
 * This file parses the options (the filters through filteropt.h, the
 * series through seriesopt.h as plot's; the two commands share all but
 * --by and --top, which are the hot spots' for phases), opens the session
 * (lib/query/source.h), has lib/query/series.c compute the events' or
 * metric's series at a fine bucket (seriesonsets_bucket() by default),
 * and lib/query/seriesonsets.c (onsets: PELT with a penalty from the
 * series' own noise) or lib/query/phases.c (phases: the cuts, then
 * report_window() and diff_build_windows() per phase) make the table it
 * writes (output.h).
 */
#include "config.h"
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "filteropt.h"
#include "phases.h"
#include "progress.h"
#include "series.h"
#include "seriesonsets.h"
#include "seriesopt.h"
#include "source.h"

static const char usage_text[] =
	"usage: strobe onsets [--db PATH] [--session ID] (--event EV[,EV...] | --metric NAME|EXPR)\n"
	"                     [--by cpu|pid|binary|symbol|cgroup] [--top N]\n"
	"                     [--pid PID[@START]] [--comm NAME] [--binary PATH]\n"
	"                     [--cgroup PATH] [--from T] [--to T] [--bucket MS]\n"
	"                     [--min-shift X] [--no-demangle] [--format text|csv|json]\n"
	"\n"
	"Find when an event's rate, or a metric, of a recorded session (default: the\n"
	"latest) changed level: its change points, each with its time, the 95%\n"
	"uncertainty of that time, the levels per bucket before and after, the\n"
	"relative shift and a confidence.  The series is the one 'strobe plot' draws\n"
	"(the same --event, --metric, filters and --by, each group segmented on its\n"
	"own), at a fine bucket: by default about 20 samples per bucket, at least\n"
	"1 ms and at least 50 buckets (--bucket: in ms, or with a unit like 500us).\n"
	"The change points are the exact optimum of a mean-change cost with a\n"
	"penalty (PELT, Killick et al. 2012, with the modified BIC of Zhang and\n"
	"Siegmund 2007) scaled by the noise estimated from the series itself;\n"
	"counts are variance-stabilised first.  No threshold is needed; --min-shift\n"
	"X (e.g. 0.1) merges away changes of less than X relative shift.  A level\n"
	"lasts at least 5 buckets; two steps the same way less than 10 buckets apart\n"
	"are one change (a ramp); buckets with samples lost or throttled are left out.\n"
	"Columns: time_ns (CLOCK_MONOTONIC, as 'strobe export'), time_s (since the\n"
	"session start), uncertainty_ms, before, after, shift ((after - before) /\n"
	"|before|), confidence (0..1, a permutation test), series.\n";

static const char phases_usage_text[] =
	"usage: strobe phases [--db PATH] [--session ID] (--event EV[,EV...] | --metric NAME|EXPR)\n"
	"                     [--pid PID[@START]] [--comm NAME] [--binary PATH]\n"
	"                     [--cgroup PATH] [--from T] [--to T] [--bucket MS]\n"
	"                     [--min-shift X] [--by binary|symbol|line] [--top N]\n"
	"                     [--no-demangle] [--format text|csv|json]\n"
	"\n"
	"Cut a recorded session (default: the latest) into phases at the change points\n"
	"of its events' rates or of a metric (those 'strobe onsets' finds, of every\n"
	"event given, merged), and give each phase its window, its levels, its top\n"
	"hot spots (--by, default symbol; --top, default 3) and, against the phase\n"
	"before, the row whose share grew most and the one that shrank most beyond\n"
	"sampling noise (as 'strobe diff ID@A ID@B' of the two windows).\n"
	"Columns: phase, from_ns, to_ns (CLOCK_MONOTONIC), time_s, duration_s,\n"
	"samples, levels (\"EVENT=MEAN PER BUCKET; ...\"), top (\"NAME PERCENT%; ...\"),\n"
	"grew, grew_delta_percent, shrank, shrank_delta_percent (points).\n";

enum {
	OPT_DB = 256, OPT_FORMAT,
};

static const struct option long_opts[] = {
	{ "db",		required_argument, NULL, OPT_DB },
	FILTEROPT_LONG_SESSION,
	SERIESOPT_LONG_EVENT,
	SERIESOPT_LONG_METRIC,
	SERIESOPT_LONG_BY,
	SERIESOPT_LONG_TOP,
	FILTEROPT_LONG_PID,
	FILTEROPT_LONG_COMM,
	FILTEROPT_LONG_BINARY,
	FILTEROPT_LONG_CGROUP,
	FILTEROPT_LONG_FROM,
	FILTEROPT_LONG_TO,
	FILTEROPT_LONG_NO_DEMANGLE,
	SERIESOPT_LONG_BUCKET,
	SERIESOPT_LONG_MIN_SHIFT,
	{ "format",	required_argument, NULL, OPT_FORMAT },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct onsets_cmd {
	const char *cmd;		/* "onsets" or "phases" */
	int phases;
	const char *dbpath;
	struct seriesopt so;		/* --event, --metric, --bucket, ... */
	enum report_by by;		/* phases: the hot spots' */
	int top;
	struct report_opts filt;
	struct series_req req;
	struct onsets_opts oo;
	enum output_format fmt;
	struct source input;
	struct series_source src;
	struct series *s;
};

static int phases;	/* the command is strobe phases (for fail()) */

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int fail(const char *fmt, ...)
{
	va_list ap;

	fputs(phases ? "strobe phases: " : "strobe onsets: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* The series, its failures said as the options name them. */
static int compute(struct onsets_cmd *c)
{
	struct error err = { "" };
	struct progress prog;
	int ret;

	if (!c->req.opts.bucket_ns)
		c->req.opts.bucket_ns = seriesonsets_session_bucket(&c->src.session, &c->req.opts);
	progress_init(&prog, phases ? "strobe phases" : "strobe onsets", STDERR_FILENO, 0,
		      "samples");
	c->req.opts.progress = &prog;
	ret = series_compute_said(&c->src, &c->req, &c->s, &err);
	progress_done(&prog);
	c->req.opts.progress = NULL;
	if (!ret)
		return 0;
	fail("%s", err.msg);
	return ret == SERIES_UNCOVERED ? 2 : 1;
}

static int onsets_main(struct onsets_cmd *c)
{
	struct error err = { "" };
	struct table *t;
	int ret, nsessions, nhosts;

	if (source_open(&(struct source_spec){ .session = c->req.opts.session,
					       .db = c->dbpath ? c->dbpath : cmd_default_db() },
			&c->input, &err) < 0 ||
	    source_series(&c->input, &c->src, &nsessions, &nhosts, &err) < 0)
		return fail("%s", err.msg);
	ret = compute(c);
	if (ret)
		return ret;
	if (c->s->t->note[0])
		fprintf(stderr, "strobe %s: note: %s\n", c->cmd, c->s->t->note);
	if (c->phases) {
		struct report_opts ro = c->filt;
		struct phases_opts po = {
			.metric = c->req.metric != NULL, .onsets = c->oo, .ro = &ro,
			.top = c->top,
		};

		ro.session = c->src.session.id;
		ro.by = c->by;
		t = phases_table(c->input.db, c->s, &po, c->fmt, &err);
	} else {
		t = seriesonsets_table(c->s, c->req.metric != NULL, &c->oo, c->fmt, &err);
	}
	if (!t)
		return fail("%s", err.msg);
	if (!c->phases && !table_rows(t) && c->fmt == OUTPUT_TEXT)
		fprintf(stderr, "strobe onsets: no change of level in %zu buckets of %g ms\n",
			c->s->t->nbuckets, (double)c->s->t->bucket_ns / 1e6);
	ret = table_write(t, c->fmt, stdout) < 0 || fflush(stdout) ? fail("writing failed") : 0;
	table_free(t);
	return ret;
}

/* Option o: -1 to go on, else the exit status. */
static int parse_option(struct onsets_cmd *c, int o, int argc, char **argv)
{
	char optbuf[256];
	uint64_t v;

	switch (o) {
	case OPT_DB:
		c->dbpath = optarg;
		break;
	case SOPT_BY:	/* phases: the hot spots' */
		if (report_parse_by(optarg, &c->by) < 0 || c->by == REPORT_BY_CGROUP)
			return cmd_usage_error("phases", "bad --by '%s': use binary, symbol or line",
					       optarg);
		break;
	case SOPT_TOP:	/* phases: the hot spots' */
		if (parse_u64(optarg, &v) < 0 || v < 1 || v > 64)
			return cmd_usage_error("phases", "bad --top '%s': give a number of hot "
					       "spots from 1 to 64", optarg);
		c->top = (int)v;
		break;
	case OPT_FORMAT:
		if (output_parse_format(optarg, &c->fmt) < 0)
			return cmd_usage_error(c->cmd, "bad --format '%s': use text, csv or json",
					       optarg);
		break;
	case 'h':
		fputs(c->phases ? phases_usage_text : usage_text, stdout);
		return 0;
	case ':':
		return cmd_usage_error(c->cmd, "option %s needs a value: see 'strobe %s "
				       "--help'", cmd_bad_option(argc, argv, optbuf,
								 sizeof(optbuf)), c->cmd);
	default:
		return cmd_usage_error(c->cmd, "unknown option '%s': see 'strobe %s --help'",
				       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)),
				       c->cmd);
	}
	return -1;
}

/* strobe onsets (is_phases 0) or strobe phases (1). */
static int onsets_cmd_run(int argc, char **argv, int is_phases)
{
	static const struct filteropt fopt[2] = {
		{ "onsets", FILTEROPT_AT_PLOT }, { "phases", FILTEROPT_AT_PLOT },
	};
	struct onsets_cmd *c = xcalloc(1, sizeof(*c));
	int o, ret = -1;

	phases = is_phases;
	c->phases = is_phases;
	c->cmd = is_phases ? "phases" : "onsets";
	c->so.cmd = c->cmd;
	c->filt.pid = -1;
	c->filt.mode = REPORT_ALL;
	c->req.opts.pid = -1;
	c->req.opts.top = TL_TOP_DEFAULT;
	c->by = REPORT_BY_SYMBOL;
	c->top = 3;
	opterr = 0;
	optind = 0;
	while ((o = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		ret = filteropt_parse(&fopt[is_phases], o, optarg, argv[optind - 1], &c->filt);
		if (ret == 2)
			goto out;
		if (ret == 1) {
			ret = -1;
			continue;
		}
		/* phases: --by and --top are the hot spots' */
		if (!(is_phases && (o == SOPT_BY || o == SOPT_TOP)) &&
		    (ret = seriesopt_parse(&c->so, o, optarg, &c->req, &c->req.opts))) {
			if (ret == 2)
				goto out;
			ret = -1;
			continue;
		}
		if ((ret = parse_option(c, o, argc, argv)) >= 0)
			goto out;
	}
	filteropt_timeline(&c->filt, &c->req.opts);
	if (optind < argc)
		ret = cmd_usage_error(c->cmd, "unexpected argument '%s': see 'strobe %s --help'",
				      argv[optind], c->cmd);
	else if (!c->so.nevents == !c->req.metric)
		ret = cmd_usage_error(c->cmd, "give one of --event EV[,EV...] or --metric EXPR");
	else if (filteropt_check_nonempty(c->cmd, &c->filt))
		ret = 2;
	if (ret >= 0)
		goto out;
	seriesopt_req(&c->so, &c->req);
	c->oo.min_shift = c->so.min_shift;
	ret = onsets_main(c);
out:
	seriesopt_free(&c->so, &c->req);
	series_free(c->s);
	source_close(&c->input);
	free(c);
	return ret;
}

int cmd_onsets(int argc, char **argv)
{
	return onsets_cmd_run(argc, argv, 0);
}

int cmd_phases(int argc, char **argv)
{
	return onsets_cmd_run(argc, argv, 1);
}
