/*
 * fuzz_merge - the time merge (lib/capture/merge.c) driven by input bytes: each
 * op pushes an entry (queue, time step, payload length) or drains up to a
 * horizon, or settles.  A shadow FIFO per queue holds what was pushed.
 * Asserts beyond "no crash": every entry handed out is its queue's oldest
 * (same time, kind and payload bytes as pushed, nothing lost or
 * duplicated); it is the oldest eligible head of all queues (ties to the
 * lower index) and not above the horizon; delivery times never decrease
 * except for entries counted late, and stats.late / late_max_ns count
 * exactly those; a final drain with horizon UINT64_MAX empties all queues.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "merge.h"

/* The checks below get no coverage instrumentation (clang): their
 * branches are the harness's, not lib/capture/merge.c's, and tracing their
 * comparisons (every payload byte) took a third of the time. */
#if defined(__clang__)
#define NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define NO_COVERAGE
#endif

#define NQ 4
#define MAXE 4096

struct shadow { uint64_t time; uint32_t kind, len; };
static struct shadow sh[NQ][MAXE];
static size_t sh_head[NQ], sh_tail[NQ];

static uint64_t last, late, late_max, delivered;

NO_COVERAGE static void check(struct merge *m, const struct merge_ent *e, int src, uint64_t horizon)
{
	assert(src >= 0 && src < NQ);
	assert(sh_head[src] < sh_tail[src]);
	const struct shadow *s = &sh[src][sh_head[src]++];
	assert(e->time == s->time && e->kind == s->kind && e->len == s->len);
	assert(e->time <= horizon);
	const unsigned char *p = merge_payload(e);
	for (uint32_t i = 0; i < e->len; i++)
		assert(p[i] == (unsigned char)(s->kind + i));
	/* no other queue had an older eligible head (nor an equal one before src) */
	for (int q = 0; q < NQ; q++) {
		if (q == src || sh_head[q] == sh_tail[q] - 0 || sh_head[q] >= sh_tail[q])
			continue;
		uint64_t t = sh[q][sh_head[q]].time;
		if (t > horizon)
			continue;
		assert(t > e->time || (t == e->time && q > src));
	}
	delivered++;
	if (e->time < last) {
		late++;
		if (last - e->time > late_max)
			late_max = last - e->time;
	} else {
		last = e->time;
	}
	struct merge_stats st;
	merge_get_stats(m, &st);
	assert(st.delivered == delivered && st.late == late && st.late_max_ns == late_max);
}

NO_COVERAGE static void drain(struct merge *m, uint64_t horizon)
{
	const struct merge_ent *e;
	int src;

	while ((e = merge_next(m, horizon, &src)))
		check(m, e, src, horizon);
	/* nothing eligible is left behind */
	for (int q = 0; q < NQ; q++)
		assert(sh_head[q] == sh_tail[q] || sh[q][sh_head[q]].time > horizon);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct merge_queue qs[NQ] = { 0 }, *qp[NQ];
	struct merge m;
	uint64_t qtime[NQ] = { 0 };

	for (int q = 0; q < NQ; q++)
		qp[q] = &qs[q];
	memset(sh_head, 0, sizeof(sh_head));
	memset(sh_tail, 0, sizeof(sh_tail));
	last = late = late_max = delivered = 0;
	merge_init(&m, qp, NQ);

	for (size_t i = 0; i + 3 <= size; i += 3) {
		uint8_t op = data[i], a = data[i + 1], b = data[i + 2];
		int q = op & 3;

		switch (op >> 6) {
		case 0: case 1: {	/* push: time steps forward in its queue, a bit back now and then */
			if (sh_tail[q] == MAXE)
				break;
			uint64_t t = qtime[q] + a;
			if ((op & 0x3c) == 0x3c)	/* a huge time */
				t = UINT64_MAX - b;
			qtime[q] = t;
			uint32_t len = b & 0x1f, kind = (uint32_t)i;
			unsigned char *p = merge_queue_push(qs + q, t, kind, len);
			assert(p);
			for (uint32_t j = 0; j < len; j++)
				p[j] = (unsigned char)(kind + j);
			sh[q][sh_tail[q]++] = (struct shadow){ t, kind, len };
			break;
		}
		case 2: {	/* drain up to a horizon near the times pushed */
			uint64_t h = qtime[(op >> 2) & 3];
			h = (op & 0x20) ? h - (h < a ? h : a) : h + a;
			drain(&m, h);
			break;
		}
		case 3:
			merge_settle(&m);
			for (int k = 0; k < NQ; k++)
				assert(!merge_queue_empty(qs + k) == (sh_head[k] != sh_tail[k]));
			break;
		}
	}
	drain(&m, UINT64_MAX);
	for (int q = 0; q < NQ; q++) {
		assert(merge_queue_empty(qs + q));
		merge_queue_free(qs + q);
	}
	return 0;
}
