/*
 * reagg.c - schema 2's aggregates, samples_by_loc and samples_by_time,
 * summed from the sample rows push reads and written as its batches
 * (reagg.h, doc/FLEET.md).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "pushgen.h"
#include "reagg.h"
#include "sampleblk.h"
#include "strobe.h"

/* Keys without padding (otable.h). */
struct agg_sums {
	int64_t n, period, c[STROBE_MAX_COUNTERS];
};

struct agg_loc {
	int64_t day, binary_id, offset, pid, comm_id, flags;
	struct agg_sums x;
	const char *key;		/* binary_key: the resolver's */
};
#define AGG_LOC_KEY	(6 * sizeof(int64_t))

struct agg_time {
	int64_t day, bucket_ns, cpu, pid, binary_id;
	struct agg_sums x;
};
#define AGG_TIME_KEY	(5 * sizeof(int64_t))

void reagg_init(struct reagg *r)
{
	otable_init(&r->by_loc, sizeof(struct agg_loc), AGG_LOC_KEY, 1024);
	otable_init(&r->by_time, sizeof(struct agg_time), AGG_TIME_KEY, 1024);
}

void reagg_clear(struct reagg *r)
{
	otable_clear(&r->by_loc);
	otable_clear(&r->by_time);
}

void reagg_free(struct reagg *r)
{
	otable_free(&r->by_loc);
	otable_free(&r->by_time);
}

int64_t push_bucket_ns(int64_t t)
{
	int64_t r = t % PUSH_BUCKET_NS;

	return t - (r < 0 ? r + PUSH_BUCKET_NS : r);
}

static void agg_sums_add(struct agg_sums *a, const int64_t *v)
{
	a->n++;
	a->period += v[SB_PERIOD];
	for (int i = 0; i < STROBE_MAX_COUNTERS; i++)
		a->c[i] += v[SB_C0 + i];
}

void reagg_add(struct reagg *r, int64_t day, int64_t start_ns, int64_t binary_id,
	       uint64_t offset, const char *key, const int64_t *v, int64_t comm)
{
	struct agg_loc kl, *al;
	struct agg_time kt, *at;
	int64_t t = v[SB_TIME_NS];
	int added;

	memset(&kl, 0, sizeof(kl));
	kl.day = day;
	kl.binary_id = binary_id;
	kl.offset = (int64_t)offset;
	kl.pid = v[SB_PID];
	kl.comm_id = comm;
	kl.flags = v[SB_FLAGS];
	al = otable_get(&r->by_loc, &kl, &added);
	al->key = key;
	agg_sums_add(&al->x, v);
	memset(&kt, 0, sizeof(kt));
	kt.day = day;
	kt.bucket_ns = push_bucket_ns(t - start_ns);
	kt.cpu = v[SB_CPU];
	kt.pid = v[SB_PID];
	kt.binary_id = binary_id;
	at = otable_get(&r->by_time, &kt, &added);
	agg_sums_add(&at->x, v);
}

static int cmp_i64s(const int64_t *a, const int64_t *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static int cmp_agg_loc(const void *a, const void *b)
{
	return cmp_i64s(*(const int64_t *const *)a, *(const int64_t *const *)b, 6);
}

static int cmp_agg_time(const void *a, const void *b)
{
	return cmp_i64s(*(const int64_t *const *)a, *(const int64_t *const *)b, 5);
}

static void agg_sums_put(struct sbuf *b, const struct agg_sums *a)
{
	push_tsv_i64(b, a->n, '\t');
	push_tsv_i64(b, a->period, '\t');
	for (int i = 0; i < STROBE_MAX_COUNTERS; i++)
		push_tsv_i64(b, a->c[i], i < STROBE_MAX_COUNTERS - 1 ? '\t' : '\n');
}

/* The rows of t into x, in the order of their keys (cmp): each of the
 * day its key starts with, its columns written by put. */
static int put_sorted(struct otable *t, int (*cmp)(const void *, const void *),
		      struct push_table *x, char *const *comms,
		      void (*put)(struct sbuf *b, const void *entry, char *const *comms),
		      struct error *e)
{
	void **v = xmalloc((t->nr + 1) * sizeof(*v));
	size_t n = 0;
	int ret = -1;

	for (void *p = NULL; (p = otable_next(t, p));)
		v[n++] = p;
	qsort(v, n, sizeof(*v), cmp);
	for (size_t i = 0; i < n; i++) {
		if (push_table_row(x, *(const int64_t *)v[i], e) < 0)
			goto out;
		put(&x->rows, v[i], comms);
	}
	ret = push_table_end(x, e);
out:
	free(v);
	return ret;
}

static void put_loc(struct sbuf *b, const void *entry, char *const *comms)
{
	const struct agg_loc *a = entry;

	push_tsv_i64(b, a->binary_id, '\t');
	push_tsv_escape(b, a->key);
	sbuf_add(b, "\t", 1);
	push_tsv_u64(b, (uint64_t)a->offset, '\t');
	push_tsv_i64(b, a->pid, '\t');
	push_tsv_escape(b, a->comm_id < 0 ? "" : comms[a->comm_id]);
	sbuf_add(b, "\t", 1);
	push_tsv_i64(b, a->flags, '\t');
	agg_sums_put(b, &a->x);
}

static void put_time(struct sbuf *b, const void *entry, char *const *comms)
{
	const struct agg_time *a = entry;

	push_tsv_i64(b, a->bucket_ns, '\t');
	push_tsv_i64(b, a->cpu, '\t');
	push_tsv_i64(b, a->pid, '\t');
	push_tsv_i64(b, a->binary_id, '\t');
	agg_sums_put(b, &a->x);
}

int reagg_put_by_loc(struct reagg *r, struct push_table *x, char *const *comms,
		     struct error *e)
{
	return put_sorted(&r->by_loc, cmp_agg_loc, x, comms, put_loc, e);
}

int reagg_put_by_time(struct reagg *r, struct push_table *x, struct error *e)
{
	return put_sorted(&r->by_time, cmp_agg_time, x, NULL, put_time, e);
}
