/*
 * fleetquery.h - 'strobe report --source URL': the hot-spot report of
 * pushed sessions, computed in ClickHouse (doc/FLEET.md, "Fleet reports").
 *
 * The samples are summed in ClickHouse per (host, session, binary,
 * offset) with GROUP BY, then named by the symbols and binaries tables
 * and summed again per (host, session, binary, symbol); only those sums
 * come back.  Here they are mapped to event names (c0.. are each
 * session's own counting events), merged, sorted and laid out as the
 * table the local report (report.h) makes, with the same columns, percent
 * and order, so that one host's session reads byte for byte as
 * 'strobe report --db' on that host.
 */
#ifndef STROBE_FLEETQUERY_H
#define STROBE_FLEETQUERY_H

#include <stdint.h>
#include "report.h"
#include "source.h"

struct chclient;
struct table;

enum fleet_by { FLEET_BY_SYMBOL, FLEET_BY_BINARY, FLEET_BY_HOST };

struct fleet_opts {
	const char *host;	/* NULL: every host */
	int64_t session;	/* 0: every session (of the host, or of all) */
	enum fleet_by by;
	size_t limit;		/* 0: all rows */
	/* NULL: none; else its pid (>= 0, no @START), comm, binary, mode,
	 * from/to, as the local report's (report.h); the time range reads
	 * the samples, the others the per-location aggregate */
	const struct report_opts *filt;
};

/*
 * Run the report of o on c: the table (columns as report_build()'s for
 * --by symbol and binary; host, samples, percent and the events for
 * --by host), and fs filled (source.h's struct source_summary, as the
 * local report's: .sum.session the session when one (host, session) was
 * selected, else their sums; the sessions and hosts; the lost samples by
 * kind and CPU, free() fs->lost).  NULL with e set (one line) on a server
 * error, or when o selects no session: "no session N of host H in the
 * fleet" and the like.
 */
struct table *fleetquery_report(struct chclient *c, const struct fleet_opts *o,
				struct source_summary *fs, struct error *e);

/*
 * The sessions o selects (its host and session; NULL and 0: all), by host
 * and id, with their events, as source_sessions() gives them (source.h):
 * *out malloc'ed, *n of them.  0, or -1 with e set (one line): no session
 * (fleetquery_no_session()), more than FLEETQUERY_SESSIONS_MAX, a server
 * error.
 */
#define FLEETQUERY_SESSIONS_MAX	4096
int fleetquery_sessions(struct chclient *c, const struct fleet_opts *o,
			struct source_session **out, size_t *n, struct error *e);

/* -- the pure parts, for the unit tests -- */

/* Append the WHERE condition of o (host and session; "1" when none). */
void fleetquery_where(struct sbuf *b, const struct fleet_opts *o);
/* Append " AND ..." of o->filt's pid, comm, mode and binary (none when
 * NULL; not the time range): conditions on the columns pid, comm, flags
 * and binary_id that samples and samples_by_loc both have. */
void fleetquery_sql_filters(struct sbuf *b, const struct fleet_opts *o);
/* Whether env STROBE_FLEET_RAW (set, not "0") forces the raw samples
 * where an aggregate would do (reports and plots). */
int fleetquery_raw_forced(void);
/* Append "FROM TABLE WHERE ..." of the samples o selects: the per-location
 * aggregate with o's host, session and filters, or (a time range, or env
 * STROBE_FLEET_RAW set) the samples; *count the SQL of their number. */
void fleetquery_from_samples(struct sbuf *b, const struct fleet_opts *o, const char **count);
/* The queries: the sessions' rows, their events, whether the sample
 * periods differ, and the sums of the report. */
void fleetquery_sql_sessions(struct sbuf *b, const struct fleet_opts *o);
/* The error when the fleet has no session of host (NULL: any) and
 * session (0: any), as report, plot and export say it; -1. */
int fleetquery_no_session(struct error *e, const char *host, int64_t session);
/* The fields of a row of fleetquery_sql_sessions() (host first), and the
 * session they describe (not the host) into s. */
#define FLEETQUERY_SESSION_FIELDS	15
void fleetquery_session_parse(char **f, struct db_session *s);
void fleetquery_sql_events(struct sbuf *b, const struct fleet_opts *o);
void fleetquery_sql_weighted(struct sbuf *b, const struct fleet_opts *o);
void fleetquery_sql_lost(struct sbuf *b, const struct fleet_opts *o);
void fleetquery_sql_report(struct sbuf *b, const struct fleet_opts *o);

/* Split one line of TabSeparated output in place into at most max
 * fields, unescaping them; the number of fields. */
int fleetquery_tsv_split(char *line, char **fields, int max);

/* Run sql on c (freed and emptied here) and call row(ctx, fields, e) with
 * each line of its TabSeparated answer split into nf fields, until one
 * returns nonzero.  0, or -1 with e set: a server error, a line without
 * nf fields, or what row() returned. */
int fleetquery_rows(struct chclient *c, struct sbuf *sql, int nf, void *ctx,
		    int (*row)(void *ctx, char **f, struct error *e), struct error *e);

/* The build_id column of a binary key, as the local reports show it
 * (NULL: none). */
const char *fleetquery_build_id(const char *key);

#endif
