/*
 * metrics.h - the catalogue of derived metrics (IPC, CPI, misses per 1k
 * instructions, miss rates, page faults per second, TopDown level 1, ...),
 * defined once in one data file and used the same way by 'strobe count
 * -M', 'strobe report -M' columns, 'strobe plot --metric NAME' and
 * 'strobe list --metrics'.
 *
 * A metric is an expression (expr.h syntax) over event names as -e takes
 * them (events.h), plus the name "seconds": the length of the interval the
 * counts cover (a count's run, an -I interval, a plot bucket, a report's
 * session).  Its value is the expression times scale, in unit.
 */
#ifndef STROBE_METRICS_H
#define STROBE_METRICS_H

#include <stddef.h>
#include "util.h"

#define METRIC_NAME_MAX		64
#define METRIC_EVENTS_MAX	8	/* events one metric may use */

struct metric {
	const char *name;	/* "IPC", matched case-insensitively */
	const char *expr;	/* "instructions / cycles" */
	double scale;		/* the value is expr * scale (1000 for per-1k) */
	const char *unit;	/* "insn/cycle", "%", "/s", "misses/1k insn" */
	const char *group;	/* "pipeline", "cache", "tlb", "branch", "os", "topdown" */
	const char *desc;	/* one line */
};

/* The catalogue, in the data file's order.  n is set to its size. */
const struct metric *metrics_all(size_t *n);

/* The metric called name (case-insensitive), or NULL. */
const struct metric *metric_find(const char *name);

/*
 * The events m needs, each once, in the order the expression names them
 * ("seconds" is not an event and is left out).  Fails only on a catalogue
 * error (an expression that does not parse: a build-time bug, which
 * test_metrics catches).
 */
int metric_events(const struct metric *m, char names[][128], size_t max, size_t *n,
		  struct error *e);

/*
 * Whether this machine can compute m: every event it needs parses and they
 * open as one group, a PMU's slots event leading (event_probe_group:
 * system-wide as strobed opens them, else on this process in user space,
 * so that it answers for the machine without root).  0: yes; -1: no, with e saying why in one line
 * naming the first missing event ("needs 'cycles', which this machine
 * lacks: no hardware PMU").
 */
int metric_check(const struct metric *m, struct error *e);

/*
 * The value of m given the counts of its events: value(name) returns an
 * event's count (NaN when unknown); seconds is the interval's length.
 * NaN when a count is unknown or a division is by zero.
 */
double metric_eval(const struct metric *m, double (*value)(void *ctx, const char *name),
		   void *ctx, double seconds);

/* 1 if m's expression uses "seconds" (a rate: per-second metrics). */
int metric_uses_seconds(const struct metric *m);

/*
 * Whether an event name as recorded (a session's -e, a count's -e) is the
 * catalogue's event name: equal ignoring case, or both parse (events.h) to
 * the same type and config (config1, config2), so "faults" is
 * "page-faults" and "cycles:u" is "cycles" (modifiers are not compared).
 */
int metric_event_is(const char *catalogue_name, const char *recorded_name);

/*
 * Whether the events have(ctx, name) says were counted cover m.  0: yes;
 * -1: no, with e saying, in one line, "metric IPC needs 'instructions'
 * and 'cycles', which WHAT did not count: record with -e
 * instructions,cycles" (what: "session 3"; the events in metric_events'
 * order).  have() is given catalogue
 * names (metric_event_is helps match them).
 */
int metric_covered(const struct metric *m, int (*have)(void *ctx, const char *name),
		   void *ctx, const char *what, struct error *e);

struct table;

/*
 * The catalogue as a table for 'strobe list --metrics', one row per metric
 * in the data file's order: name, group, unit, expression (the scale
 * written into it: "1000 * (...)"), computable ("yes"/"no", by
 * metric_check on this machine), description, why_not (metric_check's
 * message, empty when computable).
 */
struct table *metrics_table(void);

/* The expression with its scale, as plot and list show it: "instructions /
 * cycles", "100 * (branch-misses / branches)".  Freed by the caller. */
char *metric_expr_scaled(const struct metric *m);

#endif
