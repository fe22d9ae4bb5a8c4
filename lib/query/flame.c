/*
 * flame.c - the merged call tree of a stack_set and its folded stacks
 * (flame.h); the SVG flame graph is flamesvg.c's.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "flame.h"


/* ---- names ---- */

/* Length of the valid UTF-8 sequence at p (XML-legal code point), or 0. */
static int utf8_seq(const unsigned char *p)
{
	uint32_t c;
	int n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, c = p[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff) || c == 0xfffe || c == 0xffff)
		return 0;
	return n;
}

static char *sanitize(const char *s, char *buf, size_t len, int semi)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	if (!len)
		return buf;
	while (*p && o + 1 < len) {
		int n = utf8_seq(p);

		if (n <= 1) {
			unsigned char c = *p;

			if (!n || c < 0x20 || c == 0x7f)
				c = '?';
			else if (semi && c == ';')
				c = ':';
			buf[o++] = (char)c;
			p++;
			continue;
		}
		if (o + n >= len)
			break;
		memcpy(buf + o, p, n);
		o += n;
		p += n;
	}
	buf[o] = 0;
	return buf;
}

char *flame_sanitize(const char *s, char *buf, size_t len)
{
	return sanitize(s, buf, len, 1);
}

char *flame_frame_name(const struct stack_set *set, uint32_t loc, int kernel_suffix,
		       char *buf, size_t len)
{
	const struct stack_sym *sym;
	char raw[4096];

	if (loc >= set->nr_locs || set->locs[loc].sym >= set->nr_syms) {
		snprintf(raw, sizeof(raw), "[unknown]");
	} else {
		sym = &set->syms[set->locs[loc].sym];
		if (!sym->symbol || !*sym->symbol || !strcmp(sym->symbol, "[unknown]"))
			snprintf(raw, sizeof(raw), "[unknown] (%s)",
				 sym->binary && *sym->binary ? util_path_base(sym->binary) : "?");
		else
			snprintf(raw, sizeof(raw), "%s%s", sym->symbol,
				 sym->kernel && kernel_suffix ? "_[k]" : "");
	}
	return flame_sanitize(raw, buf, len);
}

/* ---- the tree ---- */

static void name_rehash(struct flame_tree *t)
{
	size_t n = t->nr_slots ? t->nr_slots * 2 : 256;

	free(t->name_slot);
	t->name_slot = xcalloc(n, sizeof(*t->name_slot));
	t->nr_slots = n;
	for (size_t i = 0; i < t->nr_names; i++) {
		size_t s = hash_string(HASH_STRING_INIT, t->names[i]) & (n - 1);

		while (t->name_slot[s])
			s = (s + 1) & (n - 1);
		t->name_slot[s] = (uint32_t)i + 1;
	}
}

static uint32_t name_intern(struct flame_tree *t, const char *name)
{
	size_t s;

	if ((t->nr_names + 1) * 2 > t->nr_slots)
		name_rehash(t);
	s = hash_string(HASH_STRING_INIT, name) & (t->nr_slots - 1);
	while (t->name_slot[s]) {
		uint32_t i = t->name_slot[s] - 1;

		if (!strcmp(t->names[i], name))
			return i;
		s = (s + 1) & (t->nr_slots - 1);
	}
	ARRAY_GROW(t->names, t->cap_names, t->nr_names + 1);
	t->names[t->nr_names] = xstrdup(name);
	t->name_slot[s] = (uint32_t)t->nr_names + 1;
	return (uint32_t)t->nr_names++;
}

static size_t node_hash(uint32_t parent, uint32_t name, size_t n)
{
	return hash_mix64((uint64_t)parent << 32 | name) & (n - 1);
}

static void node_rehash(struct flame_tree *t)
{
	size_t n = t->nr_node_slots ? t->nr_node_slots * 2 : 1024;

	free(t->node_slot);
	t->node_slot = xcalloc(n, sizeof(*t->node_slot));
	t->nr_node_slots = n;
	for (size_t i = 1; i < t->nr_nodes; i++) {
		size_t s = node_hash(t->nodes[i].parent, t->nodes[i].name, n);

		while (t->node_slot[s])
			s = (s + 1) & (n - 1);
		t->node_slot[s] = (uint32_t)i;
	}
}

/* The child of parent named name, made when missing. */
static uint32_t node_child(struct flame_tree *t, uint32_t parent, uint32_t name)
{
	struct flame_node *nd;
	size_t s;

	if ((t->nr_nodes + 1) * 2 > t->nr_node_slots)
		node_rehash(t);
	s = node_hash(parent, name, t->nr_node_slots);
	while (t->node_slot[s]) {
		uint32_t i = t->node_slot[s];

		if (t->nodes[i].parent == parent && t->nodes[i].name == name)
			return i;
		s = (s + 1) & (t->nr_node_slots - 1);
	}
	ARRAY_GROW(t->nodes, t->cap_nodes, t->nr_nodes + 1);
	nd = &t->nodes[t->nr_nodes];
	memset(nd, 0, sizeof(*nd));
	nd->name = name;
	nd->parent = parent;
	nd->depth = t->nodes[parent].depth + 1;
	nd->next = t->nodes[parent].child;
	t->nodes[parent].child = (uint32_t)t->nr_nodes;
	if (nd->depth > t->max_depth)
		t->max_depth = nd->depth;
	t->node_slot[s] = (uint32_t)t->nr_nodes;
	if (t->nsums) {
		size_t have = t->cap_sums;

		ARRAY_GROW(t->sums, t->cap_sums, (t->nr_nodes + 1) * t->nsums);
		memset(t->sums + have, 0, (t->cap_sums - have) * sizeof(*t->sums));
	}
	return (uint32_t)t->nr_nodes++;
}

static int check_what(const struct stack_set *set, int what, struct error *e)
{
	if (what == FLAME_WEIGHT || what == FLAME_SAMPLES)
		return 0;
	if (what < 0 || what >= set->nr_events || what >= STROBE_MAX_COUNTERS)
		return error_set(e, "no counting event %d in session %lld", what,
				 (long long)set->session.id);
	return 0;
}

static uint64_t entry_value(const struct stack_set *set, const struct stack_entry *s, int what)
{
	if (what == FLAME_SAMPLES)
		return s->samples;
	if (what == FLAME_WEIGHT)
		return set->weighted ? s->weight : s->samples;
	return s->c[what];
}

/* Entry s's samples and counter increases added to node n's sums. */
static void sums_add(struct flame_tree *t, uint32_t n, const struct stack_entry *s)
{
	uint64_t *sum = t->sums + (size_t)n * t->nsums;

	sum[0] += s->samples;
	for (int i = 1; i < t->nsums; i++)
		sum[i] += s->c[i - 1];
}

/* Add set's stacks to t: into value/self, or into base.  With leaf, every
 * entry's path is made, even of no value, and leaf[i] is entry i's node;
 * with sums (t->nsums) too, and each node's sums are added (the metric is
 * of all the samples under a frame, whatever the widths are). */
static void tree_add(struct flame_tree *t, const struct stack_set *set, int what, int base,
		     uint32_t *leaf)
{
	uint32_t *loc_name = xcalloc(set->nr_locs ? set->nr_locs : 1, sizeof(*loc_name));
	int sums = t->nsums && !base;
	char buf[4096];

	for (size_t i = 0; i < set->nr_stacks; i++) {
		const struct stack_entry *s = &set->stacks[i];
		uint64_t v = entry_value(set, s, what);
		uint32_t n;

		if (!v && !leaf && !sums)
			continue;
		flame_sanitize(s->comm ? s->comm : "[unknown]", buf, sizeof(buf));
		n = node_child(t, 0, name_intern(t, buf));
		if (base)
			t->nodes[0].base += v, t->nodes[n].base += v;
		else
			t->nodes[0].value += v, t->nodes[n].value += v;
		if (sums) {
			sums_add(t, 0, s);
			sums_add(t, n, s);
		}
		for (uint32_t k = s->nr; k-- > 0; ) {
			uint32_t l = s->locs[k];
			uint32_t nm;

			if (l < set->nr_locs && loc_name[l]) {
				nm = loc_name[l] - 1;
			} else {
				nm = name_intern(t, flame_frame_name(set, l, 1, buf, sizeof(buf)));
				if (l < set->nr_locs)
					loc_name[l] = nm + 1;
			}
			n = node_child(t, n, nm);
			if (base)
				t->nodes[n].base += v;
			else
				t->nodes[n].value += v;
			if (sums)
				sums_add(t, n, s);
		}
		if (!base)
			t->nodes[n].self += v;
		if (leaf)
			leaf[i] = n;
	}
	free(loc_name);
}

static struct flame_tree *tree_new(void)
{
	struct flame_tree *t = xcalloc(1, sizeof(*t));

	ARRAY_GROW(t->nodes, t->cap_nodes, 1);
	memset(&t->nodes[0], 0, sizeof(t->nodes[0]));
	t->nodes[0].name = name_intern(t, "all");
	t->nr_nodes = 1;
	return t;
}

struct flame_tree *flame_tree_build(const struct stack_set *set, int what, struct error *e)
{
	struct flame_tree *t;

	if (check_what(set, what, e) < 0)
		return NULL;
	t = tree_new();
	tree_add(t, set, what, 0, NULL);
	return t;
}

struct flame_tree *flame_tree_build_sums(const struct stack_set *set, int what,
					 struct error *e)
{
	struct flame_tree *t;

	if (check_what(set, what, e) < 0)
		return NULL;
	t = tree_new();
	t->nsums = 1 + MIN(set->nr_events, STROBE_MAX_COUNTERS);
	ARRAY_GROW(t->sums, t->cap_sums, (size_t)t->nsums);	/* the root's */
	memset(t->sums, 0, t->cap_sums * sizeof(*t->sums));
	tree_add(t, set, what, 0, NULL);
	return t;
}

struct flame_tree *flame_tree_shape(const struct stack_set *set, uint32_t *leaf)
{
	struct flame_tree *t = tree_new();

	tree_add(t, set, FLAME_SAMPLES, 0, leaf);
	return t;
}

void flame_tree_reweigh(struct flame_tree *t, const uint32_t *leaf, const uint64_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < t->nr_nodes; i++)
		t->nodes[i].value = t->nodes[i].self = t->nodes[i].base = 0;
	for (i = 0; i < n; i++)
		t->nodes[leaf[i]].self += v[i];
	/* a node is made after its parent: from the last, each node's value
	 * is whole when it is added to its parent's */
	for (i = t->nr_nodes; i-- > 1; ) {
		t->nodes[i].value += t->nodes[i].self;
		t->nodes[t->nodes[i].parent].value += t->nodes[i].value;
	}
	t->diff = 0;
	t->base_total = 0;
}

int flame_tree_diff(struct flame_tree *t, const struct stack_set *base, int what,
		    struct error *e)
{
	if (check_what(base, what, e) < 0)
		return -1;
	tree_add(t, base, what, 1, NULL);
	t->diff = 1;
	t->base_total = t->nodes[0].base;
	return 0;
}

void flame_tree_free(struct flame_tree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nr_names; i++)
		free(t->names[i]);
	free(t->names);
	free(t->nodes);
	free(t->sums);
	free(t->name_slot);
	free(t->node_slot);
	free(t);
}

int flame_event_index(const struct stack_set *set, const char *name, struct error *e)
{
	char list[512] = "";
	size_t n = 0;

	for (int i = 0; i < set->nr_events && i < STROBE_MAX_COUNTERS; i++) {
		if (!strcmp(set->events[i], name))
			return i;
		n += snprintf(list + n, n < sizeof(list) ? sizeof(list) - n : 0, "%s%s",
			      i ? ", " : "", set->events[i]);
		if (n >= sizeof(list))
			n = sizeof(list) - 1;
	}
	if (!set->nr_events)
		return error_set(e, "no event '%s' in session %lld: it counted no events "
				 "(record with -e EVENT)", name, (long long)set->session.id);
	return error_set(e, "no event '%s' in session %lld: its events are %s", name,
			 (long long)set->session.id, list);
}

/* ---- folded ---- */

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Append node n's path of names ("comm;outer;...;leaf") to b; path has
 * room for t's depth. */
static void path_add(const struct flame_tree *t, uint32_t n, uint32_t *path, struct sbuf *b)
{
	uint32_t d = 0;

	while (n) {
		path[d++] = n;
		n = t->nodes[n].parent;
	}
	while (d-- > 0) {
		const char *name = t->names[t->nodes[path[d]].name];

		sbuf_add(b, name, strlen(name));
		if (d)
			sbuf_add(b, ";", 1);
	}
}

struct sorted_path {
	const char *s;
	uint32_t node;
};

static int sorted_path_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sorted_path *)a)->s, ((const struct sorted_path *)b)->s);
}

uint32_t *flame_tree_order(const struct flame_tree *t, const uint32_t *nodes, size_t n,
			   size_t *nr)
{
	unsigned char *seen = xcalloc(t->nr_nodes ? t->nr_nodes : 1, 1);
	uint32_t *path = xmalloc((t->max_depth + 1) * sizeof(*path));
	struct sorted_path *sp = xcalloc(n ? n : 1, sizeof(*sp));
	uint32_t *order;
	size_t k = 0, i;

	for (i = 0; i < n; i++) {
		struct sbuf b = { 0 };

		if (nodes[i] >= t->nr_nodes || seen[nodes[i]])
			continue;
		seen[nodes[i]] = 1;
		path_add(t, nodes[i], path, &b);
		sbuf_add(&b, "", 1);
		sp[k].s = b.s;
		sp[k++].node = nodes[i];
	}
	qsort(sp, k, sizeof(*sp), sorted_path_cmp);
	order = xcalloc(k ? k : 1, sizeof(*order));
	for (i = 0; i < k; i++) {
		order[i] = sp[i].node;
		free((char *)sp[i].s);
	}
	free(sp);
	free(path);
	free(seen);
	*nr = k;
	return order;
}

int flame_write_folded_ordered(const struct flame_tree *t, const uint32_t *order, size_t n,
			       FILE *f, struct error *e)
{
	uint32_t *path = xmalloc((t->max_depth + 1) * sizeof(*path));
	struct sbuf b = { 0 };
	size_t prev = SIZE_MAX, lines = 0, all = 0, i;
	int ret = 0;

	for (i = 1; i < t->nr_nodes; i++)
		all += t->nodes[i].self != 0;
	for (i = 0; i < n; i++) {
		size_t start = b.n;

		if (!t->nodes[order[i]].self)
			continue;
		path_add(t, order[i], path, &b);
		sbuf_addf(&b, " %" PRIu64 "\n", t->nodes[order[i]].self);
		/* a line's order is its path's but where a count's digit meets
		 * a name's byte below '0' (a path that starts another): check
		 * each line against the one before.  They are compared as
		 * flame_write_folded() compares them: up to their '\n', which
		 * is below any byte of a name or count. */
		if (prev != SIZE_MAX && strcmp(b.s + prev, b.s + start) >= 0)
			break;
		prev = start;
		lines++;
	}
	free(path);
	if (i < n || lines != all) {
		/* out of order, or order misses a node that ends a stack */
		free(b.s);
		return flame_write_folded(t, f, e);
	}
	if (b.n && fwrite(b.s, 1, b.n, f) != b.n)
		ret = error_set(e, "writing the folded stacks failed");
	free(b.s);
	return ret;
}

int flame_write_folded(const struct flame_tree *t, FILE *f, struct error *e)
{
	char **lines = NULL;
	size_t nr = 0, cap = 0;
	uint32_t *path = xmalloc((t->max_depth + 1) * sizeof(*path));
	int ret = 0;

	for (size_t i = 1; i < t->nr_nodes; i++) {
		struct sbuf b = { 0 };
		uint32_t d = 0, n = (uint32_t)i;

		if (!t->nodes[i].self)
			continue;
		while (n) {
			path[d++] = n;
			n = t->nodes[n].parent;
		}
		/* sbuf_add, not a format per frame: a window's folded text is
		 * megabytes, and formatting it was a quarter of its time */
		while (d-- > 0) {
			const char *name = t->names[t->nodes[path[d]].name];

			sbuf_add(&b, name, strlen(name));
			if (d)
				sbuf_add(&b, ";", 1);
		}
		sbuf_addf(&b, " %" PRIu64 "\n", t->nodes[i].self);
		ARRAY_GROW(lines, cap, nr + 1);
		lines[nr++] = b.s;
	}
	if (nr)
		qsort(lines, nr, sizeof(*lines), line_cmp);
	for (size_t i = 0; i < nr; i++) {
		if (fputs(lines[i], f) == EOF && !ret)
			ret = error_set(e, "writing the folded stacks failed");
		free(lines[i]);
	}
	free(lines);
	free(path);
	return ret;
}

char *flame_sanitize_text(const char *s, char *buf, size_t len)
{
	return sanitize(s, buf, len, 0);
}
