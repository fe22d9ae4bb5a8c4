/*
 * sessevent.c - a session's counting events found by name (see
 * sessevent.h).
 */
#include "config.h"
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
