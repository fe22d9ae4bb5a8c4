/*
 * report_int.h - the private parts of report_build(), shared by the files
 * that make a report (see report.h for what it is):
 *
 *   report.c         the whole: report_build(), its table's lines and meta
 *                    data, and the session notes of a report;
 *   reportread.c     step 1, the aggregate reader: the samples that pass
 *                    the filters summed per location (struct loc), from
 *                    the histogram sample_agg or the raw samples; the
 *                    counts no sample got; notes on JIT symbol files;
 *   reportrank.c     steps 2 and 3: each location named and added to its
 *                    group (binary, symbol or line), the binaries that
 *                    could not be named noted, the groups ranked;
 *   reportderived.c  the derived columns (ipc, miss rates, per 1k
 *                    instructions) and the -M catalogue metrics.
 *
 * Nothing here is for other callers: report.h is the interface.
 */
#ifndef STROBE_REPORT_INT_H
#define STROBE_REPORT_INT_H

#include <stddef.h>
#include <stdint.h>
#include "otable.h"
#include "qfilter.h"
#include "report.h"

#define NR_NOTES ((int)(sizeof(((struct report_summary *)0)->notes) / \
			sizeof(((struct report_summary *)0)->notes[0])))

/* ---- step 1: (binary, offset, mode) rows ---- */

struct loc {
	int64_t binary_id;
	uint64_t offset;
	uint32_t mode;
	uint32_t pid;			/* 0, or the process of JIT code ([anon]
					 * named from its perf map: resolve.h) */
	int64_t proc;			/* 0, or with --pid P of a reused P: the
					 * start of its process (procset.h); with
					 * --by cgroup its cgroup + 1 */
	size_t bin;			/* index in bins, set in step 2 */
	uint64_t samples;
	uint64_t period;		/* sum of the samples' periods */
	uint64_t c[STROBE_MAX_COUNTERS];
};

/* The locations in the order found, and an index of them by key
 * (reportread.c says why it is not an otable). */
struct locmap {
	struct loc *v;
	size_t n, cap;
	size_t *slot;			/* index + 1 into v; 0: empty */
	size_t mask;
};

/* ---- step 2: binaries (their strings are the resolver's) ---- */

struct bin {
	int64_t id;
	const char *display;		/* binary column */
	const char *key;
	const char *build_id;		/* build_id column, NULL: none */
	const char *problem;		/* non-NULL: cannot be symbolised */
	const char *note;		/* non-NULL: a warning about it */
	int no_symbols;			/* copy has no function symbols */
	const char *debug;		/* its separate debug file, or NULL */
	const char *debug_note;		/* refused debug files, or NULL */
	uint64_t samples;		/* filtered samples in this binary */
};

/* ---- step 3: groups ---- */

struct group {
	size_t bin;
	int64_t proc;			/* as loc.proc */
	const char *binary;		/* bins[bin].display */
	char *symbol;			/* NULL in --by binary */
	char *source;			/* NULL unless --by line */
	char *inl;			/* NULL unless --inline: the inline chain */
	size_t chain;			/* the next group of its group_key (index
					 * + 1; 0: none) */
	uint64_t samples;
	uint64_t weight;		/* samples, or their periods' sum (weighted) */
	uint64_t c[STROBE_MAX_COUNTERS];
};

/* Groups in the order found, found again by their names: the hash of
 * their strings (which may be NULL), their binary and process key an
 * otable of the first group of that key, whose others are chained. */
struct group_key {
	uint64_t hash;			/* of symbol, source and inl */
	uint64_t bin;
	int64_t proc;
};

struct group_idx {
	struct group_key k;
	size_t first;			/* index + 1 in groupmap.v */
};

struct groupmap {
	struct group *v;
	size_t n, cap;
	struct otable idx;		/* struct group_key -> struct group_idx */
};

/* ---- the state of one report_build() ---- */

struct report {
	struct db *db;
	const struct report_opts *o;
	struct report_summary *sum;
	int nev;
	struct resolver *res;
	struct locmap locs;
	struct bin *bins;
	size_t nbins, bins_cap;
	struct groupmap groups;
	int dropped_notes;
	int period_unknown;		/* a sample without its period was read */
	struct qfilter qf;		/* the filters (qfilter.h) */
};

/* report.c */
void report_note(struct report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* reportread.c */
void report_locmap_init(struct locmap *m);
void report_locmap_free(struct locmap *m);
int report_gather(struct report *r, struct error *e);
int report_jit_notes(struct report *r, struct error *e);

/* reportrank.c */
void report_name_and_group(struct report *r);
void report_rank_groups(struct report *r);
void report_groupmap_init(struct groupmap *m);
void report_groupmap_free(struct groupmap *m);

#endif
