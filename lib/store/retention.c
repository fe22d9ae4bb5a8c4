/*
 * retention.c - removing sessions (see retention.h).
 *
 * Every statement reaches its rows through a key or an index (schema
 * 003): samples through the session's rowid range, sample_agg,
 * sample_time, processes, stacks, stack_agg and raw_stacks (in DB.stacks,
 * attached as rawstk: rawstk.h) through their primary keys, which start with session_id, unwind_errors through its index,
 * markers, lost and session_probes through their session_id indexes, and
 * the sessions to remove through sessions_by_state.  A step's DELETEs take
 * their rows with "... IN (SELECT ... LIMIT n)", so one transaction never
 * deletes more than the budget it was given.
 */
#include "config.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cachegc.h"
#include "retention.h"

int retention_parse_days(const char *s, int64_t *ns, struct error *e)
{
	char *end;
	double d;

	errno = 0;
	d = s && *s ? strtod(s, &end) : 0;
	if (!s || !*s || errno || *end || !isfinite(d) || d <= 0 || d > 1e6)
		return error_set(e, "bad --keep '%s': give a positive number of days, e.g. "
				 "--keep 30", s ? s : "");
	*ns = (int64_t)(d * 86400e9);
	if (*ns <= 0)
		*ns = 1;
	return 0;
}

int retention_parse_size(const char *s, uint64_t *bytes, struct error *e)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	errno = 0;
	v = s && *s >= '0' && *s <= '9' ? strtoull(s, &end, 10) : 0;
	if (!v || errno)
		goto bad;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (shift && (!strcmp(end, "iB") || !strcmp(end, "B")))
		end += strlen(end);
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		goto bad;
	*bytes = (uint64_t)v << shift;
	return 0;
bad:
	return error_set(e, "bad --max-size '%s': give a size in bytes or with K, M, G or T, "
			 "e.g. --max-size 2G", s ? s : "");
}

static int prep(struct db *db, const char *sql, sqlite3_stmt **st, struct error *e,
		const char *what)
{
	if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, st, NULL) != SQLITE_OK)
		return db_sql_error(db, e, what);
	return 0;
}

static int int_query(struct db *db, const char *sql, int64_t *v, struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	if (prep(db, sql, &st, e, "measuring the database"))
		return -1;
	rc = sqlite3_step(st);
	*v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return db_sql_error(db, e, "measuring the database");
	return 0;
}

/* The bytes in use in the pages of schema (main, rawstk), and its WAL's. */
static int schema_usage(struct db *db, const char *schema, const char *wal_path,
			uint64_t *bytes, uint64_t *wal, struct error *e)
{
	int64_t pages, free_pages, page_size;
	char q[3][64];
	struct stat st;

	snprintf(q[0], sizeof(q[0]), "PRAGMA %s.page_count", schema);
	snprintf(q[1], sizeof(q[1]), "PRAGMA %s.freelist_count", schema);
	snprintf(q[2], sizeof(q[2]), "PRAGMA %s.page_size", schema);
	if (int_query(db, q[0], &pages, e) || int_query(db, q[1], &free_pages, e) ||
	    int_query(db, q[2], &page_size, e))
		return -1;
	*bytes += (uint64_t)(pages - free_pages) * (uint64_t)page_size;
	if (stat(wal_path, &st) == 0)
		*wal += st.st_size;
	return 0;
}

int retention_usage(struct db *db, const char *cache_dir, struct retention_usage *u,
		    struct error *e)
{
	int64_t samples;
	char *wal = xasprintf("%s-wal", db_path(db));
	char *rawwal = xasprintf("%s.stacks-wal", db_path(db));
	int rc;

	memset(u, 0, sizeof(*u));
	rc = schema_usage(db, "main", wal, &u->db_bytes, &u->wal_bytes, e) ||
	     schema_usage(db, "rawstk", rawwal, &u->db_bytes, &u->wal_bytes, e) ||
	     int_query(db, "SELECT coalesce(sum(samples),0) FROM sessions", &samples, e);
	free(wal);
	free(rawwal);
	if (rc)
		return -1;
	u->samples = samples;
	if (cache_dir && cachegc_usage(cache_dir, &u->cache_bytes, e) < 0)
		return -1;
	return 0;
}

static int mark_deleting(struct db *db, const int64_t *ids, size_t n, struct error *e)
{
	sqlite3_stmt *st;

	if (prep(db, "UPDATE sessions SET state='deleting' WHERE id=?1", &st, e,
		 "marking sessions for removal"))
		return -1;
	for (size_t i = 0; i < n; i++) {
		sqlite3_bind_int64(st, 1, ids[i]);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_finalize(st);
			return db_sql_error(db, e, "marking sessions for removal");
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return 0;
}

int retention_remove(struct db *db, const int64_t *ids, size_t n, uint32_t uid,
		     int64_t running_id, struct error *e)
{
	sqlite3_stmt *st;

	if (!n)
		return error_set(e, "no session given: name the sessions to remove, as 'strobe "
				 "sessions' lists them");
	if (db_begin(db, e) < 0)
		return -1;
	if (prep(db, "SELECT state,owner_uid FROM sessions WHERE id=?1", &st, e,
		 "reading sessions"))
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const char *state;
		int rc;

		sqlite3_bind_int64(st, 1, ids[i]);
		rc = sqlite3_step(st);
		state = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			db_sql_error(db, e, "reading sessions");
		} else if (!state || !strcmp(state, "deleting")) {
			error_set(e, "no session %lld in %s: 'strobe sessions' lists them; nothing "
				  "was removed", (long long)ids[i], db_path(db));
		} else if (ids[i] == running_id || !strcmp(state, "running")) {
			error_set(e, "session %lld is running: stop it first with 'strobe stop'; "
				  "nothing was removed", (long long)ids[i]);
		} else if (uid != 0 && (uint32_t)sqlite3_column_int64(st, 1) != uid) {
			error_set(e, "permission denied: session %lld belongs to uid %u; only it "
				  "and root may remove it; nothing was removed", (long long)ids[i],
				  (unsigned)sqlite3_column_int64(st, 1));
		} else {
			sqlite3_reset(st);
			continue;
		}
		sqlite3_finalize(st);
		goto fail;
	}
	sqlite3_finalize(st);
	if (mark_deleting(db, ids, n, e) < 0)
		goto fail;
	return db_commit(db, e);
fail:
	db_rollback(db);
	return -1;
}

int retention_plan(struct db *db, const struct retention_policy *p,
		   const struct retention_usage *u, int64_t running_id, int64_t now_wall_ns,
		   int64_t *ids, size_t max, size_t *n, int *over, struct error *e)
{
	size_t held;

	return retention_plan_hold(db, p, u, running_id, now_wall_ns, 0, ids, max, n, over,
				   &held, e);
}

int retention_plan_hold(struct db *db, const struct retention_policy *p,
			const struct retention_usage *u, int64_t running_id, int64_t now_wall_ns,
			int64_t hold_from, int64_t *ids, size_t max, size_t *n, int *over,
			size_t *held, struct error *e)
{
	uint64_t total = u->db_bytes + u->cache_bytes, excess = 0, freed = 0;
	double per_sample = u->samples ? (double)u->db_bytes / u->samples : 0;
	struct cand {
		int64_t id, samples, end;
	} *c = NULL;
	int64_t *mark = NULL;
	size_t nc = 0, ccap = 0, nmark = 0, cap = 0;
	sqlite3_stmt *st;
	int rc;

	*n = 0;
	*over = 0;
	*held = 0;
	if (p->max_bytes && total > p->max_bytes)
		excess = total - p->max_bytes;
	if (!p->keep_ns && !excess)
		return 0;
	if (prep(db, "SELECT id,samples,coalesce(end_ns,start_ns)+wall_offset_ns FROM sessions "
		 "WHERE state IN ('done','interrupted','aborted') ORDER BY id", &st, e,
		 "reading sessions"))
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_int64(st, 0) == running_id)
			continue;
		ARRAY_GROW(c, ccap, nc + 1);
		c[nc].id = sqlite3_column_int64(st, 0);
		c[nc].samples = sqlite3_column_int64(st, 1);
		c[nc++].end = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(c);
		return db_sql_error(db, e, "reading sessions");
	}
	for (size_t i = 0; i < nc; i++) {
		int old = p->keep_ns && c[i].end < now_wall_ns - p->keep_ns;

		/* by size, never the newest finished session: what was just
		 * recorded is not removed to make room */
		if (!old && (freed >= excess || i == nc - 1))
			continue;
		if (hold_from > 0 && c[i].id >= hold_from) {
			(*held)++;
			continue;
		}
		ARRAY_GROW(mark, cap, nmark + 1);
		mark[nmark++] = c[i].id;
		/* its rows, and a page or so for its other tables */
		freed += (uint64_t)(c[i].samples * per_sample) + 4096;
	}
	free(c);
	*over = freed < excess;
	if (nmark) {
		if (db_begin(db, e) < 0 || mark_deleting(db, mark, nmark, e) < 0 ||
		    db_commit(db, e) < 0) {
			if (!sqlite3_get_autocommit(db_sqlite(db)))
				db_rollback(db);
			free(mark);
			return -1;
		}
	}
	for (size_t i = 0; i < nmark && i < max; i++)
		ids[i] = mark[i];
	*n = nmark;
	free(mark);
	return 0;
}

int retention_pending(struct db *db, int64_t *count, struct error *e)
{
	return int_query(db, "SELECT count(*) FROM sessions WHERE state='deleting'", count, e);
}

/* Run a DELETE with ?1 = session id, ?2 = limit; returns the rows deleted
 * or -1. */
static int64_t delete_some(struct db *db, const char *sql, int64_t id, int64_t limit,
			   struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	if (prep(db, sql, &st, e, "deleting a session"))
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_bind_parameter_count(st) >= 2)
		sqlite3_bind_int64(st, 2, limit);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_sql_error(db, e, "deleting a session");
	return sqlite3_changes(db_sqlite(db));
}

/* The tables a session has rows in besides samples and sessions, each
 * with a DELETE of at most ?2 of session ?1's rows. */
static const char *const session_tables[] = {
	"DELETE FROM sample_agg WHERE (session_id,binary_id,offset,pid,comm_id,flags,start_ns) IN "
	"(SELECT session_id,binary_id,offset,pid,comm_id,flags,start_ns FROM sample_agg "
	"WHERE session_id=?1 LIMIT ?2)",
	"DELETE FROM sample_time WHERE (session_id,bucket,cpu,pid,comm_id,binary_id,start_ns) IN "
	"(SELECT session_id,bucket,cpu,pid,comm_id,binary_id,start_ns FROM sample_time "
	"WHERE session_id=?1 LIMIT ?2)",
	"DELETE FROM processes WHERE (session_id,pid,start_ns) IN "
	"(SELECT session_id,pid,start_ns FROM processes WHERE session_id=?1 LIMIT ?2)",
	"DELETE FROM markers WHERE rowid IN "
	"(SELECT rowid FROM markers WHERE session_id=?1 LIMIT ?2)",
	"DELETE FROM lost WHERE rowid IN (SELECT rowid FROM lost WHERE session_id=?1 LIMIT ?2)",
	"DELETE FROM unscheduled WHERE rowid IN "
	"(SELECT rowid FROM unscheduled WHERE session_id=?1 LIMIT ?2)",
	"DELETE FROM session_probes WHERE rowid IN "
	"(SELECT rowid FROM session_probes WHERE session_id=?1 LIMIT ?2)",
	"DELETE FROM session_cpus WHERE (session_id,cpu) IN "
	"(SELECT session_id,cpu FROM session_cpus WHERE session_id=?1 LIMIT ?2)",
	"DELETE FROM session_events WHERE (session_id,idx) IN "
	"(SELECT session_id,idx FROM session_events WHERE session_id=?1 LIMIT ?2)",
	"DELETE FROM jit_maps WHERE rowid IN "
	"(SELECT rowid FROM jit_maps WHERE session_id=?1 LIMIT ?2)",
	"DELETE FROM jit_symbols WHERE rowid IN "
	"(SELECT rowid FROM jit_symbols WHERE session_id=?1 LIMIT ?2)",
	"DELETE FROM cgroups WHERE (session_id,id) IN "
	"(SELECT session_id,id FROM cgroups WHERE session_id=?1 LIMIT ?2)",
	/* schema 14 */
	"DELETE FROM stacks WHERE (session_id,id) IN "
	"(SELECT session_id,id FROM stacks WHERE session_id=?1 LIMIT ?2)",
	"DELETE FROM stack_agg WHERE (session_id,stack_id,pid,comm_id,start_ns) IN "
	"(SELECT session_id,stack_id,pid,comm_id,start_ns FROM stack_agg "
	"WHERE session_id=?1 LIMIT ?2)",
	"DELETE FROM unwind_errors WHERE rowid IN "
	"(SELECT rowid FROM unwind_errors WHERE session_id=?1 LIMIT ?2)",
	/* schema 17: in DB.stacks (rawstk.h) */
	"DELETE FROM rawstk.raw_stacks WHERE (session_id,sample_row) IN "
	"(SELECT session_id,sample_row FROM rawstk.raw_stacks WHERE session_id=?1 LIMIT ?2)",
	/* schema 15 */
	"DELETE FROM count_values WHERE (session_id,t_ns,event_idx,unit) IN "
	"(SELECT session_id,t_ns,event_idx,unit FROM count_values WHERE session_id=?1 LIMIT ?2)",
};

/* Delete what budget allows of session id; 1 when it is gone. */
static int delete_session(struct db *db, int64_t id, int64_t first,
			  int64_t *budget, struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	if (first > 0) {
		/* at most *budget sample blocks, the first ones, then the
		 * session row records where the next step starts */
		int64_t want = *budget > 0 ? *budget : 1, next = 0;

		if (prep(db, "DELETE FROM sample_blocks WHERE first_row IN (SELECT first_row "
			 "FROM sample_blocks WHERE session_id=?1 AND first_row>=?2 "
			 "ORDER BY first_row LIMIT ?3)", &st, e, "deleting a session's samples"))
			return -1;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, first);
		sqlite3_bind_int64(st, 3, want);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return db_sql_error(db, e, "deleting a session's samples");
		*budget -= sqlite3_changes(db_sqlite(db));
		if (prep(db, "SELECT min(first_row) FROM sample_blocks WHERE session_id=?1 AND "
			 "first_row>=?2", &st, e, "deleting a session's samples"))
			return -1;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, first);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			next = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW)
			return db_sql_error(db, e, "deleting a session's samples");
		if (prep(db, !next ?
			 "UPDATE sessions SET first_sample=NULL,last_sample=NULL WHERE id=?1" :
			 "UPDATE sessions SET first_sample=?2 WHERE id=?1", &st, e,
			 "deleting a session's samples"))
			return -1;
		sqlite3_bind_int64(st, 1, id);
		if (next)
			sqlite3_bind_int64(st, 2, next);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return db_sql_error(db, e, "deleting a session's samples");
		if (next)
			return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(session_tables); i++) {
		int64_t want = *budget > 0 ? *budget : 1;
		int64_t k = delete_some(db, session_tables[i], id, want, e);

		if (k < 0)
			return -1;
		*budget -= k;
		if (k == want)
			return 0;	/* maybe more: the next step */
	}
	if (delete_some(db, "DELETE FROM sessions WHERE id=?1", id, 0, e) < 0)
		return -1;
	*budget -= 1;
	return 1;
}

int retention_step(struct db *db, int64_t max_rows, int64_t *removed, struct error *e)
{
	int64_t budget = max_rows > 0 ? max_rows : 1;
	sqlite3_stmt *st;
	int rc, more = 0;

	*removed = 0;
	if (db_begin(db, e) < 0)
		return -1;
	while (budget > 0) {
		int64_t id, first;
		int gone;

		if (prep(db, "SELECT id,first_sample FROM sessions "
			 "WHERE state='deleting' ORDER BY id LIMIT 1", &st, e, "reading sessions"))
			goto fail;
		rc = sqlite3_step(st);
		id = sqlite3_column_int64(st, 0);
		first = sqlite3_column_int64(st, 1);
		sqlite3_finalize(st);
		if (rc == SQLITE_DONE) {
			more = 0;
			break;
		}
		if (rc != SQLITE_ROW) {
			db_sql_error(db, e, "reading sessions");
			goto fail;
		}
		more = 1;
		gone = delete_session(db, id, first, &budget, e);
		if (gone < 0)
			goto fail;
		*removed += gone;
	}
	if (db_commit(db, e) < 0) {
		*removed = 0;
		return -1;
	}
	if (more && budget <= 0) {
		int64_t left;

		if (retention_pending(db, &left, e) < 0)
			return -1;
		more = left > 0;
	}
	return more;
fail:
	db_rollback(db);
	*removed = 0;
	return -1;
}

/* Every binary a stored stack's frames name (16 bytes each, the binary id
 * little-endian first) into temp.gc_keep. */
static int gc_keep_stack_binaries(struct db *db, struct error *e)
{
	sqlite3_stmt *st, *keep;
	int64_t last = 0;
	int rc;

	if (prep(db, "SELECT frames FROM stacks", &st, e, "collecting unused binaries"))
		return -1;
	if (prep(db, "INSERT OR IGNORE INTO temp.gc_keep VALUES(?1)", &keep, e,
		 "collecting unused binaries")) {
		sqlite3_finalize(st);
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *f = sqlite3_column_blob(st, 0);
		size_t n = (size_t)sqlite3_column_bytes(st, 0) / 16;

		for (size_t i = 0; f && i < n; i++) {
			uint64_t id = 0;

			for (int b = 0; b < 8; b++)
				id |= (uint64_t)f[16 * i + b] << (8 * b);
			if ((int64_t)id == last)
				continue;	/* neighbours share binaries */
			last = (int64_t)id;
			sqlite3_bind_int64(keep, 1, (int64_t)id);
			if (sqlite3_step(keep) != SQLITE_DONE) {
				rc = SQLITE_ERROR;
				goto out;
			}
			sqlite3_reset(keep);
		}
	}
out:
	sqlite3_finalize(keep);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_sql_error(db, e, "collecting unused binaries");
	return 0;
}

int retention_gc_binaries(struct db *db, int64_t *deleted, struct error *e)
{
	sqlite3_stmt *st, *keep;
	char *msg = NULL;
	int rc;

	*deleted = 0;
	if (db_begin(db, e) < 0)
		return -1;
	if (sqlite3_exec(db_sqlite(db), "CREATE TEMP TABLE IF NOT EXISTS gc_keep"
			 "(id INTEGER PRIMARY KEY); DELETE FROM temp.gc_keep", NULL, NULL,
			 &msg) != SQLITE_OK) {
		error_set(e, "%s: collecting unused binaries: %s", db_path(db), msg);
		sqlite3_free(msg);
		goto fail;
	}
	/* sessions stored without a histogram refer through their samples */
	if (prep(db, "SELECT id,first_sample,last_sample FROM sessions WHERE state IN "
		 "('running','aborted','deleting') AND first_sample IS NOT NULL", &st, e,
		 "collecting unused binaries"))
		goto fail;
	if (prep(db, "INSERT OR IGNORE INTO temp.gc_keep SELECT DISTINCT binary_id FROM samples "
		 "WHERE rowid BETWEEN ?2 AND ?3 AND session_id=?1 AND binary_id IS NOT NULL",
		 &keep, e, "collecting unused binaries")) {
		sqlite3_finalize(st);
		goto fail;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t last = sqlite3_column_int64(st, 2);

		sqlite3_bind_int64(keep, 1, sqlite3_column_int64(st, 0));
		sqlite3_bind_int64(keep, 2, sqlite3_column_int64(st, 1));
		sqlite3_bind_int64(keep, 3, last > 0 ? last : INT64_MAX);
		if (sqlite3_step(keep) != SQLITE_DONE) {
			rc = SQLITE_ERROR;
			break;
		}
		sqlite3_reset(keep);
	}
	sqlite3_finalize(keep);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_sql_error(db, e, "collecting unused binaries");
		goto fail;
	}
	/* the binaries of stack frames (schema 14), decoded from the blobs */
	if (gc_keep_stack_binaries(db, e) < 0)
		goto fail;
	if (prep(db, "DELETE FROM binaries WHERE "
		 "NOT EXISTS (SELECT 1 FROM sample_agg WHERE binary_id=binaries.id) AND "
		 "NOT EXISTS (SELECT 1 FROM sessions WHERE kernel_binary_id=binaries.id) AND "
		 "id NOT IN (SELECT id FROM temp.gc_keep)", &st, e, "deleting unused binaries"))
		goto fail;
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_sql_error(db, e, "deleting unused binaries");
		goto fail;
	}
	*deleted = sqlite3_changes(db_sqlite(db));
	return db_commit(db, e);
fail:
	db_rollback(db);
	return -1;
}
