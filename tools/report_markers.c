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
#include "eventscan.h"
#include "output.h"
#include "report.h"
#include "report_markers.h"

int report_markers(struct db *db, const struct report_opts *o, enum output_format fmt,
		   FILE *f, struct error *e)
{
	enum { C_TIME, C_KIND, C_NAME, C_PID, C_TID, C_CPU, C_ARGS };
	struct db_session s;
	struct table *t;
	struct event_filter ef;
	struct marker_scan *sc;
	struct db_marker m;
	char buf[64];
	int rc, ret = 0;

	if (db_session_get(db, o->session, &s, e) < 0)
		return -1;
	event_filter_all(&ef, s.id);
	ef.pid = o->pid;
	ef.comm = o->comm;
	if (o->has_from)
		ef.time_lo = s.start_ns + o->from_ns;
	if (o->has_to)
		ef.time_hi = s.start_ns + o->to_ns;
	if (o->limit)
		ef.limit = (int64_t)o->limit;
	sc = marker_scan_open(db, &ef, e);
	if (!sc)
		return -1;

	t = table_new();
	/* text: microseconds; CSV and JSON: the exact nanosecond as a number */
	table_add_seconds_col(t, "time_s", fmt);
	table_add_col(t, "kind", COL_STR);
	table_add_col(t, "name", COL_STR);
	table_add_col(t, "pid", COL_INT);
	table_add_col(t, "tid", COL_INT);
	table_add_col(t, "cpu", COL_INT);
	table_add_col(t, "args", COL_STR);
	snprintf(buf, sizeof(buf), "%" PRId64, s.id);
	table_add_meta(t, "session", buf, 1);
	while ((rc = marker_scan_next(sc, &m, e)) == 1) {
		size_t r = table_add_row(t);
		int64_t rel = (int64_t)m.time_ns - s.start_ns;

		table_set_seconds(t, r, C_TIME, rel / 1e9, 6, fmt);
		table_set_str(t, r, C_KIND, m.kind);
		table_set_str(t, r, C_NAME, m.name);
		if (m.pid >= 0)
			table_set_int(t, r, C_PID, m.pid);
		if (m.tid >= 0)
			table_set_int(t, r, C_TID, m.tid);
		if (m.cpu >= 0)
			table_set_int(t, r, C_CPU, m.cpu);
		if (m.args)
			table_set_str(t, r, C_ARGS, m.args);
	}
	marker_scan_close(sc);
	if (rc < 0) {
		table_free(t);
		return -1;
	}
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
