/*
 * sessevent.h - a session's counting events found by name: the one
 * lookup of struct db_session's events[] that report's derived metrics
 * (ipc, miss rates), the -M catalogue metrics of report and plot, and
 * plot's series use.
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

#endif
