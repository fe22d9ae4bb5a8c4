/*
 * flameindex.c - a session's flame graph shaped once and weighed for any
 * window of it (see flameindex.h).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "flameindex.h"

struct flame_index {
	struct db_session s;		/* as it was when the index was made */
	struct report_opts o;		/* the filters, without a range */
	struct stack_set *set;		/* the whole session's */
	struct flame_tree *t;		/* its shape, weighed by the last window */
	uint32_t *leaf;			/* per entry of set: its node in t */
	uint64_t *sums;			/* per entry: the last window's */
	uint32_t *order;		/* t's stack ends in folded order */
	size_t nr_order;
};

struct flame_index *flame_index_make(struct db *db, const struct report_opts *o,
				     struct error *e)
{
	struct flame_index *ix = xcalloc(1, sizeof(*ix));
	size_t n;

	ix->o = *o;
	ix->o.has_from = ix->o.has_to = 0;
	ix->o.from_ns = ix->o.to_ns = 0;
	ix->o.window = 0;
	if (!(ix->set = stacks_load(db, &ix->o, e))) {
		free(ix);
		return NULL;
	}
	ix->s = ix->set->session;
	n = ix->set->nr_stacks ? ix->set->nr_stacks : 1;
	ix->leaf = xcalloc(n, sizeof(*ix->leaf));
	ix->sums = xcalloc(n, sizeof(*ix->sums));
	ix->t = flame_tree_shape(ix->set, ix->leaf);
	ix->order = flame_tree_order(ix->t, ix->leaf, ix->set->nr_stacks, &ix->nr_order);
	return ix;
}

int flame_index_current(const struct flame_index *ix, const struct db_session *s)
{
	return ix->s.id == s->id && db_session_complete(&ix->s) && db_session_complete(s) &&
	       ix->s.samples == s->samples && ix->s.first_sample == s->first_sample &&
	       ix->s.last_sample == s->last_sample && ix->s.end_ns == s->end_ns;
}

const struct stack_set *flame_index_set(const struct flame_index *ix)
{
	return ix->set;
}

int flame_index_window(struct flame_index *ix, struct db *db, int64_t from_ns, int64_t to_ns,
		       int what, const struct flame_tree **t, struct error *e)
{
	int rc;

	*t = NULL;
	if (what == FLAME_WEIGHT)
		return 1;	/* periods: the set's weighing is its own */
	if (what != FLAME_SAMPLES && (what < 0 || what >= ix->set->nr_events))
		return error_set(e, "no counting event %d in session %lld", what,
				 (long long)ix->s.id);
	rc = stacks_window_sums(db, ix->set, &ix->o, from_ns, to_ns,
				what == FLAME_SAMPLES ? -1 : what, ix->sums, e);
	if (rc)
		return rc;
	flame_tree_reweigh(ix->t, ix->leaf, ix->sums, ix->set->nr_stacks);
	*t = ix->t;
	return 0;
}

int flame_index_write_folded(const struct flame_index *ix, FILE *f, struct error *e)
{
	return flame_write_folded_ordered(ix->t, ix->order, ix->nr_order, f, e);
}

void flame_index_free(struct flame_index *ix)
{
	if (!ix)
		return;
	free(ix->order);
	flame_tree_free(ix->t);
	stacks_free(ix->set);
	free(ix->leaf);
	free(ix->sums);
	free(ix);
}
