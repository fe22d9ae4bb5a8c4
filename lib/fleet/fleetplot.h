/*
 * fleetplot.h - 'strobe plot --source URL': the timeline of pushed
 * sessions, bucketed in ClickHouse (doc/FLEET.md, "Fleet timelines").
 *
 * The samples are summed in ClickHouse per (host, session, time bucket)
 * and, with --by, per CPU, pid, binary, symbol or host; only those sums
 * come back.  Here they are mapped to event names (c0.. are each
 * session's own counting events), ranked as timeline.c ranks its groups,
 * and put into the struct timeline that timeline_build() makes from a
 * local database, so that 'strobe plot' turns it into series, CSV and
 * gnuplot input with the same code: one host's session reads byte for
 * byte as 'strobe plot --db' on that host.
 *
 * Several sessions: the time axis is the time since each session's
 * start, the sums of all sessions per bucket (t->session.start_ns is 0).
 */
#ifndef STROBE_FLEETPLOT_H
#define STROBE_FLEETPLOT_H

#include <stdint.h>
#include "db.h"
#include "timeline.h"

struct chclient;
struct fleetplot;
struct report_opts;

/* The pushed sessions of host (NULL: all) and session (0: all), their
 * rows and events read; NULL with e set (one line) on a server error or
 * when they select no session. */
struct fleetplot *fleetplot_open(struct chclient *c, const char *host, int64_t session,
				 struct error *e);
void fleetplot_free(struct fleetplot *fp);

/* The selection as one session: the session's own row when it is one,
 * else id 0, start 0, the union of the sessions' counting events (in
 * the order they first appear) and their sampling event if they share
 * it. */
const struct db_session *fleetplot_session(const struct fleetplot *fp);
int fleetplot_nsessions(const struct fleetplot *fp);
int fleetplot_nhosts(const struct fleetplot *fp);

/* The timeline of o (its session, symbol, cgroup, pid's @START, raw and
 * no_demangle are not used: the caller refuses them), by o->by
 * (TL_BY_HOST too), of the samples that pass its pid, comm and binary
 * (fleetquery_sql_filters()); NULL with e set. */
struct timeline *fleetplot_timeline(struct fleetplot *fp, const struct timeline_opts *o,
				    struct error *e);

/* -- the pure parts, for the unit tests -- */

/* The rows a query reads: host, session (fleetquery_where()), and the
 * time range relative to each row's session start, SQL expression start
 * (a number, or fleetplot_sql_start()'s). */
struct fleetplot_range {
	const char *host;
	int64_t session;
	const char *start;
	int64_t from_rel, to_rel;	/* ns since the session start, inclusive */
	int64_t bucket_ns;
	const struct report_opts *filt;	/* NULL: none; else its pid, comm,
					 * binary and mode filter the samples */
	int agg;			/* read samples_by_time, not samples
					 * (fleetplot_aggregable()) */
};

/*
 * Whether the plot of r by by sums to the same from samples_by_time as
 * from the samples: by none, cpu, pid, binary or host; no comm filter
 * (pid and binary are columns of it); bucket_ns and from_rel multiples of
 * its 100 ms (PUSH_BUCKET_NS), so that each 100 ms row lies in one plot bucket; and to_rel
 * cutting no row: at or after end_rel (the latest sample of any session
 * selected, since its start: the range takes all), or 1 ns before a
 * multiple of 100 ms.  (Not STROBE_FLEET_RAW: the caller's.)
 */
int fleetplot_aggregable(const struct fleetplot_range *r, enum timeline_by by,
			 int64_t end_rel);

/* A row's session start for sessions (host[i], id[i]) starting at
 * start[i]: a number for one, transform() over "host/session" else. */
void fleetplot_sql_start(struct sbuf *b, char *const *host, const int64_t *id,
			 const int64_t *start, size_t n);
/* The latest sample of each session: rows host, session, max(time_ns).
 * n 0: of every session of host (NULL: all) and session (0: all); else of
 * sessions (hosts[i], ids[i]) only, from[i] a time_ns that their latest
 * sample is at or after (from samples_by_time's latest row: the samples'
 * key (host, session, time_ns) skips the rest), INT64_MIN: not known. */
void fleetplot_sql_last(struct sbuf *b, const char *host, int64_t session, char *const *hosts,
			const int64_t *ids, const int64_t *from, size_t n);
/* The WHERE condition of r on samples, or on samples_by_time's
 * bucket_ns when r->agg (with r->filt's filters). */
void fleetplot_sql_where(struct sbuf *b, const struct fleetplot_range *r);
/* The sums per bucket: rows host, session, bucket, k1, k2, samples,
 * c0..c7 sums.  by: TL_BY_NONE (k1, k2 empty), CPU, PID (k1 the cpu or
 * pid), BINARY (k1 binary_id), SYMBOL (k1 symbol, k2 the binary's name;
 * keys: only the locations in these binary keys, n of them), HOST.
 * in: for CPU, PID and BINARY, the keys kept ("" or NULL: all). */
void fleetplot_sql_buckets(struct sbuf *b, const struct fleetplot_range *r,
			   enum timeline_by by, const char *in);
/* The totals per key of by: rows host, session, k1, k2, k3, k4, samples,
 * c0..c7 sums, ordered by host, session, key.  CPU: k1 cpu; PID: k1 pid,
 * k2 the comm of its latest sample (r->agg: empty, and k3 the start of
 * its latest 100 ms bucket, for fleetplot_sql_comms()); BINARY: k1 binary_id, k2 key, k3
 * path; SYMBOL: k1 binary_id, k2 offset, k3 symbol, k4 binary name;
 * HOST: none. */
void fleetplot_sql_totals(struct sbuf *b, const struct fleetplot_range *r,
			  enum timeline_by by);
/* A pid of the totals (r->agg) whose comm is wanted: its session's host,
 * id and start, and the start of its latest 100 ms bucket since then. */
struct fleetplot_pid {
	const char *host;
	int64_t session, start, pid, last;
};
/* The comm of each pid's latest sample of the range that has one, as the
 * raw totals' argMaxIf(): rows host, session, pid, comm.  Read from the
 * samples, but bounded (last): only the pid's latest 100 ms bucket of the
 * range, through the samples' key (host, session, time_ns); else (last
 * 0) the whole range, for the pids whose latest bucket has no comm. */
void fleetplot_sql_comms(struct sbuf *b, const struct fleetplot_range *r,
			 const struct fleetplot_pid *p, size_t n, int last);
/* The markers in the range: rows time (time_ns - start + base), kind,
 * name, args, in time order, at most FLEETPLOT_MAX_MARKERS + 1. */
#define FLEETPLOT_MAX_MARKERS 10000	/* as timeline.c's TL_MAX_MARKERS */
void fleetplot_sql_markers(struct sbuf *b, const struct fleetplot_range *r, int64_t base);
/* The symbols of the binary keys in keys (NULL: those of the samples of
 * r's host and session), and the binaries' names, joined to a subquery
 * sub of host, session, binary_id, binary_key, offset and more columns
 * (cols): a FROM clause for the names of symbols and binaries. */
void fleetplot_sql_join_names(struct sbuf *b, const struct fleetplot_range *r,
			      const char *keys, const char *sub, const char *cols);

#endif
