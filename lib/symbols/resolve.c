/*
 * resolve.c - names for sampled locations (see resolve.h): the resolver's
 * two tables, the binaries (one entry per binaries.id, opened on first
 * use by resolvebin.c) and the locations named so far, keyed by
 * (binary_id, offset), both arrays indexed by an otable; naming a
 * location (its symbol, source line and inline chain), and the lookups.
 * JIT code is resolvejit.c's.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "dbgfetch.h"
#include "kallsyms.h"
#include "resolve_int.h"
#include "symtab.h"
#include "symworker.h"

struct rloc {
	int64_t binary_id;
	uint64_t offset;
	size_t bin;			/* index in bins */
	const char *symbol;		/* owned by a symtab, the kallsyms, or own_sym */
	char *own_sym;
	char *source;			/* NULL until a lookup wanted the line */
	char *inl;			/* NULL until named with want_inline */
};

/* The entries of r->bin_idx and r->loc_idx: a key, then the index of its
 * binary or location.  The keys are not hashed first (otable.h): a
 * profiled process picks its addresses, but offsets that collide cost
 * probing time only. */
struct bin_ent {
	int64_t id;
	size_t i;
};

struct loc_ent {
	int64_t binary_id;
	uint64_t offset;
	size_t i;
};
#define LOC_KEY	(2 * sizeof(int64_t))

struct resolver *resolver_new(struct db *db, const struct db_session *s, struct error *e)
{
	struct resolver *r = xcalloc(1, sizeof(*r));

	(void)e;
	r->db = db;
	/* Not bincache_open(): readers must not create the cache. */
	r->cache.dir = db_cache_dir(db);
	if (getenv("STROBE_DEBUG_DIRS"))
		r->debug_roots = xstrdup(getenv("STROBE_DEBUG_DIRS"));
	if (dbgfetch_enabled(getenv("DEBUGINFOD_URLS")))
		r->debuginfod_urls = xstrdup(getenv("DEBUGINFOD_URLS"));
	snprintf(r->kallsyms_key, sizeof(r->kallsyms_key), "%s", s ? s->kallsyms_key : "");
	r->session_id = s ? s->id : 0;
	otable_init(&r->bin_idx, sizeof(struct bin_ent), sizeof(int64_t), 64);
	otable_init(&r->loc_idx, sizeof(struct loc_ent), LOC_KEY, 1024);
	return r;
}

void resolver_set_demangle(struct resolver *r, int on)
{
	r->raw_names = !on;
}

void resolver_set_inline(struct resolver *r, int on)
{
	r->want_inline = on;
}

void resolver_set_worker(struct resolver *r, struct symworker *w)
{
	r->worker = w;
}

void resolver_free(struct resolver *r)
{
	size_t i;

	if (!r)
		return;
	resolve_jit_free(r);
	for (i = 0; i < r->nbins; i++)
		resolve_bin_free(r, &r->bins[i]);
	for (i = 0; i < r->nlocs; i++) {
		free(r->locs[i].own_sym);
		free(r->locs[i].source);
		free(r->locs[i].inl);
	}
	free(r->bins);
	otable_free(&r->bin_idx);
	free(r->locs);
	otable_free(&r->loc_idx);
	if (r->ks)
		kallsyms_free(r->ks);
	free(r->ks_problem);
	free(r->debug_roots);
	free(r->debuginfod_urls);
	dbgfetch_free(r->fetch);
	free(r->fetch_summary);
	free(r->cache.dir);
	free(r);
}

/* The worker failed on b: its names are lost (b->problem says why). */
static void worker_failed(struct rbin *b, const struct error *err)
{
	if (!b->problem)
		b->problem = xasprintf("its symbols could not be read: %s", err->msg);
}

/* Index in bins of binary id, opened if new. */
static size_t bin_get(struct resolver *r, int64_t id)
{
	int added;
	struct bin_ent *x = otable_get_sized(&r->bin_idx, &id, sizeof(id), &added);

	if (!added)
		return x->i;
	x->i = r->nbins;
	ARRAY_GROW(r->bins, r->bins_cap, r->nbins + 1);
	resolve_bin_open(r, &r->bins[r->nbins], id);
	return r->nbins++;
}

/* The source line of a symtab hit: "file:line", or "" when unknown. */
static char *line_of(const struct symtab_hit *hit)
{
	return hit->file && hit->line ? xasprintf("%s:%u", hit->file, hit->line) : xstrdup("");
}

/* Name l's symbol, and its source line when want_line. */
static void loc_name(struct resolver *r, struct rbin *b, struct rloc *l, int want_line)
{
	if (!l->symbol && b->wh >= 0 && !b->problem) {
		struct error err = { "" };
		char *name;

		if (symworker_lookup(r->worker, b->wh, &l->offset, 1, &name, &err) < 0)
			worker_failed(b, &err);
		else
			l->symbol = l->own_sym = name;
		if (l->symbol && want_line && !l->source)
			l->source = xstrdup("");	/* lines are not read in the worker */
	}
	if (!l->symbol) {
		l->symbol = "[unknown]";
		if (b->problem) {
			l->symbol = "[binary unavailable]";
		} else if (b->kind == BIN_KERNEL) {
			const char *module = NULL, *name;
			uint64_t off;

			name = kallsyms_lookup(r->ks, l->offset, &off, &module);
			if (name && module)
				l->symbol = l->own_sym = xasprintf("%s [%s]", name, module);
			else if (name)
				l->symbol = name;
		} else if (b->kind == BIN_FILE && b->st) {
			struct symtab_hit hit = { 0 };

			if (symtab_lookup(b->st, l->offset, want_line, &hit) == 0 && hit.name)
				l->symbol = hit.name;
			if (want_line)
				l->source = line_of(&hit);
		}
	}
	if (want_line && !l->source) {
		struct symtab_hit hit = { 0 };

		if (b->kind == BIN_FILE && b->st && !b->problem)
			symtab_lookup(b->st, l->offset, 1, &hit);
		l->source = line_of(&hit);
	}
}

/* Longest function name kept in an inline chain (DWARF is the binary's:
 * hostile input); longer ones are cut and end in "...". */
#define INLINE_NAME_MAX 512

/* The inline chain at off in b: "outer -> inlined -> ...", or "" when off
 * is not in inlined code (symtab_inline gives one frame or none). */
static char *inline_chain(const struct rbin *b, uint64_t off)
{
	struct symtab_frame fr[SYMTAB_INLINE_MAX];
	struct sbuf chain = { 0 };
	int n, i;

	if (b->kind != BIN_FILE || !b->st || b->problem)
		return xstrdup("");
	n = symtab_inline(b->st, off, fr, SYMTAB_INLINE_MAX);
	if (n < 2)
		return xstrdup("");
	for (i = n - 1; i >= 0; i--) {
		char *dem = symtab_demangle(b->st, fr[i].func);
		const char *name = dem ? dem : fr[i].func ? fr[i].func : "[unknown]";
		size_t len = strlen(name);

		if (len > INLINE_NAME_MAX)
			sbuf_addf(&chain, "%s%.*s...", i == n - 1 ? "" : " -> ",
				  INLINE_NAME_MAX, name);
		else
			sbuf_addf(&chain, "%s%s", i == n - 1 ? "" : " -> ", name);
		free(dem);
	}
	return chain.s ? chain.s : xstrdup("");
}

static struct rloc *loc_get(struct resolver *r, int64_t binary_id, uint64_t offset)
{
	const uint64_t key[2] = { (uint64_t)binary_id, offset };
	struct loc_ent *x;
	struct rloc *l;
	int added;

	if (r->last_loc) {
		l = &r->locs[r->last_loc - 1];
		if (l->binary_id == binary_id && l->offset == offset)
			return l;
	}
	x = otable_get_sized(&r->loc_idx, key, LOC_KEY, &added);
	if (!added) {
		r->last_loc = x->i + 1;
		return &r->locs[x->i];
	}
	x->i = r->nlocs;
	ARRAY_GROW(r->locs, r->locs_cap, r->nlocs + 1);
	l = &r->locs[r->nlocs];
	memset(l, 0, sizeof(*l));
	l->binary_id = binary_id;
	l->offset = offset;
	r->last_loc = ++r->nlocs;
	/* after the growth above: bin_get does not touch locs */
	l->bin = bin_get(r, binary_id);
	return l;
}

/* The binary's fields of out (resolver_binary()), b's. */
static void bin_fields(const struct rbin *b, struct resolved *out)
{
	out->binary = b->display;
	out->build_id = b->build_id;
	out->key = b->key;
	out->problem = b->problem;
	out->note = b->note;
	out->no_symbols = b->no_symbols;
	out->debug = b->debug;
	out->debug_note = b->debug_note;
}

void resolver_lookup(struct resolver *r, int64_t binary_id, uint64_t offset, int want_line,
		     struct resolved *out)
{
	struct rloc *l = loc_get(r, binary_id, offset);
	struct rbin *b = &r->bins[l->bin];

	if (!l->symbol || (want_line && !l->source))
		loc_name(r, b, l, want_line);
	if (r->want_inline && !l->inl)
		l->inl = inline_chain(b, l->offset);
	bin_fields(b, out);
	out->symbol = l->symbol;
	out->source = want_line ? l->source : NULL;
	out->inlined = r->want_inline ? l->inl : NULL;
}

void resolver_prefetch(struct resolver *r, int64_t binary_id, const uint64_t *off, size_t n)
{
	size_t bi = bin_get(r, binary_id), k = 0, *idx;
	struct error err = { "" };
	uint64_t *todo;
	char **names;

	if (!n || r->bins[bi].wh < 0 || r->bins[bi].problem)
		return;		/* resolver_lookup names them as cheaply */
	idx = xmalloc(n * sizeof(*idx));
	todo = xmalloc(n * sizeof(*todo));
	for (size_t i = 0; i < n; i++) {
		struct rloc *l = loc_get(r, binary_id, off[i]);

		if (l->symbol)
			continue;
		l->symbol = "[unknown]";	/* an offset given twice is asked once */
		idx[k] = (size_t)(l - r->locs);
		todo[k++] = off[i];
	}
	names = xcalloc(k + 1, sizeof(*names));
	if (k && symworker_lookup(r->worker, r->bins[bi].wh, todo, k, names, &err) < 0) {
		worker_failed(&r->bins[bi], &err);
		for (size_t j = 0; j < k; j++)
			r->locs[idx[j]].symbol = "[binary unavailable]";
	} else {
		for (size_t j = 0; j < k; j++) {
			struct rloc *l = &r->locs[idx[j]];

			l->own_sym = names[j];
			if (names[j])
				l->symbol = names[j];
		}
	}
	free(names);
	free(todo);
	free(idx);
}

void resolver_binary(struct resolver *r, int64_t binary_id, struct resolved *out)
{
	size_t i = bin_get(r, binary_id);	/* may move bins */
	const struct rbin *b = &r->bins[i];

	memset(out, 0, sizeof(*out));
	bin_fields(b, out);
}

int resolver_by_pid(struct resolver *r, int64_t binary_id)
{
	const struct rbin *b;
	size_t i;

	if (!resolve_jit_any(r))
		return 0;
	i = bin_get(r, binary_id);	/* may move bins */
	b = &r->bins[i];
	return b->kind == BIN_NOFILE && b->key && !strcmp(b->key, "[anon]");
}

void resolver_lookup_pid(struct resolver *r, int64_t binary_id, uint64_t offset, uint32_t pid,
			 int want_line, struct resolved *out)
{
	const char *name;

	resolver_lookup(r, binary_id, offset, want_line, out);
	if (pid && resolver_by_pid(r, binary_id) && (name = resolve_jit_name(r, pid, offset))) {
		out->symbol = name;
		if (want_line)
			out->source = "";
		if (r->want_inline)
			out->inlined = "";
	}
}

const char *resolver_debuginfod_summary(struct resolver *r)
{
	free(r->fetch_summary);
	r->fetch_summary = dbgfetch_summary(r->fetch);
	return r->fetch_summary;
}
