/*
 * eventscan.c - the one reader of a session's markers and lost records
 * (eventscan.h): one prepared statement per table, its rows in time order.
 */
#include "config.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "eventscan.h"
#include "util.h"

struct marker_scan {
	struct db *db;
	sqlite3_stmt *st;	/* NULL: no markers table, no rows */
};

struct lost_scan {
	struct db *db;
	sqlite3_stmt *st;
};

static const char marker_sql[] =
	"SELECT time_ns,cpu,pid,tid,kind,name,args FROM markers WHERE session_id=?1 "
	"AND time_ns BETWEEN ?2 AND ?3 "
	"AND (?4 < 0 OR pid=?4) "
	"AND (?5 IS NULL OR pid IN (SELECT p.pid FROM processes p JOIN comms c "
	"ON c.id=p.comm_id WHERE p.session_id=?1 AND c.name=?5)) "
	"ORDER BY time_ns, rowid LIMIT ?6";

static const char lost_sql[] =
	"SELECT time_ns,cpu,count,kind FROM lost WHERE session_id=?1 "
	"AND time_ns BETWEEN ?2 AND ?3 ORDER BY time_ns, cpu, rowid LIMIT ?4";

void event_filter_all(struct event_filter *f, int64_t session_id)
{
	memset(f, 0, sizeof(*f));
	f->session_id = session_id;
	f->time_lo = INT64_MIN;
	f->time_hi = INT64_MAX;
	f->limit = -1;
	f->pid = -1;
}

static const char *col_str(sqlite3_stmt *st, int i)
{
	const char *s = (const char *)sqlite3_column_text(st, i);

	return s ? s : "";
}

static int64_t col_or(sqlite3_stmt *st, int i, int64_t null)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? null : sqlite3_column_int64(st, i);
}

/* sqlite3_step()'s answer as a scan's: 1 row, 0 done, -1 error. */
static int step(struct db *db, sqlite3_stmt *st, const char *what, struct error *e)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return db_sql_error(db, e, what);
}

struct marker_scan *marker_scan_open(struct db *db, const struct event_filter *f,
				     struct error *e)
{
	struct marker_scan *sc = xcalloc(1, sizeof(*sc));

	sc->db = db;
	if (sqlite3_prepare_v2(db_sqlite(db), marker_sql, -1, &sc->st, NULL)) {
		/* a database of schema 1 has no markers table: no markers */
		if (strstr(sqlite3_errmsg(db_sqlite(db)), "no such table"))
			return sc;
		db_sql_error(db, e, "reading markers");
		free(sc);
		return NULL;
	}
	sqlite3_bind_int64(sc->st, 1, f->session_id);
	sqlite3_bind_int64(sc->st, 2, f->time_lo);
	sqlite3_bind_int64(sc->st, 3, f->time_hi);
	sqlite3_bind_int64(sc->st, 4, f->pid);
	if (f->comm)
		sqlite3_bind_text(sc->st, 5, f->comm, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(sc->st, 6, f->limit);
	return sc;
}

int marker_scan_next(struct marker_scan *sc, struct db_marker *m, struct error *e)
{
	int rc;

	if (!sc->st)
		return 0;
	rc = step(sc->db, sc->st, "reading markers", e);
	if (rc != 1)
		return rc;
	m->time_ns = (uint64_t)sqlite3_column_int64(sc->st, 0);
	m->cpu = (int)col_or(sc->st, 1, -1);
	m->pid = col_or(sc->st, 2, -1);
	m->tid = col_or(sc->st, 3, -1);
	m->kind = col_str(sc->st, 4);
	m->name = col_str(sc->st, 5);
	m->args = (const char *)sqlite3_column_text(sc->st, 6);
	return 1;
}

void marker_scan_close(struct marker_scan *sc)
{
	if (!sc)
		return;
	sqlite3_finalize(sc->st);
	free(sc);
}

struct lost_scan *lost_scan_open(struct db *db, const struct event_filter *f,
				 struct error *e)
{
	struct lost_scan *sc = xcalloc(1, sizeof(*sc));

	sc->db = db;
	if (sqlite3_prepare_v2(db_sqlite(db), lost_sql, -1, &sc->st, NULL)) {
		db_sql_error(db, e, "reading lost records");
		free(sc);
		return NULL;
	}
	sqlite3_bind_int64(sc->st, 1, f->session_id);
	sqlite3_bind_int64(sc->st, 2, f->time_lo);
	sqlite3_bind_int64(sc->st, 3, f->time_hi);
	sqlite3_bind_int64(sc->st, 4, f->limit);
	return sc;
}

int lost_scan_next(struct lost_scan *sc, struct db_lost *l, struct error *e)
{
	int rc = step(sc->db, sc->st, "reading lost records", e);

	if (rc != 1)
		return rc;
	l->time_ns = sqlite3_column_int64(sc->st, 0);
	l->cpu = sqlite3_column_int(sc->st, 1);
	l->count = (uint64_t)sqlite3_column_int64(sc->st, 2);
	l->kind = col_str(sc->st, 3);
	return 1;
}

void lost_scan_close(struct lost_scan *sc)
{
	if (!sc)
		return;
	sqlite3_finalize(sc->st);
	free(sc);
}
