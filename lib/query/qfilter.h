/*
 * qfilter.h - the sample filters of a query (report.h's report_opts: pid,
 * pid@start, comm, binary, cgroup, mode; the time range is the caller's),
 * shared by the hot-spot reports (report.c) and the call stacks
 * (stacks.c), so that both select the same samples.
 *
 * Rows are either raw samples (their x is the sample's time) or histogram
 * rows keyed by process (sample_agg, stack_agg: their x is the process's
 * start, processes.start_ns).  A filter is applied in two places: the
 * pid, comm, mode and binary conditions as SQL appended to the caller's
 * query (qfilter_sql), the process and cgroup ones per row (qfilter_row).
 *
 * qfilter_init() reports what the filters found through the note
 * callback, in this order: a pid that was several processes, a comm or
 * binary that matches nothing (which sets none: the caller reads no
 * rows), what the session's cgroups are worth.
 */
#ifndef STROBE_QFILTER_H
#define STROBE_QFILTER_H

#include <stddef.h>
#include <stdint.h>
#include "cgset.h"
#include "db.h"
#include "procset.h"
#include "report.h"
#include "samplescan.h"

/* qfilter_init() flags */
#define QFILTER_CGROUPS	1u	/* load the cgroups even without --cgroup */
#define QFILTER_PROCS	2u	/* raw rows: load every process (qfilter_start) */

/* qfilter_sql() conditions */
#define QFILTER_SQL_PID		1u	/* pid = o->pid */
#define QFILTER_SQL_COMM	2u	/* comm_id = that of o->comm */
#define QFILTER_SQL_MODE	4u	/* flags has the mode's bit */
#define QFILTER_SQL_BINARY	8u	/* binary_id IN (those that match o->binary) */
#define QFILTER_SQL_ALL		15u

/* The binaries a --binary WANT names (binaries.path, its file name, or
 * binaries.key; "[kernel.kallsyms]" every kernel), their ids sorted into
 * *ids (malloc'ed; NULL when none) and *n. */
int qfilter_binaries(struct db *db, const char *want, int64_t **ids, size_t *n,
		     struct error *e);

typedef void (*qfilter_note_fn)(void *ctx, const char *msg);

struct qfilter {
	const struct report_opts *o;
	const struct db_session *s;
	int raw;			/* rows are raw samples */
	int none;			/* a filter matches nothing: read no rows */
	int64_t comm_id;		/* with o->comm */
	int64_t *bins;			/* with o->binary: the matching binaries, sorted */
	size_t nbins;
	struct procset procs;		/* with o->pid: that pid's processes */
	int split;			/* o->pid was several processes, no @START */
	int64_t sel;			/* with o->has_pid_at: the one selected */
	int cg;				/* cgs is loaded */
	struct cgset cgs;
	struct procset all;		/* raw rows with cgroups or QFILTER_PROCS */
};

/* Look up what o's filters name in session s, and select o->where
 * there (where.h: where_select(), its failures this one's).  Fails (with
 * pid@START) when no process had the pid; a comm or binary that matches
 * nothing is a note and sets none. */
int qfilter_init(struct qfilter *f, struct db *db, const struct report_opts *o,
		 const struct db_session *s, int raw, unsigned flags, qfilter_note_fn note,
		 void *note_ctx, struct error *e);
void qfilter_free(struct qfilter *f);

/* Append " AND ..." conditions (QFILTER_SQL_* in what) to sql, for
 * columns pid, comm_id, flags, binary_id. */
void qfilter_sql(const struct qfilter *f, struct sbuf *sql, unsigned what);

/*
 * Raw rows read from the sample blocks (samplescan.h) rather than through
 * SQL: qfilter_scan() fills *sf for session s's rowid range, o's time
 * range (has_from, has_to) and the pid, comm and binary conditions of
 * qfilter_sql(), and o->where's kept ranges or row test (where_scan()),
 * reading the columns in cols (1 << SB_*) as well; it
 * returns 0 when no row can pass (a finished session with no samples, a
 * --binary matching none).  The mode condition is the caller's, per row:
 * qfilter_mode() (a NULL flags column fails it, as in SQL).
 */
int qfilter_scan(const struct qfilter *f, uint32_t cols, struct sample_scan_filter *sf);
int qfilter_mode(const struct qfilter *f, const struct sampleblk_row *r);

/*
 * The per-row filters (pid@START and cgroup) for a row of process pid
 * with x (a raw sample's time, or a histogram row's start).  Returns 0 when
 * the row is filtered out, else 1 with *proc the start of its process when
 * rows are kept apart by process (f->split) or selected by one (else 0),
 * and *cg the index of its cgroup in f->cgs.names when f->cg (else 0).
 */
int qfilter_row(const struct qfilter *f, int64_t pid, int64_t x, int64_t *proc, size_t *cg);

/* The start of the process of a row (raw rows need QFILTER_PROCS). */
int64_t qfilter_start(const struct qfilter *f, int64_t pid, int64_t x);

/* Is binary_id one that o->binary matches?  (1 when there is no --binary.) */
int qfilter_binary(const struct qfilter *f, int64_t binary_id);

/* comms.id of name in db: the id, 0 if the name was never seen, -1 with e
 * set on error. */
int64_t qfilter_comm_id(struct db *db, const char *name, struct error *e);

#endif
