/*
 * diff.h - 'strobe diff A B': two sessions' hot spots side by side, their
 * shares' differences, and which of those are within sampling noise.
 *
 * Each session's rows are report.h's (report_build, by binary, symbol or
 * line, with the same filters for both), so a row's samples and percent
 * are exactly what 'strobe report' shows for it (percent of the samples
 * that pass the filters, or of their periods when the session weighs
 * samples by period).  Rows are matched by NAME: the binary as the
 * report shows it (its path), the symbol, and with --by line the source
 * ("file:line"); never by address or build-id, so a rebuilt binary at the
 * same path still matches.  Rows of one session with the same names (a
 * pid that was several processes, two builds of one path) are summed
 * first.  A row in one session only has 0 samples and 0% in the other.
 *
 * delta_percent = b_percent - a_percent (B minus A, in points).  Counting
 * events recorded by both sessions (matched by name) get a_EV, b_EV and
 * delta_EV = b_EV - a_EV, the raw attributed counts.
 *
 * Sampling noise (diff_within_noise): with p_a = a_percent / 100 over n_a
 * samples and p_b over n_b, the two-proportion test under "same share":
 *   p = (p_a n_a + p_b n_b) / (n_a + n_b),
 *   se = sqrt(p (1 - p) (1 / n_a + 1 / n_b)),
 *   within noise  <=>  |p_b - p_a| <= 2 se  (about 95% of equal shares).
 * n is the samples that pass the filters, also when the percent is of
 * periods.  With no samples in A or B nothing is within noise.
 */
#ifndef STROBE_DIFF_H
#define STROBE_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include "db.h"
#include "output.h"
#include "report.h"

#define DIFF_NOISE_SE 2.0	/* the noise bound, in standard errors */
#define DIFF_NR_NOTES 20

/* One matched row.  symbol is NULL in --by binary, source NULL unless
 * --by line; ev[s][k] is common event k's count in session s (0: A, 1: B). */
struct diff_row {
	char *binary, *symbol, *source;
	uint64_t samples[2];
	double percent[2];
	uint64_t ev[2][STROBE_MAX_COUNTERS];
	double delta;			/* percent[1] - percent[0] */
	int within_noise;
};

struct diff {
	enum report_by by;
	int64_t session[2];		/* ids (diff_build), else 0 */
	uint64_t total[2];		/* samples that pass the filters: the n of the test */
	int nev;			/* events both sessions counted, A's order */
	char evname[STROBE_MAX_COUNTERS][128];
	int evcol[2][STROBE_MAX_COUNTERS];	/* that event's index in A's, B's list */
	struct diff_row *rows;
	size_t n, cap;
	int sorted;			/* diff_finish done */
	char notes[DIFF_NR_NOTES][320];	/* problems to show (report's notes too) */
	int nr_notes;
	struct report_summary *sum[2];	/* diff_build only: each session's */
	char host[2][256];		/* the fleet's hosts when A's and B's
					 * differ (else ""): in the meta */
	char where[2][640];		/* diff_build_where(): the sides'
					 * conditions, as where_said() says them */
	int has_window[2];		/* diff_build_windows(): the sides' windows */
	int64_t window[2][2];		/* [from, to), ns since their sessions' start */
};

/* Is a change from a_pct of na samples to b_pct of nb within noise (the
 * rule above)?  Percentages in points (0..100). */
int diff_within_noise(double a_pct, uint64_t na, double b_pct, uint64_t nb);

/* A diff of rows by `by`; events as each session names them (ev_a[0..na)
 * in A's column order, ev_b in B's): those in both are compared. */
struct diff *diff_new(enum report_by by, const char *const *ev_a, int na,
		      const char *const *ev_b, int nb);
void diff_free(struct diff *d);

/* Add one row of session `side` (0: A, 1: B); ev is in that session's
 * event order (as given to diff_new), NULL: none.  Names are copied. */
void diff_add(struct diff *d, int side, const char *binary, const char *symbol,
	      const char *source, uint64_t samples, double percent, const uint64_t *ev);

/* Add every row of report_build()'s table t (of session `side`, made with
 * d->by and inline_chain off). */
int diff_add_report(struct diff *d, int side, const struct table *t, struct error *e);

/* Set the totals, match rows of the same names, compute deltas and the
 * noise mark, sort by |delta| descending (then binary, symbol, source).
 * Rows are then d->rows[0..d->n). */
void diff_finish(struct diff *d, uint64_t total_a, uint64_t total_b);

/*
 * Check that a and b can be compared: both exist, differ, and neither is
 * still running.  0: yes (s[0], s[1] loaded); -2 with e set: they cannot
 * (a usage error for the command); -1 with e set: the database failed.
 */
int diff_sessions(struct db *db, int64_t a, int64_t b, struct db_session s[2],
		  struct error *e);

/* The steps of diff_build(), for reports made elsewhere (the fleet's,
 * lib/fleet/fleetexport.h): diff_begin() with both sessions (their ids,
 * events, sampling event, lost samples: the notes on them),
 * diff_add_side() with each side's report table (report_build()'s
 * columns) and summary (d keeps sum, calloc()ed, and adds its notes),
 * diff_end() to match, sort and note sides without samples. */
struct diff *diff_begin(const struct db_session s[2], enum report_by by);
int diff_add_side(struct diff *d, int side, const struct table *t,
		  struct report_summary *sum, struct error *e);
void diff_end(struct diff *d);

/* Both sessions' reports with filters o (its session, by, limit and
 * inline_chain are ignored), matched and finished.  Returns -2 as
 * diff_sessions() does, -1 on other errors. */
int diff_build(struct db *db, int64_t a, int64_t b, enum report_by by,
	       const struct report_opts *o, struct diff **out, struct error *e);

/*
 * A window of a session to compare: [from_ns, to_ns), ns since its start
 * (report.h: report_opts_window()).
 */
struct diff_window {
	int64_t session;
	int64_t from_ns, to_ns;
};

/*
 * diff_build() of two windows: each side's report is report_window() of
 * its window, with o's other filters (o's session, range, by, limit and
 * inline_chain are ignored), rows matched by name as between sessions.
 * The windows may be of one session (before and after a change within a
 * run); they must differ, and each must be a window (report_opts_window),
 * else -2 with e set (the caller's mistake), as for sessions missing or
 * still running; -1 on other errors.  d->has_window, d->window record
 * them, and diff_table()'s JSON meta adds a_window and b_window
 * ("1.5s-2s").  No printing: for a server (the explorer) and any command.
 */
int diff_build_windows(struct db *db, const struct diff_window w[2], enum report_by by,
		       const struct report_opts *o, struct diff **out, struct error *e);

/*
 * The samples of one session where o->where (a metric condition, where.h)
 * holds against the rest: A, the base, is the session with the condition
 * inverted, B with it as given (so --where C --invert compares the
 * other way).  Buckets (or samples) where it is undefined are in neither.
 * o's other filters apply to both; its session is the one compared
 * (0: the latest); by, limit and inline_chain as diff_build().  -2 with
 * e set for a session missing or running, or no o->where; -1 on other
 * errors (the condition's: a name the session lacks, ...).  d->where
 * says the sides' conditions (diff_table()'s JSON meta: a_where,
 * b_where).
 */
int diff_build_where(struct db *db, enum report_by by, const struct report_opts *o,
		     struct diff **out, struct error *e);

/*
 * For any builder of a diff of two windows (diff_build_windows(), the
 * fleet's): diff_windows_opts() narrows ro[side] to w[side]'s window
 * (report_opts_window()), -2 with e prefixed "A" or "B" when one is not a
 * window; diff_set_windows() records the windows in d (has_window,
 * window).
 */
int diff_windows_opts(struct report_opts ro[2], const struct diff_window w[2],
		      struct error *e);
void diff_set_windows(struct diff *d, const struct diff_window w[2]);

/*
 * The table: binary, symbol, a_samples, b_samples, a_percent, b_percent,
 * delta_percent, within_noise, then for each common event EV: a_EV, b_EV,
 * delta_EV, then with --by line source.  symbol is null (empty in CSV) in
 * --by binary.  within_noise is an integer 0/1 in CSV and JSON; in text
 * the column is "noise", "~" when within noise, else empty.  At most
 * limit rows (0: all), the largest |delta| first.  JSON meta: both
 * sessions and their totals, by, the filters of o (may be NULL), the rule.
 */
struct table *diff_table(const struct diff *d, const struct report_opts *o,
			 enum output_format fmt, size_t limit);

#endif
