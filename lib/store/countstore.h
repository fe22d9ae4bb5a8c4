/*
 * countstore.h - count sessions ('strobe count --save'): the sessions row
 * with backend 'count' and its count_values (schema 15), written by
 * strobed from the client's count-begin, count-data and count-end
 * requests, and read back by 'strobe plot'.
 *
 * The values come from any member of the strobe group: countstore_add
 * takes only values that are in range (see struct count_saved), only for
 * a count session the caller owns (or root) that is not ended, and at most
 * COUNTSTORE_MAX_ROWS per session.  A uid other than root has at most
 * COUNTSTORE_OPEN_MAX count sessions not ended at once (each may grow to
 * COUNTSTORE_MAX_ROWS): one member cannot fill the database for all.
 */
#ifndef STROBE_COUNTSTORE_H
#define STROBE_COUNTSTORE_H

#include <stdint.h>
#include <sys/types.h>
#include "db.h"

#define COUNTSTORE_MAX_ROWS	1000000		/* count_values rows per session */
#define COUNTSTORE_OPEN_MAX	8		/* not ended, per uid but root */
#define COUNTSTORE_UNIT_MAX	64		/* unit names, NUL included */

/* One count: see schema/015-counts.sql. */
struct count_saved {
	int64_t t_ns;			/* >= 0, at most 100 days */
	int idx;			/* < the session's nr_events */
	char unit[COUNTSTORE_UNIT_MAX];	/* printable, no ',' or ';' */
	double value;			/* finite, >= 0; NaN: not counted */
	double pct;			/* 0 to 100 */
};

/*
 * Insert the count session s (backend, state, sample_event and samples
 * are set here; name, owner_uid, hostname, kernel_release, nr_cpus,
 * start_ns, wall_offset_ns and the events come from the caller).  s->id
 * is set.  Refused when s->owner_uid (not root) has COUNTSTORE_OPEN_MAX
 * count sessions not ended.
 */
int countstore_begin(struct db *db, struct db_session *s, struct error *e);

/* Add v[n] to session id for uid (0: root, any session).  All or none. */
int countstore_add(struct db *db, int64_t id, uid_t uid, const struct count_saved *v, size_t n,
		   struct error *e);

/* End session id at end_ns (>= its start): no value is added after. */
int countstore_end(struct db *db, int64_t id, uid_t uid, int64_t end_ns, struct error *e);

/*
 * Session id's values summed over units, per (t_ns, event): calls
 * fn(ctx, t_ns, idx, value) in time order; not-counted values are left
 * out.
 */
int countstore_each(struct db *db, int64_t id,
		    void (*fn)(void *ctx, int64_t t_ns, int idx, double value), void *ctx,
		    struct error *e);

#endif
