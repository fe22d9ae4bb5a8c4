/*
 * fleetexport.h - 'strobe export --source URL' and 'strobe diff --source
 * URL': the samples of pushed sessions as the local CSV and Chrome trace
 * exports write them, and two pushed sessions (of one host or of two) compared as the
 * local diff compares them (doc/FLEET.md, "Fleet export", "Fleet diff").
 *
 * The export is one SELECT with FORMAT TabSeparated, ordered as the local
 * export orders a session's samples (by time; equal times by CPU, the
 * order strobed's merge stores them in), whose lines are read as they
 * arrive (chclient_query_lines()) and written by the local export's CSV
 * code (exportcsv.h): one host's session is byte for byte 'strobe export
 * --db ... --format csv' of it (with --process-start too, from the
 * pushed processes).  The Chrome trace is the same query (and the
 * session's markers and lost records) given to the local export's writer
 * (chrometrace.h).  The diff is fleetquery_report() of each
 * side, given to the local diff's code (diff.h).
 */
#ifndef STROBE_FLEETEXPORT_H
#define STROBE_FLEETEXPORT_H

#include <stdint.h>
#include <stdio.h>
#include "diff.h"
#include "fleetquery.h"

struct chclient;

struct fleetexport_opts {
	const char *host;		/* NULL: every host */
	int64_t session;		/* 0: every session (of the host, or of all) */
	int64_t pid;			/* -1: any */
	const char *comm;		/* NULL: any */
	int has_from, has_to;		/* time since each session's start */
	int64_t from_ns, to_ns;
	int host_column;		/* a first column host even for one host */
	int process_start;		/* csv: a last column process_start_ns */
	int samples;			/* chrome-trace: each sample an event */
	int64_t bucket_ns;		/* chrome-trace: of the counters */
};

/* What an export wrote. */
struct fleetexport_stats {
	int nr_sessions, nr_hosts;
	uint64_t rows;
	uint64_t anon;			/* rows in [anon] code (JIT: not named per process) */
};

/*
 * Write the CSV of o's samples to f: the local export's columns; with
 * samples of several hosts (or o->host_column) a first column host, with
 * several sessions then a column session; the counting events are the
 * union of the sessions' by name (empty for a session that did not count
 * one).  Nothing is written when nothing matches.  0, or -1 with e set
 * (one line: a server error, no such session, nothing to export, f
 * failing).
 */
int fleetexport_csv(struct chclient *c, const struct fleetexport_opts *o, FILE *f,
		    struct fleetexport_stats *st, struct error *e);

/*
 * Write the Chrome trace of o's sessions to f (chrometrace.h): one
 * session's is the local 'strobe export --format chrome-trace' of it;
 * several sessions are each a group of processes, their pids offset by
 * CHROMETRACE_PID_SPAN times their index (in host, session order) and
 * their process names prefixed "host#session: ", otherData a list of
 * them.  0, or -1 with e set (one line), as fleetexport_csv().
 */
int fleetexport_chrome(struct chclient *c, const struct fleetexport_opts *o, FILE *f,
		       struct fleetexport_stats *st, struct error *e);

/* A session of the fleet: its host, id and start (CLOCK_MONOTONIC). */
struct fleetexport_session {
	const char *host;
	int64_t id, start_ns;
};

/* -- the pure parts, for the unit tests -- */

/* Append the samples' WHERE condition: o's host, session, pid, comm and
 * time range (relative to each of the n sessions' start). */
void fleetexport_where(struct sbuf *b, const struct fleetexport_opts *o,
		       const struct fleetexport_session *ss, size_t n);
/* The samples' query: host, session, time_ns, tsc, cpu, pid, tid, comm,
 * binary (display name), binary_key, symbol, offset, flags, c0..c7. */
void fleetexport_sql(struct sbuf *b, const struct fleetexport_opts *o,
		     const struct fleetexport_session *ss, size_t n);
#define FLEETEXPORT_FIELDS	21

/*
 * A side of 'strobe diff --source': "ID" (of host, which must then be
 * given) or "HOST:ID" (the last ':' splits).  0 with *h (pointing into
 * arg, or host; not NUL-terminated at the ':', see *hlen) and *id; -1
 * with e set (one line).
 */
int fleetdiff_parse_side(const char *arg, const char *host, const char **h, size_t *hlen,
			 int64_t *id, struct error *e);

/*
 * The comparison of session a of host ha with session b of host hb, by
 * binary or symbol: both fleet reports, of the samples that pass filt
 * (NULL: all; the filters of report --source), matched as diff_build()
 * matches local ones, with the same notes.  0; -2 with e
 * set when they cannot be compared (the same session, one not in the
 * fleet, one still running: a usage error); -1 on other errors.
 */
int fleetdiff_build(struct chclient *c, const char *ha, int64_t a, const char *hb, int64_t b,
		    enum report_by by, const struct report_opts *filt, struct diff **out,
		    struct error *e);

/*
 * fleetdiff_build() of two windows, w[i]
 * of session w[i].session of host ha (A) and hb (B), [from_ns, to_ns)
 * since its start, each side's report through filt's other filters (NULL:
 * none) and the window (report_opts_window()), as diff_build_windows()
 * compares local windows: d->has_window and d->window set.  The windows
 * may be of one session; 0, -2 with e set when they cannot be compared
 * (the same window, an empty one, a session not in the fleet or still
 * running), -1 on other errors.
 */
int fleetdiff_build_windows(struct chclient *c, const char *ha, const char *hb,
			    const struct diff_window w[2], enum report_by by,
			    const struct report_opts *filt, struct diff **out, struct error *e);

#endif
