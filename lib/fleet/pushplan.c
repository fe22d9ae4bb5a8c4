/*
 * pushplan.c - the plan of a session pushed in intervals (push.h,
 * doc/FLEET.md "Pushing from strobed"): the server's interval rows read
 * and checked, and where the next interval or the last part starts.
 * Pure: no I/O, for the unit tests.
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "push.h"

static int cmp_iv(const void *a, const void *b)
{
	const struct push_interval *x = a, *y = b;

	return x->k < y->k ? -1 : x->k > y->k;
}

static int same_iv(const struct push_interval *x, const struct push_interval *y)
{
	return x->k == y->k && x->first_row == y->first_row && x->last_row == y->last_row &&
	       x->first_batch == y->first_batch && x->batches == y->batches &&
	       x->batch_rows == y->batch_rows && x->samples == y->samples &&
	       x->samples_total == y->samples_total && !strcmp(x->hash, y->hash);
}

/* one line: k first_row last_row first_batch batches batch_rows samples
 * samples_total hash */
static int parse_line(const char *line, size_t len, struct push_interval *iv)
{
	char buf[256], hash[64];
	unsigned long long k, fb, nb, br, ns, nt;
	long long lo, hi;
	int used = 0;

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, line, len);
	buf[len] = 0;
	if (sscanf(buf, "%llu\t%lld\t%lld\t%llu\t%llu\t%llu\t%llu\t%llu\t%40[0-9a-f]%n", &k, &lo,
		   &hi, &fb, &nb, &br, &ns, &nt, hash, &used) != 9 || (size_t)used != len ||
	    strlen(hash) != 32 || k == 0 || k > UINT32_MAX || fb > UINT32_MAX ||
	    nb > UINT32_MAX || br == 0 || br > PUSH_BATCH_MAX)
		return -1;
	memset(iv, 0, sizeof(*iv));
	iv->k = (uint32_t)k;
	iv->first_row = lo;
	iv->last_row = hi;
	iv->first_batch = (uint32_t)fb;
	iv->batches = (uint32_t)nb;
	iv->batch_rows = (size_t)br;
	iv->samples = ns;
	iv->samples_total = nt;
	memcpy(iv->hash, hash, 33);
	return 0;
}

int push_parse_intervals(const char *text, struct push_interval **out, size_t *nout,
			 struct error *e)
{
	struct push_interval *iv = NULL;
	size_t n = 0, cap = 0, k = 0;
	const char *p = text ? text : "";

	*out = NULL;
	*nout = 0;
	while (*p) {
		size_t len = strcspn(p, "\n");

		if (n == cap)
			iv = xrealloc(iv, (cap = cap ? 2 * cap : 16) * sizeof(*iv));
		if (parse_line(p, len, &iv[n]) < 0) {
			free(iv);
			return error_set(e, "the server's interval rows are malformed: '%.60s'", p);
		}
		n++;
		p += len;
		if (*p)
			p++;
	}
	qsort(iv, n, sizeof(*iv), cmp_iv);
	/* an interval row stored twice (its INSERT sent again) is one */
	for (size_t i = 0; i < n; i++) {
		if (k > 0 && iv[k - 1].k == iv[i].k) {
			if (!same_iv(&iv[k - 1], &iv[i])) {
				free(iv);
				return error_set(e, "the server has two different rows for interval "
						 "%u", iv[i].k);
			}
			continue;
		}
		iv[k++] = iv[i];
	}
	for (size_t i = 0; i < k; i++) {
		const struct push_interval *a = i ? &iv[i - 1] : NULL, *b = &iv[i];
		const char *why = NULL;

		if (b->k != i + 1)
			why = "a missing interval";
		else if (b->last_row < b->first_row)
			why = "an empty rowid range";
		else if (!a && b->first_batch != 1)
			why = "the first interval not starting at batch 1";
		else if (a && (a->last_row == INT64_MAX || b->first_row != a->last_row + 1))
			why = "a gap between rowid ranges";
		else if (a && b->first_batch != a->first_batch + a->batches)
			why = "a gap between batch ranges";
		else if (a && b->batch_rows != a->batch_rows)
			why = "two batch sizes";
		else if (b->samples_total != (a ? a->samples_total : 0) + b->samples)
			why = "a wrong running total";
		else if ((uint64_t)b->first_batch + b->batches > UINT32_MAX)
			why = "batch numbers out of range";
		if (why) {
			free(iv);
			return error_set(e, "the server's intervals of the session are inconsistent "
					 "(%s at interval %zu): drop the session there and push it "
					 "again", why, i + 1);
		}
	}
	*out = iv;
	*nout = k;
	return 0;
}

void push_plan_next(const struct push_interval *iv, size_t n, int64_t lo, int64_t *row,
		    uint32_t *batch)
{
	if (!n) {
		*row = lo;
		*batch = 1;
		return;
	}
	*row = iv[n - 1].last_row + 1;
	*batch = iv[n - 1].first_batch + iv[n - 1].batches;
}

int push_plan_cut(const struct push_interval *iv, size_t n, int64_t lo, int64_t cut,
		  struct push_interval *out)
{
	int64_t row;
	uint32_t batch;

	push_plan_next(iv, n, lo, &row, &batch);
	if (cut < row || cut == INT64_MAX)
		return 0;
	memset(out, 0, sizeof(*out));
	out->k = (uint32_t)n + 1;
	out->first_row = row;
	out->last_row = cut;
	out->first_batch = batch;
	out->samples_total = n ? iv[n - 1].samples_total : 0;
	return 1;
}
