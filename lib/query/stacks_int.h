/*
 * stacks_int.h - the private parts of stacks_load() and stacks_scan(),
 * shared by the files that make a stack set (see stacks.h for what it is):
 *
 *   stacks.c      the whole: stacks_load(), its weights, the naming of its
 *                 locations (one sym per function), its notes;
 *   stacksread.c  reading and merging: the (stack, process, comm) sums
 *                 that pass the filters, the stacks they use with their
 *                 frames interned as distinct locations, and the entries
 *                 made of both;
 *   stacksscan.c  stacks_scan(): the set's samples again, in time order.
 *
 * Nothing here is for other callers: stacks.h is the interface.
 */
#ifndef STROBE_STACKS_INT_H
#define STROBE_STACKS_INT_H

#include <stddef.h>
#include <stdint.h>
#include "otable.h"
#include "qfilter.h"
#include "stacks.h"

#define NR_NOTES ((int)(sizeof(((struct stack_set *)0)->notes) / \
			sizeof(((struct stack_set *)0)->notes[0])))

/* A key of four integers, and an otable entry mapping one to an index
 * into an array (of entries, locations, comms): 32 bytes of key, no
 * padding. */
struct k4 {
	int64_t v[4];
};

struct k4idx {
	struct k4 k;
	size_t i;
};

static inline void k4_table_init(struct otable *t)
{
	otable_init(t, sizeof(struct k4idx), sizeof(struct k4), 1024);
}

/* The entry of k in t, added (i 0, *added 1) if missing.  Valid until
 * the next k4_get() on t. */
static inline struct k4idx *k4_get(struct otable *t, const struct k4 *k, int *added)
{
	return otable_get_sized(t, k, sizeof(*k), added);
}

/* The entry of k in t, or NULL. */
static inline struct k4idx *k4_find(const struct otable *t, const struct k4 *k)
{
	return otable_find_sized(t, k, sizeof(*k));
}

/* ---- the state of one stacks_load() ---- */

/* An entry being gathered: key (stack_id, pid, comm_id, start_ns). */
struct gent {
	struct k4 k;
	uint64_t samples, period;
	uint64_t c[STROBE_MAX_COUNTERS];
};

/* A distinct stack read from the stacks table. */
struct stk {
	int64_t id;
	uint32_t nr, flags;
	size_t lo;		/* its locs in pool (those of pid 0) */
	int bypid;		/* a frame is in a binary named per process */
};

/* A location being interned: key (binary_id, offset, pid, 0). */
struct iloc {
	struct k4 k;
};

/* What stacks_free() frees beyond the public set. */
struct stacks_priv {
	struct stack_set set;
	struct resolver *res;	/* owns the syms' strings */
	int64_t *comm_ids;	/* per entry */
	struct pcomm {
		int64_t id;
		char *name;
	} *comms;		/* the distinct comm names */
	size_t ncomms;
	uint32_t *pool;		/* the entries' locs */
	int raw;		/* entries were read from the raw samples */
	/* the entries by stack id, for stacks_window_sums() (made by its
	 * first call): efirst[stack - elo] is the index + 1 of the stack's
	 * first entry, enext[i] that of the next after entry i (0: none) */
	uint32_t *efirst, *enext;
	int64_t elo;
	size_t enid;
};

struct sload {
	struct db *db;
	const struct report_opts *o;
	struct stacks_priv *p;
	struct stack_set *set;
	struct qfilter qf;
	int raw, nev;
	int dropped_notes;
	int period_unknown;
	struct gent *g;
	size_t ng, gcap;
	struct otable gmap;	/* gent key -> index in g */
	/* By stack id - idlo (ids idlo..idlo + nid - 1, the session's; NULL
	 * when its range is too wide): the index + 1 in g of the entry last
	 * added of that stack (a cache in front of gmap: most stacks are
	 * one process's), then, from stacks_frames_load(), in stks. */
	uint32_t *byid;
	int64_t idlo;
	size_t nid;
	struct stk *stks;
	size_t nstks, stkcap;
	struct iloc *locs;
	size_t nlocs, loccap;
	struct otable lmap;	/* iloc key -> index in locs */
	size_t npool, poolcap;
	size_t *entry_lo;	/* per entry: its locs in pool */
	struct otable cmap;	/* (comm_id, 0, 0, 0) -> index in p->comms */
	size_t commcap;
	uint64_t missing;	/* samples whose stack is not stored */
	/* stacks_window_sums(): the set of the whole session whose entries
	 * the window's samples are summed into (sums[entry]), by what */
	const struct stack_set *whole;
	uint64_t *sums;
	int sum_what;
};

/* stacks.c */
void stacks_note(struct sload *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* stacksread.c */
int stacks_gather(struct sload *l, struct error *e);
int stacks_no_stack_agg(struct sload *l, struct error *e);
int stacks_frames_load(struct sload *l, struct resolver *res, struct error *e);
int stacks_entries_make(struct sload *l, struct resolver *res, struct error *e);
/* The raw samples of l's range summed into l->sums by l->whole's entries:
 * 0, 1 when a sample has no entry there (or whole's stack ids are too
 * wide to index), -1 with e set. */
int stacks_sum_raw(struct sload *l, struct error *e);

#endif
