/*
 * report.h - hot-spot reports: samples and counter increases of a session
 * grouped by binary, symbol or source line, with derived metrics.
 *
 * Attribution rule: at each sample on CPU c, each counter's increase since
 * the previous sample on c is attributed to that sample.  A report sums the
 * samples and attributed increases of the rows that pass the filters.
 *
 * Unfiltered reports (or filtered by pid/comm/binary/mode only) read the
 * per-session histogram sample_agg, so they cost the number of distinct
 * (binary, offset, pid) keys, not the number of samples; a time range reads
 * the raw samples of the session.
 *
 * Made by report.c, reportread.c, reportrank.c and reportderived.c
 * (report_int.h).
 */
#ifndef STROBE_REPORT_H
#define STROBE_REPORT_H

#include <stdint.h>
#include "db.h"
#include "output.h"

#define REPORT_METRICS_MAX 16	/* -M metrics in one report */

struct metric;
struct where;

enum report_by { REPORT_BY_BINARY, REPORT_BY_SYMBOL, REPORT_BY_LINE, REPORT_BY_CGROUP };
enum report_mode { REPORT_ALL, REPORT_KERNEL, REPORT_USER };

struct report_opts {
	int64_t session;		/* 0: the latest */
	enum report_by by;
	int64_t pid;			/* -1: any */
	int has_pid_at;			/* with pid: only the process that had it
					 * at pid_at_ns since the session start
					 * (the kernel may have reused it) */
	int64_t pid_at_ns, pid_at_slack_ns;	/* selects the last started
					 * by pid_at_ns + slack, else the first */
	const char *comm;		/* NULL: any */
	const char *binary;		/* NULL: any; matches path or basename */
	const char *symbol;		/* NULL: any; else only the rows of the
					 * symbol of this name (as its column shows
					 * it), ranked and with percent as without
					 * (--by symbol or line) */
	const char *cgroup;		/* NULL: any; a cgroup path, or a subtree
					 * ending in '/' (cgset.h) */
	enum report_mode mode;
	int has_from, has_to;
	int64_t from_ns, to_ns;		/* relative to the session start */
	int window;			/* set by report_opts_window(): a window
					 * holding every sample may read the
					 * histograms (report_window_whole); the
					 * commands' --from/--to always scan the
					 * samples they name */
	size_t limit;			/* 0: all rows */
	int no_demangle;		/* 1: raw (mangled) symbol names */
	int inline_chain;		/* 1: rows split by inline chain, and an
					 * inline column (--by symbol or line only) */
	const struct metric *metrics[REPORT_METRICS_MAX];	/* -M: catalogue
					 * metrics (metrics.h), a column each */
	int nr_metrics;
	struct progress *progress;	/* NULL: none; shows the reading of raw
					 * samples and the naming of locations
					 * (progress.h) */
	struct where *where;		/* NULL: none; a metric condition
					 * (where.h) keeping only some samples:
					 * selected by qfilter_init(), applied
					 * by the raw scans (never the
					 * histograms) */
};

struct report_summary {
	struct db_session session;
	uint64_t samples;		/* samples that passed the filters */
	int weighted;			/* percent is of periods: they differ */
	uint64_t weight;		/* what percent is of: samples or periods */
	uint64_t total[STROBE_MAX_COUNTERS];	/* their counter sums */
	uint64_t unattributed[STROBE_MAX_COUNTERS]; /* after the last sample per CPU */
	uint64_t unresolved;		/* samples whose binary could not be symbolised */
	char notes[8][256];		/* problems to show, e.g. missing binaries */
	int nr_notes;
};

/*
 * Build the report table. Columns: [process,] binary, build_id, symbol, [source,]
 * samples, percent, one per counting event (named as given with -e), then
 * derived metrics (ipc, <ev>_per_1k_instructions, <miss>_rate), then, with
 * inline_chain only, inline: the inline chain of the row's code
 * ("outer -> inlined -> ...", outermost first, as resolve.h's
 * resolved.inlined; "" for code not inlined).  With inline_chain a symbol
 * (or line) is one row per chain its samples fell in: the rows of one
 * symbol sum to what it has without inline_chain.  percent
 * is of the samples, or, when their periods differ (-F on an event whose
 * rate varies), of the sum of their periods, as perf report's Overhead;
 * rows are sorted by the same figure.  process ("PID@START", procset.h)
 * is there only when pid was several processes in the session and
 * has_pid_at is not set: each process then has rows of its own.
 * REPORT_BY_CGROUP: one row per cgroup (its processes' cgroup, cgset.h),
 * columns cgroup, samples, percent, the events, the metrics.
 * Then, last, one column per catalogue metric of o->metrics (-M), named by
 * the metric, its value from the row's sums of the session's counting
 * events with "seconds" = report_metric_seconds(); null where it divides
 * by zero.  Fails, as report_metrics_check, if the session did not count
 * a metric's events.
 */
struct table *report_build(struct db *db, const struct report_opts *o,
			   struct report_summary *sum, struct error *e);

/*
 * A window of a session: [from_ns, to_ns), ns since the session start,
 * from_ns included and to_ns not, so that windows that tile a session
 * count each sample once.  report_opts_window() sets it on o as the
 * filters' range (has_from, has_to; the --to of report_opts is
 * inclusive, so o->to_ns = to_ns - 1) for report_build(), stacks_load()
 * and diff_build_windows(); -1 with e set when the window is empty or
 * starts before 0.
 */
int report_opts_window(struct report_opts *o, int64_t from_ns, int64_t to_ns,
		       struct error *e);

/*
 * The hot spots of a window: report_build() over [from_ns, to_ns) of
 * o->session with o's other filters (o's own range is replaced).  The
 * same table, summary and errors; its meta "filters" say
 * "from=F to=T" with T one ns before to_ns.  No printing: for a server
 * (the explorer) as much as for 'strobe report --from --to'.
 */
struct table *report_window(struct db *db, const struct report_opts *o, int64_t from_ns,
			    int64_t to_ns, struct report_summary *sum, struct error *e);

/*
 * 1 when o is a window (o->window: report_opts_window()) whose time
 * range (has_from, has_to) holds every sample of the finished session s,
 * by the earliest and latest times its sample_time rows keep (schema
 * 005): then the session's histograms (sample_agg,
 * stack_agg) answer that window exactly as a scan of its samples would,
 * and report_build() and stacks_load() read them instead (a window of the
 * whole session, as the explorer's first view asks, costs what no window
 * does).  0 otherwise, for a running session, one without sample_time
 * or when the times cannot be read (the scan then says why).
 */
int report_window_whole(struct db *db, const struct db_session *s, const struct report_opts *o);

/*
 * Whether session s counted the events of every metric in o->metrics
 * (by name or alias, metrics.h: metric_event_is).  -1 with e saying, in
 * one line, which events a metric needs that s did not count.
 */
int report_metrics_check(const struct db_session *s, const struct report_opts *o,
			 struct error *e);

/* What "seconds" is in a report's metrics: the session's length, or with
 * --from/--to the length of that range within the session; NaN while the
 * session runs and no --to bounds it.  With a --where selected by buckets
 * (where.h) the length of the buckets it kept. */
double report_metric_seconds(const struct db_session *s, const struct report_opts *o);

/*
 * The -M columns of o->metrics (catalogue metrics of session s's events,
 * "seconds" = report_metric_seconds(s, o)), added to t last, as
 * report_build() adds them; report_mcols_set() fills a row's from its
 * sums c, indexed as s->events (null where a metric divides by zero).
 * free() the result.
 */
struct report_mcols;
struct report_mcols *report_mcols_add(struct table *t, const struct report_opts *o,
				      const struct db_session *s);
void report_mcols_set(struct table *t, size_t row, struct report_mcols *mc, const uint64_t *c);

/* The order of a report's rows: the heavier first, by weight (samples,
 * or their periods when the summary is weighted), then by samples; 0 when
 * both tie, for the caller's tie-breaks by name.  The fleet's report
 * ranks its rows with it too (fleetquery.c). */
int report_rank_cmp(uint64_t weight_a, uint64_t samples_a, uint64_t weight_b,
		    uint64_t samples_b);

/* The note a report makes of session s's state (running, aborted or
 * interrupted: what its samples lack) into buf: 1, or 0 when it has none.
 * The fleet's report makes it too (fleetquery.c). */
int report_state_note(const struct db_session *s, char *buf, size_t len);

/* The report's meta data (JSON "meta": session, its figures, the
 * filters; with a selected --where, "where": what it kept, where.h's
 * where_note()), as report_build() adds it; for other reports of samples
 * (calltree.h) that have the same summary. */
void report_add_meta(struct table *t, const struct report_opts *o,
		     const struct report_summary *sum);

/* Append o's filters to out as the JSON meta "filters" spells them:
 * "pid=42 comm=ls binary=/usr/bin/ls mode=kernel cgroup=/a from=1.5s
 * to=2s where='page-faults > 200' invert where_sample" (only those
 * given; nothing when none is). */
void report_filters_str(const struct report_opts *o, struct sbuf *out);

/* Add to out[0..s->nr_events) the counter increases of session s that
 * no sample got: after each CPU's last sample, and over lost intervals. */
int report_unattributed(struct db *db, const struct db_session *s, uint64_t *out,
			struct error *e);

/*
 * When the session's sampling groups were enabled but not counting (table
 * unscheduled, schema 8): [0] multiplexed with other events, [1] not
 * schedulable at all.  ns: time not counting, summed over CPUs; cpus: the
 * CPUs, "0, 1"; first_ns: the earliest interval's start.
 */
struct report_unsched {
	uint64_t ns[2], intervals[2];
	int nr_cpus[2];
	int64_t first_ns[2];
	char cpus[2][96];
};
int report_unscheduled(struct db *db, int64_t session, struct report_unsched *u,
		       struct error *e);

/* What a lost.kind means, in words: "ring buffer full", "dropped by the
 * kernel", "throttled", "not stored: strobed died with them spooled";
 * another kind as it is ("" included). */
const char *report_lost_kind(const char *kind);

/* The derived columns of a report of session s (ipc,
 * <ev>_per_1k_instructions, <miss>_rate), from its counting events: each
 * scale * events[num] / events[den], of type COL_FLOAT or COL_PCT, null
 * where the denominator is 0.  The number of them, at most max. */
struct report_derived {
	char name[300];
	enum col_type type;
	int num, den;
	double scale;
};
int report_derived_list(const struct db_session *s, struct report_derived *mt, int max);

/* Parse "binary", "symbol" or "line". */
int report_parse_by(const char *s, enum report_by *by);

#endif
