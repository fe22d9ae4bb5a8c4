/*
 * binhold.c - the files of executable mappings held open from drain to
 * ingest (see binhold.h).
 *
 * The waiting records are a ring in the order they were noted; ingest
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
};

struct binhold *binhold_new(size_t max_files, size_t max_notes)
{
	struct binhold *h = xcalloc(1, sizeof(*h));

	pthread_mutex_init(&h->lock, NULL);
	h->max_files = max_files ? max_files : 1;
	h->max_notes = max_notes ? max_notes : 1;
	h->files = xcalloc(h->max_files, sizeof(*h->files));
	for (size_t i = 0; i < h->max_files; i++)
		h->files[i].fd = -1;
	h->notes = xcalloc(h->max_notes, sizeof(*h->notes));
	return h;
}

void binhold_free(struct binhold *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->max_files; i++)
		if (h->files[i].fd >= 0)
			close(h->files[i].fd);
	pthread_mutex_destroy(&h->lock);
	free(h->files);
	free(h->notes);
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
	if (file >= 0) {
		h->files[file].refs++;
		h->st.noted++;
	} else if (over) {
		h->st.over++;
	}
}

/*
 * The file of r's mapping, opened as the mapping itself: O_PATH first (a
 * device mapped executable is never opened for real), then, once fstat
 * finds a regular file (of the record's device and inode when it has
 * them), opened for reading through that handle.  -1 if not.
 */
static int mapping_open(const struct binhold_rec *r, struct stat *st)
{
	char path[96];
	int pfd, fd = -1;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64,
		 r->pid, r->start, r->end);
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	if (fstat(pfd, st) == 0 && S_ISREG(st->st_mode) &&
	    (!r->has_ino || (major(st->st_dev) == r->maj && minor(st->st_dev) == r->min &&
			     (uint64_t)st->st_ino == r->ino))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", pfd);
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	}
	close(pfd);
	return fd;
}

void binhold_note(struct binhold *h, const struct binhold_rec *r)
{
	struct stat st;
	int i, fd;

	pthread_mutex_lock(&h->lock);
	if (r->has_ino) {
		/* the file held already: no open (a file held is alive, so
		 * its inode number names no other file meanwhile) */
		i = file_find(h, makedev(r->maj, r->min), (ino_t)r->ino);
		if (i >= 0 && h->files[i].gen_known && h->files[i].gen == r->gen) {
			note_add(h, r, i, 0);
			pthread_mutex_unlock(&h->lock);
			return;
		}
	}
	pthread_mutex_unlock(&h->lock);

	fd = mapping_open(r, &st);

	pthread_mutex_lock(&h->lock);
	if (fd < 0) {
		h->st.failed++;
		pthread_mutex_unlock(&h->lock);
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
		pthread_mutex_unlock(&h->lock);
		return;
	}
	if (r->has_ino && !h->files[i].gen_known) {
		h->files[i].gen_known = 1;
		h->files[i].gen = r->gen;
	}
	note_add(h, r, i, 0);
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
		break;
	}
	ring_trim(h);
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
