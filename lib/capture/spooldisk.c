/*
 * spooldisk.c - the spool's files (spool.h, spool_int.h): in its
 * directory, the segment files seg-NNNNNNNN that hold the runs of entries
 * memory had no room for, each entry a struct ent_hdr and its bytes
 * padded to 8 (the producer writes them, the consumer reads them back and
 * punches out what it read), and the "state" file of the counters that
 * survive a crash, which spool_orphan reads on the next start.
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
#include "spool_int.h"

#define STATE_MAGIC	0x6c6f6f7073626f72ULL	/* "robspool" */

static void seg_path(const struct spool *s, unsigned n, char *buf, size_t size)
{
	snprintf(buf, size, "%s/seg-%08u", s->dir, n);
}

/* Producer: segment n created (emptied if it was there) for writing: its
 * descriptor, or -1; its path into path. */
static int seg_create(const struct spool *s, unsigned n, char *path, size_t size)
{
	seg_path(s, n, path, size);
	return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
}

/* spool_open's part on disk: the directory dir and its state file,
 * mapped shared as s->state.  0, or -1 (e says why). */
int spool_dir_create(struct spool *s, const char *dir, struct error *e)
{
	char path[PATH_MAX];
	int fd;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return error_set(e, "cannot create the spool directory %s: %s", dir,
				 strerror(errno));
	snprintf(path, sizeof(path), "%s/state", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return error_set(e, "cannot create %s: %s", path, strerror(errno));
	if (ftruncate(fd, sizeof(struct spool_state)) < 0) {
		error_set(e, "cannot size %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	s->state = mmap(NULL, sizeof(struct spool_state), PROT_READ | PROT_WRITE, MAP_SHARED,
			fd, 0);
	close(fd);
	if (s->state == MAP_FAILED) {
		s->state = &s->mem_state;
		return error_set(e, "cannot map %s: %s", path, strerror(errno));
	}
	s->state->magic = STATE_MAGIC;
	return 0;
}

/* spool_free's part on disk: the open segments closed, the state file
 * unmapped; without keep, the segments, the state file and dir removed. */
void spool_dir_free(struct spool *s, int keep)
{
	char path[PATH_MAX];

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
int spool_disk_put(struct spool *s, const struct ent_hdr *h, const void *a, size_t alen,
		   const void *b, size_t blen)
{
	uint64_t need = sizeof(*h) + pad8(alen + blen);

	if (s->woff + need + sizeof(*h) > SPOOL_SEGMENT_MAX) {
		struct ent_hdr end = { .magic = SEG_MAGIC, .kind = KIND_END };
		int fd = -1;
		char path[PATH_MAX];

		fd = seg_create(s, s->wseg + 1, path, sizeof(path));
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
uint64_t spool_disk_held(struct spool *s)
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
int spool_run_start(struct spool *s, const struct rhdr *h, const struct ent_hdr *eh,
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
	s->wfd = seg_create(s, s->wseg, path, sizeof(path));
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
	off = spool_ring_reserve(s, sizeof(d), 0);
	if (off < 0)
		return -1;	/* cannot happen: checked above, the consumer only frees */
	memcpy(s->ring + off, &d, sizeof(d));
	spool_ring_publish(s, (uint64_t)off, sizeof(d));
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
int spool_run_close(struct spool *s, const struct rhdr *h)
{
	struct rhdr c = { .kind = KIND_CLOSE, .time = h->time, .len = LOAD(s->disk_written) };
	int64_t off = spool_ring_reserve(s, sizeof(c), 0);

	if (off < 0)
		return -1;
	memcpy(s->ring + off, &c, sizeof(c));
	spool_ring_publish(s, (uint64_t)off, sizeof(c));
	s->disk_mode = 0;
	s->closing = 1;
	s->close_pos = c.len;
	s->cap_failed = 1;
	return 0;
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

/* Consumer: the run that starts in segment n (a KIND_DISK entry) opened
 * for reading: 0, or -1 (e says why): the run is then given up, counted
 * as taken. */
int spool_run_open(struct spool *s, unsigned n, struct error *e)
{
	char path[PATH_MAX];

	if (seg_open(s, n) == 0)
		return 0;
	seg_path(s, n, path, sizeof(path));
	error_set(e, "cannot open the spool segment %s: %s: the records spooled there are lost",
		  path, strerror(errno));
	RELEASE(s->disk_read, ACQUIRE(s->disk_written));
	return -1;
}

/*
 * Consumer: the run's next entry into ent: 1; 0 when the run is read
 * empty for now; -1 when it cannot be read (e says so): the rest of the
 * run is then given up, counted as taken.
 */
int spool_disk_take(struct spool *s, struct spool_entry *ent, struct error *e)
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
		spool_entry_fill(ent, h.kind, h.src, h.time, h.records, h.samples, s->rbuf, h.len);
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
