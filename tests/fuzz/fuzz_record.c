/*
 * fuzz_record - record_decode() (lib/capture/record.c) over a buffer of strobe
 * records, walked as the daemon walks a ring drain.
 * Asserts beyond "no crash": *consumed stays within the buffer and is
 * non-zero for OK and PAD; nr_counters <= STROBE_MAX_COUNTERS; and every
 * record decoded OK round-trips: record_encode() of it decodes again to
 * the same fields (callchain, registers and stack copy included),
 * consuming exactly the bytes encode wrote.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>
#include "record.h"

static void same(const struct record *a, const struct record *b)
{
	assert(a->type == b->type && a->cpu == b->cpu && a->time_ns == b->time_ns);
	if (a->type == STROBE_REC_SAMPLE) {
		assert(a->sample.tsc == b->sample.tsc && a->sample.ip == b->sample.ip);
		assert(a->sample.pid == b->sample.pid && a->sample.tid == b->sample.tid);
		assert(a->sample.flags == b->sample.flags);
		assert(a->sample.nr_counters == b->sample.nr_counters);
		for (int i = 0; i < a->sample.nr_counters; i++)
			assert(a->sample.counters[i] == b->sample.counters[i]);
		assert(a->sample.nr_ips == b->sample.nr_ips);
		assert(!a->sample.nr_ips || !memcmp(a->sample.ips, b->sample.ips,
						    a->sample.nr_ips * 8u));
		assert(a->sample.regs_abi == b->sample.regs_abi &&
		       a->sample.nr_regs == b->sample.nr_regs &&
		       a->sample.regs_mask == b->sample.regs_mask &&
		       a->sample.stack_size == b->sample.stack_size);
		assert(!a->sample.nr_regs || !memcmp(a->sample.regs, b->sample.regs,
						     a->sample.nr_regs * 8u));
		assert(!a->sample.stack_size || !memcmp(a->sample.stack, b->sample.stack,
							a->sample.stack_size));
	} else if (a->type == STROBE_REC_LOST) {
		assert(a->lost.lost == b->lost.lost);
	} else if (a->type == STROBE_REC_UNSCHED) {
		assert(a->unsched.enabled_ns == b->unsched.enabled_ns &&
		       a->unsched.running_ns == b->unsched.running_ns &&
		       a->unsched.flags == b->unsched.flags);
	} else {
		assert(a->type == STROBE_REC_CPU_OFFLINE || a->type == STROBE_REC_CPU_ONLINE);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;

	while (off < size) {
		struct record r, r2;
		size_t used = 0, used2 = 0;
		static unsigned char enc[RECORD_MAX_SIZE];
		enum record_status st = record_decode(data + off, size - off, &r, &used);

		if (st == RECORD_SHORT || st == RECORD_BAD)
			break;
		assert(used > 0 && used <= size - off);
		if (st == RECORD_OK) {
			assert(r.type == STROBE_REC_SAMPLE || r.type == STROBE_REC_LOST ||
			       r.type == STROBE_REC_UNSCHED || r.type == STROBE_REC_CPU_OFFLINE || r.type == STROBE_REC_CPU_ONLINE);
			if (r.type == STROBE_REC_SAMPLE)
				assert(r.sample.nr_counters <= STROBE_MAX_COUNTERS);
			size_t n = record_encode(&r, enc, sizeof(enc));
			assert(n > 0);
			assert(record_decode(enc, n, &r2, &used2) == RECORD_OK);
			assert(used2 == n);
			same(&r, &r2);
			/* encode must refuse a buffer one byte too small */
			assert(record_encode(&r, enc, n - 1) == 0);
		}
		off += used;
	}
	return 0;
}
