/*
 * stacks.h - the call stacks of a session (schema 014), named, with what
 * their samples weigh: the one source of report --children, --callers and
 * --callees, strobe flamegraph, and the folded, pprof and gecko exports.
 *
 * stacks_load() reads stack_agg when the filters allow (pid, comm, binary,
 * cgroup, mode: as report.h's histogram), else it scans the raw samples
 * (time range): either way the set holds one entry per distinct (stack,
 * process, comm) with its sums.  Frames are named once per distinct
 * location with the resolver (resolve.h): locs[] are the distinct (binary,
 * offset) pairs, syms[] the distinct functions (binary and symbol) they
 * fall in, so that frames of one function compare equal by their sym.
 *
 * Filters apply to the samples, as in report.h (a --binary filter keeps
 * the samples whose own location, frame 0, is in that binary; --kernel
 * and --user those whose frame 0 is, or is not, in the kernel).  They are
 * the ones of report.c (qfilter.h).  Samples recorded without a stack are
 * counted in no_stack and not in the set.  An entry's locs are in the
 * order of the stored frames; entries of one stack share them (unless the
 * stack has JIT code named per process).
 *
 * Made by stacks.c, stacksread.c and stacksscan.c (stacks_int.h).
 */
#ifndef STROBE_STACKS_H
#define STROBE_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include "db.h"
#include "report.h"

/* A function: where frames are grouped in reports and flame graphs. */
struct stack_sym {
	int64_t binary_id;
	const char *binary;	/* resolver's display name */
	const char *build_id;	/* hex, or NULL */
	const char *symbol;	/* "[unknown]" when none covers the offset */
	int kernel;		/* a kernel function */
};

/* A distinct frame location. */
struct stack_loc {
	int64_t binary_id;
	uint64_t offset;	/* as stored: return addresses less one */
	uint32_t sym;		/* index in stack_set.syms */
	uint32_t pid;		/* 0, or the process of JIT code named from its
				 * perf map (resolver_by_pid(), resolve.h): such
				 * locations are kept apart by pid */
};

#define STACK_INCOMPLETE	1u	/* stacks.flags bit 0 (schema 014) */

struct stack_entry {
	int64_t stack_id;	/* stacks.id */
	uint32_t pid;
	uint64_t start_ns;	/* the process (pid@start, schema 11) */
	const char *comm;	/* its command name ("[unknown]" when none) */
	uint32_t flags;		/* stacks.flags */
	uint32_t nr;		/* frames */
	const uint32_t *locs;	/* nr indices in stack_set.locs, leaf first */
	uint64_t samples;
	uint64_t weight;	/* periods when stack_set.weighted, else samples */
	uint64_t c[STROBE_MAX_COUNTERS];	/* counter increases */
};

struct stack_set {
	struct db_session session;
	int nr_events;			/* counting events of the session */
	char events[STROBE_MAX_COUNTERS][64];	/* their names, as given with -e */
	int weighted;			/* weights are periods: they differ */
	struct stack_sym *syms;
	size_t nr_syms;
	struct stack_loc *locs;
	size_t nr_locs;
	struct stack_entry *stacks;
	size_t nr_stacks;
	uint64_t samples;		/* in the set */
	uint64_t weight;		/* sum of the entries' weight */
	uint64_t total[STROBE_MAX_COUNTERS];
	uint64_t no_stack;		/* samples that passed the filters with no stack */
	uint64_t incomplete;		/* samples whose stack is STACK_INCOMPLETE */
	char call_graph[32];		/* sessions.call_graph, "" when none */
	char notes[8][256];		/* problems to show, as report_summary's:
					 * binaries that could not be named, stacks
					 * missing, pids that were several processes */
	int nr_notes;
};

/* The stacks of o->session (0: the latest) that pass o's filters (o->by,
 * limit and inline_chain are ignored).  A session recorded without -g
 * fails with an error saying so. */
struct stack_set *stacks_load(struct db *db, const struct report_opts *o, struct error *e);
void stacks_free(struct stack_set *set);

/*
 * The stacks of a window: stacks_load() over [from_ns, to_ns) of
 * o->session (ns since its start; report.h: report_opts_window()) with
 * o's other filters, o's own range replaced.  A window's flame graph is
 * flame_tree_build() of it (flame.h); neither prints.  For a server (the
 * explorer) as much as for the commands' --from/--to.
 */
struct stack_set *stacks_window(struct db *db, const struct report_opts *o, int64_t from_ns,
				int64_t to_ns, struct error *e);

/*
 * A window's sums by the entries of whole, the set of its session with
 * o's filters and no time range (stacks_load()), so that a server that
 * shows window after window of one session reads and names its stacks
 * once (flameindex.h): sums[i] (whole->nr_stacks of them) gets entry i's
 * samples in [from_ns, to_ns) (what < 0) or its increases of counting
 * event what.  0; 1 when a sample of the window has no entry in whole (the
 * session grew since whole was read: read it again) or whole's stack ids
 * are too sparse to index (use stacks_window()); -1 with e set.  Makes an
 * index in whole the first time: not for two threads at once.
 */
int stacks_window_sums(struct db *db, const struct stack_set *whole, const struct report_opts *o,
		       int64_t from_ns, int64_t to_ns, int what, uint64_t *sums, struct error *e);

/*
 * Each sample of set's session that passes o's filters, in time order:
 * fn gets its time (ns since the session start), cpu, tid and its entry in
 * set (an index in set->stacks), or is not called for samples without a
 * stack.  For the gecko export (stacks over time).
 */
typedef int (*stacks_sample_fn)(void *ctx, int64_t time_ns, uint32_t cpu, uint32_t tid,
				size_t entry, struct error *e);
int stacks_scan(struct db *db, const struct stack_set *set, const struct report_opts *o,
		stacks_sample_fn fn, void *ctx, struct error *e);

#endif
