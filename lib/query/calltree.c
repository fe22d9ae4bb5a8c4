/*
 * calltree.c - inclusive reports and call trees of call stacks (see
 * calltree.h).
 *
 * Both walk the set's entries (one per distinct stack, process and comm,
 * stacks.h), so their cost is the number of distinct stacks times their
 * depth, never the number of samples.  --children counts a function once
 * per entry with a stamp per group (the last entry that counted it); a
 * call tree finds its paths' nodes through an otable of (parent,
 * function).
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "calltree.h"
#include "otable.h"
#include "procset.h"

int calltree_summary(struct db *db, const struct stack_set *set, struct report_summary *sum,
		      struct error *e)
{
	int i;

	memset(sum, 0, sizeof(*sum));
	sum->session = set->session;
	sum->samples = set->samples;
	sum->weighted = set->weighted;
	sum->weight = set->weight;
	memcpy(sum->total, set->total, sizeof(sum->total));
	for (i = 0; i < set->nr_notes && i < (int)ARRAY_SIZE(sum->notes); i++)
		snprintf(sum->notes[i], sizeof(sum->notes[i]), "%s", set->notes[i]);
	sum->nr_notes = i;
	return report_unattributed(db, &set->session, sum->unattributed, e);
}

/* A column of a table, and where its index goes. */
struct colspec {
	const char *name;
	enum col_type type;
	int *col;
};

/* The n columns of c, in order. */
static void add_cols(struct table *t, const struct colspec *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		*c[i].col = table_add_col(t, c[i].name, c[i].type);
}

/* A column per counting event of set, named by it: the first one's index
 * (0 when none). */
static int add_event_cols(struct table *t, const struct stack_set *set)
{
	int first = 0;

	for (int k = 0; k < set->nr_events; k++) {
		int c = table_add_col(t, set->events[k], COL_INT);

		if (!k)
			first = c;
	}
	return first;
}

/* ---- --children ---- */

struct cgroup {
	uint32_t sym;			/* its function (by binary: one of its binary's) */
	int64_t proc;			/* the process's start with a split pid, else 0 */
	uint64_t self_samples, self_weight, total_samples, total_weight;
	uint64_t self_c[STROBE_MAX_COUNTERS], total_c[STROBE_MAX_COUNTERS];
};

struct children {
	const struct stack_set *set;
	int by_binary;
	const struct cgroup *g;
};

/* qsort_r: ctx is the struct children */
static int cgroup_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct children *sort_ctx = ctx;
	const struct cgroup *a = pa, *b = pb;
	const struct stack_sym *x = &sort_ctx->set->syms[a->sym], *y = &sort_ctx->set->syms[b->sym];
	int c;

	if (a->total_weight != b->total_weight)
		return a->total_weight > b->total_weight ? -1 : 1;
	if (a->self_weight != b->self_weight)
		return a->self_weight > b->self_weight ? -1 : 1;
	if (a->total_samples != b->total_samples)
		return a->total_samples > b->total_samples ? -1 : 1;
	if ((c = strcmp(x->binary, y->binary)))
		return c;
	if (!sort_ctx->by_binary && (c = strcmp(x->symbol, y->symbol)))
		return c;
	if (x->binary_id != y->binary_id)
		return x->binary_id < y->binary_id ? -1 : 1;
	return (a->proc > b->proc) - (a->proc < b->proc);
}

static int int64_cmp(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

/* The table of --children: the groups g[0..ng) sorted, a process column
 * when ps (the pid's processes) is given. */
static struct table *children_table(const struct stack_set *set, const struct report_opts *o,
				    const struct report_summary *sum, const struct cgroup *g,
				    size_t ng, const struct procset *ps)
{
	int by_binary = o->by == REPORT_BY_BINARY, nev = set->nr_events, k;
	int c_proc = -1, c_bin, c_bid, c_sym, c_ss, c_ts, c_sp, c_tp, c_ev0 = 0;
	struct table *t;
	size_t i, nshow;
	const struct colspec cols[] = {
		{ "binary", COL_STR, &c_bin }, { "build_id", COL_STR, &c_bid },
		{ "symbol", COL_STR, &c_sym }, { "self_samples", COL_INT, &c_ss },
		{ "total_samples", COL_INT, &c_ts }, { "self_percent", COL_PCT, &c_sp },
		{ "total_percent", COL_PCT, &c_tp },
	};

	t = table_new();
	if (ps)
		c_proc = table_add_col(t, "process", COL_STR);
	add_cols(t, cols, ARRAY_SIZE(cols));
	for (k = 0; k < nev; k++) {
		char name[160];
		int c;

		snprintf(name, sizeof(name), "%s_self", set->events[k]);
		c = table_add_col(t, name, COL_INT);
		snprintf(name, sizeof(name), "%s_total", set->events[k]);
		table_add_col(t, name, COL_INT);
		if (!k)
			c_ev0 = c;
	}
	report_add_meta(t, o, sum);
	table_add_meta(t, "children", "inclusive", 0);
	table_add_meta(t, "call_graph", set->call_graph, 0);
	{
		char buf[32];

		snprintf(buf, sizeof(buf), "%" PRIu64, set->no_stack);
		table_add_meta(t, "no_stack", buf, 1);
		snprintf(buf, sizeof(buf), "%" PRIu64, set->incomplete);
		table_add_meta(t, "incomplete", buf, 1);
	}
	nshow = o->limit && o->limit < ng ? o->limit : ng;
	for (i = 0; i < nshow; i++) {
		const struct cgroup *x = &g[i];
		const struct stack_sym *y = &set->syms[x->sym];
		size_t row = table_add_row(t);

		if (c_proc >= 0) {
			char l[64];

			procset_label(ps, o->pid, x->proc, l, sizeof(l));
			table_set_str(t, row, c_proc, l);
		}
		table_set_str(t, row, c_bin, y->binary);
		table_set_str(t, row, c_bid, y->build_id);
		if (!by_binary)
			table_set_str(t, row, c_sym, y->symbol);
		table_set_int(t, row, c_ss, (int64_t)x->self_samples);
		table_set_int(t, row, c_ts, (int64_t)x->total_samples);
		table_set_float(t, row, c_sp, set->weight ? 100.0 * x->self_weight / set->weight : 0);
		table_set_float(t, row, c_tp, set->weight ? 100.0 * x->total_weight / set->weight : 0);
		for (k = 0; k < nev; k++) {
			table_set_int(t, row, c_ev0 + 2 * k, (int64_t)x->self_c[k]);
			table_set_int(t, row, c_ev0 + 2 * k + 1, (int64_t)x->total_c[k]);
		}
	}
	return t;
}

struct table *calltree_children(struct db *db, const struct stack_set *set,
				 const struct report_opts *o, const struct report_summary *sum,
				 struct error *e)
{
	int by_binary = o->by == REPORT_BY_BINARY;
	size_t nsyms = set->nr_syms, nbase = 0, nproc = 1, ng, i, j;
	uint32_t *base = xcalloc(nsyms ? nsyms : 1, sizeof(*base));	/* sym -> base group */
	uint32_t *rep;				/* base group -> a sym */
	int64_t *procs = NULL;			/* the split pid's starts, sorted */
	size_t *stamp;
	struct cgroup *g;
	struct procset ps = { 0 };
	struct children cx = { .set = set, .by_binary = by_binary };
	struct table *t;
	int split = 0, nev = set->nr_events, k;

	if (o->by != REPORT_BY_SYMBOL && !by_binary) {
		free(base);
		error_set(e, "--children sums functions or binaries: give --by symbol or --by binary");
		return NULL;
	}
	/* base groups: each sym, or each binary */
	rep = xcalloc(nsyms ? nsyms : 1, sizeof(*rep));
	for (i = 0; i < nsyms; i++) {
		if (by_binary) {
			for (j = 0; j < nbase && set->syms[rep[j]].binary_id != set->syms[i].binary_id;
			     j++)
				;
			/* binaries are few next to functions; a linear look
			 * per function is cheap enough and keeps order */
			if (j == nbase)
				rep[nbase++] = (uint32_t)i;
			base[i] = (uint32_t)j;
		} else {
			rep[nbase] = (uint32_t)i;
			base[i] = (uint32_t)nbase++;
		}
	}
	/* --pid P of several processes: a group per process and function */
	if (o->pid >= 0 && !o->has_pid_at) {
		if (procset_load(db, &set->session, o->pid, &ps, e) < 0)
			goto fail;
		if (ps.n > 1) {
			split = 1;
			procs = xcalloc(set->nr_stacks + 1, sizeof(*procs));
			for (i = 0; i < set->nr_stacks; i++)
				procs[i] = (int64_t)set->stacks[i].start_ns;
			qsort(procs, set->nr_stacks, sizeof(*procs), int64_cmp);
			for (i = 0, nproc = 0; i < set->nr_stacks; i++)
				if (!nproc || procs[nproc - 1] != procs[i])
					procs[nproc++] = procs[i];
			if (!nproc)
				nproc = 1;
		}
	}
	ng = nbase * nproc;
	g = xcalloc(ng ? ng : 1, sizeof(*g));
	stamp = xcalloc(ng ? ng : 1, sizeof(*stamp));
	for (i = 0; i < ng; i++) {
		g[i].sym = rep[i % (nbase ? nbase : 1)];
		g[i].proc = split ? procs[i / nbase] : 0;
	}
	for (i = 0; i < set->nr_stacks; i++) {
		const struct stack_entry *se = &set->stacks[i];
		size_t off = 0;

		if (split) {
			int64_t st = (int64_t)se->start_ns;
			const int64_t *p = bsearch(&st, procs, nproc, sizeof(*procs), int64_cmp);

			off = (size_t)(p - procs) * nbase;
		}
		for (j = 0; j < se->nr; j++) {
			size_t gi = off + base[set->locs[se->locs[j]].sym];
			struct cgroup *x = &g[gi];

			if (!j) {
				x->self_samples += se->samples;
				x->self_weight += se->weight;
				for (k = 0; k < nev; k++)
					x->self_c[k] += se->c[k];
			}
			if (stamp[gi] == i + 1)
				continue;	/* recursion: once per sample */
			stamp[gi] = i + 1;
			x->total_samples += se->samples;
			x->total_weight += se->weight;
			for (k = 0; k < nev; k++)
				x->total_c[k] += se->c[k];
		}
	}
	/* the groups with samples, sorted */
	for (i = j = 0; i < ng; i++)
		if (g[i].total_samples || g[i].total_weight)
			g[j++] = g[i];
	ng = j;
	if (ng)
		qsort_r(g, ng, sizeof(*g), cgroup_cmp, &cx);

	t = children_table(set, o, sum, g, ng, split ? &ps : NULL);
	free(g);
	free(stamp);
	free(procs);
	free(base);
	free(rep);
	procset_free(&ps);
	return t;
fail:
	free(procs);
	free(base);
	free(rep);
	procset_free(&ps);
	return NULL;
}

/* ---- call trees ---- */

/* A node while building: key (parent + 1, sym, 0, 0). */
struct bnode {
	int64_t key[4];
	uint64_t samples, weight;
	uint64_t c[STROBE_MAX_COUNTERS];
	size_t first, next;		/* children list (index + 1; 0: none) */
};

/* An otable entry: a node's (parent + 1, sym), its index in the nodes. */
struct bnode_idx {
	int64_t key[2];
	size_t i;
};

/* The node (parent, sym), added if new; returns its index. */
static size_t bnode_get(struct otable *m, struct bnode **v, size_t *n, size_t *cap,
			size_t parent, uint32_t sym)
{
	const int64_t key[2] = { (int64_t)parent + 1, sym };
	int added;
	struct bnode_idx *x = otable_get_sized(m, key, sizeof(key), &added);

	if (added) {
		ARRAY_GROW(*v, *cap, *n + 1);
		memset(&(*v)[*n], 0, sizeof(**v));
		memcpy((*v)[*n].key, key, sizeof(key));
		x->i = (*n)++;
	}
	return x->i;
}

/* What child_cmp() compares by (qsort_r's context). */
struct child_ctx {
	const struct stack_set *set;
	const struct bnode *v;
};

static int child_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct child_ctx *cc = ctx;
	const struct bnode *a = &cc->v[*(const size_t *)pa], *b = &cc->v[*(const size_t *)pb];
	const struct stack_sym *x = &cc->set->syms[a->key[1]], *y = &cc->set->syms[b->key[1]];
	int c;

	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	if ((c = strcmp(x->symbol, y->symbol)))
		return c;
	if ((c = strcmp(x->binary, y->binary)))
		return c;
	return (a->key[1] > b->key[1]) - (a->key[1] < b->key[1]);
}

void calltree_free(struct calltree *t)
{
	if (!t)
		return;
	free(t->symbol);
	free(t->v);
	free(t);
}

struct calltree *calltree_build(const struct stack_set *set, const char *symbol,
				enum calltree_dir dir, struct error *e)
{
	unsigned char *target = xcalloc(set->nr_syms ? set->nr_syms : 1, 1);
	struct bnode *v = NULL;
	size_t n = 0, cap = 0, i, ntarget = 0, nroots = 0;
	size_t *order, *kids, *stack, nkids, sp;
	struct otable m;
	struct child_ctx cc;
	struct calltree *t;
	int nev = set->nr_events;

	otable_init(&m, sizeof(struct bnode_idx), sizeof(((struct bnode_idx *)0)->key), 256);
	for (i = 0; i < set->nr_syms; i++)
		if (!strcmp(set->syms[i].symbol, symbol))
			target[i] = 1, ntarget++;
	if (!ntarget) {
		free(target);
		error_set(e, "no function named '%s' in the call stacks of session %lld (with "
			  "these filters): 'strobe report --by symbol' lists the functions",
			  symbol, (long long)set->session.id);
		return NULL;
	}
	for (i = 0; i < set->nr_stacks; i++) {
		const struct stack_entry *se = &set->stacks[i];
		size_t at = se->nr, node = (size_t)-1;
		uint32_t j;
		int step;

		/* callers: the innermost occurrence, towards the outermost
		 * frame; callees: the outermost, towards frame 0 */
		if (dir == CALLTREE_CALLERS) {
			for (j = 0; j < se->nr && at == se->nr; j++)
				if (target[set->locs[se->locs[j]].sym])
					at = j;
		} else {
			for (j = se->nr; j > 0 && at == se->nr; j--)
				if (target[set->locs[se->locs[j - 1]].sym])
					at = j - 1;
		}
		if (at == se->nr)
			continue;
		step = dir == CALLTREE_CALLERS ? 1 : -1;
		for (int64_t f = (int64_t)at; f >= 0 && f < (int64_t)se->nr; f += step) {
			struct bnode *b;
			int k;

			node = bnode_get(&m, &v, &n, &cap, node, set->locs[se->locs[f]].sym);
			b = &v[node];
			b->samples += se->samples;
			b->weight += se->weight;
			for (k = 0; k < nev; k++)
				b->c[k] += se->c[k];
		}
	}
	otable_free(&m);
	free(target);

	/* lay the tree out depth first, children by weight */
	t = xcalloc(1, sizeof(*t));
	t->set = set;
	t->dir = dir;
	t->symbol = xstrdup(symbol);
	t->v = xcalloc(n ? n : 1, sizeof(*t->v));
	order = xcalloc(n + 1, sizeof(*order));
	kids = xcalloc(n + 1, sizeof(*kids));
	stack = xcalloc(n + 1, sizeof(*stack));
	/* children lists: first/next through the parent's key */
	for (i = n; i > 0; i--) {
		struct bnode *b = &v[i - 1];

		if (b->key[0]) {
			b->next = v[b->key[0] - 1].first;
			v[b->key[0] - 1].first = i;
		} else {
			kids[nroots++] = i - 1;
		}
	}
	cc.set = set;
	cc.v = v;
	if (nroots)
		qsort_r(kids, nroots, sizeof(*kids), child_cmp, &cc);
	/* a stack of nodes to visit, the next on top */
	sp = 0;
	for (i = nroots; i > 0; i--)
		stack[sp++] = kids[i - 1];
	while (sp) {
		size_t x = stack[--sp], c;
		struct calltree_node *tn = &t->v[t->n];
		const struct bnode *b = &v[x];

		order[x] = t->n++;
		tn->sym = (uint32_t)b->key[1];
		tn->parent = b->key[0] ? order[b->key[0] - 1] : (size_t)-1;
		tn->depth = b->key[0] ? t->v[tn->parent].depth + 1 : 0;
		tn->samples = b->samples;
		tn->weight = b->weight;
		memcpy(tn->c, b->c, sizeof(tn->c));
		/* the last of its siblings: nothing of its parent left on the stack */
		tn->last = !sp || (b->key[0] ? v[stack[sp - 1]].key[0] != b->key[0] :
				   v[stack[sp - 1]].key[0] != 0);
		for (nkids = 0, c = b->first; c; c = v[c - 1].next)
			kids[nkids++] = c - 1;
		if (nkids)
			qsort_r(kids, nkids, sizeof(*kids), child_cmp, &cc);
		for (c = nkids; c > 0; c--)
			stack[sp++] = kids[c - 1];
	}
	free(order);
	free(kids);
	free(stack);
	free(v);
	return t;
}

static double node_pct(const struct calltree *t, const struct calltree_node *x)
{
	return t->set->weight ? 100.0 * x->weight / t->set->weight : 0;
}

struct table *calltree_table(const struct calltree *t, enum output_format fmt)
{
	const struct stack_set *set = t->set;
	struct table *tb = table_new();
	int nev = set->nr_events, k, c_ev0 = 0;
	int c_depth = -1, c_path = -1, c_sym, c_bin = -1, c_bid = -1, c_samples, c_pct;
	char title[300];
	struct sbuf line = { 0 };
	char **cont = NULL;		/* text: the prefix of each depth's children */
	size_t *path_len = NULL;	/* CSV: the path's length at each depth */
	size_t i, maxdepth = 0;

	for (i = 0; i < t->n; i++)
		maxdepth = MAX(maxdepth, t->v[i].depth);
	if (fmt == OUTPUT_TEXT) {
		c_pct = table_add_col(tb, "percent", COL_PCT);
		c_samples = table_add_col(tb, "samples", COL_INT);
		c_ev0 = add_event_cols(tb, set);
		snprintf(title, sizeof(title), "%s of %s",
			 t->dir == CALLTREE_CALLERS ? "callers" : "callees", t->symbol);
		c_sym = table_add_col(tb, title, COL_STR);
		cont = xcalloc(maxdepth + 2, sizeof(*cont));
	} else {
		const struct colspec cols[] = {
			{ "depth", COL_INT, &c_depth }, { "path", COL_STR, &c_path },
			{ "symbol", COL_STR, &c_sym }, { "binary", COL_STR, &c_bin },
			{ "build_id", COL_STR, &c_bid }, { "samples", COL_INT, &c_samples },
			{ "percent", COL_PCT, &c_pct },
		};

		add_cols(tb, cols, ARRAY_SIZE(cols));
		c_ev0 = add_event_cols(tb, set);
		path_len = xcalloc(maxdepth + 2, sizeof(*path_len));
	}
	for (i = 0; i < t->n; i++) {
		const struct calltree_node *x = &t->v[i];
		const struct stack_sym *y = &set->syms[x->sym];
		size_t row = table_add_row(tb);

		table_set_float(tb, row, c_pct, node_pct(t, x));
		table_set_int(tb, row, c_samples, (int64_t)x->samples);
		for (k = 0; k < nev; k++)
			table_set_int(tb, row, c_ev0 + k, (int64_t)x->c[k]);
		if (fmt == OUTPUT_TEXT) {
			const struct stack_sym *py = x->depth ? &set->syms[t->v[x->parent].sym] : NULL;

			line.n = 0;
			if (line.s)
				line.s[0] = 0;
			for (uint32_t d = 1; d < x->depth; d++)
				sbuf_addf(&line, "%s", cont[d]);
			if (x->depth)
				sbuf_addf(&line, "%s", x->last ? "`-- " : "|-- ");
			sbuf_addf(&line, "%s", y->symbol);
			if (!py || py->binary_id != y->binary_id)
				sbuf_addf(&line, "  [%s]", util_path_base(y->binary));
			table_set_str(tb, row, c_sym, line.s);
			cont[x->depth] = x->last ? "    " : "|   ";
		} else {
			/* the path: the parent's, then this function */
			line.n = x->depth ? path_len[x->depth - 1] : 0;
			if (line.s)
				line.s[line.n] = 0;
			sbuf_addf(&line, "%s%s", x->depth ? ";" : "", y->symbol);
			path_len[x->depth] = line.n;
			table_set_int(tb, row, c_depth, x->depth);
			table_set_str(tb, row, c_path, line.s);
			table_set_str(tb, row, c_sym, y->symbol);
			table_set_str(tb, row, c_bin, y->binary);
			table_set_str(tb, row, c_bid, y->build_id);
		}
	}
	free(line.s);
	free(cont);
	free(path_len);
	return tb;
}

static void json_node_open(FILE *f, const struct calltree *t, const struct calltree_node *x)
{
	const struct stack_sym *y = &t->set->syms[x->sym];

	fputs("{\"symbol\":", f);
	json_write_string(f, y->symbol);
	fputs(",\"binary\":", f);
	json_write_string(f, y->binary);
	fputs(",\"build_id\":", f);
	if (y->build_id)
		json_write_string(f, y->build_id);
	else
		fputs("null", f);
	fprintf(f, ",\"samples\":%" PRIu64 ",\"percent\":%.2f", x->samples, node_pct(t, x));
	for (int k = 0; k < t->set->nr_events; k++) {
		fputc(',', f);
		json_write_string(f, t->set->events[k]);
		fprintf(f, ":%" PRIu64, x->c[k]);
	}
	fputs(",\"children\":[", f);
}

int calltree_write_json(const struct calltree *t, FILE *f)
{
	const struct stack_set *set = t->set;
	size_t i;

	fprintf(f, "{\"meta\":{\"session\":%lld,\"name\":", (long long)set->session.id);
	json_write_string(f, set->session.name);
	fputs(",\"call_graph\":", f);
	json_write_string(f, set->call_graph);
	fprintf(f, ",\"tree\":\"%s\",\"symbol\":",
		t->dir == CALLTREE_CALLERS ? "callers" : "callees");
	json_write_string(f, t->symbol);
	fprintf(f, ",\"samples\":%" PRIu64 ",\"percent_of\":\"%s\"", set->samples,
		set->weighted ? "period" : "samples");
	if (set->weighted)
		fprintf(f, ",\"period\":%" PRIu64, set->weight);
	fprintf(f, ",\"no_stack\":%" PRIu64 ",\"incomplete\":%" PRIu64 ",\"events\":[",
		set->no_stack, set->incomplete);
	for (int k = 0; k < set->nr_events; k++) {
		if (k)
			fputc(',', f);
		json_write_string(f, set->events[k]);
	}
	fputs("]},\n\"roots\":[", f);
	for (i = 0; i < t->n; i++) {
		const struct calltree_node *x = &t->v[i];

		if (i) {
			uint32_t pd = t->v[i - 1].depth;

			if (x->depth <= pd) {
				for (uint32_t d = x->depth; d <= pd; d++)
					fputs("]}", f);
				fputc(',', f);
			}
			if (!x->depth)
				fputc('\n', f);
		}
		json_node_open(f, t, x);
	}
	if (t->n)
		for (uint32_t d = 0; d <= t->v[t->n - 1].depth; d++)
			fputs("]}", f);
	fputs("]}\n", f);
	return ferror(f) ? -1 : 0;
}
