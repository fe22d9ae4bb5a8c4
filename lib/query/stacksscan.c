/*
 * stacksscan.c - stacks_scan() (stacks.h): each sample of a loaded stack
 * set's session that passes the filters, in time order, with its entry in
 * the set; for exports of stacks over time (gecko).  The samples are read
 * again from the session's rowid range, and each is matched to its entry
 * by (stack, pid, comm) and its process's start.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include "progress.h"
#include "samplescan.h"
#include "stacks_int.h"

/* The set's entries by (stack, pid, comm): an entry per process start
 * each, chained (first, then chain: entry + 1 of the same key, 0 ends). */
struct entry_index {
	struct otable keys;	/* (stack_id, pid, comm_id, 0) -> index in first */
	size_t *first, *last, *chain;
};

static void entry_index_make(struct entry_index *x, const struct stack_set *set)
{
	const struct stacks_priv *p = (const struct stacks_priv *)set;
	size_t n = set->nr_stacks ? set->nr_stacks : 1, nkeys = 0;

	k4_table_init(&x->keys);
	x->first = xcalloc(n, sizeof(*x->first));
	x->last = xcalloc(n, sizeof(*x->last));
	x->chain = xcalloc(n, sizeof(*x->chain));
	for (size_t i = 0; i < set->nr_stacks; i++) {
		const struct stack_entry *se = &set->stacks[i];
		struct k4 k = { { se->stack_id, se->pid, p->comm_ids[i], 0 } };
		int added;
		struct k4idx *ki = k4_get(&x->keys, &k, &added);

		if (added) {
			ki->i = nkeys++;
			x->first[ki->i] = x->last[ki->i] = i;
		} else {
			x->chain[x->last[ki->i]] = i + 1;
			x->last[ki->i] = i;
		}
	}
}

static void entry_index_free(struct entry_index *x)
{
	otable_free(&x->keys);
	free(x->first);
	free(x->last);
	free(x->chain);
}

/* The entry of a sample of (stack, pid, comm) whose process started at
 * start: that process's, else the key's first; -1 when the set has none
 * (filtered out when loaded). */
static ssize_t entry_of(const struct entry_index *x, const struct stack_set *set,
			const struct k4 *k, int64_t start)
{
	const struct k4idx *ki = k4_find(&x->keys, k);
	size_t best, ent;

	if (!ki)
		return -1;
	best = x->first[ki->i];
	for (ent = best + 1; ent; ent = x->chain[ent - 1])
		if ((int64_t)set->stacks[ent - 1].start_ns == start)
			return (ssize_t)(ent - 1);
	return (ssize_t)best;
}

int stacks_scan(struct db *db, const struct stack_set *set, const struct report_opts *o,
		stacks_sample_fn fn, void *ctx, struct error *e)
{
	const struct db_session *s = &set->session;
	struct entry_index x;
	struct qfilter qf;
	struct sample_scan_filter sf;
	const struct sample_scan_row *row;
	struct sample_scan *sc = NULL;
	int rc, ret = -1;

	memset(&qf, 0, sizeof(qf));
	entry_index_make(&x, set);
	if (qfilter_init(&qf, db, o, s, 1, QFILTER_PROCS, NULL, NULL, e) < 0)
		goto out;
	ret = 0;
	if (qf.none || !set->nr_stacks ||
	    !qfilter_scan(&qf, 1u << SB_TIME_NS | 1u << SB_CPU | 1u << SB_TID | 1u << SB_PID |
			  1u << SB_COMM_ID | 1u << SB_STACK, &sf))
		goto out;
	ret = -1;
	sf.by_time = s->late_samples;	/* stored out of time order (or not known) */
	if (o->progress) {
		progress_phase(o->progress, sample_scan_session_total(db, s, o->has_from,
				o->from_ns, o->has_to, o->to_ns), "samples");
		db_set_progress(db, o->progress);
	}
	sc = sample_scan_open(db, &sf, e);
	if (!sc)
		goto out;
	while ((rc = sample_scan_next(sc, &row, e)) == 1) {
		const struct sampleblk_row *r = row->r;
		int64_t t = r->v[SB_TIME_NS], pid = r->v[SB_PID], proc;
		struct k4 k = { { r->v[SB_STACK], pid, r->v[SB_COMM_ID], 0 } };
		size_t cg;
		ssize_t ent;

		if ((r->null & (1u << SB_STACK)) || !qfilter_mode(&qf, r) ||
		    !qfilter_row(&qf, pid, t, &proc, &cg))
			continue;
		ent = entry_of(&x, set, &k, qfilter_start(&qf, pid, t));
		if (ent < 0)
			continue;	/* not in the set (filtered out when loaded) */
		if (fn(ctx, t - s->start_ns, (uint32_t)r->v[SB_CPU], (uint32_t)r->v[SB_TID],
		       (size_t)ent, e) < 0)
			goto out;
	}
	if (rc < 0)
		goto out;
	ret = 0;
out:
	sample_scan_close(sc);
	db_set_progress(db, NULL);
	qfilter_free(&qf);
	entry_index_free(&x);
	return ret;
}
