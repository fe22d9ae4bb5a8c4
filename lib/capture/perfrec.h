/*
 * perfrec.h - decoding the records of a perf_event mmap ring
 * (PERF_RECORD_*, linux/perf_event.h), without trusting their sizes.
 *
 * The ring: perfrec_ring_next() finds the record at a tail offset, checks
 * its header against the ring and the writer's head, and hands out a
 * contiguous copy when it wraps around the ring's end (into the caller's
 * buffer of PERFREC_MAX_SIZE bytes: no allocation).
 *
 * A record: perfrec_decode() reads one record written under a
 * perfrec_format (the event's sample_type, read_format and user register
 * mask, all with sample_id_all set): SAMPLE, MMAP2 (with a build-id or
 * with device/inode), COMM (exec or not), FORK, EXIT, LOST, LOST_SAMPLES,
 * THROTTLE, UNTHROTTLE and CGROUP (Linux 5.7: a cgroup's id and path).  Every field is bounds-checked against the
 * record's size; variable parts (group read values, registers, user
 * stack, file names) point into the record.  A record that does not fit
 * its own size is PERFREC_BAD, never read past.
 *
 * No global state, no allocation; errors are returned, never printed.
 */
#ifndef STROBE_PERFREC_H
#define STROBE_PERFREC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/perf_event.h>

#ifndef PERF_SAMPLE_CGROUP
#define PERF_SAMPLE_CGROUP	(1U << 21)	/* Linux 5.7 */
#endif
#ifndef PERF_RECORD_CGROUP
#define PERF_RECORD_CGROUP	19
#endif

/* an unaligned u64 of a record */
static inline uint64_t perfrec_get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* The largest record (perf_event_header.size is 16 bits). */
#define PERFREC_MAX_SIZE 65536

enum perfrec_status {
	PERFREC_OK = 0,
	PERFREC_EMPTY = 1,	/* ring: no complete record at tail */
	PERFREC_SKIP = 2,	/* decode: a record type this decoder does not read */
	PERFREC_BAD = -1,	/* malformed: a size that does not add up */
};

/* What the records of one event carry. */
struct perfrec_format {
	uint64_t sample_type;		/* PERF_SAMPLE_* */
	uint64_t read_format;		/* PERF_FORMAT_* */
	uint64_t regs_user;		/* PERF_SAMPLE_REGS_USER register mask */
	/* derived by perfrec_format_init */
	uint32_t trailer_size;		/* sample_id_all trailer, bytes */
	int32_t trailer_time;		/* offset of its time, or -1 */
	int32_t trailer_tid;		/* offset of pid,tid, or -1 */
	int32_t trailer_cpu;		/* offset of cpu,res, or -1 */
	uint32_t read_entry;		/* bytes per value of a read */
	/* a sample's fixed part (IDENTIFIER .. PERIOD): size, field offsets or -1 */
	uint32_t fixed_size;
	int16_t off_identifier, off_ip, off_tid, off_time, off_addr, off_id, off_stream_id,
		off_cpu, off_period;
};

/*
 * Set f up; -1 if sample_type has a bit this decoder cannot step over
 * (supported: IDENTIFIER IP TID TIME ADDR ID STREAM_ID CPU PERIOD READ
 * CALLCHAIN REGS_USER STACK_USER CGROUP) or read_format one it does not know.
 */
int perfrec_format_init(struct perfrec_format *f, uint64_t sample_type,
			uint64_t read_format, uint64_t regs_user);

/* PERF_RECORD_SAMPLE; absent fields are 0 / NULL. */
struct perfrec_sample {
	uint64_t id;			/* IDENTIFIER, or else ID */
	uint64_t ip, addr, stream_id, period;
	uint32_t pid, tid, cpu;
	uint64_t time;
	/* READ: nr_values values, each read_entry bytes: value, [id], [lost] */
	uint64_t nr_values;
	uint64_t time_enabled, time_running;
	const unsigned char *values;
	/* CALLCHAIN: nr_ips u64 entries (context markers included), leaf
	 * first, bounded by the record's size only */
	uint64_t nr_ips;
	const unsigned char *ips;
	/* REGS_USER: abi (0: none were taken), then popcount(mask) registers */
	uint64_t regs_abi;
	const unsigned char *regs;
	/* STACK_USER: size bytes copied, of which dyn_size are valid */
	uint64_t stack_size, stack_dyn_size;
	const unsigned char *stack;
	/* CGROUP: the id of the task's cgroup (v2; 0 when not asked) */
	uint64_t cgroup;
};

struct perfrec_mmap2 {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	int has_build_id;		/* PERF_RECORD_MISC_MMAP_BUILD_ID */
	uint8_t build_id_len;		/* at most 20 */
	const unsigned char *build_id;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	const char *filename;		/* NUL-terminated inside the record */
};

struct perfrec_comm {
	uint32_t pid, tid;
	int exec;			/* PERF_RECORD_MISC_COMM_EXEC */
	const char *comm;		/* NUL-terminated inside the record */
};

/* FORK and EXIT */
struct perfrec_task {
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

/* LOST (id, lost) and LOST_SAMPLES (lost) */
struct perfrec_lost {
	uint64_t id, lost;
};

/* CGROUP: a cgroup was created (or synthesized): its id and its path
 * from the cgroup root ("/a/b"), as the kernel wrote it */
struct perfrec_cgroup {
	uint64_t id;
	const char *path;		/* NUL-terminated inside the record */
};

/* THROTTLE and UNTHROTTLE */
struct perfrec_throttle {
	uint64_t time, id, stream_id;
};

struct perfrec {
	uint32_t type;			/* PERF_RECORD_* */
	uint16_t misc;
	uint16_t size;
	/* the sample's own fields, or else the sample_id_all trailer's */
	int has_time;
	uint64_t time;
	uint32_t pid, tid, cpu;
	union {
		struct perfrec_sample sample;
		struct perfrec_mmap2 mmap2;
		struct perfrec_comm comm;
		struct perfrec_task task;
		struct perfrec_lost lost;
		struct perfrec_throttle throttle;
		struct perfrec_cgroup cgroup;
	};
};

/*
 * The record at ring offset tail: data is the ring's size bytes (a power
 * of two), head the writer's position.  PERFREC_OK: *rec points at the
 * record's hdr->size bytes, in data or, when it wraps the ring's end,
 * copied into tmp (PERFREC_MAX_SIZE bytes).  PERFREC_EMPTY: tail == head.
 * PERFREC_BAD: the header's size is below the header, above the ring, or
 * past head (the reader must not step over it).  Inline: once per record
 * on the drain's hot path.
 */
static inline int perfrec_ring_next(const unsigned char *data, uint64_t size, uint64_t tail,
				    uint64_t head, unsigned char *tmp,
				    struct perf_event_header *h, const unsigned char **rec)
{
	uint64_t off = tail & (size - 1);

	if (tail == head)
		return PERFREC_EMPTY;
	if (head - tail < sizeof(*h) || head - tail > size)
		return PERFREC_BAD;
	if (off + sizeof(*h) <= size) {
		memcpy(h, data + off, sizeof(*h));
	} else {
		size_t first = size - off;

		memcpy(h, data + off, first);
		memcpy((char *)h + first, data, sizeof(*h) - first);
	}
	if (h->size < sizeof(*h) || h->size > head - tail)
		return PERFREC_BAD;
	if (off + h->size <= size) {
		*rec = data + off;
	} else {
		size_t first = size - off;

		memcpy(tmp, data + off, first);
		memcpy(tmp + first, data, h->size - first);
		*rec = tmp;
	}
	return PERFREC_OK;
}


/*
 * Decode the record at buf (len bytes available, at least its header's
 * size) written under f.  PERFREC_OK: *out filled.  PERFREC_SKIP: another
 * type (out->type, misc, size and the trailer fields set).  PERFREC_BAD:
 * truncated or inconsistent.
 */
int perfrec_decode(const struct perfrec_format *f, const void *buf, size_t len,
		   struct perfrec *out);

/*
 * The record r was decoded from, at address from, has been copied to to
 * (all its bytes): point r's variable parts (a sample's read values,
 * callchain, registers and stack; a name, path or build-id) into the copy.
 * So a record is decoded once and moved with its bytes, not decoded again.
 */
void perfrec_rebase(struct perfrec *r, uintptr_t from, const void *to);

/* Whether records of type are the side-band strobe keeps (MMAP2, COMM,
 * FORK, EXIT, LOST, LOST_SAMPLES, THROTTLE, CGROUP): what the perf backend
 * queues besides samples.  perfrec_decode() reads these, SAMPLE and
 * UNTHROTTLE. */
int perfrec_sideband(uint32_t type);

/* A SAMPLE's first u64 (its PERF_SAMPLE_IDENTIFIER), or -1 if too short. */
int perfrec_sample_identifier(const void *buf, size_t len, uint64_t *id);

/*
 * The values of a sample's group read whose ids are ids[0..n): out[j] is
 * the value read with id ids[j], in whatever order they came; out[j] is
 * left alone when no value has that id.  Returns how many were found.
 * Needs PERF_FORMAT_ID.  Inline: once per sample on the hot path.
 */
static inline int perfrec_read_values(const struct perfrec_format *f,
				      const struct perfrec_sample *s,
				      const uint64_t *ids, int n, uint64_t *out)
{
	uint64_t rf = f->read_format;
	int found = 0;

	if (!(rf & PERF_FORMAT_ID) || !s->values)
		return 0;
	if (!(rf & PERF_FORMAT_GROUP)) {
		uint64_t id = perfrec_get64(s->values + 8 +
					    (rf & PERF_FORMAT_TOTAL_TIME_ENABLED ? 8 : 0) +
					    (rf & PERF_FORMAT_TOTAL_TIME_RUNNING ? 8 : 0));

		for (int j = 0; j < n; j++)
			if (ids[j] == id) {
				out[j] = perfrec_get64(s->values);
				found++;
			}
		return found;
	}
	/* {value, id, [lost]}: the id right after its value */
	for (const unsigned char *e = s->values, *end = e + s->nr_values * f->read_entry;
	     e < end; e += f->read_entry) {
		uint64_t id = perfrec_get64(e + 8);

		for (int j = 0; j < n; j++)
			if (ids[j] == id) {
				out[j] = perfrec_get64(e);
				found++;
			}
	}
	return found;
}


#endif
