/*
 * fuzz_record - record_decode() (lib/capture/record.c) over a buffer of strobe
 * records, walked as the daemon walks a ring drain.
 * Asserts beyond "no crash": *consumed stays within the buffer and is
 * non-zero for OK and PAD; nr_counters <= STROBE_MAX_COUNTERS; and every
 * record decoded OK round-trips: record_encode() of it decodes again to
 * the same fields, consuming exactly the bytes encode wrote.
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
	} else if (a->type == STROBE_REC_LOST) {
		assert(a->lost.lost == b->lost.lost);
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
		unsigned char enc[512];
		enum record_status st = record_decode(data + off, size - off, &r, &used);

		if (st == RECORD_SHORT || st == RECORD_BAD)
			break;
		assert(used > 0 && used <= size - off);
		if (st == RECORD_OK) {
			assert(r.type == STROBE_REC_SAMPLE || r.type == STROBE_REC_LOST ||
			       r.type == STROBE_REC_CPU_OFFLINE || r.type == STROBE_REC_CPU_ONLINE);
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
