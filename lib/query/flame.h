/*
 * flame.h - flame graphs and folded stacks from a stack_set (stacks.h).
 *
 * Frames are named as Brendan Gregg's FlameGraph tools name them, so that
 * strobe's folded output feeds flamegraph.pl and difffolded.pl as
 * stackcollapse-perf's does:
 *   - the root frame of a stack is its process's command name (comm);
 *   - a function is its (demangled) symbol;
 *   - a kernel function gets the suffix "_[k]";
 *   - code that no symbol covers is "[unknown] (BINARY)", BINARY the base
 *     name of the binary it is in, so that the unknown code of two
 *     binaries stays apart.
 * Names come from profiled binaries: every byte that is not printable
 * valid UTF-8 becomes '?', and ';' (the folded separator) becomes ':'.
 *
 * The merged call tree (struct flame_tree) has one node per distinct path
 * of names from the root: widths by samples (or periods, when the set is
 * weighted, as report.h's percent) or by one counting event.  A second
 * tree of a baseline session can be merged in (flame_tree_diff) for a
 * differential flame graph, or a tree keeping its nodes' sums
 * (flame_tree_build_sums) coloured by a metric (flamemetric.h).
 */
#ifndef STROBE_FLAME_H
#define STROBE_FLAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "stacks.h"
#include "util.h"

struct flame_metric;

/* What widths are: FLAME_WEIGHT (samples, or periods when set->weighted),
 * FLAME_SAMPLES, or a counting event's index (0 .. set->nr_events - 1). */
#define FLAME_WEIGHT	(-1)
#define FLAME_SAMPLES	(-2)

struct flame_node {
	uint32_t name;		/* index in flame_tree.names */
	uint32_t parent;	/* node index; the root is its own parent */
	uint32_t child, next;	/* first child, next sibling: 0 for none */
	uint32_t depth;		/* root 0, comm 1, outermost frame 2, ... */
	uint64_t value;		/* inclusive */
	uint64_t self;		/* of the stacks ending here */
	uint64_t base;		/* inclusive, in the baseline (diff) */
};

struct flame_tree {
	uint64_t *sums;			/* flame_tree_build_sums(): nsums per node,
					 * inclusive: [0] samples, [1 + i] counting
					 * event i's increases; else NULL */
	int nsums;			/* 1 + the set's events, or 0 */
	size_t cap_sums;
	struct flame_node *nodes;	/* nodes[0] is the root, "all" */
	size_t nr_nodes, cap_nodes;
	char **names;			/* sanitised frame names */
	size_t nr_names, cap_names;
	uint32_t *name_slot;		/* name hash table: index + 1, 0 empty */
	size_t nr_slots;
	uint32_t *node_slot;		/* (parent, name) hash table */
	size_t nr_node_slots;
	uint32_t max_depth;
	int diff;			/* base figures were merged in */
	uint64_t base_total;		/* the baseline's root value */
};

/* Write the name of set's frame location loc to buf (of len, NUL-ended);
 * with kernel_suffix the "_[k]" of kernel functions.  Returns buf. */
char *flame_frame_name(const struct stack_set *set, uint32_t loc, int kernel_suffix,
		       char *buf, size_t len);
/* Copy s to buf (of len) as a frame name: invalid UTF-8 and control
 * characters as '?', ';' as ':'.  Returns buf. */
char *flame_sanitize(const char *s, char *buf, size_t len);
/* The same with ';' kept: for text that is no frame name (the SVG's). */
char *flame_sanitize_text(const char *s, char *buf, size_t len);

/* The tree of set with widths by what (FLAME_*, or an event index).
 * NULL and e set when what is not an event of set. */
struct flame_tree *flame_tree_build(const struct stack_set *set, int what, struct error *e);
/* The same tree keeping per node the sums of the samples under it (sums,
 * nsums), of every stack through it, those of no width (with what an
 * event, its stacks without an increase) too: for a frame's metric
 * (flamemetric.h).  Nodes of no width are drawn and written by none. */
struct flame_tree *flame_tree_build_sums(const struct stack_set *set, int what,
					 struct error *e);
/*
 * The shape of set's tree, for flame_tree_reweigh(): every entry's path,
 * values 0; leaf[i] (set->nr_stacks of them) gets entry i's node.
 */
struct flame_tree *flame_tree_shape(const struct stack_set *set, uint32_t *leaf);
/* t's values (not its shape) made anew: entry i (of n) of the set it was
 * shaped from weighs v[i], as flame_tree_build() of a set of the same
 * entries would make them; no diff.  Paths that weigh nothing stay, with
 * values 0: the folded writer leaves them out, as it does no path. */
void flame_tree_reweigh(struct flame_tree *t, const uint32_t *leaf, const uint64_t *v, size_t n);
/* The index of the counting event name in set, or -1 with e saying which
 * events the session has. */
int flame_event_index(const struct stack_set *set, const char *name, struct error *e);
/* Merge base (another session) into t's base figures, by name path; base's
 * event is named by its index too (the caller maps the name). */
int flame_tree_diff(struct flame_tree *t, const struct stack_set *base, int what,
		    struct error *e);
void flame_tree_free(struct flame_tree *t);

/* The folded lines of t, sorted: "comm;outer;...;leaf COUNT\n", one per
 * distinct path with a count of its own (self) above zero. */
int flame_write_folded(const struct flame_tree *t, FILE *f, struct error *e);
/*
 * For a tree written again and again with new values (flame_tree_reweigh):
 * the distinct nodes of nodes[] (n) in the order of their folded paths,
 * malloc'ed, *nr of them; flame_write_folded_ordered() then writes the
 * bytes flame_write_folded() writes without sorting, when order holds
 * every node with a count of its own (else it sorts, as that does).
 */
uint32_t *flame_tree_order(const struct flame_tree *t, const uint32_t *nodes, size_t n,
			   size_t *nr);
int flame_write_folded_ordered(const struct flame_tree *t, const uint32_t *order, size_t n,
			       FILE *f, struct error *e);

struct flame_svg_opts {
	const char *title;	/* first line; escaped here */
	const char *subtitle;	/* second line, or NULL */
	const char *unit;	/* "samples", or the event's name */
	const char *base_name;	/* diff: what the baseline is, "session 3" */
	struct flame_metric *metric;	/* or NULL; else colours by it (its
					 * values set, flamemetric.h), its scale
					 * set here over the frames drawn, a
					 * legend, its value in each title */
	int width;		/* pixels; 0: 1200 */
};

/* Write t as an interactive SVG (hover, click to zoom, search). */
int flame_write_svg(const struct flame_tree *t, const struct flame_svg_opts *o, FILE *f,
		    struct error *e);

/* s escaped for XML text and attribute values into f: & < > " ' as
 * entities, other bytes as flame_sanitize() leaves them (no ';' rule). */
void flame_xml_write(FILE *f, const char *s);

#endif
