/*
 * countfmt.h - the rows 'strobe count' prints and their three formats:
 * perf stat's aligned text, its -x SEP fields and its -j JSON lines.
 *
 * A row is one count of one event (aggregated over CPUs, a core, a socket
 * or a thread), with perf stat's metric column.  The rows of one reading
 * (a run, or one -I interval) are built from a counter set's values by
 * count_rows_build, which also fills the metric column perf stat fills by
 * default (task-clock: CPUs utilized; software events: a rate per second
 * of task-clock; instructions: per cycle; branch-misses: % of branches;
 * cycles: GHz), and the -M metrics (metrics.h): each in the row of the
 * first event it needs (instead of the default metric), or on a
 * metric-only line after it when that row has one already; its unit
 * column is "UNIT NAME" ("insn/cycle IPC").  -r N averages N runs' rows
 * with count_runs_*.
 *
 * -x SEP fields, in perf stat's order:
 *   [interval SEP] [aggregate id SEP [units SEP]] value SEP unit SEP event
 *   SEP [stddev% SEP] run time (ns) SEP % running SEP metric value SEP
 *   metric unit
 * where "units" (how many CPUs a core or socket line sums) is there for
 * --per-core and --per-socket, and stddev% only with -r.  JSON: one object
 * per line with perf stat -j's keys (interval, cpu | core | socket |
 * thread, aggregate-number, counter-value, unit, event, variance,
 * event-runtime, pcnt-running, metric-value, metric-unit); a row without
 * a metric has "metric-unit" : "" (perf 6.1 writes "(null)").
 */
#ifndef STROBE_COUNTFMT_H
#define STROBE_COUNTFMT_H

#include <stdio.h>
#include "counter.h"
#include "metrics.h"

#define COUNT_UNIT_MAX 32

struct count_row {
	char id[COUNT_ID_MAX];		/* the aggregate's id, "" when global */
	int nr;				/* units summed */
	char event[EVENT_NAME_MAX];	/* "" for a metric-only line (a second -M
					 * metric whose first event has one) */
	int ev;				/* its index in the counter set; -1: metric-only */
	enum count_status status;
	double value;			/* scaled count (times its PMU's scale:
					 * eventpmu.h); a clock's in msec */
	char unit[EVENT_PMU_UNIT_MAX];	/* "msec", the PMU's unit ("Joules"), or "" */
	int clock;			/* a clock: value in msec, counted in ns */
	int decimals;			/* 2: a clock's or a PMU-scaled value */
	uint64_t run_ns;		/* time it ran, summed over units */
	double pct;			/* % of the enabled time it ran */
	double stddev_pct;		/* -r: the mean's standard error in %; < 0: none */
	int has_metric;
	double metric;
	char metric_unit[COUNT_UNIT_MAX];
};

enum countfmt_mode { COUNTFMT_TEXT, COUNTFMT_CSV, COUNTFMT_JSON };

struct countfmt {
	enum countfmt_mode mode;
	const char *sep;	/* -x SEP */
	enum count_aggr aggr;
	int interval;		/* -I: each row starts with its time */
	int runs;		/* -r N (1: none) */
};

/*
 * The rows of one reading: vals[cs->nev * cs->nunits] (totals, or an
 * interval's deltas), aggregated by fmt->aggr (topo[ntopo] for --per-core
 * and --per-socket), seconds the reading's wall-clock length, metrics[nm]
 * the -M metrics (their events among cs's).  -A lists each event over
 * every CPU, the other modes each aggregate's events together.  An event
 * opened on some CPUs only (COUNT_FD_NOT_HERE: a cpumask PMU's) sums
 * those, and has no row for an aggregate of none of them (-A: its CPUs
 * only, as perf stat).  Its value is multiplied by cs->scale and has
 * cs->unit as its unit (perf stat's "12.34 Joules power/energy-pkg/").
 * *rows is malloc'd.
 */
int count_rows_build(const struct counter_set *cs, enum count_aggr aggr,
		     const struct count_cpu_topo *topo, size_t ntopo,
		     const struct count_value *vals, double seconds,
		     const struct metric *const *metrics, size_t nm,
		     struct count_row **rows, size_t *nrows, struct error *e);

/*
 * -r N: the mean of each row over the runs added, and the standard error
 * of that mean in percent (perf stat's "+- x%": the sample standard
 * deviation over sqrt(runs), relative to the mean).
 */
struct count_runs {
	size_t nrows, n;
	struct count_row *first;	/* the first run's rows: ids, names */
	double *sum, *m2, *mean;	/* Welford, per row: value */
	double *msum, *run_sum, *pct_sum;
	int *counted, *has_metric;
};
void count_runs_init(struct count_runs *r);
/* Add one run's rows; every run must give the same rows (same events and
 * aggregates), else -1. */
int count_runs_add(struct count_runs *r, const struct count_row *rows, size_t n, struct error *e);
/* The mean rows (malloc'd), stddev_pct set. */
struct count_row *count_runs_mean(const struct count_runs *r, size_t *n);
void count_runs_free(struct count_runs *r);

/* One row; t is the interval's end in seconds (-I only). */
void countfmt_row(FILE *f, const struct countfmt *fmt, double t, const struct count_row *r);

/* Text only: the " Performance counter stats for 'WHAT' (N runs):"
 * heading, or -I's column heading (printed once). */
void countfmt_header(FILE *f, const struct countfmt *fmt, const char *what);

/* Text only: the elapsed time (with its +- under -r) and, when the
 * command counted is the one that ran (have_cmd: not -a, -p or -t), its
 * user and system time, as perf stat shows them. */
void countfmt_footer(FILE *f, const struct countfmt *fmt, double elapsed, double elapsed_stddev,
		     int have_cmd, double user, double sys);

/* perf stat's standard error of the mean, as a percentage of the mean:
 * 100 * sqrt(m2 / (n - 1) / n) / mean; 0 when n < 2 or mean is 0. */
double count_stddev_pct(double mean, double m2, size_t n);

#endif
