/*
 * spool.h - the bounded FIFO between the thread that empties the kernel
 * rings and ingest: raw ring bytes, in memory first, then in segment files
 * on disk when ingest falls behind by more than the memory bound.
 *
 * The drain thread (the only producer) copies what a ring holds into one
 * chunk (spool_put) and, after each pass over all rings, puts a pass mark
 * with the pass's start time (spool_pass).  Ingest (the only consumer)
 * takes entries in the order they were put (spool_take): a pass mark says
 * that every record written before its time, less the time a record may
 * take to reach its ring, has been taken.
 *
 * Bounds: mem_max bytes of chunks in memory, then disk_max bytes in files
 * under dir (none: memory only).  When both are full, spool_put refuses
 * the chunk (1): the producer leaves the records in their ring, where the
 * kernel counts what no longer fits as lost, with its time, as with any
 * other loss.  Once a chunk went to disk, later ones follow it there until
 * ingest has read the disk empty, so that order is kept; a disk that
 * fails a write ends that run at once, and memory takes what follows
 * (ingest reads the run first).
 *
 * Crash accounting: the counters of what was put and what ingest has
 * stored (spool_committed) live in a small file in dir, mapped shared, so
 * they survive strobed being killed; spool_orphan() reads them on the next
 * start and says what was lost.
 *
 * One producer and one consumer, without a lock: the producer never waits
 * for the consumer (spool_int.h says how).  spool_get_stats, spool_committed
 * and spool_take are the consumer's; spool_get_counts may be called from
 * any thread; no global state.
 */
#ifndef STROBE_SPOOL_H
#define STROBE_SPOOL_H

#include <stddef.h>
#include <stdint.h>
#include "util.h"

#define SPOOL_MEM_DEFAULT	(256ULL << 20)
#define SPOOL_DISK_DEFAULT	(4ULL << 30)
#define SPOOL_SEGMENT_MAX	(64ULL << 20)	/* bytes per segment file */
#define SPOOL_MAX_SRC		1024		/* sources counted per CPU for crashes */

struct spool_limits {
	uint64_t mem_max;		/* bytes of chunks held in memory */
	uint64_t disk_max;		/* bytes of chunks in segment files */
};

/* One entry handed out by spool_take; data is valid until the next take. */
struct spool_entry {
	int is_pass;			/* a pass mark: time is its start */
	uint32_t src;			/* chunk: the ring it came from */
	uint64_t time;			/* chunk: when it was copied; mark: pass start */
	uint64_t records, samples;	/* chunk: what it holds */
	const unsigned char *data;
	size_t len;
};

struct spool_stats {
	uint64_t mem_bytes, disk_bytes;		/* held now */
	uint64_t mem_peak, disk_peak;		/* the most held at once */
	uint64_t records_in, samples_in;	/* put so far */
	uint64_t records_out, samples_out;	/* taken so far */
	uint64_t oldest_ns;			/* copy time of the oldest chunk held, 0: none */
	uint64_t refused;			/* puts refused and rings left not emptied
						 * (spool_short), for want of room */
	uint64_t disk_errors;			/* segment writes that failed (then
						 * memory takes the chunk if it has
						 * room, else it is refused) */
};

struct spool;

/* A spool bounded by lim; dir (NULL: no disk, no crash accounting) is
 * created 0700 and must not exist or be an empty directory. */
struct spool *spool_open(const char *dir, const struct spool_limits *lim, struct error *e);

/* Producer: one chunk of src: the bytes a (alen) then b (blen), holding
 * records records of which samples are samples, copied at time.  0 put,
 * 1 refused (no room in memory or on disk). */
int spool_put(struct spool *s, uint32_t src, uint64_t time, const void *a, size_t alen,
	      const void *b, size_t blen, uint64_t records, uint64_t samples);

/* Producer: the most bytes one chunk may have now (only the consumer
 * makes more room meanwhile). */
uint64_t spool_room(struct spool *s);

/* Consumer: hold at most bytes of chunks in memory from now on (0: up to
 * mem_max), the rest going to disk when there is one, as if memory were
 * full.  A chunk the disk has no room for, or fails to write, still goes
 * to memory up to mem_max, and after a failed write (counted in
 * disk_errors) the cap is ignored for the spool's life.  For a consumer
 * that waits on purpose (ingest on busy CPUs): a page of the memory ring
 * is faulted in and zeroed the first time it is written, which on such
 * CPUs cost the producer about twice what writing the same bytes to a
 * segment file did (doc/PERFORMANCE.md). */
void spool_mem_cap(struct spool *s, uint64_t bytes);

/* Producer: a ring held more than spool_room (counted as refused). */
void spool_short(struct spool *s);

/* Before any put: source src holds CPU cpu's records (for spool_orphan). */
void spool_source(struct spool *s, uint32_t src, uint32_t cpu);

/* Producer: a pass over all rings that began at time is complete. */
void spool_pass(struct spool *s, uint64_t time);

/* Consumer: the oldest entry into *ent: 1, or 0 when there is none.
 * -1: a segment file could not be read (e names it); the spool's disk
 * part is then given up, counted in its stats as taken. */
int spool_take(struct spool *s, struct spool_entry *ent, struct error *e);

/* Consumer: everything taken so far is stored in the database. */
void spool_committed(struct spool *s);

void spool_get_stats(struct spool *s, struct spool_stats *st);
/* Any thread: the counters of st (records and samples in and out,
 * refused, disk errors) and the bytes held in memory and on disk; the
 * peaks and oldest_ns are left 0. */
void spool_get_counts(struct spool *s, struct spool_stats *st);

/* Free everything and remove dir with its files. */
void spool_close(struct spool *s);

/* Free s but leave dir as a killed strobed would (for spool_orphan): a
 * strobed that exits without storing the session. */
void spool_leave(struct spool *s);

/*
 * What a spool left behind in dir by a strobed that died: fn is called
 * for each source with samples put but never stored, with its CPU (-1 if
 * never named); *records gets all the records (samples and side-band) put
 * but never stored, *last_ns the copy time of the last chunk put.  1
 * found, 0 no spool there, -1 error (or fn's error).  Nothing is removed:
 * spool_remove does, once what fn was told is stored.
 */
typedef int (*spool_lost_fn)(void *ctx, int cpu, uint64_t samples, struct error *e);
int spool_orphan(const char *dir, spool_lost_fn fn, void *ctx, uint64_t *records,
		 uint64_t *last_ns, struct error *e);

/* Remove a spool's directory dir and its files (none: 0). */
int spool_remove(const char *dir, struct error *e);

#endif
