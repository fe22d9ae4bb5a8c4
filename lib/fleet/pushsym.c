/*
 * pushsym.c - the names of a pushed session's sampled locations that the
 * fleet lacks, into its table symbols (pushgen.h, doc/FLEET.md): asked of
 * the server by binary key, named each binary's at once.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "chclient.h"
#include "db.h"
#include "pushgen.h"
#include "resolve.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The (binary_key, offset) pairs the fleet already names, of the keys of
 * g's locations: *lines (sorted "KEY\tOFFSET", KEY escaped as in TSV,
 * pointing into *text) */
static int server_symbols(struct gen *g, struct sbuf *text, char ***lines, size_t *n,
			  struct error *e)
{
	const char **keys = xmalloc((g->locs.nr + 1) * sizeof(*keys));
	struct sbuf q = { 0 };
	size_t nk = 0, cap = 0;
	char *p;
	int ret;

	*lines = NULL;
	*n = 0;
	for (struct loc *l = NULL; (l = otable_next(&g->locs, l));)
		keys[nk++] = l->key;
	qsort(keys, nk, sizeof(*keys), cmp_str);
	sbuf_addf(&q, "SELECT binary_key, offset FROM symbols WHERE binary_key IN (");
	for (size_t i = 0, first = 1; i < nk; i++) {
		if (i > 0 && !strcmp(keys[i], keys[i - 1]))
			continue;
		if (!first)
			sbuf_add(&q, ",", 1);
		push_sql_quote(&q, keys[i]);
		first = 0;
	}
	sbuf_add(&q, ") FORMAT TabSeparated", strlen(") FORMAT TabSeparated"));
	free(keys);
	ret = nk ? chclient_query(g->c, q.s, text, e) : 0;
	free(q.s);
	if (ret < 0)
		return -1;
	for (p = text->s; p && *p;) {
		char *nl = strchr(p, '\n');

		if (nl)
			*nl = 0;
		if (*n == cap)
			*lines = xrealloc(*lines, (cap = cap ? 2 * cap : 1024) * sizeof(**lines));
		(*lines)[(*n)++] = p;
		p = nl ? nl + 1 : p + strlen(p);
	}
	qsort(*lines, *n, sizeof(**lines), cmp_str);
	return 0;
}

static int cmp_loc(const void *a, const void *b)
{
	const struct loc *x = *(const struct loc *const *)a, *y = *(const struct loc *const *)b;

	if (x->binary_id != y->binary_id)
		return x->binary_id < y->binary_id ? -1 : 1;
	return (x->offset > y->offset) - (x->offset < y->offset);
}

/* Name the locations todo[0..n) not named yet: each binary's at once
 * (resolver_prefetch: one message per batch through a symbol worker). */
static void name_locs(struct gen *g, struct loc **todo, size_t n)
{
	uint64_t *off = xmalloc((n + 1) * sizeof(*off));

	qsort(todo, n, sizeof(*todo), cmp_loc);
	for (size_t i = 0, j; i < n; i = j) {
		size_t k = 0;

		for (j = i; j < n && todo[j]->binary_id == todo[i]->binary_id; j++)
			if (!todo[j]->symbol)
				off[k++] = todo[j]->offset;
		resolver_prefetch(g->res, todo[i]->binary_id, off, k);
	}
	for (size_t i = 0; i < n; i++) {
		struct resolved rs;

		if (todo[i]->symbol)
			continue;
		resolver_lookup(g->res, todo[i]->binary_id, todo[i]->offset, 0, &rs);
		todo[i]->symbol = rs.symbol;
	}
	free(off);
}

/* "KEY\tOFFSET" of l into line (KEY escaped as in TSV) */
static void loc_line(struct sbuf *line, const struct loc *l)
{
	line->n = 0;
	push_tsv_escape(line, l->key);
	sbuf_add(line, "\t", 1);
	push_tsv_u64(line, l->offset, 0);
}

int pushsym_send(struct gen *g, struct error *e)
{
	struct sbuf rows = { 0 }, text = { 0 }, line = { 0 };
	struct loc **todo = xmalloc((g->locs.nr + 1) * sizeof(*todo));
	char **have = NULL;
	size_t n = 0, nhave = 0, ntodo = 0;
	int ret = 0;

	if (server_symbols(g, &text, &have, &nhave, e) < 0) {
		free(todo);
		return error_prefix(e, "session %" PRId64 ", symbols", g->s->id);
	}
	for (struct loc *l = NULL; (l = otable_next(&g->locs, l));) {
		char *key;

		loc_line(&line, l);
		key = line.s;
		if (nhave && bsearch(&key, have, nhave, sizeof(*have), cmp_str))
			continue;
		todo[ntodo++] = l;
	}
	name_locs(g, todo, ntodo);
	for (size_t i = 0; i < ntodo; i++) {
		const struct loc *l = todo[i];

		/* while the session runs, a location not named yet ([binary
		 * unavailable] before the binary or the kallsyms snapshot is
		 * stored, [unknown]) may be named later: its row goes when the
		 * session has stopped, for the fleet keeps the first name */
		if (g->running && l->symbol && l->symbol[0] == '[')
			continue;
		loc_line(&line, l);
		sbuf_add(&rows, line.s, strlen(line.s));
		sbuf_add(&rows, "\t", 1);
		push_tsv_escape(&rows, l->symbol);
		sbuf_add(&rows, "\n", 1);
		if (++n == g->batch_rows) {
			ret = chclient_insert(g->c, "INSERT INTO symbols (binary_key, offset, symbol) "
					      "FORMAT TabSeparated", PUSH_INSERT_SETTINGS,
					      rows.s, rows.n, e);
			rows.n = n = 0;
			if (ret < 0)
				break;
		}
	}
	if (!ret && n)
		ret = chclient_insert(g->c, "INSERT INTO symbols (binary_key, offset, symbol) "
				      "FORMAT TabSeparated", PUSH_INSERT_SETTINGS, rows.s, rows.n, e);
	free(todo);
	free(rows.s);
	free(line.s);
	free(text.s);
	free(have);
	return ret < 0 ? error_prefix(e, "session %" PRId64 ", symbols", g->s->id) : 0;
}
