/*
 * record.h - decoding and encoding of strobe records (kernel/uapi/strobe.h),
 * and struct record, the one form a sample takes from where it is decoded
 * to ingest, whichever backend captured it.
 *
 * record_decode() is the only way the daemon reads the driver's records:
 * it checks sizes and fields before trusting them.  The perf backend
 * fills a struct record from perf's sample (perfrec.h) instead.  Either
 * way the record is decoded once: it then moves as the struct with its
 * variable parts (record_tail_copy / record_tail_point), never encoded
 * again.  record_encode() writes the driver's format (tests, fuzzers).
 */
#ifndef STROBE_RECORD_H
#define STROBE_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include "strobe.h"

/*
 * A decoded record: type is STROBE_REC_SAMPLE, STROBE_REC_LOST,
 * STROBE_REC_UNSCHED (perf backend only), or (driver only)
 * STROBE_REC_CPU_OFFLINE / STROBE_REC_CPU_ONLINE, which carry only cpu and
 * time_ns.
 */
struct record {
	uint16_t type;
	uint32_t cpu;
	uint64_t time_ns;
	union {
		struct {
			uint64_t tsc;
			uint64_t ip;
			uint64_t period;	/* 0: unknown */
			uint32_t pid, tid;
			uint16_t flags;
			uint8_t nr_counters;
			/* the task's cgroup id (PERF_SAMPLE_CGROUP), 0:
			 * unknown (the driver's records have none) */
			uint64_t cgroup;
			/* STROBE_SAMPLE_CALLCHAIN: nr_ips u64 entries
			 * (perf's layout: strobe.h), unaligned, pointing
			 * into the decoded buffer; else 0 / NULL */
			uint16_t nr_ips;
			const unsigned char *ips;
			/* STROBE_SAMPLE_USTACK: the registers (nr_regs u64
			 * in ascending bit order of regs_mask) and
			 * stack_size bytes of stack copy, unaligned, into
			 * the decoded buffer; else all 0 / NULL */
			uint32_t regs_abi, nr_regs;
			uint64_t regs_mask, stack_size;
			const unsigned char *regs, *stack;
			uint64_t counters[STROBE_MAX_COUNTERS];
		} sample;
		struct {
			uint64_t lost;
		} lost;
		struct {
			uint64_t enabled_ns, running_ns;
			uint32_t flags;
		} unsched;
	};
};

enum record_status {
	RECORD_OK = 0,		/* *out filled, *consumed bytes used */
	RECORD_SHORT = 1,	/* buf holds only part of a record: read more */
	RECORD_PAD = 2,		/* padding record: skip *consumed bytes */
	RECORD_BAD = -1,	/* malformed: bad type, size or counter count */
};

/* Decode the record at buf (len bytes available).  A sample's ips, regs
 * and stack point into buf: valid as long as buf is. */
enum record_status record_decode(const void *buf, size_t len,
				 struct record *out, size_t *consumed);

/* Bytes record_encode() writes for r (a sample's grow with its counters,
 * callchain and stack copy); 0 if r cannot be encoded (too many counters
 * or ips, or larger than a record may be: 65528 bytes). */
size_t record_size(const struct record *r);

/* Encode r into buf (cap bytes); returns bytes written, 0 if it won't fit.
 * A sample's flags say whether the callchain (CALLCHAIN: nr_ips entries at
 * ips) and the user stack (USTACK) are written. */
size_t record_encode(const struct record *r, void *buf, size_t cap);

/*
 * The user stack of sample r (STROBE_SAMPLE_USTACK) as records hold it:
 * struct strobe_ustack, the nr_regs registers, the stack_size bytes of
 * stack copy, unpadded.  Written at dst; returns its size,
 * sizeof(struct strobe_ustack) + 8 * nr_regs + stack_size bytes.
 */
size_t record_ustack_put(const struct record *r, void *dst);

/*
 * Moving a decoded record: its variable parts (a sample's callchain,
 * registers and stack copy, which point into the buffer it was decoded
 * from) are record_tail_size() bytes; record_tail_copy() copies them to
 * dst in that order, and record_tail_point() points a copy of the struct
 * at them again once they have moved.
 */
size_t record_tail_size(const struct record *r);
void record_tail_copy(const struct record *r, void *dst);
void record_tail_point(struct record *r, const void *tail);

/*
 * The bytes of r's struct that hold anything: a sample's counters past
 * nr_counters are never read, so a copy (a queue entry, a held sample)
 * takes record_head_size() bytes, a multiple of 8, not sizeof(struct
 * record): 120 bytes for a sample of no counters instead of 184.  Whoever
 * holds such a copy reads no counter past nr_counters and never copies
 * the struct whole (record_head_copy does it).
 */
static inline size_t record_head_size(const struct record *r)
{
	if (r->type != STROBE_REC_SAMPLE)
		return sizeof(*r);
	return offsetof(struct record, sample.counters) +
	       (size_t)r->sample.nr_counters * sizeof(uint64_t);
}

void record_head_copy(struct record *dst, const struct record *r);

/* a head stays 8-aligned, so its tail's u64 and a queue's next entry are */
_Static_assert(offsetof(struct record, sample.counters) % 8 == 0 && sizeof(struct record) % 8 == 0,
	       "struct record: a head of 8-byte multiples");

/* The largest record: its header's size is a __u16 multiple of 8. */
#define RECORD_MAX_SIZE	65528

#endif
