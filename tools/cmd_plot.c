/*
 * cmd_plot.c - "strobe plot": events or a metric of a recorded session over
 * time, drawn by gnuplot (PNG, SVG, PDF, or text on the terminal), or
 * written as CSV.
 *
 * This file parses the options, opens the source (the local database, or
 * with --source the fleet: lib/fleet/fleetplot.c), has lib/query/series.c
 * compute the series (from lib/query/timeline.c's sums per time bucket),
 * and writes them: lib/query/gnuplot.c's data and script into a private
 * temporary directory, where gnuplot runs, and lib/query/seriescsv.c's
 * CSV; the result is moved into place only when gnuplot succeeded, so a
 * failed plot never leaves a file behind.  --expect adds the saved probe's
 * expectations (lib/probe/probe_expect.c); see "Plots" in doc/DESIGN.md.
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
#include <unistd.h>
#include "cmd.h"
#include "db.h"
#include "expr.h"
#include "metrics.h"
#include "procset.h"
#include "cgset.h"
#include "progress.h"
#include "series.h"
#include "gnuplot.h"
#include "seriescsv.h"
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

struct plot {
	/* options */
	const char *dbpath, *metric_src, *output, *data, *title;
	const struct metric *catalog;	/* --metric NAME of the catalogue */
	char *metric_text;		/* its expression, scale written in */
	struct expr *metric;		/* --metric, parsed */
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
	struct series_source src;
	struct series_req req;
	struct series *s;
	/* --expect on a plot: the onsets and the summary drawn */
	struct probe_expect_line on[PROBE_MAX_ROWS];
	struct gnuplot_mark expect_on[PROBE_MAX_ROWS];
	size_t nexpect;
	char expect_summary[400];
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

/* ---- output: gnuplot run in a private directory, files put in place ---- */

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
		if (seriescsv_write(stdout, p->s, p->wall) < 0)
			return fail("writing the CSV: %s", strerror(errno));
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s", p->tmpdir, tmpname);
	f = fopen(path, "w");
	if (!f)
		return fail("writing %s: %s", path, strerror(errno));
	if (seriescsv_write(f, p->s, p->wall) < 0) {
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
	static const enum gnuplot_term term[] = {
		[FMT_PNG] = GNUPLOT_PNG, [FMT_SVG] = GNUPLOT_SVG, [FMT_PDF] = GNUPLOT_PDF,
		[FMT_TERM] = GNUPLOT_DUMB,
	};
	struct gnuplot_opts go = {
		.term = term[p->fmt], .width = p->width, .height = p->height, .wall = p->wall,
		.title = p->title, .fleet_what = p->fleet_what, .expect = p->probe != NULL,
		.expect_on = p->expect_on, .nexpect = p->nexpect,
		.expect_summary = p->expect_summary,
	};
	char dat[128], script[128], out[128];
	FILE *f;
	struct stat st;

	snprintf(dat, sizeof(dat), "%s/plot.dat", p->tmpdir);
	snprintf(script, sizeof(script), "%s/plot.gp", p->tmpdir);
	snprintf(out, sizeof(out), "%s/plot.%s", p->tmpdir, ext[p->fmt]);
	f = fopen(dat, "w");
	if (!f || gnuplot_write_data(f, p->s, p->wall) < 0 || fclose(f) == EOF)
		return fail("writing %s: %s", dat, strerror(errno));
	f = fopen(script, "w");
	if (!f || gnuplot_write_script(f, p->s, &p->req, &go, "plot.dat", out) < 0 ||
	    fclose(f) == EOF)
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

/* ---- the source and the series ---- */

/* The fleet as a series source (fleetplot.h): its sessions as one. */
static struct timeline *fleet_timeline(const struct series_source *src,
				       const struct timeline_opts *o, struct error *e)
{
	return fleetplot_timeline(src->ctx, o, e);
}

/* --source: connect, check the schema, read the sessions (p->src: them as
 * one); -1 with the one-line error in p->fleet_what. */
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
	p->src.session = *fleetplot_session(p->fp);
	p->src.timeline = fleet_timeline;
	p->src.ctx = p->fp;
	return 0;
fail:
	snprintf(p->fleet_what, sizeof(p->fleet_what), "%s", err.msg);
	return -1;
}

/* The source: the fleet (--source), or the local database's session. */
static int source_open(struct plot *p)
{
	struct error err = { "" };

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
		return 0;
	}
	p->db = db_open(p->dbpath ? p->dbpath : cmd_default_db(), DB_READ, &err);
	if (!p->db)
		return fail("%s", err.msg);
	if (series_source_db(&p->src, p->db, p->to.session, &err) < 0)
		return fail("%s", err.msg);
	return 0;
}

/* The series (lib/query/series.c), its failures said as plot's options
 * name them; exit status 2 for a metric the session did not count. */
static int compute(struct plot *p)
{
	const struct db_session *s = &p->src.session;
	struct error err = { "" };
	struct progress prog;
	char evs[1200];
	int ret;

	p->req.events = (const char *const *)p->events;
	p->req.nevents = p->nevents;
	p->req.metric = p->metric;
	p->req.metric_src = p->metric_src;
	p->req.catalog = p->catalog;
	p->req.opts = p->to;
	/* on stderr, when it is a terminal and this takes long */
	progress_init(&prog, "strobe plot", STDERR_FILENO, 0, "samples");
	p->req.opts.progress = &prog;
	ret = series_compute(&p->src, &p->req, &p->s, &err);
	progress_done(&prog);
	p->req.opts.progress = NULL;
	series_events_text(s, evs, sizeof(evs));
	switch (ret) {
	case 0:
		return 0;
	case SERIES_UNCOVERED:
		fail("%s", err.msg);
		return 2;
	case SERIES_NO_NAME:
		return fail("--metric: %s: session %lld has %s, and 'seconds' (metrics "
			    "by name: 'strobe list --metrics')", err.msg, (long long)s->id, evs);
	case SERIES_NO_EVENT:
		return fail("unknown event '%s' in --event: session %lld has %s",
			    p->events[p->req.unknown], (long long)s->id, evs);
	default:
		return fail("%s", err.msg);
	}
}

static int plot_main(struct plot *p)
{
	const struct timeline *t;
	int ret;

	ret = source_open(p);
	if (!ret)
		ret = compute(p);
	if (ret)
		return ret;
	t = p->s->t;
	if (t->note[0])
		fprintf(stderr, "strobe plot: note: %s\n", t->note);
	if (t->debuginfod_note[0])
		fprintf(stderr, "strobe plot: note: %s\n", t->debuginfod_note);
	if (p->probe) {
		if (p->fmt == FMT_CSV || (p->fmt == FMT_NONE && p->data))
			fprintf(stderr, "strobe plot: note: --expect draws on a plot only: the CSV "
				"is the same without it\n");
		else if (!expect_lines(p))
			fprintf(stderr, "strobe plot: note: --expect: no markers of session %lld "
				"pass the probe's sizes (PROVIDER:size with pages, PROVIDER:bytes "
				"with bytes): only the probe's summary is drawn\n",
				(long long)p->src.session.id);
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

/* ---- options ---- */

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

/* An option of what the timeline selects (timeline.h): the split, the
 * filters, the window and the bucket.  -1 to go on, else the exit status. */
static int parse_window_option(struct plot *p, int c, int argc, char **argv)
{
	char optbuf[256];
	uint64_t v;

	switch (c) {
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
	struct error err = { "" };
	char optbuf[256];
	uint64_t v;

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
		*term = 1;
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
	struct plot *p = xcalloc(1, sizeof(*p));
	int c, ret, term = 0;

	p->to.pid = -1;
	p->to.top = TL_TOP_DEFAULT;
	p->width = -1;
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":ho:", long_opts, NULL)) != -1) {
		ret = parse_option(p, c, argc, argv, &term);
		if (ret >= 0)
			return ret;
	}
	ret = check_options(p, argc, argv, term);
	if (ret < 0 && p->probe)
		ret = load_probe(p);
	if (ret >= 0)
		return ret;
	ret = plot_main(p);

	if (p->tmpdir[0])
		rm_tmpdir(p->tmpdir);
	for (int e = 0; e < p->nevents; e++)
		free(p->events[e]);
	expr_free(p->metric);
	free(p->metric_text);
	free(p->probe);
	series_free(p->s);
	fleetplot_free(p->fp);
	chclient_free(p->fleet);
	if (p->db)
		db_close(p->db);
	free(p);
	return ret;
}

