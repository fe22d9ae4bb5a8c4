/*
 * flameindex.h - a session's flame graph shaped once and weighed for any
 * window of it: for a server (strobe ui) that draws the flame graph of
 * window after window of one session.
 *
 * A window's flame graph made from scratch (stacks_window() and
 * flame_tree_build()) reads, interns, names and merges the stacks of its
 * samples each time: on a session where nearly every sample has its own
 * stack that is most of its cost (doc/PERFORMANCE.md, "A session's flame
 * graph shaped once").  An index holds the whole session's stack set (its
 * entries named once) and their tree; a window is then the scan of its
 * samples summed by entry (stacks_window_sums()) and the tree's values
 * made anew (flame_tree_reweigh()).  The tree it gives prints the bytes
 * flame_tree_build() of stacks_window() would (the explorer's tests
 * compare them with strobe export --format folded).
 *
 * An index answers for a stored-whole session that has not changed since
 * it was made (flame_index_current()); the caller keys it by the filters
 * it was made with.  Not for two threads at once.
 */
#ifndef STROBE_FLAMEINDEX_H
#define STROBE_FLAMEINDEX_H

#include <stdint.h>
#include "flame.h"

struct flame_index;

/* The index of o's session (o->session, 0: the latest) with o's filters;
 * o's time range is ignored.  NULL with e set (as stacks_load()'s). */
struct flame_index *flame_index_make(struct db *db, const struct report_opts *o,
				     struct error *e);
/* 1 when ix answers for s, the session as the database holds it now: the
 * same session, stored whole (db_session_complete()) when ix was made and
 * now, with the same samples. */
int flame_index_current(const struct flame_index *ix, const struct db_session *s);
/* The whole session's stack set (its events, call graph, notes). */
const struct stack_set *flame_index_set(const struct flame_index *ix);
/*
 * The tree of [from_ns, to_ns) by what (FLAME_SAMPLES or a counting
 * event's index), into *t: owned by ix, valid until its next call.  0; 1
 * when ix cannot answer (the session grew since, what is FLAME_WEIGHT, or
 * its stack ids are too sparse): make the tree from stacks_window(); -1
 * with e set (an empty window, a bad event).
 */
int flame_index_window(struct flame_index *ix, struct db *db, int64_t from_ns, int64_t to_ns,
		       int what, const struct flame_tree **t, struct error *e);
/* The folded lines of the last window's tree, as flame_write_folded()
 * writes them, without sorting them each time (flame_tree_order()). */
int flame_index_write_folded(const struct flame_index *ix, FILE *f, struct error *e);
void flame_index_free(struct flame_index *ix);

#endif
