/*
 * statussnap.h - strobed's status reply (proto.h) read as numbers, and
 * the rates over the interval between two such snapshots: what 'strobe
 * status --watch' shows.  The counts are those strobed's ingest has
 * stored, and the clock strobed's own (elapsed_ns), as of the same reply.
 */
#ifndef STROBE_STATUSSNAP_H
#define STROBE_STATUSSNAP_H

#include <stdint.h>
#include "proto.h"

struct status_snap {
	int running;
	long long session;
	double elapsed;			/* s since the session's start */
	uint64_t samples, stored, lost;	/* samples: taken from the rings */
	uint64_t lag_records, lag_ns, spool_mem, spool_disk, spool_mem_max, spool_disk_max;
	uint64_t deferred_ns;		/* ingest waits for an idle CPU, so long */
	uint64_t db_bytes, db_wal_bytes;
	int have_db_bytes;
	int nr_cpus;			/* the session's; of them nr listed */
	int nr;
	long *cpu;
	uint64_t *cpu_samples, *cpu_lost;
	char *db;
	char *note;			/* stopping, blocked, removing: or NULL */
};

/* s from a status reply m (s need not be initialised; free it with
 * status_snap_free).  A strobed that sends no per-CPU counts gives
 * nr 0; one without taken= (older) samples = what it stored. */
void status_snap_take(struct status_snap *s, const struct proto_msg *m);
/* Frees what s holds and zeroes it (a zeroed s may be freed again). */
void status_snap_free(struct status_snap *s);

/* The rates of cur over the interval since prev: since the session's
 * start when prev is not the same session. */
struct status_rates {
	double dt;			/* s */
	double samples;			/* per s */
	int64_t lost;			/* in the interval */
	double *cpu_samples;		/* per CPU of cur, per s */
	int64_t *cpu_lost;
};

void status_rates_get(struct status_rates *r, const struct status_snap *prev,
		      const struct status_snap *cur);
void status_rates_free(struct status_rates *r);

#endif
