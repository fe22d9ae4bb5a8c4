/*
 * perfrec.c - bounds-checked decoding of perf_event ring records
 * (perfrec.h).  Layouts follow linux/perf_event.h's comments on
 * enum perf_event_type; every read goes through a cursor that refuses
 * to step past the record's end.
 */
#include <string.h>
#include "perfrec.h"

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)	/* Linux 6.0 headers and later */
#endif

#define SUPPORTED_SAMPLE_TYPE \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | \
	 PERF_SAMPLE_STACK_USER | PERF_SAMPLE_CGROUP)
#define SUPPORTED_READ_FORMAT \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | \
	 PERF_FORMAT_GROUP | PERF_FORMAT_LOST)

/* A read position inside one record: [p, end). */
struct cur {
	const unsigned char *p, *end;
};

/* n bytes at the cursor, advancing it; NULL if fewer are left. */
static const unsigned char *take(struct cur *c, uint64_t n)
{
	const unsigned char *p = c->p;

	if (n > (uint64_t)(c->end - c->p))
		return NULL;
	c->p += n;
	return p;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static int take64(struct cur *c, uint64_t *v)
{
	const unsigned char *p = take(c, 8);

	if (!p)
		return -1;
	*v = get64(p);
	return 0;
}

/* two u32 in one u64 slot */
static int take32x2(struct cur *c, uint32_t *a, uint32_t *b)
{
	const unsigned char *p = take(c, 8);

	if (!p)
		return -1;
	*a = get32(p);
	if (b)
		*b = get32(p + 4);
	return 0;
}

int perfrec_format_init(struct perfrec_format *f, uint64_t sample_type,
			uint64_t read_format, uint64_t regs_user)
{
	uint32_t off = 0;

	memset(f, 0, sizeof(*f));
	if (sample_type & ~(uint64_t)SUPPORTED_SAMPLE_TYPE)
		return -1;
	if (read_format & ~(uint64_t)SUPPORTED_READ_FORMAT)
		return -1;
	f->sample_type = sample_type;
	f->read_format = read_format;
	f->regs_user = sample_type & PERF_SAMPLE_REGS_USER ? regs_user : 0;
	/* sample_id_all: { pid, tid } { time } { id } { stream_id } { cpu, res } { id } */
	f->trailer_tid = f->trailer_time = f->trailer_cpu = -1;
	if (sample_type & PERF_SAMPLE_TID) {
		f->trailer_tid = off;
		off += 8;
	}
	if (sample_type & PERF_SAMPLE_TIME) {
		f->trailer_time = off;
		off += 8;
	}
	if (sample_type & PERF_SAMPLE_ID)
		off += 8;
	if (sample_type & PERF_SAMPLE_STREAM_ID)
		off += 8;
	if (sample_type & PERF_SAMPLE_CPU) {
		f->trailer_cpu = off;
		off += 8;
	}
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		off += 8;
	f->trailer_size = off;
	f->read_entry = 8 + (read_format & PERF_FORMAT_ID ? 8 : 0) +
			(read_format & PERF_FORMAT_LOST ? 8 : 0);
	/* a sample: its fixed-size fields first, in this order */
	off = 0;
#define FIXED(bit, field) \
	do { \
		f->field = sample_type & (bit) ? (int16_t)off : -1; \
		off += sample_type & (bit) ? 8 : 0; \
	} while (0)
	FIXED(PERF_SAMPLE_IDENTIFIER, off_identifier);
	FIXED(PERF_SAMPLE_IP, off_ip);
	FIXED(PERF_SAMPLE_TID, off_tid);
	FIXED(PERF_SAMPLE_TIME, off_time);
	FIXED(PERF_SAMPLE_ADDR, off_addr);
	FIXED(PERF_SAMPLE_ID, off_id);
	FIXED(PERF_SAMPLE_STREAM_ID, off_stream_id);
	FIXED(PERF_SAMPLE_CPU, off_cpu);
	FIXED(PERF_SAMPLE_PERIOD, off_period);
#undef FIXED
	f->fixed_size = off;
	return 0;
}

int perfrec_sample_identifier(const void *buf, size_t len, uint64_t *id)
{
	if (len < sizeof(struct perf_event_header) + 8)
		return -1;
	*id = get64((const unsigned char *)buf + sizeof(struct perf_event_header));
	return 0;
}

/* struct read_format, as PERF_SAMPLE_READ puts it in a sample */
static int read_values(const struct perfrec_format *f, struct cur *c, struct perfrec_sample *s)
{
	uint64_t rf = f->read_format, v;

	if (rf & PERF_FORMAT_GROUP) {
		if (take64(c, &s->nr_values) < 0)
			return -1;
		if ((rf & PERF_FORMAT_TOTAL_TIME_ENABLED) && take64(c, &s->time_enabled) < 0)
			return -1;
		if ((rf & PERF_FORMAT_TOTAL_TIME_RUNNING) && take64(c, &s->time_running) < 0)
			return -1;
		/* bound nr before multiplying (it comes from the record): a
		 * record has at most PERFREC_MAX_SIZE bytes, an entry >= 8 */
		if (s->nr_values > PERFREC_MAX_SIZE / 8 ||
		    s->nr_values * f->read_entry > (uint64_t)(c->end - c->p))
			return -1;
		s->values = take(c, s->nr_values * f->read_entry);
		return s->values ? 0 : -1;
	}
	s->nr_values = 1;
	s->values = c->p;
	if (take64(c, &v) < 0)
		return -1;
	if ((rf & PERF_FORMAT_TOTAL_TIME_ENABLED) && take64(c, &s->time_enabled) < 0)
		return -1;
	if ((rf & PERF_FORMAT_TOTAL_TIME_RUNNING) && take64(c, &s->time_running) < 0)
		return -1;
	if ((rf & PERF_FORMAT_ID) && !take(c, 8))
		return -1;
	if ((rf & PERF_FORMAT_LOST) && !take(c, 8))
		return -1;
	return 0;
}

/* 64 bits at off in b, or 0 when off is -1 (the field is absent) */
static uint64_t field64(const unsigned char *b, int off)
{
	return off >= 0 ? get64(b + off) : 0;
}

static uint32_t field32(const unsigned char *b, int off, int half)
{
	return off >= 0 ? get32(b + off + 4 * half) : 0;
}

/*
 * The hot path of a drain: every field is assigned (no memset of the
 * whole struct), the fixed part is read at offsets computed once.
 */
static int decode_sample(const struct perfrec_format *f, struct cur *c, struct perfrec *r)
{
	struct perfrec_sample *s = &r->sample;
	const unsigned char *b = c->p;
	uint64_t st = f->sample_type;

	if ((uint64_t)(c->end - c->p) < f->fixed_size)
		return PERFREC_BAD;
	c->p += f->fixed_size;
	s->id = f->off_id >= 0 ? get64(b + f->off_id) : field64(b, f->off_identifier);
	s->ip = field64(b, f->off_ip);
	s->pid = field32(b, f->off_tid, 0);
	s->tid = field32(b, f->off_tid, 1);
	s->time = field64(b, f->off_time);
	s->addr = field64(b, f->off_addr);
	s->stream_id = field64(b, f->off_stream_id);
	s->cpu = field32(b, f->off_cpu, 0);
	s->period = field64(b, f->off_period);
	s->nr_values = s->time_enabled = s->time_running = 0;
	s->values = NULL;
	s->nr_ips = 0;
	s->ips = NULL;
	s->regs_abi = 0;
	s->regs = NULL;
	s->stack_size = s->stack_dyn_size = 0;
	s->stack = NULL;
	s->cgroup = 0;
	if ((st & PERF_SAMPLE_READ) && read_values(f, c, s) < 0)
		return PERFREC_BAD;
	if (st & PERF_SAMPLE_CALLCHAIN) {
		/* bound nr before multiplying: it comes from the record */
		if (take64(c, &s->nr_ips) < 0 || s->nr_ips > (uint64_t)(c->end - c->p) / 8)
			return PERFREC_BAD;
		s->ips = take(c, 8 * s->nr_ips);
		if (!s->ips)
			return PERFREC_BAD;
	}
	/* RAW and BRANCH_STACK come between: not supported, so absent */
	if (st & PERF_SAMPLE_REGS_USER) {
		if (take64(c, &s->regs_abi) < 0)
			return PERFREC_BAD;
		if (s->regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
			s->regs = take(c, 8 * (uint64_t)__builtin_popcountll(f->regs_user));
			if (!s->regs)
				return PERFREC_BAD;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		if (take64(c, &s->stack_size) < 0)
			return PERFREC_BAD;
		if (s->stack_size) {
			s->stack = take(c, s->stack_size);
			if (!s->stack || take64(c, &s->stack_dyn_size) < 0 ||
			    s->stack_dyn_size > s->stack_size)
				return PERFREC_BAD;
		}
	}
	/* WEIGHT .. PHYS_ADDR come between: not supported, so absent */
	if ((st & PERF_SAMPLE_CGROUP) && take64(c, &s->cgroup) < 0)
		return PERFREC_BAD;
	r->has_time = f->off_time >= 0;
	r->time = s->time;
	r->pid = s->pid;
	r->tid = s->tid;
	r->cpu = s->cpu;
	return PERFREC_OK;
}

int perfrec_sideband(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_CGROUP:
		return 1;
	}
	return 0;
}

/* the other record types perfrec_decode reads beyond the header (a
 * SAMPLE is read first) */
static int decoded_type(uint32_t type)
{
	return type == PERF_RECORD_UNTHROTTLE || perfrec_sideband(type);
}

/* a NUL-terminated string filling [p, end): NULL if it has no NUL */
static const char *string_in(const unsigned char *p, const unsigned char *end)
{
	return p < end && memchr(p, 0, end - p) ? (const char *)p : NULL;
}

int perfrec_decode(const struct perfrec_format *f, const void *buf, size_t len,
		   struct perfrec *r)
{
	const unsigned char *p = buf, *body, *end;
	struct perf_event_header h;
	struct cur c;

	r->type = r->misc = r->size = 0;
	r->has_time = 0;
	r->time = 0;
	r->pid = r->tid = r->cpu = 0;
	if (len < sizeof(h))
		return PERFREC_BAD;
	memcpy(&h, p, sizeof(h));
	r->type = h.type;
	r->misc = h.misc;
	r->size = h.size;
	if (h.size < sizeof(h) || h.size > len)
		return PERFREC_BAD;
	body = p + sizeof(h);
	c.p = body;
	c.end = p + h.size;
	if (h.type == PERF_RECORD_SAMPLE)
		return decode_sample(f, &c, r);
	/* the rest is rare (side-band): clear what the cases leave alone */
	memset(&r->sample, 0, sizeof(r->sample));

	/* every other record: body, then the sample_id_all trailer */
	if (h.size < sizeof(h) + f->trailer_size)
		return decoded_type(h.type) ? PERFREC_BAD : PERFREC_SKIP;
	end = p + h.size - f->trailer_size;
	if (f->trailer_time >= 0) {
		r->has_time = 1;
		r->time = get64(end + f->trailer_time);
	}
	if (f->trailer_tid >= 0) {
		r->pid = get32(end + f->trailer_tid);
		r->tid = get32(end + f->trailer_tid + 4);
	}
	if (f->trailer_cpu >= 0)
		r->cpu = get32(end + f->trailer_cpu);
	c.end = end;

	switch (h.type) {
	case PERF_RECORD_MMAP2: {
		struct perfrec_mmap2 *m = &r->mmap2;
		const unsigned char *q = take(&c, 64);

		if (!q)
			return PERFREC_BAD;
		m->pid = get32(q);
		m->tid = get32(q + 4);
		m->start = get64(q + 8);
		m->len = get64(q + 16);
		m->pgoff = get64(q + 24);
		if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			m->has_build_id = 1;
			m->build_id_len = q[32] < 20 ? q[32] : 20;
			m->build_id = q + 36;
		} else {
			m->maj = get32(q + 32);
			m->min = get32(q + 36);
			m->ino = get64(q + 40);
			m->ino_generation = get64(q + 48);
		}
		m->prot = get32(q + 56);
		m->flags = get32(q + 60);
		m->filename = string_in(c.p, end);
		return m->filename ? PERFREC_OK : PERFREC_BAD;
	}
	case PERF_RECORD_COMM:
		if (take32x2(&c, &r->comm.pid, &r->comm.tid) < 0)
			return PERFREC_BAD;
		r->comm.exec = !!(h.misc & PERF_RECORD_MISC_COMM_EXEC);
		r->comm.comm = string_in(c.p, end);
		return r->comm.comm ? PERFREC_OK : PERFREC_BAD;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (take32x2(&c, &r->task.pid, &r->task.ppid) < 0 ||
		    take32x2(&c, &r->task.tid, &r->task.ptid) < 0 ||
		    take64(&c, &r->task.time) < 0)
			return PERFREC_BAD;
		return PERFREC_OK;
	case PERF_RECORD_LOST:
		if (take64(&c, &r->lost.id) < 0 || take64(&c, &r->lost.lost) < 0)
			return PERFREC_BAD;
		return PERFREC_OK;
	case PERF_RECORD_LOST_SAMPLES:
		return take64(&c, &r->lost.lost) < 0 ? PERFREC_BAD : PERFREC_OK;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		if (take64(&c, &r->throttle.time) < 0 || take64(&c, &r->throttle.id) < 0 ||
		    take64(&c, &r->throttle.stream_id) < 0)
			return PERFREC_BAD;
		return PERFREC_OK;
	case PERF_RECORD_CGROUP:
		if (take64(&c, &r->cgroup.id) < 0)
			return PERFREC_BAD;
		r->cgroup.path = string_in(c.p, end);
		return r->cgroup.path ? PERFREC_OK : PERFREC_BAD;
	}
	return PERFREC_SKIP;
}

/* p, pointing into the record once at from, into its copy at to */
static const void *moved(const void *p, uintptr_t from, const void *to)
{
	return p ? (const unsigned char *)to + ((uintptr_t)p - from) : NULL;
}

void perfrec_rebase(struct perfrec *r, uintptr_t from, const void *to)
{
	switch (r->type) {
	case PERF_RECORD_SAMPLE:
		r->sample.values = moved(r->sample.values, from, to);
		r->sample.ips = moved(r->sample.ips, from, to);
		r->sample.regs = moved(r->sample.regs, from, to);
		r->sample.stack = moved(r->sample.stack, from, to);
		break;
	case PERF_RECORD_MMAP2:
		r->mmap2.build_id = moved(r->mmap2.build_id, from, to);
		r->mmap2.filename = moved(r->mmap2.filename, from, to);
		break;
	case PERF_RECORD_COMM:
		r->comm.comm = moved(r->comm.comm, from, to);
		break;
	case PERF_RECORD_CGROUP:
		r->cgroup.path = moved(r->cgroup.path, from, to);
		break;
	}
}
