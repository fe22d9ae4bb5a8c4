/*
 * merge.c - time-ordered merge of per-source queues up to a horizon,
 * counting records that arrive too late to be put in order (merge.h).
 */
#include <stdlib.h>
#include <string.h>
#include "merge.h"
#include "util.h"

#define ENT_SIZE(len) (sizeof(struct merge_ent) + (((size_t)(len) + 7) & ~(size_t)7))

void *merge_queue_push(struct merge_queue *r, uint64_t time, uint32_t kind, uint32_t len)
{
	size_t need = ENT_SIZE(len);
	struct merge_ent *q;

	if (r->tail + need > r->cap) {
		/* compact consumed space first, then grow */
		if (r->head) {
			memmove(r->buf, r->buf + r->head, r->tail - r->head);
			r->tail -= r->head;
			r->head = 0;
		}
		if (r->tail + need > r->cap) {
			r->cap = MAX(r->cap * 2, r->tail + need + 65536);
			r->buf = xrealloc(r->buf, r->cap);
		}
	}
	q = (struct merge_ent *)(r->buf + r->tail);
	q->time = time;
	q->kind = kind;
	q->len = len;
	r->tail += need;
	return q + 1;
}

int merge_queue_empty(const struct merge_queue *q)
{
	return q->head == q->tail;
}

void merge_queue_free(struct merge_queue *q)
{
	free(q->buf);
	memset(q, 0, sizeof(*q));
}

void merge_init(struct merge *m, struct merge_queue **queues, int nr)
{
	memset(m, 0, sizeof(*m));
	m->queues = queues;
	m->nr = nr;
}

const struct merge_ent *merge_next(struct merge *m, uint64_t horizon, int *src)
{
	const struct merge_ent *best = NULL;
	int bi = -1;

	for (int i = 0; i < m->nr; i++) {
		const struct merge_queue *r = m->queues[i];
		const struct merge_ent *q;

		if (r->head == r->tail)
			continue;
		q = (const struct merge_ent *)(r->buf + r->head);
		if (q->time > horizon)
			continue;
		if (!best || q->time < best->time) {
			best = q;
			bi = i;
		}
	}
	if (!best)
		return NULL;
	m->queues[bi]->head += ENT_SIZE(best->len);
	m->stats.delivered++;
	if (best->time < m->last_time) {
		m->stats.late++;
		m->stats.late_max_ns = MAX(m->stats.late_max_ns, m->last_time - best->time);
	} else {
		m->last_time = best->time;
	}
	*src = bi;
	return best;
}

void merge_settle(struct merge *m)
{
	for (int i = 0; i < m->nr; i++) {
		struct merge_queue *q = m->queues[i];

		if (q->head == q->tail)
			q->head = q->tail = 0;
	}
}

void merge_get_stats(const struct merge *m, struct merge_stats *st)
{
	*st = m->stats;
}
