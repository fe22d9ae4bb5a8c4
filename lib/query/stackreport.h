/*
 * stackreport.h - reports of call stacks (stacks.h): inclusive figures per
 * function ('strobe report --children') and the call trees around one
 * function ('strobe report --callers SYMBOL', '--callees SYMBOL').
 *
 * Inclusive ("total") figures: a function gets each sample whose stack
 * holds it, once per sample however many times it is on that stack
 * (recursion); "self" figures are the samples whose frame 0 is in it, as
 * the flat report's.  Counter increases follow their samples: a
 * function's total page-faults are those of the samples whose stacks
 * hold it.  Percentages are of all the samples in the set (of their
 * periods when those differ, stack_set.weighted).
 */
#ifndef STROBE_STACKREPORT_H
#define STROBE_STACKREPORT_H

#include <stdio.h>
#include "output.h"
#include "report.h"
#include "stacks.h"

/* The summary report.h's header shows, for the samples of set. */
int callgraph_summary(struct db *db, const struct stack_set *set, struct report_summary *sum,
		      struct error *e);

/*
 * The inclusive table of set, by o->by (REPORT_BY_SYMBOL or
 * REPORT_BY_BINARY; the symbol column is null by binary).  Columns:
 * [process,] binary, build_id, symbol, self_samples, total_samples,
 * self_percent, total_percent, then per counting event EV_self and
 * EV_total (EV as given with -e).  process ("PID@START") is there when
 * o->pid was several processes and o->has_pid_at is not set.  Rows are
 * sorted by total (weight, then samples), then self; o->limit rows at
 * most (0: all).  Meta: report_add_meta()'s, and call_graph,
 * no_stack, incomplete.
 */
struct table *callgraph_children(struct db *db, const struct stack_set *set,
				 const struct report_opts *o, const struct report_summary *sum,
				 struct error *e);

enum callgraph_dir { CALLGRAPH_CALLERS, CALLGRAPH_CALLEES };

/* A node of a call tree: one function on the paths from the root. */
struct calltree_node {
	uint32_t sym;		/* in stack_set.syms */
	uint32_t depth;		/* 0: a root, the function asked for */
	size_t parent;		/* index in calltree.v; (size_t)-1 for a root */
	int last;		/* the last of its parent's children (or roots) */
	uint64_t samples, weight;
	uint64_t c[STROBE_MAX_COUNTERS];
};

/*
 * The call tree around the functions named symbol (every binary's: one
 * root each).  For each sample whose stack holds one of them: callers,
 * the frames from its innermost occurrence towards the outermost frame;
 * callees, from its outermost occurrence towards frame 0; the paths are
 * merged into a tree whose nodes sum the samples that went through them
 * (so a node's figures include its children's).  A recursive function
 * thus shows its recursion in the tree, and each sample counts once per
 * node.  v holds the nodes depth first, a node's children after it, by
 * weight (then samples, symbol, binary).  NULL with an error naming
 * symbol when no frame of the set is in a function of that name.
 */
struct calltree {
	const struct stack_set *set;
	enum callgraph_dir dir;
	char *symbol;
	struct calltree_node *v;
	size_t n;
};
struct calltree *calltree_build(const struct stack_set *set, const char *symbol,
				enum callgraph_dir dir, struct error *e);
void calltree_free(struct calltree *t);

/*
 * The tree as a table.  OUTPUT_TEXT: columns percent, samples, one per
 * counting event, then "callers of SYMBOL" (or "callees of"): the
 * function, indented under its parent with "|-- " and "`-- ", and its
 * binary's file name in brackets where it differs from its parent's.
 * Otherwise (CSV): depth, path (the functions from the root to the node,
 * joined by ';'), symbol, binary, build_id, samples, percent, one per
 * counting event.  percent is of all the set's samples (or periods).
 */
struct table *calltree_table(const struct calltree *t, enum output_format fmt);

/* The tree as JSON: {"meta": {...}, "roots": [node, ...]}, a node being
 * {"symbol", "binary", "build_id", "samples", "percent", one key per
 * counting event, "children": [node, ...]}. */
int calltree_write_json(const struct calltree *t, FILE *f);

#endif
