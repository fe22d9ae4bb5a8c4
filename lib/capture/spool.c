/*
 * spool.c - bounded FIFO of raw ring bytes, memory then disk segments,
 * between strobed's drain thread and ingest (spool.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* fallocate */
#endif
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "spool.h"

#define STATE_MAGIC	0x6c6f6f7073626f72ULL	/* "robspool" */
#define SEG_MAGIC	0x53504f4fU		/* an entry's header in a segment */
#define KIND_CHUNK	1			/* a chunk's bytes follow */
#define KIND_PASS	2			/* a pass mark */
#define KIND_END	3			/* segment: the run goes on in the next */
#define KIND_DISK	4			/* ring: a run on disk starts, in seg */
#define KIND_PAD	5			/* ring: skip to the end */
#define KIND_CLOSE	6			/* ring: the run before ended early, at len */

/* Ring bytes left for KIND_DISK entries when chunks fill the rest. */
#define RING_SLACK	4096
/* The ring's part used while ingest keeps up (see put_ring). */
#define RING_HOT	(8ULL << 20)
#define RING_MIN	4096

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

static void seg_path(const struct spool *s, unsigned n, char *buf, size_t size)
{
	snprintf(buf, size, "%s/seg-%08u", s->dir, n);
}

struct spool *spool_open(const char *dir, const struct spool_limits *lim, struct error *e)
{
	struct spool *s = xcalloc(1, sizeof(*s));
	char path[PATH_MAX];
	void *m;
	int fd;

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
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		error_set(e, "cannot create the spool directory %s: %s", dir, strerror(errno));
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/state", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		error_set(e, "cannot create %s: %s", path, strerror(errno));
		goto fail;
	}
	if (ftruncate(fd, sizeof(struct spool_state)) < 0) {
		error_set(e, "cannot size %s: %s", path, strerror(errno));
		close(fd);
		goto fail;
	}
	s->state = mmap(NULL, sizeof(struct spool_state), PROT_READ | PROT_WRITE, MAP_SHARED,
			fd, 0);
	close(fd);
	if (s->state == MAP_FAILED) {
		s->state = &s->mem_state;
		error_set(e, "cannot map %s: %s", path, strerror(errno));
		goto fail;
	}
	s->state->magic = STATE_MAGIC;
	return s;
fail:
	spool_close(s);
	return NULL;
}

static uint64_t pad8(uint64_t n)
{
	return (n + 7) & ~7ULL;
}

/*
 * Producer: room for an entry of need bytes at head, with keep bytes left
 * free after it: its ring offset, after a KIND_PAD to the end if it must
 * start over at 0; -1 when there is no room.
 */
static int64_t ring_reserve(struct spool *s, uint64_t need, uint64_t keep)
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
static void ring_publish(struct spool *s, uint64_t off, uint64_t n)
{
	uint64_t used;

	s->touched = MAX(s->touched, off + n);
	RELEASE(s->head, s->head + n);
	used = s->head - ACQUIRE(s->tail);
	if (used > LOAD(s->mem_peak))
		STORE(s->mem_peak, used);
}

/* Producer: write header h then a (alen) and b (blen), padded to 8, at the
 * end of the run's segment: the bytes written, or -1 with nothing of it
 * kept.  disk_written is the caller's to publish. */
static int64_t seg_append(struct spool *s, const struct ent_hdr *h, const void *a, size_t alen,
			  const void *b, size_t blen)
{
	static const unsigned char zero[8];
	size_t pad = (8 - (alen + blen) % 8) % 8;

	if (fd_write_all(s->wfd, h, sizeof(*h)) < 0 || fd_write_all(s->wfd, a, alen) < 0 ||
	    fd_write_all(s->wfd, b, blen) < 0 || fd_write_all(s->wfd, zero, pad) < 0) {
		if (ftruncate(s->wfd, s->woff) < 0 || lseek(s->wfd, s->woff, SEEK_SET) < 0)
			ADD(s->disk_errors, 1);
		return -1;
	}
	s->woff += sizeof(*h) + alen + blen + pad;
	return (int64_t)(sizeof(*h) + alen + blen + pad);
}

/* Producer: the run's disk holds n more bytes (the consumer may read them). */
static void disk_publish(struct spool *s, uint64_t n)
{
	uint64_t held;

	RELEASE(s->disk_written, s->disk_written + n);
	held = LOAD(s->disk_written) - ACQUIRE(s->disk_read);
	if (held > LOAD(s->disk_peak))
		STORE(s->disk_peak, held);
}

/* Producer: seg_append, published: 0, or -1 (nothing kept). */
static int seg_write(struct spool *s, const struct ent_hdr *h, const void *a, size_t alen,
		     const void *b, size_t blen)
{
	int64_t n = seg_append(s, h, a, alen, b, blen);

	if (n < 0)
		return -1;
	disk_publish(s, (uint64_t)n);
	return 0;
}

/* Producer: one entry of the run onto disk: 0, or -1 (nothing kept). */
static int disk_put(struct spool *s, const struct ent_hdr *h, const void *a, size_t alen,
		    const void *b, size_t blen)
{
	uint64_t need = sizeof(*h) + pad8(alen + blen);

	if (s->woff + need + sizeof(*h) > SPOOL_SEGMENT_MAX) {
		struct ent_hdr end = { .magic = SEG_MAGIC, .kind = KIND_END };
		int fd = -1;
		char path[PATH_MAX];

		seg_path(s, s->wseg + 1, path, sizeof(path));
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return -1;
		if (seg_write(s, &end, NULL, 0, NULL, 0) < 0) {
			close(fd);
			unlink(path);
			return -1;
		}
		close(s->wfd);
		s->wfd = fd;
		s->wseg++;
		s->woff = 0;
	}
	return seg_write(s, h, a, alen, b, blen);
}

/* Producer: bytes on disk now (an upper bound: the consumer only lowers it). */
static uint64_t disk_held(struct spool *s)
{
	return LOAD(s->disk_written) - ACQUIRE(s->disk_read);
}

/*
 * Producer: a new run, in a new segment, holding first the entry eh (a
 * then b), announced by a KIND_DISK entry in the ring: 0, or -1 (no room
 * in the ring for the announcement, no file, or the entry could not be
 * written), with no trace of the run then.  The entry is written before
 * the announcement, so a disk that fails sends no empty run to the
 * consumer; disk_written grows only after it, as the consumer requires
 * (spool_take: disk bytes past an entry in the ring are the next run's).
 */
static int run_start(struct spool *s, const struct rhdr *h, const struct ent_hdr *eh,
		     const void *a, size_t alen, const void *b, size_t blen)
{
	struct rhdr d = { .kind = KIND_DISK, .time = h->time };
	char path[PATH_MAX];
	int64_t off, n;

	if (s->ring_size - (s->head - ACQUIRE(s->tail)) < 2 * sizeof(d))
		return -1;
	if (s->wfd >= 0) {
		close(s->wfd);
		s->wfd = -1;
		s->wseg++;
	}
	seg_path(s, s->wseg, path, sizeof(path));
	s->wfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (s->wfd < 0)
		goto fail;
	s->woff = 0;
	n = seg_append(s, eh, a, alen, b, blen);
	if (n < 0) {
		close(s->wfd);
		s->wfd = -1;
		unlink(path);	/* never announced: the number is used again */
		goto fail;
	}
	d.seg = s->wseg;
	off = ring_reserve(s, sizeof(d), 0);
	if (off < 0)
		return -1;	/* cannot happen: checked above, the consumer only frees */
	memcpy(s->ring + off, &d, sizeof(d));
	ring_publish(s, (uint64_t)off, sizeof(d));
	s->disk_mode = 1;
	disk_publish(s, (uint64_t)n);
	return 0;
fail:
	ADD(s->disk_errors, 1);
	return -1;
}

/*
 * Producer: a write inside the run failed (a full disk): the run ends
 * here, so that memory takes the chunks that follow instead of the ring
 * waiting for the consumer to read the whole run.  A KIND_CLOSE entry in
 * the ring says where the run ends (its slack keeps room for it); the
 * disk is not used again under the cap, and no run starts before the
 * consumer has read this one (closing).  0, or -1: no room (the run goes
 * on).
 */
static int run_close(struct spool *s, const struct rhdr *h)
{
	struct rhdr c = { .kind = KIND_CLOSE, .time = h->time, .len = LOAD(s->disk_written) };
	int64_t off = ring_reserve(s, sizeof(c), 0);

	if (off < 0)
		return -1;
	memcpy(s->ring + off, &c, sizeof(c));
	ring_publish(s, (uint64_t)off, sizeof(c));
	s->disk_mode = 0;
	s->closing = 1;
	s->close_pos = c.len;
	s->cap_failed = 1;
	return 0;
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
	int64_t off = ring_reserve(s, need, h->kind == KIND_CHUNK ? RING_SLACK : 0);

	if (off < 0)
		return -1;
	memcpy(s->ring + off, h, sizeof(*h));
	if (alen)
		memcpy(s->ring + off + sizeof(*h), a, alen);
	if (blen)
		memcpy(s->ring + off + sizeof(*h) + alen, b, blen);
	ring_publish(s, (uint64_t)off, need);
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
	if (!s->dir || disk_held(s) + 2 * sizeof(eh) + alen + blen + 8 > s->lim.disk_max)
		goto memory;
	eh = (struct ent_hdr){ .magic = SEG_MAGIC, .kind = h->kind, .src = h->src,
			       .time = h->time, .records = h->records, .samples = h->samples,
			       .len = alen + blen };
	if (!s->disk_mode) {
		if (s->closing)
			goto memory;	/* the run closed early is not read yet */
		if (run_start(s, h, &eh, a, alen, b, blen) == 0)
			return 0;
		s->cap_failed |= capped;
		goto memory;
	}
	if (disk_put(s, &eh, a, alen, b, blen) < 0) {
		ADD(s->disk_errors, 1);
		return run_close(s, h) == 0 && ring_put(s, h, need, a, alen, b, blen) == 0 ? 0 : 1;
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
	held = disk_held(s);
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

static void fill(struct spool_entry *ent, uint32_t kind, uint32_t src, uint64_t time,
		 uint64_t records, uint64_t samples, const unsigned char *data, uint64_t len)
{
	ent->is_pass = kind == KIND_PASS;
	ent->src = src;
	ent->time = time;
	ent->records = records;
	ent->samples = samples;
	ent->data = data;
	ent->len = len;
}

/* Consumer: open segment n for reading, the ones before it unlinked. */
static int seg_open(struct spool *s, unsigned n)
{
	char path[PATH_MAX];

	if (s->rfd >= 0)
		close(s->rfd);
	for (; s->rseg < n; s->rseg++) {
		seg_path(s, s->rseg, path, sizeof(path));
		unlink(path);
	}
	seg_path(s, n, path, sizeof(path));
	s->rfd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	s->roff = 0;
	return s->rfd < 0 ? -1 : 0;
}

/*
 * Consumer: the run's next entry into ent: 1; 0 when the run is read
 * empty for now; -1 when it cannot be read (e says so): the rest of the
 * run is then given up, counted as taken.
 */
static int disk_take(struct spool *s, struct spool_entry *ent, struct error *e)
{
	char path[PATH_MAX];
	struct ent_hdr h;

	while (LOAD(s->disk_read) < ACQUIRE(s->disk_written)) {
		errno = 0;
		if (s->rfd < 0 || fd_pread_all(s->rfd, &h, sizeof(h), s->roff) != 1 ||
		    h.magic != SEG_MAGIC || h.len > SPOOL_SEGMENT_MAX)
			goto bad;
		if (h.kind == KIND_END) {
			RELEASE(s->disk_read, s->disk_read + sizeof(h));
			if (seg_open(s, s->rseg + 1) < 0)
				goto bad;
			continue;
		}
		if (h.kind != KIND_CHUNK && h.kind != KIND_PASS)
			goto bad;
		if (h.len > s->rcap) {
			s->rcap = h.len;
			s->rbuf = xrealloc(s->rbuf, s->rcap);
		}
		if (h.len && fd_pread_all(s->rfd, s->rbuf, h.len, s->roff + sizeof(h)) != 1)
			goto bad;
		/* read: its disk space goes back at once */
		fallocate(s->rfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)s->roff,
			  (off_t)(sizeof(h) + pad8(h.len)));
		s->roff += sizeof(h) + pad8(h.len);
		RELEASE(s->disk_read, s->disk_read + sizeof(h) + pad8(h.len));
		fill(ent, h.kind, h.src, h.time, h.records, h.samples, s->rbuf, h.len);
		if (h.kind == KIND_CHUNK)
			s->disk_time = h.time;
		return 1;
	}
	return 0;
bad:
	seg_path(s, s->rseg, path, sizeof(path));
	error_set(e, "cannot read the spool segment %s at offset %" PRIu64 ": %s: the records "
		  "spooled there are lost", path, s->roff, errno ? strerror(errno) : "malformed");
	/* the rest of the run is given up */
	RELEASE(s->disk_read, ACQUIRE(s->disk_written));
	return -1;
}

/*
 * Consumer, the ring not empty: whether its next entry (past a KIND_PAD,
 * skipped) is a KIND_CLOSE, and then where its run ends.  The head was
 * read (acquire) before: the producer's disk_written up to that end is
 * visible.
 */
static int ring_close_at(struct spool *s, uint64_t *end)
{
	uint64_t off = s->tail % s->ring_size, contig = s->ring_size - off;
	struct rhdr h;

	if (contig < sizeof(h) ||
	    (memcpy(&h, s->ring + off, sizeof(h)), h.kind == KIND_PAD)) {
		/* a pad is published with the entry after it, at 0 */
		RELEASE(s->tail, s->tail + contig);
		memcpy(&h, s->ring, sizeof(h));
	}
	if (h.kind != KIND_CLOSE)
		return 0;
	*end = h.len;
	return 1;
}

int spool_take(struct spool *s, struct spool_entry *ent, struct error *e)
{
	uint64_t head, off, contig;
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
			r = disk_take(s, ent, e);
			if (r != 0)
				break;
			continue;
		}
		head = ACQUIRE(s->head);
		if (s->tail == head)
			return 0;
		off = s->tail % s->ring_size;
		contig = s->ring_size - off;
		if (contig >= sizeof(h))
			memcpy(&h, s->ring + off, sizeof(h));
		if (contig < sizeof(h) || h.kind == KIND_PAD) {
			RELEASE(s->tail, s->tail + contig);
			continue;
		}
		if (h.kind == KIND_CLOSE) {	/* its run was read to it */
			RELEASE(s->tail, s->tail + sizeof(h));
			continue;
		}
		if (h.kind == KIND_DISK) {
			RELEASE(s->tail, s->tail + sizeof(h));
			s->in_disk = 1;
			if (seg_open(s, h.seg) < 0) {
				char path[PATH_MAX];

				seg_path(s, h.seg, path, sizeof(path));
				error_set(e, "cannot open the spool segment %s: %s: the records "
					  "spooled there are lost", path, strerror(errno));
				RELEASE(s->disk_read, ACQUIRE(s->disk_written));
				r = -1;
				break;
			}
			continue;
		}
		s->held = sizeof(h) + (h.kind == KIND_CHUNK ? pad8(h.len) : 0);
		fill(ent, h.kind, h.src, h.time, h.records, h.samples,
		     s->ring + off + sizeof(h), h.len);
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
	uint64_t head = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE), pos = s->tail + s->held;

	memset(st, 0, sizeof(*st));
	st->mem_bytes = head - s->tail;
	st->disk_bytes = LOAD(s->disk_written) - LOAD(s->disk_read);
	st->mem_peak = LOAD(s->mem_peak);
	st->disk_peak = LOAD(s->disk_peak);
	st->records_in = LOAD(s->records_in);
	st->samples_in = LOAD(s->samples_in);
	st->records_out = LOAD(s->records_out);
	st->samples_out = LOAD(s->samples_out);
	st->refused = LOAD(s->refused);
	st->disk_errors = LOAD(s->disk_errors);
	/* the oldest chunk held: the next one to take */
	while (pos != head) {
		uint64_t off = pos % s->ring_size, contig = s->ring_size - off;
		struct rhdr h;

		if (contig >= sizeof(h))
			memcpy(&h, s->ring + off, sizeof(h));
		if (contig < sizeof(h) || h.kind == KIND_PAD) {
			pos += contig;
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
	char path[PATH_MAX];

	if (!s)
		return;
	if (s->ring)
		munmap(s->ring, s->ring_size);
	free(s->rbuf);
	if (s->rfd >= 0)
		close(s->rfd);
	if (s->wfd >= 0)
		close(s->wfd);
	if (s->dir && !keep) {
		for (unsigned n = s->rseg; n <= s->wseg; n++) {
			seg_path(s, n, path, sizeof(path));
			unlink(path);
		}
		snprintf(path, sizeof(path), "%s/state", s->dir);
		unlink(path);
		rmdir(s->dir);
	}
	if (s->state != &s->mem_state)
		munmap(s->state, sizeof(*s->state));
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

int spool_orphan(const char *dir, spool_lost_fn fn, void *ctx, uint64_t *records,
		 uint64_t *last_ns, struct error *e)
{
	struct spool_state *st = xcalloc(1, sizeof(*st));
	ssize_t n;
	int dfd, fd, ret = 1;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		free(st);
		if (errno == ENOENT)
			return 0;
		return error_set(e, "cannot open the spool directory %s: %s", dir,
				 strerror(errno));
	}
	fd = openat(dfd, "state", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	n = fd >= 0 ? read(fd, st, sizeof(*st)) : -1;
	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof(*st) || st->magic != STATE_MAGIC)
		memset(st, 0, sizeof(*st));	/* created, never stamped: nothing put */
	*records = st->records_in >= st->records_committed ?
		   st->records_in - st->records_committed : 0;
	*last_ns = st->last_ns;
	for (int i = 0; i < SPOOL_MAX_SRC && fn; i++)
		if (st->src[i].samples_in > st->src[i].samples_committed &&
		    fn(ctx, st->src[i].named ? (int)st->src[i].cpu : -1,
		       st->src[i].samples_in - st->src[i].samples_committed, e) < 0) {
			ret = -1;
			break;
		}
	free(st);
	close(dfd);
	return ret;
}

int spool_remove(const char *dir, struct error *e)
{
	DIR *d;
	struct dirent *de;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (dfd < 0)
		return errno == ENOENT ? 0 : error_set(e, "cannot open the spool directory %s: %s",
						      dir, strerror(errno));
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return error_set(e, "cannot list %s: %s", dir, strerror(errno));
	}
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "seg-", 4) || !strcmp(de->d_name, "state"))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	if (rmdir(dir) < 0)
		return error_set(e, "cannot remove the spool directory %s: %s", dir,
				 strerror(errno));
	return 0;
}
