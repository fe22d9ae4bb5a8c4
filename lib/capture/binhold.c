/*
 * binhold.c - the files of executable mappings held open from drain to
 * ingest (see binhold.h).
 *
 * binhold_note only queues the record (the drain thread must stay cheap,
 * and opening map_files takes the process's mmap lock, which the process
 * may hold for long); a thread of its own, at strobed's priority, opens the
 * files.  The waiting records are a ring in the order they were noted; ingest
 * takes them in about that order (the merge reorders them across CPUs by
 * a few milliseconds at most), so a take looks from the oldest on and
 * finds its record near the start.  The files are a small array searched
 * by device and inode.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "binhold.h"
#include "util.h"

struct held {
	int fd;			/* -1: a free slot */
	uint32_t refs;		/* waiting records that name it */
	dev_t dev;
	ino_t ino;
	int gen_known;		/* gen: the generation a record gave */
	uint64_t gen;
};

struct note {
	uint32_t pid;
	int live;		/* not taken yet */
	int over;		/* a limit left it without a file */
	int file;		/* index in files, or -1 */
	uint64_t time, start;
};

struct binhold {
	pthread_mutex_t lock;
	struct held *files;
	size_t max_files, nr_files;
	struct note *notes;
	size_t max_notes;
	uint64_t head, tail;	/* notes [tail, head) are in the ring */
	struct binhold_stats st;
	/* records noted, waiting for the holder thread: [qtail, qhead) of
	 * max_notes; the one it opens now (busy), taken meanwhile (cancel) */
	struct binhold_rec *queue;
	uint64_t qhead, qtail;
	int busy, cancel;
	struct binhold_rec cur;
	pthread_t thread;
	int thread_on, quit;
	pthread_cond_t work, idle;
};

static void *holder_main(void *arg);

struct binhold *binhold_new(size_t max_files, size_t max_notes)
{
	struct binhold *h = xcalloc(1, sizeof(*h));
	struct rlimit rl;

	/* a quarter of the fds strobed may have, at most: the rest are the
	 * rings', the spool's, the clients' */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    max_files > rl.rlim_cur / 4)
		max_files = rl.rlim_cur / 4;
	pthread_mutex_init(&h->lock, NULL);
	h->max_files = max_files ? max_files : 1;
	h->max_notes = max_notes ? max_notes : 1;
	h->files = xcalloc(h->max_files, sizeof(*h->files));
	for (size_t i = 0; i < h->max_files; i++)
		h->files[i].fd = -1;
	h->notes = xcalloc(h->max_notes, sizeof(*h->notes));
	h->queue = xcalloc(h->max_notes, sizeof(*h->queue));
	pthread_cond_init(&h->work, NULL);
	pthread_cond_init(&h->idle, NULL);
	/* without the thread every record is counted over: ingest looks for
	 * the file itself, as before */
	h->thread_on = pthread_create(&h->thread, NULL, holder_main, h) == 0;
	return h;
}

void binhold_free(struct binhold *h)
{
	if (!h)
		return;
	if (h->thread_on) {
		pthread_mutex_lock(&h->lock);
		h->quit = 1;
		pthread_cond_signal(&h->work);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->thread, NULL);
	}
	for (size_t i = 0; i < h->max_files; i++)
		if (h->files[i].fd >= 0)
			close(h->files[i].fd);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->work);
	pthread_cond_destroy(&h->idle);
	free(h->files);
	free(h->notes);
	free(h->queue);
	free(h);
}

/* With h->lock held: one waiting record less for file i. */
static void file_release(struct binhold *h, int i)
{
	struct held *f;

	if (i < 0)
		return;
	f = &h->files[i];
	if (--f->refs == 0) {
		close(f->fd);
		f->fd = -1;
		h->nr_files--;
	}
}

/* With h->lock held: the file held of dev and ino, or -1. */
static int file_find(struct binhold *h, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < h->max_files; i++)
		if (h->files[i].fd >= 0 && h->files[i].dev == dev && h->files[i].ino == ino)
			return (int)i;
	return -1;
}

/* With h->lock held: drop the taken records at the ring's start. */
static void ring_trim(struct binhold *h)
{
	while (h->tail < h->head && !h->notes[h->tail % h->max_notes].live)
		h->tail++;
}

/* With h->lock held: r waits, for file (or -1: over says why none). */
static void note_add(struct binhold *h, const struct binhold_rec *r, int file, int over)
{
	struct note *n;

	/* its reference first: the oldest record going may be file's last */
	if (file >= 0) {
		h->files[file].refs++;
		h->st.noted++;
	} else if (over) {
		h->st.over++;
	}
	if (h->head - h->tail == h->max_notes) {
		/* full: the oldest goes (a record that was never delivered,
		 * most likely) */
		n = &h->notes[h->tail % h->max_notes];
		if (n->live) {
			file_release(h, n->file);
			h->st.over++;
			n->live = 0;
		}
		h->tail++;
		ring_trim(h);
	}
	n = &h->notes[h->head++ % h->max_notes];
	*n = (struct note){ .pid = r->pid, .live = 1, .over = over, .file = file,
			    .time = r->time, .start = r->start };
}

/*
 * The file of r's mapping, opened as the mapping itself: O_PATH first (a
 * device mapped executable is never opened for real), then, once fstat
 * finds a regular file (of the record's device and inode when it has
 * them), opened for reading through that handle; never a file on FUSE,
 * whose daemon would answer when it pleases.  -1 with errno if not.
 */
static int mapping_open(const struct binhold_rec *r, struct stat *st)
{
	char path[96];
	int pfd, fd = -1, err = ESRCH;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64,
		 r->pid, r->start, r->end);
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	if (fd_on_fuse(pfd) == 1) {	/* before its daemon is asked a thing */
		close(pfd);
		errno = EFTYPE_FUSE;
		return -1;
	}
	if (fstat(pfd, st) == 0 && S_ISREG(st->st_mode) &&
	    (!r->has_ino || (major(st->st_dev) == r->maj && minor(st->st_dev) == r->min &&
			     (uint64_t)st->st_ino == r->ino))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", pfd);
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		err = errno;
	}
	close(pfd);
	errno = err;	/* EMFILE, ENFILE: a limit, not the mapping */
	return fd;
}

/* The holder thread: hold r's file (h->lock held; dropped while opening). */
static void hold_one(struct binhold *h, const struct binhold_rec *r)
{
	struct stat st;
	int i, fd, err;

	if (r->has_ino) {
		/* the file held already: no open (a file held is alive, so
		 * its inode number names no other file meanwhile) */
		i = file_find(h, makedev(r->maj, r->min), (ino_t)r->ino);
		if (i >= 0 && h->files[i].gen_known && h->files[i].gen == r->gen) {
			note_add(h, r, i, 0);
			return;
		}
	}
	h->busy = 1;
	h->cancel = 0;
	h->cur = *r;
	pthread_mutex_unlock(&h->lock);

	fd = mapping_open(r, &st);
	err = errno;

	pthread_mutex_lock(&h->lock);
	h->busy = 0;
	if (h->cancel) {
		/* taken meanwhile: ingest looked for the file itself */
		if (fd >= 0)
			close(fd);
		return;
	}
	if (fd < 0) {
		if (err == EMFILE || err == ENFILE)
			h->st.over++;	/* a limit, not the mapping */
		else
			h->st.failed++;
		return;
	}
	i = file_find(h, st.st_dev, st.st_ino);
	if (i >= 0) {
		close(fd);
	} else if (h->nr_files < h->max_files) {
		for (i = 0; h->files[i].fd >= 0; i++)
			;
		h->files[i] = (struct held){ .fd = fd, .dev = st.st_dev, .ino = st.st_ino };
		h->nr_files++;
		h->st.opened++;
		h->st.files_peak = MAX(h->st.files_peak, h->nr_files);
	} else {
		close(fd);
		note_add(h, r, -1, 1);
		return;
	}
	if (r->has_ino && !h->files[i].gen_known) {
		h->files[i].gen_known = 1;
		h->files[i].gen = r->gen;
	}
	note_add(h, r, i, 0);
}

static void *holder_main(void *arg)
{
	struct binhold *h = arg;

	pthread_mutex_lock(&h->lock);
	for (;;) {
		struct binhold_rec r;

		while (h->qhead == h->qtail && !h->quit) {
			pthread_cond_broadcast(&h->idle);
			pthread_cond_wait(&h->work, &h->lock);
		}
		if (h->quit)
			break;
		r = h->queue[h->qtail++ % h->max_notes];
		if (r.pid)		/* 0: taken while it waited */
			hold_one(h, &r);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

void binhold_note(struct binhold *h, const struct binhold_rec *r)
{
	pthread_mutex_lock(&h->lock);
	if (h->qhead - h->qtail == h->max_notes || !h->thread_on) {
		h->st.over++;
	} else {
		h->queue[h->qhead++ % h->max_notes] = *r;
	}
	pthread_mutex_unlock(&h->lock);
}

void binhold_kick(struct binhold *h)
{
	pthread_mutex_lock(&h->lock);
	if (h->qhead != h->qtail)
		pthread_cond_signal(&h->work);
	pthread_mutex_unlock(&h->lock);
}

void binhold_sync(struct binhold *h)
{
	binhold_kick(h);
	pthread_mutex_lock(&h->lock);
	while (h->thread_on && (h->qhead != h->qtail || h->busy))
		pthread_cond_wait(&h->idle, &h->lock);
	pthread_mutex_unlock(&h->lock);
}

int binhold_take(struct binhold *h, uint32_t pid, uint64_t t, uint64_t start, int *over)
{
	int fd = -1;

	*over = 0;
	pthread_mutex_lock(&h->lock);
	for (uint64_t k = h->tail; k < h->head; k++) {
		struct note *n = &h->notes[k % h->max_notes];

		if (!n->live || n->pid != pid || n->time != t || n->start != start)
			continue;
		n->live = 0;
		*over = n->over;
		if (n->file >= 0) {
			fd = fcntl(h->files[n->file].fd, F_DUPFD_CLOEXEC, 0);
			file_release(h, n->file);
		}
		ring_trim(h);
		pthread_mutex_unlock(&h->lock);
		return fd;
	}
	/* not held (yet): the holder thread must not hold it now */
	for (uint64_t k = h->qtail; k < h->qhead; k++) {
		struct binhold_rec *q = &h->queue[k % h->max_notes];

		if (q->pid == pid && q->time == t && q->start == start)
			q->pid = 0;
	}
	if (h->busy && h->cur.pid == pid && h->cur.time == t && h->cur.start == start)
		h->cancel = 1;
	pthread_mutex_unlock(&h->lock);
	return fd;
}

void binhold_get_stats(struct binhold *h, struct binhold_stats *st)
{
	pthread_mutex_lock(&h->lock);
	*st = h->st;
	st->files_now = h->nr_files;
	pthread_mutex_unlock(&h->lock);
}
