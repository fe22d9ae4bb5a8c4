/*
 * cmd_export.c - "strobe export": a session's raw samples as CSV, or the
 * session as a Chrome trace (Trace Event Format, JSON) for the Perfetto UI
 * and chrome://tracing, or its call stacks as folded stacks, pprof or the
 * Firefox Profiler's format.
 *
 * CSV: one row per sample in time order, header
 *   time_ns,tsc,cpu,pid,tid,comm,binary,symbol,<event>...,offset,mode,build_id
 * with one column per counting event, named as given with -e, holding the
 * counter increase attributed to the sample (samples.c<i>).  time_ns is
 * CLOCK_MONOTONIC as stored; offset is the file offset (kernel: the
 * address) in hex; mode is user, kernel, hypervisor or guest.  With
 * --process-start a last column process_start_ns: the start of the
 * sample's process (procset.h: its pid's started last by then), empty
 * when unknown, so that the processes of a reused pid are told apart.
 * With --cgroup-column a last column cgroup: the cgroup (v2 path) of the
 * sample's process (cgset.h; after process_start_ns when both are asked).
 * --cgroup PATH keeps the samples of the processes of that cgroup (or of
 * the subtree, PATH ending in '/'), in both formats.
 *
 * Chrome trace: written by lib/query/chrometrace.c (the format is told
 * there).  Counters per --bucket (default 1 ms).  --pid/--comm select
 * samples (and so the counters); markers and lost records are
 * session-wide and only --from/--to select them.
 *
 * This file parses the options (the filters through filteropt.h), opens
 * the source (lib/query/source.h: the local database, or with --source
 * the fleet) and has source_export() write the samples (locally
 * lib/query/sessionexport.c, the fleet's lib/fleet/fleetexport.c); the
 * call stacks are the local database's (stacks.h, flame.h, pprof.h,
 * gecko.h).  The output file is made only when there is something to
 * write, and removed when the export fails.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cmd.h"
#include "filteropt.h"
#include "flame.h"
#include "gecko.h"
#include "pprof.h"
#include "progress.h"
#include "source.h"
#include "stacks.h"
#include "where.h"

static const char usage_text[] =
	"usage: strobe export [--db PATH] [--session ID]\n"
	"                     --format csv|chrome-trace|folded|pprof|gecko [--event EV]\n"
	"                     [-o FILE] [--pid PID] [--comm NAME] [--from T] [--to T]\n"
	"                     [--samples] [--bucket T] [--no-demangle] [--process-start]\n"
	"                     [--cgroup PATH] [--cgroup-column]\n"
	"                     [--where 'EXPR OP X' [--invert] [--where-sample]\n"
	"                      [--where-bucket T]]\n"
	"       strobe export --source URL [--host NAME] [--session ID]\n"
	"                     --format csv|chrome-trace [--host-column] [-o FILE]\n"
	"                     [--pid PID] [--comm NAME] [--from T] [--to T]\n"
	"                     [--process-start] [--samples] [--bucket T]\n"
	"\n"
	"Export a recorded session (default: the latest).  csv: one row per sample,\n"
	"in time order: time_ns,tsc,cpu,pid,tid,comm,binary,symbol, one column per\n"
	"counting event (the increase attributed to the sample), offset,mode,build_id;\n"
	"--process-start adds process_start_ns, the start of the sample's process\n"
	"(tells apart the processes of a pid the kernel reused; empty: unknown);\n"
	"--cgroup-column then adds cgroup, the cgroup v2 path of the sample's process\n"
	"(its latest sample's; [unknown] if not recorded).  --cgroup PATH keeps the\n"
	"samples of the processes of that cgroup, or with a trailing '/' of it and\n"
	"every cgroup below it.\n"
	FILTEROPT_WHERE_HELP
	"chrome-trace: JSON for the Perfetto UI or chrome://tracing: a counter track\n"
	"per event per CPU (increase per --bucket, default 1ms), markers, lost\n"
	"samples; --samples adds every sample as an instant event on its thread.\n"
	"The call stacks of a session recorded with -g:\n"
	"folded: one line per distinct stack, \"comm;outer;...;leaf COUNT\", root first,\n"
	"as FlameGraph's stackcollapse-perf.pl writes them (for flamegraph.pl,\n"
	"speedscope, ...); COUNT is samples, or with --event EV that event's increases;\n"
	"kernel functions end in _[k], code no symbol covers is [unknown] (BINARY).\n"
	"pprof: a gzip-compressed profile.proto for 'go tool pprof': sample types\n"
	"samples, the sampling event's periods when they varied, one per counting\n"
	"event; mappings per binary with its build id; labels pid and comm.\n"
	"gecko: the Firefox Profiler's JSON (profiler.firefox.com, Load a profile from\n"
	"file): a thread per tid, each sample at its own time.\n"
	"T is a time since the session start: 1.5, 1.5s, 250ms, 20us.  Output goes\n"
	"to stdout unless -o FILE (--output FILE).\n"
	"--source URL exports pushed sessions from the ClickHouse fleet at URL\n"
	"(http://HOST:8123/?database=strobe; credentials as for 'strobe push'), csv\n"
	"or chrome-trace: --host NAME keeps that host's sessions, --session ID session\n"
	"ID of each host (default: every session selected); one host's session is the\n"
	"local export of it.  csv: samples of several hosts get a first column host\n"
	"(or with --host-column), of several sessions then a column session.\n"
	"chrome-trace: several sessions are each a group of processes (\"host#session:\"\n"
	"names, pids offset by 8388608 a session).  With --source only --host,\n"
	"--session, --host-column, -o, --pid, --comm, --from, --to, --process-start,\n"
	"--samples and --bucket apply (doc/FLEET.md, \"Fleet export\").\n";

enum {
	OPT_DB = 256, OPT_FORMAT, OPT_SAMPLES, OPT_BUCKET, OPT_PROCESS_START,
	OPT_CGROUP_COLUMN, OPT_EVENT, OPT_SOURCE, OPT_HOST, OPT_HOST_COLUMN,
};

static const struct option long_opts[] = {
	{ "db",		required_argument, NULL, OPT_DB },
	FILTEROPT_LONG_SESSION,
	{ "format",	required_argument, NULL, OPT_FORMAT },
	{ "output",	required_argument, NULL, 'o' },
	FILTEROPT_LONG_PID,
	FILTEROPT_LONG_COMM,
	FILTEROPT_LONG_FROM,
	FILTEROPT_LONG_TO,
	{ "samples",	no_argument,	   NULL, OPT_SAMPLES },
	FILTEROPT_LONG_NO_DEMANGLE,
	{ "process-start", no_argument,	   NULL, OPT_PROCESS_START },
	FILTEROPT_LONG_CGROUP,
	FILTEROPT_LONG_WHERE,
	{ "cgroup-column", no_argument,	   NULL, OPT_CGROUP_COLUMN },
	{ "bucket",	required_argument, NULL, OPT_BUCKET },
	{ "event",	required_argument, NULL, OPT_EVENT },
	{ "source",	required_argument, NULL, OPT_SOURCE },
	{ "host",	required_argument, NULL, OPT_HOST },
	{ "host-column", no_argument,	   NULL, OPT_HOST_COLUMN },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

enum fmt { FMT_NONE, FMT_CSV, FMT_CHROME, FMT_FOLDED, FMT_PPROF, FMT_GECKO };

struct opts {
	const char *dbpath, *out;
	const char *event;		/* folded: --event */
	struct report_opts filt;	/* --session, --pid (no @START), --comm,
					 * --from, --to, --no-demangle, --cgroup */
	enum fmt fmt;
	int samples;
	int process_start;		/* csv: a last column process_start_ns */
	int cgroup_column;		/* csv: a last column cgroup */
	int64_t bucket_ns;
	const char *source, *host;	/* --source URL, --host NAME */
	int host_column;
};

/* ---- the command ---- */

/* The options together, after parse_args(): 0, or 2 after a usage error.
 * Sets the default bucket. */
static int check_args(struct opts *o)
{
	if (o->fmt == FMT_NONE)
		return cmd_usage_error("export", "give --format csv, chrome-trace, folded, pprof "
				       "or gecko");
	if (!o->source && (o->host || o->host_column))
		return cmd_usage_error("export", "%s is of fleet exports: give --source URL",
				       o->host ? "--host" : "--host-column");
	if (o->source) {
		const char *no = o->dbpath ? "--db (--source reads the fleet, --db a local "
			"database: give one of them)" : o->fmt >= FMT_FOLDED ? "--format other "
			"than csv and chrome-trace" : o->filt.no_demangle ? "--no-demangle (the fleet "
			"has the names as pushed)" : o->filt.cgroup ? "--cgroup (no cgroups "
			"are pushed)" : o->filt.where ? "--where" : o->cgroup_column ? "--cgroup-column (no cgroups are "
			"pushed)" : o->event ? "--event" : NULL;

		if (no)
			return cmd_usage_error("export", "%s is not supported with --source: "
					       "see doc/FLEET.md, \"Fleet export\"", no);
	}
	if (o->event && o->fmt != FMT_FOLDED)
		return cmd_usage_error("export", "--event applies to --format folded only");
	if (o->fmt >= FMT_FOLDED && (o->samples || o->bucket_ns))
		return cmd_usage_error("export", "%s applies to --format chrome-trace only",
				       o->samples ? "--samples" : "--bucket");
	if (o->fmt != FMT_CSV && o->process_start)
		return cmd_usage_error("export", "--process-start applies to --format csv only");
	if (o->fmt != FMT_CSV && o->host_column)
		return cmd_usage_error("export", "--host-column applies to --format csv only");
	if (o->fmt != FMT_CSV && o->cgroup_column)
		return cmd_usage_error("export", "--cgroup-column applies to --format csv only");
	if (o->fmt == FMT_CSV && (o->samples || o->bucket_ns))
		return cmd_usage_error("export", "%s applies to --format chrome-trace only",
				       o->samples ? "--samples" : "--bucket");
	if (filteropt_check_where("export", &o->filt))
		return 2;
	if (!o->bucket_ns)
		o->bucket_ns = 1000000;
	return 0;
}

/* The value of option name, not to be empty (give what): into *to, 0; or
 * 2 after the usage error. */
static int text_arg(const char *name, const char *what, const char **to)
{
	if (!*optarg)
		return cmd_usage_error("export", "bad %s '': give %s", name, what);
	*to = optarg;
	return 0;
}

/* The field an option without a value sets. */
static int *flag_opt(struct opts *o, int c)
{
	return c == OPT_SAMPLES ? &o->samples : c == OPT_PROCESS_START ? &o->process_start :
	       c == OPT_CGROUP_COLUMN ? &o->cgroup_column : &o->host_column;
}

/* The command line into o: 0, -1 after --help, else the exit status. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct filteropt fopt = { "export", NULL };	/* --pid PID only */
	char optbuf[256];
	int c, f;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":ho:", long_opts, NULL)) != -1) {
		if ((f = filteropt_parse(&fopt, c, optarg, argv[optind - 1], &o->filt)) == 2)
			return 2;
		if (f)
			continue;
		switch (c) {
		case OPT_DB:
			o->dbpath = optarg;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "csv"))
				o->fmt = FMT_CSV;
			else if (!strcmp(optarg, "chrome-trace") || !strcmp(optarg, "chrome"))
				o->fmt = FMT_CHROME;
			else if (!strcmp(optarg, "folded"))
				o->fmt = FMT_FOLDED;
			else if (!strcmp(optarg, "pprof"))
				o->fmt = FMT_PPROF;
			else if (!strcmp(optarg, "gecko"))
				o->fmt = FMT_GECKO;
			else
				return cmd_usage_error("export", "bad --format '%s': use csv, "
						       "chrome-trace, folded, pprof or gecko", optarg);
			break;
		case 'o':
			if (text_arg("-o", "a file name", &o->out))
				return 2;
			break;
		case OPT_EVENT:
			if (text_arg("--event", "a counting event of the session, as given with -e",
				     &o->event))
				return 2;
			break;
		case OPT_HOST:
			if (text_arg("--host", "a host name as pushed", &o->host))
				return 2;
			break;
		case OPT_SOURCE:
			o->source = optarg;
			break;
		case OPT_SAMPLES:
		case OPT_PROCESS_START:
		case OPT_CGROUP_COLUMN:
		case OPT_HOST_COLUMN:
			*flag_opt(o, c) = 1;
			break;
		case OPT_BUCKET:
			if (parse_duration_ns(optarg, &o->bucket_ns) < 0 || o->bucket_ns < 1000)
				return cmd_usage_error("export", "bad --bucket '%s': give a time of at "
						       "least 1us like 1ms or 100us", optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		case ':':
			return cmd_usage_error("export", "option %s needs a value: see 'strobe "
					       "export --help'",
					       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
		default:
			return cmd_usage_error("export", "unknown option '%s': see 'strobe export "
					       "--help'",
					       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
		}
	}
	if (optind < argc)
		return cmd_usage_error("export", "unexpected argument '%s': see 'strobe export "
				       "--help'", argv[optind]);
	return check_args(o);
}

/* A progress meter on stderr, when it is a terminal (progress.h), unless
 * the export itself goes to that terminal. */
static void progress_start(struct progress *p, const struct opts *o)
{
	progress_init(p, "strobe export", STDERR_FILENO, 0, "samples");
	if (!o->out && isatty(STDOUT_FILENO))
		p->on = 0;
}

/* The output: -o FILE, else stdout; created says whether a failed export
 * is to remove it (a file it made, or a regular file it replaced). */
struct output {
	const char *path;		/* NULL: stdout */
	FILE *f;
	int created;
};

static FILE *output_open(void *ctx, struct error *e)
{
	struct output *out = ctx;
	struct stat sb;

	if (!out->path)
		return out->f = stdout;
	out->created = stat(out->path, &sb) < 0 || S_ISREG(sb.st_mode);
	if (!(out->f = fopen(out->path, "w"))) {
		error_set(e, "cannot write %s: %s", out->path, strerror(errno));
		out->created = 0;
	}
	return out->f;
}

/* Close the output after a good export: 0, or -1 with e set. */
static int output_close(struct output *out, struct error *e)
{
	int rc;

	if (!out->f || out->f == stdout)
		return 0;
	rc = fclose(out->f);
	out->f = NULL;
	if (rc == EOF)
		return error_set(e, "writing %s: %s", out->path, strerror(errno));
	return 0;
}

/* After a failed export: no output left behind. */
static void output_drop(struct output *out)
{
	if (out->f && out->f != stdout)
		fclose(out->f);
	out->f = NULL;
	if (out->created)
		unlink(out->path);
}

/* The end of an export: the meter gone; on failure the line and no file. */
static void export_end(struct progress *prog, int failed, const struct error *err,
		       struct output *out)
{
	progress_done(prog);
	if (failed) {
		fprintf(stderr, "strobe export: %s\n", err->msg);
		output_drop(out);
	}
}

static void note(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "strobe export: note: %s\n", msg);
}

/* folded, pprof, gecko: the call stacks (stacks.h) of the local session. */
static int export_stacks(const struct opts *o)
{
	struct report_opts ro = o->filt;
	struct output out = { .path = o->out };
	struct error err = { "" };
	struct stack_set *set = NULL;
	struct flame_tree *t = NULL;
	struct progress prog = { 0 };
	struct source src;
	int ret = 1, rc = -1;

	if (source_open(&(struct source_spec){ .db = o->dbpath ? o->dbpath : cmd_default_db(),
					       .session = ro.session }, &src, &err) < 0)
		goto out;
	progress_start(&prog, o);
	ro.progress = &prog;
	if (!(set = stacks_load(src.db, &ro, &err)))
		goto out;
	if (!set->call_graph[0]) {
		error_set(&err, "session %lld has no call stacks: record with -g",
			  (long long)set->session.id);
		goto out;
	}
	if (o->fmt == FMT_FOLDED) {
		int what = FLAME_SAMPLES;

		if (o->event && (what = flame_event_index(set, o->event, &err)) < 0)
			goto out;
		if (!(t = flame_tree_build(set, what, &err)))
			goto out;
	}
	if (!output_open(&out, &err))
		goto out;
	if (o->fmt == FMT_FOLDED)
		rc = flame_write_folded(t, out.f, &err);
	else if (o->fmt == FMT_PPROF)
		rc = pprof_write(set, out.f, &err);
	else
		rc = gecko_write(src.db, set, &ro, out.f, &err);
	progress_done(&prog);
	if (rc < 0)
		goto out;
	if (fflush(out.f) == EOF || ferror(out.f)) {
		error_set(&err, "writing %s: %s", o->out ? o->out : "the export",
			  strerror(errno ? errno : EIO));
		goto out;
	}
	if (output_close(&out, &err) < 0)
		goto out;
	for (int i = 0; i < set->nr_notes && i < (int)ARRAY_SIZE(set->notes); i++)
		fprintf(stderr, "strobe export: note: %s\n", TEXT_SAFE(set->notes[i]));
	if (set->no_stack)
		fprintf(stderr, "strobe export: note: %llu samples that pass the filters have "
			"no stack and are not exported\n", (unsigned long long)set->no_stack);
	ret = 0;
out:
	export_end(&prog, ret, &err, &out);
	flame_tree_free(t);
	if (set)
		stacks_free(set);
	source_close(&src);
	return ret;
}

/* csv, chrome-trace: the samples of the local session, or with --source
 * of pushed sessions (source_export()). */
static int export_samples(const struct opts *o)
{
	const struct report_opts *fo = &o->filt;
	struct output out = { .path = o->out };
	struct source_export_opts so = {
		.fmt = o->fmt == FMT_CSV ? SOURCE_EXPORT_CSV : SOURCE_EXPORT_CHROME,
		.pid = fo->pid, .comm = fo->comm, .has_from = fo->has_from, .has_to = fo->has_to,
		.from_ns = fo->from_ns, .to_ns = fo->to_ns, .process_start = o->process_start,
		.samples = o->samples, .bucket_ns = o->bucket_ns, .no_demangle = fo->no_demangle,
		.cgroup = fo->cgroup, .cgroup_column = o->cgroup_column,
		.host_column = o->host_column, .out = o->out, .where = fo->where,
		.open = output_open, .note = note, .ctx = &out,
	};
	struct source_export_stats st = { 0 };
	struct error err = { "" };
	struct progress prog = { 0 };
	struct source src;
	int rc, ret = 1;

	rc = source_open(&(struct source_spec){ .url = o->source, .host = o->host,
						 .session = fo->session,
						 .db = o->source ? NULL : o->dbpath ? o->dbpath :
						       cmd_default_db() }, &src, &err);
	if (rc == SOURCE_BAD_SPEC)
		return cmd_usage_error("export", "bad --source: %s", err.msg);
	if (rc < 0)
		goto out;
	if (!o->source) {
		progress_start(&prog, o);
		so.progress = &prog;
	}
	if (fo->where && where_select_db(fo->where, src.db, fo, &err) < 0)
		goto out;
	if (source_export(&src, &so, &st, &err) < 0 || output_close(&out, &err) < 0)
		goto out;
	if (fo->where) {
		char wn[1200];

		where_note(fo->where, wn, sizeof(wn));
		fprintf(stderr, "strobe export: note: %s\n", TEXT_SAFE(wn));
	}
	if (st.anon)
		fprintf(stderr, "strobe export: note: %llu samples in JIT code ([anon]) have "
			"the symbol their host gave without the process: perf maps and "
			"jitdumps are not pushed\n", (unsigned long long)st.anon);
	if (st.note)
		fprintf(stderr, "strobe export: note: %s\n", st.note);
	ret = 0;
out:
	export_end(&prog, ret, &err, &out);
	free(st.note);
	source_close(&src);
	return ret;
}

int cmd_export(int argc, char **argv)
{
	struct opts o = { .filt = { .by = REPORT_BY_SYMBOL, .pid = -1, .mode = REPORT_ALL } };
	int rc;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (filteropt_check_nonempty("export", &o.filt))
		return 1;	/* not a usage error: as it always was */
	if (o.fmt >= FMT_FOLDED)	/* the local database's (not with --source) */
		rc = export_stacks(&o);
	else
		rc = export_samples(&o);
	filteropt_free(&o.filt);
	return rc;
}
