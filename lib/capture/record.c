/*
 * record.c - decode and encode the records of kernel/uapi/strobe.h.
 */
#include "config.h"
#include <string.h>
#include "record.h"

/* The callchain and user stack of sample s (size bytes at buf) into out:
 * exactly what the flags say, filling the record to its end; -1 if not. */
static int sample_tail(const void *buf, size_t size, const struct strobe_sample *s,
		       struct record *out)
{
	const unsigned char *p = (const unsigned char *)buf + STROBE_SAMPLE_SIZE(s->nr_counters);
	const unsigned char *end = (const unsigned char *)buf + size;

	out->sample.nr_ips = 0;
	out->sample.ips = NULL;
	out->sample.regs_abi = out->sample.nr_regs = 0;
	out->sample.regs_mask = out->sample.stack_size = 0;
	out->sample.regs = out->sample.stack = NULL;
	if (s->flags & STROBE_SAMPLE_CALLCHAIN) {
		if (s->nr_ips > STROBE_MAX_IPS || (size_t)(end - p) < s->nr_ips * 8u)
			return -1;
		out->sample.nr_ips = s->nr_ips;
		out->sample.ips = p;
		p += s->nr_ips * 8u;
	} else if (s->nr_ips) {
		return -1;
	}
	if (s->flags & STROBE_SAMPLE_USTACK) {
		struct strobe_ustack u;
		uint64_t padded;

		if ((size_t)(end - p) < sizeof(u))
			return -1;
		memcpy(&u, p, sizeof(u));
		p += sizeof(u);
		if (u.nr_regs > 64 || (uint64_t)__builtin_popcountll(u.regs_mask) != u.nr_regs ||
		    (u.abi == 0 && (u.nr_regs || u.stack_size)) ||
		    (size_t)(end - p) < u.nr_regs * 8u)
			return -1;
		out->sample.regs_abi = u.abi;
		out->sample.nr_regs = u.nr_regs;
		out->sample.regs_mask = u.regs_mask;
		out->sample.regs = p;
		p += u.nr_regs * 8u;
		padded = (u.stack_size + 7) & ~7ULL;
		if (u.stack_size > (uint64_t)(end - p) || padded != (uint64_t)(end - p))
			return -1;
		out->sample.stack_size = u.stack_size;
		out->sample.stack = u.stack_size ? p : NULL;
		p += padded;
	}
	return p == end ? 0 : -1;
}

/* The records of one fixed size, in the form the kernel writes them. */
union fixed_rec {
	struct strobe_lost lost;
	struct strobe_unsched unsched;
	struct strobe_cpu_rec cpu;
};

/* The size of a record of type (not a sample): 0 for a type that has none. */
static size_t fixed_size(uint16_t type)
{
	switch (type) {
	case STROBE_REC_LOST:
		return sizeof(struct strobe_lost);
	case STROBE_REC_UNSCHED:
		return sizeof(struct strobe_unsched);
	case STROBE_REC_CPU_OFFLINE:
	case STROBE_REC_CPU_ONLINE:
		return sizeof(struct strobe_cpu_rec);
	}
	return 0;
}

/* The sample at buf (its header h) into out, checked. */
static enum record_status decode_sample(const void *buf, const struct strobe_rec_header *h,
					struct record *out)
{
	struct strobe_sample s;

	if (h->size < sizeof(s))
		return RECORD_BAD;
	memcpy(&s, buf, sizeof(s));
	if (s.nr_counters > STROBE_MAX_COUNTERS || h->size < STROBE_SAMPLE_SIZE(s.nr_counters))
		return RECORD_BAD;
	if (sample_tail(buf, h->size, &s, out) < 0)
		return RECORD_BAD;
	out->time_ns = s.time_ns;
	out->sample.tsc = s.tsc;
	out->sample.ip = s.ip;
	out->sample.period = s.period;
	out->sample.pid = s.pid;
	out->sample.tid = s.tid;
	out->sample.flags = s.flags;
	out->sample.nr_counters = s.nr_counters;
	memcpy(out->sample.counters, (const char *)buf + sizeof(s),
	       s.nr_counters * sizeof(uint64_t));
	return RECORD_OK;
}

/* The fixed-size record at buf (its header h) into out, checked. */
static enum record_status decode_fixed(const void *buf, const struct strobe_rec_header *h,
				       struct record *out)
{
	size_t size = fixed_size(h->type);
	union fixed_rec x;

	if (!size || h->size != size)
		return RECORD_BAD;
	memcpy(&x, buf, size);
	switch (h->type) {
	case STROBE_REC_LOST:
		out->time_ns = x.lost.time_ns;
		out->lost.lost = x.lost.lost;
		break;
	case STROBE_REC_UNSCHED:
		if (x.unsched.running_ns > x.unsched.enabled_ns ||
		    x.unsched.enabled_ns > x.unsched.time_ns ||
		    (x.unsched.flags & ~STROBE_UNSCHED_ERROR))
			return RECORD_BAD;
		out->time_ns = x.unsched.time_ns;
		out->unsched.enabled_ns = x.unsched.enabled_ns;
		out->unsched.running_ns = x.unsched.running_ns;
		out->unsched.flags = x.unsched.flags;
		break;
	default:	/* CPU offline, online */
		out->time_ns = x.cpu.time_ns;
	}
	return RECORD_OK;
}

enum record_status record_decode(const void *buf, size_t len, struct record *out,
				 size_t *consumed)
{
	struct strobe_rec_header h;
	enum record_status st;

	if (len < sizeof(h))
		return RECORD_SHORT;
	memcpy(&h, buf, sizeof(h));
	if (h.size < sizeof(h) || h.size % 8)
		return RECORD_BAD;
	if (h.type == STROBE_REC_PAD) {
		/* it covers the rest of the buffer: never more than is there,
		 * or the reader's tail would step past the writer's head */
		if (h.size > len)
			return RECORD_BAD;
		*consumed = h.size;
		return RECORD_PAD;
	}
	if (len < h.size)
		return RECORD_SHORT;
	memset(out, 0, offsetof(struct record, sample.counters));
	out->type = h.type;
	out->cpu = h.cpu;
	if (h.type == STROBE_REC_SAMPLE)
		st = decode_sample(buf, &h, out);
	else
		st = decode_fixed(buf, &h, out);
	if (st == RECORD_OK)
		*consumed = h.size;
	return st;
}

size_t record_size(const struct record *r)
{
	size_t size;

	if (r->type != STROBE_REC_SAMPLE)
		return fixed_size(r->type);
	if (r->sample.nr_counters > STROBE_MAX_COUNTERS)
		return 0;
	size = STROBE_SAMPLE_SIZE(r->sample.nr_counters);
	if (r->sample.flags & STROBE_SAMPLE_CALLCHAIN) {
		if (r->sample.nr_ips > STROBE_MAX_IPS)
			return 0;
		size += r->sample.nr_ips * 8u;
	}
	if (r->sample.flags & STROBE_SAMPLE_USTACK) {
		if (r->sample.nr_regs > 64 ||
		    (uint64_t)__builtin_popcountll(r->sample.regs_mask) != r->sample.nr_regs ||
		    r->sample.stack_size > RECORD_MAX_SIZE)
			return 0;
		size += sizeof(struct strobe_ustack) + r->sample.nr_regs * 8u +
			((r->sample.stack_size + 7) & ~7ULL);
	}
	return size <= RECORD_MAX_SIZE ? size : 0;
}

/* The sample r into buf (cap bytes): bytes written, 0 if it won't fit. */
static size_t encode_sample(const struct record *r, void *buf, size_t cap)
{
	size_t n = r->sample.nr_counters;
	size_t size = record_size(r);
	unsigned char *p;

	if (!size || size > cap)
		return 0;
	/* every byte set: the struct has no padding, the fields not named
	 * (reserved) are 0 */
	struct strobe_sample s = {
		.hdr = { .type = STROBE_REC_SAMPLE, .size = size, .cpu = r->cpu },
		.tsc = r->sample.tsc, .time_ns = r->time_ns, .ip = r->sample.ip,
		.period = r->sample.period, .pid = r->sample.pid, .tid = r->sample.tid,
		.flags = r->sample.flags, .nr_counters = n,
		.nr_ips = r->sample.flags & STROBE_SAMPLE_CALLCHAIN ? r->sample.nr_ips : 0,
	};

	memcpy(buf, &s, sizeof(s));
	p = (unsigned char *)buf + sizeof(s);
	memcpy(p, r->sample.counters, n * sizeof(uint64_t));
	p += n * sizeof(uint64_t);
	if ((r->sample.flags & STROBE_SAMPLE_CALLCHAIN) && s.nr_ips) {
		memcpy(p, r->sample.ips, s.nr_ips * 8u);
		p += s.nr_ips * 8u;
	}
	if (r->sample.flags & STROBE_SAMPLE_USTACK) {
		size_t pad = ((r->sample.stack_size + 7) & ~7ULL) - r->sample.stack_size;

		p += record_ustack_put(r, p);
		memset(p, 0, pad);
	}
	return size;
}

size_t record_ustack_put(const struct record *r, void *dst)
{
	struct strobe_ustack u;
	unsigned char *p = dst;

	memset(&u, 0, sizeof(u));
	u.abi = r->sample.regs_abi;
	u.nr_regs = r->sample.nr_regs;
	u.regs_mask = r->sample.regs_mask;
	u.stack_size = r->sample.stack_size;
	memcpy(p, &u, sizeof(u));
	p += sizeof(u);
	if (u.nr_regs) {
		memcpy(p, r->sample.regs, u.nr_regs * 8u);
		p += u.nr_regs * 8u;
	}
	if (u.stack_size) {
		memcpy(p, r->sample.stack, u.stack_size);
		p += u.stack_size;
	}
	return (size_t)(p - (unsigned char *)dst);
}

size_t record_encode(const struct record *r, void *buf, size_t cap)
{
	size_t size = fixed_size(r->type);
	struct strobe_rec_header h = { .type = r->type, .size = size, .cpu = r->cpu };
	union fixed_rec x;

	if (r->type == STROBE_REC_SAMPLE)
		return encode_sample(r, buf, cap);
	if (!size || size > cap)
		return 0;
	memset(&x, 0, sizeof(x));
	switch (r->type) {
	case STROBE_REC_LOST:
		x.lost.time_ns = r->time_ns;
		x.lost.lost = r->lost.lost;
		break;
	case STROBE_REC_UNSCHED:
		x.unsched.time_ns = r->time_ns;
		x.unsched.enabled_ns = r->unsched.enabled_ns;
		x.unsched.running_ns = r->unsched.running_ns;
		x.unsched.flags = r->unsched.flags;
		break;
	default:	/* CPU offline, online */
		x.cpu.time_ns = r->time_ns;
	}
	memcpy(buf, &x, size);
	memcpy(buf, &h, sizeof(h));
	return size;
}

size_t record_tail_size(const struct record *r)
{
	if (r->type != STROBE_REC_SAMPLE)
		return 0;
	return (size_t)r->sample.nr_ips * 8u + (size_t)r->sample.nr_regs * 8u +
	       r->sample.stack_size;
}

void record_tail_copy(const struct record *r, void *dst)
{
	unsigned char *p = dst;

	if (r->type != STROBE_REC_SAMPLE)
		return;
	if (r->sample.nr_ips) {
		memcpy(p, r->sample.ips, r->sample.nr_ips * 8u);
		p += r->sample.nr_ips * 8u;
	}
	if (r->sample.nr_regs) {
		memcpy(p, r->sample.regs, r->sample.nr_regs * 8u);
		p += r->sample.nr_regs * 8u;
	}
	if (r->sample.stack_size)
		memcpy(p, r->sample.stack, r->sample.stack_size);
}

void record_head_copy(struct record *dst, const struct record *r)
{
	memcpy(dst, r, record_head_size(r));
}

void record_tail_point(struct record *r, const void *tail)
{
	const unsigned char *p = tail;

	if (r->type != STROBE_REC_SAMPLE)
		return;
	r->sample.ips = r->sample.nr_ips ? p : NULL;
	p += r->sample.nr_ips * 8u;
	r->sample.regs = r->sample.nr_regs ? p : NULL;
	p += r->sample.nr_regs * 8u;
	r->sample.stack = r->sample.stack_size ? p : NULL;
}
