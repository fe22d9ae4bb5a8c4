/*
 * spool.c - the spool's queue (spool.h): a ring of entries in memory
 * between strobed's drain thread (the producer) and ingest (the
 * consumer), without a lock; when the ring is full, a run of entries in
 * segment files on disk (spooldisk.c), announced in the ring so that the
 * consumer takes everything in the order it was put.  spool_int.h says
 * how the two threads share the spool.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "spool_int.h"

/* Ring bytes left for KIND_DISK entries when chunks fill the rest. */
#define RING_SLACK	4096
/* The ring's part used while ingest keeps up (see spool_ring_reserve). */
#define RING_HOT	(8ULL << 20)
#define RING_MIN	4096

struct spool *spool_open(const char *dir, const struct spool_limits *lim, struct error *e)
{
	struct spool *s = xcalloc(1, sizeof(*s));
	void *m;

	s->lim = *lim;
	s->wfd = s->rfd = -1;
	s->state = &s->mem_state;
	s->ring_size = MAX(lim->mem_max & ~7ULL, RING_MIN);
	/* address space only: pages are taken as the ring is written */
	m = mmap(NULL, s->ring_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		error_set(e, "cannot reserve %" PRIu64 " MiB for the spool: %s (lower "
			  "--spool-mem)", s->ring_size >> 20, strerror(errno));
		goto fail;
	}
	s->ring = m;
	/* a backlog fills the ring at up to tens of MB a second: a fault
	 * per 2 MiB rather than per 4 KiB (a hint; refused is fine) */
	madvise(m, s->ring_size, MADV_HUGEPAGE);
	if (!dir)
		return s;
	s->dir = xstrdup(dir);
	if (spool_dir_create(s, dir, e) < 0)
		goto fail;
	return s;
fail:
	spool_close(s);
	return NULL;
}

/*
 * Producer: room for an entry of need bytes at head, with keep bytes left
 * free after it: its ring offset, after a KIND_PAD to the end if it must
 * start over at 0; -1 when there is no room.
 */
int64_t spool_ring_reserve(struct spool *s, uint64_t need, uint64_t keep)
{
	uint64_t tail = ACQUIRE(s->tail);
	uint64_t off = s->head % s->ring_size, contig = s->ring_size - off;
	uint64_t free = s->ring_size - (s->head - tail), skip = 0;

	/*
	 * Ingest keeps up: start over at 0 past RING_HOT, so that the ring's
	 * pages in use stay few; what a backlog took beyond is given back
	 * now, while no entry lies there (the ring is empty, and the pad
	 * header is written below, after the madvise).
	 */
	if (s->head == tail && off > RING_HOT && contig >= sizeof(struct rhdr) &&
	    contig + need + keep <= free) {
		uint64_t from = (off + sizeof(struct rhdr) + 4095) & ~4095ULL;

		if (s->touched > from)
			madvise(s->ring + from, s->touched - from, MADV_DONTNEED);
		s->touched = MIN(s->touched, from);
		skip = contig;
	} else if (contig < need) {
		skip = contig;
	}
	if (skip + need + keep > free)
		return -1;
	if (skip) {
		if (skip >= sizeof(struct rhdr)) {
			struct rhdr pad = { .kind = KIND_PAD };

			memcpy(s->ring + off, &pad, sizeof(pad));
		}
		s->head += skip;	/* published with the entry */
		off = 0;
	}
	return (int64_t)off;
}

/* Producer: publish the entry of n bytes written at ring offset off. */
void spool_ring_publish(struct spool *s, uint64_t off, uint64_t n)
{
	uint64_t used;

	s->touched = MAX(s->touched, off + n);
	RELEASE(s->head, s->head + n);
	used = s->head - ACQUIRE(s->tail);
	if (used > LOAD(s->mem_peak))
		STORE(s->mem_peak, used);
}

/* Producer: whether a chunk of need bytes goes to disk because the
 * consumer capped the memory (spool_mem_cap), there is a disk, and it
 * has not failed under the cap before (then memory serves the rest of
 * the spool's life: the disk is no cheaper place for records it
 * refuses). */
static int mem_capped(struct spool *s, uint64_t need)
{
	uint64_t cap = LOAD(s->mem_cap);

	return cap && s->dir && s->lim.disk_max && !s->cap_failed &&
	       s->head - ACQUIRE(s->tail) + need > cap;
}

/* Producer: the entry into the ring at need bytes, published: 0, or -1. */
static int ring_put(struct spool *s, const struct rhdr *h, uint64_t need, const void *a,
		    size_t alen, const void *b, size_t blen)
{
	int64_t off = spool_ring_reserve(s, need, h->kind == KIND_CHUNK ? RING_SLACK : 0);

	if (off < 0)
		return -1;
	memcpy(s->ring + off, h, sizeof(*h));
	if (alen)
		memcpy(s->ring + off + sizeof(*h), a, alen);
	if (blen)
		memcpy(s->ring + off + sizeof(*h) + alen, b, blen);
	spool_ring_publish(s, (uint64_t)off, need);
	return 0;
}

/* Producer: one entry into the ring, or onto disk.  0, or 1: no room. */
static int put(struct spool *s, const struct rhdr *h, const void *a, size_t alen,
	       const void *b, size_t blen)
{
	uint64_t need = sizeof(*h) + (h->kind == KIND_CHUNK ? pad8(alen + blen) : 0);
	struct ent_hdr eh;
	int capped = 0;

	/* the consumer read the whole run: back to the ring */
	if (s->disk_mode && ACQUIRE(s->caught_up) == LOAD(s->disk_written))
		s->disk_mode = 0;
	if (s->closing && ACQUIRE(s->caught_up) == s->close_pos)
		s->closing = 0;
	if (!s->disk_mode) {
		capped = h->kind == KIND_CHUNK && mem_capped(s, need);
		if (!capped && ring_put(s, h, need, a, alen, b, blen) == 0)
			return 0;
		if (h->kind != KIND_CHUNK)
			return 1;
	}
	if (!s->dir || spool_disk_held(s) + 2 * sizeof(eh) + alen + blen + 8 > s->lim.disk_max)
		goto memory;
	eh = (struct ent_hdr){ .magic = SEG_MAGIC, .kind = h->kind, .src = h->src,
			       .time = h->time, .records = h->records, .samples = h->samples,
			       .len = alen + blen };
	if (!s->disk_mode) {
		if (s->closing)
			goto memory;	/* the run closed early is not read yet */
		if (spool_run_start(s, h, &eh, a, alen, b, blen) == 0)
			return 0;
		s->cap_failed |= capped;
		goto memory;
	}
	if (spool_disk_put(s, &eh, a, alen, b, blen) < 0) {
		ADD(s->disk_errors, 1);
		return spool_run_close(s, h) == 0 &&
		       ring_put(s, h, need, a, alen, b, blen) == 0 ? 0 : 1;
	}
	return 0;
memory:
	/* a chunk the cap sent to a disk without room or that failed:
	 * memory still takes it if it can */
	return capped && ring_put(s, h, need, a, alen, b, blen) == 0 ? 0 : 1;
}

int spool_put(struct spool *s, uint32_t src, uint64_t time, const void *a, size_t alen,
	      const void *b, size_t blen, uint64_t records, uint64_t samples)
{
	struct rhdr h = {
		.kind = KIND_CHUNK, .src = src, .time = time, .records = records,
		.samples = samples, .len = alen + blen,
	};

	if (put(s, &h, a, alen, b, blen)) {
		ADD(s->refused, 1);
		return 1;
	}
	ADD(s->records_in, records);
	ADD(s->samples_in, samples);
	STORE(s->state->records_in, LOAD(s->records_in));
	STORE(s->state->samples_in, LOAD(s->samples_in));
	STORE(s->state->last_ns, time);
	if (src < SPOOL_MAX_SRC)
		ADD(s->state->src[src].samples_in, samples);
	return 0;
}

uint64_t spool_room(struct spool *s)
{
	uint64_t tail = ACQUIRE(s->tail);
	uint64_t off = s->head % s->ring_size, contig = s->ring_size - off;
	uint64_t free = s->ring_size - (s->head - tail), mem = 0, disk = 0, held;

	/* an entry that fits: before the end, or from 0 after a pad */
	if (!(s->disk_mode && ACQUIRE(s->caught_up) != LOAD(s->disk_written)) &&
	    free > RING_SLACK) {
		free -= RING_SLACK;
		mem = MAX(MIN(contig, free), free > contig ? free - contig : 0);
		mem = mem > sizeof(struct rhdr) ? (mem - sizeof(struct rhdr)) & ~7ULL : 0;
		/* not lowered by a cap: what the cap sends to a disk without
		 * room for it, memory takes (put) */
	}
	held = spool_disk_held(s);
	if (s->dir && !(s->closing && ACQUIRE(s->caught_up) != s->close_pos) &&
	    held + 2 * sizeof(struct ent_hdr) + 8 < s->lim.disk_max)
		disk = s->lim.disk_max - held - 2 * sizeof(struct ent_hdr) - 8;
	return MIN(MAX(mem, disk), SPOOL_SEGMENT_MAX - sizeof(struct ent_hdr) * 3 - 8);
}

void spool_mem_cap(struct spool *s, uint64_t bytes)
{
	STORE(s->mem_cap, bytes);
}

void spool_short(struct spool *s)
{
	ADD(s->refused, 1);
}

void spool_pass(struct spool *s, uint64_t time)
{
	struct rhdr h = { .kind = KIND_PASS, .time = time };

	/* A mark that finds no room is left out: the next one says more. */
	put(s, &h, NULL, 0, NULL, 0);
}

/*
 * Consumer: the header of the entry at ring position pos into *h: 0; or,
 * when none starts there (a KIND_PAD, or fewer bytes than a header before
 * the ring's end), the bytes to skip to the ring's start.
 */
static uint64_t ring_peek(const struct spool *s, uint64_t pos, struct rhdr *h)
{
	uint64_t off = pos % s->ring_size, contig = s->ring_size - off;

	if (contig < sizeof(*h))
		return contig;
	memcpy(h, s->ring + off, sizeof(*h));
	return h->kind == KIND_PAD ? contig : 0;
}

/*
 * Consumer, the ring not empty: whether its next entry (past a KIND_PAD,
 * skipped) is a KIND_CLOSE, and then where its run ends.  The head was
 * read (acquire) before: the producer's disk_written up to that end is
 * visible.
 */
static int ring_close_at(struct spool *s, uint64_t *end)
{
	struct rhdr h;
	uint64_t skip = ring_peek(s, s->tail, &h);

	if (skip) {
		/* a pad is published with the entry after it, at 0 */
		RELEASE(s->tail, s->tail + skip);
		memcpy(&h, s->ring, sizeof(h));
	}
	if (h.kind != KIND_CLOSE)
		return 0;
	*end = h.len;
	return 1;
}

int spool_take(struct spool *s, struct spool_entry *ent, struct error *e)
{
	uint64_t head, skip;
	struct rhdr h;
	int r;

	/* the entry handed out last is done with: its bytes may be reused */
	if (s->held) {
		RELEASE(s->tail, s->tail + s->held);
		s->held = 0;
	}
	for (;;) {
		if (s->in_disk) {
			/*
			 * The producer leaves the run only once caught_up is
			 * what it wrote, and writes to the ring (first of all
			 * the next run's KIND_DISK) only after leaving: with
			 * caught_up published at our position, an entry in the
			 * ring means the run is over, and disk bytes past it
			 * are the next run's.  disk_written is read first: what
			 * the producer wrote to the ring before it is visible.
			 */
			uint64_t w = ACQUIRE(s->disk_written);

			if (LOAD(s->disk_read) == w && s->published != w) {
				RELEASE(s->caught_up, w);
				s->published = w;
			}
			if (s->published == LOAD(s->disk_read)) {
				uint64_t end;

				if (ACQUIRE(s->head) != s->tail) {
					/* a run closed early is read to its end first
					 * (no later run's bytes before: see put) */
					if (!ring_close_at(s, &end) || end == LOAD(s->disk_read)) {
						s->in_disk = 0;
						continue;
					}
				} else if (LOAD(s->disk_read) == w) {
					return 0;
				}
			}
			r = spool_disk_take(s, ent, e);
			if (r != 0)
				break;
			continue;
		}
		head = ACQUIRE(s->head);
		if (s->tail == head)
			return 0;
		skip = ring_peek(s, s->tail, &h);
		if (skip) {
			RELEASE(s->tail, s->tail + skip);
			continue;
		}
		if (h.kind == KIND_CLOSE) {	/* its run was read to it */
			RELEASE(s->tail, s->tail + sizeof(h));
			continue;
		}
		if (h.kind == KIND_DISK) {
			RELEASE(s->tail, s->tail + sizeof(h));
			s->in_disk = 1;
			if (spool_run_open(s, h.seg, e) < 0) {
				r = -1;
				break;
			}
			continue;
		}
		s->held = sizeof(h) + (h.kind == KIND_CHUNK ? pad8(h.len) : 0);
		spool_entry_fill(ent, h.kind, h.src, h.time, h.records, h.samples,
				 s->ring + s->tail % s->ring_size + sizeof(h), h.len);
		r = 1;
		break;
	}
	if (r == 1 && !ent->is_pass) {
		ADD(s->records_out, ent->records);
		ADD(s->samples_out, ent->samples);
		if (ent->src < SPOOL_MAX_SRC)
			s->src_out[ent->src] += ent->samples;
	}
	return r;
}

void spool_committed(struct spool *s)
{
	STORE(s->state->records_committed, LOAD(s->records_out));
	STORE(s->state->samples_committed, LOAD(s->samples_out));
	for (int i = 0; i < SPOOL_MAX_SRC; i++)
		STORE(s->state->src[i].samples_committed, s->src_out[i]);
}

void spool_source(struct spool *s, uint32_t src, uint32_t cpu)
{
	if (src >= SPOOL_MAX_SRC)
		return;
	s->state->src[src].cpu = cpu;
	s->state->src[src].named = 1;
}

void spool_get_counts(struct spool *s, struct spool_stats *st)
{
	uint64_t tail = ACQUIRE(s->tail);	/* first: head only grows */

	memset(st, 0, sizeof(*st));
	st->mem_bytes = ACQUIRE(s->head) - tail;
	st->disk_bytes = LOAD(s->disk_written) - LOAD(s->disk_read);
	st->records_in = LOAD(s->records_in);
	st->samples_in = LOAD(s->samples_in);
	st->records_out = LOAD(s->records_out);
	st->samples_out = LOAD(s->samples_out);
	st->refused = LOAD(s->refused);
	st->disk_errors = LOAD(s->disk_errors);
}

void spool_get_stats(struct spool *s, struct spool_stats *st)
{
	uint64_t head, pos = s->tail + s->held;

	/* the consumer's: the tail counted is s->tail, the head is after it */
	spool_get_counts(s, st);
	head = s->tail + st->mem_bytes;
	st->mem_peak = LOAD(s->mem_peak);
	st->disk_peak = LOAD(s->disk_peak);
	/* the oldest chunk held: the next one to take */
	while (pos != head) {
		struct rhdr h = { 0 };	/* set when skip is 0 (the compiler cannot tell) */
		uint64_t skip = ring_peek(s, pos, &h);

		if (skip) {
			pos += skip;
			continue;
		}
		if (h.kind == KIND_PASS) {
			pos += sizeof(h);
			continue;
		}
		st->oldest_ns = h.time;
		break;
	}
}

/* Free s; with keep, its files stay for spool_orphan. */
static void spool_free(struct spool *s, int keep)
{
	if (!s)
		return;
	if (s->ring)
		munmap(s->ring, s->ring_size);
	free(s->rbuf);
	spool_dir_free(s, keep);
	free(s->dir);
	free(s);
}

void spool_close(struct spool *s)
{
	spool_free(s, 0);
}

void spool_leave(struct spool *s)
{
	spool_free(s, 1);
}
