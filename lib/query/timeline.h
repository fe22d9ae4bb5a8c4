/*
 * timeline.h - a session's samples over time: the samples and counter
 * increases of the samples that pass the filters, summed per time bucket,
 * for the whole selection and split by CPU, process, binary or symbol;
 * plus the intervals where samples were lost and the session's markers.
 * lib/query/series.c makes 'strobe plot''s series of it.
 *
 * Values: index 0 is the number of samples, index 1 + i the increase of
 * counting event i (column c<i>), attributed to the samples as in
 * report.h.  A sample at time t falls in bucket (t - from) / bucket_ns.
 *
 * The sums are read from the session's fine time buckets (table
 * sample_time, schema 5) when they give exactly what the raw samples
 * would: the session has them, no symbol is involved (--by symbol, a
 * symbol filter), the bucket and --from are multiples of their width, and
 * no sample of the fine bucket holding --to lies after it.  Otherwise the
 * raw samples are scanned.  Both give the same timeline, bit for bit.
 *
 * Made by timeline.c, tlread.c, tlgroup.c and tlspans.c (timeline_int.h).
 */
#ifndef STROBE_TIMELINE_H
#define STROBE_TIMELINE_H

#include <stdint.h>
#include "db.h"

struct where;

#define TL_SAMPLES	0		/* value index of the sample count */
#define TL_MAXV		(1 + STROBE_MAX_COUNTERS)
#define TL_TOP_DEFAULT	8

/* TL_BY_HOST: fleet timelines only (fleetplot.h) */
enum timeline_by { TL_BY_NONE, TL_BY_CPU, TL_BY_PID, TL_BY_BINARY, TL_BY_SYMBOL, TL_BY_CGROUP,
		   TL_BY_HOST };

struct timeline_opts {
	int64_t session;		/* 0: the latest */
	int64_t pid;			/* -1: any */
	int has_pid_at;			/* with pid: only the process that had it
					 * at pid_at_ns since the session start */
	int64_t pid_at_ns, pid_at_slack_ns;	/* selects the last started
					 * by pid_at_ns + slack, else the first */
	const char *comm;		/* NULL: any */
	const char *binary;		/* NULL: any; path, file name or key */
	const char *symbol;		/* NULL: any; exact symbol name */
	const char *cgroup;		/* NULL: any; a cgroup path, or a subtree
					 * ending in '/' (cgset.h) */
	int has_from, has_to;
	int64_t from_ns, to_ns;		/* relative to the session start */
	int64_t bucket_ns;		/* 0: timeline_default_bucket() */
	enum timeline_by by;
	int top;			/* groups kept per ranking value; 0: TL_TOP_DEFAULT */
	int nrank;			/* value indices to rank groups by */
	int rank[TL_MAXV];
	int raw;			/* 1: always scan the raw samples (tests, benchmarks) */
	int no_demangle;		/* 1: raw (mangled) symbol names */
	struct progress *progress;	/* NULL: none; shows the scans of raw
					 * samples (progress.h) */
	struct where *where;		/* NULL: none; else a metric condition
					 * (where.h) selected for this session
					 * (where_select()): only the samples it
					 * keeps are summed, from the raw rows */
};

struct timeline_group {
	char name[256];			/* "CPU 1", "pid 42 (ls)", "libc.so.6", "main (ls)",
					 * "/a/b" (a cgroup's path, cgset.h);
					 * a pid that was several processes:
					 * "pid 42@1.250 (ls)" (procset.h) */
	uint64_t total[TL_MAXV];
	double *v;			/* nbuckets * nv values: v[b * nv + i] */
};

/* An interval with samples missing: from the last sample before a lost
 * record to the first after it, on the record's CPU, widened to buckets. */
struct timeline_span {
	int64_t from_ns, to_ns;		/* absolute CLOCK_MONOTONIC */
	uint64_t count;			/* samples lost (a throttle record adds 0;
					 * in t->throttled it counts 1) */
};

struct timeline_marker {
	int64_t time_ns;		/* absolute CLOCK_MONOTONIC */
	char kind[16];			/* usdt | mark */
	char name[256];
	char args[64];			/* usdt: "a0,a1,..." (truncated); "" if none */
};

struct timeline {
	struct db_session session;
	int64_t from_ns, to_ns;		/* the buckets' range, absolute CLOCK_MONOTONIC */
	int64_t bucket_ns;
	size_t nbuckets;		/* the last one may end after to_ns */
	int nv;				/* 1 + session.nr_events */
	uint64_t samples;		/* samples that passed the filters */
	struct timeline_group all;	/* every sample that passed the filters */
	/* with by != TL_BY_NONE: the groups that are in the top of a ranking */
	size_t ngroups;
	struct timeline_group *groups;
	size_t nkeys;			/* distinct CPUs/pids/binaries/symbols seen */
	const char *key_noun;		/* "CPUs", "processes", "binaries", "symbols",
					 * "cgroups" */
	struct timeline_rank {
		int value;		/* value index ranked by */
		size_t n;		/* groups in its top, largest total first */
		size_t idx[64];		/* indices into groups */
		size_t rest;		/* keys with a nonzero total not in the top */
	} ranks[TL_MAXV];
	int nranks;
	size_t nlost;
	struct timeline_span *lost;
	uint64_t lost_total;		/* samples lost in the range (ring, samples) */
	uint64_t throttles;		/* throttle records in the range */
	/* The same spans apart, within t->lost's allocation (freed with it):
	 * those of the records of samples lost (count: samples) and those of
	 * the throttle records (count: records), each merged as t->lost. */
	size_t nlost_samples, nthrottled;
	struct timeline_span *lost_samples, *throttled;
	size_t nunsched;		/* where a sampling group did not count */
	struct timeline_span *unsched;	/* (count: ns not counting) */
	uint64_t unsched_ns;		/* their time not counting, summed over CPUs */
	size_t nmarkers;
	struct timeline_marker *markers;
	char note[256];			/* "" or something to tell the user */
	char debuginfod_note[256];	/* "" or what debuginfod could not give
					 * (resolver_debuginfod_summary) */
	int summed;			/* the sums came from sample_time, not the raw rows */
};

/*
 * Build the timeline.  Fails (NULL, e set) for a missing session, an empty
 * range (from at or after the end), no sample in the range with these
 * filters, a comm/binary/symbol never seen, or a database error.
 */
struct timeline *timeline_build(struct db *db, const struct timeline_opts *o,
				struct error *e);
void timeline_free(struct timeline *t);

/*
 * What a timeline draws over its series, without the series: for o's
 * session, range and bucket (o->session, has_from/from_ns, has_to/to_ns,
 * bucket_ns: the range and buckets timeline_build() would make, with
 * timeline_range()'s errors), t->lost, lost_total, throttles, t->unsched,
 * unsched_ns, t->markers and note exactly as timeline_build() sets them.
 * Lost spans and markers are of the whole session: o's filters, --by and
 * ranks are ignored, t->all's buckets stay zero and t->samples 0 (a
 * session with no samples has its markers all the same).  For callers that
 * show the spans and markers of a window apart from its series (the
 * explorer); free with timeline_free().  NULL and e set on a missing
 * session, an empty range or a database error.
 */
struct timeline *timeline_events(struct db *db, const struct timeline_opts *o,
				 struct error *e);

/* Value of group g (NULL: all) in bucket b at value index i. */
static inline double timeline_value(const struct timeline *t, const struct timeline_group *g,
				    size_t b, int i)
{
	return (g ? g : &t->all)->v[b * (size_t)t->nv + (size_t)i];
}

/* Bucket b of t: its start, and its end cut at the range's end. */
static inline int64_t timeline_bucket_from(const struct timeline *t, size_t b)
{
	return t->from_ns + (int64_t)b * t->bucket_ns;
}

static inline int64_t timeline_bucket_to(const struct timeline *t, size_t b)
{
	int64_t from = timeline_bucket_from(t, b);

	return MIN(from + t->bucket_ns, t->to_ns);
}

/* The ranking by value i (NULL when it was not asked for). */
const struct timeline_rank *timeline_rank_of(const struct timeline *t, int value);

/*
 * A key of a --by split, as timeline_rank_keys() ranks it: its totals per
 * value, the tie-breaks after them (key, then start) and its group in
 * t->groups (-1 until it gets one).  The caller's entries begin with it.
 */
struct timeline_key {
	int64_t key;
	int64_t start;
	uint64_t total[TL_MAXV];
	ssize_t group;
};

/*
 * For each value of o->rank not ranked yet, rank the n entries at ent
 * (each stride bytes, beginning with a struct timeline_key) by that value,
 * then samples, key and start: the top o->top with a nonzero total get a
 * group of t (named by name(ctx, key, buf, len), its buckets zeroed), the
 * others count in the rank's rest.  Used by timeline_build() and the fleet
 * plot (lib/fleet/fleetplot.c), so that both rank alike.
 */
void timeline_rank_keys(struct timeline *t, const struct timeline_opts *o,
			void *ent, size_t n, size_t stride,
			void (*name)(void *ctx, const struct timeline_key *k,
				     char *buf, size_t len),
			void *ctx);

/*
 * Default bucket for a range: about 500 buckets or fewer, rounded up to
 * 1, 2 or 5 x 10^k ms, at least 1 ms.
 */
int64_t timeline_default_bucket(int64_t range_ns);
/* Number of buckets of bucket_ns covering [0, range_ns): at least 1. */
size_t timeline_bucket_count(int64_t range_ns, int64_t bucket_ns);
/*
 * t's range and buckets from o (--from, --to, --bucket) over a session that
 * starts at start_ns and ends at end (what names it in errors, e.g.
 * "session 3"), and its 'all' series allocated: as timeline_build() and
 * the fleet plot set them.  0, or -1 with e set (an empty range, too many
 * buckets).
 */
int timeline_range(struct timeline *t, const struct timeline_opts *o, int64_t start_ns,
		   int64_t end, const char *what, struct error *e);

/* The error of a timeline whose range and filters (o) hold no sample:
 * "no samples between A s and B s of WHAT[ with these filters (...)]",
 * times since start_ns.  Always -1. */
int timeline_no_samples(const struct timeline *t, const struct timeline_opts *o,
			int64_t start_ns, const char *what, struct error *e);

/* The filters of o appended to b, as errors and plot titles name them:
 * "pid 42, comm ls, binary libc.so.6, symbol main, cgroup /a" (with
 * pid_at, "pid 42 at 1.5 s" for o's PID@START); nothing for none. */
void timeline_filters_text(const struct timeline_opts *o, int pid_at, struct sbuf *b);

/* The filters of a report's options (report.h: session, pid, comm,
 * binary, cgroup, the range, no_demangle) into a timeline's; the rest of
 * to as it is.  The one translation of the filters to a timeline's
 * (plot's options, where.h's buckets). */
struct report_opts;
void timeline_opts_from_report(const struct report_opts *o, struct timeline_opts *to);

/* Parse "cpu", "pid", "binary", "symbol" or "cgroup". -1 on anything else. */
int timeline_parse_by(const char *s, enum timeline_by *by);
const char *timeline_by_name(enum timeline_by by);

/* A bucket's length as --bucket takes it: a number of ms ("10", "0.5"),
 * or with a unit ("500us", "1s"); at least 1 us.  -1 on anything else. */
int timeline_parse_bucket(const char *s, int64_t *ns);

/* Most buckets a timeline may have. */
#define TL_MAX_BUCKETS 100000

#endif
