/*
 * ubatch.c - the samples held for a batched unwind (see ubatch.h): deep
 * copies of their records, buffers reused from batch to batch.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ubatch.h"
#include "uworker.h"
#include "util.h"

struct held {
	struct record r;
	unsigned char *buf;	/* ips, regs, stack */
	size_t cap;
};

struct ubatch {
	struct held h[UWORKER_BATCH];
	size_t nr;
};

struct ubatch *ubatch_new(void)
{
	return xcalloc(1, sizeof(struct ubatch));
}

void ubatch_free(struct ubatch *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < UWORKER_BATCH; i++)
		free(q->h[i].buf);
	free(q);
}

void ubatch_put(struct ubatch *q, const struct record *r)
{
	struct held *h = &q->h[q->nr++];	/* nr < UWORKER_BATCH: uworker_add */
	size_t len = record_tail_size(r);

	if (h->cap < len) {
		free(h->buf);
		h->buf = xmalloc(len);
		h->cap = len;
	}
	record_head_copy(&h->r, r);	/* r may be cut short: record.h */
	record_tail_copy(r, h->buf);
	record_tail_point(&h->r, h->buf);
}

size_t ubatch_nr(const struct ubatch *q)
{
	return q->nr;
}

const struct record *ubatch_get(const struct ubatch *q, size_t i)
{
	return &q->h[i].r;
}

void ubatch_clear(struct ubatch *q)
{
	q->nr = 0;
}
