/*
 * spool_int.h - the private parts of the spool (spool.h says what it is),
 * shared by its two files:
 *
 *   spool.c      the queue: the memory ring, the producer's puts, the
 *                consumer's takes, the counters;
 *   spooldisk.c  the files in the spool's directory: the segment files a
 *                run of entries goes to when memory is full (written by
 *                the producer, read back by the consumer), the "state"
 *                file of the crash counters, and what a strobed that died
 *                left there (spool_orphan, spool_remove).
 *
 * Nothing here is for other callers: spool.h is the interface.
 */
#ifndef STROBE_SPOOL_INT_H
#define STROBE_SPOOL_INT_H

#include <stddef.h>
#include <stdint.h>
#include "spool.h"

#define SEG_MAGIC	0x53504f4fU		/* an entry's header in a segment */
#define KIND_CHUNK	1			/* a chunk's bytes follow */
#define KIND_PASS	2			/* a pass mark */
#define KIND_END	3			/* segment: the run goes on in the next */
#define KIND_DISK	4			/* ring: a run on disk starts, in seg */
#define KIND_PAD	5			/* ring: skip to the end */
#define KIND_CLOSE	6			/* ring: the run before ended early, at len */

/* The counters that survive a crash: the file "state", mapped shared.
 * Each field has one writer: the producer the _in ones and last_ns, the
 * consumer the _committed ones. */
struct spool_state {
	uint64_t magic;
	uint64_t records_in, samples_in;
	uint64_t records_committed, samples_committed;
	uint64_t last_ns;
	struct {
		uint32_t cpu, named;
		uint64_t samples_in, samples_committed;
	} src[SPOOL_MAX_SRC];
};

/* An entry's header in a segment file. */
struct ent_hdr {
	uint32_t magic, kind;
	uint32_t src, pad;
	uint64_t time, records, samples, len;
};

/* An entry's header in the memory ring; a KIND_CHUNK's bytes follow it,
 * padded to 8. */
struct rhdr {
	uint32_t kind, src;
	uint64_t time, records, samples, len;
	uint32_t seg, reserved;		/* KIND_DISK: the run's first segment */
};

/*
 * One producer, one consumer, no lock: the producer (the drain thread)
 * must never wait for ingest, which may run at a lower priority and be
 * preempted anywhere.  A lock, or the allocator's (a chunk malloc'ed by
 * one thread and freed by the other takes the arena's lock), would let a
 * preempted ingest stall the draining.
 *
 * The memory part is a ring of ring_size bytes between two counters that
 * only grow: the producer writes entries at head and then publishes head
 * (release); the consumer reads up to head (acquire), and publishes tail
 * (release) once the entry it handed out is no longer used, at its next
 * take.  The producer writes only between head and tail + ring_size.
 * Entries never wrap: KIND_PAD (or fewer bytes than a header) skips to
 * the ring's end.
 *
 * When a chunk does not fit, the producer puts a KIND_DISK entry in the
 * ring (where in which segment the run starts) and writes that chunk and
 * every entry after it to segment files, publishing disk_written, until
 * the consumer has read them all: the consumer, when it finds the run
 * read empty, publishes caught_up = disk_read; a producer that finds
 * caught_up equal to disk_written goes back to the ring, and only then.
 * So the ring's entries after a KIND_DISK come after all of its run, and
 * the consumer, once the run reads empty, goes back to the ring when it
 * holds an entry.  The one exception: a write that fails inside a run (a
 * full disk) ends the run at once, with a KIND_CLOSE entry in the ring
 * saying where (disk_written then), and the chunk goes to the ring.  A
 * consumer that finds a KIND_CLOSE first reads the run up to it; the
 * producer starts no run until caught_up has reached it, so the disk
 * bytes up to it are that run's alone.  A run that crosses
 * SPOOL_SEGMENT_MAX goes on in the next segment after a KIND_END; each run
 * starts a new segment; the consumer punches out what it read and unlinks
 * the segments behind it.
 *
 * Counters: each has one writer; the other thread reads it atomically.
 */
struct spool {
	struct spool_limits lim;
	char *dir;
	struct spool_state *state;	/* mapped; NULL without dir */
	struct spool_state mem_state;	/* used when there is no dir */
	unsigned char *ring;
	uint64_t ring_size;		/* multiple of 8 */
	uint64_t head, tail;		/* atomic: producer's, consumer's */
	uint64_t disk_written, disk_read, caught_up;	/* atomic: bytes ever */
	/* producer only */
	int disk_mode;			/* entries go to disk until caught up */
	int cap_failed;			/* the disk failed a chunk the cap sent */
	int closing;			/* a run ended early (KIND_CLOSE) at */
	uint64_t close_pos;		/* this disk_written, not yet read to */
	int wfd;
	unsigned wseg;			/* segment being written (wfd) */
	uint64_t woff;
	uint64_t touched;		/* the ring's bytes below this were written */
	/* consumer only */
	int in_disk;			/* reading a run from (rseg, roff) */
	uint64_t published;		/* the last caught_up stored */
	uint64_t held;			/* ring bytes of the entry handed out last */
	int rfd;
	unsigned rseg;
	uint64_t roff;
	uint64_t disk_time;		/* copy time of the last chunk read from disk */
	unsigned char *rbuf;
	size_t rcap;
	uint64_t src_out[SPOOL_MAX_SRC];	/* samples taken, per source */
	/* counters, atomic: the producer's, then the consumer's */
	uint64_t mem_peak, disk_peak, records_in, samples_in, refused, disk_errors;
	uint64_t records_out, samples_out;
	uint64_t mem_cap;		/* atomic, the consumer's: spool_mem_cap */
};

#define LOAD(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define ADD(x, v)	STORE(x, LOAD(x) + (v))	/* one writer */
#define ACQUIRE(x)	__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define RELEASE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

static inline uint64_t pad8(uint64_t n)
{
	return (n + 7) & ~7ULL;
}

/* ent: an entry of kind (KIND_CHUNK or KIND_PASS) with these fields. */
static inline void spool_entry_fill(struct spool_entry *ent, uint32_t kind, uint32_t src,
				    uint64_t time, uint64_t records, uint64_t samples,
				    const unsigned char *data, uint64_t len)
{
	ent->is_pass = kind == KIND_PASS;
	ent->src = src;
	ent->time = time;
	ent->records = records;
	ent->samples = samples;
	ent->data = data;
	ent->len = len;
}

/* spool.c: the producer's room for an entry of need bytes at head, keep
 * bytes left free after it (its ring offset, or -1), and the entry of n
 * bytes written at off published. */
int64_t spool_ring_reserve(struct spool *s, uint64_t need, uint64_t keep);
void spool_ring_publish(struct spool *s, uint64_t off, uint64_t n);

/* spooldisk.c: the directory and its state file (spool_open), and their
 * end (keep: the files stay, for spool_orphan). */
int spool_dir_create(struct spool *s, const char *dir, struct error *e);
void spool_dir_free(struct spool *s, int keep);

/* spooldisk.c, the producer's: bytes on disk now; a run started with the
 * entry eh (a then b) and announced in the ring; one more entry of the
 * run; the run ended early after a failed write.  0, or -1. */
uint64_t spool_disk_held(struct spool *s);
int spool_run_start(struct spool *s, const struct rhdr *h, const struct ent_hdr *eh,
		    const void *a, size_t alen, const void *b, size_t blen);
int spool_disk_put(struct spool *s, const struct ent_hdr *h, const void *a, size_t alen,
		   const void *b, size_t blen);
int spool_run_close(struct spool *s, const struct rhdr *h);

/* spooldisk.c, the consumer's: the run that starts in segment n opened
 * (the segments before it unlinked); the run's next entry into ent: 1, 0
 * (read empty for now).  -1: e says why, and the rest of the run is given
 * up, counted as taken. */
int spool_run_open(struct spool *s, unsigned n, struct error *e);
int spool_disk_take(struct spool *s, struct spool_entry *ent, struct error *e);

#endif
