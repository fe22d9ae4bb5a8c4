/*
 * reportrank.c - steps 2 and 3 of a report (report_int.h): name each
 * location through the resolver (lib/symbols/resolve.h: the binary's
 * cached copy, the session's kallsyms snapshot for the kernel) and add it
 * to its group, then rank the groups.  Naming never guesses: a binary
 * with no usable cached copy, or whose row records a problem, shows as
 * "[binary unavailable]" with a note, and an offset no symbol covers is
 * "[unknown]".  Memory with no file ([vdso] of another ABI, [anon],
 * [heap], [stack], [unknown]) is shown under its key with symbol
 * "[unknown]"; it is not counted as unresolved.  [anon] locations are
 * kept apart by pid when the session has perf map symbols, and named
 * from them (resolve.h).  Percentages weigh samples by their periods
 * when those differ (weigh()).
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "progress.h"
#include "resolve.h"
#include "report_int.h"

/* hash_string() continued from h, the string's end marked (0xff) so that
 * ("ab", "c") and ("a", "bc") hash apart (NULL and "" hash alike:
 * opt_streq() tells them apart). */
static uint64_t str_hash(uint64_t h, const char *s)
{
	return hash_mix64(hash_string(h ^ HASH_STRING_INIT, s) ^ 0xff);
}

/* otable's keys are compared byte for byte: group_key must have no padding */
_Static_assert(sizeof(struct group_key) == 24, "struct group_key has padding");

void report_groupmap_init(struct groupmap *m)
{
	memset(m, 0, sizeof(*m));
	otable_init(&m->idx, sizeof(struct group_idx), sizeof(struct group_key), 256);
}

static int opt_streq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return !strcmp(a, b);
}

/* The group of these names, added (zeroed) if new.  Valid until the next
 * call. */
static struct group *groupmap_get(struct groupmap *m, size_t bin, int64_t proc,
				  const char *binary, const char *symbol, const char *source,
				  const char *inl)
{
	struct group_key k = { str_hash(str_hash(str_hash(0, symbol), source), inl),
			       (uint64_t)bin, proc };
	struct group_idx *x;
	struct group *g;
	int added;

	x = otable_get_sized(&m->idx, &k, sizeof(k), &added);
	for (size_t i = x->first; i; i = m->v[i - 1].chain) {
		g = &m->v[i - 1];
		if (opt_streq(g->symbol, symbol) && opt_streq(g->source, source) &&
		    opt_streq(g->inl, inl))
			return g;
	}
	ARRAY_GROW(m->v, m->cap, m->n + 1);
	g = &m->v[m->n];
	memset(g, 0, sizeof(*g));
	g->bin = bin;
	g->proc = proc;
	g->binary = binary;
	g->symbol = symbol ? xstrdup(symbol) : NULL;
	g->source = source ? xstrdup(source) : NULL;
	g->inl = inl ? xstrdup(inl) : NULL;
	g->chain = x->first;
	x->first = ++m->n;
	return g;
}

void report_groupmap_free(struct groupmap *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].symbol);
		free(m->v[i].source);
		free(m->v[i].inl);
	}
	free(m->v);
	otable_free(&m->idx);
}

static int loc_cmp(const void *pa, const void *pb)
{
	const struct loc *a = pa, *b = pb;

	if (a->binary_id != b->binary_id)
		return a->binary_id < b->binary_id ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return (a->mode > b->mode) - (a->mode < b->mode);
}

static int bin_by_samples(const void *pa, const void *pb)
{
	const struct bin *a = *(const struct bin *const *)pa;
	const struct bin *b = *(const struct bin *const *)pb;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return strcmp(a->display, b->display);
}

/*
 * Weigh each sample by its period, as perf report does, when the periods
 * differ (frequency mode on an event whose rate changes): a sample then
 * stands for as many events as its period says.  With a constant period
 * (or one unknown for some sample, as in sessions recorded before schema
 * 8) every location's mean period is the same and the weights would be
 * the sample counts: those are used, so that the figures stay exact.
 */
static void weigh(struct report *r)
{
	const struct locmap *m = &r->locs;
	struct report_summary *sum = r->sum;
	size_t i;

	sum->weighted = 0;
	sum->weight = sum->samples;
	if (r->period_unknown || !m->n)
		return;
	for (i = 1; i < m->n; i++) {
		const struct loc *a = &m->v[0], *l = &m->v[i];

		/* l->period / l->samples != a->period / a->samples, overflow-free */
		if ((unsigned __int128)l->period * a->samples !=
		    (unsigned __int128)a->period * l->samples)
			break;
	}
	if (i == m->n)
		return;
	sum->weighted = 1;
	sum->weight = 0;
	for (i = 0; i < m->n; i++)
		sum->weight += m->v[i].period;
}

/* The binary of location l (named rv) in r->bins, added when it is not
 * the last one's: locations come sorted by binary. */
static struct bin *bin_of(struct report *r, struct loc *l, const struct resolved *rv)
{
	struct bin *b;

	if (!r->nbins || r->bins[r->nbins - 1].id != l->binary_id) {
		ARRAY_GROW(r->bins, r->bins_cap, r->nbins + 1);
		b = &r->bins[r->nbins++];
		memset(b, 0, sizeof(*b));
		b->id = l->binary_id;
		b->display = rv->binary;
		b->key = rv->key;
		b->build_id = rv->build_id;
		b->problem = rv->problem;
		b->note = rv->note;
		b->no_symbols = rv->no_symbols;
		b->debug = rv->debug;
		b->debug_note = rv->debug_note;
	}
	l->bin = r->nbins - 1;
	return &r->bins[l->bin];
}

/* Notes for the binaries that could not be named, biggest first, then
 * where their debug files were refused or symbols came from. */
static void note_binaries(struct report *r)
{
	struct bin **problems = xcalloc(r->nbins ? r->nbins : 1, sizeof(*problems));
	size_t i, np = 0;

	for (i = 0; i < r->nbins; i++)
		if (r->bins[i].problem || r->bins[i].no_symbols || r->bins[i].note ||
		    r->bins[i].debug || r->bins[i].debug_note)
			problems[np++] = &r->bins[i];
	if (np)
		qsort(problems, np, sizeof(*problems), bin_by_samples);
	for (i = 0; i < np; i++) {
		struct bin *b = problems[i];

		if (b->note)
			report_note(r, "%s (%s): warning: %s", b->display, b->key, b->note);
		if (b->problem) {
			r->sum->unresolved += b->samples;
			report_note(r, "%s (%s): not available: %s; its %" PRIu64
				    " samples are not symbolised", b->display, b->key,
				    b->problem, b->samples);
		} else if (b->no_symbols) {
			report_note(r, "%s (%s): has no function symbols (stripped); its %"
				    PRIu64 " samples show as [unknown]", b->display, b->key,
				    b->samples);
		}
	}
	/* What debuginfod could not give, in one line (only when asked). */
	if (resolver_debuginfod_summary(r->res))
		report_note(r, "%s", resolver_debuginfod_summary(r->res));
	/* Then where debug files were refused and where symbols came from:
	 * after the problems, so that those are never the notes left out. */
	for (i = 0; i < np; i++)
		if (problems[i]->debug_note)
			report_note(r, "%s: debug file %s", problems[i]->display,
				    problems[i]->debug_note);
	for (i = 0; i < np; i++)
		if (problems[i]->debug)
			report_note(r, "%s: symbols from %s", problems[i]->display,
				    problems[i]->debug);
	free(problems);
}

void report_name_and_group(struct report *r)
{
	struct locmap *m = &r->locs;
	enum report_by by = r->o->by;
	size_t i;

	weigh(r);
	if (m->n)
		qsort(m->v, m->n, sizeof(*m->v), loc_cmp);
	progress_phase(r->o->progress, m->n, "locations named");
	for (i = 0; i < m->n; i++) {
		struct loc *l = &m->v[i];
		struct resolved rv;
		struct bin *b;
		struct group *g;
		int k;

		progress_update(r->o->progress, i);

		resolver_lookup_pid(r->res, l->binary_id, l->offset, l->pid, by == REPORT_BY_LINE,
				    &rv);
		b = bin_of(r, l, &rv);
		b->samples += l->samples;
		if (by == REPORT_BY_CGROUP)	/* proc: its cgroup + 1 */
			g = groupmap_get(&r->groups, 0, l->proc, r->qf.cgs.names[l->proc - 1],
					 NULL, NULL, NULL);
		else
			g = groupmap_get(&r->groups, l->bin, l->proc, b->display,
					 by == REPORT_BY_BINARY ? NULL : rv.symbol,
					 by == REPORT_BY_LINE ? rv.source : NULL,
					 r->o->inline_chain ? rv.inlined : NULL);
		g->samples += l->samples;
		g->weight += r->sum->weighted ? l->period : l->samples;
		for (k = 0; k < r->nev; k++)
			g->c[k] += l->c[k];
	}
	note_binaries(r);
}

int report_rank_cmp(uint64_t weight_a, uint64_t samples_a, uint64_t weight_b,
		    uint64_t samples_b)
{
	if (weight_a != weight_b)
		return weight_a > weight_b ? -1 : 1;
	if (samples_a != samples_b)
		return samples_a > samples_b ? -1 : 1;
	return 0;
}

static int group_cmp(const void *pa, const void *pb)
{
	const struct group *a = pa, *b = pb;
	int c;

	if ((c = report_rank_cmp(a->weight, a->samples, b->weight, b->samples)))
		return c;
	if ((c = strcmp(a->binary, b->binary)))
		return c;
	if ((c = strcmp(a->symbol ? a->symbol : "", b->symbol ? b->symbol : "")))
		return c;
	if ((c = strcmp(a->source ? a->source : "", b->source ? b->source : "")))
		return c;
	if ((c = strcmp(a->inl ? a->inl : "", b->inl ? b->inl : "")))
		return c;
	if (a->bin != b->bin)
		return (a->bin > b->bin) - (a->bin < b->bin);
	return (a->proc > b->proc) - (a->proc < b->proc);
}

void report_rank_groups(struct report *r)
{
	if (r->groups.n)
		qsort(r->groups.v, r->groups.n, sizeof(*r->groups.v), group_cmp);
}
