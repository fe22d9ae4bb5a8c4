/*
 * dbsession.c - the rows of a session in the strobe database (db.h):
 * sessions, its one row of settings and totals, and session_events, the
 * counting events of its columns c0...  Written by strobed as a session
 * starts, runs and ends; read by every report.
 */
#include "config.h"
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "db_int.h"

/*
 * The columns of sessions, in the order of their ? in the INSERT and of
 * the SELECT: one list for the statements, session_bind and session_read.
 */
enum col_kind {
	COL_INT,		/* an int64_t */
	COL_OPT,		/* an int64_t, NULL when 0 (read back as 0) */
	COL_KNOWN,		/* an int64_t, NULL when negative (read back as -1) */
	COL_TEXT,		/* a char[] */
	COL_TEXT_OPT,		/* a char[], NULL when "" */
};

static const struct session_col {
	const char *name;
	enum col_kind kind;
	size_t off, size;
} session_cols[] = {
/* (the subtraction compiles only when f is an int64_t) */
#define INT_COL(f, kind)	{ #f, kind, offsetof(struct db_session, f) +		\
				  0 * sizeof(&((struct db_session *)0)->f - (int64_t *)0),	\
				  sizeof(int64_t) }
#define TEXT_COL(f, kind)	{ #f, kind, offsetof(struct db_session, f),		\
				  sizeof(((struct db_session *)0)->f) }
	INT_COL(id, COL_INT),
	TEXT_COL(name, COL_TEXT_OPT),
	TEXT_COL(state, COL_TEXT),
	TEXT_COL(backend, COL_TEXT),
	INT_COL(owner_uid, COL_INT),
	TEXT_COL(hostname, COL_TEXT_OPT),
	TEXT_COL(kernel_release, COL_TEXT_OPT),
	INT_COL(nr_cpus, COL_INT),
	TEXT_COL(sample_event, COL_TEXT),
	INT_COL(sample_freq, COL_OPT),
	INT_COL(sample_period, COL_OPT),
	INT_COL(start_ns, COL_INT),
	INT_COL(end_ns, COL_OPT),
	INT_COL(wall_offset_ns, COL_INT),
	INT_COL(tsc_mult, COL_INT),
	INT_COL(tsc_shift, COL_INT),
	INT_COL(tsc_ref, COL_INT),
	INT_COL(tsc_ref_ns, COL_INT),
	TEXT_COL(tsc_source, COL_TEXT_OPT),
	INT_COL(kernel_binary_id, COL_OPT),
	TEXT_COL(kallsyms_key, COL_TEXT_OPT),
	INT_COL(first_sample, COL_OPT),
	INT_COL(last_sample, COL_OPT),
	INT_COL(samples, COL_INT),
	INT_COL(lost, COL_INT),
	INT_COL(throttled, COL_INT),
	INT_COL(duration_ns, COL_OPT),
	INT_COL(time_bucket_ns, COL_OPT),
	INT_COL(late_samples, COL_KNOWN),
	INT_COL(late_records, COL_KNOWN),
	INT_COL(late_max_ns, COL_KNOWN),
	TEXT_COL(cgroup_source, COL_TEXT_OPT),
	TEXT_COL(call_graph, COL_TEXT_OPT),
	TEXT_COL(attribution, COL_TEXT_OPT),
#undef INT_COL
#undef TEXT_COL
};
#define NR_SESSION_COLS (sizeof(session_cols) / sizeof(session_cols[0]))

/* head, the columns (comma-separated, in session_cols' order), then with
 * values (not NULL) values and their parameters ?1,?2,..., then tail;
 * free() it. */
static char *session_sql(const char *head, const char *values, const char *tail)
{
	struct sbuf q = { 0 };

	sbuf_addf(&q, "%s", head);
	for (size_t i = 0; i < NR_SESSION_COLS; i++)
		sbuf_addf(&q, "%s%s", i ? "," : "", session_cols[i].name);
	if (values) {
		sbuf_addf(&q, "%s", values);
		for (size_t i = 0; i < NR_SESSION_COLS; i++)
			sbuf_addf(&q, "%s?%zu", i ? "," : "", i + 1);
	}
	sbuf_addf(&q, "%s", tail);
	return q.s;
}

static void session_bind(sqlite3_stmt *st, const struct db_session *s)
{
	for (size_t i = 0; i < NR_SESSION_COLS; i++) {
		const struct session_col *c = &session_cols[i];
		const char *f = (const char *)s + c->off;
		int64_t v = 0;

		if (c->kind != COL_TEXT && c->kind != COL_TEXT_OPT)
			memcpy(&v, f, sizeof(v));
		switch (c->kind) {
		case COL_INT:
			sqlite3_bind_int64(st, i + 1, v);
			break;
		case COL_OPT:
			db_bind_opt_int(st, i + 1, v);
			break;
		case COL_KNOWN:
			db_bind_known(st, i + 1, v);
			break;
		case COL_TEXT:
			sqlite3_bind_text(st, i + 1, f, -1, SQLITE_TRANSIENT);
			break;
		case COL_TEXT_OPT:
			db_bind_text_or_null(st, i + 1, f);
			break;
		}
	}
}

/* The row st is on (session_sql's SELECT) into s: session_bind's inverse. */
static void session_read(sqlite3_stmt *st, struct db_session *s)
{
	for (size_t i = 0; i < NR_SESSION_COLS; i++) {
		const struct session_col *c = &session_cols[i];
		char *f = (char *)s + c->off;
		int64_t v;

		if (c->kind == COL_TEXT || c->kind == COL_TEXT_OPT) {
			db_col_text(st, i, f, c->size);
			continue;
		}
		v = c->kind == COL_KNOWN ? db_col_known(st, i) : sqlite3_column_int64(st, i);
		memcpy(f, &v, sizeof(v));
	}
}

static int session_write(struct db *db, struct db_session *s, int insert, struct error *e)
{
	char *sql = session_sql("INSERT OR REPLACE INTO sessions(", ") VALUES(", ")");
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	free(sql);
	if (rc)
		return db_sql_error(db, e, "storing the session");
	session_bind(st, s);
	if (insert)
		sqlite3_bind_null(st, 1);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_sql_error(db, e, "storing the session");
	if (!insert)
		return 0;
	s->id = sqlite3_last_insert_rowid(db->sql);
	for (int i = 0; i < s->nr_events; i++) {
		const struct db_event *ev = &s->events[i];

		if (sqlite3_prepare_v2(db->sql, "INSERT INTO session_events VALUES(?1,?2,?3,?4,?5,?6,?7)",
				       -1, &st, NULL))
			return db_sql_error(db, e, "storing the session's events");
		sqlite3_bind_int64(st, 1, s->id);
		sqlite3_bind_int(st, 2, i);
		sqlite3_bind_text(st, 3, ev->name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, ev->type);
		sqlite3_bind_int64(st, 5, (int64_t)ev->config);
		sqlite3_bind_int64(st, 6, (int64_t)ev->config1);
		sqlite3_bind_int64(st, 7, (int64_t)ev->config2);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return db_sql_error(db, e, "storing the session's events");
	}
	return 0;
}

int db_session_insert(struct db *db, struct db_session *s, struct error *e)
{
	if (db_begin(db, e))
		return -1;
	if (session_write(db, s, 1, e)) {
		db_rollback(db);
		return -1;
	}
	return db_commit(db, e);
}

int db_session_update(struct db *db, const struct db_session *s, struct error *e)
{
	return session_write(db, (struct db_session *)s, 0, e);
}

/* s's counting events, from session_events. */
static int session_events_read(struct db *db, struct db_session *s, struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db->sql, "SELECT idx,name,type,config,config1,config2 FROM "
			       "session_events WHERE session_id=?1 ORDER BY idx", -1, &st, NULL))
		return db_sql_error(db, e, "reading session events");
	sqlite3_bind_int64(st, 1, s->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int idx = sqlite3_column_int(st, 0);
		struct db_event *ev;

		if (idx < 0 || idx >= STROBE_MAX_COUNTERS)
			continue;
		ev = &s->events[idx];
		db_col_text(st, 1, ev->name, sizeof(ev->name));
		ev->type = sqlite3_column_int64(st, 2);
		ev->config = sqlite3_column_int64(st, 3);
		ev->config1 = sqlite3_column_int64(st, 4);
		ev->config2 = sqlite3_column_int64(st, 5);
		if (idx + 1 > s->nr_events)
			s->nr_events = idx + 1;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_sql_error(db, e, "reading session events");
}

int db_session_get(struct db *db, int64_t id, struct db_session *s, struct error *e)
{
	char *sql = session_sql("SELECT ", NULL, id ?
				" FROM sessions WHERE id=?1 AND state!='deleting'" :
				" FROM sessions WHERE state!='deleting' ORDER BY id DESC LIMIT 1");
	sqlite3_stmt *st;
	int rc;

	memset(s, 0, sizeof(*s));
	rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	free(sql);
	if (rc)
		return db_sql_error(db, e, "reading sessions");
	if (id)
		sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return db_sql_error(db, e, "reading sessions");
		if (id)
			return error_set(e, "no session %lld in %s: 'strobe sessions' lists them",
					 (long long)id, db->path);
		return error_set(e, "no sessions in %s yet: record one with 'strobe record -- CMD'",
				 db->path);
	}
	session_read(st, s);
	sqlite3_finalize(st);
	return session_events_read(db, s, e);
}

int db_session_max_id(struct db *db, int64_t *id, struct error *e)
{
	return db_pragma_int(db, "SELECT coalesce(max(id),0) FROM sessions", id, e);
}

int db_session_complete(const struct db_session *s)
{
	return !strcmp(s->state, "done") || !strcmp(s->state, "interrupted");
}

int db_session_set_call_graph(struct db *db, int64_t id, const char *call_graph,
			      struct error *e)
{
	return db_exec_bound(db, "UPDATE sessions SET call_graph=?5 WHERE id=?1", e,
			     "storing the session's call graph mode", id, 0, 0, 0, call_graph);
}
