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
	size_t ips = r->sample.ips ? 8 * (size_t)MIN(r->sample.nr_ips, STROBE_MAX_IPS) : 0;
	size_t regs = r->sample.regs ? 8 * (size_t)r->sample.nr_regs : 0;
	size_t stack = r->sample.stack ? (size_t)r->sample.stack_size : 0;
	size_t len = ips + regs + stack;

	if (h->cap < len) {
		free(h->buf);
		h->buf = xmalloc(len);
		h->cap = len;
	}
	h->r = *r;
	if (ips) {
		memcpy(h->buf, r->sample.ips, ips);
		h->r.sample.ips = h->buf;
	}
	if (regs) {
		memcpy(h->buf + ips, r->sample.regs, regs);
		h->r.sample.regs = h->buf + ips;
	}
	if (stack) {
		memcpy(h->buf + ips + regs, r->sample.stack, stack);
		h->r.sample.stack = h->buf + ips + regs;
	}
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
