/*
 * resolve_int.h - the private parts of the resolver (resolve.h says what
 * it is for), shared by its three files:
 *
 *   resolve.c     the whole: its two tables (the binaries, one entry per
 *                 binaries.id, and the locations named so far, keyed by
 *                 (binary_id, offset): arrays indexed by otables), naming a location (symbol, line,
 *                 inline chain), the lookups;
 *   resolvebin.c  opening one binary: its row, then its cached copy
 *                 through symtab (here or in the symbol worker), its
 *                 separate debug file or MiniDebugInfo, or the session's
 *                 kallsyms snapshot for the kernel;
 *   resolvejit.c  JIT code: the perf map symbols of a process, read once
 *                 per pid.
 *
 * Nothing here is for other callers: resolve.h is the interface.
 */
#ifndef STROBE_RESOLVE_INT_H
#define STROBE_RESOLVE_INT_H

#include <stddef.h>
#include <stdint.h>
#include "bincache.h"
#include "db.h"
#include "otable.h"
#include "resolve.h"

enum bin_kind { BIN_FILE, BIN_KERNEL, BIN_NOFILE };

/* One binary.  Its build_id is the hex build-id of "buildid:" and
 * "kernel:" keys, the whole key for other file keys ("xxh3:", a content
 * hash, not a build-id, but still what identifies the exact file, and the
 * prefix keeps the two apart), and NULL for memory with no file. */
struct rbin {
	int64_t id;
	enum bin_kind kind;
	char *display;
	char *key;
	char *build_id;			/* NULL: none */
	struct symtab *st;		/* BIN_FILE with a usable copy */
	char *problem;			/* non-NULL: cannot be symbolised */
	char *note;			/* non-NULL: a warning (binaries.note) */
	int no_symbols;			/* copy has no function symbols */
	int own_fd;			/* the original, opened as the reader; -1: none */
	char *debug;			/* the debug file its symbols come from, or NULL */
	char *debug_note;		/* NULL, or why debug files were refused */
	int dbg_fd;			/* that debug file, open; -1: none */
	int wh;				/* its handle in r->worker; -1: none */
};

/* The perf map symbols of one process (schema 10), sorted by addr. */
struct rjsym {
	uint64_t addr, size;
	int64_t seq;		/* the later line wins where ranges overlap */
	char *name;
};

struct rjit {
	uint32_t pid;
	struct rjsym *v;
	size_t n;
};

struct rloc;

struct resolver {
	struct db *db;
	int64_t session_id;
	struct rjit *jits;		/* loaded on demand, one per pid asked */
	size_t njits, jits_cap;
	int jit_checked, jit_none;	/* whether the session has perf map symbols */
	struct bincache cache;		/* dir only: never created */
	char kallsyms_key[sizeof(((struct db_session *)0)->kallsyms_key)];
	struct kallsyms *ks;
	int ks_tried;
	char *ks_problem;
	char *debug_roots;		/* STROBE_DEBUG_DIRS, or NULL: the default */
	char *debuginfod_urls;		/* DEBUGINFOD_URLS, or NULL: not set */
	struct dbgfetch *fetch;		/* made on first need; NULL: none */
	int fetch_tried;
	char *fetch_summary;		/* resolver_debuginfod_summary() */
	int raw_names;			/* resolver_set_demangle(r, 0) */
	int want_inline;		/* resolver_set_inline(r, 1) */
	struct symworker *worker;	/* resolver_set_worker(); NULL: parse here */

	struct rbin *bins;
	size_t nbins, bins_cap;
	struct otable bin_idx;		/* binary id -> index into bins */

	struct rloc *locs;
	size_t nlocs, locs_cap;
	struct otable loc_idx;		/* (binary_id, offset) -> index into locs */
	size_t last_loc;		/* index + 1 of the last hit: a fast path */
};

/* resolvebin.c: fill b for binary id: its row, then its cached copy (and
 * debug file) or the kallsyms; b->problem set when it cannot be named. */
void resolve_bin_open(struct resolver *r, struct rbin *b, int64_t id);
/* resolvebin.c: free what b holds (its handle in r->worker closed). */
void resolve_bin_free(struct resolver *r, struct rbin *b);

/* resolvejit.c: whether the session has perf map symbols at all (asked
 * once). */
int resolve_jit_any(struct resolver *r);
/* resolvejit.c: the name pid's perf map gives addr, or NULL. */
const char *resolve_jit_name(struct resolver *r, uint32_t pid, uint64_t addr);
/* resolvejit.c: free every pid's symbols. */
void resolve_jit_free(struct resolver *r);

#endif
