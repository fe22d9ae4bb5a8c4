/*
 * spool.c - bounded FIFO of raw ring bytes, memory then disk segments,
 * between strobed's drain thread and ingest (spool.h).
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "spool.h"

#define STATE_MAGIC	0x6c6f6f7073626f72ULL	/* "robspool" */
#define SEG_MAGIC	0x53504f4fU		/* an entry's header in a segment */
#define KIND_CHUNK	1
#define KIND_PASS	2
#define KIND_END	3			/* the segment goes on in the next one */

/* The counters that survive a crash: the file "state", mapped shared. */
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

/* An entry's header, in memory and in segment files. */
struct ent_hdr {
	uint32_t magic, kind;
	uint32_t src, pad;
	uint64_t time, records, samples, len;
};

struct node {
	struct node *next;
	struct ent_hdr h;
	unsigned char data[];
};

struct spool {
	pthread_mutex_t lock;
	struct spool_limits lim;
	char *dir;
	struct spool_state *state;	/* mapped; NULL without dir */
	struct spool_state mem_state;	/* used when there is no dir */
	/* memory part, oldest first */
	struct node *head, *tail;
	struct node *taken;		/* handed out last, freed on the next take */
	/* disk part: entries from (rseg, roff) up to (wseg, woff) */
	int disk_mode;			/* puts go to disk until it is read empty */
	int wfd, rfd;
	unsigned wseg, rseg;
	uint64_t woff, roff;
	uint64_t disk_written, disk_read;	/* bytes, ever: held = the difference */
	unsigned char *rbuf;
	size_t rcap;
	struct spool_stats st;
	uint64_t src_out[SPOOL_MAX_SRC];	/* samples taken, per source */
};

static void seg_path(const struct spool *s, unsigned n, char *buf, size_t size)
{
	snprintf(buf, size, "%s/seg-%08u", s->dir, n);
}

struct spool *spool_open(const char *dir, const struct spool_limits *lim, struct error *e)
{
	struct spool *s = xcalloc(1, sizeof(*s));
	char path[PATH_MAX];
	int fd;

	pthread_mutex_init(&s->lock, NULL);
	s->lim = *lim;
	s->wfd = s->rfd = -1;
	s->state = &s->mem_state;
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

/* Open segment n for appending (producer) with the lock not held. */
static int seg_create(struct spool *s, unsigned n)
{
	char path[PATH_MAX];

	seg_path(s, n, path, sizeof(path));
	return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
}

/*
 * Append one entry to the disk part; called by the producer with the lock
 * held (the consumer reads only up to woff, which moves only here).
 * 0, or -1 when the file could not take it (nothing of it is kept).
 */
static int disk_put(struct spool *s, const struct ent_hdr *h, const void *a, size_t alen,
		    const void *b, size_t blen)
{
	static const unsigned char zero[8];
	size_t pad = (8 - (alen + blen) % 8) % 8;
	uint64_t need = sizeof(*h) + alen + blen + pad;

	if (s->wfd < 0) {
		s->wfd = seg_create(s, s->wseg);
		if (s->wfd < 0)
			return -1;
	} else if (s->woff + need > SPOOL_SEGMENT_MAX) {
		struct ent_hdr end = { .magic = SEG_MAGIC, .kind = KIND_END };
		int fd = seg_create(s, s->wseg + 1);

		if (fd < 0)
			return -1;
		if (fd_write_all(s->wfd, &end, sizeof(end)) < 0) {
			close(fd);
			if (ftruncate(s->wfd, s->woff) < 0)
				s->st.disk_errors++;
			return -1;
		}
		close(s->wfd);
		s->disk_written += sizeof(end);
		s->wfd = fd;
		s->wseg++;
		s->woff = 0;
	}
	if (fd_write_all(s->wfd, h, sizeof(*h)) < 0 || fd_write_all(s->wfd, a, alen) < 0 ||
	    fd_write_all(s->wfd, b, blen) < 0 || fd_write_all(s->wfd, zero, pad) < 0) {
		if (ftruncate(s->wfd, s->woff) < 0 || lseek(s->wfd, s->woff, SEEK_SET) < 0)
			s->st.disk_errors++;
		return -1;
	}
	s->woff += need;
	s->disk_written += need;
	s->st.disk_bytes = s->disk_written - s->disk_read;
	s->st.disk_peak = MAX(s->st.disk_peak, s->st.disk_bytes);
	return 0;
}

static void mem_put(struct spool *s, const struct ent_hdr *h, const void *a, size_t alen,
		    const void *b, size_t blen)
{
	struct node *n = xmalloc(sizeof(*n) + alen + blen);

	n->next = NULL;
	n->h = *h;
	if (alen)
		memcpy(n->data, a, alen);
	if (blen)
		memcpy(n->data + alen, b, blen);
	if (s->tail)
		s->tail->next = n;
	else
		s->head = n;
	s->tail = n;
	s->st.mem_bytes += sizeof(*n) + alen + blen;
	s->st.mem_peak = MAX(s->st.mem_peak, s->st.mem_bytes);
}

/* With the lock held: one entry into memory, or else onto disk. */
static int put(struct spool *s, const struct ent_hdr *h, const void *a, size_t alen,
	       const void *b, size_t blen)
{
	uint64_t size = sizeof(struct node) + alen + blen;

	if (!s->disk_mode && s->st.mem_bytes + size <= s->lim.mem_max) {
		mem_put(s, h, a, alen, b, blen);
		return 0;
	}
	if (!s->dir || s->st.disk_bytes + sizeof(*h) + alen + blen + 8 > s->lim.disk_max)
		return 1;
	if (disk_put(s, h, a, alen, b, blen) < 0) {
		s->st.disk_errors++;
		return 1;
	}
	s->disk_mode = 1;
	return 0;
}

int spool_put(struct spool *s, uint32_t src, uint64_t time, const void *a, size_t alen,
	      const void *b, size_t blen, uint64_t records, uint64_t samples)
{
	struct ent_hdr h = {
		.magic = SEG_MAGIC, .kind = KIND_CHUNK, .src = src, .time = time,
		.records = records, .samples = samples, .len = alen + blen,
	};
	int r;

	pthread_mutex_lock(&s->lock);
	r = put(s, &h, a, alen, b, blen);
	if (r == 0) {
		if (!s->st.oldest_ns)
			s->st.oldest_ns = time;
		s->st.records_in += records;
		s->st.samples_in += samples;
		s->state->records_in = s->st.records_in;
		s->state->samples_in = s->st.samples_in;
		s->state->last_ns = time;
		if (src < SPOOL_MAX_SRC)
			s->state->src[src].samples_in += samples;
	} else {
		s->st.refused++;
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

uint64_t spool_room(struct spool *s)
{
	uint64_t mem = 0, disk = 0;

	pthread_mutex_lock(&s->lock);
	if (!s->disk_mode && s->st.mem_bytes + sizeof(struct node) < s->lim.mem_max)
		mem = s->lim.mem_max - s->st.mem_bytes - sizeof(struct node);
	if (s->dir && s->st.disk_bytes + sizeof(struct ent_hdr) + 8 < s->lim.disk_max)
		disk = s->lim.disk_max - s->st.disk_bytes - sizeof(struct ent_hdr) - 8;
	pthread_mutex_unlock(&s->lock);
	return MIN(MAX(mem, disk), SPOOL_SEGMENT_MAX - sizeof(struct ent_hdr) * 2 - 8);
}

void spool_short(struct spool *s)
{
	pthread_mutex_lock(&s->lock);
	s->st.refused++;
	pthread_mutex_unlock(&s->lock);
}

void spool_pass(struct spool *s, uint64_t time)
{
	struct ent_hdr h = { .magic = SEG_MAGIC, .kind = KIND_PASS, .time = time };

	/* A mark that finds no room is left out: the next one says more. */
	pthread_mutex_lock(&s->lock);
	put(s, &h, NULL, 0, NULL, 0);
	pthread_mutex_unlock(&s->lock);
}

static void fill(struct spool_entry *ent, const struct ent_hdr *h, const unsigned char *data)
{
	ent->is_pass = h->kind == KIND_PASS;
	ent->src = h->src;
	ent->time = h->time;
	ent->records = h->records;
	ent->samples = h->samples;
	ent->data = data;
	ent->len = h->len;
}

/* Give up the disk part after a read error: what it held is counted as
 * taken (and so, at the next commit, as neither stored nor pending). */
static void disk_drop(struct spool *s)
{
	char path[PATH_MAX];

	if (s->rfd >= 0)
		close(s->rfd);
	if (s->wfd >= 0)
		close(s->wfd);
	s->rfd = s->wfd = -1;
	for (unsigned n = s->rseg; n <= s->wseg; n++) {
		seg_path(s, n, path, sizeof(path));
		unlink(path);
	}
	s->wseg++;
	s->rseg = s->wseg;
	s->roff = s->woff = 0;
	s->disk_read = s->disk_written;
	s->st.disk_bytes = 0;
	s->disk_mode = 0;
}

/* With the lock held: the next entry of the disk part. */
static int disk_take(struct spool *s, struct spool_entry *ent, struct error *e)
{
	char path[PATH_MAX];
	struct ent_hdr h;
	int ok;

	for (;;) {
		if (s->rseg == s->wseg && s->roff >= s->woff) {
			/* read empty: memory again, and the files start over */
			if (s->wfd >= 0 && ftruncate(s->wfd, 0) == 0 &&
			    lseek(s->wfd, 0, SEEK_SET) == 0)
				s->woff = 0;
			s->roff = 0;
			if (s->woff == 0)
				s->disk_mode = 0;
			return 0;
		}
		/*
		 * The reads go without the lock: the producer only appends past
		 * (wseg, woff), and rfd, rseg, roff and rbuf are the consumer's.
		 * The consumer (ingest) may run at a lower priority than the
		 * producer (the drain thread): preempted while holding the lock
		 * it would keep the rings from being emptied.
		 */
		memset(&h, 0, sizeof(h));
		pthread_mutex_unlock(&s->lock);
		if (s->rfd < 0) {
			seg_path(s, s->rseg, path, sizeof(path));
			s->rfd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		}
		ok = s->rfd >= 0 && fd_pread_all(s->rfd, &h, sizeof(h), s->roff) == 1 &&
		     h.magic == SEG_MAGIC && h.kind != KIND_END && h.len <= SPOOL_SEGMENT_MAX;
		if (ok && h.len > s->rcap) {
			s->rcap = h.len;
			s->rbuf = xrealloc(s->rbuf, s->rcap);
		}
		if (ok && h.len)
			ok = fd_pread_all(s->rfd, s->rbuf, h.len, s->roff + sizeof(h)) == 1;
		pthread_mutex_lock(&s->lock);
		if (s->rfd < 0 || (!ok && !(h.magic == SEG_MAGIC && h.kind == KIND_END)))
			goto bad;
		if (h.kind == KIND_END) {
			close(s->rfd);
			s->rfd = -1;
			seg_path(s, s->rseg, path, sizeof(path));
			unlink(path);
			s->disk_read += sizeof(h);
			s->rseg++;
			s->roff = 0;
			continue;
		}
		s->roff += sizeof(h) + ((h.len + 7) & ~7ULL);
		s->disk_read += sizeof(h) + ((h.len + 7) & ~7ULL);
		fill(ent, &h, s->rbuf);
		return 1;
	}
bad:
	seg_path(s, s->rseg, path, sizeof(path));
	error_set(e, "cannot read the spool segment %s at offset %" PRIu64 ": %s: its "
		  "records are lost", path, s->roff, errno ? strerror(errno) : "malformed");
	disk_drop(s);
	return -1;
}

int spool_take(struct spool *s, struct spool_entry *ent, struct error *e)
{
	struct node *old;
	int r = 0;

	pthread_mutex_lock(&s->lock);
	old = s->taken;
	if (old) {
		s->st.mem_bytes -= sizeof(*old) + old->h.len;
		s->taken = NULL;
	}
	if (s->head) {
		struct node *n = s->head;

		s->head = n->next;
		if (!s->head)
			s->tail = NULL;
		s->taken = n;
		fill(ent, &n->h, n->data);
		r = 1;
	} else if (s->disk_mode) {
		errno = 0;
		r = disk_take(s, ent, e);
		s->st.disk_bytes = s->disk_written - s->disk_read;
	}
	if (r == 1 && !ent->is_pass) {
		s->st.records_out += ent->records;
		s->st.samples_out += ent->samples;
		if (ent->src < SPOOL_MAX_SRC)
			s->src_out[ent->src] += ent->samples;
	}
	/* the oldest chunk held: not known exactly on disk; the next taken
	 * chunk's copy time is close enough for a lag */
	if (!s->head && !s->disk_mode)
		s->st.oldest_ns = 0;
	else if (s->head)
		s->st.oldest_ns = s->head->h.time;
	else if (r == 1 && !ent->is_pass)
		s->st.oldest_ns = ent->time;
	pthread_mutex_unlock(&s->lock);
	free(old);	/* not under the lock: see disk_take */
	return r;
}

void spool_committed(struct spool *s)
{
	pthread_mutex_lock(&s->lock);
	s->state->records_committed = s->st.records_out;
	s->state->samples_committed = s->st.samples_out;
	for (int i = 0; i < SPOOL_MAX_SRC; i++)
		s->state->src[i].samples_committed = s->src_out[i];
	pthread_mutex_unlock(&s->lock);
}

void spool_source(struct spool *s, uint32_t src, uint32_t cpu)
{
	if (src >= SPOOL_MAX_SRC)
		return;
	pthread_mutex_lock(&s->lock);
	s->state->src[src].cpu = cpu;
	s->state->src[src].named = 1;
	pthread_mutex_unlock(&s->lock);
}

void spool_get_stats(struct spool *s, struct spool_stats *st)
{
	pthread_mutex_lock(&s->lock);
	*st = s->st;
	pthread_mutex_unlock(&s->lock);
}

/* Free s; with keep, its files stay for spool_orphan. */
static void spool_free(struct spool *s, int keep)
{
	char path[PATH_MAX];

	if (!s)
		return;
	while (s->head) {
		struct node *n = s->head;

		s->head = n->next;
		free(n);
	}
	free(s->taken);
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
	pthread_mutex_destroy(&s->lock);
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
