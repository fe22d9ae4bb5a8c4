/*
 * test_maps.c - process address spaces rebuilt from side-band: mapping
 * replacement and splitting as mmap(MAP_FIXED) does, fork copies, exec
 * clears, fork over a pid still known starts afresh, the address space
 * lives until the last thread exits, dropping the mappings of forgotten
 * binaries, many processes in the hash table, and many threads in a
 * process's thread set.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "maps.h"

static void check_map(const struct proc *p, uint64_t ip, uint64_t start, uint64_t end,
		      uint64_t pgoff, int64_t id)
{
	const struct map *m = proc_map_find(p, ip);

	assert_non_null(m);
	assert_true(m->start == start);
	assert_true(m->end == end);
	assert_true(m->pgoff == pgoff);
	assert_int_equal(m->binary_id, id);
}

static void check_sorted(const struct proc *p)
{
	for (size_t i = 1; i < p->nr_maps; i++)
		assert_true(p->maps[i - 1].end <= p->maps[i].start);
}

static void test_find(void **state)
{
	struct proc_table *t = proc_table_new();
	struct proc *p = proc_get(t, 100, 1);

	proc_map_add(p, 0x3000, 0x1000, 0x2000, 3);
	proc_map_add(p, 0x1000, 0x1000, 0, 1);
	proc_map_add(p, 0x5000, 0x2000, 0x1000, 5);
	check_sorted(p);
	assert_int_equal(p->nr_maps, 3);
	check_map(p, 0x1000, 0x1000, 0x2000, 0, 1);
	check_map(p, 0x1fff, 0x1000, 0x2000, 0, 1);
	assert_null(proc_map_find(p, 0x2000));
	assert_null(proc_map_find(p, 0xfff));
	check_map(p, 0x3abc, 0x3000, 0x4000, 0x2000, 3);
	check_map(p, 0x6fff, 0x5000, 0x7000, 0x1000, 5);
	assert_null(proc_map_find(p, 0x7000));
	proc_table_free(t);
}

static void test_overlap_split(void **state)
{
	struct proc_table *t = proc_table_new();
	struct proc *p = proc_get(t, 1, 1);

	proc_map_add(p, 0x10000, 0x10000, 0x100000, 1);	/* [0x10000,0x20000) */
	/* punch a hole in the middle: the old mapping is split in two */
	proc_map_add(p, 0x14000, 0x2000, 0, 2);
	check_sorted(p);
	assert_int_equal(p->nr_maps, 3);
	check_map(p, 0x13fff, 0x10000, 0x14000, 0x100000, 1);
	check_map(p, 0x14000, 0x14000, 0x16000, 0, 2);
	/* the right piece keeps its file offset */
	check_map(p, 0x16000, 0x16000, 0x20000, 0x106000, 1);
	/* cover the right end and beyond: the right piece is trimmed */
	proc_map_add(p, 0x1f000, 0x3000, 0x5000, 3);
	check_sorted(p);
	check_map(p, 0x1efff, 0x16000, 0x1f000, 0x106000, 1);
	check_map(p, 0x21000, 0x1f000, 0x22000, 0x5000, 3);
	/* cover everything: one mapping remains */
	proc_map_add(p, 0x0, 0x100000, 0, 9);
	assert_int_equal(p->nr_maps, 1);
	check_map(p, 0x15000, 0, 0x100000, 0, 9);
	/* an empty or wrapping range changes nothing */
	proc_map_add(p, 0x1000, 0, 0, 7);
	proc_map_add(p, UINT64_MAX - 10, 100, 0, 7);
	assert_int_equal(p->nr_maps, 1);
	proc_table_free(t);
}

static void test_fork_exec(void **state)
{
	struct proc_table *t = proc_table_new();
	struct proc *parent = proc_get(t, 10, 1), *child;

	parent->comm_id = 77;
	proc_map_add(parent, 0x1000, 0x1000, 0, 1);
	proc_map_add(parent, 0x4000, 0x1000, 0, 2);
	child = proc_fork(t, 10, 11);
	parent = proc_get(t, 10, 0);	/* the table may have moved nothing, but be safe */
	assert_int_equal(child->comm_id, 77);
	assert_int_equal(child->nr_maps, 2);
	check_map(child, 0x4100, 0x4000, 0x5000, 0, 2);
	/* the copy is independent */
	proc_map_add(child, 0x4000, 0x1000, 0, 3);
	check_map(parent, 0x4100, 0x4000, 0x5000, 0, 2);
	proc_exec(child);
	assert_null(proc_map_find(child, 0x1000));
	check_map(parent, 0x1000, 0x1000, 0x2000, 0, 1);
	/* fork from an unknown parent gives an empty process */
	child = proc_fork(t, 999, 12);
	assert_int_equal(child->nr_maps, 0);
	proc_table_free(t);
}

static void test_many(void **state)
{
	struct proc_table *t = proc_table_new();

	for (uint32_t pid = 1; pid <= 50000; pid++) {
		struct proc *p = proc_get(t, pid, 1);

		proc_map_add(p, pid * 0x1000ULL, 0x1000, 0, pid);
	}
	for (uint32_t pid = 1; pid <= 50000; pid += 2)
		proc_remove(t, pid);
	for (uint32_t pid = 1; pid <= 50000; pid++) {
		struct proc *p = proc_get(t, pid, 0);

		if (pid % 2) {
			assert_null(p);
		} else {
			assert_non_null(p);
			check_map(p, pid * 0x1000ULL, pid * 0x1000ULL, pid * 0x1000ULL + 0x1000, 0, pid);
		}
	}
	/* pids come back after removal (pid reuse) */
	assert_int_equal(proc_get(t, 3, 1)->nr_maps, 0);
	proc_table_free(t);
}

static void test_reuse_threads(void **state)
{
	struct proc_table *t = proc_table_new();
	struct proc *p = proc_get(t, 100, 1), *c;

	p->comm_id = 7;
	proc_map_add(p, 0x1000, 0x1000, 0, 1);
	c = proc_get(t, 200, 1);
	c->comm_id = 9;
	proc_map_add(c, 0x5000, 0x1000, 0, 5);
	/* 200's exit was lost; the pid comes back, parent unknown */
	c = proc_fork(t, 999, 200);
	assert_int_equal(c->nr_maps, 0);
	assert_int_equal(c->comm_id, 0);
	/* and again, forked from 100 */
	proc_map_add(c, 0x5000, 0x1000, 0, 5);
	c = proc_fork(t, 100, 200);
	assert_int_equal(c->nr_maps, 1);
	check_map(c, 0x1000, 0x1000, 0x2000, 0, 1);
	assert_null(proc_map_find(c, 0x5000));
	assert_int_equal(c->comm_id, 7);

	/* two threads besides the leader (one heard of twice: from /proc
	 * and from its FORK); the leader exits first; a thread never heard
	 * of (exited before it was seen) changes nothing */
	proc_thread_add(p, 101);
	proc_thread_add(p, 102);
	proc_thread_add(p, 101);
	assert_int_equal(proc_thread_exit(p, 100), 0);
	assert_int_equal(proc_thread_exit(p, 101), 0);
	assert_int_equal(proc_thread_exit(p, 103), 0);
	assert_int_equal(proc_thread_exit(p, 102), 1);
	/* exec makes it single-threaded again */
	proc_thread_add(p, 101);
	proc_exec(p);
	assert_int_equal(proc_thread_exit(p, 100), 1);

	/* forget binaries 5 and above */
	proc_map_add(c, 0x5000, 0x1000, 0, 5);
	proc_map_add(c, 0x7000, 0x1000, 0, 6);
	proc_map_add(c, 0x9000, 0x1000, 0, 2);
	proc_map_drop_binaries(c, 5);
	assert_int_equal(c->nr_maps, 2);
	check_map(c, 0x1000, 0x1000, 0x2000, 0, 1);
	check_map(c, 0x9000, 0x9000, 0xa000, 0, 2);
	proc_table_free(t);
}

/* The thread set against a plain array of flags, as the old linear scan
 * kept it: 20,000 threads in one process, added twice (fork record and
 * samples), a pseudo-random half exiting and coming back (tids reused),
 * tids 0 and UINT32_MAX (not real, but not to be lost either), growth,
 * removed slots reused, shrinking after most threads exit; the process
 * ends exactly when its last thread does. */
#define NTHREADS 20000
static void test_threads_many(void **state)
{
	struct proc_table *t = proc_table_new();
	struct proc *p = proc_get(t, 7, 1);
	static unsigned char live[NTHREADS + 8];
	uint32_t rng = 12345, base = 1000;
	size_t nlive = 0, peak_cap;

	for (uint32_t i = 0; i < NTHREADS; i++) {
		proc_thread_add(p, base + i);
		proc_thread_seen(p, base + i);
		live[i] = 1;
		nlive++;
	}
	proc_thread_add(p, 0);
	proc_thread_add(p, UINT32_MAX);
	proc_thread_seen(p, 0);
	assert_int_equal(p->nr_tids, NTHREADS + 2);
	assert_true(p->cap_tids >= 2 * p->nr_tids);
	assert_true(p->cap_tids <= PROC_TIDS_MAX_CAP);
	assert_int_equal(proc_thread_exit(p, 7), 0);	/* the leader */
	/* churn: exits and new threads under the same tids */
	for (int round = 0; round < 200000; round++) {
		uint32_t i;

		rng = rng * 1103515245 + 12345;
		i = (rng >> 8) % NTHREADS;
		if (live[i]) {
			assert_int_equal(proc_thread_exit(p, base + i), 0);
			live[i] = 0;
			nlive--;
		} else {
			proc_thread_seen(p, base + i);
			live[i] = 1;
			nlive++;
		}
		assert_int_equal(p->nr_tids, nlive + 2);
		assert_true((p->nr_tids + p->gone_tids) * 2 <= p->cap_tids);
	}
	/* a thread exiting twice, one never heard of: no change */
	assert_int_equal(proc_thread_exit(p, base + NTHREADS + 5), 0);
	assert_int_equal(p->nr_tids, nlive + 2);
	assert_int_equal(proc_thread_exit(p, 0), 0);
	assert_int_equal(proc_thread_exit(p, 0), 0);
	assert_int_equal(p->nr_tids, nlive + 1);
	/* all but one exit: the set shrinks */
	peak_cap = p->cap_tids;
	for (uint32_t i = 0; i < NTHREADS; i++)
		if (live[i] && i != 4242)
			assert_int_equal(proc_thread_exit(p, base + i), 0);
	if (!live[4242])
		proc_thread_add(p, base + 4242);
	assert_int_equal(p->nr_tids, 2);
	assert_true(p->cap_tids < peak_cap);
	assert_true(p->cap_tids <= 64);
	/* every one of them is still known: re-adding changes nothing */
	proc_thread_add(p, base + 4242);
	proc_thread_add(p, UINT32_MAX);
	assert_int_equal(p->nr_tids, 2);
	assert_int_equal(proc_thread_exit(p, UINT32_MAX), 0);
	assert_int_equal(proc_thread_exit(p, base + 4242), 1);
	assert_int_equal(p->nr_tids, 0);
	assert_int_equal(p->cap_tids, 0);
	proc_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_overlap_split),
		cmocka_unit_test(test_fork_exec),
		cmocka_unit_test(test_reuse_threads),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_threads_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
