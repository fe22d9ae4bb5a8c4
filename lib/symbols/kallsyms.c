/*
 * kallsyms.c - kernel text symbols from /proc/kallsyms (see kallsyms.h).
 *
 * A snapshot is the text symbols only ("t", "T", "w", "W"), sorted by
 * address, one "addr type name [module]" line each.  Lookups name an
 * address by the last symbol at or below it, which ends at the next
 * symbol of the same module (the core kernel being one), or 64 KiB after
 * its start when it is the last of its module.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "kallsyms.h"

#define KALLSYMS_PATH "/proc/kallsyms"
#define LAST_SYM_SPAN (64 * 1024)

struct ksym {
	uint64_t addr;
	const char *name;
	const char *module;	/* NULL: the core kernel */
	size_t idx;		/* order in the input, for a stable sort */
	char type;
};

struct kallsyms {
	char *arena;		/* the input, cut into strings */
	struct ksym *sym;
	size_t n;
};

static int text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/*
 * Split one line "addr type name [module]" (or the /proc/kallsyms form
 * "addr type name\t[module]") in place.  Returns 1 for a line, 0 for an
 * empty one, -1 when malformed.
 */
static int split_line(char *line, struct ksym *k)
{
	char *p = line, *end, *mod;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return 0;
	errno = 0;
	k->addr = strtoull(p, &end, 16);
	if (errno || end == p || (*end != ' ' && *end != '\t'))
		return -1;
	p = end;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || (p[1] != ' ' && p[1] != '\t'))
		return -1;
	k->type = *p;
	p += 2;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return -1;
	k->name = p;
	while (*p && *p != ' ' && *p != '\t')
		p++;
	k->module = NULL;
	if (!*p)
		return 1;
	*p++ = 0;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return 1;
	if (*p != '[')
		return -1;
	mod = ++p;
	while (*p && *p != ']')
		p++;
	if (*p != ']' || p == mod)
		return -1;
	*p = 0;
	k->module = mod;
	return 1;
}

static int leading_underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* By address, the preferred name of an address first: global over
 * local, fewer leading underscores, then input order. */
static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	int gx = x->type == 'T' || x->type == 'W';
	int gy = y->type == 'T' || y->type == 'W';
	int d;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (gx != gy)
		return gy - gx;
	d = leading_underscores(x->name) - leading_underscores(y->name);
	if (d)
		return d;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Read the text symbols of buf (modified in place) into *out, sorted.
 * Returns the count, or -1 on a malformed line (*bad: its number). */
static long read_syms(char *buf, size_t len, struct ksym **out, size_t *bad)
{
	struct ksym *sym = NULL;
	size_t n = 0, cap = 0, lineno = 0;
	char *p = buf, *end = buf + len;

	while (p < end) {
		char *nl = memchr(p, '\n', end - p);
		struct ksym k;
		int r;

		if (!nl)
			nl = end;
		*nl = 0;
		lineno++;
		r = split_line(p, &k);
		p = nl + 1;
		if (r < 0) {
			free(sym);
			*bad = lineno;
			return -1;
		}
		if (!r || !text_type(k.type))
			continue;
		k.idx = n;
		ARRAY_GROW(sym, cap, n + 1);
		sym[n++] = k;
	}
	if (n)
		qsort(sym, n, sizeof(*sym), ksym_cmp);
	*out = sym;
	return (long)n;
}

static int all_zero(const struct ksym *sym, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (sym[i].addr)
			return 0;
	return 1;
}

int kallsyms_snapshot(const char *path, char **buf, size_t *len, struct error *e)
{
	struct ksym *sym;
	size_t in_len, bad, i, cap, n = 0;
	char *in, *out;
	long count;

	if (!path)
		path = KALLSYMS_PATH;
	in = file_read_all(path, &in_len);
	if (!in)
		return error_set(e, "cannot read %s: %s", path, strerror(errno));
	count = read_syms(in, in_len, &sym, &bad);
	if (count < 0) {
		free(in);
		return error_set(e, "bad line %zu in %s", bad, path);
	}
	if (!count) {
		free(in);
		return error_set(e, "no text symbols in %s", path);
	}
	if (all_zero(sym, count)) {
		free(sym);
		free(in);
		return error_set(e, "cannot snapshot %s: kernel addresses are hidden (kptr_restrict): run as root", path);
	}
	cap = in_len + 1;
	out = xmalloc(cap);
	for (i = 0; i < (size_t)count; i++) {
		const struct ksym *k = &sym[i];
		size_t need = 16 + 3 + strlen(k->name) + 1 +
			      (k->module ? strlen(k->module) + 3 : 0) + 1;
		int w;

		if (n + need > cap) {
			cap = 2 * cap + need;
			out = xrealloc(out, cap);
		}
		if (k->module)
			w = snprintf(out + n, cap - n, "%016llx %c %s [%s]\n",
				     (unsigned long long)k->addr, k->type,
				     k->name, k->module);
		else
			w = snprintf(out + n, cap - n, "%016llx %c %s\n",
				     (unsigned long long)k->addr, k->type, k->name);
		n += w;
	}
	free(sym);
	free(in);
	*buf = out;
	*len = n;
	return 0;
}

struct kallsyms *kallsyms_parse(const char *buf, size_t len, struct error *e)
{
	struct kallsyms *k = xcalloc(1, sizeof(*k));
	size_t bad, i, j;
	long count;

	k->arena = xmalloc(len + 1);
	memcpy(k->arena, buf, len);
	k->arena[len] = 0;
	count = read_syms(k->arena, len, &k->sym, &bad);
	if (count < 0) {
		error_set(e, "bad kallsyms line %zu", bad);
		goto fail;
	}
	if (!count) {
		error_set(e, "no kernel text symbols in the kallsyms data");
		goto fail;
	}
	if (all_zero(k->sym, count)) {
		error_set(e, "kallsyms addresses are all zero (read without privileges)");
		goto fail;
	}
	/* One name per address: the first is the preferred one. */
	for (i = j = 0; i < (size_t)count; i++)
		if (!j || k->sym[j - 1].addr != k->sym[i].addr)
			k->sym[j++] = k->sym[i];
	k->n = j;
	return k;

fail:
	kallsyms_free(k);
	return NULL;
}

struct kallsyms *kallsyms_load(const char *path, struct error *e)
{
	struct kallsyms *k;
	size_t len;
	char *buf = file_read_all(path, &len);

	if (!buf) {
		error_set(e, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	k = kallsyms_parse(buf, len, e);
	free(buf);
	if (!k)
		error_prefix(e, "%s", path);
	return k;
}

void kallsyms_free(struct kallsyms *k)
{
	if (!k)
		return;
	free(k->sym);
	free(k->arena);
	free(k);
}

static int same_module(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return !strcmp(a, b);
}

const char *kallsyms_lookup(const struct kallsyms *k, uint64_t addr,
			    uint64_t *offset, const char **module)
{
	size_t lo = 0, hi = k->n;
	const struct ksym *s;
	uint64_t end;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->sym[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &k->sym[lo - 1];
	end = s->addr + LAST_SYM_SPAN;
	if (end < s->addr)
		end = UINT64_MAX;
	if (lo < k->n && same_module(s->module, k->sym[lo].module))
		end = k->sym[lo].addr;
	else if (lo < k->n)
		end = MIN(end, k->sym[lo].addr);
	if (addr >= end)
		return NULL;
	if (offset)
		*offset = addr - s->addr;
	if (module)
		*module = s->module;
	return s->name;
}
