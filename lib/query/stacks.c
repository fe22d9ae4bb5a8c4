/*
 * stacks.c - the call stacks of a session, named, with what their samples
 * weigh (see stacks.h): stacks_load() and the naming of its locations.
 *
 * Steps:
 *  1.-3. entries, frames, and entries merged with their frames
 *     (stacksread.c);
 *  4. weights: periods when they differ (report's rule);
 *  5. names: each location once through the resolver, and locations of
 *     one function (binary and symbol) share a sym.
 * stacks_int.h lists the files and what they share.
 */
#include "config.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "progress.h"
#include "resolve.h"
#include "stacks_int.h"
#include "where.h"

/* What stacks_load() held while loading (not the set it returns). */
static void sload_free(struct sload *l)
{
	qfilter_free(&l->qf);
	free(l->g);
	otable_free(&l->gmap);
	free(l->byid);
	free(l->stks);
	free(l->locs);
	otable_free(&l->lmap);
	free(l->entry_lo);
	otable_free(&l->cmap);
}

void stacks_note(struct sload *l, const char *fmt, ...)
{
	struct stack_set *set = l->set;
	va_list ap;

	if (set->nr_notes >= NR_NOTES) {
		l->dropped_notes++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(set->notes[set->nr_notes], sizeof(set->notes[0]), fmt, ap);
	va_end(ap);
	text_sanitize(set->notes[set->nr_notes]);
	set->nr_notes++;
}

static void qf_note(void *ctx, const char *msg)
{
	stacks_note(ctx, "%s", msg);
}

static int call_graph_check(struct sload *l, struct error *e)
{
	const struct db_session *s = &l->set->session;

	snprintf(l->set->call_graph, sizeof(l->set->call_graph), "%s", s->call_graph);
	if (!s->call_graph[0])
		return error_set(e, "session %lld was recorded without call stacks: record "
				 "with -g (strobe record -g, or --call-graph fp|dwarf)",
				 (long long)s->id);
	return 0;
}

static int is_kernel_key(const char *key)
{
	return key && !strncmp(key, "kernel:", 7);
}

/* Weights are periods when they differ (report.c's rule, per entry). */
static void weigh(struct sload *l)
{
	struct stack_set *set = l->set;
	size_t i;

	set->weighted = 0;
	for (i = 1; !l->period_unknown && i < set->nr_stacks; i++) {
		const struct stack_entry *a = &set->stacks[0], *b = &set->stacks[i];

		if ((unsigned __int128)b->weight * a->samples !=
		    (unsigned __int128)a->weight * b->samples) {
			set->weighted = 1;
			break;
		}
	}
	set->weight = 0;
	for (i = 0; i < set->nr_stacks; i++) {
		struct stack_entry *se = &set->stacks[i];

		if (!set->weighted)
			se->weight = se->samples;
		set->weight += se->weight;
	}
}

/* A binary that cannot be symbolised (rv: one of its locations, named),
 * noted once; after ARRAY_SIZE(prob) of them, only that there are more. */
static void note_binary(struct sload *l, const struct resolved *rv, int64_t binary_id,
			int64_t *prob, size_t *nprob, size_t maxprob, int *more)
{
	size_t j;

	for (j = 0; j < *nprob && prob[j] != binary_id; j++)
		;
	if (j < *nprob)
		return;
	if (*nprob == maxprob) {
		*more = 1;
		return;
	}
	prob[(*nprob)++] = binary_id;
	if (rv->problem)
		stacks_note(l, "%s (%s): not available: %s; its frames are not symbolised",
			    rv->binary, rv->key, rv->problem);
	else
		stacks_note(l, "%s (%s): has no function symbols (stripped); its frames show "
			    "as [unknown]", rv->binary, rv->key);
}

/*
 * Name every location; locations of one (binary, symbol) share a sym,
 * found by the key "BINARY_ID:SYMBOL" (the id ends at the first ':', so
 * no two pairs share a key) in a table of strings (otable).
 */
static void name_locs(struct sload *l, struct resolver *res)
{
	struct stack_set *set = l->set;
	struct otable syms;
	struct sym_idx {
		char *key;
		size_t i;
	} *x;
	size_t i, symcap = 0;
	int64_t prob[4];	/* binaries noted */
	size_t nprob = 0;
	int more = 0;

	otable_init_str(&syms, sizeof(struct sym_idx), 1024);
	set->locs = xcalloc(l->nlocs ? l->nlocs : 1, sizeof(*set->locs));
	set->nr_locs = l->nlocs;
	progress_phase(l->o->progress, l->nlocs, "locations named");
	for (i = 0; i < l->nlocs; i++) {
		const struct k4 *k = &l->locs[i].k;
		struct stack_loc *sl = &set->locs[i];
		struct resolved rv;
		char *key;
		int added;

		progress_update(l->o->progress, i);

		resolver_lookup_pid(res, k->v[0], (uint64_t)k->v[1], (uint32_t)k->v[2], 0, &rv);
		sl->binary_id = k->v[0];
		sl->offset = (uint64_t)k->v[1];
		sl->pid = (uint32_t)k->v[2];
		key = xasprintf("%lld:%s", (long long)k->v[0], rv.symbol);
		x = otable_get_str(&syms, key, &added);
		free(key);
		if (added) {
			struct stack_sym *y;

			ARRAY_GROW(set->syms, symcap, set->nr_syms + 1);
			y = &set->syms[set->nr_syms];
			y->binary_id = k->v[0];
			y->binary = rv.binary;
			y->build_id = rv.build_id;
			y->symbol = rv.symbol;
			y->kernel = is_kernel_key(rv.key);
			x->i = set->nr_syms++;
			if (rv.problem || rv.no_symbols)
				note_binary(l, &rv, k->v[0], prob, &nprob, ARRAY_SIZE(prob), &more);
		}
		sl->sym = (uint32_t)x->i;
	}
	if (more)
		stacks_note(l, "more binaries in these stacks cannot be symbolised");
	otable_free(&syms);
}

/*
 * Where user stacks could not be unwound to their outermost frame
 * (unwind_errors, --call-graph dwarf), as one note: the samples of the
 * whole session, the worst (binary, reason) pairs first.
 */
static int unwind_note(struct sload *l, struct error *e)
{
	char buf[200] = "";
	size_t len = 0;
	uint64_t all = 0;
	int rc, n = 0;
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db_sqlite(l->db), "SELECT coalesce(b.path, '[no mapping]'), "
			       "u.reason, sum(u.count) AS c FROM unwind_errors AS u LEFT JOIN "
			       "binaries AS b ON b.id = u.binary_id WHERE u.session_id = ?1 "
			       "GROUP BY u.binary_id, u.reason ORDER BY c DESC, 1, 2", -1, &st,
			       NULL))
		return db_sql_error(l->db, e, "reading unwind_errors");
	sqlite3_bind_int64(st, 1, l->set->session.id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *path = (const char *)sqlite3_column_text(st, 0);
		const char *reason = (const char *)sqlite3_column_text(st, 1);
		const char *base = path ? strrchr(path, '/') : NULL;
		int64_t c = sqlite3_column_int64(st, 2);

		all += c > 0 ? (uint64_t)c : 0;
		if (n++ < 3 && len < sizeof(buf)) {
			int w = snprintf(buf + len, sizeof(buf) - len, "%s%s: %s (%lld)",
					 n > 1 ? ", " : "", base ? base + 1 : path ? path : "?",
					 reason ? reason : "?", (long long)c);

			len += w > 0 ? (size_t)w : 0;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_sql_error(l->db, e, "reading unwind_errors");
	if (all)
		stacks_note(l, "unwinding stopped before the outermost frame in %" PRIu64
			 " samples of the session: %s%s (table unwind_errors has them all)",
			 all, buf, n > 3 ? ", ..." : "");
	return 0;
}

struct stack_set *stacks_load(struct db *db, const struct report_opts *o, struct error *e)
{
	struct stacks_priv *p = xcalloc(1, sizeof(*p));
	struct sload l = { .db = db, .o = o, .p = p, .set = &p->set };
	struct stack_set *set = &p->set;
	const struct db_session *s = &set->session;
	int i;

	k4_table_init(&l.gmap);
	k4_table_init(&l.lmap);
	k4_table_init(&l.cmap);
	if (o->has_from && o->has_to && o->from_ns > o->to_ns) {
		error_set(e, "empty time range: --from is after --to");
		goto fail;
	}
	if (db_session_get(db, o->session, &set->session, e) < 0 || call_graph_check(&l, e) < 0)
		goto fail;
	l.nev = MIN(s->nr_events, STROBE_MAX_COUNTERS);
	set->nr_events = l.nev;
	for (i = 0; i < l.nev; i++)
		snprintf(set->events[i], sizeof(set->events[i]), "%s", s->events[i].name);
	/* a window of every sample reads the histogram, as no window does */
	l.raw = p->raw = !db_session_complete(s) || o->where ||
			 ((o->has_from || o->has_to) && !report_window_whole(db, s, o));
	if (!(p->res = resolver_new(db, s, e)))
		goto fail;
	resolver_set_demangle(p->res, !o->no_demangle);
	if (!strcmp(s->state, "running"))
		stacks_note(&l, "session %lld is still running: these stacks are those of the "
			 "samples stored so far", (long long)s->id);

	if (qfilter_init(&l.qf, db, o, s, l.raw, QFILTER_PROCS, qf_note, &l, e) < 0)
		goto fail;
	if (!l.qf.none) {
		if (stacks_gather(&l, e) < 0 || stacks_frames_load(&l, p->res, e) < 0 ||
		    stacks_entries_make(&l, p->res, e) < 0)
			goto fail;
		if (!l.raw && stacks_no_stack_agg(&l, e) < 0)
			goto fail;
		if (o->where && o->where->ready) {
			char wn[sizeof(set->notes[0])];

			where_note(o->where, wn, sizeof(wn));
			stacks_note(&l, "%s", wn);
		}
	} else {
		set->stacks = xcalloc(1, sizeof(*set->stacks));
	}
	weigh(&l);
	name_locs(&l, p->res);
	if (unwind_note(&l, e) < 0)
		goto fail;
	if (l.dropped_notes)
		snprintf(set->notes[NR_NOTES - 1], sizeof(set->notes[0]), "%d more notes left out",
			 l.dropped_notes + 1);
	sload_free(&l);
	return set;
fail:
	sload_free(&l);
	stacks_free(set);
	return NULL;
}

struct stack_set *stacks_window(struct db *db, const struct report_opts *o, int64_t from_ns,
				int64_t to_ns, struct error *e)
{
	struct report_opts w = *o;

	if (report_opts_window(&w, from_ns, to_ns, e) < 0)
		return NULL;
	return stacks_load(db, &w, e);
}

int stacks_window_sums(struct db *db, const struct stack_set *whole, const struct report_opts *o,
		       int64_t from_ns, int64_t to_ns, int what, uint64_t *sums, struct error *e)
{
	struct report_opts w = *o;
	struct stack_set *scratch = xcalloc(1, sizeof(*scratch));	/* the window's notes */
	struct sload l = { .db = db, .o = &w, .set = scratch, .whole = whole, .sums = sums,
			   .sum_what = what < 0 ? -1 : what };
	int rc = -1;

	memset(sums, 0, (whole->nr_stacks ? whole->nr_stacks : 1) * sizeof(*sums));
	if (what >= whole->nr_events) {
		error_set(e, "no counting event %d in session %lld", what,
			  (long long)whole->session.id);
		goto out;
	}
	if (report_opts_window(&w, from_ns, to_ns, e) < 0)
		goto out;
	if (report_window_whole(db, &whole->session, &w)) {
		/* every sample: the whole's own sums */
		for (size_t i = 0; i < whole->nr_stacks; i++)
			sums[i] = what < 0 ? whole->stacks[i].samples : whole->stacks[i].c[what];
		rc = 0;
		goto out;
	}
	scratch->session = whole->session;
	l.nev = whole->nr_events;
	if (qfilter_init(&l.qf, db, &w, &scratch->session, 1, QFILTER_PROCS, qf_note, &l, e) < 0)
		goto out;
	rc = l.qf.none ? 0 : stacks_sum_raw(&l, e);
	qfilter_free(&l.qf);
out:
	free(scratch);
	return rc;
}

void stacks_free(struct stack_set *set)
{
	struct stacks_priv *p = (struct stacks_priv *)set;

	if (!set)
		return;
	resolver_free(p->res);
	for (size_t i = 0; i < p->ncomms; i++)
		free(p->comms[i].name);
	free(p->comms);
	free(p->comm_ids);
	free(p->pool);
	free(p->efirst);
	free(p->enext);
	free(set->syms);
	free(set->locs);
	free(set->stacks);
	free(p);
}
