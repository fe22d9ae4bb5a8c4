/*
 * report_markers.c - "strobe report --markers": the markers of a session
 * (USDT probe hits and 'strobe mark' texts, table markers) in time order,
 * as text, CSV or JSON.
 *
 * Columns: time_s (since the session start), kind (usdt | mark), name
 * (PROVIDER:NAME or the text), pid, tid, cpu (empty for mark), args (the
 * probe's arguments "a0,a1,..."; "?" for one that could not be read).
 * --pid, --comm (the marker's process, by the session's processes table)
 * and --from/--to select; --limit keeps the first N.  Text output starts
 * with a '#' line naming the session.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "db.h"
#include "output.h"
#include "report.h"
#include "report_markers.h"

static const char markers_sql[] =
	"SELECT time_ns,kind,name,pid,tid,cpu,args FROM markers WHERE session_id=?1 "
	"AND (?2 < 0 OR pid=?2) "
	"AND (?3 IS NULL OR pid IN (SELECT p.pid FROM processes p JOIN comms c "
	"ON c.id=p.comm_id WHERE p.session_id=?1 AND c.name=?3)) "
	"AND (?4 IS NULL OR time_ns>=?4) AND (?5 IS NULL OR time_ns<=?5) "
	"ORDER BY time_ns, rowid LIMIT ?6";

int report_markers(struct db *db, const struct report_opts *o, enum output_format fmt,
		   FILE *f, struct error *e)
{
	enum { C_TIME, C_KIND, C_NAME, C_PID, C_TID, C_CPU, C_ARGS };
	struct db_session s;
	struct table *t;
	sqlite3_stmt *st;
	char buf[64];
	int rc, ret = 0;

	if (db_session_get(db, o->session, &s, e) < 0)
		return -1;
	if (sqlite3_prepare_v2(db_sqlite(db), markers_sql, -1, &st, NULL))
		return db_sql_error(db, e, "reading the markers");
	sqlite3_bind_int64(st, 1, s.id);
	sqlite3_bind_int64(st, 2, o->pid);
	if (o->comm)
		sqlite3_bind_text(st, 3, o->comm, -1, SQLITE_STATIC);
	if (o->has_from)
		sqlite3_bind_int64(st, 4, s.start_ns + o->from_ns);
	if (o->has_to)
		sqlite3_bind_int64(st, 5, s.start_ns + o->to_ns);
	sqlite3_bind_int64(st, 6, o->limit ? (int64_t)o->limit : -1);

	t = table_new();
	/* text: microseconds; CSV and JSON: the exact nanosecond as a number */
	table_add_col(t, "time_s", fmt == OUTPUT_TEXT ? COL_STR : COL_FLOAT);
	table_add_col(t, "kind", COL_STR);
	table_add_col(t, "name", COL_STR);
	table_add_col(t, "pid", COL_INT);
	table_add_col(t, "tid", COL_INT);
	table_add_col(t, "cpu", COL_INT);
	table_add_col(t, "args", COL_STR);
	snprintf(buf, sizeof(buf), "%" PRId64, s.id);
	table_add_meta(t, "session", buf, 1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t r = table_add_row(t);
		int64_t rel = sqlite3_column_int64(st, 0) - s.start_ns;

		if (fmt == OUTPUT_TEXT) {
			snprintf(buf, sizeof(buf), "%.6f", rel / 1e9);
			table_set_str(t, r, C_TIME, buf);
		} else {
			table_set_float(t, r, C_TIME, rel / 1e9);
		}
		table_set_str(t, r, C_KIND, (const char *)sqlite3_column_text(st, 1));
		table_set_str(t, r, C_NAME, (const char *)sqlite3_column_text(st, 2));
		for (int c = 3; c <= 5; c++)
			if (sqlite3_column_type(st, c) != SQLITE_NULL)
				table_set_int(t, r, C_PID + (c - 3), sqlite3_column_int64(st, c));
		if (sqlite3_column_type(st, 6) != SQLITE_NULL)
			table_set_str(t, r, C_ARGS, (const char *)sqlite3_column_text(st, 6));
	}
	if (rc != SQLITE_DONE) {
		ret = db_sql_error(db, e, "reading the markers");
		sqlite3_finalize(st);
		table_free(t);
		return ret;
	}
	sqlite3_finalize(st);
	if (fmt == OUTPUT_TEXT) {
		fprintf(f, "# session %" PRId64, s.id);
		if (s.name[0])
			fprintf(f, " \"%s\"", TEXT_SAFE(s.name));
		fprintf(f, " (%s): %zu marker%s", TEXT_SAFE(s.state), table_rows(t),
			table_rows(t) == 1 ? "" : "s");
		if (o->pid >= 0 || o->comm || o->has_from || o->has_to || o->limit)
			fputs(" selected", f);
		fputc('\n', f);
	}
	if (table_write(t, fmt, f) < 0)
		ret = error_set(e, "writing the markers: %s", strerror(errno));
	table_free(t);
	return ret;
}
