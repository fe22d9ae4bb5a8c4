/*
 * test_spool.c - the drain-to-ingest spool (lib/capture/spool.c): entries come out
 * in the order they were put, across the memory bound into disk segments
 * (several of them) and back to memory; a consumer's cap on memory sends
 * the rest to disk, and memory takes what a failing disk cannot, also in
 * the middle of a run on disk; a full spool refuses and counts;
 * the byte counts return to zero when read empty; a producer thread and a
 * consumer running together lose and reorder nothing; and what a killed
 * strobed left (put, not committed) is found by spool_orphan.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "spool.h"

#define SCRATCH_NAME "spool"
#define SCRATCH_FILES_ONLY
#include "scratch.h"

/* The file size limit at the start: the tests that lower it put it back,
 * also when they fail (fsize_restore). */
static struct rlimit fsize_saved;

static int fsize_restore(void **state)
{
	(void)state;
	return setrlimit(RLIMIT_FSIZE, &fsize_saved);
}

/* chunk i: src i % 4, len 8 + (i * 37) % 3000, every byte (i + k) & 0xff */
static size_t chunk_len(unsigned i)
{
	return 8 + (i * 37) % 3000;
}

static int put_chunk(struct spool *s, unsigned i)
{
	unsigned char buf[4096];
	size_t len = chunk_len(i), cut = len / 3;

	for (size_t k = 0; k < len; k++)
		buf[k] = (unsigned char)(i + k);
	/* in two parts, as a ring that wraps is copied */
	return spool_put(s, i % 4, 1000 + i, buf, cut, buf + cut, len - cut, 2, 1);
}

static void check_chunk(const struct spool_entry *ent, unsigned i)
{
	assert_false(ent->is_pass);
	assert_int_equal(ent->src, i % 4);
	assert_int_equal(ent->time, 1000 + i);
	assert_int_equal(ent->records, 2);
	assert_int_equal(ent->samples, 1);
	assert_int_equal(ent->len, chunk_len(i));
	for (size_t k = 0; k < ent->len; k++)
		if (ent->data[k] != (unsigned char)(i + k))
			fail_msg("chunk %u byte %zu is %u", i, k, ent->data[k]);
}

/* Put n chunks with a pass mark after every 10th, then take them all. */
static void roundtrip(struct spool *s, unsigned n)
{
	struct spool_entry ent;
	struct spool_stats st, st0;
	struct error e;
	unsigned got = 0, passes = 0;

	spool_get_stats(s, &st0);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(put_chunk(s, i), 0);
		if (i % 10 == 9)
			spool_pass(s, 5000 + i);
	}
	while (spool_take(s, &ent, &e) == 1) {
		if (ent.is_pass) {
			/* a mark comes right after the chunk it follows */
			assert_int_equal(ent.time, 5000 + got - 1);
			assert_int_equal(got % 10, 0);
			passes++;
			continue;
		}
		check_chunk(&ent, got++);
	}
	assert_int_equal(got, n);
	assert_int_equal(passes, n / 10);
	spool_get_stats(s, &st);
	assert_int_equal(st.records_in - st0.records_in, 2 * n);
	assert_int_equal(st.records_out - st0.records_out, 2 * n);
	assert_int_equal(st.samples_out - st0.samples_out, n);
	assert_int_equal(st.disk_bytes, 0);
	assert_int_equal(st.oldest_ns, 0);
}

static void test_memory_only(void **state)
{
	struct spool_limits lim = { .mem_max = 64 << 20, .disk_max = 0 };
	struct spool_stats st;
	struct error e;
	struct spool *s = spool_open(NULL, &lim, &e);

	(void)state;
	assert_non_null(s);
	roundtrip(s, 500);
	spool_get_stats(s, &st);
	assert_int_equal(st.disk_peak, 0);
	assert_int_equal(st.refused, 0);
	spool_close(s);
}

/* 64 KiB of memory, the rest (about 7.5 MB, several segments) on disk,
 * twice over: the files start over once read empty */
static void test_disk_overflow(void **state)
{
	struct spool_limits lim = { .mem_max = 64 << 10, .disk_max = 1ULL << 30 };
	struct spool_stats st;
	struct error e;
	struct spool *s = spool_open(path_of("disk"), &lim, &e);

	(void)state;
	assert_non_null(s);
	roundtrip(s, 5000);
	spool_get_stats(s, &st);
	assert_true(st.disk_peak > 7000000);
	assert_true(st.mem_peak <= 64 << 10);
	roundtrip(s, 300);
	spool_close(s);
	assert_int_equal(access(path_of("disk"), F_OK), -1);
}

/* both bounds reached: refused and counted, and what was put comes out */
/* A consumer that waits caps the memory (spool_mem_cap): with 64 MiB of
 * memory and a cap of 64 KiB, a backlog of about 7.5 MB goes to disk,
 * the memory never holds more than the cap, order and bytes kept; without
 * a disk the cap is ignored (nothing refused); cap 0 is memory again. */
static void test_mem_cap(void **state)
{
	struct spool_limits lim = { .mem_max = 64 << 20, .disk_max = 1ULL << 30 };
	struct spool_stats st;
	struct error e;
	struct spool *s = spool_open(path_of("cap"), &lim, &e);

	(void)state;
	assert_non_null(s);
	spool_mem_cap(s, 64 << 10);
	roundtrip(s, 5000);
	spool_get_stats(s, &st);
	assert_true(st.disk_peak > 7000000);
	/* chunks within the cap; pass marks are not capped (a few bytes) */
	assert_true(st.mem_peak <= (64 << 10) + 4096);
	assert_int_equal(st.refused, 0);
	spool_mem_cap(s, 0);
	roundtrip(s, 5000);
	spool_get_stats(s, &st);
	assert_true(st.mem_peak > 7000000);
	spool_close(s);

	lim.disk_max = 0;
	s = spool_open(NULL, &lim, &e);
	assert_non_null(s);
	spool_mem_cap(s, 64 << 10);
	roundtrip(s, 5000);
	spool_get_stats(s, &st);
	assert_true(st.mem_peak > 7000000);
	assert_int_equal(st.refused, 0);
	spool_close(s);
}

/*
 * Under the cap, a chunk that would start a run on a disk that cannot take
 * it goes to memory: a segment that cannot be written (a file size limit:
 * EFBIG, as ENOSPC on a full disk) or created (its directory gone).  After
 * the first failure the cap is off: one error, not one a chunk.
 */
static void test_cap_disk_fails(void **state)
{
	struct spool_limits lim = { .mem_max = 64 << 20, .disk_max = 1ULL << 30 };
	struct rlimit old, none = { 0, 0 };
	struct spool_stats st;
	struct error e;
	struct spool *s;
	char gone[160];

	(void)state;
	s = spool_open(path_of("capfsize"), &lim, &e);
	assert_non_null(s);
	spool_mem_cap(s, 64 << 10);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	none.rlim_max = old.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &none), 0);
	roundtrip(s, 5000);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	spool_get_stats(s, &st);
	assert_int_equal(st.refused, 0);
	assert_int_equal(st.disk_errors, 1);
	assert_int_equal(st.disk_peak, 0);
	assert_true(st.mem_peak > 7000000);
	spool_close(s);

	s = spool_open(path_of("capgone"), &lim, &e);
	assert_non_null(s);
	snprintf(gone, sizeof(gone), "%s", path_of("capgone.moved"));
	assert_int_equal(rename(path_of("capgone"), gone), 0);
	spool_mem_cap(s, 64 << 10);
	roundtrip(s, 5000);
	spool_get_stats(s, &st);
	assert_int_equal(st.refused, 0);
	assert_int_equal(st.disk_errors, 1);
	assert_true(st.mem_peak > 7000000);
	assert_int_equal(rename(gone, path_of("capgone")), 0);
	spool_close(s);
}

/* n tries to put the chunks from *put on: each put counted in *put, each
 * refusal in *refused. */
static void try_puts(struct spool *s, unsigned n, unsigned *put, unsigned *refused)
{
	for (unsigned i = 0; i < n; i++) {
		if (put_chunk(s, *put) == 0)
			(*put)++;
		else
			(*refused)++;
	}
}

/* Take every entry there is, chunks from *got on; the pass marks skipped. */
static void take_all(struct spool *s, unsigned *got)
{
	struct spool_entry ent;
	struct error e;
	int r;

	while ((r = spool_take(s, &ent, &e)) == 1)
		if (!ent.is_pass)
			check_chunk(&ent, (*got)++);
	assert_int_equal(r, 0);
}

/*
 * A write that fails inside a run on disk (the file size limit: EFBIG, as
 * ENOSPC) ends the run there.  Under the cap, memory takes the chunks that
 * follow: none refused, one disk error, and ingest reads the run's start
 * from disk, then the rest from memory, in order.  Without the cap (the
 * run began when the ring was full) the chunk the ring cannot hold is
 * refused and counted, a new run waits until the closed one was read, and
 * once the disk takes writes again runs work as before.
 */
static void test_disk_fails_in_run(void **state)
{
	struct spool_limits lim = { .mem_max = 64 << 20, .disk_max = 1ULL << 30 };
	struct rlimit old, none = { 0, 0 };
	struct spool_stats st;
	struct spool_entry ent;
	struct error e;
	struct spool *s;
	unsigned put = 0, got = 0, refused = 0;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	none.rlim_max = old.rlim_max;

	s = spool_open(path_of("runfails"), &lim, &e);
	assert_non_null(s);
	spool_mem_cap(s, 64 << 10);
	for (; put < 300; put++)
		assert_int_equal(put_chunk(s, put), 0);
	spool_get_stats(s, &st);
	assert_true(st.disk_bytes > 200000);	/* a run on disk, open */
	for (unsigned i = 0; i < 100; i++) {	/* into the run */
		assert_int_equal(spool_take(s, &ent, &e), 1);
		check_chunk(&ent, got++);
	}
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &none), 0);
	for (; put < 5000; put++) {
		assert_int_equal(put_chunk(s, put), 0);
		if (put % 10 == 9)
			spool_pass(s, 5000 + put);
	}
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	spool_get_stats(s, &st);
	assert_int_equal(st.refused, 0);
	assert_int_equal(st.disk_errors, 1);
	assert_true(st.mem_bytes > 7000000);
	take_all(s, &got);
	assert_int_equal(got, put);
	spool_get_stats(s, &st);
	assert_int_equal(st.disk_bytes, 0);
	assert_int_equal(st.mem_bytes, 0);
	roundtrip(s, 300);	/* and on: the cap is off */
	spool_close(s);

	/* no cap: a 16 KiB ring full, the run on disk, its write failing */
	lim.mem_max = 16 << 10;
	s = spool_open(path_of("runfails2"), &lim, &e);
	assert_non_null(s);
	put = got = 0;
	for (; put < 60; put++)
		assert_int_equal(put_chunk(s, put), 0);
	spool_get_stats(s, &st);
	assert_true(st.disk_bytes > 40000);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(spool_take(s, &ent, &e), 1);
		check_chunk(&ent, got++);
	}
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &none), 0);
	/* the ring takes what its room allows after the close, then refuses */
	try_puts(s, 20, &put, &refused);
	spool_get_stats(s, &st);
	assert_int_equal(st.refused, refused);
	assert_int_equal(st.disk_errors, 1);
	assert_true(refused > 0);
	take_all(s, &got);
	assert_int_equal(got, put);
	/* the disk still fails: the ring serves, a run cannot start */
	try_puts(s, 20, &put, &refused);
	take_all(s, &got);
	assert_int_equal(got, put);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	spool_get_stats(s, &st);
	assert_int_equal(st.refused, refused);
	/* the disk writes again: a new run takes what the ring cannot */
	for (unsigned i = 0; i < 200; i++)
		assert_int_equal(put_chunk(s, put++), 0);
	spool_get_stats(s, &st);
	assert_true(st.disk_bytes > 200000);
	take_all(s, &got);
	assert_int_equal(got, put);
	spool_close(s);
}

static void test_full(void **state)
{
	struct spool_limits lim = { .mem_max = 16 << 10, .disk_max = 32 << 10 };
	struct spool_entry ent;
	struct spool_stats st;
	struct error e;
	struct spool *s = spool_open(path_of("full"), &lim, &e);
	unsigned put = 0, refused = 0, got = 0;

	(void)state;
	assert_non_null(s);
	try_puts(s, 100, &put, &refused);
	if (!(put > 5 && refused > 40))
		fail_msg("put %u, refused %u", put, refused);
	spool_get_stats(s, &st);
	assert_int_equal(st.refused, refused);
	assert_true(st.mem_bytes <= 16 << 10 && st.disk_bytes <= 32 << 10);
	while (spool_take(s, &ent, &e) == 1)
		check_chunk(&ent, got++);
	assert_int_equal(got, put);
	/* room again */
	assert_int_equal(put_chunk(s, got), 0);
	assert_int_equal(spool_take(s, &ent, &e), 1);
	check_chunk(&ent, got);
	spool_close(s);
}

struct prod {
	struct spool *s;
	unsigned n;
	int disk_fails;		/* every 3000 chunks, the disk fails for 1000 */
};

static void *producer(void *arg)
{
	struct prod *p = arg;

	for (unsigned i = 0; i < p->n; i++) {
		if (p->disk_fails && i % 1000 == 0) {
			struct rlimit r = fsize_saved;

			if (i % 3000 == 1000)
				r.rlim_cur = 0;
			if (setrlimit(RLIMIT_FSIZE, &r) != 0)
				abort();	/* not cmocka's: another thread */
		}
		while (put_chunk(p->s, i) != 0)
			usleep(100);
		if (i % 10 == 9)
			spool_pass(p->s, 5000 + i);
	}
	return NULL;
}

/*
 * One thread puts (with a pass mark after every 10th chunk) while this one
 * takes, through memory and disk: with rings of 16 KiB and 256 KiB, runs
 * on disk start and end many times, also with a disk that fails writes
 * (runs closed early) a third of the time; nothing is lost or reordered.
 */
static void test_threads(void **state)
{
	static const struct spool_limits lims[] = {
		{ .mem_max = 256 << 10, .disk_max = 1 << 20 },
		{ .mem_max = 16 << 10, .disk_max = 1 << 20 },
		{ .mem_max = 16 << 10, .disk_max = 0 },
		{ .mem_max = 256 << 10, .disk_max = 1 << 20 },	/* the disk failing */
		{ .mem_max = 16 << 10, .disk_max = 1 << 20 },
	};
	struct spool_stats st;
	struct spool_entry ent;
	struct error e;
	struct prod p;
	pthread_t t;

	(void)state;
	for (size_t k = 0; k < sizeof(lims) / sizeof(lims[0]); k++) {
		unsigned got = 0, passes = 0, i = 0;

		p.s = spool_open(lims[k].disk_max ? path_of("threads") : NULL, &lims[k], &e);
		p.n = 20000;
		p.disk_fails = k >= 3;
		assert_non_null(p.s);
		assert_int_equal(pthread_create(&t, NULL, producer, &p), 0);
		while (got < p.n) {
			int r = spool_take(p.s, &ent, &e);

			assert_true(r >= 0);
			if (r == 0) {
				if (++i % 7 == 0)
					usleep(50);	/* a slow ingest now and then */
				continue;
			}
			if (ent.is_pass) {
				assert_int_equal(ent.time, 5000 + got - 1);
				passes++;
				continue;
			}
			check_chunk(&ent, got++);
		}
		pthread_join(t, NULL);
		assert_int_equal(fsize_restore(NULL), 0);
		while (spool_take(p.s, &ent, &e) == 1)
			assert_true(ent.is_pass);
		spool_get_stats(p.s, &st);
		if (p.disk_fails)
			assert_true(st.disk_errors > 0);
		spool_close(p.s);
		if (lims[k].disk_max)
			assert_int_equal(access(path_of("threads"), F_OK), -1);
		print_message("ring %llu, disk %llu%s: %u pass marks, %llu refused, %llu disk "
			      "errors\n", (unsigned long long)lims[k].mem_max,
			      (unsigned long long)lims[k].disk_max,
			      p.disk_fails ? " (failing)" : "", passes,
			      (unsigned long long)st.refused, (unsigned long long)st.disk_errors);
	}
}

struct lost_src {
	int cpu[8];
	uint64_t samples[8];
	int n;
};

static int on_lost(void *ctx, int cpu, uint64_t samples, struct error *e)
{
	struct lost_src *l = ctx;

	(void)e;
	assert_true(l->n < 8);
	l->cpu[l->n] = cpu;
	l->samples[l->n++] = samples;
	return 0;
}

/* a strobed killed with records put but not committed */
static void test_orphan(void **state)
{
	struct lost_src l = { .n = 0 };
	struct spool_limits lim = { .mem_max = 8 << 10, .disk_max = 1 << 20 };
	struct spool_entry ent;
	struct error e;
	struct spool *s = spool_open(path_of("orphan"), &lim, &e);
	uint64_t records, last;

	(void)state;
	assert_non_null(s);
	/* sources 0-3 are CPUs 10-13, but 3 is never named */
	for (unsigned i = 0; i < 3; i++)
		spool_source(s, i, 10 + i);
	for (unsigned i = 0; i < 40; i++)
		assert_int_equal(put_chunk(s, i), 0);
	for (unsigned i = 0; i < 10; i++)
		assert_int_equal(spool_take(s, &ent, &e), 1);
	spool_committed(s);		/* 10 stored */
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(spool_take(s, &ent, &e), 1);	/* 5 in flight */
	/* no spool_close: as after SIGKILL, the files stay */
	assert_int_equal(spool_orphan(path_of("orphan"), on_lost, &l, &records, &last, &e), 1);
	assert_int_equal(records, 2 * 30);
	assert_int_equal(last, 1000 + 39);
	/* chunks 10-39 (one sample each) by source i % 4: 7, 7, 8, 8 */
	assert_int_equal(l.n, 4);
	assert_int_equal(l.cpu[0], 10);
	assert_int_equal(l.samples[0], 7);
	assert_int_equal(l.cpu[1], 11);
	assert_int_equal(l.samples[1], 7);
	assert_int_equal(l.cpu[2], 12);
	assert_int_equal(l.samples[2], 8);
	assert_int_equal(l.cpu[3], -1);
	assert_int_equal(l.samples[3], 8);
	assert_int_equal(access(path_of("orphan"), F_OK), 0);	/* kept until stored */
	assert_int_equal(spool_remove(path_of("orphan"), &e), 0);
	assert_int_equal(access(path_of("orphan"), F_OK), -1);
	assert_int_equal(spool_orphan(path_of("orphan"), on_lost, &l, &records, &last, &e), 0);
	/* the leak of s's memory is the test's, not the spool's */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory_only),
		cmocka_unit_test(test_disk_overflow),
		cmocka_unit_test(test_mem_cap),
		cmocka_unit_test_teardown(test_cap_disk_fails, fsize_restore),
		cmocka_unit_test_teardown(test_disk_fails_in_run, fsize_restore),
		cmocka_unit_test(test_full),
		cmocka_unit_test_teardown(test_threads, fsize_restore),
		cmocka_unit_test(test_orphan),
	};

	if (getrlimit(RLIMIT_FSIZE, &fsize_saved) != 0)
		return 1;
	signal(SIGXFSZ, SIG_IGN);	/* EFBIG instead */
	return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
