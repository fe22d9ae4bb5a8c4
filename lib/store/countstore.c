/*
 * countstore.c - count sessions in the database (see countstore.h).
 */
#include "config.h"
#include <math.h>
#include <string.h>
#include <sqlite3.h>
#include "countstore.h"

#define MAX_T_NS (100LL * 86400 * 1000000000LL)

int countstore_begin(struct db *db, struct db_session *s, struct error *e)
{
	sqlite3_stmt *st = NULL;
	int64_t open = 0;

	if (s->owner_uid != 0) {
		if (sqlite3_prepare_v2(db_sqlite(db), "SELECT count(*) FROM sessions WHERE "
				       "backend='count' AND owner_uid=?1 AND ifnull(end_ns,0)=0",
				       -1, &st, NULL))
			return db_sql_error(db, e, "counting the uid's open count sessions");
		sqlite3_bind_int64(st, 1, s->owner_uid);
		if (sqlite3_step(st) == SQLITE_ROW)
			open = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		if (open >= COUNTSTORE_OPEN_MAX)
			return error_set(e, "uid %lld has %lld count sessions not ended (at most "
					 "%d): end them, or remove those a killed 'strobe count "
					 "--save' left open with 'strobe rm ID'",
					 (long long)s->owner_uid, (long long)open,
					 COUNTSTORE_OPEN_MAX);
	}
	snprintf(s->backend, sizeof(s->backend), "count");
	snprintf(s->state, sizeof(s->state), "done");
	snprintf(s->sample_event, sizeof(s->sample_event), "none");
	s->samples = s->lost = s->throttled = 0;
	s->first_sample = s->last_sample = 0;
	s->end_ns = 0;			/* set by countstore_end */
	s->duration_ns = 0;
	s->time_bucket_ns = 0;
	s->late_samples = s->late_records = s->late_max_ns = 0;
	return db_session_insert(db, s, e);
}

/* Session id is a count session uid may add to: 0, else -1 with e. */
static int check_session(struct db *db, int64_t id, uid_t uid, struct db_session *s,
			 struct error *e)
{
	if (db_session_get(db, id, s, e) < 0)
		return -1;
	if (strcmp(s->backend, "count"))
		return error_set(e, "session %lld is not a count session", (long long)id);
	if (uid != 0 && s->owner_uid != (int64_t)uid)
		return error_set(e, "session %lld is not yours", (long long)id);
	if (s->end_ns)
		return error_set(e, "count session %lld is ended: it takes no more values",
				 (long long)id);
	return 0;
}

static int valid(const struct count_saved *v, int nev, struct error *e)
{
	if (v->t_ns < 0 || v->t_ns > MAX_T_NS)
		return error_set(e, "bad count: time %lld ns out of range", (long long)v->t_ns);
	if (v->idx < 0 || v->idx >= nev)
		return error_set(e, "bad count: event %d, the session has %d", v->idx, nev);
	if (!isnan(v->value) && (!isfinite(v->value) || v->value < 0))
		return error_set(e, "bad count: value out of range");
	if (!isfinite(v->pct) || v->pct < 0 || v->pct > 100)
		return error_set(e, "bad count: percent running out of range");
	for (const char *p = v->unit; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == ',' || *p == ';')
			return error_set(e, "bad count: unit name with a control character, ',' or ';'");
	if (!memchr(v->unit, 0, sizeof(v->unit)))
		return error_set(e, "bad count: unit name too long");
	return 0;
}

int countstore_add(struct db *db, int64_t id, uid_t uid, const struct count_saved *v, size_t n,
		   struct error *e)
{
	struct db_session s;
	sqlite3_stmt *st = NULL;
	int64_t have = 0;

	if (check_session(db, id, uid, &s, e) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (valid(&v[i], s.nr_events, e) < 0)
			return -1;
	if (sqlite3_prepare_v2(db_sqlite(db), "SELECT count(*) FROM count_values WHERE session_id=?1",
			       -1, &st, NULL))
		return db_sql_error(db, e, "counting a session's values");
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW)
		have = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (have + (int64_t)n > COUNTSTORE_MAX_ROWS)
		return error_set(e, "count session %lld would have more than %d values: count "
				 "fewer events or use a longer -I", (long long)id, COUNTSTORE_MAX_ROWS);
	if (db_begin(db, e) < 0)
		return -1;
	if (sqlite3_prepare_v2(db_sqlite(db), "INSERT OR REPLACE INTO count_values (session_id, "
			       "t_ns, event_idx, unit, value, pct_running) VALUES (?1,?2,?3,?4,?5,?6)",
			       -1, &st, NULL)) {
		db_sql_error(db, e, "storing counts");
		db_rollback(db);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, v[i].t_ns);
		sqlite3_bind_int(st, 3, v[i].idx);
		sqlite3_bind_text(st, 4, v[i].unit, -1, SQLITE_TRANSIENT);
		if (isnan(v[i].value))
			sqlite3_bind_null(st, 5);
		else
			sqlite3_bind_double(st, 5, v[i].value);
		sqlite3_bind_double(st, 6, v[i].pct);
		if (sqlite3_step(st) != SQLITE_DONE) {
			db_sql_error(db, e, "storing counts");
			sqlite3_finalize(st);
			db_rollback(db);
			return -1;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return db_commit(db, e);
}

int countstore_end(struct db *db, int64_t id, uid_t uid, int64_t end_ns, struct error *e)
{
	struct db_session s;

	if (check_session(db, id, uid, &s, e) < 0)
		return -1;
	if (end_ns < s.start_ns || end_ns - s.start_ns > MAX_T_NS)
		return error_set(e, "bad end time for count session %lld", (long long)id);
	s.end_ns = end_ns > s.start_ns ? end_ns : s.start_ns + 1;
	s.duration_ns = s.end_ns - s.start_ns;
	return db_session_update(db, &s, e);
}

int countstore_each(struct db *db, int64_t id,
		    void (*fn)(void *ctx, int64_t t_ns, int idx, double value), void *ctx,
		    struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db_sqlite(db), "SELECT t_ns, event_idx, sum(value) FROM count_values "
			       "WHERE session_id=?1 AND value IS NOT NULL GROUP BY t_ns, event_idx "
			       "ORDER BY t_ns, event_idx", -1, &st, NULL))
		return db_sql_error(db, e, "reading counts");
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		fn(ctx, sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1),
		   sqlite3_column_double(st, 2));
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_sql_error(db, e, "reading counts");
	return 0;
}
