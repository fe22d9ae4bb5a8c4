/*
 * fuzz_perfrec - perf record decoding (lib/capture/perfrec.c, perfrec.h).
 * Input: byte 0 picks a sample_type, byte 1 a read_format (both from
 * tables of combinations the daemon uses or could see), byte 2 the user
 * register mask; bytes 3..10 a ring head and 11..18 a tail, and the rest
 * is the ring (rounded down to a power of two) and the record stream.
 * Asserts beyond "no crash": perfrec_ring_next() hands out a record whose
 * header size is >= the header and <= head - tail, lying wholly in the
 * ring or in tmp; perfrec_decode() of it (and of the stream read
 * straight) never returns OK with pointers outside the record, and a
 * group read of OK samples stays in the record (perfrec_read_values).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "perfrec.h"

static const uint64_t sample_types[] = {
	PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ,
	PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
	PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		PERF_SAMPLE_CPU | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
	PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
		PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
		PERF_SAMPLE_READ | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
	PERF_SAMPLE_TIME,
	0,
	PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_READ,
	PERF_SAMPLE_TID | PERF_SAMPLE_STACK_USER,
};
static const uint64_t read_formats[] = {
	PERF_FORMAT_GROUP | PERF_FORMAT_ID,
	PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
		PERF_FORMAT_TOTAL_TIME_RUNNING,
	PERF_FORMAT_ID,
	PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED,
	0,
	PERF_FORMAT_GROUP,
#ifdef PERF_FORMAT_LOST
	PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST,
	PERF_FORMAT_ID | PERF_FORMAT_LOST | PERF_FORMAT_TOTAL_TIME_RUNNING,
#endif
};
#define N(a) (sizeof(a) / sizeof((a)[0]))

static unsigned char tmp[PERFREC_MAX_SIZE];

static void in(const void *p, size_t n, const unsigned char *rec, size_t len)
{
	if (!p)
		return;
	assert((const unsigned char *)p >= rec && n <= len &&
	       (const unsigned char *)p + n <= rec + len);
}

static void decode(const struct perfrec_format *f, const unsigned char *rec, size_t len)
{
	struct perfrec r;
	int st = perfrec_decode(f, rec, len, &r);

	assert(st == PERFREC_OK || st == PERFREC_SKIP || st == PERFREC_BAD);
	if (st != PERFREC_OK)
		return;
	assert(r.size <= len);
	len = r.size;
	switch (r.type) {
	case PERF_RECORD_SAMPLE: {
		const struct perfrec_sample *s = &r.sample;
		uint64_t ids[3] = { 1, 2, 3 }, vals[3];
		if (s->values) {
			uint64_t n = f->read_format & PERF_FORMAT_GROUP ? s->nr_values : 1;
			assert(n <= len);
			in(s->values, n * f->read_entry, rec, len);
		}
		if (s->regs)
			in(s->regs, 8 * (size_t)__builtin_popcountll(f->regs_user), rec, len);
		if (s->stack) {
			in(s->stack, s->stack_size, rec, len);
			assert(s->stack_dyn_size <= s->stack_size);
		}
		perfrec_read_values(f, s, ids, 3, vals);
		break;
	}
	case PERF_RECORD_MMAP2:
		in(r.mmap2.filename, strlen(r.mmap2.filename) + 1, rec, len);
		if (r.mmap2.has_build_id) {
			assert(r.mmap2.build_id_len <= 20);
			in(r.mmap2.build_id, r.mmap2.build_id_len, rec, len);
		}
		break;
	case PERF_RECORD_COMM:
		in(r.comm.comm, strlen(r.comm.comm) + 1, rec, len);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfrec_format f;
	uint64_t head, tail, rsize;
	const unsigned char *ring;

	if (size < 19)
		return 0;
	if (perfrec_format_init(&f, sample_types[data[0] % N(sample_types)],
				read_formats[data[1] % N(read_formats)],
				/* a few registers, as USDT arguments ask */
				(uint64_t)data[2] | (data[2] & 0x80 ? 0xff0000ull : 0)) < 0)
		return 0;
	memcpy(&head, data + 3, 8);
	memcpy(&tail, data + 11, 8);
	data += 19;
	size -= 19;

	/* the stream read straight, as a perf.data-like sequence */
	for (size_t off = 0; off + sizeof(struct perf_event_header) <= size;) {
		struct perf_event_header h;
		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > size - off)
			break;
		decode(&f, data + off, h.size);
		off += h.size;
	}

	/* the ring: a power-of-two prefix, a copy so reads past it trap */
	if (size < 8)
		return 0;
	rsize = 1ull << (63 - __builtin_clzll(size));
	unsigned char *copy = malloc(rsize);
	memcpy(copy, data, rsize);
	ring = copy;
	/* keep head near tail now and then, so records are actually found */
	if (head & 1)
		head = tail + (head >> 1) % (rsize + 1);
	for (int i = 0; i < 64; i++) {
		struct perf_event_header h;
		const unsigned char *rec;
		int st = perfrec_ring_next(ring, rsize, tail, head, tmp, &h, &rec);
		if (st == PERFREC_EMPTY) {
			assert(tail == head);
			break;
		}
		if (st == PERFREC_BAD)
			break;
		assert(st == PERFREC_OK);
		assert(h.size >= sizeof(h) && h.size <= head - tail && h.size <= rsize);
		assert((rec >= ring && rec + h.size <= ring + rsize) || rec == tmp);
		assert(memcmp(rec, &h, sizeof(h)) == 0);
		decode(&f, rec, h.size);
		tail += h.size;
	}
	free(copy);
	return 0;
}
