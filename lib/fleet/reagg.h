/*
 * reagg.h - schema 2's aggregates of a session's samples, summed by push
 * from the sample rows it reads (push.h): per location (samples_by_loc)
 * and per 100 ms (samples_by_time), each within one UTC day.
 */
#ifndef STROBE_REAGG_H
#define STROBE_REAGG_H

#include <stdint.h>
#include "otable.h"
#include "util.h"

struct push_table;

struct reagg {
	struct otable by_loc;		/* samples_by_loc's rows */
	struct otable by_time;		/* samples_by_time's rows */
};

void reagg_init(struct reagg *r);
void reagg_clear(struct reagg *r);
void reagg_free(struct reagg *r);

/* Add a sample to the sums: v its values (sampleblk.h's SB_*), day its
 * UTC day, at offset of binary_id, whose binary key is key (kept as a
 * pointer); comm its comms.id, -1 for none; start_ns the session's start
 * (the 100 ms buckets count from it: push_bucket_ns()). */
void reagg_add(struct reagg *r, int64_t day, int64_t start_ns, int64_t binary_id,
	       uint64_t offset, const char *key, const int64_t *v, int64_t comm);

/* The rows of the sums into x, sorted by their keys: the same rows in the
 * same order on each pass of a push, so the same batches and hash.
 * comms: the names by comms.id of those given to reagg_add().  0 or -1
 * with e set. */
#define REAGG_SUM_COLS	"n, period, c0, c1, c2, c3, c4, c5, c6, c7"
#define REAGG_LOC_COLS	"binary_id, binary_key, offset, pid, comm, flags, " REAGG_SUM_COLS
#define REAGG_TIME_COLS	"bucket_ns, cpu, pid, binary_id, " REAGG_SUM_COLS
int reagg_put_by_loc(struct reagg *r, struct push_table *x, char *const *comms,
		     struct error *e);
int reagg_put_by_time(struct reagg *r, struct push_table *x, struct error *e);

#endif
