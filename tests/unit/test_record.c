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

/* ABI 4: a callchain and a user stack after the counters round-trip, the
 * stack padded to 8 bytes; every size that does not add up is refused. */
static void test_stacks_round_trip(void **state)
{
	uint64_t ips[5] = { (uint64_t)-128, 0xffffffff81001234ULL, (uint64_t)-512,
			    0x401000, 0x401234 };
	uint64_t regs[3] = { 0x7ffc0000, 0x7ffc1000, 0x401000 };
	unsigned char stack[13], buf[512];
	struct record in = sample(2), out;
	size_t n, used;

	for (size_t i = 0; i < sizeof(stack); i++)
		stack[i] = (unsigned char)(0xa0 + i);
	in.sample.flags |= STROBE_SAMPLE_CALLCHAIN | STROBE_SAMPLE_USTACK;
	in.sample.nr_ips = 5;
	in.sample.ips = (const unsigned char *)ips;
	in.sample.regs_abi = 2;
	in.sample.regs_mask = (1ULL << 6) | (1ULL << 7) | (1ULL << 8);
	in.sample.nr_regs = 3;
	in.sample.regs = (const unsigned char *)regs;
	in.sample.stack_size = sizeof(stack);
	in.sample.stack = stack;
	n = record_size(&in);
	assert_int_equal(n, STROBE_SAMPLE_SIZE(2) + 5 * 8 + sizeof(struct strobe_ustack) + 3 * 8 + 16);
	assert_int_equal(record_encode(&in, buf, sizeof(buf)), n);
	assert_int_equal(record_encode(&in, buf, n - 1), 0);
	assert_int_equal(record_decode(buf, n, &out, &used), RECORD_OK);
	assert_int_equal(used, n);
	assert_int_equal(out.sample.nr_ips, 5);
	assert_memory_equal(out.sample.ips, ips, sizeof(ips));
	assert_int_equal(out.sample.regs_abi, 2);
	assert_int_equal(out.sample.nr_regs, 3);
	assert_true(out.sample.regs_mask == in.sample.regs_mask);
	assert_memory_equal(out.sample.regs, regs, sizeof(regs));
	assert_int_equal(out.sample.stack_size, sizeof(stack));
	assert_memory_equal(out.sample.stack, stack, sizeof(stack));
	assert_memory_equal(out.sample.counters, in.sample.counters, 2 * 8);
	for (size_t i = sizeof(stack); i < 16; i++)	/* the padding */
		assert_int_equal(buf[n - 16 + i], 0);

	/* a callchain alone, and one of no entry */
	in.sample.flags &= ~STROBE_SAMPLE_USTACK;
	n = record_encode(&in, buf, sizeof(buf));
	assert_int_equal(n, STROBE_SAMPLE_SIZE(2) + 5 * 8);
	assert_int_equal(record_decode(buf, n, &out, &used), RECORD_OK);
	assert_null(out.sample.regs);
	in.sample.nr_ips = 0;
	n = record_encode(&in, buf, sizeof(buf));
	assert_int_equal(record_decode(buf, n, &out, &used), RECORD_OK);
	assert_int_equal(out.sample.nr_ips, 0);

	/* too many entries, registers that do not match their mask */
	in.sample.nr_ips = STROBE_MAX_IPS + 1;
	assert_int_equal(record_size(&in), 0);
	in.sample.nr_ips = 5;
	in.sample.flags |= STROBE_SAMPLE_USTACK;
	in.sample.nr_regs = 2;
	assert_int_equal(record_size(&in), 0);
	in.sample.nr_regs = 3;
	/* larger than a record may be */
	in.sample.stack_size = RECORD_MAX_SIZE;
	assert_int_equal(record_size(&in), 0);
}

/* Stack fields that lie about their sizes are refused, never read past. */
static void test_stacks_malformed(void **state)
{
	uint64_t ips[2] = { (uint64_t)-512, 0x401000 };
	uint64_t regs[1] = { 0x7ffc0000 };
	unsigned char stack[8] = { 0 }, buf[512], bad[512];
	struct record in = sample(1), out;
	struct strobe_sample s;
	struct strobe_ustack u;
	size_t n, used, uoff = STROBE_SAMPLE_SIZE(1) + 2 * 8;

	in.sample.flags |= STROBE_SAMPLE_CALLCHAIN | STROBE_SAMPLE_USTACK;
	in.sample.nr_ips = 2;
	in.sample.ips = (const unsigned char *)ips;
	in.sample.regs_abi = 2;
	in.sample.regs_mask = 1ULL << 7;
	in.sample.nr_regs = 1;
	in.sample.regs = (const unsigned char *)regs;
	in.sample.stack_size = 8;
	in.sample.stack = stack;
	n = record_encode(&in, buf, sizeof(buf));
	assert_true(n > 0);

	/* nr_ips past the record, or set without the flag */
	memcpy(bad, buf, n);
	memcpy(&s, bad, sizeof(s));
	s.nr_ips = 60;
	memcpy(bad, &s, sizeof(s));
	assert_int_equal(record_decode(bad, n, &out, &used), RECORD_BAD);
	memcpy(bad, buf, n);
	memcpy(&s, bad, sizeof(s));
	s.flags &= ~(STROBE_SAMPLE_CALLCHAIN | STROBE_SAMPLE_USTACK);
	memcpy(bad, &s, sizeof(s));
	assert_int_equal(record_decode(bad, n, &out, &used), RECORD_BAD);
	/* a stack longer than the record, a mask of more registers */
	memcpy(bad, buf, n);
	memcpy(&u, bad + uoff, sizeof(u));
	u.stack_size = 4096;
	memcpy(bad + uoff, &u, sizeof(u));
	assert_int_equal(record_decode(bad, n, &out, &used), RECORD_BAD);
	memcpy(bad, buf, n);
	memcpy(&u, bad + uoff, sizeof(u));
	u.regs_mask = 3;
	memcpy(bad + uoff, &u, sizeof(u));
	assert_int_equal(record_decode(bad, n, &out, &used), RECORD_BAD);
	/* no user state with a stack */
	memcpy(bad, buf, n);
	memcpy(&u, bad + uoff, sizeof(u));
	u.abi = 0;
	memcpy(bad + uoff, &u, sizeof(u));
	assert_int_equal(record_decode(bad, n, &out, &used), RECORD_BAD);
	/* the flag without the stack's header: the record ends too soon */
	memcpy(bad, buf, n);
	memcpy(&s, bad, sizeof(s));
	s.hdr.size = uoff;
	memcpy(bad, &s, sizeof(s));
	assert_int_equal(record_decode(bad, uoff, &out, &used), RECORD_BAD);
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

/* A decoded sample moves as its struct with its variable parts after it
 * (as the backend's queues hold it): pointed at again, it reads the same
 * as the record it was decoded from, whose buffer may be gone. */
static void test_tail_move(void **state)
{
	uint64_t ips[3] = { (uint64_t)-512, 0x401000, 0x401234 };
	uint64_t regs[2] = { 0x7ffc0000, 0x7ffc1000 };
	unsigned char stack[13], buf[512], moved[512];
	struct record in = sample(3), out, copy;
	size_t n, used, tail;

	for (size_t i = 0; i < sizeof(stack); i++)
		stack[i] = (unsigned char)(0x10 + i);
	in.sample.flags |= STROBE_SAMPLE_CALLCHAIN | STROBE_SAMPLE_USTACK;
	in.sample.nr_ips = 3;
	in.sample.ips = (const unsigned char *)ips;
	in.sample.regs_abi = 2;
	in.sample.regs_mask = 3;
	in.sample.nr_regs = 2;
	in.sample.regs = (const unsigned char *)regs;
	in.sample.stack_size = sizeof(stack);
	in.sample.stack = stack;
	in.sample.cgroup = 0x1234;
	n = record_encode(&in, buf, sizeof(buf));
	assert_int_equal(record_decode(buf, n, &out, &used), RECORD_OK);
	out.sample.cgroup = in.sample.cgroup;
	tail = record_tail_size(&out);
	assert_int_equal(tail, 3 * 8 + 2 * 8 + sizeof(stack));
	memcpy(moved, &out, sizeof(out));
	record_tail_copy(&out, moved + sizeof(out));
	memset(buf, 0xee, sizeof(buf));		/* the decoded buffer is gone */
	memcpy(&copy, moved, sizeof(copy));
	record_tail_point(&copy, moved + sizeof(copy));
	assert_true(copy.sample.cgroup == 0x1234);
	assert_int_equal(copy.sample.nr_ips, 3);
	assert_memory_equal(copy.sample.ips, ips, sizeof(ips));
	assert_int_equal(copy.sample.nr_regs, 2);
	assert_memory_equal(copy.sample.regs, regs, sizeof(regs));
	assert_int_equal(copy.sample.stack_size, sizeof(stack));
	assert_memory_equal(copy.sample.stack, stack, sizeof(stack));
	assert_memory_equal(copy.sample.counters, in.sample.counters, 3 * 8);

	/* none: no bytes, no pointers */
	in = sample(1);
	assert_int_equal(record_tail_size(&in), 0);
	record_tail_point(&in, moved);
	assert_null(in.sample.ips);
	assert_null(in.sample.regs);
	assert_null(in.sample.stack);
	in.type = STROBE_REC_LOST;
	assert_int_equal(record_tail_size(&in), 0);
}

/* The fixed-size records are written to the byte as the kernel writes
 * them (the same struct, zeroed, filled): every byte of buf, reserved
 * ones zero, none past the record; record_size agrees; a type that is
 * none of them encodes to nothing. */
static void test_fixed_bytes(void **state)
{
	struct strobe_lost l;
	struct strobe_unsched u;
	struct strobe_cpu_rec c;
	struct record in;
	unsigned char buf[64];

	(void)state;
	memset(&in, 0, sizeof(in));
	in.type = STROBE_REC_LOST;
	in.cpu = 5;
	in.time_ns = 77;
	in.lost.lost = 3;
	memset(&l, 0, sizeof(l));
	l.hdr.type = STROBE_REC_LOST;
	l.hdr.size = sizeof(l);
	l.hdr.cpu = 5;
	l.time_ns = 77;
	l.lost = 3;
	memset(buf, 0xa5, sizeof(buf));
	assert_int_equal(record_size(&in), sizeof(l));
	assert_int_equal(record_encode(&in, buf, sizeof(buf)), sizeof(l));
	assert_memory_equal(buf, &l, sizeof(l));
	assert_int_equal(buf[sizeof(l)], 0xa5);

	in.type = STROBE_REC_UNSCHED;
	in.unsched.enabled_ns = 60;
	in.unsched.running_ns = 50;
	in.unsched.flags = STROBE_UNSCHED_ERROR;
	memset(&u, 0, sizeof(u));
	u.hdr.type = STROBE_REC_UNSCHED;
	u.hdr.size = sizeof(u);
	u.hdr.cpu = 5;
	u.time_ns = 77;
	u.enabled_ns = 60;
	u.running_ns = 50;
	u.flags = STROBE_UNSCHED_ERROR;
	memset(buf, 0xa5, sizeof(buf));
	assert_int_equal(record_size(&in), sizeof(u));
	assert_int_equal(record_encode(&in, buf, sizeof(buf)), sizeof(u));
	assert_memory_equal(buf, &u, sizeof(u));
	assert_int_equal(buf[sizeof(u)], 0xa5);

	in.type = STROBE_REC_CPU_ONLINE;
	memset(&c, 0, sizeof(c));
	c.hdr.type = STROBE_REC_CPU_ONLINE;
	c.hdr.size = sizeof(c);
	c.hdr.cpu = 5;
	c.time_ns = 77;
	memset(buf, 0xa5, sizeof(buf));
	assert_int_equal(record_size(&in), sizeof(c));
	assert_int_equal(record_encode(&in, buf, sizeof(buf)), sizeof(c));
	assert_memory_equal(buf, &c, sizeof(c));
	assert_int_equal(buf[sizeof(c)], 0xa5);

	in.type = STROBE_REC_PAD;
	assert_int_equal(record_size(&in), 0);
	assert_int_equal(record_encode(&in, buf, sizeof(buf)), 0);
	in.type = 77;
	assert_int_equal(record_size(&in), 0);
	assert_int_equal(record_encode(&in, buf, sizeof(buf)), 0);
}

/* A sample's reserved bytes are written 0 whatever buf held before, and
 * nr_ips only with a callchain. */
static void test_sample_reserved(void **state)
{
	struct record in = sample(2);
	unsigned char buf[256];
	struct strobe_sample s;
	size_t n;

	(void)state;
	in.sample.nr_ips = 3;	/* no STROBE_SAMPLE_CALLCHAIN: not written */
	memset(buf, 0xa5, sizeof(buf));
	n = record_encode(&in, buf, sizeof(buf));
	assert_int_equal(n, STROBE_SAMPLE_SIZE(2));
	memcpy(&s, buf, sizeof(s));
	assert_int_equal(s.reserved0, 0);
	assert_int_equal(s.reserved1, 0);
	assert_int_equal(s.nr_ips, 0);
	assert_int_equal(s.hdr.size, n);
	assert_int_equal(s.hdr.cpu, 3);
	assert_int_equal(buf[n], 0xa5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample_round_trip),
		cmocka_unit_test(test_stacks_round_trip),
		cmocka_unit_test(test_stacks_malformed),
		cmocka_unit_test(test_lost_round_trip),
		cmocka_unit_test(test_cpu_rec_round_trip),
		cmocka_unit_test(test_unsched_round_trip),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_short),
		cmocka_unit_test(test_pad),
		cmocka_unit_test(test_pad_too_long),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_tail_move),
		cmocka_unit_test(test_fixed_bytes),
		cmocka_unit_test(test_sample_reserved),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
