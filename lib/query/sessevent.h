/*
 * sessevent.h - a session's counting events found by name: the one
 * lookup of struct db_session's events[] that report's derived metrics
 * (ipc, miss rates), the -M catalogue metrics of report and plot, and
 * plot's series use; and the one union of several sessions' events that
 * the fleet's report, plot and export build as they read the sessions'
 * events back (their column of c0..cN by name).
 */
#ifndef STROBE_SESSEVENT_H
#define STROBE_SESSEVENT_H

#include "db.h"

/* The index (0 .. nr_events - 1, below STROBE_MAX_COUNTERS) of s's
 * counting event named name, compared without case as -e names are; -1
 * when s counted no such event. */
int session_event_find(const struct db_session *s, const char *name);

/* The same, else the first event of s that is name under another of the
 * catalogue's spellings (metrics.h: metric_event_is(), e.g. a metric's
 * "cycles" recorded as "cpu-cycles"); -1 when none is. */
int session_event_metric(const struct db_session *s, const char *name);

/* Names s's event k (0 .. STROBE_MAX_COUNTERS - 1; other k are ignored)
 * name, nr_events growing to cover k: a session's events read back one
 * (column, name) row at a time, in any order. */
void session_event_set(struct db_session *s, int64_t k, const char *name);

/* The index in u, the union of several sessions' events in the order
 * they first appear, of the event named name, compared exactly (as
 * recorded: one name is one column of the union); appended to u when u
 * has none yet.  -1 when u has none and is full (STROBE_MAX_COUNTERS
 * events), u unchanged.  Only the names of u's events are set. */
int session_event_union(struct db_session *u, const char *name);

#endif
