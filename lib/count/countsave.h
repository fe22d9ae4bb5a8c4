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
 * The client side keeps the rows of each reading and sends them
 * (countsave_keep, countsave_send).
 */
#ifndef STROBE_COUNTSAVE_H
#define STROBE_COUNTSAVE_H

#include <stddef.h>
#include "countfmt.h"
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

/* The rows kept for --save: every row of every interval (or of the run). */
struct countsave_rows {
	struct count_saved *v;
	size_t n, cap;
};

/* Keep rows[n] of the reading ending t seconds after the start (a
 * metric-only row and an unsupported event's are left out; a clock's
 * count is kept in ns). */
void countsave_keep(struct countsave_rows *sv, enum count_aggr aggr, double t,
		    const struct count_row *rows, size_t n);

/*
 * Send the kept rows to the strobed on sock as count session name (cs: its
 * events, at most STROBE_MAX_COUNTERS; start_ns and elapsed: the counting's
 * start and length): count-begin, count-data of up to COUNTSAVE_MAX_BYTES
 * each, count-end.  *id is the session's.  Errors name the socket.
 */
int countsave_send(const char *sock, const char *name, const struct counter_set *cs,
		   const struct countsave_rows *sv, uint64_t start_ns, double elapsed, int64_t *id,
		   struct error *e);

#endif
