/*
 * binhold.h - the files of executable mappings, held open from the moment
 * the drain thread copies their MMAP2 record out of the kernel's ring
 * until ingest has read them.
 *
 * Ingest hashes a mapped binary and copies it into the cache when it
 * reaches the MMAP2 record, which under load is seconds after the drain:
 * by then the process may have exited, and a binary it deleted is gone
 * with its /proc/PID/map_files.  So each executable file mapping is
 * opened as soon as the drain thread has spooled its record (binhold_note),
 * through
 * /proc/PID/map_files/START-END, the mapping itself (never a path the
 * process names), a regular file with the record's device and inode when
 * the record has them (with a build-id instead, ingest checks that); and
 * ingest, when the record reaches it, gets a handle of it (binhold_take).
 * A file is held once, by device and inode, however many processes map
 * it, and closed when the last record noted for it was taken.  The opening
 * is done by a thread of binhold's own, so that the drain thread only
 * queues the record.
 *
 * Bounded: at most max_files files held and max_notes records waiting
 * (and max_notes queued for the thread).
 * A record past either gets no handle (the oldest waiting record makes
 * room for a new one); each is counted (over), and ingest falls back to
 * looking for the file itself.  Thread-safe: the drain thread notes,
 * ingest takes.
 */
#ifndef STROBE_BINHOLD_H
#define STROBE_BINHOLD_H

#include <stddef.h>
#include <stdint.h>

#define BINHOLD_FILES	512	/* and at most a quarter of RLIMIT_NOFILE */
#define BINHOLD_NOTES	8192

struct binhold;

struct binhold_stats {
	uint64_t noted;		/* records given a handle */
	uint64_t opened;	/* files opened (the others shared an open one) */
	uint64_t failed;	/* records whose mapping could not be opened as
				 * the file they name (the process gone
				 * already, the mapping changed, not a file) */
	uint64_t over;		/* records left without a handle by a limit */
	uint64_t files_now, files_peak;
};

/* Of the mapping of [start, end) of pid noted at time t (the record's
 * time): the record's device and inode when it has them (has_ino). */
struct binhold_rec {
	uint32_t pid;
	uint64_t time, start, end;
	int has_ino;
	uint32_t maj, min;
	uint64_t ino, gen;
};

struct binhold *binhold_new(size_t max_files, size_t max_notes);
/* Close every file still held. */
void binhold_free(struct binhold *h);

/* The drain thread: hold the file of r's mapping for ingest (queued for
 * binhold's own thread, no system call).  Note each record once; then
 * binhold_kick, once for all those of a pass: the thread wakes and opens
 * them. */
void binhold_note(struct binhold *h, const struct binhold_rec *r);
void binhold_kick(struct binhold *h);

/* Wait until the records noted so far are held (or failed): for tests. */
void binhold_sync(struct binhold *h);

/* Ingest: a handle (O_RDONLY, close it) of the file noted for the record
 * of pid at time t mapping start, or -1: none was.  *over is set when a
 * limit left it without one. */
int binhold_take(struct binhold *h, uint32_t pid, uint64_t t, uint64_t start, int *over);

void binhold_get_stats(struct binhold *h, struct binhold_stats *st);

#endif
