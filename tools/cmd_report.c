/*
 * cmd_report.c - "strobe report": the hot spots of a recorded session,
 * by binary, symbol or source line, as text, CSV or JSON, of the local
 * database or the fleet's pushed sessions (lib/query/source.h opens
 * either and runs the report: report.h, or fleetquery.h; this parses
 * options and prints the header).
 *
 * Text output starts with '#' header lines (session, totals, warnings,
 * notes) and then the table.  CSV and JSON carry only the table so they
 * stay machine-readable; warnings and notes go to stderr.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "output.h"
#include "calltree.h"
#include "cgset.h"
#include "procset.h"
#include "report.h"
#include "report_markers.h"
#include "stacks.h"
#include "filteropt.h"
#include "metrics.h"
#include "progress.h"
#include "source.h"
#include "where.h"
#include <unistd.h>

static const char usage_text[] =
	"usage: strobe report [--db PATH] [--session ID] [--by binary|symbol|line|cgroup]\n"
	"                     [--pid PID[@START]] [--comm NAME] [--binary PATH] [--kernel|--user]\n"
	"                     [--cgroup PATH]\n"
	"                     [--from T] [--to T] [--format text|csv|json] [--limit N]\n"
	"                     [--no-demangle] [--inline] [-M METRIC[,METRIC...]]\n"
	"                     [--symbol NAME]\n"
	"                     [--where 'EXPR OP X' [--invert] [--where-sample]\n"
	"                      [--where-bucket T]]\n"
	"       strobe report --source URL [--host NAME] [--session ID]\n"
	"                     [--by binary|symbol|host] [--pid PID] [--comm NAME]\n"
	"                     [--binary PATH] [--kernel|--user] [--from T] [--to T]\n"
	"                     [--format text|csv|json] [--limit N] [-M METRIC[,METRIC...]]\n"
	"       strobe report --markers [--db PATH] [--session ID] [--pid PID] [--comm NAME]\n"
	"                     [--from T] [--to T] [--format text|csv|json] [--limit N]\n"
	"\n"
	"Hot spots of a recorded session (default: the latest), with the samples\n"
	"and counter increases attributed to each.  T is a time since the session\n"
	"start: 1.5, 1.5s, 250ms, 20us.  --by defaults to symbol; --binary matches\n"
	"a path or a file name; --limit 0 shows all rows.  Percentages are of all\n"
	"the samples that pass the filters.  A pid that was several processes in\n"
	"the session (the kernel reused it): --pid PID shows them apart in a\n"
	"column process, PID@START (seconds since the session start); --pid\n"
	"PID@START keeps the one started last by START.  --markers lists the\n"
	"session's markers (USDT probe hits, 'strobe mark') instead: time_s since\n"
	"the start, kind, name, pid, tid, cpu, args (--pid PID@START: as PID).\n"
	"--no-demangle keeps C++ and Rust names raw.\n"
	FILTEROPT_WHERE_HELP
	"--symbol NAME (with --by symbol or line) keeps the rows of the symbol\n"
	"named so (as its column shows it), ranked and with percentages as without.\n"
	"--inline (with --by symbol or line) splits each row by the inline chain\n"
	"of its code, from the DWARF as 'addr2line -f -i' reads it, and adds a\n"
	"last column, inline: \"outer -> inlined -> ...\", outermost first, or\n"
	"empty for the function's own code; the rows of one symbol sum to its\n"
	"row without --inline.  --by line always gives the line of the innermost\n"
	"inlined code; with --inline its chain says which function that is.\n"
	"Stripped binaries are named from their separate debug files, found by\n"
	"build-id and .gnu_debuglink under STROBE_DEBUG_DIRS (colon-separated,\n"
	"default /usr/lib/debug), then, only when DEBUGINFOD_URLS is set, from\n"
	"those debuginfod servers by build-id (DEBUGINFOD_CACHE_PATH,\n"
	"DEBUGINFOD_TIMEOUT: default 5 s); a note says which file.\n"
	"--by cgroup: a row per cgroup (v2, its path from /sys/fs/cgroup: \"/a/b\"),\n"
	"the cgroup of each process's latest sample; --cgroup PATH keeps the\n"
	"processes of that cgroup, or with a trailing '/' (\"/a/\") of it and every\n"
	"cgroup below it.  A process whose cgroup is not known is [unknown].\n"
	"-M, --metrics METRIC[,METRIC...] adds a column per metric of the catalogue\n"
	"('strobe list --metrics': IPC, dTLB-MPKI, page-faults-per-sec, ...), after\n"
	"all the others and named by the metric: its value from the row's sums of\n"
	"the counting events (-e of strobe record; aliases such as faults will do),\n"
	"empty where it divides by zero.  'seconds' in a metric is the session's\n"
	"length, or with --from/--to the range's, or with --where the kept buckets'.\n"
	"The session must have counted every event of each metric.  Not with\n"
	"--markers, --children or the trees.\n"
	"\n"
	"Call stacks (sessions recorded with -g or --call-graph):\n"
	"--children (with --by symbol, the default, or --by binary) adds inclusive\n"
	"figures, as 'perf report --children': columns binary, build_id, symbol,\n"
	"self_samples, total_samples, self_percent, total_percent, then for each\n"
	"counting event EV_self and EV_total.  A function's total is every sample\n"
	"whose stack holds it, counted once however often it recurses; its self\n"
	"is the samples taken in it.  Rows are sorted by total.\n"
	"--callers SYMBOL prints the call tree from SYMBOL towards the callers\n"
	"(who called it, and who called them), --callees SYMBOL the tree from\n"
	"SYMBOL towards what it called, each node with the samples (and counter\n"
	"increases) of the stacks through it and their percent of all samples.\n"
	"Text shows an indented tree; CSV the columns depth, path (the functions\n"
	"from SYMBOL to the node, joined by ';'), symbol, binary, build_id,\n"
	"samples, percent and one per counting event; JSON nested children.\n"
	"Samples recorded without a stack are left out of these (a header line\n"
	"says how many).  They read the stacks histogram, so they cost the number\n"
	"of distinct stacks, except with --from/--to, which read the samples.\n"
	"\n"
	"Fleet reports (sessions sent with 'strobe push', doc/FLEET.md):\n"
	"--source URL reads the ClickHouse fleet at URL (http://HOST:8123/?database=\n"
	"strobe) instead of --db, summing there; credentials as 'strobe push' takes\n"
	"them (STROBE_CLICKHOUSE_USER, STROBE_CLICKHOUSE_PASSWORD or _PASSWORD_FILE).\n"
	"--host NAME keeps the sessions of host NAME (as pushed with --host).\n"
	"--session ID keeps session ID of each host (ids are per host: give --host\n"
	"for one session); without --session every pushed session is summed.\n"
	"--by host: a row per host, columns host, samples, percent and the events.\n"
	"The table of one host's session is the local report's, byte for byte.\n"
	"With --source only --host, --session, --by binary|symbol|host, --format,\n"
	"--limit and the filters --pid (no @START), --comm, --binary, --kernel,\n"
	"--user, --from and --to apply, and -M of one session (--host and --session;\n"
	"not of several: their seconds would be ambiguous).\n";

enum {
	OPT_DB = 256, OPT_BY, OPT_FORMAT, OPT_LIMIT, OPT_MARKERS, OPT_INLINE,
	OPT_CHILDREN, OPT_CALLERS, OPT_CALLEES, OPT_SOURCE, OPT_HOST,
};

/* -M NAME[,NAME...]: catalogue metrics into o; 2 (after the message) on a
 * name the catalogue lacks. */
static int parse_metrics(const char *arg, struct report_opts *o)
{
	char *copy = xstrdup(arg), *save = NULL, *tok;
	int ret = 0;

	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		const struct metric *m = metric_find(tok);
		int dup = 0;

		if (!m) {
			ret = cmd_usage_error("report", "unknown metric '%s' in -M: 'strobe list "
					      "--metrics' lists them", tok);
			break;
		}
		for (int i = 0; i < o->nr_metrics; i++)
			dup |= o->metrics[i] == m;
		if (dup)
			continue;
		if (o->nr_metrics == REPORT_METRICS_MAX)
			ret = cmd_usage_error("report", "too many metrics in -M: at most %d",
					      REPORT_METRICS_MAX);
		else
			o->metrics[o->nr_metrics++] = m;
	}
	if (!ret && !o->nr_metrics)
		ret = cmd_usage_error("report", "empty -M '%s': give metric names separated "
				      "by commas ('strobe list --metrics' lists them)", arg);
	free(copy);
	return ret;
}

static const struct option long_opts[] = {
	{ "db",		required_argument, NULL, OPT_DB },
	{ "by",		required_argument, NULL, OPT_BY },
	{ "format",	required_argument, NULL, OPT_FORMAT },
	{ "limit",	required_argument, NULL, OPT_LIMIT },
	{ "inline",	no_argument,	   NULL, OPT_INLINE },
	{ "markers",	no_argument,	   NULL, OPT_MARKERS },
	{ "children",	no_argument,	   NULL, OPT_CHILDREN },
	{ "callers",	required_argument, NULL, OPT_CALLERS },
	{ "callees",	required_argument, NULL, OPT_CALLEES },
	{ "metrics",	required_argument, NULL, 'M' },
	{ "source",	required_argument, NULL, OPT_SOURCE },
	{ "host",	required_argument, NULL, OPT_HOST },
	FILTEROPT_LONG_OPTS,
	FILTEROPT_LONG_SYMBOL,
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int64_t session_duration_ns(const struct db_session *s)
{
	if (s->duration_ns > 0)
		return s->duration_ns;
	if (s->end_ns > s->start_ns)
		return s->end_ns - s->start_ns;
	return -1;
}

/* Append to buf (of len, used n) without overflowing. */
static void bufadd(char *buf, size_t len, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void bufadd(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (*n >= len)
		return;
	va_start(ap, fmt);
	r = vsnprintf(buf + *n, len - *n, fmt, ap);
	va_end(ap);
	*n = r < 0 ? len : MIN(len, *n + (size_t)r);
}

/*
 * Where the session's samples were lost, e.g. "ring buffer full on CPU 1"
 * or "ring buffer full on CPUs 1 (50), 3 (7); throttled on CPU 0", from
 * rows (kind, cpu, count) sorted by kind and cpu.  "" when there are none.
 */
static void lost_format(const struct source_lost *rows, size_t nrows, char *buf, size_t len)
{
	size_t n = 0, r = 0;

	buf[0] = 0;
	while (r < nrows) {
		const char *kind = rows[r].kind;
		size_t first = r, ncpus, i;
		int more;

		while (r < nrows && !strcmp(rows[r].kind, kind))
			r++;
		ncpus = MIN(r - first, 32);
		more = r - first > ncpus;
		bufadd(buf, len, &n, "%s%s%son CPU%s", n ? "; " : "",
		       report_lost_kind(kind), kind[0] ? " " : "",
		       ncpus > 1 || more ? "s" : "");
		for (i = 0; i < ncpus; i++) {
			if (ncpus == 1 && !more)
				bufadd(buf, len, &n, " %d", rows[first + i].cpu);
			else
				bufadd(buf, len, &n, "%s %d (%" PRId64 ")", i ? "," : "",
				       rows[first + i].cpu, rows[first + i].count);
		}
		if (more)
			bufadd(buf, len, &n, ", ...");
	}
	if (n >= len - 1 && len > 4)
		strcpy(buf + len - 4, "...");
}

/* fleet: a report of pushed sessions (--source), which do not carry the
 * counter increases no sample got. */
static void print_header(const struct report_opts *o,
			 const struct report_summary *sum, FILE *f, int fleet)
{
	const struct db_session *s = &sum->session;
	int64_t dur = session_duration_ns(s);
	int filtered = o->pid >= 0 || o->comm || o->binary || o->mode != REPORT_ALL ||
		       o->has_from || o->has_to;
	int i;

	fprintf(f, "# session %lld", (long long)s->id);
	if (s->name[0])
		fprintf(f, " \"%s\"", TEXT_SAFE(s->name));
	fprintf(f, " (%s) %s backend, sampling %s", TEXT_SAFE(s->state), TEXT_SAFE(s->backend),
		TEXT_SAFE(s->sample_event));
	if (s->sample_freq)
		fprintf(f, " at %lld Hz", (long long)s->sample_freq);
	else if (s->sample_period)
		fprintf(f, " every %lld events", (long long)s->sample_period);
	fprintf(f, ", %lld CPU%s\n", (long long)s->nr_cpus, s->nr_cpus == 1 ? "" : "s");

	fprintf(f, "# %lld samples, %lld lost, ", (long long)s->samples, (long long)s->lost);
	if (dur >= 0)
		fprintf(f, "%.2f s", dur / 1e9);
	else if (!strcmp(s->state, "running"))
		fputs("still running", f);
	else
		fputs("duration unknown", f);
	for (i = 0; i < s->nr_events; i++)
		fprintf(f, "%s%s", i ? ", " : "; counting: ", TEXT_SAFE(s->events[i].name));
	fputc('\n', f);

	if (filtered) {
		const char *sep = "";

		fputs("# filter: ", f);
		if (o->pid >= 0) {
			fprintf(f, "%spid %lld", sep, (long long)o->pid);
			if (o->has_pid_at)
				fprintf(f, " at %.9g s", o->pid_at_ns / 1e9);
			sep = ", ";
		}
		if (o->comm) {
			fprintf(f, "%scomm %s", sep, TEXT_SAFE(o->comm));
			sep = ", ";
		}
		if (o->binary) {
			fprintf(f, "%sbinary %s", sep, TEXT_SAFE(o->binary));
			sep = ", ";
		}
		if (o->mode != REPORT_ALL) {
			fprintf(f, "%s%s mode only", sep, o->mode == REPORT_KERNEL ? "kernel" : "user");
			sep = ", ";
		}
		if (o->has_from || o->has_to) {
			fprintf(f, "%stime", sep);
			if (o->has_from)
				fprintf(f, " from %.9g s", o->from_ns / 1e9);
			if (o->has_to)
				fprintf(f, " to %.9g s", o->to_ns / 1e9);
		}
		fprintf(f, ": %" PRIu64 " samples", sum->samples);
		if (s->samples > 0)
			fprintf(f, " (%.2f%% of the session)", 100.0 * sum->samples / s->samples);
		fputc('\n', f);
	}
	if (o->symbol)		/* rows, not samples: the figures above stand */
		fprintf(f, "# rows: symbol %s only\n", TEXT_SAFE(o->symbol));
	for (i = 0; i < s->nr_events && fleet; i++)
		fprintf(f, "# %s: %" PRIu64 " attributed (what no sample got is not pushed)\n",
			TEXT_SAFE(s->events[i].name), sum->total[i]);
	for (i = 0; i < s->nr_events && !fleet; i++)
		fprintf(f, "# %s: %" PRIu64 " attributed%s, %" PRIu64 " unattributed "
			"(after the last sample of a CPU%s)\n", TEXT_SAFE(s->events[i].name),
			sum->total[i], filtered ? " to these samples" : "",
			sum->unattributed[i], filtered ? ", whole session" : "");
	if (sum->weighted)
		fprintf(f, "# percent: of %s's count, %" PRIu64 " (each sample weighs its "
			"period, which varied: -F on this event)\n", TEXT_SAFE(s->sample_event),
			sum->weight);
	if (sum->unresolved)
		fprintf(f, "# %" PRIu64 " samples (%.2f%%) are in binaries that cannot be "
			"symbolised\n", sum->unresolved,
			sum->samples ? 100.0 * sum->unresolved / sum->samples : 0);
}

/* Warnings about the whole session: lost samples, late records and the
 * processes whose maps they may have made wrong, throttling, groups that
 * did not count.  The fleet has only the lost samples and throttling. */
static void print_warnings(struct source *src, const struct source_summary *ss, FILE *f,
			   const char *prefix)
{
	const struct db_session *s = &ss->sum.session;
	int local = !source_is_fleet(src);
	struct report_unsched u;
	struct error e;

	if (s->lost > 0) {
		char where[400];

		lost_format(ss->lost, ss->nlost, where, sizeof(where));
		fprintf(f, "%sWARNING: %lld samples lost%s%s%s: percentages are of the "
			"samples kept, and counter increases over a gap go to the next "
			"sample; record with a bigger buffer or a lower frequency\n",
			prefix, (long long)s->lost, where[0] ? " (" : "",
			TEXT_SAFE(where), where[0] ? ")" : "");
	}
	if (local && s->late_records > 0)
		fprintf(f, "%sWARNING: %lld records reached strobed more than the merge "
			"horizon late (up to %.3f ms) and were taken out of time order: a late "
			"sample used the maps as of its arrival, a late mmap, exec, fork or exit "
			"marks its process's maps as uncertain\n", prefix,
			(long long)s->late_records, s->late_max_ns / 1e6);
	if (local && (s->lost > 0 || s->late_records > 0)) {
		char who[400];
		int64_t nr = source_uncertain(src, s->id, who, sizeof(who));

		if (nr)
			fprintf(f, "%sWARNING: the maps of %lld process%s (%s) may be wrong "
				"from a lost or late mmap, exec, fork or exit record on: some "
				"of their user samples may be [unknown] or named from the "
				"wrong binary\n", prefix, (long long)nr, nr > 1 ? "es" : "",
				who);
	}
	if (s->throttled > 0)
		fprintf(f, "%sWARNING: the kernel throttled sampling %lld times "
			"(kernel.perf_event_max_sample_rate): fewer samples than asked for\n",
			prefix, (long long)s->throttled);
	if (!local)
		return;
	if (source_unscheduled(src, s->id, &u, &e) < 0) {
		fprintf(f, "%sWARNING: %s\n", prefix, e.msg);
		return;
	}
	if (u.intervals[0])
		fprintf(f, "%sWARNING: the sampling group did not count for %.3f s on CPU%s %s "
			"(the kernel multiplexed it with other events, %" PRIu64 " times): no "
			"samples or counter increases exist for that time\n", prefix,
			u.ns[0] / 1e9, u.nr_cpus[0] > 1 ? "s" : "", u.cpus[0], u.intervals[0]);
	if (u.intervals[1])
		fprintf(f, "%sWARNING: the sampling group could not be scheduled on CPU%s %s "
			"from %.3f s on (%.3f s in all): other pinned events took its PMU "
			"counters; no samples or counter increases exist for that time\n", prefix,
			u.nr_cpus[1] > 1 ? "s" : "", u.cpus[1],
			(double)(u.first_ns[1] - s->start_ns) / 1e9, u.ns[1] / 1e9);
}

/* The notes of a report: header lines (text), else on stderr. */
static void print_notes(const struct report_summary *sum, enum output_format fmt)
{
	for (int i = 0; i < sum->nr_notes; i++)
		fprintf(fmt == OUTPUT_TEXT ? stdout : stderr, "%snote: %s\n",
			fmt == OUTPUT_TEXT ? "# " : "strobe report: ", TEXT_SAFE(sum->notes[i]));
}

/* What the call stacks leave out, as header lines (text) or notes. */
static void print_stack_header(const struct stack_set *set, FILE *f, const char *prefix)
{
	uint64_t all = set->samples + set->no_stack;

	if (!strcmp(prefix, "# "))
		fprintf(f, "# call stacks (%s): %" PRIu64 " samples with a stack\n",
			set->call_graph, set->samples);
	if (set->no_stack)
		fprintf(f, "%s%s%" PRIu64 " samples (%.2f%%) have no call stack and are "
			"left out\n", prefix, strcmp(prefix, "# ") ? "note: " : "",
			set->no_stack, 100.0 * set->no_stack / all);
	if (set->incomplete)
		fprintf(f, "%s%s%" PRIu64 " samples (%.2f%%) have an incomplete stack "
			"(unwinding stopped before the outermost frame): their callers are "
			"missing\n", prefix, strcmp(prefix, "# ") ? "note: " : "",
			set->incomplete, set->samples ? 100.0 * set->incomplete / set->samples : 0);
}

/* --children, --callers and --callees: reports of the call stacks (of a
 * local database). */
static int report_stacks(struct source *src, const struct report_opts *o,
			 enum output_format fmt, int children, const char *symbol,
			 enum calltree_dir dir)
{
	struct source_summary *ss = xcalloc(1, sizeof(*ss));
	struct report_summary *sum = &ss->sum;
	struct db *db = src->db;
	struct calltree *tree = NULL;
	struct stack_set *set;
	struct table *t = NULL;
	struct error err = { "" };
	int ret = 1, wr;

	set = stacks_load(db, o, &err);
	if (!set || calltree_summary(db, set, sum, &err) < 0)
		goto fail;
	if (children)
		t = calltree_children(db, set, o, sum, &err);
	else if ((tree = calltree_build(set, symbol, dir, &err)) && fmt != OUTPUT_JSON)
		t = calltree_table(tree, fmt);
	progress_done(o->progress);
	if (!t && !tree)
		goto fail;
	source_lost_load(src, ss);
	if (fmt == OUTPUT_TEXT) {
		print_header(o, sum, stdout, 0);
		print_stack_header(set, stdout, "# ");
		print_warnings(src, ss, stdout, "# ");
	} else {
		print_stack_header(set, stderr, "strobe report: ");
		print_warnings(src, ss, stderr, "strobe report: ");
	}
	print_notes(sum, fmt);
	wr = t ? table_write(t, fmt, stdout) : calltree_write_json(tree, stdout);
	if (wr < 0 || fflush(stdout) == EOF || ferror(stdout))
		fprintf(stderr, "strobe report: writing the report: %s\n", strerror(errno));
	else
		ret = 0;
	goto out;
fail:
	progress_done(o->progress);
	fprintf(stderr, "strobe report: %s\n", err.msg);
out:
	table_free(t);
	calltree_free(tree);
	stacks_free(set);
	source_summary_free(ss);
	free(ss);
	return ret;
}

/* The header of a fleet report of several sessions. */
static void print_fleet_header(const struct source_summary *fs)
{
	const struct db_session *s = &fs->sum.session;
	int i;

	printf("# fleet: %d sessions of %d host%s, %lld samples, %lld lost",
	       fs->nr_sessions, fs->nr_hosts, fs->nr_hosts == 1 ? "" : "s",
	       (long long)s->samples, (long long)s->lost);
	for (i = 0; i < s->nr_events; i++)
		printf("%s%s", i ? ", " : "; counting: ", TEXT_SAFE(s->events[i].name));
	putchar('\n');
	for (i = 0; i < s->nr_events; i++)
		printf("# %s: %" PRIu64 " attributed (what no sample got is not "
		       "pushed)\n", TEXT_SAFE(s->events[i].name), fs->sum.total[i]);
	if (fs->sum.weighted)
		printf("# percent: of the periods, %" PRIu64 " (each sample weighs "
		       "its period, which varied)\n", fs->sum.weight);
	if (fs->sum.unresolved)
		printf("# %" PRIu64 " samples (%.2f%%) are in binaries that cannot be "
		       "symbolised\n", fs->sum.unresolved,
		       100.0 * fs->sum.unresolved / fs->sum.samples);
}

/* The hot spots of src (source_report()): the local session's, or the
 * fleet's pushed sessions summed in ClickHouse. */
static int report_hotspots(struct source *src, const struct report_opts *o, int by_host,
			   enum output_format fmt)
{
	struct source_summary *ss = xcalloc(1, sizeof(*ss));
	const struct db_session *s = &ss->sum.session;
	int fleet = source_is_fleet(src);
	struct error e = { "" };
	struct table *t;
	int ret = 1;

	t = source_report(src, o, by_host, ss, &e);
	progress_done(o->progress);
	if (!t)
		goto out;
	if (fleet && o->nr_metrics && report_metrics_check(s, o, &e) < 0) {
		ret = cmd_usage_error("report", "%s", e.msg);	/* as the local report */
		goto out_quiet;
	}
	if (fmt == OUTPUT_TEXT && ss->nr_sessions == 1) {
		print_header(o, &ss->sum, stdout, fleet);
		if (o->nr_metrics)
			printf("# metrics: seconds = %.3f s, the length of the %s\n",
			       report_metric_seconds(s, o),
			       o->where && !o->where->per_sample ? "buckets --where kept" :
			       o->has_from || o->has_to ? "--from/--to range" : "session");
	} else if (fmt == OUTPUT_TEXT) {
		print_fleet_header(ss);
	}
	print_warnings(src, ss, fmt == OUTPUT_TEXT ? stdout : stderr,
		       fmt == OUTPUT_TEXT ? "# " : "strobe report: ");
	print_notes(&ss->sum, fmt);
	if (table_write(t, fmt, stdout) < 0 || fflush(stdout) == EOF || ferror(stdout)) {
		error_set(&e, "writing the report: %s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "strobe report: %s\n", e.msg);
out_quiet:
	table_free(t);
	source_summary_free(ss);
	free(ss);
	return ret;
}

/* The command's options but the filters (report_opts). */
struct rcmd {
	const char *dbpath, *source, *host;
	const char *tree_sym;		/* --callers or --callees SYMBOL */
	enum calltree_dir dir;
	enum output_format fmt;
	int by_host, by_given, db_given, markers, children;
};

/* After the options: the report of src, its kind chosen by them. */
static int report_run(struct source *src, struct report_opts *o, const struct rcmd *r)
{
	struct error err = { "" };
	struct progress prog;

	if (r->markers) {
		if (report_markers(src->db, o, r->fmt, stdout, &err) < 0) {
			fprintf(stderr, "strobe report: %s\n", err.msg);
			return 1;
		}
		if (fflush(stdout) == EOF || ferror(stdout)) {
			fprintf(stderr, "strobe report: writing the markers: %s\n",
				strerror(errno));
			return 1;
		}
		return 0;
	}
	if (o->nr_metrics && !source_is_fleet(src)) {
		struct db_session s;	/* a session that lacks a metric's events: usage */

		if (source_session(src, o->session, &s, &err) < 0) {
			fprintf(stderr, "strobe report: %s\n", err.msg);
			return 1;
		}
		if (report_metrics_check(&s, o, &err) < 0)
			return cmd_usage_error("report", "%s", err.msg);
	}
	if (!source_is_fleet(src)) {
		/* on stderr, when it is a terminal and this takes long */
		progress_init(&prog, "strobe report", STDERR_FILENO, 0, "samples");
		o->progress = &prog;
	}
	if (r->children || r->tree_sym)
		return report_stacks(src, o, r->fmt, r->children, r->tree_sym, r->dir);
	return report_hotspots(src, o, r->by_host, r->fmt);
}

/* Option c (getopt_long's, its value in optarg) into r or o: -1 to go on,
 * else the exit status. */
static int parse_option(struct rcmd *r, struct report_opts *o, int c, int argc, char **argv)
{
	char optbuf[256];
	uint64_t v;

	switch (c) {
	case OPT_DB:
		r->dbpath = optarg;
		r->db_given = 1;
		break;
	case OPT_SOURCE:
		r->source = optarg;
		break;
	case OPT_HOST:
		if (!*optarg || strlen(optarg) > 255)
			return cmd_usage_error("report", "bad --host: give a host name of 1 to "
					       "255 bytes, as pushed");
		r->host = optarg;
		break;
	case OPT_BY:
		r->by_host = !strcmp(optarg, "host");
		if (!r->by_host && report_parse_by(optarg, &o->by) < 0)
			return cmd_usage_error("report", "bad --by '%s': use binary, symbol, line, "
					       "cgroup or (with --source) host", optarg);
		r->by_given = 1;
		break;
	case OPT_MARKERS:
		r->markers = 1;
		break;
	case OPT_CHILDREN:
		r->children = 1;
		break;
	case OPT_CALLERS:
	case OPT_CALLEES:
		if (!*optarg)
			return cmd_usage_error("report", "%s needs a function name, as 'strobe "
					       "report --by symbol' shows it", c == OPT_CALLERS ?
					       "--callers" : "--callees");
		if (r->tree_sym)
			return cmd_usage_error("report", "give one of --callers and --callees, "
					       "once");
		r->tree_sym = optarg;
		r->dir = c == OPT_CALLERS ? CALLTREE_CALLERS : CALLTREE_CALLEES;
		break;
	case OPT_FORMAT:
		if (output_parse_format(optarg, &r->fmt) < 0)
			return cmd_usage_error("report", "bad --format '%s': use text, csv or json",
					       optarg);
		break;
	case OPT_INLINE:
		o->inline_chain = 1;
		break;
	case OPT_LIMIT:
		if (parse_u64(optarg, &v) < 0 || v > SIZE_MAX)
			return cmd_usage_error("report", "bad --limit '%s': give a number of rows "
					       "(0: all)", optarg);
		o->limit = (size_t)v;
		break;
	case 'M':
		if (parse_metrics(optarg, o))
			return 2;
		break;
	case 'h':
		fputs(usage_text, stdout);
		return 0;
	case ':':
		return cmd_usage_error("report", "option %s needs a value: see 'strobe report --help'",
				       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
	default:
		return cmd_usage_error("report", "unknown option '%s': see 'strobe report --help'",
				       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
	}
	return -1;
}

/* --source: what the fleet's report takes.  0, or 2 after a usage error. */
static int check_fleet(const struct rcmd *r, const struct report_opts *o)
{
	if (r->db_given)
		return cmd_usage_error("report", "--source reads the fleet, --db a local "
				       "database: give one of them");
	if (!r->by_host && (o->by == REPORT_BY_LINE || o->by == REPORT_BY_CGROUP))
		return cmd_usage_error("report", "--by %s is not supported with --source: "
				       "give --by symbol, binary or host",
				       o->by == REPORT_BY_LINE ? "line" : "cgroup");
	if (r->markers || r->children || r->tree_sym || o->inline_chain ||
	    o->cgroup || o->no_demangle || o->has_pid_at || o->symbol || o->where)
		return cmd_usage_error("report", "with --source only --host, --session, "
				       "--by binary|symbol|host, --format, --limit, -M and the "
				       "filters --pid, --comm, --binary, --kernel, --user, --from "
				       "and --to are supported: %s is not", r->markers ?
				       "--markers" : r->children ? "--children" : r->tree_sym ?
				       "--callers/--callees" : o->inline_chain ? "--inline" :
				       o->cgroup ? "--cgroup" : o->no_demangle ? "--no-demangle" :
				       o->symbol ? "--symbol" : o->where ? "--where" :
				       "--pid PID@START");
	if (o->nr_metrics && (!r->host || !o->session || r->by_host))
		return cmd_usage_error("report", "-M with --source is of one session's "
				       "table: give --host H and --session ID%s",
				       r->by_host ? ", not --by host" : "");
	return 0;
}

/* A local report: the options that go together.  0, or 2 after a usage
 * error. */
static int check_local(const struct rcmd *r, const struct report_opts *o)
{
	int tree = r->tree_sym != NULL;

	if (r->host || r->by_host)
		return cmd_usage_error("report", "%s is of fleet reports: give --source URL",
				       r->host ? "--host" : "--by host");
	if (r->markers && (r->by_given || o->binary || o->mode != REPORT_ALL ||
			   o->inline_chain || o->cgroup || o->where))
		return cmd_usage_error("report", "--markers lists markers, not samples: --by, "
				       "--binary, --cgroup, --kernel, --user, --inline and --where "
				       "do not apply");
	if (r->markers && (r->children || tree))
		return cmd_usage_error("report", "--markers lists markers, not samples: "
				       "--children, --callers and --callees do not apply");
	if (r->children && tree)
		return cmd_usage_error("report", "--children is a table, --callers and --callees "
				       "trees: give one of them");
	if (r->children && (o->by == REPORT_BY_LINE || o->by == REPORT_BY_CGROUP))
		return cmd_usage_error("report", "--children sums functions or binaries: give "
				       "--by symbol or --by binary");
	if (tree && r->by_given)
		return cmd_usage_error("report", "--callers and --callees are trees of functions: "
				       "--by does not apply");
	if ((r->children || tree) && o->inline_chain)
		return cmd_usage_error("report", "--inline does not apply to call stacks: give "
				       "--children, --callers or --callees without it");
	if (o->symbol && (r->markers || r->children || tree || o->by == REPORT_BY_BINARY ||
			  o->by == REPORT_BY_CGROUP))
		return cmd_usage_error("report", "--symbol keeps the rows of one symbol of the "
				       "hot-spot table: give --by symbol or --by line, without "
				       "--markers, --children, --callers or --callees");
	if (o->inline_chain && (o->by == REPORT_BY_BINARY || o->by == REPORT_BY_CGROUP))
		return cmd_usage_error("report", "--inline shows the inline chains of symbols "
				       "and lines: give --by symbol or --by line");
	if (o->nr_metrics && (r->markers || r->children || tree))
		return cmd_usage_error("report", "-M adds metric columns to the hot-spot table: "
				       "--markers, --children, --callers and --callees do not take "
				       "it");
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct filteropt fopt = { "report", FILTEROPT_AT_REPORT };
	struct report_opts o = { .session = 0, .by = REPORT_BY_SYMBOL, .pid = -1,
				 .mode = REPORT_ALL };
	struct rcmd r = { .dir = CALLTREE_CALLERS, .fmt = OUTPUT_TEXT };
	struct error err = { "" };
	struct source src;
	int c, rc;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":hM:", long_opts, NULL)) != -1) {
		int f = filteropt_parse(&fopt, c, optarg, argv[optind - 1], &o);

		if (f == 2)
			return 2;
		if (!f && (rc = parse_option(&r, &o, c, argc, argv)) >= 0)
			return rc;
	}
	if (optind < argc)
		return cmd_usage_error("report", "unexpected argument '%s': see 'strobe report --help'",
				       argv[optind]);
	if (filteropt_check("report", &o))
		return 2;
	if (r.source ? check_fleet(&r, &o) : check_local(&r, &o))
		return 2;
	rc = source_open(&(struct source_spec){ .url = r.source, .host = r.host,
						 .session = o.session,
						 .db = r.source ? NULL : r.dbpath ? r.dbpath :
						       cmd_default_db() }, &src, &err);
	if (rc == SOURCE_BAD_SPEC)
		return cmd_usage_error("report", "bad --source: %s", err.msg);
	if (rc < 0) {
		fprintf(stderr, "strobe report: %s\n", err.msg);
		return 1;
	}
	rc = report_run(&src, &o, &r);
	source_close(&src);
	filteropt_free(&o);
	return rc;
}
