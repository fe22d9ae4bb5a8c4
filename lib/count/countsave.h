/*
 * countsave.h - 'strobe count --save': the counts of a run as the text of
 * the count-data request's values= field (lib/base/proto.h), and its
 * strict parsing in strobed (the input of any strobe group member).
 *
 * values= is entries separated by ';', each "T_NS,IDX,UNIT,VALUE,PCT":
 * the interval's end in ns after the count's start, the event's index,
 * the unit ('' all, 'CPU3', 'S0-D0-C1', 'S0', 'comm-tid'), the scaled
 * count ('-' when not counted) and the percentage running.  An event is
 * sent in count-begin's evN= fields as "TYPE:CONFIG:CONFIG1:CONFIG2:NAME".
 */
#ifndef STROBE_COUNTSAVE_H
#define STROBE_COUNTSAVE_H

#include <stddef.h>
#include "countstore.h"
#include "events.h"
#include "util.h"

#define COUNTSAVE_MAX_BYTES	60000	/* values= per request, under PROTO_MAX_LINE */

/*
 * Append v[from..] to out until it would pass max_bytes; returns the
 * index after the last one appended (from when none fits: an entry is
 * never longer than 200 bytes).  A unit's ',' ';' and control characters
 * become '?'.
 */
size_t countsave_encode(const struct count_saved *v, size_t n, size_t from, size_t max_bytes,
			struct sbuf *out);

/* Parse values= (at most max entries; each checked as countstore does,
 * but for the event count): *out malloc'd. */
int countsave_decode(const char *s, struct count_saved **out, size_t *n, size_t max,
		     struct error *e);

/* An event as count-begin's evN= field, and back (the name printable,
 * under EVENT_NAME_MAX, no control character). */
void countsave_event_encode(const struct event_desc *ev, struct sbuf *out);
int countsave_event_decode(const char *s, char *name, size_t len, uint32_t *type,
			   uint64_t *config, uint64_t *config1, uint64_t *config2, struct error *e);

#endif
