/*
 * record.c - decode and encode the records of kernel/uapi/strobe.h.
 */
#include "config.h"
#include <string.h>
#include "record.h"

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
		if (s.nr_counters > STROBE_MAX_COUNTERS ||
		    h.size != STROBE_SAMPLE_SIZE(s.nr_counters))
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

size_t record_encode(const struct record *r, void *buf, size_t cap)
{
	switch (r->type) {
	case STROBE_REC_SAMPLE: {
		struct strobe_sample s;
		size_t n = r->sample.nr_counters;
		size_t size = STROBE_SAMPLE_SIZE(n);

		if (n > STROBE_MAX_COUNTERS || size > cap)
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
		memcpy(buf, &s, sizeof(s));
		memcpy((char *)buf + sizeof(s), r->sample.counters, n * sizeof(uint64_t));
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
