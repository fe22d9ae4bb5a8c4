/*
 * source.h - where a command's samples come from, behind one interface: a
 * local database (--db, one of its sessions) or the ClickHouse fleet of
 * pushed sessions (--source URL, its sessions selected by host and id).
 *
 * source_open() opens either; each query a command makes is a function
 * over the source: its sessions (source_sessions), the hot spots
 * (source_report), the session header's figures (source_lost_load,
 * source_uncertain, source_unscheduled), the series of a plot
 * (source_series), a comparison of sessions or windows (source_diff,
 * source_diff_windows) and the samples (source_export).  A local source runs lib/query's code on the
 * database (source.c, sessionexport.c); the fleet runs the same query in
 * ClickHouse (lib/fleet/fleetsource.c over fleetquery, fleetplot and
 * fleetexport), giving the same tables, series and bytes: the fleet is
 * the local queries run elsewhere, not a second copy of the commands.
 *
 * The call stacks, markers and cgroups are the local database's only:
 * commands read them from src->db, and refuse their options with
 * --source before opening.
 */
#ifndef STROBE_SOURCE_H
#define STROBE_SOURCE_H

#include <stdint.h>
#include <stdio.h>
#include "db.h"
#include "diff.h"
#include "report.h"
#include "series.h"

struct chclient;
struct fleetplot;
struct progress;

/* What to open, as the command line says it. */
struct source_spec {
	const char *db;			/* local: the database's path */
	const char *url;		/* non-NULL: the fleet at this URL
					 * (http://HOST:8123/?database=strobe) */
	const char *host;		/* fleet: that host's sessions (NULL: all) */
	int64_t session;		/* 0: local the latest, fleet every
					 * session (of host) */
};

struct source {
	struct db *db;			/* local: the database, read only */
	struct chclient *fleet;		/* fleet: its client, schema checked */
	const char *host;		/* the spec's */
	int64_t session;
	struct fleetplot *fp;		/* fleet: source_series()'s sessions */
};

/* source_open()'s failure for a spec that cannot be right (a bad URL):
 * the command's usage error; -1 is any other (the server, credentials,
 * the database). */
#define SOURCE_BAD_SPEC	(-2)

/* Open spec into src: the database read only, or the fleet's client with
 * the credentials of the environment (chclient_credentials()) and its
 * schema checked (push_check_schema()).  0; SOURCE_BAD_SPEC or -1 with e
 * set (one line) and src empty. */
int source_open(const struct source_spec *spec, struct source *src, struct error *e);
void source_close(struct source *src);

/* The fleet's selection from now on: host (NULL: every host) and session
 * (0: every session), as a spec's; the series' sessions opened for the
 * old one are closed when it changes.  Nothing for a local source. */
void source_pick(struct source *src, const char *host, int64_t session);

/* Whether spec can be opened as far as its text says (the fleet's URL:
 * chclient_url_parse()), without opening it: 0, or SOURCE_BAD_SPEC with
 * e set.  For commands that refuse a bad URL before other work. */
int source_check(const struct source_spec *spec, struct error *e);

static inline int source_is_fleet(const struct source *src)
{
	return src->fleet != NULL;
}

/* The local session id (0: the latest) in *s.  0, or -1 with e set; the
 * fleet's sessions come with each query's answer (-1: not asked here). */
int source_session(struct source *src, int64_t id, struct db_session *s, struct error *e);

/* ---- the sessions ---- */

/* A session of a source, and its host in the fleet. */
struct source_session {
	char host[256];			/* the fleet: its host; local: "" */
	struct db_session s;		/* the fleet's: duration_ns is end -
					 * start (0 while running), no CPUs,
					 * call graph nor time buckets */
};

/*
 * The sessions of src into *out (malloc'ed, *n of them): local, every
 * session of the database (db_session_get()), newest first, or only
 * session id (id > 0; host is ignored); the fleet's of host (NULL: of
 * every host) and id (0: every one), by host and id, with their events,
 * as fleetquery_sql_sessions() selects them (fleetquery_sessions()).
 * 0, or -1 with e set (one line: none found, more than the fleet's
 * reports take, a database or server error).
 */
int source_sessions(struct source *src, const char *host, int64_t id,
		    struct source_session **out, size_t *n, struct error *e);

/* ---- hot spots (report.h) ---- */

/* Samples lost of a kind on a CPU: the lost table summed (or, for older
 * sessions, session_cpus.lost with kind ""). */
struct source_lost {
	char kind[64];
	int cpu;
	int64_t count;
};

/* What a report covered, for its header lines. */
struct source_summary {
	struct report_summary sum;	/* .session: the session; of several
					 * pushed sessions their sums (fleetquery.h) */
	int nr_sessions, nr_hosts;	/* the fleet's selection (local: 1, 1) */
	struct source_lost *lost;	/* where samples were lost, by kind and
					 * CPU (source_summary_free()) */
	size_t nlost;
};
void source_summary_free(struct source_summary *ss);

/*
 * The hot-spot table of o over src (its session: src's), into ss: the
 * local report_build(), or fleetquery_report() with src's host and
 * session, o's by (binary or symbol; by_host: a row per host, the fleet
 * only), limit and filters (the caller refused those the fleet does not
 * take: --cgroup, --pid PID@START, ...).  NULL with e set (one line).
 */
struct table *source_report(struct source *src, const struct report_opts *o, int by_host,
			    struct source_summary *ss, struct error *e);

/* ss->lost of a local session whose samples were lost (ss->sum.session),
 * for reports made without source_report() (the call stacks); the
 * fleet's come with its report.  Rows that cannot be read: none. */
void source_lost_load(struct source *src, struct source_summary *ss);

/* The local processes whose maps may be wrong (processes.uncertain_ns,
 * schema 9) of session: how many, and the first five as "pid P (comm),
 * ..." in buf.  0 for the fleet and older schemas. */
int64_t source_uncertain(struct source *src, int64_t session, char *buf, size_t len);

/* report_unscheduled() of a local session; the fleet: none (zeroed). */
int source_unscheduled(struct source *src, int64_t session, struct report_unsched *u,
		       struct error *e);

/* ---- series (series.h) ---- */

/* The series source of src's selection: the local session, or the fleet's
 * sessions as one (fleetplot.h; kept in src until source_close()), with
 * how many sessions and hosts it holds (local: 1 and 1).  0, or -1 with
 * e set. */
int source_series(struct source *src, struct series_source *ss, int *nsessions, int *nhosts,
		  struct error *e);

/* ---- comparison (diff.h) ---- */

/* A side of a comparison: a session id, of host for the fleet. */
struct source_side {
	const char *host;		/* fleet only */
	int64_t id;
};

/*
 * Compare side a with side b by o->by (the fleet: binary or symbol), of
 * the samples that pass o's filters (filtered 0: none given; the fleet
 * then reads its unfiltered aggregates): diff_build() or
 * fleetdiff_build().  0; -2 with e set when they cannot be compared (a
 * usage error), -1 on other errors.
 */
int source_diff(struct source *src, const struct source_side *a, const struct source_side *b,
		const struct report_opts *o, int filtered, struct diff **out, struct error *e);

/*
 * Compare window w[0] of side a's session (a->id is ignored: w[0].session
 * is it) with window w[1] of b's, by o->by (the fleet: binary or symbol),
 * of the samples that pass o's other filters (filtered 0: none given):
 * diff_build_windows(), or fleetdiff_build_windows() with a's and b's
 * hosts (which the fleet needs).  0; -2 with e set when they cannot be
 * compared (a usage error), -1 on other errors.
 */
int source_diff_windows(struct source *src, const struct source_side *a,
			const struct source_side *b, const struct diff_window w[2],
			const struct report_opts *o, int filtered, struct diff **out,
			struct error *e);

/* ---- samples (exportcsv.h, chrometrace.h) ---- */

enum source_export_fmt { SOURCE_EXPORT_CSV, SOURCE_EXPORT_CHROME };

struct source_export_opts {
	enum source_export_fmt fmt;
	int64_t pid;			/* -1: any */
	const char *comm;		/* NULL: any */
	int has_from, has_to;		/* time since the (each) session's start */
	int64_t from_ns, to_ns;
	int process_start;		/* csv: a last column process_start_ns */
	int samples;			/* chrome-trace: each sample an event */
	int64_t bucket_ns;		/* chrome-trace: of the counters */
	int no_demangle;		/* local: raw symbol names */
	const char *cgroup;		/* local: NULL, or a cgroup filter (cgset.h) */
	int cgroup_column;		/* local csv: a last column cgroup */
	struct where *where;		/* local: NULL, or a metric condition
					 * (where.h) selected for the session
					 * (where_select()) keeping only its
					 * samples */
	int host_column;		/* fleet csv: a first column host always */
	const char *out;		/* the output's name in messages (NULL:
					 * "the export") */
	/* The output, opened when the export is about to write to it (the
	 * local one after finding samples to export: a failure before
	 * leaves no file; the fleet's before its query); NULL with e set. */
	FILE *(*open)(void *ctx, struct error *e);
	void (*note)(void *ctx, const char *msg);	/* notes as found (local) */
	void *ctx;
	struct progress *progress;	/* NULL: none (local: of the reading) */
};

struct source_export_stats {
	uint64_t rows;
	uint64_t anon;			/* fleet: rows in [anon] code, named
					 * without the process (JIT) */
	char *note;			/* NULL or a note for after a good export
					 * (what debuginfod could not give);
					 * free() it */
};

/*
 * Write the samples of src's selection that pass o to the file o->open()
 * gives, as CSV (exportcsv.h's columns; the fleet's with host and session
 * columns for several) or Chrome trace (chrometrace.h), flushed, not
 * closed.  0, or -1 with e set (one line: nothing to export, a read or
 * server error, "writing OUT: ...").
 */
int source_export(struct source *src, const struct source_export_opts *o,
		  struct source_export_stats *st, struct error *e);

#endif
