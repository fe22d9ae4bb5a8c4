/*
 * recover.c - interrupted sessions (see recover.h).
 *
 * The histogram (and the stack histogram stack_agg, schema 14: the
 * stacks, unwind_errors and rawstk.raw_stacks rows were stored with each
 * batch) is rebuilt with one INSERT ... SELECT ... GROUP BY over the
 * session's samples (rowid >= first_sample AND session_id = id: a rowid
 * range search, as reports do for a session that is not complete), the
 * rest with one more pass grouped by CPU and two indexed reads of lost
 * and markers.  It sums what ingest summed, the same way: counter columns
 * beyond the session's events stay NULL.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "recover.h"

/* sample_agg.flags is the mode bit only, as ingest stores it */
_Static_assert(STROBE_SAMPLE_MODE_MASK == 15, "the SQL below masks flags with 15");

/* sql into *st with ?1 = id: 0, or -1 with e set. */
static int prepare(struct db *db, const char *sql, int64_t id, sqlite3_stmt **st,
		   struct error *e)
{
	if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, st, NULL) != SQLITE_OK)
		return db_sql_error(db, e, "rebuilding an interrupted session");
	sqlite3_bind_int64(*st, 1, id);
	return 0;
}

struct cpu_row {
	uint32_t cpu;
	uint64_t samples, lost;
	uint64_t lost_inc[STROBE_MAX_COUNTERS];	/* as ingest stored them */
};

static struct cpu_row *cpu_find(struct cpu_row **rows, size_t *n, size_t *cap, uint32_t cpu)
{
	for (size_t i = 0; i < *n; i++)
		if ((*rows)[i].cpu == cpu)
			return &(*rows)[i];
	ARRAY_GROW(*rows, *cap, *n + 1);
	memset(&(*rows)[*n], 0, sizeof(**rows));
	(*rows)[*n].cpu = cpu;
	return &(*rows)[(*n)++];
}

/* Run sql with ?1 = sid and ?2 = lo (when it has it) to its end. */
static int run(struct db *db, const char *sql, int64_t sid, int64_t lo, const char *what,
	       struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	if (prepare(db, sql, sid, &st, e))
		return -1;
	if (sqlite3_bind_parameter_count(st) >= 2)
		sqlite3_bind_int64(st, 2, lo);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_sql_error(db, e, what);
}

/*
 * What both histograms' rebuilds read, as SQL: the session's samples from
 * rowid ?2 on (x); the process of a sample (schema 11): of those with its
 * pid, the latest started by its time, else the earliest, 0 when none (as
 * ingest keys them, db.h); the sums of the period (NULL unless every
 * sample has one) and of the counters.
 */
#define SQL_SAMPLES	"FROM samples AS x WHERE x.rowid>=?2 AND x.session_id=?1 "
#define SQL_PROCESS_START \
	"coalesce((SELECT max(p.start_ns) FROM processes AS p WHERE " \
	"p.session_id=?1 AND p.pid=x.pid AND p.start_ns<=x.time_ns)," \
	"(SELECT min(p.start_ns) FROM processes AS p WHERE " \
	"p.session_id=?1 AND p.pid=x.pid),0)"
#define SQL_PERIOD	"CASE WHEN count(period)=count(*) THEN sum(period) END"
#define SQL_SUMS	"sum(c0),sum(c1),sum(c2),sum(c3),sum(c4),sum(c5),sum(c6),sum(c7)"

/* The histograms of session sid, of its samples from rowid lo on (none
 * when lo is 0). */
static int histograms(struct db *db, int64_t sid, int64_t lo, struct error *e)
{
	if (run(db, "DELETE FROM sample_agg WHERE session_id=?1", sid, 0,
		"rebuilding an interrupted session's histogram", e) < 0 ||
	    run(db, "DELETE FROM stack_agg WHERE session_id=?1", sid, 0,
		"rebuilding an interrupted session's histogram", e) < 0)
		return -1;
	if (lo <= 0)
		return 0;
	/* the histogram, each sample of its process (SQL_PROCESS_START) */
	if (run(db, "INSERT INTO sample_agg(session_id,binary_id,offset,pid,comm_id,"
		    "flags,samples,c0,c1,c2,c3,c4,c5,c6,c7,period,start_ns) "
		    "SELECT ?1,coalesce(binary_id,0),coalesce(offset,0),x.pid,"
		    "coalesce(comm_id,0),flags&15,count(*)," SQL_SUMS "," SQL_PERIOD ","
		    SQL_PROCESS_START " " SQL_SAMPLES "GROUP BY 2,3,4,5,6,17",
		sid, lo, "rebuilding an interrupted session's histogram", e) < 0)
		return -1;
	/* the stack histogram (schema 14), keyed as ingest keys it */
	return run(db, "INSERT INTO stack_agg(session_id,stack_id,pid,comm_id,start_ns,"
		   "samples,period,c0,c1,c2,c3,c4,c5,c6,c7) "
		   "SELECT ?1,stack_id,x.pid,coalesce(comm_id,0)," SQL_PROCESS_START
		   ",count(*)," SQL_PERIOD "," SQL_SUMS " " SQL_SAMPLES
		   "AND stack_id IS NOT NULL GROUP BY 2,3,4,5",
		   sid, lo, "rebuilding an interrupted session's stack histogram", e);
}

/* One session, inside the caller's transaction. */
static int rebuild(struct db *db, struct db_session *s, struct error *e)
{
	int64_t lo = s->first_sample > 0 ? s->first_sample : 0;
	int64_t first = 0, last = 0, count = 0, end = s->start_ns;
	struct cpu_row *cpus = NULL;
	size_t ncpu = 0, cap = 0;
	sqlite3_stmt *st;
	int rc;

	if (histograms(db, s->id, lo, e) < 0)
		return -1;
	if (lo > 0) {
		/* per CPU: samples, and the session's rowid range and end */
		if (prepare(db, "SELECT cpu,count(*),min(rowid),max(rowid),max(time_ns) FROM "
			    "samples WHERE rowid>=?2 AND session_id=?1 GROUP BY cpu", s->id, &st, e))
			return -1;
		sqlite3_bind_int64(st, 2, lo);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			struct cpu_row *c = cpu_find(&cpus, &ncpu, &cap, sqlite3_column_int(st, 0));
			int64_t lo_r = sqlite3_column_int64(st, 2), hi_r = sqlite3_column_int64(st, 3);

			c->samples = sqlite3_column_int64(st, 1);
			count += c->samples;
			if (!first || lo_r < first)
				first = lo_r;
			if (hi_r > last)
				last = hi_r;
			if (sqlite3_column_int64(st, 4) > end)
				end = sqlite3_column_int64(st, 4);
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			goto sql_fail;
	}

	/* losses per CPU, and the session's totals of them */
	s->lost = s->throttled = 0;
	if (prepare(db, "SELECT cpu,coalesce(sum(CASE WHEN kind IN ('ring','samples','spool') THEN count "
		    "END),0),count(CASE WHEN kind='throttle' THEN 1 END),max(time_ns) "
		    "FROM lost WHERE session_id=?1 GROUP BY cpu", s->id, &st, e))
		goto fail;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cpu_row *c = cpu_find(&cpus, &ncpu, &cap, sqlite3_column_int(st, 0));

		c->lost = sqlite3_column_int64(st, 1);
		s->lost += c->lost;
		s->throttled += sqlite3_column_int64(st, 2);
		if (sqlite3_column_int64(st, 3) > end)
			end = sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		goto sql_fail;

	/* markers only move the end */
	if (prepare(db, "SELECT max(time_ns) FROM markers WHERE session_id=?1", s->id, &st, e))
		goto fail;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW && sqlite3_column_int64(st, 0) > end)
		end = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		goto sql_fail;

	/* increases over lost intervals: ingest stored them with each batch */
	if (prepare(db, "SELECT cpu,lost_c0,lost_c1,lost_c2,lost_c3,lost_c4,lost_c5,lost_c6,"
		    "lost_c7 FROM session_cpus WHERE session_id=?1", s->id, &st, e))
		goto fail;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cpu_row *c = cpu_find(&cpus, &ncpu, &cap, sqlite3_column_int(st, 0));

		for (int i = 0; i < STROBE_MAX_COUNTERS; i++)
			c->lost_inc[i] = (uint64_t)sqlite3_column_int64(st, 1 + i);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		goto sql_fail;

	/* a row for every CPU the session covered, as ingest_finish writes */
	for (uint32_t c = 0; c < (uint32_t)s->nr_cpus; c++)
		cpu_find(&cpus, &ncpu, &cap, c);
	if (run(db, "DELETE FROM session_cpus WHERE session_id=?1", s->id, 0,
		"rebuilding an interrupted session", e) < 0)
		goto fail;
	for (size_t i = 0; i < ncpu; i++) {
		struct db_cpu_stats cs;

		memset(&cs, 0, sizeof(cs));	/* tails: no final values were read */
		cs.cpu = cpus[i].cpu;
		cs.samples = cpus[i].samples;
		cs.lost = cpus[i].lost;
		memcpy(cs.lost_inc, cpus[i].lost_inc, sizeof(cs.lost_inc));
		if (db_cpu_stats_put(db, s->id, s->nr_events, &cs, e) < 0)
			goto fail;
	}
	free(cpus);

	snprintf(s->state, sizeof(s->state), "interrupted");
	s->samples = count;
	s->first_sample = first;
	s->last_sample = last;
	s->end_ns = end;
	s->duration_ns = end - s->start_ns;
	return db_session_update(db, s, e);
sql_fail:
	db_sql_error(db, e, "rebuilding an interrupted session");
fail:
	free(cpus);
	return -1;
}

/* The ids of the sessions to recover. */
static int find(struct db *db, int64_t max_id, int64_t **ids, size_t *nids, struct error *e)
{
	size_t cap = 0;
	sqlite3_stmt *st;
	int rc;

	*nids = 0;
	if (prepare(db, "SELECT id FROM sessions WHERE state='running' AND (?1=0 OR id<=?1) "
		    "ORDER BY id", max_id, &st, e))
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ARRAY_GROW(*ids, cap, *nids + 1);
		(*ids)[(*nids)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_sql_error(db, e, "finding interrupted sessions");
	return 0;
}

int recover_interrupted(struct db *db, int64_t max_id, struct recover_session *out,
			size_t max, size_t *n, struct error *e)
{
	int64_t *ids = NULL;
	size_t nids = 0;
	struct db_session *s = NULL;

	*n = 0;
	/* a read first: nothing to do takes no write lock */
	if (find(db, max_id, &ids, &nids, e) < 0)
		goto out;
	if (!nids) {
		free(ids);
		return 0;
	}
	if (db_begin(db, e) < 0)
		goto out;
	if (find(db, max_id, &ids, &nids, e) < 0)
		goto fail;
	s = xmalloc(sizeof(*s));
	for (size_t i = 0; i < nids; i++) {
		if (db_session_get(db, ids[i], s, e) < 0 || rebuild(db, s, e) < 0) {
			error_prefix(e, "session %lld", (long long)ids[i]);
			goto fail;
		}
		if (i < max) {
			out[i].id = s->id;
			out[i].samples = s->samples;
			out[i].end_ns = s->end_ns;
		}
	}
	if (db_commit(db, e) < 0)
		goto out;
	*n = nids;
	free(s);
	free(ids);
	return 0;
fail:
	db_rollback(db);
out:
	free(s);
	free(ids);
	return -1;
}
