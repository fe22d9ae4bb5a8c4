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

enum record_status record_decode(const void *buf, size_t len, struct record *out,
				 size_t *consumed)
{
	struct strobe_rec_header h;

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
	switch (h.type) {
	case STROBE_REC_SAMPLE: {
		struct strobe_sample s;

		if (h.size < sizeof(s))
			return RECORD_BAD;
		memcpy(&s, buf, sizeof(s));
		if (s.nr_counters > STROBE_MAX_COUNTERS || h.size < STROBE_SAMPLE_SIZE(s.nr_counters))
			return RECORD_BAD;
		if (sample_tail(buf, h.size, &s, out) < 0)
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
		break;
	}
	case STROBE_REC_LOST: {
		struct strobe_lost l;

		if (h.size != sizeof(l))
			return RECORD_BAD;
		memcpy(&l, buf, sizeof(l));
		out->time_ns = l.time_ns;
		out->lost.lost = l.lost;
		break;
	}
	case STROBE_REC_UNSCHED: {
		struct strobe_unsched u;

		if (h.size != sizeof(u))
			return RECORD_BAD;
		memcpy(&u, buf, sizeof(u));
		if (u.running_ns > u.enabled_ns || u.enabled_ns > u.time_ns ||
		    (u.flags & ~STROBE_UNSCHED_ERROR))
			return RECORD_BAD;
		out->time_ns = u.time_ns;
		out->unsched.enabled_ns = u.enabled_ns;
		out->unsched.running_ns = u.running_ns;
		out->unsched.flags = u.flags;
		break;
	}
	case STROBE_REC_CPU_OFFLINE:
	case STROBE_REC_CPU_ONLINE: {
		struct strobe_cpu_rec c;

		if (h.size != sizeof(c))
			return RECORD_BAD;
		memcpy(&c, buf, sizeof(c));
		out->time_ns = c.time_ns;
		break;
	}
	default:
		return RECORD_BAD;
	}
	*consumed = h.size;
	return RECORD_OK;
}

size_t record_size(const struct record *r)
{
	size_t size;

	switch (r->type) {
	case STROBE_REC_SAMPLE:
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

size_t record_encode(const struct record *r, void *buf, size_t cap)
{
	switch (r->type) {
	case STROBE_REC_SAMPLE: {
		struct strobe_sample s;
		size_t n = r->sample.nr_counters;
		size_t size = record_size(r);
		unsigned char *p;

		if (!size || size > cap)
			return 0;
		memset(&s, 0, sizeof(s));
		s.hdr.type = STROBE_REC_SAMPLE;
		s.hdr.size = size;
		s.hdr.cpu = r->cpu;
		s.tsc = r->sample.tsc;
		s.time_ns = r->time_ns;
		s.ip = r->sample.ip;
		s.period = r->sample.period;
		s.pid = r->sample.pid;
		s.tid = r->sample.tid;
		s.flags = r->sample.flags;
		s.nr_counters = n;
		if (r->sample.flags & STROBE_SAMPLE_CALLCHAIN)
			s.nr_ips = r->sample.nr_ips;
		memcpy(buf, &s, sizeof(s));
		p = (unsigned char *)buf + sizeof(s);
		memcpy(p, r->sample.counters, n * sizeof(uint64_t));
		p += n * sizeof(uint64_t);
		if ((r->sample.flags & STROBE_SAMPLE_CALLCHAIN) && s.nr_ips) {
			memcpy(p, r->sample.ips, s.nr_ips * 8u);
			p += s.nr_ips * 8u;
		}
		if (r->sample.flags & STROBE_SAMPLE_USTACK) {
			struct strobe_ustack u;
			size_t pad = ((r->sample.stack_size + 7) & ~7ULL) - r->sample.stack_size;

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
			memset(p, 0, pad);
		}
		return size;
	}
	case STROBE_REC_LOST: {
		struct strobe_lost l;

		if (sizeof(l) > cap)
			return 0;
		memset(&l, 0, sizeof(l));
		l.hdr.type = STROBE_REC_LOST;
		l.hdr.size = sizeof(l);
		l.hdr.cpu = r->cpu;
		l.time_ns = r->time_ns;
		l.lost = r->lost.lost;
		memcpy(buf, &l, sizeof(l));
		return sizeof(l);
	}
	case STROBE_REC_UNSCHED: {
		struct strobe_unsched u;

		if (sizeof(u) > cap)
			return 0;
		memset(&u, 0, sizeof(u));
		u.hdr.type = STROBE_REC_UNSCHED;
		u.hdr.size = sizeof(u);
		u.hdr.cpu = r->cpu;
		u.time_ns = r->time_ns;
		u.enabled_ns = r->unsched.enabled_ns;
		u.running_ns = r->unsched.running_ns;
		u.flags = r->unsched.flags;
		memcpy(buf, &u, sizeof(u));
		return sizeof(u);
	}
	case STROBE_REC_CPU_OFFLINE:
	case STROBE_REC_CPU_ONLINE: {
		struct strobe_cpu_rec c;

		if (sizeof(c) > cap)
			return 0;
		memset(&c, 0, sizeof(c));
		c.hdr.type = r->type;
		c.hdr.size = sizeof(c);
		c.hdr.cpu = r->cpu;
		c.time_ns = r->time_ns;
		memcpy(buf, &c, sizeof(c));
		return sizeof(c);
	}
	}
	return 0;
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
