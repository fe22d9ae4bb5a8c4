/*
 * cmd_plot.c - "strobe plot": events or a metric of a recorded session over
 * time, drawn by gnuplot (PNG, SVG, PDF, or text on the terminal), or
 * written as CSV.
 *
 * This file parses the options (the filters through filteropt.h), opens
 * the source (lib/query/source.h: the local database, or with --source
 * the fleet), has lib/query/series.c compute the series (from the
 * source's sums per time bucket), and writes them through
 * lib/query/plotfile.c: gnuplot run in a private temporary directory, or
 * the CSV; the result is moved into place only when whole, so a failed
 * plot never leaves a file behind.  --expect adds the saved probe's
 * expectations (lib/probe/probe_expect.c); see "Plots" in doc/DESIGN.md.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "expr.h"
#include "filteropt.h"
#include "metrics.h"
#include "progress.h"
#include "series.h"
#include "seriesonsets.h"
#include "seriesopt.h"
#include "plotonsets.h"
#include "plotfile.h"
#include "probe_expect.h"
#include "probe_file.h"
#include "source.h"
#include "where.h"

static const char usage_text[] =
	"usage: strobe plot [--db PATH] [--session ID] (--event EV[,EV...] | --metric NAME|EXPR)\n"
	"                   [--by cpu|pid|binary|symbol|cgroup] [--top N] [--pid PID[@START]]\n"
	"                   [--comm NAME] [--binary PATH] [--symbol NAME] [--cgroup PATH]\n"
	"                   [--from T] [--to T] [--bucket MS]\n"
	"                   [--wall] [--size WxH] [--title TEXT] [--no-demangle]\n"
	"                   (-o FILE.png|.svg|.pdf|.csv | --term) [--data FILE.csv]\n"
	"                   [--expect] [--onsets] [--onsets-min-shift X]\n"
	"                   [--where 'EXPR OP X' [--invert] [--where-sample]\n"
	"                   [--where-bucket T]]\n"
	"       strobe plot --source URL [--host NAME] [--session ID]\n"
	"                   (--event EV[,EV...] | --metric NAME|EXPR)\n"
	"                   [--by cpu|pid|binary|symbol|host] [--top N] [--bucket MS]\n"
	"                   [--pid PID] [--comm NAME] [--binary PATH]\n"
	"                   [--from T] [--to T] [--wall] [--size WxH] [--title TEXT]\n"
	"                   (-o FILE.png|.svg|.pdf|.csv | --term) [--data FILE.csv]\n"
	"\n"
	"Plot counting events, or a metric over them, per time bucket of a recorded\n"
	"session (default: the latest).  An event's series is the sum of its counter\n"
	"increases attributed to the samples of each bucket that pass the filters;\n"
	"'samples' (or the session's sampling event, e.g. cpu-clock) counts samples.\n"
	"--metric takes arithmetic over event names, e.g. 1000*cache-misses/instructions,\n"
	"page-faults/samples, instructions/cycles, page-faults/seconds ('seconds' is\n"
	"the bucket's length); write a minus with spaces (a - b: a-b is one name) and\n"
	"other names in double quotes (\"msr/tsc/\"); a division by zero leaves a gap.\n"
	"--metric NAME takes a metric of the catalogue by name (IPC, dTLB-MPKI,\n"
	"page-faults-per-sec, ...: 'strobe list --metrics' lists them): its expression\n"
	"and scale, its unit on the y axis; the session must have counted its events\n"
	"(-e of strobe record; an alias such as faults for page-faults will do).\n"
	"--by splits each series into the top N (--top, default 8) CPUs, processes,\n"
	"binaries or symbols and 'other'; a pid that was several processes is a\n"
	"series per process, 'pid PID@START', and --pid PID@START keeps one.\n"
	"--by cgroup: a series per cgroup (v2 path, \"/a/b\": each process's latest\n"
	"sample's); --cgroup PATH keeps the processes of that cgroup, or with a\n"
	"trailing '/' of it and every cgroup below it.\n"
	"T is a time since the session start (1.5,\n"
	"1.5s, 250ms); --bucket is in ms (or give a unit: 500us, 1s), by default about\n"
	"500 buckets over the range rounded to 1, 2 or 5 x 10^k ms.  The x axis is\n"
	"seconds since the session start, or with --wall the local wall-clock time.\n"
	"Intervals where samples were lost are shaded, markers are labelled lines.\n"
	"-o (--output) writes a PNG, SVG or PDF (--size in pixels, default 1000x500)\n"
	"or the series as CSV; --term draws on the terminal (--size in characters); --data\n"
	"also writes the CSV ('-': stdout).  Needs gnuplot (gnuplot-nox) except for CSV.\n"
	"--expect draws what the latest 'strobe probe' expects: its levels in the key,\n"
	"and, where the session's USDT markers carry working-set sizes (PROVIDER:size\n"
	"with the pages as first argument, as tests/workloads/tlbwalk fires; or\n"
	"PROVIDER:bytes with bytes), a line where the working sets pass the dTLB's\n"
	"or the L2 TLB's reach or a cache's size, labelled e.g. 'dTLB reach 64 pages'.\n"
	"--onsets marks each line's change points, those 'strobe onsets' finds with the\n"
	"same options (at its own default bucket, about 20 samples each, unless\n"
	"--bucket is given): an arrow in the line's colour from the level before to\n"
	"the level after, labelled with the shift (+85%), the levels drawn either side;\n"
	"--onsets-min-shift X (implies --onsets) is 'strobe onsets --min-shift X'.\n"
	"--source URL plots sessions pushed to the ClickHouse fleet at URL\n"
	"(http://HOST:8123/?database=strobe; credentials as for 'strobe push'), bucketed\n"
	"there: --host NAME keeps that host's sessions, --session ID session ID of each\n"
	"host, neither every pushed session.  Several sessions are summed per bucket\n"
	"of the time since each one's start; --by host: a series per host.  With\n"
	"--source the filters --pid PID, --comm and --binary (not --pid PID@START,\n"
	"--symbol or --cgroup), no --by cgroup, --expect, --onsets or --no-demangle; --wall\n"
	"needs one session, and lost intervals are not shaded.\n"
	FILTEROPT_WHERE_HELP
	"With --where the series are of the samples it keeps only: an event is 0\n"
	"and a metric of samples undefined (a gap) where it keeps none (no --onsets).\n";

enum {
	OPT_DB = 256, OPT_SYMBOL, OPT_WALL, OPT_SIZE, OPT_TITLE, OPT_TERM, OPT_DATA, OPT_RAW_SCAN, OPT_EXPECT,
	OPT_SOURCE, OPT_HOST, OPT_ONSETS,
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
	{ "symbol",	required_argument, NULL, OPT_SYMBOL },
	FILTEROPT_LONG_CGROUP,
	FILTEROPT_LONG_FROM,
	FILTEROPT_LONG_TO,
	FILTEROPT_LONG_WHERE,
	SERIESOPT_LONG_BUCKET,
	{ "wall",	no_argument,	   NULL, OPT_WALL },
	{ "size",	required_argument, NULL, OPT_SIZE },
	{ "title",	required_argument, NULL, OPT_TITLE },
	{ "output",	required_argument, NULL, 'o' },
	{ "term",	no_argument,	   NULL, OPT_TERM },
	{ "data",	required_argument, NULL, OPT_DATA },
	/* not in the usage: sums from the raw samples even when the session's
	 * time sums could give them (tests and benchmarks compare the two) */
	{ "raw-scan",	no_argument,	   NULL, OPT_RAW_SCAN },
	FILTEROPT_LONG_NO_DEMANGLE,
	{ "expect",	no_argument,	   NULL, OPT_EXPECT },
	{ "onsets",	no_argument,	   NULL, OPT_ONSETS },
	SERIESOPT_LONG_ONSETS_MIN_SHIFT,
	{ "source",	required_argument, NULL, OPT_SOURCE },
	{ "host",	required_argument, NULL, OPT_HOST },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct plot {
	/* options */
	const char *dbpath, *output, *data, *title;
	struct seriesopt so;		/* --event, --metric (into req), --by,
					 * --top, --bucket (into to), ... */
	struct report_opts filt;	/* the filters (filteropt.h), into to */
	struct timeline_opts to;
	enum plotfile_fmt fmt;
	int wall, width, height;
	struct probe_result *probe;	/* --expect: the saved probe */
	const char *source, *host;	/* --source: the fleet */
	char fleet_what[128];		/* several sessions: "N sessions of M hosts" */
	/* results */
	struct source input;		/* the local database, or the fleet */
	struct series_source src;
	struct series_req req;
	struct series *s;
	/* --expect on a plot: the onsets and the summary drawn */
	struct probe_expect_line on[PROBE_MAX_ROWS];
	struct gnuplot_mark expect_on[PROBE_MAX_ROWS];
	size_t nexpect;
	char expect_summary[400];
	/* --onsets: the change points drawn, found at onsets_bucket_ns */
	int onsets;
	struct gnuplot_onset *onset;
	size_t nonsets;
	int64_t onsets_bucket_ns;
	struct plotfile pf;		/* the private directory */
};

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int fail(const char *fmt, ...)
{
	va_list ap;

	fputs("strobe plot: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* ---- output (plotfile.h) ---- */

/* --expect: the probe's onsets among the session's markers, and its
 * summary, for the gnuplot script; how many onsets. */
static size_t expect_lines(struct plot *p)
{
	const struct timeline *t = p->s->t;
	struct probe_marker *m = xcalloc(t->nmarkers + 1, sizeof(*m));

	for (size_t i = 0; i < t->nmarkers; i++) {
		m[i].time_ns = t->markers[i].time_ns;
		m[i].name = t->markers[i].name;
		m[i].args = t->markers[i].args;
	}
	p->nexpect = probe_expect_onsets(p->probe, m, t->nmarkers, p->on, PROBE_MAX_ROWS);
	free(m);
	for (size_t i = 0; i < p->nexpect; i++) {
		p->expect_on[i].time_ns = p->on[i].time_ns;
		p->expect_on[i].label = p->on[i].label;
	}
	probe_expect_summary(p->probe, p->expect_summary, sizeof(p->expect_summary));
	return p->nexpect;
}

static int render(struct plot *p)
{
	struct gnuplot_opts go = {
		.width = p->width, .height = p->height, .wall = p->wall,
		.title = p->title, .fleet_what = p->fleet_what, .expect = p->probe != NULL,
		.expect_on = p->expect_on, .nexpect = p->nexpect,
		.expect_summary = p->expect_summary,
		.onsets = p->onsets, .onset = p->onset, .nonsets = p->nonsets,
		.onsets_bucket_ns = p->onsets_bucket_ns,
	};
	struct error err = { "" };

	if (plotfile_render(&p->pf, p->fmt, p->s, &p->req, &go, p->output, &err) < 0)
		return fail("%s", err.msg);
	return 0;
}

static int write_csv_file(struct plot *p, const char *tmpname, const char *dst)
{
	struct error err = { "" };

	if (plotfile_csv(&p->pf, p->s, p->wall, tmpname, dst, &err) < 0)
		return fail("%s", err.msg);
	return 0;
}

/* ---- the source and the series ---- */

/* The source (source.h): the fleet (--source), or the local database;
 * its selection as the series source p->src. */
static int open_source(struct plot *p)
{
	struct error err = { "" };
	int nsessions = 1, nhosts = 1;

	if (source_open(&(struct source_spec){ .url = p->source, .host = p->host,
					       .session = p->to.session,
					       .db = p->source ? NULL : p->dbpath ? p->dbpath :
						     cmd_default_db() }, &p->input, &err) < 0 ||
	    source_series(&p->input, &p->src, &nsessions, &nhosts, &err) < 0)
		return fail("%s", err.msg);
	if (!p->source)
		return 0;
	if (p->wall && nsessions > 1) {
		fail("--wall needs one session (the wall clock of several sessions is not one "
		     "axis): give --host and --session");
		return 2;
	}
	if (nsessions > 1)
		snprintf(p->fleet_what, sizeof(p->fleet_what), "%d sessions of %d host%s",
			 nsessions, nhosts, nhosts == 1 ? "" : "s");
	else
		p->fleet_what[0] = 0;
	return 0;
}

/* The series of r (lib/query/series.c) into *out, its failures said as
 * plot's options name them; exit status 2 for a metric the session did
 * not count. */
static int compute_req(struct plot *p, struct series_req *r, struct series **out)
{
	struct error err = { "" };
	struct progress prog;
	int ret;

	/* on stderr, when it is a terminal and this takes long */
	progress_init(&prog, "strobe plot", STDERR_FILENO, 0, "samples");
	r->opts.progress = &prog;
	if (p->filt.where) {
		struct report_opts fo = p->filt;

		fo.session = p->src.session.id;
		fo.progress = &prog;
		if (where_select_db(p->filt.where, p->input.db, &fo, &err) < 0) {
			progress_done(&prog);
			r->opts.progress = NULL;
			fail("%s", err.msg);
			return 1;
		}
		r->opts.where = p->filt.where;
	}
	ret = series_compute_said(&p->src, r, out, &err);
	progress_done(&prog);
	r->opts.progress = NULL;
	if (!ret)
		return 0;
	fail("%s", err.msg);
	return ret == SERIES_UNCOVERED ? 2 : 1;
}

static int compute(struct plot *p)
{
	seriesopt_req(&p->so, &p->req);
	p->req.opts = p->to;
	return compute_req(p, &p->req, &p->s);
}

/*
 * --onsets: the change points 'strobe onsets' finds with the same
 * options: at --bucket when given (the plot's), else at onsets' own
 * default bucket (seriesonsets_session_bucket(): about 20 samples per
 * bucket), on a series of that bucket when it is not the plot's.
 */
static int find_onsets(struct plot *p)
{
	struct onsets_opts oo = { .min_shift = p->so.min_shift };
	struct series_req r = p->req;
	struct series *os = p->s;
	struct error err = { "" };
	int ret = 0;

	r.opts = p->to;
	if (!r.opts.bucket_ns)
		r.opts.bucket_ns = seriesonsets_session_bucket(&p->src.session, &r.opts);
	if (r.opts.bucket_ns != p->s->t->bucket_ns && (ret = compute_req(p, &r, &os)))
		return ret;
	p->onsets_bucket_ns = os->t->bucket_ns;
	if (plotonsets_find(p->s, os, p->req.metric != NULL, &oo, &p->onset, &p->nonsets,
			    &err) < 0)
		ret = fail("--onsets: %s", err.msg);
	if (os != p->s)
		series_free(os);
	return ret;
}

static int plot_main(struct plot *p)
{
	struct error err = { "" };
	const struct timeline *t;
	int ret;

	ret = open_source(p);
	if (!ret)
		ret = compute(p);
	if (ret)
		return ret;
	t = p->s->t;
	if (p->filt.where) {
		char wn[1200];

		where_note(p->filt.where, wn, sizeof(wn));
		fprintf(stderr, "strobe plot: note: %s\n", TEXT_SAFE(wn));
	}
	if (t->note[0])
		fprintf(stderr, "strobe plot: note: %s\n", t->note);
	if (t->debuginfod_note[0])
		fprintf(stderr, "strobe plot: note: %s\n", t->debuginfod_note);
	if (p->probe) {
		if (p->fmt == PLOTFILE_CSV || (p->fmt == PLOTFILE_NONE && p->data))
			fprintf(stderr, "strobe plot: note: --expect draws on a plot only: the CSV "
				"is the same without it\n");
		else if (!expect_lines(p))
			fprintf(stderr, "strobe plot: note: --expect: no markers of session %lld "
				"pass the probe's sizes (PROVIDER:size with pages, PROVIDER:bytes "
				"with bytes): only the probe's summary is drawn\n",
				(long long)p->src.session.id);
	}
	if (p->onsets) {
		if (p->fmt == PLOTFILE_CSV || (p->fmt == PLOTFILE_NONE && p->data))
			fprintf(stderr, "strobe plot: note: --onsets draws on a plot only: the CSV "
				"is the same without it ('strobe onsets' writes them as CSV)\n");
		else if ((ret = find_onsets(p)))
			return ret;
	}

	if (plotfile_begin(&p->pf, &err) < 0)
		return fail("%s", err.msg);
	/* the plot first: if gnuplot fails, no file at all is written */
	ret = 0;
	if (p->fmt == PLOTFILE_PNG || p->fmt == PLOTFILE_SVG || p->fmt == PLOTFILE_PDF ||
	    p->fmt == PLOTFILE_TERM)
		ret = render(p);
	if (!ret && p->fmt == PLOTFILE_CSV)
		ret = write_csv_file(p, "plot.csv", p->output);
	if (!ret && p->data)
		ret = write_csv_file(p, "data.csv", p->data);
	return ret;
}

/* ---- options ---- */

/* An option of what the timeline selects but the filters of filteropt.h
 * and the series of seriesopt.h: the symbol.  -1 to go on, else the exit
 * status. */
static int parse_window_option(struct plot *p, int c, int argc, char **argv)
{
	char optbuf[256];

	switch (c) {
	case OPT_SYMBOL:
		if (!*optarg)
			return cmd_usage_error("plot", "bad --symbol '': give a symbol name");
		p->to.symbol = optarg;
		break;
	default:
		return cmd_usage_error("plot", "unknown option '%s': see 'strobe plot --help'",
				       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
	}
	return -1;
}

/* Option c (getopt_long's, its value in optarg): -1 to go on, else the
 * exit status.  One case per option, flat, which makes it long. */
static int parse_option(struct plot *p, int c, int argc, char **argv, int *term)
{
	char optbuf[256];

	switch (c) {
	case OPT_DB:
		p->dbpath = optarg;
		break;
	case OPT_WALL:
		p->wall = 1;
		break;
	case OPT_SIZE: {
		unsigned w, h;
		char x;

		if (sscanf(optarg, "%u%c%u", &w, &x, &h) != 3 || (x != 'x' && x != 'X') ||
		    w < 20 || h < 10 || w > 20000 || h > 20000)
			return cmd_usage_error("plot", "bad --size '%s': give WIDTHxHEIGHT, "
					       "e.g. 1000x500 (pixels) or 120x35 (--term)",
					       optarg);
		p->width = (int)w;
		p->height = (int)h;
		break;
	}
	case OPT_TITLE:
		p->title = optarg;
		break;
	case 'o':
		if (p->output)
			return cmd_usage_error("plot", "-o given twice: give one output file");
		p->fmt = plotfile_format(optarg);
		if (p->fmt == PLOTFILE_NONE)
			return cmd_usage_error("plot", "bad -o '%s': the file name must end in "
					       ".png, .svg, .pdf or .csv", optarg);
		p->output = optarg;
		break;
	case OPT_TERM:
		*term = 1;
		break;
	case OPT_RAW_SCAN:
		p->to.raw = 1;
		break;
	case OPT_ONSETS:
		p->onsets = 1;
		break;
	case OPT_EXPECT:
		if (!p->probe)
			p->probe = xcalloc(1, sizeof(*p->probe));
		break;
	case OPT_DATA:
		if (!*optarg)
			return cmd_usage_error("plot", "bad --data '': give a CSV file name or -");
		p->data = optarg;
		break;
	case OPT_SOURCE:
		p->source = optarg;
		break;
	case OPT_HOST:
		if (!*optarg)
			return cmd_usage_error("plot", "bad --host '': give the host name "
					       "its sessions were pushed with");
		p->host = optarg;
		break;
	case 'h':
		fputs(usage_text, stdout);
		return 0;
	case ':':
		return cmd_usage_error("plot", "option %s needs a value: see 'strobe plot --help'",
				       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
	default:
		return parse_window_option(p, c, argc, argv);
	}
	return -1;
}

/* The options together, after parse_option(): -1 to go on, else the exit
 * status (2: a usage error).  Sets what follows from them (--term's format,
 * the default size). */
static int check_options(struct plot *p, int argc, char **argv, int term)
{
	struct error err = { "" };

	if (optind < argc)
		return cmd_usage_error("plot", "unexpected argument '%s': see 'strobe plot --help'",
				       argv[optind]);
	if (p->so.nevents && p->req.metric)
		return cmd_usage_error("plot", "--event and --metric exclude each other: give one "
				       "of them");
	if (p->source) {
		const char *no = p->dbpath ? "--db" : p->to.has_pid_at ? "--pid PID@START" :
				 p->to.symbol ? "--symbol" :
				 p->to.cgroup ? "--cgroup" : p->probe ? "--expect" :
				 p->onsets ? (p->so.min_shift_given ? "--onsets-min-shift" :
					      "--onsets") :
				 p->to.no_demangle ? "--no-demangle" : p->to.raw ? "--raw-scan" :
				 p->to.by == TL_BY_CGROUP ? "--by cgroup" :
				 p->filt.where ? "--where" : NULL;

		if (source_check(&(struct source_spec){ .url = p->source }, &err) < 0)
			return cmd_usage_error("plot", "bad --source: %s", err.msg);
		if (p->dbpath)
			return cmd_usage_error("plot", "--source reads the fleet, --db a local "
					       "database: give one of them");
		if (no)
			return cmd_usage_error("plot", "%s is not supported with --source: fleet plots "
					       "take --pid PID, --comm and --binary, no symbol "
					       "or cgroup filters, probe or onsets (doc/FLEET.md, "
					       "\"Fleet timelines\")", no);
	} else if (p->host || p->to.by == TL_BY_HOST) {
		return cmd_usage_error("plot", "%s is of fleet plots: give --source URL",
				       p->host ? "--host" : "--by host");
	}
	if (!p->so.nevents && !p->req.metric)
		return cmd_usage_error("plot", "nothing to plot: give --event EV[,EV...] or "
				       "--metric EXPR");
	if (p->onsets && p->filt.where)
		return cmd_usage_error("plot", "--onsets and --where exclude each other: the "
				       "onsets are strobe onsets', which segments every bucket");
	if (term && p->output)
		return cmd_usage_error("plot", "-o and --term exclude each other: give one of them");
	if (term)
		p->fmt = PLOTFILE_TERM;
	if (!p->output && !term && !p->data)
		return cmd_usage_error("plot", "no output: give -o FILE.png|.svg|.pdf|.csv, "
				       "--term or --data FILE.csv");
	if (p->data && p->output && !strcmp(p->data, p->output))
		return cmd_usage_error("plot", "-o and --data name the same file");
	if (term && p->data && !strcmp(p->data, "-"))
		return cmd_usage_error("plot", "--term and --data - both write to stdout: give "
				       "--data a file name");
	if (filteropt_check_nonempty("plot", &p->filt) || filteropt_check_where("plot", &p->filt))
		return 2;
	if (p->width < 0) {
		p->width = term ? 120 : 1000;
		p->height = term ? 35 : 500;
	}
	return -1;
}

/* --expect: the saved probe into p->probe.  -1 to go on, else the exit status. */
static int load_probe(struct plot *p)
{
	struct error err = { "" };
	char path[4200];
	int got;

	if (probe_file_path(path, sizeof(path), &err) < 0)
		return fail("--expect: %s", err.msg);
	got = probe_file_load(path, p->probe, &err);
	if (got < 0)
		return fail("--expect: %s: run 'strobe probe' again", err.msg);
	if (!got)
		return fail("no probe saved: run 'strobe probe' first (--expect reads %s)", path);
	return -1;
}

int cmd_plot(int argc, char **argv)
{
	static const struct filteropt fopt = { "plot", FILTEROPT_AT_PLOT };
	struct plot *p = xcalloc(1, sizeof(*p));
	int c, ret, term = 0;

	p->filt.pid = -1;
	p->filt.mode = REPORT_ALL;
	p->to.pid = -1;
	p->to.top = TL_TOP_DEFAULT;
	p->width = -1;
	p->so.cmd = "plot";
	p->so.by_host = 1;
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":ho:", long_opts, NULL)) != -1) {
		ret = filteropt_parse(&fopt, c, optarg, argv[optind - 1], &p->filt);
		if (ret == 2)
			return 2;
		if (!ret)
			ret = seriesopt_parse(&p->so, c, optarg, &p->req, &p->to);
		if (ret == 2)
			return 2;
		if (!ret && (ret = parse_option(p, c, argc, argv, &term)) >= 0)
			return ret;
	}
	filteropt_timeline(&p->filt, &p->to);
	p->onsets |= p->so.min_shift_given;	/* --onsets-min-shift: --onsets */
	ret = check_options(p, argc, argv, term);
	if (ret < 0 && p->probe)
		ret = load_probe(p);
	if (ret >= 0)
		return ret;
	ret = plot_main(p);

	plotfile_end(&p->pf);
	seriesopt_free(&p->so, &p->req);
	free(p->probe);
	free(p->onset);
	series_free(p->s);
	source_close(&p->input);
	filteropt_free(&p->filt);
	free(p);
	return ret;
}

