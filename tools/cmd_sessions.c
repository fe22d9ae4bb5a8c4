/*
 * cmd_sessions.c - "strobe sessions": one row per recorded session of a
 * database (id, name, state, backend, wall-clock start, duration, samples,
 * lost, sampling event, counting events) as text, CSV or JSON.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cmd.h"
#include "db.h"
#include "output.h"

static const char usage_text[] =
	"usage: strobe sessions [--db PATH] [--format text|csv|json]\n"
	"\n"
	"List the sessions recorded in the database, oldest first.\n";

enum { OPT_DB = 256, OPT_FORMAT };

static const struct option long_opts[] = {
	{ "db",		required_argument, NULL, OPT_DB },
	{ "format",	required_argument, NULL, OPT_FORMAT },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* ISO 8601 local time with the UTC offset, e.g. 2024-05-01T12:34:56+02:00. */
static void iso8601(int64_t wall_ns, char *buf, size_t len)
{
	time_t t = (time_t)(wall_ns / 1000000000);
	struct tm tm;
	long off;
	size_t n;

	if (wall_ns <= 0 || !localtime_r(&t, &tm)) {
		buf[0] = 0;
		return;
	}
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	off = tm.tm_gmtoff / 60;
	snprintf(buf + n, len - n, "%c%02ld:%02ld", off < 0 ? '-' : '+',
		 labs(off) / 60, labs(off) % 60);
}

static int sessions_table(struct db *db, struct table *t, struct error *e)
{
	int c_id = table_add_col(t, "id", COL_INT);
	int c_name = table_add_col(t, "name", COL_STR);
	int c_state = table_add_col(t, "state", COL_STR);
	int c_backend = table_add_col(t, "backend", COL_STR);
	int c_start = table_add_col(t, "start", COL_STR);
	int c_dur = table_add_col(t, "duration_s", COL_FLOAT);
	int c_samples = table_add_col(t, "samples", COL_INT);
	int c_lost = table_add_col(t, "lost", COL_INT);
	int c_event = table_add_col(t, "sample_event", COL_STR);
	int c_events = table_add_col(t, "events", COL_STR);
	struct db_session *s = xmalloc(sizeof(*s));
	sqlite3_stmt *st;
	int rc, ret = 0;

	/* one snapshot: a session strobed removes meanwhile is in it or not */
	if (db_begin(db, e) < 0) {
		free(s);
		return -1;
	}
	if (sqlite3_prepare_v2(db_sqlite(db), "SELECT id FROM sessions WHERE state!='deleting' "
			       "ORDER BY id", -1, &st, NULL)) {
		free(s);
		db_rollback(db);
		return db_sql_error(db, e, "reading sessions");
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		char start[64], events[STROBE_MAX_COUNTERS * 130] = "";
		size_t row, n = 0;
		int64_t dur;

		if (db_session_get(db, sqlite3_column_int64(st, 0), s, e) < 0) {
			ret = -1;
			break;
		}
		row = table_add_row(t);
		table_set_int(t, row, c_id, s->id);
		if (s->name[0])
			table_set_str(t, row, c_name, s->name);
		table_set_str(t, row, c_state, s->state);
		table_set_str(t, row, c_backend, s->backend);
		iso8601(s->start_ns + s->wall_offset_ns, start, sizeof(start));
		if (start[0])
			table_set_str(t, row, c_start, start);
		dur = s->duration_ns > 0 ? s->duration_ns :
		      s->end_ns > s->start_ns ? s->end_ns - s->start_ns : -1;
		if (dur >= 0)	/* a running session has no duration yet */
			table_set_float(t, row, c_dur, dur / 1e9);
		table_set_int(t, row, c_samples, s->samples);
		table_set_int(t, row, c_lost, s->lost);
		table_set_str(t, row, c_event, s->sample_event);
		for (int i = 0; i < s->nr_events && n < sizeof(events); i++)
			n += snprintf(events + n, sizeof(events) - n, "%s%s",
				      i ? "," : "", s->events[i].name);
		table_set_str(t, row, c_events, events);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = db_sql_error(db, e, "reading sessions");
	sqlite3_finalize(st);
	db_rollback(db);	/* ends the read transaction */
	free(s);
	return ret;
}

int cmd_sessions(int argc, char **argv)
{
	enum output_format fmt = OUTPUT_TEXT;
	const char *dbpath = NULL;
	struct error err = { "" };
	struct table *t;
	struct db *db;
	char buf[32];
	int c, ret = 0;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_DB:
			dbpath = optarg;
			break;
		case OPT_FORMAT:
			if (output_parse_format(optarg, &fmt) < 0)
				return cmd_usage_error("sessions", "bad --format '%s': use text, csv or json",
						   optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cmd_usage_error("sessions", "option %s needs a value: see "
					       "'strobe sessions --help'", argv[optind - 1]);
		default:
			return cmd_usage_error("sessions", "unknown option '%s': see 'strobe sessions --help'",
					   cmd_bad_option(argc, argv, buf, sizeof(buf)));
		}
	}
	if (optind < argc)
		return cmd_usage_error("sessions", "unexpected argument '%s': see "
				       "'strobe sessions --help'", argv[optind]);

	if (!dbpath)
		dbpath = cmd_default_db();
	db = db_open(dbpath, DB_READ, &err);
	if (!db) {
		fprintf(stderr, "strobe sessions: %s\n", err.msg);
		return 1;
	}
	t = table_new();
	table_add_meta(t, "db", db_path(db), 0);
	if (sessions_table(db, t, &err) < 0) {
		fprintf(stderr, "strobe sessions: %s\n", err.msg);
		ret = 1;
	} else if (table_write(t, fmt, stdout) < 0 || fflush(stdout) == EOF ||
		   ferror(stdout)) {
		fprintf(stderr, "strobe sessions: writing the list: %s\n", strerror(errno));
		ret = 1;
	}
	table_free(t);
	db_close(db);
	return ret;
}
