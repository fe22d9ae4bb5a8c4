/*
 * test_record.c - decoding and encoding of the one record format
 * (kernel/uapi/strobe.h): round trips, truncation, padding, and every
 * malformed header the daemon must refuse rather than trust.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "record.h"

static struct record sample(int nr)
{
	struct record r;

	memset(&r, 0, sizeof(r));
	r.type = STROBE_REC_SAMPLE;
	r.cpu = 3;
	r.time_ns = 123456789012ULL;
	r.sample.tsc = 0xfedcba9876543210ULL;
	r.sample.ip = 0xffffffff81000000ULL;
	r.sample.period = 0x123456789aULL;	/* more than 32 bits */
	r.sample.pid = 42;
	r.sample.tid = 43;
	r.sample.flags = STROBE_SAMPLE_KERNEL;
	r.sample.nr_counters = nr;
	for (int i = 0; i < nr; i++)
		r.sample.counters[i] = 1000ULL * (i + 1) + i;
	return r;
}

static void test_sample_round_trip(void **state)
{
	for (int nr = 0; nr <= STROBE_MAX_COUNTERS; nr++) {
		struct record in = sample(nr), out;
		unsigned char buf[256];
		size_t n = record_encode(&in, buf, sizeof(buf)), used = 0;

		assert_int_equal(n, STROBE_SAMPLE_SIZE(nr));
		assert_int_equal(n % 8, 0);
		assert_int_equal(record_decode(buf, n, &out, &used), RECORD_OK);
		assert_int_equal(used, n);
		assert_int_equal(out.type, STROBE_REC_SAMPLE);
		assert_int_equal(out.cpu, 3);
		assert_true(out.time_ns == in.time_ns);
		assert_true(out.sample.tsc == in.sample.tsc);
		assert_true(out.sample.ip == in.sample.ip);
		assert_true(out.sample.period == 0x123456789aULL);
		assert_int_equal(out.sample.pid, 42);
		assert_int_equal(out.sample.tid, 43);
		assert_int_equal(out.sample.flags, STROBE_SAMPLE_KERNEL);
		assert_int_equal(out.sample.nr_counters, nr);
		assert_memory_equal(out.sample.counters, in.sample.counters, nr * 8);
	}
}

static void test_lost_round_trip(void **state)
{
	struct record in, out;
	unsigned char buf[64];
	size_t used, n;

	memset(&in, 0, sizeof(in));
	in.type = STROBE_REC_LOST;
	in.cpu = 1;
	in.time_ns = 99;
	in.lost.lost = 12345;
	n = record_encode(&in, buf, sizeof(buf));
	assert_int_equal(n, sizeof(struct strobe_lost));
	assert_int_equal(record_decode(buf, n, &out, &used), RECORD_OK);
	assert_int_equal(out.type, STROBE_REC_LOST);
	assert_int_equal(out.cpu, 1);
	assert_true(out.lost.lost == 12345);
	assert_true(out.time_ns == 99);
}

/* A group not counting: its figures round-trip; running above enabled,
 * an interval reaching before time 0, unknown flags or another size are bad. */
static void test_unsched_round_trip(void **state)
{
	struct record in, out;
	unsigned char buf[64];
	struct strobe_unsched *u = (struct strobe_unsched *)buf;
	size_t used, n;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.type = STROBE_REC_UNSCHED;
	in.cpu = 1;
	in.time_ns = 5000000000ULL;
	in.unsched.enabled_ns = 2000000000ULL;
	in.unsched.running_ns = 500000000ULL;
	in.unsched.flags = STROBE_UNSCHED_ERROR;
	n = record_encode(&in, buf, sizeof(buf));
	assert_int_equal(n, sizeof(struct strobe_unsched));
	assert_int_equal(n % 8, 0);
	assert_int_equal(record_encode(&in, buf, n - 1), 0);
	assert_int_equal(record_decode(buf, n, &out, &used), RECORD_OK);
	assert_int_equal(used, n);
	assert_int_equal(out.type, STROBE_REC_UNSCHED);
	assert_int_equal(out.cpu, 1);
	assert_true(out.time_ns == in.time_ns);
	assert_true(out.unsched.enabled_ns == in.unsched.enabled_ns);
	assert_true(out.unsched.running_ns == in.unsched.running_ns);
	assert_int_equal(out.unsched.flags, STROBE_UNSCHED_ERROR);

	u->running_ns = u->enabled_ns + 1;
	assert_int_equal(record_decode(buf, n, &out, &used), RECORD_BAD);
	record_encode(&in, buf, sizeof(buf));
	u->enabled_ns = u->time_ns + 1;
	assert_int_equal(record_decode(buf, n, &out, &used), RECORD_BAD);
	record_encode(&in, buf, sizeof(buf));
	u->flags = 2;
	assert_int_equal(record_decode(buf, n, &out, &used), RECORD_BAD);
	record_encode(&in, buf, sizeof(buf));
	u->hdr.size = n + 8;
	assert_int_equal(record_decode(buf, n + 8, &out, &used), RECORD_BAD);
}

/* Driver hotplug records: header and time, nothing else, exact size. */
static void test_cpu_rec_round_trip(void **state)
{
	static const uint16_t types[] = { STROBE_REC_CPU_OFFLINE, STROBE_REC_CPU_ONLINE };

	for (size_t t = 0; t < 2; t++) {
		struct record in, out;
		unsigned char buf[64];
		struct strobe_cpu_rec *c = (struct strobe_cpu_rec *)buf;
		size_t used = 0, n;

		memset(&in, 0, sizeof(in));
		in.type = types[t];
		in.cpu = 7;
		in.time_ns = 5000000000ULL + t;
		n = record_encode(&in, buf, sizeof(buf));
		assert_int_equal(n, sizeof(struct strobe_cpu_rec));
		assert_int_equal(n, 16);
		assert_int_equal(c->hdr.type, types[t]);
		assert_int_equal(record_decode(buf, n, &out, &used), RECORD_OK);
		assert_int_equal(used, n);
		assert_int_equal(out.type, types[t]);
		assert_int_equal(out.cpu, 7);
		assert_true(out.time_ns == in.time_ns);
		/* truncated, then one byte short to encode */
		for (size_t len = 0; len < n; len++)
			assert_int_equal(record_decode(buf, len, &out, &used), RECORD_SHORT);
		assert_int_equal(record_encode(&in, buf, n - 1), 0);
		/* any other size is malformed */
		c->hdr.size = 24;
		assert_int_equal(record_decode(buf, sizeof(buf), &out, &used), RECORD_BAD);
		c->hdr.size = 8;
		assert_int_equal(record_decode(buf, sizeof(buf), &out, &used), RECORD_BAD);
	}
}

/* A stream of records decodes one after another. */
static void test_stream(void **state)
{
	unsigned char buf[1024];
	size_t off = 0, used;
	struct record r, out;
	int count = 0;

	for (int i = 0; i < 5; i++) {
		r = sample(i);
		r.sample.pid = i;
		off += record_encode(&r, buf + off, sizeof(buf) - off);
	}
	for (size_t pos = 0; pos < off; pos += used) {
		assert_int_equal(record_decode(buf + pos, off - pos, &out, &used), RECORD_OK);
		assert_int_equal(out.sample.pid, count);
		count++;
	}
	assert_int_equal(count, 5);
}

static void test_short(void **state)
{
	struct record in = sample(4), out;
	unsigned char buf[256];
	size_t n = record_encode(&in, buf, sizeof(buf)), used;

	for (size_t len = 0; len < n; len++)
		assert_int_equal(record_decode(buf, len, &out, &used), RECORD_SHORT);
	assert_int_equal(record_encode(&in, buf, n - 1), 0);
}

static void test_pad(void **state)
{
	struct strobe_rec_header h = { STROBE_REC_PAD, 64, 0 };
	unsigned char buf[64] = { 0 };
	struct record out;
	size_t used = 0;

	memcpy(buf, &h, sizeof(h));
	assert_int_equal(record_decode(buf, sizeof(buf), &out, &used), RECORD_PAD);
	assert_int_equal(used, 64);
}

/* A pad longer than the bytes available (found by tests/fuzz/fuzz_record):
 * skipping it would move the ring's tail past its head. */
static void test_pad_too_long(void **state)
{
	struct strobe_rec_header h = { STROBE_REC_PAD, 72, 0 };
	unsigned char buf[64] = { 0 };
	struct record out;
	size_t used = 0;

	memcpy(buf, &h, sizeof(h));
	assert_int_equal(record_decode(buf, sizeof(buf), &out, &used), RECORD_BAD);
	assert_int_equal(record_decode(buf, 10, &out, &used), RECORD_BAD);
	assert_int_equal(used, 0);
}

static void test_malformed(void **state)
{
	struct record in = sample(2), out;
	unsigned char buf[256];
	struct strobe_sample *s = (struct strobe_sample *)buf;
	size_t n, used;

	n = record_encode(&in, buf, sizeof(buf));
	/* size not a multiple of 8 */
	s->hdr.size = n - 4;
	assert_int_equal(record_decode(buf, n, &out, &used), RECORD_BAD);
	/* size smaller than a header */
	s->hdr.size = 0;
	assert_int_equal(record_decode(buf, n, &out, &used), RECORD_BAD);
	/* size disagreeing with the counter count */
	s->hdr.size = n + 8;
	assert_int_equal(record_decode(buf, sizeof(buf), &out, &used), RECORD_BAD);
	/* too many counters */
	s->hdr.size = n;
	s->nr_counters = STROBE_MAX_COUNTERS + 1;
	assert_int_equal(record_decode(buf, sizeof(buf), &out, &used), RECORD_BAD);
	/* unknown type */
	s->nr_counters = 2;
	s->hdr.type = 77;
	assert_int_equal(record_decode(buf, n, &out, &used), RECORD_BAD);
	/* a lost record of the wrong size */
	s->hdr.type = STROBE_REC_LOST;
	assert_int_equal(record_decode(buf, n, &out, &used), RECORD_BAD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample_round_trip),
		cmocka_unit_test(test_lost_round_trip),
		cmocka_unit_test(test_cpu_rec_round_trip),
		cmocka_unit_test(test_unsched_round_trip),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_short),
		cmocka_unit_test(test_pad),
		cmocka_unit_test(test_pad_too_long),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
