/*
 * sessevent.c - a session's counting events found by name, and the
 * union of several sessions' events (see sessevent.h).
 */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "metrics.h"
#include "sessevent.h"

int session_event_find(const struct db_session *s, const char *name)
{
	for (int i = 0; i < s->nr_events && i < STROBE_MAX_COUNTERS; i++)
		if (!strcasecmp(s->events[i].name, name))
			return i;
	return -1;
}

int session_event_metric(const struct db_session *s, const char *name)
{
	int i = session_event_find(s, name);

	for (int k = 0; i < 0 && k < s->nr_events && k < STROBE_MAX_COUNTERS; k++)
		if (metric_event_is(name, s->events[k].name))
			i = k;
	return i;
}

void session_event_set(struct db_session *s, int64_t k, const char *name)
{
	if (k < 0 || k >= STROBE_MAX_COUNTERS)
		return;
	if (s->nr_events <= k)
		s->nr_events = (int)k + 1;
	snprintf(s->events[k].name, sizeof(s->events[k].name), "%s", name);
}

int session_event_union(struct db_session *u, const char *name)
{
	for (int i = 0; i < u->nr_events; i++)
		if (!strcmp(u->events[i].name, name))
			return i;
	if (u->nr_events >= STROBE_MAX_COUNTERS)
		return -1;
	snprintf(u->events[u->nr_events].name, sizeof(u->events[0].name), "%s", name);
	return u->nr_events++;
}
