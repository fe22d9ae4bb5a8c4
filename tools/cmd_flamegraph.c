/*
 * cmd_flamegraph.c - "strobe flamegraph": a session's call stacks as an
 * interactive SVG flame graph (lib/query/flame.h draws it; this parses
 * options, loads the stacks and names the output).
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
#include "flamemetric.h"
#include "progress.h"
#include "source.h"
#include "stacks.h"
#include "where.h"

static const char usage_text[] =
	"usage: strobe flamegraph [--db PATH] [--session ID] [-o FILE.svg] [--event EV]\n"
	"                         [--diff SESSION | --color-by METRIC|EXPR] [--samples]\n"
	"                         [--width PIXELS]\n"
	"                         [--pid PID[@START]] [--comm NAME] [--binary PATH]\n"
	"                         [--kernel|--user] [--cgroup PATH] [--from T] [--to T]\n"
	"                         [--no-demangle] [--where 'EXPR OP X' [--invert]\n"
	"                         [--where-sample] [--where-bucket T]]\n"
	"\n"
	"Write the call stacks of a session recorded with -g (default: the latest)\n"
	"as an interactive SVG flame graph: each box a function, its width the\n"
	"samples of the stacks through it, its callers below it, the command name\n"
	"(comm) at the root.  Open it in a browser: hover a box for its figures,\n"
	"click it to zoom, Search (or Ctrl-F) highlights the functions matching a\n"
	"regular expression and shows the share they cover, Escape resets.\n"
	"Kernel functions end in _[k]; code no symbol covers is [unknown] (BINARY).\n"
	"Widths are samples, or the summed periods when they varied (-F on an\n"
	"event whose rate varies, as report's percent); --samples forces samples;\n"
	"--event EV uses the increases of the counting event EV attributed to the\n"
	"samples (as given with -e).  --diff SESSION draws a differential flame\n"
	"graph: widths from this session, colours by how each function's share\n"
	"changed from SESSION to this one: red grew, blue shrank, white the same.\n"
	"--color-by METRIC|EXPR (or --colour-by) colours each box by a metric of\n"
	"the samples under it instead: a name of 'strobe list --metrics' (IPC) or\n"
	"an expression over the session's events, samples and seconds (as plot\n"
	"--metric takes it: 'page-faults / samples'; seconds is the range drawn);\n"
	"pale yellow low, orange, red high, on a linear scale between the\n"
	"width-weighted 5th and 95th percentiles of the drawn boxes' values (the\n"
	"legend gives them, and the min and max); grey where it is undefined (a\n"
	"zero divisor).  Each box's tooltip gives its value.  Not with --diff.\n"
	"The filters are report's (strobe report --help), applied to both sessions\n"
	"but --pid, which selects in this session only (pids are one session's):\n"
	"--comm narrows both.\n"
	FILTEROPT_WHERE_HELP
	"With --diff the condition is evaluated in each session on its own.\n"
	"T is a time since the session start: 1.5, 1.5s, 250ms, 20us.\n"
	"Output: -o FILE (--output FILE), '-o -' for stdout, default\n"
	"flamegraph-SESSION.svg.\n";

enum { OPT_DB = 256, OPT_EVENT, OPT_DIFF, OPT_SAMPLES, OPT_WIDTH, OPT_COLOR_BY };

static const struct option long_opts[] = {
	{ "db",		required_argument, NULL, OPT_DB },
	{ "output",	required_argument, NULL, 'o' },
	{ "event",	required_argument, NULL, OPT_EVENT },
	{ "diff",	required_argument, NULL, OPT_DIFF },
	{ "samples",	no_argument,	   NULL, OPT_SAMPLES },
	{ "width",	required_argument, NULL, OPT_WIDTH },
	{ "color-by",	required_argument, NULL, OPT_COLOR_BY },
	{ "colour-by",	required_argument, NULL, OPT_COLOR_BY },
	FILTEROPT_LONG_OPTS,
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static struct stack_set *load(struct db *db, const struct report_opts *o, struct error *e)
{
	struct stack_set *set = stacks_load(db, o, e);

	if (set && !set->call_graph[0]) {
		error_set(e, "session %lld has no call stacks: record with -g",
			  (long long)set->session.id);
		stacks_free(set);
		return NULL;
	}
	return set;
}

/* The command's options but the filters. */
struct fgopts {
	const char *dbpath, *out, *event, *color_by;
	struct flame_metric metric;	/* --color-by parsed, when given */
	int what, width;
	int64_t diff;
};

/* Option c (getopt_long's, its value in optarg) into g: -1 to go on, else
 * the exit status. */
static int parse_option(struct fgopts *g, int c, int argc, char **argv)
{
	char optbuf[256];
	uint64_t v;

	switch (c) {
	case OPT_DB:
		g->dbpath = optarg;
		break;
	case 'o':
		if (!*optarg)
			return cmd_usage_error("flamegraph", "bad -o '': give a file name, "
					       "or - for stdout");
		g->out = optarg;
		break;
	case OPT_EVENT:
		if (!*optarg)
			return cmd_usage_error("flamegraph", "bad --event '': give a counting "
					       "event of the session, as given with -e");
		g->event = optarg;
		break;
	case OPT_SAMPLES:
		g->what = FLAME_SAMPLES;
		break;
	case OPT_COLOR_BY: {
		struct error e = { "" };

		if (g->color_by)
			flame_metric_free(&g->metric);
		if (!*optarg)
			return cmd_usage_error("flamegraph", "bad --color-by '': give a metric "
					       "('strobe list --metrics') or an expression of "
					       "the session's events");
		if (flame_metric_parse(&g->metric, optarg, "--color-by", &e) < 0)
			return cmd_usage_error("flamegraph", "%s", e.msg);
		g->color_by = optarg;
		break;
	}
	case OPT_DIFF:
		if (parse_u64(optarg, &v) < 0 || v == 0 || v > INT64_MAX)
			return cmd_usage_error("flamegraph", "bad --diff '%s': give the id of "
					       "the session to compare with ('strobe "
					       "sessions' lists them)", optarg);
		g->diff = (int64_t)v;
		break;
	case OPT_WIDTH:
		if (parse_u64(optarg, &v) < 0 || v < 200 || v > 100000)
			return cmd_usage_error("flamegraph", "bad --width '%s': give a width "
					       "in pixels from 200 to 100000", optarg);
		g->width = (int)v;
		break;
	case 'h':
		fputs(usage_text, stdout);
		return 0;
	case ':':
		return cmd_usage_error("flamegraph", "option %s needs a value: see "
				       "'strobe flamegraph --help'",
				       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
	default:
		return cmd_usage_error("flamegraph", "unknown option '%s': see 'strobe "
				       "flamegraph --help'",
				       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
	}
	return -1;
}

/* The graph's title and subtitle: the session (and with base the one it
 * is compared with), what widths are, what the stacks lack. */
static void titles(const struct stack_set *set, const struct stack_set *base, const char *event,
		   int what, const struct report_opts *o, char *title, size_t tlen, char *sub,
		   size_t slen)
{
	if (base)
		snprintf(title, tlen, "Differential flame graph: session %lld against "
			 "session %lld (red: grew, blue: shrank)", (long long)set->session.id,
			 (long long)base->session.id);
	else
		snprintf(title, tlen, "Flame graph: session %lld%s%s%s",
			 (long long)set->session.id, set->session.name[0] ? " \"" : "",
			 set->session.name, set->session.name[0] ? "\"" : "");
	{
		size_t n = 0;

		n += snprintf(sub, slen, "%s: %" PRIu64 " %s", set->session.sample_event,
			      event ? set->total[what] : what == FLAME_SAMPLES || !set->weighted ?
			      set->samples : set->weight,
			      event ? event : what == FLAME_SAMPLES || !set->weighted ?
			      "samples" : "summed periods");
		if (set->incomplete && n < slen)
			n += snprintf(sub + n, slen - n, "; %" PRIu64 " samples (%.1f%%) "
				      "with incomplete stacks", set->incomplete,
				      set->samples ? 100.0 * set->incomplete / set->samples : 0);
		if (set->no_stack && n < slen)
			n += snprintf(sub + n, slen - n, "; %" PRIu64 " without a stack "
				      "(not drawn)", set->no_stack);
		if (o->where && n < slen) {
			char said[640];

			where_said(o->where, said, sizeof(said));
			n += snprintf(sub + n, slen - n, "; %s", said);
		}
		if (base && n < slen)
			snprintf(sub + n, slen - n, "; widths: session %lld",
				 (long long)set->session.id);
	}
}

/* The options and arguments into g and o (the filters): -1 to go on, else
 * the exit status. */
static int parse_args(struct fgopts *g, struct report_opts *o, int argc, char **argv)
{
	static const struct filteropt fopt = { "flamegraph", FILTEROPT_AT_REPORT };
	int c;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":ho:", long_opts, NULL)) != -1) {
		int r = filteropt_parse(&fopt, c, optarg, argv[optind - 1], o);

		if (r == 2)
			return 2;
		if (r)
			continue;
		if ((r = parse_option(g, c, argc, argv)) >= 0)
			return r;
	}
	if (optind < argc)
		return cmd_usage_error("flamegraph", "unexpected argument '%s': see 'strobe "
				       "flamegraph --help'", argv[optind]);
	if (filteropt_check("flamegraph", o))
		return 2;
	if (g->color_by && g->diff)
		return cmd_usage_error("flamegraph", "--color-by and --diff exclude each other: a "
				       "differential graph's colours are the change; give one "
				       "of them");
	if (g->event && g->what == FLAME_SAMPLES)
		return cmd_usage_error("flamegraph", "--event and --samples exclude each other: "
				       "give one of them");
	return -1;
}

/* The stacks of o's session (*set, and with --diff those of the session
 * compared with, *base) into the tree *t, its widths *what. */
static int build(struct db *db, const struct report_opts *o, struct fgopts *g,
		 struct stack_set **set, struct stack_set **base, struct flame_tree **t,
		 int *what, struct error *err)
{
	struct report_opts ob;
	int bwhat;

	*what = g->what;
	if (!(*set = load(db, o, err)))
		return -1;
	if (g->event && (*what = flame_event_index(*set, g->event, err)) < 0)
		return -1;
	if (g->color_by) {
		if (flame_metric_bind(&g->metric, &(*set)->session,
				      report_metric_seconds(&(*set)->session, o), "--color-by",
				      err) < 0 ||
		    !(*t = flame_tree_build_sums(*set, *what, err)))
			return -1;
		flame_metric_values(&g->metric, *t);
		return 0;
	}
	if (!g->diff)
		return (*t = flame_tree_build(*set, *what, err)) ? 0 : -1;
	bwhat = *what;
	ob = *o;
	ob.session = g->diff;
	ob.pid = -1;		/* pids are one session's */
	ob.has_pid_at = 0;
	if (!(*base = load(db, &ob, err)))
		return -1;
	if (g->event && (bwhat = flame_event_index(*base, g->event, err)) < 0)
		return -1;
	if ((*base)->session.id == (*set)->session.id)
		return error_set(err, "--diff %lld is the session itself: give another session",
				 (long long)g->diff);
	if (!(*t = flame_tree_build(*set, *what, err)) ||
	    flame_tree_diff(*t, *base, bwhat, err) < 0)
		return -1;
	return 0;
}

/* Draw t as SVG (so) into out ('-' for stdout); a file this created is
 * removed when writing it fails. */
static int write_graph(const struct flame_tree *t, const struct flame_svg_opts *so,
		       const char *out, struct error *err)
{
	FILE *f;
	int created = 0;

	if (!strcmp(out, "-")) {
		f = stdout;
	} else {
		struct stat sb;

		created = stat(out, &sb) < 0 || S_ISREG(sb.st_mode);
		if (!(f = fopen(out, "w")))
			return error_set(err, "cannot write %s: %s", out, strerror(errno));
	}
	if (flame_write_svg(t, so, f, err) < 0)
		goto fail;
	if (fflush(f) == EOF || ferror(f)) {
		error_set(err, "writing %s: %s", out, strerror(errno ? errno : EIO));
		goto fail;
	}
	if (f != stdout) {
		int rc = fclose(f);

		f = NULL;
		if (rc == EOF) {
			error_set(err, "writing %s: %s", out, strerror(errno));
			goto fail;
		}
		fprintf(stderr, "strobe flamegraph: wrote %s\n", out);
	}
	return 0;
fail:
	if (f && f != stdout)
		fclose(f);
	if (created)
		unlink(out);
	return -1;
}

/* The notes of a set's session, on stderr. */
static void print_notes(const struct stack_set *set)
{
	for (int i = 0; i < set->nr_notes && i < (int)ARRAY_SIZE(set->notes); i++)
		fprintf(stderr, "strobe flamegraph: note: session %lld: %s\n",
			(long long)set->session.id, TEXT_SAFE(set->notes[i]));
}

int cmd_flamegraph(int argc, char **argv)
{
	struct report_opts o = { .by = REPORT_BY_SYMBOL, .pid = -1, .mode = REPORT_ALL };
	struct source src = { 0 };
	struct stack_set *set = NULL, *base = NULL;
	struct flame_tree *t = NULL;
	struct error err = { "" };
	struct progress prog = { 0 };	/* progress_done() does nothing with it */
	struct fgopts g = { .what = FLAME_WEIGHT };
	char title[512], sub[512], base_name[64], *path = NULL;
	const char *out;
	int what, ret;

	if ((ret = parse_args(&g, &o, argc, argv)) >= 0) {
		flame_metric_free(&g.metric);
		return ret;
	}
	ret = 1;
	/* a local database's: the fleet has no call stacks (no --source) */
	if (source_open(&(struct source_spec){ .db = g.dbpath ? g.dbpath : cmd_default_db(),
					       .session = o.session }, &src, &err) < 0)
		goto out;
	/* on stderr, when it is a terminal and this takes long */
	progress_init(&prog, "strobe flamegraph", STDERR_FILENO, 0, "samples");
	o.progress = &prog;
	if (build(src.db, &o, &g, &set, &base, &t, &what, &err) < 0)
		goto out;
	progress_done(&prog);
	if (!t->nodes[0].value) {
		error_set(&err, "nothing to draw: no %s%s in session %lld%s",
			  g.event ? "increase of " : "samples with a stack",
			  g.event ? g.event : "", (long long)set->session.id,
			  set->no_stack ? " (its samples that pass the filters have no stack)" : "");
		goto out;
	}

	titles(set, base, g.event, what, &o, title, sizeof(title), sub, sizeof(sub));
	snprintf(base_name, sizeof(base_name), "session %lld",
		 (long long)(base ? base->session.id : 0));
	out = g.out;
	if (!out) {
		path = xasprintf("flamegraph-%lld.svg", (long long)set->session.id);
		out = path;
	}
	if (write_graph(t, &(struct flame_svg_opts){
				.title = title, .subtitle = sub, .width = g.width,
				.unit = g.event ? g.event : what == FLAME_SAMPLES ||
					!set->weighted ? "samples" : "periods",
				.base_name = base_name,
				.metric = g.color_by ? &g.metric : NULL,
			}, out, &err) < 0)
		goto out;
	/* notes of a graph drawn (after an error they would be noise) */
	print_notes(set);
	if (base)
		print_notes(base);
	ret = 0;
out:
	progress_done(&prog);
	if (ret)
		fprintf(stderr, "strobe flamegraph: %s\n", err.msg);
	flame_tree_free(t);
	flame_metric_free(&g.metric);
	if (set)
		stacks_free(set);
	if (base)
		stacks_free(base);
	source_close(&src);
	filteropt_free(&o);
	free(path);
	return ret;
}
