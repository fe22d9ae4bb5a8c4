/*
 * tlgroup.c - the grouping keys of a timeline's --by split (timeline_int.h):
 *
 *  0. with --by symbol or a symbol filter: the distinct (binary, offset)
 *     locations of the filtered samples, each named by the resolver;
 *  1. each row's key (CPU, pid, binary, symbol or cgroup) and the totals
 *     per key, from which each ranking keeps its top N keys as groups
 *     (timeline_rank_keys(), also the fleet plot's);
 *  2. the sums per bucket, for all filtered samples and per kept group.
 *
 * Keys, locations and names are found through lib/base/otable.
 */
#include "binname.h"
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "progress.h"
#include "resolve.h"
#include "timeline_int.h"

void tl_ent_free_buckets(struct build *b)
{
	for (size_t i = 0; i < b->nent; i++) {
		free(b->ent[i].v);
		b->ent[i].v = NULL;
	}
	b->onepass = 0;
}

/* The name a binary row is shown with (binname.h's rule). */
static void binary_display(struct build *b, int64_t id, char *buf, size_t len)
{
	struct db_binary *row = xmalloc(sizeof(*row));
	struct error ign;

	if (id <= 0 || db_binary_get(b->db, id, row, &ign) < 0)
		snprintf(buf, len, "%s", BINNAME_UNKNOWN);
	else
		snprintf(buf, len, "%.*s", (int)MIN(len, 255),
			 binname_of(row->key, row->path, BINNAME_BASE));
	free(row);
}

/* Index in b->sym of name, added if new. */
static size_t sym_intern(struct build *b, const char *name)
{
	int added;
	struct tl_name *n = otable_get_str(&b->symidx, name, &added);

	if (added) {
		ARRAY_GROW(b->sym, b->capsym, b->nsym + 1);
		b->sym[b->nsym] = (struct locname){ .name = n->name };
		n->v = b->nsym++;
	}
	return n->v;
}

struct loc {
	int64_t bin;
	uint64_t off;
};

static int loc_cmp(const void *pa, const void *pb)
{
	const struct loc *a = pa, *c = pb;

	if (a->bin != c->bin)
		return a->bin < c->bin ? -1 : 1;
	return (a->off > c->off) - (a->off < c->off);
}

/* The distinct locations of the filtered samples, unsorted, into *out. */
static int collect_locations(struct build *b, struct loc **out, size_t *n)
{
	size_t cap = 0;
	int use_agg = tl_agg_usable(b), rc, added;

	if (use_agg < 0)
		return -1;
	if (use_agg) {
		struct sbuf sql = { 0 };
		sqlite3_stmt *st;

		sbuf_addf(&sql, "SELECT DISTINCT binary_id,offset FROM sample_agg WHERE "
			  "session_id=%lld%s", (long long)b->t->session.id,
			  b->filt.n ? b->filt.s : "");
		rc = sqlite3_prepare_v2(db_sqlite(b->db), sql.s, -1, &st, NULL);
		free(sql.s);
		if (rc)
			return tl_sql_fail(b, "reading sample_agg");
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			ARRAY_GROW(*out, cap, *n + 1);
			(*out)[(*n)++] = (struct loc){ sqlite3_column_int64(st, 0),
						       (uint64_t)sqlite3_column_int64(st, 1) };
		}
		sqlite3_finalize(st);
		return rc == SQLITE_DONE ? 0 : tl_sql_fail(b, "reading sample_agg");
	} else {
		struct sample_scan_filter f = b->raw;
		struct sample_scan *sc;
		const struct sample_scan_row *row;

		f.cols = 1u << SB_BINARY_ID | 1u << SB_OFFSET;
		sc = sample_scan_open(b->db, &f, b->e);
		if (!sc)
			return -1;
		while ((rc = sample_scan_next(sc, &row, b->e)) == 1) {
			struct loc l = { row->r->v[SB_BINARY_ID], (uint64_t)row->r->v[SB_OFFSET] };

			tl_idx_get(&b->locs, l.bin, (int64_t)l.off, &added);
			if (added) {
				ARRAY_GROW(*out, cap, *n + 1);
				(*out)[(*n)++] = l;
			}
		}
		sample_scan_close(sc);
		return rc < 0 ? -1 : 0;
	}
}

/*
 * Phase 0: name the distinct locations of the filtered samples, in
 * (binary, offset) order, whichever way they were found, so that symbols
 * tied in a ranking come in the same order.
 */
int tl_name_locations(struct build *b)
{
	const struct timeline_opts *o = b->o;
	struct resolver *r;
	struct loc *locs = NULL;
	size_t nlocs = 0, nmatch = 0;
	int added;

	if (collect_locations(b, &locs, &nlocs) < 0) {
		free(locs);
		return -1;
	}
	r = resolver_new(b->db, &b->t->session, b->e);
	if (r)
		resolver_set_demangle(r, !b->o->no_demangle);
	if (!r) {
		free(locs);
		return -1;
	}
	qsort(locs, nlocs, sizeof(*locs), loc_cmp);
	for (size_t i = 0; i < nlocs; i++) {
		struct resolved res;
		char name[600];
		size_t si;

		memset(&res, 0, sizeof(res));
		resolver_lookup(r, locs[i].bin, locs[i].off, 0, &res);
		snprintf(name, sizeof(name), "%s (%s)", res.symbol ? res.symbol : "[unknown]",
			 res.binary ? util_path_base(res.binary) : "[unknown]");
		si = sym_intern(b, name);
		if (o->symbol && res.symbol && !strcmp(res.symbol, o->symbol)) {
			b->sym[si].match = 1;
			nmatch++;
		}
		ARRAY_GROW(b->locsym, b->caploc, b->nloc + 1);
		b->locsym[b->nloc] = si;
		tl_idx_get(&b->locs, locs[i].bin, (int64_t)locs[i].off, &added)->v = b->nloc;
		b->nloc++;
	}
	free(locs);
	if (resolver_debuginfod_summary(r))
		snprintf(b->t->debuginfod_note, sizeof(b->t->debuginfod_note), "%s",
			 resolver_debuginfod_summary(r));
	resolver_free(r);
	if (o->symbol && !nmatch)
		return error_set(b->e, "no sample in symbol '%s' between %.9g s and %.9g s "
				 "with these filters: 'strobe report --by symbol' lists them",
				 o->symbol, (b->t->from_ns - b->t->session.start_ns) / 1e9,
				 (b->t->to_ns - b->t->session.start_ns) / 1e9);
	return 0;
}

/* The symbol index of a sample's location, or -1 when it is filtered out. */
static ssize_t loc_symbol(struct build *b, int64_t bin, uint64_t off)
{
	const struct tl_idx *li = tl_idx_find(&b->locs, bin, (int64_t)off);
	size_t si;

	if (!li)
		return -1;	/* not seen in phase 0: a row added since */
	si = b->locsym[li->v];
	if (b->o->symbol && !b->sym[si].match)
		return -1;
	return (ssize_t)si;
}

/* The process of row r when its pid was several (procset.h), else 0: the
 * sums' own key, or by its time. */
static int64_t row_process(struct build *b, const struct trow *r)
{
	if (procset_count(&b->procs, r->pid) < 2)
		return 0;
	if (r->start && procset_has(&b->procs, r->pid, r->start))
		return r->start;
	return procset_at(&b->procs, r->pid, r->time);
}

/* The --by key of row r (and in *start its process's start, for --by
 * pid), or 0 with *skip set when filtered out. */
static int64_t row_key(struct build *b, const struct trow *r, int64_t *start, int *skip)
{
	ssize_t si = 0;

	*skip = 0;
	*start = 0;
	if (b->o->pid >= 0 && b->o->has_pid_at && b->procs.n > 1 &&
	    row_process(b, r) != b->sel) {
		*skip = 1;
		return 0;
	}
	if (b->cg) {
		/* the row's process's cgroup: by the sums' start, or by time */
		size_t c = cgset_lookup(&b->cgs, r->pid, r->start ? r->start :
					procset_at(&b->all, r->pid, r->time));

		if (b->o->cgroup && !cgset_match(b->o->cgroup, b->cgs.names[c])) {
			*skip = 1;
			return 0;
		}
		si = (ssize_t)c;
	}
	if (b->need_locs) {
		si = loc_symbol(b, r->bin, (uint64_t)r->off);
		if (si < 0) {
			*skip = 1;
			return 0;
		}
	}
	switch (b->o->by) {
	case TL_BY_CPU: return r->cpu;
	case TL_BY_PID:
		*start = row_process(b, r);
		return r->pid;
	case TL_BY_BINARY: return r->bin;
	case TL_BY_SYMBOL: return (int64_t)si;
	case TL_BY_CGROUP: return (int64_t)si;	/* need_locs is 0 */
	case TL_BY_NONE: case TL_BY_HOST: break;
	}
	return 0;
}

/* Phase 1: totals per key. */
int tl_key_totals(struct build *b)
{
	struct timeline *t = b->t;
	struct tsrc src;
	struct trow r;
	int rc, nv = b->t->nv;
	size_t kbytes = t->nbuckets * (size_t)nv * sizeof(double);
	int64_t last_key = 0, last_start = 0;
	size_t last_ent = SIZE_MAX;	/* the entry of last_key: rows come in runs */

	/* raw rows: their buckets too, per key, so that phase 2 need not
	 * read them again, while that fits ONEPASS_MAX_BYTES */
	b->onepass = !b->summed;
	if (tsrc_open(b, &src) < 0)
		return -1;
	while ((rc = tsrc_next(b, &src, &r)) == 1) {
		int skip, added;
		int64_t start, key = row_key(b, &r, &start, &skip);
		struct keyent *k;

		if (skip)
			continue;
		if (last_ent == SIZE_MAX || key != last_key || start != last_start) {
			struct tl_idx *ei = tl_idx_get(&b->keys, key, start, &added);

			if (added) {
				ei->v = b->nent;
				ARRAY_GROW(b->ent, b->capent, b->nent + 1);
				memset(&b->ent[b->nent], 0, sizeof(b->ent[0]));
				b->ent[b->nent].tk.key = key;
				b->ent[b->nent].tk.start = start;
				b->ent[b->nent].tk.group = -1;
				b->nent++;
			}
			last_key = key;
			last_start = start;
			last_ent = ei->v;
		}
		k = &b->ent[last_ent];
		/* 0: exiting, after its exit record */
		if (r.comm > 0 && r.row >= k->comm_row) {
			k->comm_id = r.comm;
			k->comm_row = r.row;
		}
		k->tk.total[TL_SAMPLES] += r.n;
		for (int i = 1; i < nv; i++)
			k->tk.total[i] += r.c[i - 1];
		if (b->onepass && !k->v) {
			b->onepass_bytes += kbytes;
			if (b->onepass_bytes > ONEPASS_MAX_BYTES) {
				struct progress *p = b->o->progress;

				tl_ent_free_buckets(b);	/* phase 2 reads them */
				if (p)	/* progress_plan() counted one scan */
					progress_total(p, p->total + b->pass_rows);
				memset(t->all.v, 0, kbytes);
				memset(t->all.total, 0, sizeof(t->all.total));
			} else {
				k->v = xcalloc(t->nbuckets * (size_t)nv, sizeof(double));
			}
		}
		if (b->onepass)
			tl_add_row(t, &r, k->v);
	}
	tsrc_close(&src);
	if (rc < 0)
		return -1;
	b->t->nkeys = b->nent;
	return 0;
}

static void group_name(struct build *b, const struct keyent *k, char *buf, size_t len)
{
	switch (b->o->by) {
	case TL_BY_CPU:
		snprintf(buf, len, "CPU %lld", (long long)k->tk.key);
		break;
	case TL_BY_PID: {
		sqlite3_stmt *st;
		const char *c = NULL;
		char id[64];

		/* "1234", or "1234@0.512" for one of the processes that had it */
		if (procset_count(&b->procs, k->tk.key) > 1)
			procset_label(&b->procs, k->tk.key, k->tk.start, id, sizeof(id));
		else
			snprintf(id, sizeof(id), "%lld", (long long)k->tk.key);
		if (k->comm_id > 0 &&
		    !sqlite3_prepare_v2(db_sqlite(b->db), "SELECT name FROM comms WHERE id=?1",
					-1, &st, NULL)) {
			sqlite3_bind_int64(st, 1, k->comm_id);
			if (sqlite3_step(st) == SQLITE_ROW)
				c = (const char *)sqlite3_column_text(st, 0);
			if (c)
				snprintf(buf, len, "pid %s (%s)", id, c);
			sqlite3_finalize(st);
		}
		if (!c)
			snprintf(buf, len, "pid %s", id);
		break;
	}
	case TL_BY_BINARY:
		binary_display(b, k->tk.key, buf, len);
		break;
	case TL_BY_SYMBOL:
		snprintf(buf, len, "%s", b->sym[k->tk.key].name);
		break;
	case TL_BY_CGROUP:
		snprintf(buf, len, "%s", b->cgs.names[k->tk.key]);
		break;
	case TL_BY_NONE:
	case TL_BY_HOST:	/* not of a local database */
		snprintf(buf, len, "all");
	}
}

/* What the session's cgroups are worth, in the timeline's note (cgset.h). */
void tl_cgroup_note(struct timeline *t, const struct cgset *cs)
{
	if (!cs->source[0] || !strcmp(cs->source, "none"))
		snprintf(t->note, sizeof(t->note), "no cgroups were recorded in session %lld: "
			 "every process is %s", (long long)t->session.id, CGSET_UNKNOWN);
	else if (cs->moved)
		snprintf(t->note, sizeof(t->note), "%lld processes changed cgroup during the "
			 "session: all their samples count in their latest cgroup",
			 (long long)cs->moved);
	else if (!strcmp(cs->source, "proc"))
		snprintf(t->note, sizeof(t->note), "cgroups read from /proc/PID/cgroup at each "
			 "process's first sample (no PERF_SAMPLE_CGROUP)");
}

/* What key_cmp() sorts by (qsort_r's context). */
struct rank_ctx {
	const char *ent;
	size_t stride;
	int value;
};

static int key_cmp(const void *pa, const void *pb, void *arg)
{
	const struct rank_ctx *rc = arg;
	const struct timeline_key *a = (const void *)(rc->ent + *(const size_t *)pa * rc->stride);
	const struct timeline_key *c = (const void *)(rc->ent + *(const size_t *)pb * rc->stride);
	int v = rc->value;

	if (a->total[v] != c->total[v])
		return a->total[v] > c->total[v] ? -1 : 1;
	if (a->total[TL_SAMPLES] != c->total[TL_SAMPLES])
		return a->total[TL_SAMPLES] > c->total[TL_SAMPLES] ? -1 : 1;
	if (a->key != c->key)
		return a->key < c->key ? -1 : 1;
	return a->start < c->start ? -1 : a->start > c->start;
}

void timeline_rank_keys(struct timeline *t, const struct timeline_opts *o,
			void *ent, size_t n, size_t stride,
			void (*name)(void *ctx, const struct timeline_key *k,
				     char *buf, size_t len),
			void *ctx)
{
	int top = o->top > 0 ? o->top : TL_TOP_DEFAULT;
	size_t *order = xmalloc((n + 1) * sizeof(*order));
	struct rank_ctx rc = { ent, stride, 0 };

	if (top > (int)ARRAY_SIZE(t->ranks[0].idx))
		top = ARRAY_SIZE(t->ranks[0].idx);
	for (int r = 0; r < o->nrank && t->nranks < TL_MAXV; r++) {
		struct timeline_rank *rk;
		int v = o->rank[r];

		if (v < 0 || v >= t->nv || timeline_rank_of(t, v))
			continue;
		rk = &t->ranks[t->nranks++];
		memset(rk, 0, sizeof(*rk));
		rk->value = v;
		for (size_t i = 0; i < n; i++)
			order[i] = i;
		rc.value = v;
		qsort_r(order, n, sizeof(*order), key_cmp, &rc);
		for (size_t i = 0; i < n; i++) {
			struct timeline_key *k = (void *)((char *)ent + order[i] * stride);

			if (!k->total[v])
				break;
			if (rk->n >= (size_t)top) {
				rk->rest++;
				continue;
			}
			if (k->group < 0) {
				struct timeline_group *g;

				t->groups = xrealloc(t->groups, (t->ngroups + 1) * sizeof(*g));
				g = &t->groups[t->ngroups];
				memset(g, 0, sizeof(*g));
				name(ctx, k, g->name, sizeof(g->name));
				memcpy(g->total, k->total, sizeof(g->total));
				g->v = xcalloc(t->nbuckets * (size_t)t->nv, sizeof(double));
				k->group = (ssize_t)t->ngroups++;
			}
			rk->idx[rk->n++] = (size_t)k->group;
		}
	}
	free(order);
}

/* timeline_rank_keys()'s namer for the keys of a build. */
void tl_key_name(void *ctx, const struct timeline_key *k, char *buf, size_t len)
{
	group_name(ctx, (const struct keyent *)k, buf, len);
}

/* Phase 2: the buckets. */
int tl_fill(struct build *b)
{
	struct timeline *t = b->t;
	struct tsrc src;
	struct trow r;
	int rc;

	if (b->onepass) {
		/* phase 1 read the rows: its buckets are the groups' */
		for (size_t i = 0; i < b->nent; i++)
			if (b->ent[i].tk.group >= 0)
				memcpy(t->groups[b->ent[i].tk.group].v, b->ent[i].v,
				       t->nbuckets * (size_t)t->nv * sizeof(double));
		t->samples = t->all.total[TL_SAMPLES];
		return 0;
	}
	if (tsrc_open(b, &src) < 0)
		return -1;
	while ((rc = tsrc_next(b, &src, &r)) == 1) {
		int skip;
		int64_t start, key = row_key(b, &r, &start, &skip);
		struct timeline_group *g = NULL;
		const struct tl_idx *ei;

		if (skip)
			continue;
		if (b->o->by != TL_BY_NONE && (ei = tl_idx_find(&b->keys, key, start)) &&
		    b->ent[ei->v].tk.group >= 0)
			g = &t->groups[b->ent[ei->v].tk.group];
		tl_add_row(t, &r, g ? g->v : NULL);
	}
	tsrc_close(&src);
	if (rc < 0)
		return -1;
	t->samples = t->all.total[TL_SAMPLES];
	return 0;
}
