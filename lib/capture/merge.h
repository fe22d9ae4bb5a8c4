/*
 * merge.h - the time-ordered merge of several record queues (one per
 * ring: a CPU's perf ring, a CPU's driver ring) up to a horizon.
 *
 * Each queue holds entries (struct merge_ent, then len payload bytes,
 * 8-aligned) appended in its source's time order.  merge_next() hands out
 * the oldest head entry of all queues whose time is at most the horizon;
 * equal times go to the queue listed first, and within a queue entries
 * keep their order.  A drain with horizon UINT64_MAX delivers everything.
 *
 * A record that reaches its queue after the merge already handed out a
 * younger one (it was written more than the horizon late) cannot be put
 * in order any more: it is still handed out, and counted in
 * merge_stats.late with the lateness (how much older it is than the
 * youngest entry handed out before it) in late_max_ns.
 *
 * No global state; the merge does not allocate.  merge_queue_push()
 * grows its queue when needed (amortised, as the queue is reused).
 */
#ifndef STROBE_MERGE_H
#define STROBE_MERGE_H

#include <stddef.h>
#include <stdint.h>

/* An entry's header; its payload (len bytes) follows, 8-aligned. */
struct merge_ent {
	uint64_t time;
	uint32_t kind;		/* the caller's tag */
	uint32_t len;
};

/* Entries of one source, in time order: [head, tail) of buf. */
struct merge_queue {
	unsigned char *buf;
	size_t head, tail, cap;
};

struct merge_stats {
	uint64_t delivered;	/* entries handed out */
	uint64_t late;		/* of them, older than one handed out before */
	uint64_t late_max_ns;	/* the largest such lateness */
};

struct merge {
	struct merge_queue **queues;	/* not owned */
	int nr;
	uint64_t last_time;		/* youngest time handed out */
	struct merge_stats stats;
};

/* Append an entry with len payload bytes; returns the payload to fill.
 * Pointers to entries of this queue handed out before are invalidated. */
void *merge_queue_push(struct merge_queue *q, uint64_t time, uint32_t kind, uint32_t len);

/* 1 if q has no entry left. */
int merge_queue_empty(const struct merge_queue *q);

/* Free q's buffer; q is then empty and reusable. */
void merge_queue_free(struct merge_queue *q);

/* Merge the nr queues (nr >= 0); stats start at zero. */
void merge_init(struct merge *m, struct merge_queue **queues, int nr);

/*
 * Take the oldest head entry with time <= horizon: returns it (valid
 * until the next push on its queue) and its queue's index in *src, or
 * NULL when no queue has one.
 */
const struct merge_ent *merge_next(struct merge *m, uint64_t horizon, int *src);

/* The entry's payload. */
static inline const void *merge_payload(const struct merge_ent *q)
{
	return q + 1;
}

/* After a drain: reclaim the space of queues that are empty. */
void merge_settle(struct merge *m);

void merge_get_stats(const struct merge *m, struct merge_stats *st);

#endif
