/*
 * eventscan.h - the one reader of a session's point events: its markers
 * (USDT probe hits and 'strobe mark' texts, table markers) and its lost
 * records (ring losses, throttling, spool drops, table lost), each in time
 * order.  Report, export, plot (the time views) and push read them here,
 * so each table's columns, NULL conventions and order are written once.
 *
 * Both scans are cursors in the style of samplescan.h: open with a
 * filter, next until 0, close.  Rows are valid until the next call.
 */
#ifndef STROBE_EVENTSCAN_H
#define STROBE_EVENTSCAN_H

#include <stdint.h>
#include "db.h"

struct event_filter {
	int64_t session_id;
	int64_t time_lo, time_hi;	/* time_ns, inclusive (INT64_MIN, INT64_MAX: all) */
	int64_t limit;			/* rows at most; < 0: no limit */
	/* markers only */
	int64_t pid;			/* the marker's process; -1: any */
	const char *comm;		/* its name in the session's processes; NULL: any */
};

/* An event_filter of all of session_id's rows. */
void event_filter_all(struct event_filter *f, int64_t session_id);

/*
 * Markers in (time_ns, rowid) order, as struct db_marker (db.h): cpu -1
 * for none (a 'strobe mark'), pid and tid -1 when NULL, args NULL when
 * NULL; kind and name never NULL ("" for a NULL column).  A database
 * older than the markers table (schema 1) has none.
 */
struct marker_scan;
struct marker_scan *marker_scan_open(struct db *db, const struct event_filter *f,
				     struct error *e);
/* 1 and *m (its strings valid until the next call), 0 after the last,
 * -1 on error. */
int marker_scan_next(struct marker_scan *sc, struct db_marker *m, struct error *e);
void marker_scan_close(struct marker_scan *sc);

/* A row of lost: count records lost on cpu up to time_ns, of kind "ring",
 * "spool", "throttle" (count 0) and the others ingest writes. */
struct db_lost {
	int64_t time_ns;
	int cpu;
	uint64_t count;
	const char *kind;	/* never NULL ("" for a NULL column) */
};

/* Lost records in (time_ns, cpu, rowid) order; the filter's pid and comm
 * are ignored. */
struct lost_scan;
struct lost_scan *lost_scan_open(struct db *db, const struct event_filter *f,
				 struct error *e);
int lost_scan_next(struct lost_scan *sc, struct db_lost *l, struct error *e);
void lost_scan_close(struct lost_scan *sc);

#endif
