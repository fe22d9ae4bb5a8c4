/*
 * test_merge.c - the time merge of per-source queues (lib/capture/merge.c):
 * interleaved sources come out in global time order, equal times keep
 * queue then insertion order, nothing younger than the horizon leaves
 * before the final drain, the final drain empties everything, and a
 * record arriving after a younger one was handed out is counted as late
 * with its lateness.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "merge.h"

#define NQ 3

struct fix {
	struct merge_queue q[NQ];
	struct merge_queue *qp[NQ];
	struct merge m;
};

static void fix_init(struct fix *f)
{
	memset(f, 0, sizeof(*f));
	for (int i = 0; i < NQ; i++)
		f->qp[i] = &f->q[i];
	merge_init(&f->m, f->qp, NQ);
}

static void fix_free(struct fix *f)
{
	for (int i = 0; i < NQ; i++)
		merge_queue_free(&f->q[i]);
}

/* an entry whose payload is the 8-byte tag */
static void push(struct fix *f, int qi, uint64_t time, uint64_t tag)
{
	memcpy(merge_queue_push(&f->q[qi], time, 7, sizeof(tag)), &tag, sizeof(tag));
}

/* the next entry's tag (and time/src), or -1 */
static int64_t next(struct fix *f, uint64_t horizon, uint64_t *time, int *src)
{
	const struct merge_ent *q = merge_next(&f->m, horizon, src);
	uint64_t tag;

	if (!q)
		return -1;
	assert_int_equal(q->kind, 7);
	assert_int_equal(q->len, 8);
	memcpy(&tag, merge_payload(q), 8);
	*time = q->time;
	return (int64_t)tag;
}

static void test_interleaved(void **state)
{
	struct fix f;
	uint64_t t, prev = 0;
	int src, n = 0;
	int64_t tag;
	struct merge_stats st;

	fix_init(&f);
	/* queue i holds times i+1, i+4, i+7, ...: tags are the times */
	for (int k = 0; k < 30; k++)
		push(&f, k % NQ, k + 1, k + 1);
	while ((tag = next(&f, UINT64_MAX, &t, &src)) >= 0) {
		n++;
		assert_int_equal(tag, n);
		assert_true(t == (uint64_t)n);
		assert_int_equal(src, (n - 1) % NQ);
		assert_true(t >= prev);
		prev = t;
	}
	assert_int_equal(n, 30);
	merge_get_stats(&f.m, &st);
	assert_true(st.delivered == 30);
	assert_true(st.late == 0);
	assert_true(st.late_max_ns == 0);
	fix_free(&f);
}

static void test_equal_times_stable(void **state)
{
	struct fix f;
	uint64_t t;
	int src;

	fix_init(&f);
	push(&f, 2, 10, 5);
	push(&f, 1, 10, 3);
	push(&f, 0, 10, 1);
	push(&f, 0, 10, 2);
	push(&f, 1, 10, 4);
	push(&f, 0, 11, 6);
	/* equal times: the queue listed first, each queue in its own order */
	for (int64_t want = 1; want <= 5; want++) {
		assert_int_equal(next(&f, UINT64_MAX, &t, &src), want);
		assert_true(t == 10);
		assert_int_equal(src, want <= 2 ? 0 : want <= 4 ? 1 : 2);
	}
	assert_int_equal(next(&f, UINT64_MAX, &t, &src), 6);
	assert_int_equal(next(&f, UINT64_MAX, &t, &src), -1);
	fix_free(&f);
}

static void test_horizon(void **state)
{
	struct fix f;
	uint64_t t;
	int src;

	fix_init(&f);
	push(&f, 0, 100, 100);
	push(&f, 0, 300, 300);
	push(&f, 1, 200, 200);
	push(&f, 1, 250, 250);
	push(&f, 2, 251, 251);
	assert_int_equal(next(&f, 99, &t, &src), -1);		/* all younger */
	assert_int_equal(next(&f, 100, &t, &src), 100);	/* at the horizon: out */
	assert_int_equal(next(&f, 100, &t, &src), -1);
	assert_int_equal(next(&f, 250, &t, &src), 200);
	assert_int_equal(next(&f, 250, &t, &src), 250);
	assert_int_equal(next(&f, 250, &t, &src), -1);		/* 251 and 300 wait */
	merge_settle(&f.m);
	assert_false(merge_queue_empty(&f.q[0]));
	assert_true(merge_queue_empty(&f.q[1]));
	assert_false(merge_queue_empty(&f.q[2]));
	/* the final drain delivers everything */
	assert_int_equal(next(&f, UINT64_MAX, &t, &src), 251);
	assert_int_equal(next(&f, UINT64_MAX, &t, &src), 300);
	assert_int_equal(next(&f, UINT64_MAX, &t, &src), -1);
	for (int i = 0; i < NQ; i++)
		assert_true(merge_queue_empty(&f.q[i]));
	fix_free(&f);
}

static void test_late(void **state)
{
	struct fix f;
	struct merge_stats st;
	uint64_t t;
	int src;

	fix_init(&f);
	push(&f, 0, 1000, 1000);
	push(&f, 1, 900, 900);
	assert_int_equal(next(&f, 1500, &t, &src), 900);
	assert_int_equal(next(&f, 1500, &t, &src), 1000);
	merge_get_stats(&f.m, &st);
	assert_true(st.late == 0);
	/* a drain later: records older than 1000 reach queues 1 and 2 */
	push(&f, 1, 940, 940);		/* 60 ns late */
	push(&f, 2, 1200, 1200);
	push(&f, 2, 1300, 1300);
	assert_int_equal(next(&f, 2000, &t, &src), 940);
	merge_get_stats(&f.m, &st);
	assert_true(st.late == 1);
	assert_true(st.late_max_ns == 60);
	assert_int_equal(next(&f, 2000, &t, &src), 1200);
	push(&f, 0, 1290, 1290);	/* older than 1200? no: in order */
	assert_int_equal(next(&f, 2000, &t, &src), 1290);
	assert_int_equal(next(&f, 2000, &t, &src), 1300);
	push(&f, 0, 1000, 1001);	/* 300 late */
	push(&f, 1, 1250, 1250);	/* 50 late: the maximum stays */
	assert_int_equal(next(&f, 2000, &t, &src), 1001);
	assert_int_equal(next(&f, 2000, &t, &src), 1250);
	assert_int_equal(next(&f, 2000, &t, &src), -1);
	merge_get_stats(&f.m, &st);
	assert_true(st.delivered == 8);
	assert_true(st.late == 3);
	assert_true(st.late_max_ns == 300);
	fix_free(&f);
}

/* payloads survive the queue's compaction and growth, any length */
static void test_queue_growth(void **state)
{
	struct fix f;
	unsigned char buf[300];
	uint64_t time = 0, next_out = 0;
	int src;

	fix_init(&f);
	for (int round = 0; round < 50; round++) {
		for (int k = 0; k < 500; k++, time++) {
			uint32_t len = time % 300;
			unsigned char *p = merge_queue_push(&f.q[0], time, (uint32_t)time, len);

			memset(p, (int)(time & 0xff), len);
		}
		/* hand out all but the last 100 */
		for (;;) {
			const struct merge_ent *q = merge_next(&f.m, time - 100, &src);

			if (!q)
				break;
			assert_true(q->time == next_out);
			assert_int_equal(q->kind, (uint32_t)next_out);
			assert_int_equal(q->len, next_out % 300);
			memset(buf, (int)(next_out & 0xff), sizeof(buf));
			assert_memory_equal(merge_payload(q), buf, q->len);
			next_out++;
		}
		merge_settle(&f.m);
	}
	assert_true(next_out == time - 99);
	fix_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interleaved),
		cmocka_unit_test(test_equal_times_stable),
		cmocka_unit_test(test_horizon),
		cmocka_unit_test(test_late),
		cmocka_unit_test(test_queue_growth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
