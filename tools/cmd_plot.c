/*
 * cmd_plot.c - "strobe plot": events or a metric of a recorded session over
 * time, drawn by gnuplot (PNG, SVG, PDF, or text on the terminal), or
 * written as CSV.
 *
 * lib/query/timeline.c sums the filtered samples per time bucket; this file turns
 * the sums into series (one per event, or the --metric expression, split by
 * --by into the top N groups and "other"), writes them with a gnuplot
 * script into a private temporary directory, runs gnuplot there, and moves
 * the result into place only when gnuplot succeeded, so a failed plot never
 * leaves a file behind.  Lost intervals are shaded rectangles, markers are
 * labelled vertical lines, --expect adds the saved probe's expectations
 * (lib/probe/probe_expect.c); see "Plots" in doc/DESIGN.md.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cmd.h"
#include "db.h"
#include "expr.h"
#include "metrics.h"
#include "procset.h"
#include "cgset.h"
#include "progress.h"
#include "timeline.h"
#include "probe_expect.h"
#include "probe_file.h"
#include "chclient.h"
#include "fleetplot.h"
#include "push.h"

static const char usage_text[] =
	"usage: strobe plot [--db PATH] [--session ID] (--event EV[,EV...] | --metric NAME|EXPR)\n"
	"                   [--by cpu|pid|binary|symbol|cgroup] [--top N] [--pid PID[@START]]\n"
	"                   [--comm NAME] [--binary PATH] [--symbol NAME] [--cgroup PATH]\n"
	"                   [--from T] [--to T] [--bucket MS]\n"
	"                   [--wall] [--size WxH] [--title TEXT] [--no-demangle]\n"
	"                   (-o FILE.png|.svg|.pdf|.csv | --term) [--data FILE.csv]\n"
	"                   [--expect]\n"
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
	"--source URL plots sessions pushed to the ClickHouse fleet at URL\n"
	"(http://HOST:8123/?database=strobe; credentials as for 'strobe push'), bucketed\n"
	"there: --host NAME keeps that host's sessions, --session ID session ID of each\n"
	"host, neither every pushed session.  Several sessions are summed per bucket\n"
	"of the time since each one's start; --by host: a series per host.  With\n"
	"--source the filters --pid PID, --comm and --binary (not --pid PID@START,\n"
	"--symbol or --cgroup), no --by cgroup, --expect or --no-demangle; --wall\n"
	"needs one session, and lost intervals are not shaded.\n";

enum {
	OPT_DB = 256, OPT_SESSION, OPT_EVENT, OPT_METRIC, OPT_BY, OPT_TOP, OPT_PID,
	OPT_COMM, OPT_BINARY, OPT_SYMBOL, OPT_FROM, OPT_TO, OPT_BUCKET, OPT_WALL,
	OPT_SIZE, OPT_TITLE, OPT_TERM, OPT_DATA, OPT_RAW_SCAN,
	OPT_NO_DEMANGLE, OPT_CGROUP, OPT_EXPECT, OPT_SOURCE, OPT_HOST,
};

static const struct option long_opts[] = {
	{ "db",		required_argument, NULL, OPT_DB },
	{ "session",	required_argument, NULL, OPT_SESSION },
	{ "event",	required_argument, NULL, OPT_EVENT },
	{ "metric",	required_argument, NULL, OPT_METRIC },
	{ "by",		required_argument, NULL, OPT_BY },
	{ "top",	required_argument, NULL, OPT_TOP },
	{ "pid",	required_argument, NULL, OPT_PID },
	{ "comm",	required_argument, NULL, OPT_COMM },
	{ "binary",	required_argument, NULL, OPT_BINARY },
	{ "symbol",	required_argument, NULL, OPT_SYMBOL },
	{ "cgroup",	required_argument, NULL, OPT_CGROUP },
	{ "from",	required_argument, NULL, OPT_FROM },
	{ "to",		required_argument, NULL, OPT_TO },
	{ "bucket",	required_argument, NULL, OPT_BUCKET },
	{ "wall",	no_argument,	   NULL, OPT_WALL },
	{ "size",	required_argument, NULL, OPT_SIZE },
	{ "title",	required_argument, NULL, OPT_TITLE },
	{ "output",	required_argument, NULL, 'o' },
	{ "term",	no_argument,	   NULL, OPT_TERM },
	{ "data",	required_argument, NULL, OPT_DATA },
	/* not in the usage: sums from the raw samples even when the session's
	 * time sums could give them (tests and benchmarks compare the two) */
	{ "raw-scan",	no_argument,	   NULL, OPT_RAW_SCAN },
	{ "no-demangle", no_argument,	   NULL, OPT_NO_DEMANGLE },
	{ "expect",	no_argument,	   NULL, OPT_EXPECT },
	{ "source",	required_argument, NULL, OPT_SOURCE },
	{ "host",	required_argument, NULL, OPT_HOST },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

enum fmt { FMT_NONE, FMT_PNG, FMT_SVG, FMT_PDF, FMT_CSV, FMT_TERM };

#define MAX_EVENTS 32
#define MAX_LABELS 100		/* markers beyond this get a line, no label */
#define MAX_MARKER_LINES 40	/* more markers: every k-th is drawn */
#define MAX_SHADES 2000		/* lost spans drawn */

struct series {
	char title[512];
	double *v;		/* nbuckets */
};

struct plot {
	/* options */
	const char *dbpath, *metric_src, *output, *data, *title;
	const struct metric *catalog;	/* --metric NAME of the catalogue */
	char *metric_text;		/* its expression, scale written in */
	char *events[MAX_EVENTS];
	int nevents;
	struct timeline_opts to;
	enum fmt fmt;
	int wall, width, height;
	struct probe_result *probe;	/* --expect: the saved probe */
	const char *source, *host;	/* --source: the fleet (fleetplot.h) */
	struct chclient *fleet;
	struct fleetplot *fp;
	char fleet_what[128];		/* several sessions: "N sessions of M hosts" */
	/* results */
	struct db *db;
	struct db_session session;
	int evidx[MAX_EVENTS];	/* value index per event */
	struct expr *metric;
	struct timeline *t;
	struct series *series;
	size_t nseries;
	char tmpdir[64];
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

static const char *path_ext(const char *p)
{
	const char *base = strrchr(p, '/'), *dot;

	base = base ? base + 1 : p;
	dot = strrchr(base, '.');
	return dot && dot != base ? dot + 1 : "";
}

static enum fmt fmt_of(const char *path)
{
	const char *x = path_ext(path);

	if (!strcasecmp(x, "png"))
		return FMT_PNG;
	if (!strcasecmp(x, "svg"))
		return FMT_SVG;
	if (!strcasecmp(x, "pdf"))
		return FMT_PDF;
	if (!strcasecmp(x, "csv"))
		return FMT_CSV;
	return FMT_NONE;
}

/* --bucket: a number of ms ("10", "0.5"), or with a unit ("500us", "1s"). */
static int parse_bucket(const char *s, int64_t *ns)
{
	char *end;
	double v;

	if (!((s[0] >= '0' && s[0] <= '9') || (s[0] == '.' && s[1] >= '0' && s[1] <= '9')))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -1;
	if (!*end) {
		if (v > 9e12)
			return -1;
		*ns = (int64_t)llround(v * 1e6);
	} else if (parse_duration_ns(s, ns) < 0) {
		return -1;
	}
	return *ns >= 1000 ? 0 : -1;	/* at least 1 us */
}

/* The session's events and sample count, for messages. */
static void events_list(const struct db_session *s, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < s->nr_events && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s, ", s->events[i].name);
	if (n < len)
		snprintf(buf + n, len - n, "samples (%s)", s->sample_event);
}

/* Value index of an event name: 1 + i for counting event i, TL_SAMPLES
 * for "samples" or the sampling event, -1 for none. */
static int event_value(const struct db_session *s, const char *name)
{
	for (int i = 0; i < s->nr_events; i++)
		if (!strcasecmp(s->events[i].name, name))
			return 1 + i;
	if (!strcasecmp(name, "samples") || !strcasecmp(name, s->sample_event))
		return TL_SAMPLES;
	return -1;
}

/* A catalogue metric's event name: the session's event it is, by name or
 * alias (metrics.h: metric_event_is), as a value index, or -1. */
static int catalog_value(const struct db_session *s, const char *name)
{
	int v = event_value(s, name);

	for (int i = 0; v < 0 && i < s->nr_events; i++)
		if (metric_event_is(name, s->events[i].name))
			v = 1 + i;
	return v;
}

static int catalog_has(void *ctx, const char *name)
{
	return catalog_value(ctx, name) >= 0;
}

/* Metric names: event values, and "seconds" as index nv (the bucket length). */
static int metric_lookup(void *ctx, const char *name)
{
	const struct plot *p = ctx;
	int v = p->catalog ? catalog_value(&p->session, name) : event_value(&p->session, name);

	if (v < 0 && !strcasecmp(name, "seconds"))
		return 1 + p->session.nr_events;
	return v;
}

static struct series *series_add(struct plot *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static struct series *series_add(struct plot *p, const char *fmt, ...)
{
	struct series *s;
	va_list ap;

	p->series = xrealloc(p->series, (p->nseries + 1) * sizeof(*p->series));
	s = &p->series[p->nseries++];
	va_start(ap, fmt);
	vsnprintf(s->title, sizeof(s->title), fmt, ap);
	va_end(ap);
	s->v = xcalloc(p->t->nbuckets, sizeof(double));
	return s;
}

/* The length of bucket b in seconds, cut at the range's end. */
static double bucket_seconds(const struct timeline *t, size_t b)
{
	int64_t from = t->from_ns + (int64_t)b * t->bucket_ns;
	int64_t to = MIN(from + t->bucket_ns, t->to_ns);

	return to > from ? (to - from) / 1e9 : t->bucket_ns / 1e9;
}

/* The values of bucket b of group g (NULL: all; OTHER: all minus the top
 * of rank rk) into vars, plus "seconds". */
#define OTHER ((const struct timeline_group *)1)

static void bucket_vars(const struct timeline *t, const struct timeline_group *g,
			const struct timeline_rank *rk, size_t b, double *vars)
{
	for (int i = 0; i < t->nv; i++) {
		if (g == OTHER) {
			double v = timeline_value(t, NULL, b, i);

			for (size_t k = 0; k < rk->n; k++)
				v -= timeline_value(t, &t->groups[rk->idx[k]], b, i);
			vars[i] = v < 0 ? 0 : v;
		} else {
			vars[i] = timeline_value(t, g, b, i);
		}
	}
	vars[t->nv] = bucket_seconds(t, b);
}

static void make_series(struct plot *p)
{
	const struct timeline *t = p->t;
	double vars[TL_MAXV + 1];
	const char *noun = t->key_noun;
	size_t b, k;

	if (p->metric) {
		const struct timeline_rank *rk = timeline_rank_of(t, TL_SAMPLES);
		struct series *s;

		if (p->to.by == TL_BY_NONE || !rk) {
			s = series_add(p, "%s", p->metric_src);
			for (b = 0; b < t->nbuckets; b++) {
				bucket_vars(t, NULL, NULL, b, vars);
				s->v[b] = expr_eval(p->metric, vars);
			}
			return;
		}
		for (k = 0; k <= rk->n; k++) {
			const struct timeline_group *g = k < rk->n ? &t->groups[rk->idx[k]] : OTHER;

			if (g == OTHER && !rk->rest)
				break;
			if (g == OTHER)
				s = series_add(p, "other (%zu more %s)", rk->rest, noun);
			else
				s = series_add(p, "%s", g->name);
			for (b = 0; b < t->nbuckets; b++) {
				bucket_vars(t, g, rk, b, vars);
				s->v[b] = expr_eval(p->metric, vars);
			}
		}
		return;
	}
	for (int e = 0; e < p->nevents; e++) {
		int v = p->evidx[e];
		const struct timeline_rank *rk = timeline_rank_of(t, v);
		struct series *s;

		if (p->to.by == TL_BY_NONE || !rk) {
			s = series_add(p, "%s", p->events[e]);
			for (b = 0; b < t->nbuckets; b++)
				s->v[b] = timeline_value(t, NULL, b, v);
			continue;
		}
		for (k = 0; k <= rk->n; k++) {
			const struct timeline_group *g = k < rk->n ? &t->groups[rk->idx[k]] : OTHER;
			const char *pre = p->nevents > 1 ? p->events[e] : "";
			const char *sep = p->nevents > 1 ? ": " : "";

			if (g == OTHER && !rk->rest)
				break;
			if (g == OTHER)
				s = series_add(p, "%s%sother (%zu more %s)", pre, sep, rk->rest, noun);
			else
				s = series_add(p, "%s%s%s", pre, sep, g->name);
			for (b = 0; b < t->nbuckets; b++) {
				bucket_vars(t, g, rk, b, vars);
				s->v[b] = vars[v];
			}
		}
		if (!rk->n)	/* nothing of this event: still show it */
			series_add(p, "%s", p->events[e]);
	}
}

/* ---- output ---- */

/* Local time of a CLOCK_MONOTONIC instant as seconds since the epoch with
 * the local UTC offset added (gnuplot formats times as UTC). */
static double wall_local(const struct plot *p, int64_t mono_ns)
{
	int64_t wall = mono_ns + p->session.wall_offset_ns;
	time_t secs = (time_t)(wall / 1000000000);
	struct tm tm;

	localtime_r(&secs, &tm);
	return wall / 1e9 + (double)tm.tm_gmtoff;
}

/* x coordinate of an instant. */
static double xval(const struct plot *p, int64_t mono_ns)
{
	if (p->wall)
		return wall_local(p, mono_ns);
	return (mono_ns - p->session.start_ns) / 1e9;
}

/* gnuplot rectangles over sp[0..n) in style (at most MAX_SHADES: every
 * per-th span then reaches to the end of the per-1 after it). */
static void shade_spans(const struct plot *p, FILE *f, const struct timeline_span *sp,
			size_t n, const char *style)
{
	size_t per = n > MAX_SHADES ? (n + MAX_SHADES - 1) / MAX_SHADES : 1;

	for (size_t i = 0; i < n; i += per) {
		size_t last = MIN(i + per, n) - 1;

		fprintf(f, "set object rect from %.9f, graph 0 to %.9f, graph 1 behind "
			"%s noborder\n", xval(p, sp[i].from_ns), xval(p, sp[last].to_ns), style);
	}
}

static int write_csv(const struct plot *p, FILE *f)
{
	const struct timeline *t = p->t;

	fputs("from_s,to_s,from_ns,to_ns", f);
	if (p->wall)
		fputs(",wall", f);
	for (size_t i = 0; i < p->nseries; i++) {
		fputc(',', f);
		csv_write_field(f, p->series[i].title, CSV_TEXT);
	}
	fputc('\n', f);
	for (size_t b = 0; b < t->nbuckets; b++) {
		int64_t from = t->from_ns + (int64_t)b * t->bucket_ns;
		int64_t to = MIN(from + t->bucket_ns, t->to_ns);

		fprintf(f, "%.9f,%.9f,%lld,%lld", (from - p->session.start_ns) / 1e9,
			(to - p->session.start_ns) / 1e9, (long long)from, (long long)to);
		if (p->wall) {
			int64_t w = from + p->session.wall_offset_ns;
			time_t secs = (time_t)(w / 1000000000);
			struct tm tm;
			char buf[64], tz[16];

			localtime_r(&secs, &tm);
			strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
			strftime(tz, sizeof(tz), "%z", &tm);
			fprintf(f, ",%s.%03d%s", buf, (int)(w % 1000000000 / 1000000), tz);
		}
		for (size_t i = 0; i < p->nseries; i++) {
			double v = p->series[i].v[b];

			if (isnan(v))
				fputc(',', f);
			else
				fprintf(f, ",%.10g", v);
		}
		fputc('\n', f);
	}
	return fflush(f) == EOF || ferror(f) ? -1 : 0;
}

static const char *ms_text(int64_t ns, char *buf, size_t len)
{
	if (ns >= 1000000000 && ns % 1000000000 == 0)
		snprintf(buf, len, "%lld s", (long long)(ns / 1000000000));
	else if (ns >= 1000000)
		snprintf(buf, len, "%.9g ms", ns / 1e6);
	else
		snprintf(buf, len, "%.9g us", ns / 1e3);
	return buf;
}

/* 1, 2 or 5 x 10^k at least x. */
static double nice_step(double x)
{
	double p = pow(10, floor(log10(x)));

	if (p >= x)
		return p;
	if (2 * p >= x)
		return 2 * p;
	if (5 * p >= x)
		return 5 * p;
	return 10 * p;
}

static void filters_text(const struct plot *p, char *buf, size_t len)
{
	const struct timeline_opts *o = &p->to;
	size_t n = 0;

#define ADD(...) do { if (n < len) n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__); } while (0)
	buf[0] = 0;
	if (o->pid >= 0)
		ADD("%spid %lld", n ? ", " : "", (long long)o->pid);
	if (o->pid >= 0 && o->has_pid_at)
		ADD(" at %.9g s", o->pid_at_ns / 1e9);
	if (o->comm)
		ADD("%scomm %s", n ? ", " : "", o->comm);
	if (o->binary)
		ADD("%sbinary %s", n ? ", " : "", o->binary);
	if (o->symbol)
		ADD("%ssymbol %s", n ? ", " : "", o->symbol);
	if (o->cgroup)
		ADD("%scgroup %s", n ? ", " : "", o->cgroup);
#undef ADD
}

/* The probe's onsets among the session's markers. */
static size_t expect_onsets(const struct plot *p, struct probe_expect_line *out, size_t max)
{
	const struct timeline *t = p->t;
	struct probe_marker *m = xcalloc(t->nmarkers + 1, sizeof(*m));
	size_t n;

	for (size_t i = 0; i < t->nmarkers; i++) {
		m[i].time_ns = t->markers[i].time_ns;
		m[i].name = t->markers[i].name;
		m[i].args = t->markers[i].args;
	}
	n = probe_expect_onsets(p->probe, m, t->nmarkers, out, max);
	free(m);
	return n;
}

/*
 * --expect: a solid red vertical line with its label at each expected
 * onset (after the markers, so it is drawn over their dashed lines); the
 * probe's summary is a key entry (write_expect_key), below the plot where
 * it hides nothing.
 */
static void write_expect(const struct plot *p, FILE *f)
{
	struct probe_expect_line on[PROBE_MAX_ROWS];
	size_t n = expect_onsets(p, on, PROBE_MAX_ROWS);

	if (p->fmt != FMT_TERM)
		fputs("set style line 101 lc rgb \"#c02020\" dt 1 lw 2\n", f);
	for (size_t i = 0; i < n; i++) {
		double x = xval(p, on[i].time_ns);

		fprintf(f, "set arrow from %.9f, graph 0 to %.9f, graph 1 nohead front %s\n",
			x, x, p->fmt == FMT_TERM ? "" : "ls 101");
		fputs("set label ", f);
		gnuplot_write_string(f, on[i].label);
		if (p->fmt == FMT_TERM)
			fprintf(f, " at %.9f, graph 0.5 left front offset character 1,0\n", x);
		else
			fprintf(f, " at %.9f, graph 0.5 rotate by 90 center front offset "
				"character 1.2,0 textcolor rgb \"#c02020\"\n", x);
	}
}

static void write_expect_key(const struct plot *p, FILE *f)
{
	char sum[400];

	probe_expect_summary(p->probe, sum, sizeof(sum));
	fprintf(f, ", \\\n     keyentry with lines %s title ", p->fmt == FMT_TERM ? "" : "ls 101");
	gnuplot_write_string(f, sum);
}

static int write_script(const struct plot *p, const char *dat, const char *out, FILE *f)
{
	const struct timeline *t = p->t;
	const struct db_session *s = &p->session;
	double x0 = xval(p, t->from_ns);
	double x1 = xval(p, t->from_ns + (int64_t)t->nbuckets * t->bucket_ns);
	char title[1200], sub[600], filt[400], bk[32];
	size_t n = 0, i, stride = (t->nmarkers + MAX_MARKER_LINES - 1) / MAX_MARKER_LINES;
	int labels = 0;

	switch (p->fmt) {
	case FMT_PNG:
		fprintf(f, "set terminal pngcairo size %d,%d noenhanced font \"sans,10\"\n",
			p->width, p->height);
		break;
	case FMT_SVG:
		fprintf(f, "set terminal svg size %d,%d noenhanced font \"sans,10\" "
			"background rgb \"white\"\n", p->width, p->height);
		break;
	case FMT_PDF:
		fprintf(f, "set terminal pdfcairo size %.2fin,%.2fin noenhanced font \"sans,7\"\n",
			p->width / 100.0, p->height / 100.0);
		break;
	case FMT_TERM:
		fprintf(f, "set terminal dumb size %d,%d noenhanced\n", p->width, p->height);
		break;
	default:
		return -1;
	}
	fputs("set output ", f);
	gnuplot_write_string(f, out);
	fputc('\n', f);

	/* title: what, which session; then the bucket and filters */
	if (p->title) {
		snprintf(title, sizeof(title), "%s", p->title);
	} else {
		if (p->fleet_what[0]) {
			n = (size_t)snprintf(title, sizeof(title), "strobe fleet, %s", p->fleet_what);
		} else {
			n = (size_t)snprintf(title, sizeof(title), "strobe session %lld",
					      (long long)s->id);
			if (s->name[0])
				n += (size_t)snprintf(title + n, sizeof(title) - MIN(n, sizeof(title)),
						      " \"%s\"", s->name);
		}
		/* then what is plotted */
		if (p->catalog)
			snprintf(title + MIN(n, sizeof(title)), sizeof(title) - MIN(n, sizeof(title)),
				 ": %s = %s", p->catalog->name, p->metric_text);
		else if (p->metric)
			snprintf(title + MIN(n, sizeof(title)), sizeof(title) - MIN(n, sizeof(title)),
				 ": %s", p->metric_src);
		else
			for (int e = 0; e < p->nevents && n < sizeof(title); e++)
				n += (size_t)snprintf(title + n, sizeof(title) - n, "%s%s",
						      e ? ", " : ": ", p->events[e]);
	}
	filters_text(p, filt, sizeof(filt));
	n = (size_t)snprintf(sub, sizeof(sub), "%s buckets", ms_text(t->bucket_ns, bk, sizeof(bk)));
	if (filt[0] && n < sizeof(sub))
		n += (size_t)snprintf(sub + n, sizeof(sub) - n, "; %s", filt);
	if (p->to.by != TL_BY_NONE && n < sizeof(sub))
		n += (size_t)snprintf(sub + n, sizeof(sub) - n, "; top %d %s by %s, the rest as other",
				      p->to.top, t->key_noun,
				      p->metric ? "samples" : p->nevents == 1 ? p->events[0] :
				      "each event");
	if (stride > 1 && n < sizeof(sub))
		n += (size_t)snprintf(sub + n, sizeof(sub) - n, "; every %zuth of %zu markers drawn",
				      stride, t->nmarkers);
	fputs("set title ", f);
	gnuplot_write_string(f, title);
	fputs(" . \"\\n\" . ", f);
	gnuplot_write_string(f, sub);
	fputc('\n', f);

	if (p->wall) {
		double span = x1 - x0, step = nice_step(span / 8);
		char dstr[64];
		time_t secs = (time_t)((t->from_ns + s->wall_offset_ns) / 1000000000);
		struct tm tm;

		localtime_r(&secs, &tm);
		strftime(dstr, sizeof(dstr), "%Y-%m-%d, UTC%z", &tm);
		fprintf(f, "set xtics time %.9g\n", step);
		fprintf(f, "set format x \"%s\" timedate\n", step >= 1 ? "%H:%M:%S" :
			step >= 0.01 ? "%H:%M:%.2S" : "%H:%M:%.3S");
		fputs("set xlabel ", f);
		{
			char xl[128];

			snprintf(xl, sizeof(xl), "local time (%s)", dstr);
			gnuplot_write_string(f, xl);
		}
		fputc('\n', f);
	} else if (p->fleet_what[0]) {
		fputs("set xlabel \"seconds since the start of each session\"\n", f);
	} else {
		fprintf(f, "set xlabel \"seconds since the start of session %lld\"\n",
			(long long)s->id);
	}
	fputs("set ylabel ", f);
	if (p->catalog) {
		char yl[160];

		snprintf(yl, sizeof(yl), "%s (%s)", p->catalog->name, p->catalog->unit);
		gnuplot_write_string(f, yl);
	} else if (p->metric) {
		gnuplot_write_string(f, p->metric_src);
	} else {
		char yl[64];

		snprintf(yl, sizeof(yl), "per %s", ms_text(t->bucket_ns, bk, sizeof(bk)));
		gnuplot_write_string(f, yl);
	}
	fputc('\n', f);
	fprintf(f, "set xrange [%.9f:%.9f]\n", x0, x1);
	fputs(p->metric ? "set yrange [*:*]\n" : "set yrange [0:*]\n", f);
	fputs("set grid\nset key below Left reverse\nset border 3\nset tics nomirror\n", f);
	if (p->fmt != FMT_TERM)
		fputs("set style line 100 lc rgb \"#2060c0\" dt 2 lw 1\n", f);

	/* lost intervals shaded, sampling groups not counting hatched, behind
	 * everything */
	shade_spans(p, f, t->lost, t->nlost, "fc rgb \"#f4c7c3\" fs solid 0.6");
	shade_spans(p, f, t->unsched, t->nunsched, "fc rgb \"#b0b0b0\" fs pattern 4");
	/*
	 * markers: dashed vertical lines with their names (a USDT hit's label
	 * also shows its first argument).  More than MAX_MARKER_LINES would
	 * hide the data: every k-th is drawn then, and the title says so.
	 */
	for (i = 0; i < t->nmarkers; i += stride ? stride : 1) {
		double x = xval(p, t->markers[i].time_ns);
		char label[300];

		fprintf(f, "set arrow from %.9f, graph 0 to %.9f, graph 1 nohead front %s\n",
			x, x, p->fmt == FMT_TERM ? "" : "ls 100");
		if (labels < MAX_LABELS) {
			size_t n = strcspn(t->markers[i].args, ",");

			snprintf(label, sizeof(label), "%s%s%.*s", t->markers[i].name,
				 n ? " " : "", (int)n, t->markers[i].args);
			fputs("set label ", f);
			gnuplot_write_string(f, label);
			if (p->fmt == FMT_TERM)	/* no rotated text on a terminal */
				fprintf(f, " at %.9f, graph 0.97 left front offset character 2,0\n", x);
			else
				fprintf(f, " at %.9f, graph 0.98 rotate by 90 right front offset "
					"character -0.4,0 textcolor rgb \"#2060c0\" font \",8\"\n", x);
			labels++;
		}
	}

	if (p->probe)
		write_expect(p, f);

	fputs("plot ", f);
	for (i = 0; i < p->nseries; i++) {
		fprintf(f, "%s", i ? ", \\\n     " : "");
		gnuplot_write_string(f, i ? "" : dat);
		fprintf(f, " using 1:%zu with steps lw 1.5 title ", i + 2);
		gnuplot_write_string(f, p->series[i].title);
	}
	if (t->nlost) {
		char lt[128];

		if (t->lost_total && t->throttles)
			snprintf(lt, sizeof(lt), "samples lost (%llu), sampling throttled (%llux)",
				 (unsigned long long)t->lost_total, (unsigned long long)t->throttles);
		else if (t->lost_total)
			snprintf(lt, sizeof(lt), "samples lost (%llu)",
				 (unsigned long long)t->lost_total);
		else
			snprintf(lt, sizeof(lt), "sampling throttled (%llux)",
				 (unsigned long long)t->throttles);
		fputs(", \\\n     keyentry with boxes fc rgb \"#f4c7c3\" fs solid 0.6 title ", f);
		gnuplot_write_string(f, lt);
	}
	if (t->nunsched) {
		char ut[128];

		snprintf(ut, sizeof(ut), "sampling group not counting (%.3f s)",
			 t->unsched_ns / 1e9);
		fputs(", \\\n     keyentry with boxes fc rgb \"#b0b0b0\" fs pattern 4 title ", f);
		gnuplot_write_string(f, ut);
	}
	if (p->probe)
		write_expect_key(p, f);
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

/* Data for gnuplot: x, then one column per series; a last row at the end
 * of the last bucket repeats its values so that steps draw it. */
static int write_dat(const struct plot *p, FILE *f)
{
	const struct timeline *t = p->t;

	for (size_t b = 0; b <= t->nbuckets; b++) {
		size_t vb = b < t->nbuckets ? b : t->nbuckets - 1;

		fprintf(f, "%.9f", xval(p, t->from_ns + (int64_t)b * t->bucket_ns));
		for (size_t i = 0; i < p->nseries; i++) {
			double v = p->series[i].v[vb];

			if (isnan(v))
				fputs(" NaN", f);
			else
				fprintf(f, " %.10g", v);
		}
		fputc('\n', f);
	}
	return fflush(f) == EOF || ferror(f) ? -1 : 0;
}

/* The first line of gnuplot's stderr that says what went wrong. */
static void gnuplot_error(const char *errfile, char *buf, size_t len)
{
	FILE *f = fopen(errfile, "r");
	char line[1024], first[1024] = "";

	snprintf(buf, len, "no message");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!first[0] && line[strspn(line, " \t^")])
			snprintf(first, sizeof(first), "%s", line);
		if (strstr(line, " line ") && strchr(line, ':')) {
			const char *m = strstr(line, " line ");

			snprintf(buf, len, "%s", m + 1);
			fclose(f);
			return;
		}
	}
	fclose(f);
	if (first[0])
		snprintf(buf, len, "%s", first);
}

static int run_gnuplot(const struct plot *p, const char *script)
{
	const char *gp = getenv("STROBE_GNUPLOT");
	char errfile[128], msg[600];
	int status, ex[2];
	pid_t pid;
	ssize_t r;
	int code = 0;

	if (!gp || !*gp)
		gp = "gnuplot";
	snprintf(errfile, sizeof(errfile), "%s/gnuplot.err", p->tmpdir);
	if (pipe2(ex, O_CLOEXEC) < 0)
		return fail("running gnuplot: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(ex[0]);
		close(ex[1]);
		return fail("running gnuplot: %s", strerror(errno));
	}
	if (pid == 0) {
		int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int nul = open("/dev/null", O_RDWR);

		if (fd >= 0)
			dup2(fd, 2);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
		}
		if (chdir(p->tmpdir) == 0)
			execlp(gp, gp, script, (char *)NULL);
		code = errno;
		if (write(ex[1], &code, sizeof(code)) < 0)
			_exit(127);
		_exit(127);
	}
	close(ex[1]);
	r = read(ex[0], &code, sizeof(code));
	close(ex[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r == (ssize_t)sizeof(code)) {
		if (code == ENOENT)
			return fail("gnuplot not found%s%s: install it (apt-get install "
				    "gnuplot-nox) or set STROBE_GNUPLOT, or write the series "
				    "with -o FILE.csv", strcmp(gp, "gnuplot") ? " at " : "",
				    strcmp(gp, "gnuplot") ? gp : "");
		return fail("cannot run %s: %s", gp, strerror(code));
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		gnuplot_error(errfile, msg, sizeof(msg));
		if (WIFSIGNALED(status))
			return fail("gnuplot was killed by signal %d: %s", WTERMSIG(status), msg);
		return fail("gnuplot failed (exit %d): %s", WEXITSTATUS(status), msg);
	}
	return 0;
}

/* Copy file src to dst (created 0644, replaced). */
static int copy_file(const char *src, const char *dst, FILE *to)
{
	char buf[65536];
	FILE *in = fopen(src, "rb"), *out = to;
	size_t n;
	int ret = 0;

	if (!in)
		return -1;
	if (!out)
		out = fopen(dst, "wb");
	if (!out) {
		fclose(in);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n) {
			ret = -1;
			break;
		}
	if (ferror(in))
		ret = -1;
	fclose(in);
	if (to) {
		if (fflush(to) == EOF)
			ret = -1;
	} else if (fclose(out) == EOF) {
		ret = -1;
	}
	if (ret < 0 && !to)
		unlink(dst);
	return ret;
}

/* Put the finished file src at dst: rename, or copy across file systems. */
static int install(const char *src, const char *dst)
{
	int e;

	if (rename(src, dst) == 0)
		return 0;
	e = errno;
	if (e != EXDEV)
		return fail("writing %s: %s", dst, strerror(e));
	if (copy_file(src, dst, NULL) < 0)
		return fail("writing %s: %s", dst, strerror(errno));
	return 0;
}

static void rm_tmpdir(const char *dir)
{
	static const char *const files[] = {
		"plot.gp", "plot.dat", "plot.png", "plot.svg", "plot.pdf", "plot.txt",
		"plot.csv", "data.csv", "gnuplot.err",
	};
	char path[128];

	if (!dir[0])
		return;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

static int write_csv_file(const struct plot *p, const char *tmpname, const char *dst)
{
	char path[128];
	FILE *f;

	if (!strcmp(dst, "-")) {
		if (write_csv(p, stdout) < 0)
			return fail("writing the CSV: %s", strerror(errno));
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s", p->tmpdir, tmpname);
	f = fopen(path, "w");
	if (!f)
		return fail("writing %s: %s", path, strerror(errno));
	if (write_csv(p, f) < 0) {
		fclose(f);
		return fail("writing %s: %s", path, strerror(errno));
	}
	if (fclose(f) == EOF)
		return fail("writing %s: %s", path, strerror(errno));
	return install(path, dst);
}

static int render(struct plot *p)
{
	static const char *const ext[] = {
		[FMT_PNG] = "png", [FMT_SVG] = "svg", [FMT_PDF] = "pdf", [FMT_TERM] = "txt",
	};
	char dat[128], script[128], out[128];
	FILE *f;
	struct stat st;

	snprintf(dat, sizeof(dat), "%s/plot.dat", p->tmpdir);
	snprintf(script, sizeof(script), "%s/plot.gp", p->tmpdir);
	snprintf(out, sizeof(out), "%s/plot.%s", p->tmpdir, ext[p->fmt]);
	f = fopen(dat, "w");
	if (!f || write_dat(p, f) < 0 || fclose(f) == EOF)
		return fail("writing %s: %s", dat, strerror(errno));
	f = fopen(script, "w");
	if (!f || write_script(p, "plot.dat", out, f) < 0 || fclose(f) == EOF)
		return fail("writing %s: %s", script, strerror(errno));
	if (run_gnuplot(p, script))
		return 1;
	if (stat(out, &st) < 0 || st.st_size == 0) {
		char errfile[128], msg[600];

		snprintf(errfile, sizeof(errfile), "%s/gnuplot.err", p->tmpdir);
		gnuplot_error(errfile, msg, sizeof(msg));
		return fail("gnuplot wrote no output: %s", msg);
	}
	if (p->fmt == FMT_TERM) {
		if (copy_file(out, NULL, stdout) < 0)
			return fail("writing to stdout: %s", strerror(errno));
		return 0;
	}
	return install(out, p->output) ? 1 : 0;
}

static int parse_events(struct plot *p, const char *arg)
{
	char *copy = xstrdup(arg), *save = NULL, *tok;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		if (!*tok)
			continue;
		if (p->nevents == MAX_EVENTS) {
			free(copy);
			return -1;
		}
		p->events[p->nevents++] = xstrdup(tok);
	}
	free(copy);
	return p->nevents ? 0 : -1;
}

/* --source: connect, check the schema, read the sessions (p->session:
 * them as one); -1 with the one-line error in p->fleet_what. */
static int fleet_open(struct plot *p)
{
	struct chclient_url url;
	struct chclient_cred cred;
	struct error err = { "" };

	if (chclient_url_parse(p->source, &url, &err) < 0 ||
	    chclient_credentials(&cred, &err) < 0)
		goto fail;
	p->fleet = chclient_new(&url, &cred, &err);
	memset(cred.password, 0, sizeof(cred.password));
	if (!p->fleet || push_check_schema(p->fleet, &err) < 0)
		goto fail;
	p->fp = fleetplot_open(p->fleet, p->host, p->to.session, &err);
	if (!p->fp)
		goto fail;
	p->session = *fleetplot_session(p->fp);
	return 0;
fail:
	snprintf(p->fleet_what, sizeof(p->fleet_what), "%s", err.msg);
	return -1;
}

static int plot_main(struct plot *p)
{
	struct error err = { "" };
	struct progress prog;
	char evs[1200];
	int ret;

	if (p->source) {
		if (fleet_open(p) < 0)
			return fail("%s", p->fleet_what);
		if (p->wall && fleetplot_nsessions(p->fp) > 1) {
			fail("--wall needs one session (the wall clock of several sessions is not one "
			     "axis): give --host and --session");
			return 2;
		}
		if (fleetplot_nsessions(p->fp) > 1)
			snprintf(p->fleet_what, sizeof(p->fleet_what), "%d sessions of %d host%s",
				 fleetplot_nsessions(p->fp), fleetplot_nhosts(p->fp),
				 fleetplot_nhosts(p->fp) == 1 ? "" : "s");
		else
			p->fleet_what[0] = 0;
	} else {
		p->db = db_open(p->dbpath ? p->dbpath : cmd_default_db(), DB_READ, &err);
		if (!p->db)
			return fail("%s", err.msg);
		if (db_session_get(p->db, p->to.session, &p->session, &err) < 0)
			return fail("%s", err.msg);
		p->to.session = p->session.id;
	}
	events_list(&p->session, evs, sizeof(evs));

	if (p->catalog) {
		char what[64];

		snprintf(what, sizeof(what), "session %lld", (long long)p->session.id);
		if (metric_covered(p->catalog, catalog_has, &p->session, what, &err) < 0) {
			fail("%s", err.msg);
			return 2;
		}
	}
	if (p->metric) {
		if (expr_bind(p->metric, metric_lookup, p, &err) < 0)
			return fail("--metric: %s: session %lld has %s, and 'seconds' (metrics "
				    "by name: 'strobe list --metrics')",
				    err.msg, (long long)p->session.id, evs);
		p->to.nrank = 1;
		p->to.rank[0] = TL_SAMPLES;
	} else {
		for (int e = 0; e < p->nevents; e++) {
			p->evidx[e] = event_value(&p->session, p->events[e]);
			if (p->evidx[e] < 0)
				return fail("unknown event '%s' in --event: session %lld has %s",
					    p->events[e], (long long)p->session.id, evs);
			if (p->to.nrank < TL_MAXV) {
				int dup = 0;

				for (int r = 0; r < p->to.nrank; r++)
					dup |= p->to.rank[r] == p->evidx[e];
				if (!dup)
					p->to.rank[p->to.nrank++] = p->evidx[e];
			}
		}
	}
	/* on stderr, when it is a terminal and this takes long */
	progress_init(&prog, "strobe plot", STDERR_FILENO, 0, "samples");
	p->to.progress = &prog;
	p->t = p->fp ? fleetplot_timeline(p->fp, &p->to, &err) :
		       timeline_build(p->db, &p->to, &err);
	progress_done(&prog);
	p->to.progress = NULL;
	if (!p->t)
		return fail("%s", err.msg);
	if (p->t->note[0])
		fprintf(stderr, "strobe plot: note: %s\n", p->t->note);
	if (p->t->debuginfod_note[0])
		fprintf(stderr, "strobe plot: note: %s\n", p->t->debuginfod_note);
	make_series(p);
	if (p->probe) {
		struct probe_expect_line on[PROBE_MAX_ROWS];

		if (p->fmt == FMT_CSV || (p->fmt == FMT_NONE && p->data))
			fprintf(stderr, "strobe plot: note: --expect draws on a plot only: the CSV "
				"is the same without it\n");
		else if (!expect_onsets(p, on, PROBE_MAX_ROWS))
			fprintf(stderr, "strobe plot: note: --expect: no markers of session %lld "
				"pass the probe's sizes (PROVIDER:size with pages, PROVIDER:bytes "
				"with bytes): only the probe's summary is drawn\n",
				(long long)p->session.id);
	}

	snprintf(p->tmpdir, sizeof(p->tmpdir), "/tmp/strobe-plot.XXXXXX");
	if (!mkdtemp(p->tmpdir)) {
		p->tmpdir[0] = 0;
		return fail("creating a temporary directory in /tmp: %s", strerror(errno));
	}
	/* the plot first: if gnuplot fails, no file at all is written */
	ret = 0;
	if (p->fmt == FMT_PNG || p->fmt == FMT_SVG || p->fmt == FMT_PDF || p->fmt == FMT_TERM)
		ret = render(p);
	if (!ret && p->fmt == FMT_CSV)
		ret = write_csv_file(p, "plot.csv", p->output);
	if (!ret && p->data)
		ret = write_csv_file(p, "data.csv", p->data);
	return ret;
}

int cmd_plot(int argc, char **argv)
{
	struct plot *p = xcalloc(1, sizeof(*p));
	struct error err = { "" };
	char optbuf[256];
	uint64_t v;
	int c, ret, term = 0;

	p->to.pid = -1;
	p->to.top = TL_TOP_DEFAULT;
	p->width = -1;
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":ho:", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_DB:
			p->dbpath = optarg;
			break;
		case OPT_SESSION:
			if (parse_u64(optarg, &v) < 0 || v == 0 || v > INT64_MAX)
				return cmd_usage_error("plot", "bad --session '%s': give a session id "
						       "('strobe sessions' lists them)", optarg);
			p->to.session = (int64_t)v;
			break;
		case OPT_EVENT:
			if (p->nevents)
				return cmd_usage_error("plot", "--event given twice: list the events "
						       "once, separated by commas");
			if (parse_events(p, optarg) < 0)
				return cmd_usage_error("plot", "bad --event '%s': give event names "
						       "separated by commas (at most %d)", optarg,
						       MAX_EVENTS);
			break;
		case OPT_METRIC:
			if (p->metric)
				return cmd_usage_error("plot", "--metric given twice: plot one metric "
						       "at a time");
			p->catalog = metric_find(optarg);
			if (p->catalog) {
				p->metric_text = metric_expr_scaled(p->catalog);
				p->metric = expr_parse(p->metric_text, &err);
				if (!p->metric)
					return cmd_usage_error("plot", "--metric %s: %s",
							       p->catalog->name, err.msg);
				p->metric_src = p->catalog->name;
				break;
			}
			p->metric = expr_parse(optarg, &err);
			if (!p->metric)
				return cmd_usage_error("plot", "bad --metric '%s': %s", optarg, err.msg);
			p->metric_src = optarg;
			break;
		case OPT_BY:
			if (!strcmp(optarg, "host")) {
				p->to.by = TL_BY_HOST;
				break;
			}
			if (timeline_parse_by(optarg, &p->to.by) < 0)
				return cmd_usage_error("plot", "bad --by '%s': use cpu, pid, binary, "
						       "symbol, cgroup or (with --source) host",
						       optarg);
			break;
		case OPT_TOP:
			if (parse_u64(optarg, &v) < 0 || v < 1 || v > 64)
				return cmd_usage_error("plot", "bad --top '%s': give a number of series "
						       "from 1 to 64", optarg);
			p->to.top = (int)v;
			break;
		case OPT_PID: {
			int64_t at;

			if (procset_parse_pid(optarg, &p->to.pid, &at, &p->to.pid_at_slack_ns) < 0)
				return cmd_usage_error("plot", "bad --pid '%s': give a process id, or "
						       "PID@START as 'plot --by pid' labels it "
						       "(seconds since the session start)", optarg);
			p->to.has_pid_at = at >= 0;
			p->to.pid_at_ns = at;
			break;
		}
		case OPT_COMM:
			p->to.comm = optarg;
			break;
		case OPT_BINARY:
			if (!*optarg)
				return cmd_usage_error("plot", "bad --binary '': give a path or file name");
			p->to.binary = optarg;
			break;
		case OPT_SYMBOL:
			if (!*optarg)
				return cmd_usage_error("plot", "bad --symbol '': give a symbol name");
			p->to.symbol = optarg;
			break;
		case OPT_CGROUP:
			if (cgset_check_filter(optarg) < 0)
				return cmd_usage_error("plot", "bad --cgroup '%s': give a cgroup path "
						       "from the cgroup root, like /system.slice/"
						       "x.service, or a subtree like /system.slice/",
						       optarg);
			p->to.cgroup = optarg;
			break;
		case OPT_FROM:
		case OPT_TO: {
			int64_t ns;

			if (parse_duration_ns(optarg, &ns) < 0 || ns < 0)
				return cmd_usage_error("plot", "bad %s '%s': give a time since the "
						       "session start like 1.5, 1.5s or 250ms",
						       c == OPT_FROM ? "--from" : "--to", optarg);
			if (c == OPT_FROM) {
				p->to.has_from = 1;
				p->to.from_ns = ns;
			} else {
				p->to.has_to = 1;
				p->to.to_ns = ns;
			}
			break;
		}
		case OPT_BUCKET:
			if (parse_bucket(optarg, &p->to.bucket_ns) < 0)
				return cmd_usage_error("plot", "bad --bucket '%s': give a bucket length "
						       "in ms like 10 or 0.5, or with a unit like "
						       "500us or 1s (at least 1us)", optarg);
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
			p->fmt = fmt_of(optarg);
			if (p->fmt == FMT_NONE)
				return cmd_usage_error("plot", "bad -o '%s': the file name must end in "
						       ".png, .svg, .pdf or .csv", optarg);
			p->output = optarg;
			break;
		case OPT_TERM:
			term = 1;
			break;
		case OPT_RAW_SCAN:
			p->to.raw = 1;
			break;
		case OPT_NO_DEMANGLE:
			p->to.no_demangle = 1;
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
			return cmd_usage_error("plot", "unknown option '%s': see 'strobe plot --help'",
					       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
		}
	}
	if (optind < argc)
		return cmd_usage_error("plot", "unexpected argument '%s': see 'strobe plot --help'",
				       argv[optind]);
	if (p->nevents && p->metric)
		return cmd_usage_error("plot", "--event and --metric exclude each other: give one "
				       "of them");
	if (p->source) {
		const char *no = p->dbpath ? "--db" : p->to.has_pid_at ? "--pid PID@START" :
				 p->to.symbol ? "--symbol" :
				 p->to.cgroup ? "--cgroup" : p->probe ? "--expect" :
				 p->to.no_demangle ? "--no-demangle" : p->to.raw ? "--raw-scan" :
				 p->to.by == TL_BY_CGROUP ? "--by cgroup" : NULL;

		struct chclient_url url;

		if (chclient_url_parse(p->source, &url, &err) < 0)
			return cmd_usage_error("plot", "bad --source: %s", err.msg);
		if (p->dbpath)
			return cmd_usage_error("plot", "--source reads the fleet, --db a local "
					       "database: give one of them");
		if (no)
			return cmd_usage_error("plot", "%s is not supported with --source: fleet plots "
					       "take --pid PID, --comm and --binary, no symbol "
					       "or cgroup filters or probe (doc/FLEET.md, "
					       "\"Fleet timelines\")", no);
	} else if (p->host || p->to.by == TL_BY_HOST) {
		return cmd_usage_error("plot", "%s is of fleet plots: give --source URL",
				       p->host ? "--host" : "--by host");
	}
	if (!p->nevents && !p->metric)
		return cmd_usage_error("plot", "nothing to plot: give --event EV[,EV...] or "
				       "--metric EXPR");
	if (term && p->output)
		return cmd_usage_error("plot", "-o and --term exclude each other: give one of them");
	if (term)
		p->fmt = FMT_TERM;
	if (!p->output && !term && !p->data)
		return cmd_usage_error("plot", "no output: give -o FILE.png|.svg|.pdf|.csv, "
				       "--term or --data FILE.csv");
	if (p->data && p->output && !strcmp(p->data, p->output))
		return cmd_usage_error("plot", "-o and --data name the same file");
	if (term && p->data && !strcmp(p->data, "-"))
		return cmd_usage_error("plot", "--term and --data - both write to stdout: give "
				       "--data a file name");
	if (p->to.has_from && p->to.has_to && p->to.from_ns >= p->to.to_ns)
		return cmd_usage_error("plot", "empty time range: --from %.9gs is not before "
				       "--to %.9gs", p->to.from_ns / 1e9, p->to.to_ns / 1e9);
	if (p->width < 0) {
		p->width = term ? 120 : 1000;
		p->height = term ? 35 : 500;
	}

	if (p->probe) {
		char path[4200];
		int got;

		if (probe_file_path(path, sizeof(path), &err) < 0)
			return fail("--expect: %s", err.msg);
		got = probe_file_load(path, p->probe, &err);
		if (got < 0)
			return fail("--expect: %s: run 'strobe probe' again", err.msg);
		if (!got)
			return fail("no probe saved: run 'strobe probe' first (--expect reads %s)",
				    path);
	}

	ret = plot_main(p);

	if (p->tmpdir[0])
		rm_tmpdir(p->tmpdir);
	for (size_t i = 0; i < p->nseries; i++)
		free(p->series[i].v);
	free(p->series);
	for (int e = 0; e < p->nevents; e++)
		free(p->events[e]);
	expr_free(p->metric);
	free(p->metric_text);
	free(p->probe);
	timeline_free(p->t);
	fleetplot_free(p->fp);
	chclient_free(p->fleet);
	if (p->db)
		db_close(p->db);
	free(p);
	return ret;
}
