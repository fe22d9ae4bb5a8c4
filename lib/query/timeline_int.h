/*
 * timeline_int.h - the private parts of timeline_build(), shared by the
 * files that make a timeline (see timeline.h for what it is):
 *
 *   timeline.c  the whole: ranges, count sessions, the phases in order;
 *   tlread.c    the per-series reader: the filters as SQL and a raw-scan
 *               filter, sample_time or the raw rows as one stream of rows
 *               (struct trow), the buckets they add to;
 *   tlgroup.c   the grouping keys of --by: locations named (phase 0), each
 *               row's key, the totals per key and their ranking (phase 1),
 *               the buckets per kept group (phase 2);
 *   tlspans.c   what is drawn over the series: lost and unscheduled spans,
 *               markers (also alone: timeline_events()).
 *
 * Nothing here is for other callers: timeline.h is the interface.
 */
#ifndef STROBE_TIMELINE_INT_H
#define STROBE_TIMELINE_INT_H

#include <stdint.h>
#include <sys/types.h>
#include "cgset.h"
#include "otable.h"
#include "procset.h"
#include "samplescan.h"
#include "timeline.h"

/* An otable entry mapping a pair of integers to an index (into b->sym,
 * b->ent...).  The key is its first 16 bytes, with no padding. */
struct tl_idx {
	int64_t a, b;
	size_t v;
};
#define TL_IDX_KEY 16

/* The entry of (a, b) in t, or NULL. */
static inline struct tl_idx *tl_idx_find(const struct otable *t, int64_t a, int64_t b)
{
	const int64_t k[2] = { a, b };

	return otable_find_sized(t, k, TL_IDX_KEY);
}

/* The entry of (a, b) in t, added (v 0, *added 1) if missing.  Valid until
 * the next tl_idx_get() on t. */
static inline struct tl_idx *tl_idx_get(struct otable *t, int64_t a, int64_t b, int *added)
{
	const int64_t k[2] = { a, b };

	return otable_get_sized(t, k, TL_IDX_KEY, added);
}

/* An otable entry of a string-keyed table: a name and its index. */
struct tl_name {
	char *name;		/* the table's copy (otable_init_str) */
	size_t v;
};

/* Per key of --by (phase 1). */
struct keyent {
	struct timeline_key tk;		/* tk.start, of a pid: its process's
					 * start when the pid was several
					 * processes, else 0 */
	int64_t comm_id;		/* pid: the comm of its latest sample */
	int64_t comm_row;		/* the rowid of that sample */
	double *v;			/* one pass: its buckets, as a group's */
};

/* One pass over raw rows keeps every key's buckets up to this much. */
#define ONEPASS_MAX_BYTES	(128u << 20)

/* A named location (phase 0). */
struct locname {
	const char *name;		/* "symbol (binary)": symidx's key */
	int match;			/* passes the symbol filter */
};

struct build {
	struct db *db;
	const struct timeline_opts *o;
	struct timeline *t;
	struct error *e;
	struct sample_scan_filter raw;	/* the raw rows, with the filters */
	int64_t *bins;			/* its binary ids, sorted */
	size_t nbins;
	struct sbuf filt;		/* " AND pid=.. AND comm_id=.. AND binary_id IN (..)" */
	int summed;			/* phases 1 and 2 read sample_time */
	int64_t k0, k1;			/* its fine buckets in the range */
	int cut;			/* k1 holds rows after to_ns: leave them out */
	int64_t comm_id;
	int need_locs;
	struct otable locs;		/* (binary_id, offset) -> index in locsym
					 * (struct tl_idx) */
	struct locname *sym;		/* distinct symbol names ... */
	size_t nsym, capsym;
	struct otable symidx;		/* name -> index in sym (struct tl_name) */
	size_t *locsym;			/* location index -> sym index */
	size_t nloc, caploc;
	struct otable keys;		/* (key, start) -> index in ent (struct tl_idx) */
	struct keyent *ent;
	size_t nent, capent;
	int onepass;			/* phase 1 filled the buckets too */
	size_t onepass_bytes;
	uint64_t pass_rows;		/* progress_plan(): what a scan of raw reads */
	struct procset procs;		/* --by pid, --pid: pids that were several
					 * processes (procset.h) */
	int64_t sel;			/* --pid P@T: the start of the one chosen */
	int cg;				/* --cgroup or --by cgroup: cgs loaded */
	struct cgset cgs;
	struct procset all;		/* and every process (raw rows) */
};

/*
 * The rows of phases 1 and 2: sums of sample_time (b->summed), or the raw
 * samples, each a sum of one.  time is a sum's fine bucket's start, row
 * the rowid of its latest sample; offset is 0 in sums.
 */
struct trow {
	int64_t cpu, pid, bin, off, comm, time, row;
	int64_t start;			/* its process's start: sums only, else 0 */
	uint64_t n, c[STROBE_MAX_COUNTERS];
};

struct tsrc {
	sqlite3_stmt *st;		/* sample_time */
	struct sample_scan *sc;		/* raw */
	int nev;
};

/* tlread.c */
int tl_sql_fail(struct build *b, const char *what);
int tl_session_end(struct build *b, int64_t *end);
int tl_make_where(struct build *b);
int tl_time_sums_usable(struct build *b);
int tl_agg_usable(struct build *b);
int tl_progress_plan(struct build *b);
int tsrc_open(struct build *b, struct tsrc *src);
int tsrc_next(struct build *b, struct tsrc *src, struct trow *r);
void tsrc_close(struct tsrc *src);
void tl_add_row(struct timeline *t, const struct trow *r, double *vg);

/* tlgroup.c */
int tl_name_locations(struct build *b);
int tl_key_totals(struct build *b);
void tl_key_name(void *ctx, const struct timeline_key *k, char *buf, size_t len);
int tl_fill(struct build *b);
void tl_cgroup_note(struct timeline *t, const struct cgset *cs);
void tl_ent_free_buckets(struct build *b);

/* tlspans.c */
int tl_lost_spans(struct db *db, struct timeline *t, struct error *e);
int tl_unsched_spans(struct db *db, struct timeline *t, struct error *e);
int tl_markers(struct db *db, struct timeline *t, struct error *e);

#endif
