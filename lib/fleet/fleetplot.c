/*
 * fleetplot.c - the timeline of pushed sessions, bucketed in ClickHouse
 * (fleetplot.h, doc/FLEET.md "Fleet timelines").
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "binname.h"
#include "fleetplot.h"
#include "fleetquery.h"
#include "chclient.h"
#include "push.h"
#include "sessevent.h"

#define FP_SESSIONS_MAX	4096
#define FP_LAST_LIST_MAX 1000	/* sessions listed in one query of their ends */

/* ---- running the queries (fleetplotsql.c writes them) ---- */

struct fpsession {
	char *host;
	struct db_session s;
	int64_t last_ns;		/* its last sample, -1: none */
	int64_t last_from;		/* its latest 100 ms row's start, INT64_MIN:
					 * none (session_ends()) */
	int val[STROBE_MAX_COUNTERS];	/* its c0.. as value indices, -1: none */
};

struct fleetplot {
	struct chclient *c;
	const char *host;
	int64_t session;
	struct fpsession *ss;
	size_t nss;
	int nhosts;
	struct db_session one;
};

/* A string map: open addressing, for the keys of --by. */
struct smap {
	char **k;
	size_t *v;
	size_t cap, n;
};

static size_t *smap_find(struct smap *m, const char *k)
{
	if (!m->cap)
		return NULL;
	for (size_t i = hash_string(HASH_STRING_INIT, k) & (m->cap - 1);;
	     i = (i + 1) & (m->cap - 1)) {
		if (!m->k[i])
			return NULL;
		if (!strcmp(m->k[i], k))
			return &m->v[i];
	}
}

/* The value of k, set to v when new (*added then 1). */
static size_t *smap_put(struct smap *m, const char *k, size_t v, int *added)
{
	size_t *f = smap_find(m, k), i;

	*added = 0;
	if (f)
		return f;
	if (2 * (m->n + 1) > m->cap) {
		struct smap g = { .cap = m->cap ? 2 * m->cap : 256 };

		g.k = xcalloc(g.cap, sizeof(*g.k));
		g.v = xcalloc(g.cap, sizeof(*g.v));
		for (i = 0; i < m->cap; i++) {
			if (!m->k[i])
				continue;
			size_t j = hash_string(HASH_STRING_INIT, m->k[i]) & (g.cap - 1);

			while (g.k[j])
				j = (j + 1) & (g.cap - 1);
			g.k[j] = m->k[i];
			g.v[j] = m->v[i];
		}
		g.n = m->n;
		free(m->k);
		free(m->v);
		*m = g;
	}
	i = hash_string(HASH_STRING_INIT, k) & (m->cap - 1);
	while (m->k[i])
		i = (i + 1) & (m->cap - 1);
	m->k[i] = xstrdup(k);
	m->v[i] = v;
	m->n++;
	*added = 1;
	return &m->v[i];
}

static void smap_free(struct smap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->k[i]);
	free(m->k);
	free(m->v);
}

/* A key of --by (as timeline.c's keyent). */
struct fpkey {
	struct timeline_key tk;		/* tk.key orders ties, as the local
					 * key does; tk.start is 0 */
	char name[256];
	/* --by pid from samples_by_time: its comm comes later (pid_comms()) */
	const struct fpsession *x;
	int64_t pid, last;
	int named;
};

struct fpbuild {
	struct fleetplot *fp;
	const struct timeline_opts *o;
	struct timeline *t;
	struct smap map;		/* row key -> index in keys */
	struct fpkey *keys;
	size_t nkeys, capkeys;
};

static int64_t num(const char *s)
{
	return strtoll(s, NULL, 10);
}


static struct fpsession *find_session(struct fleetplot *fp, const char *host, int64_t id)
{
	for (size_t i = 0; i < fp->nss; i++)
		if (fp->ss[i].s.id == id && !strcmp(fp->ss[i].host, host))
			return &fp->ss[i];
	return NULL;
}

static int session_row(void *ctx, char **f, struct error *e)
{
	struct fleetplot *fp = ctx;
	struct fpsession *x;

	if (fp->nss >= FP_SESSIONS_MAX)
		return error_set(e, "more than %d sessions in the fleet plot: give --host or "
				 "--session", FP_SESSIONS_MAX);
	fp->ss = xrealloc(fp->ss, (fp->nss + 1) * sizeof(*fp->ss));
	x = &fp->ss[fp->nss++];
	memset(x, 0, sizeof(*x));
	x->host = xstrdup(f[0]);
	fleetquery_session_parse(f, &x->s);
	x->last_ns = -1;
	x->last_from = INT64_MIN;
	for (int i = 0; i < STROBE_MAX_COUNTERS; i++)
		x->val[i] = -1;
	return 0;
}

/* The union of the sessions' events, in the order they first appear. */
static int event_row(void *ctx, char **f, struct error *e)
{
	struct fleetplot *fp = ctx;
	struct fpsession *x = find_session(fp, f[0], num(f[1]));
	int64_t k = num(f[2]) - 1;
	int i;

	if (!x || k < 0 || k >= STROBE_MAX_COUNTERS)
		return 0;
	session_event_set(&x->s, k, f[3]);
	i = session_event_union(&fp->one, f[3]);
	if (i < 0)
		return error_set(e, "the sessions count more than %d different events: "
				 "select fewer with --host and --session", STROBE_MAX_COUNTERS);
	x->val[k] = 1 + i;
	return 0;
}

static int last_row(void *ctx, char **f, struct error *e)
{
	struct fpsession *x = find_session(ctx, f[0], num(f[1]));

	(void)e;
	if (x)
		x->last_ns = num(f[2]);
	return 0;
}

/* A row of the latest 100 ms rows: host, session, bucket_ns. */
static int last_bucket_row(void *ctx, char **f, struct error *e)
{
	struct fleetplot *fp = ctx;
	struct fpsession *x = find_session(fp, f[0], num(f[1]));

	(void)e;
	if (x)
		x->last_from = x->s.start_ns + num(f[2]);
	return 0;
}

/* Each session's latest sample (x->last_ns): read from its latest 100 ms
 * row of samples_by_time on, not over all its samples (unless
 * STROBE_FLEET_RAW, or too many sessions to list); the whole session's
 * samples for one without rows there.  A row with no sample at or after
 * it (an aggregate without its samples): all of them again. */
static int session_ends(struct fleetplot *fp, struct sbuf *sql, struct error *e)
{
	size_t n = fp->nss <= FP_LAST_LIST_MAX && !fleetquery_raw_forced() ? fp->nss : 0;
	char **hosts = xcalloc(fp->nss, sizeof(*hosts));
	int64_t *ids = xcalloc(fp->nss, sizeof(*ids)), *from = xcalloc(fp->nss, sizeof(*from));
	int again = 0, rc = 0;

	if (n) {
		sbuf_addf(sql, "SELECT host, session, max(bucket_ns) FROM samples_by_time WHERE ");
		fleetquery_where(sql, &(struct fleet_opts){ .host = fp->host,
							    .session = fp->session });
		sbuf_addf(sql, " GROUP BY host, session FORMAT TabSeparated");
		rc = fleetquery_rows(fp->c, sql, 3, fp, last_bucket_row, e);
	}
	for (size_t i = 0; i < n; i++) {
		hosts[i] = fp->ss[i].host;
		ids[i] = fp->ss[i].s.id;
		from[i] = fp->ss[i].last_from;
	}
	if (!rc) {
		fleetplot_sql_last(sql, fp->host, fp->session, hosts, ids, from, n);
		rc = fleetquery_rows(fp->c, sql, 3, fp, last_row, e);
	}
	for (size_t i = 0; i < n; i++)
		again |= fp->ss[i].last_from != INT64_MIN && fp->ss[i].last_ns < 0;
	if (!rc && again) {
		fleetplot_sql_last(sql, fp->host, fp->session, NULL, NULL, NULL, 0);
		rc = fleetquery_rows(fp->c, sql, 3, fp, last_row, e);
	}
	free(hosts);
	free(ids);
	free(from);
	return rc;
}

struct fleetplot *fleetplot_open(struct chclient *c, const char *host, int64_t session,
				 struct error *e)
{
	struct fleetplot *fp = xcalloc(1, sizeof(*fp));
	struct sbuf sql = { 0 };
	struct fleet_opts fo = { .host = host, .session = session };

	fp->c = c;
	fp->host = host;
	fp->session = session;
	/* stopped sessions (batch 0) and running ones (their newest interval) */
	fleetquery_sql_sessions(&sql, &fo);
	if (fleetquery_rows(c, &sql, FLEETQUERY_SESSION_FIELDS, fp, session_row, e) < 0)
		goto fail;
	if (!fp->nss) {
		fleetquery_no_session(e, host, session);
		goto fail;
	}
	fleetquery_sql_events(&sql, &fo);
	if (fleetquery_rows(c, &sql, 4, fp, event_row, e) < 0)
		goto fail;
	if (session_ends(fp, &sql, e) < 0)
		goto fail;
	for (size_t i = 0; i < fp->nss; i++)
		fp->nhosts += !i || strcmp(fp->ss[i].host, fp->ss[i - 1].host);
	if (fp->nss == 1) {
		fp->one = fp->ss[0].s;
	} else {
		struct db_session *u = &fp->one;

		u->late_records = -1;
		snprintf(u->state, sizeof(u->state), "stopped");
		snprintf(u->sample_event, sizeof(u->sample_event), "%s", fp->ss[0].s.sample_event);
		for (size_t i = 1; i < fp->nss; i++)
			if (strcmp(fp->ss[i].s.sample_event, u->sample_event))
				u->sample_event[0] = 0;
		for (size_t i = 0; i < fp->nss; i++) {
			u->samples += fp->ss[i].s.samples;
			u->lost += fp->ss[i].s.lost;
			u->throttled += fp->ss[i].s.throttled;
		}
	}
	return fp;
fail:
	free(sql.s);
	fleetplot_free(fp);
	return NULL;
}

void fleetplot_free(struct fleetplot *fp)
{
	if (!fp)
		return;
	for (size_t i = 0; i < fp->nss; i++)
		free(fp->ss[i].host);
	free(fp->ss);
	free(fp);
}

const struct db_session *fleetplot_session(const struct fleetplot *fp)
{
	return &fp->one;
}

int fleetplot_nsessions(const struct fleetplot *fp)
{
	return (int)fp->nss;
}

int fleetplot_nhosts(const struct fleetplot *fp)
{
	return fp->nhosts;
}

/* The values of a row's sums (f[0..8]: samples, c0..c7) of session x. */
static void row_values(const struct fpsession *x, char **f, uint64_t *v)
{
	memset(v, 0, TL_MAXV * sizeof(*v));
	v[TL_SAMPLES] = (uint64_t)num(f[0]);
	for (int k = 0; k < STROBE_MAX_COUNTERS; k++)
		if (x->val[k] > 0)
			v[x->val[k]] += (uint64_t)num(f[1 + k]);
}

/* binname.h's rule; a row with no binary id or an empty key has none. */
static void binary_display(int64_t id, const char *key, const char *path, char *buf,
			   size_t len)
{
	snprintf(buf, len, "%.*s", (int)MIN(len, 255),
		 binname_of(id > 0 && key[0] ? key : NULL, path, BINNAME_BASE));
}

/* As timeline.c's name_locations(): "symbol (binary)". */
static void symbol_name(const char *symbol, const char *bname, char *buf, size_t len)
{
	snprintf(buf, len, "%s (%s)", symbol[0] ? symbol : BINNAME_UNKNOWN,
		 bname[0] ? util_path_base(bname) : BINNAME_UNKNOWN);
}

/* The key of a row of the bucket query, as key_row() maps it. */
static void row_key(struct fpbuild *b, const char *host, const char *session, const char *k1,
		    const char *k2, struct sbuf *out)
{
	int one = b->fp->nss == 1;

	out->n = 0;
	if (out->s)
		out->s[0] = 0;
	switch (b->o->by) {
	case TL_BY_CPU:
		sbuf_addf(out, "%s", k1);
		break;
	case TL_BY_PID:
	case TL_BY_BINARY:
		if (one)
			sbuf_addf(out, "%s", k1);
		else
			sbuf_addf(out, "%s\t%s\t%s", host, session, k1);
		break;
	case TL_BY_SYMBOL: {
		char name[600];

		symbol_name(k1, k2, name, sizeof(name));
		sbuf_addf(out, "%s", name);
		break;
	}
	default:
		sbuf_addf(out, "%s", host);
	}
}

static struct fpkey *key_add(struct fpbuild *b, const char *ident, int64_t key, int *added)
{
	size_t *i = smap_put(&b->map, ident, b->nkeys, added);

	if (*added) {
		ARRAY_GROW(b->keys, b->capkeys, b->nkeys + 1);
		memset(&b->keys[b->nkeys], 0, sizeof(b->keys[0]));
		b->keys[b->nkeys].tk.key = key;
		b->keys[b->nkeys].tk.group = -1;
		b->nkeys++;
	}
	return &b->keys[*i];
}

/* The name of pid key k with comm (empty: none). */
static void pid_name(struct fpbuild *b, struct fpkey *k, const char *comm)
{
	if (b->fp->nss == 1)
		snprintf(k->name, sizeof(k->name), comm[0] ? "pid %" PRId64 " (%s)" :
			 "pid %" PRId64, k->pid, comm);
	else
		snprintf(k->name, sizeof(k->name), comm[0] ? "%s#%" PRId64 ": pid %" PRId64
			 " (%s)" : "%s#%" PRId64 ": pid %" PRId64, k->x->host, k->x->s.id, k->pid,
			 comm);
}

/* A row of the totals: host, session, k1..k4, sums. */
static int key_row(void *ctx, char **f, struct error *e)
{
	struct fpbuild *b = ctx;
	struct fpsession *x = find_session(b->fp, f[0], num(f[1]));
	int one = b->fp->nss == 1, added;
	struct sbuf id = { 0 };
	struct fpkey *k = NULL;
	uint64_t v[TL_MAXV];

	(void)e;
	if (!x)
		return 0;
	row_values(x, f + 6, v);
	switch (b->o->by) {
	case TL_BY_CPU:
		row_key(b, f[0], f[1], f[2], "", &id);
		k = key_add(b, id.s, num(f[2]), &added);
		snprintf(k->name, sizeof(k->name), "CPU %s", f[2]);
		break;
	case TL_BY_PID:
		row_key(b, f[0], f[1], f[2], "", &id);
		k = key_add(b, id.s, one ? num(f[2]) : (int64_t)(x - b->fp->ss) << 32 | num(f[2]),
			    &added);
		k->x = x;
		k->pid = num(f[2]);
		k->last = num(f[4]);
		pid_name(b, k, f[3]);
		break;
	case TL_BY_BINARY: {
		char name[256];

		binary_display(num(f[2]), f[3], f[4], name, sizeof(name));
		if (one) {
			row_key(b, f[0], f[1], f[2], "", &id);
			k = key_add(b, id.s, num(f[2]), &added);
		} else {
			struct sbuf nk = { 0 };

			/* binaries of several sessions: by name */
			sbuf_addf(&nk, "\n%s", name);
			k = key_add(b, nk.s, (int64_t)b->nkeys, &added);
			free(nk.s);
			row_key(b, f[0], f[1], f[2], "", &id);
			smap_put(&b->map, id.s, (size_t)(k - b->keys), &added);
		}
		snprintf(k->name, sizeof(k->name), "%s", name);
		break;
	}
	case TL_BY_SYMBOL:
		/* in (binary_id, offset) order: the first location of a
		 * symbol orders ties, as locally */
		row_key(b, f[0], f[1], f[4], f[5], &id);
		k = key_add(b, id.s, (int64_t)b->nkeys, &added);
		snprintf(k->name, sizeof(k->name), "%s", id.s);
		break;
	default:
		row_key(b, f[0], f[1], "", "", &id);
		k = key_add(b, id.s, (int64_t)b->nkeys, &added);
		snprintf(k->name, sizeof(k->name), "%s", f[0]);
	}
	for (int i = 0; i < TL_MAXV; i++)
		k->tk.total[i] += v[i];
	free(id.s);
	return 0;
}

static int bucket_cell(struct timeline *t, const char *bs, size_t *bk)
{
	int64_t bi = num(bs);

	if (bi < 0)
		return -1;
	*bk = (size_t)bi >= t->nbuckets ? t->nbuckets - 1 : (size_t)bi;
	return 0;
}

/* A row of the buckets of all: host, session, b, k1, k2, sums. */
static int all_row(void *ctx, char **f, struct error *e)
{
	struct fpbuild *b = ctx;
	struct timeline *t = b->t;
	struct fpsession *x = find_session(b->fp, f[0], num(f[1]));
	uint64_t v[TL_MAXV];
	size_t bk;

	(void)e;
	if (!x || bucket_cell(t, f[2], &bk) < 0)
		return 0;
	row_values(x, f + 5, v);
	for (int i = 0; i < t->nv; i++) {
		t->all.v[bk * (size_t)t->nv + (size_t)i] += (double)v[i];
		t->all.total[i] += v[i];
	}
	return 0;
}

/* A row of the buckets of the groups. */
static int group_row(void *ctx, char **f, struct error *e)
{
	struct fpbuild *b = ctx;
	struct timeline *t = b->t;
	struct fpsession *x = find_session(b->fp, f[0], num(f[1]));
	struct sbuf id = { 0 };
	uint64_t v[TL_MAXV];
	size_t bk, *ki;

	(void)e;
	if (!x || bucket_cell(t, f[2], &bk) < 0)
		return 0;
	row_key(b, f[0], f[1], f[3], f[4], &id);
	ki = smap_find(&b->map, id.s);
	free(id.s);
	if (!ki || b->keys[*ki].tk.group < 0)
		return 0;
	row_values(x, f + 5, v);
	for (int i = 0; i < t->nv; i++)
		t->groups[b->keys[*ki].tk.group].v[bk * (size_t)t->nv + (size_t)i] += (double)v[i];
	return 0;
}

static int marker_row(void *ctx, char **f, struct error *e)
{
	struct fpbuild *b = ctx;
	struct timeline *t = b->t;
	struct timeline_marker *m;

	(void)e;
	if (t->nmarkers == FLEETPLOT_MAX_MARKERS) {
		snprintf(t->note, sizeof(t->note), "only the first %d markers of the range are "
			 "drawn", FLEETPLOT_MAX_MARKERS);
		return 0;
	}
	t->markers = xrealloc(t->markers, (t->nmarkers + 1) * sizeof(*t->markers));
	m = &t->markers[t->nmarkers++];
	memset(m, 0, sizeof(*m));
	m->time_ns = num(f[0]);
	snprintf(m->kind, sizeof(m->kind), "%s", f[1]);
	snprintf(m->name, sizeof(m->name), "%s", f[2]);
	snprintf(m->args, sizeof(m->args), "%s", f[3]);
	return 0;
}

/* A row of fleetplot_sql_comms(): host, session, pid, comm. */
static int comm_row(void *ctx, char **f, struct error *e)
{
	struct fpbuild *b = ctx;
	struct sbuf id = { 0 };
	struct fpkey *k;
	size_t *ki;

	(void)e;
	row_key(b, f[0], f[1], f[2], "", &id);
	ki = smap_find(&b->map, id.s);
	free(id.s);
	if (!ki || !f[3][0])
		return 0;
	k = &b->keys[*ki];
	k->named = 1;
	pid_name(b, k, f[3]);
	if (k->tk.group >= 0)
		snprintf(b->t->groups[k->tk.group].name, sizeof(b->t->groups[0].name), "%s",
			 k->name);
	return 0;
}

/* The comms of the pids of the groups (totals from samples_by_time):
 * from their latest 100 ms bucket of the range, and only for those whose
 * samples there have none, from the whole range. */
static int pid_comms(struct fpbuild *b, const struct fleetplot_range *r, struct error *e)
{
	struct fleetplot_pid *p = xcalloc(b->nkeys + 1, sizeof(*p));
	struct sbuf sql = { 0 };
	int rc = 0;

	for (int last = 1; last >= 0 && !rc; last--) {
		size_t n = 0;

		for (size_t i = 0; i < b->nkeys; i++) {
			const struct fpkey *k = &b->keys[i];

			if (k->tk.group < 0 || k->named)
				continue;
			p[n].host = k->x->host;
			p[n].session = k->x->s.id;
			p[n].start = k->x->s.start_ns;
			p[n].pid = k->pid;
			p[n++].last = k->last;
		}
		if (!n)
			break;
		fleetplot_sql_comms(&sql, r, p, n, last);
		rc = fleetquery_rows(b->fp->c, &sql, 4, b, comm_row, e);
	}
	free(sql.s);
	free(p);
	return rc;
}

/* timeline_rank_keys()'s namer: a key's name is its own. */
static void key_name(void *ctx, const struct timeline_key *k, char *buf, size_t len)
{
	(void)ctx;
	snprintf(buf, len, "%s", ((const struct fpkey *)k)->name);
}

/* The keys of the groups, as the bucket query's "in" list. */
static void group_keys(struct fpbuild *b, struct sbuf *in)
{
	struct smap seen = { 0 };
	int added;

	for (size_t i = 0; i < b->map.cap; i++) {
		const char *k = b->map.k[i], *id;

		if (!k || b->keys[b->map.v[i]].tk.group < 0 || (b->fp->nss > 1 &&
		    b->o->by == TL_BY_BINARY && k[0] == '\n'))
			continue;
		id = strrchr(k, '\t');
		id = id ? id + 1 : k;
		/* numbers only (cpu, pid, binary_id: ClickHouse's toString()) */
		if (!id[0] || strspn(id, "-0123456789") != strlen(id))
			continue;
		smap_put(&seen, id, 0, &added);
		if (added)
			sbuf_addf(in, "%s%s", in->n ? ", " : "", id);
	}
	smap_free(&seen);
}

/* The binary keys of the symbols in the groups: from the totals. */
struct symkeys {
	struct fpbuild *b;
	struct smap seen;
	struct sbuf *in;
};

static int symkey_row(void *ctx, char **f, struct error *e)
{
	struct symkeys *s = ctx;
	char name[600];
	size_t *ki;
	int added;

	(void)e;
	symbol_name(f[0], f[1], name, sizeof(name));
	ki = smap_find(&s->b->map, name);
	if (!ki || s->b->keys[*ki].tk.group < 0)
		return 0;
	smap_put(&s->seen, f[2], 0, &added);
	if (added) {
		if (s->in->n)
			sbuf_addf(s->in, ", ");
		push_sql_quote(s->in, f[2]);
	}
	return 0;
}

struct timeline *fleetplot_timeline(struct fleetplot *fp, const struct timeline_opts *o,
				    struct error *e)
{
	struct timeline *t = xcalloc(1, sizeof(*t));
	struct fpbuild b = { .fp = fp, .o = o, .t = t };
	const struct db_session *s = &t->session;
	/* the filters as the fleet report's (fleetquery_sql_filters()) */
	struct report_opts filt = { .pid = o->pid, .comm = o->comm, .binary = o->binary };
	struct fleetplot_range r = { .host = fp->host, .session = fp->session,
				     .filt = o->pid >= 0 || o->comm || o->binary ? &filt : NULL };
	struct sbuf start = { 0 }, sql = { 0 }, in = { 0 };
	char **hosts = xcalloc(fp->nss, sizeof(*hosts));
	int64_t *ids = xcalloc(fp->nss, sizeof(*ids)), *starts = xcalloc(fp->nss, sizeof(*ids));
	int64_t end = INT64_MIN;
	size_t n = 0;

	t->session = fp->one;
	t->nv = 1 + s->nr_events;
	for (size_t i = 0; i < fp->nss; i++) {
		const struct db_session *x = &fp->ss[i].s;
		int64_t e1 = x->end_ns > x->start_ns ? x->end_ns : x->start_ns;

		if (fp->ss[i].last_ns < 0)
			continue;	/* no samples: nothing to sum */
		if (fp->ss[i].last_ns > e1)
			e1 = fp->ss[i].last_ns;
		e1 -= x->start_ns - s->start_ns;	/* one: itself; several: since its start */
		if (e1 > end)
			end = e1;
		hosts[n] = fp->ss[i].host;
		ids[n] = x->id;
		starts[n++] = x->start_ns;
	}
	if (!n) {
		if (fp->nss == 1)
			error_set(e, "session %lld of host '%s' has no samples", (long long)s->id,
				  fp->ss[0].host);
		else
			error_set(e, "none of the %zu sessions selected has samples", fp->nss);
		goto fail;
	}
	fleetplot_sql_start(&start, hosts, ids, starts, n);
	r.start = start.s;
	t->key_noun = o->by == TL_BY_CPU ? "CPUs" : o->by == TL_BY_PID ? "processes" :
		      o->by == TL_BY_BINARY ? "binaries" : o->by == TL_BY_HOST ? "hosts" :
		      "symbols";
	/* as timeline_build() */
	if (timeline_range(t, o, s->start_ns, end, fp->nss == 1 ? "the session" :
			   "the longest session", e) < 0)
		goto fail;
	r.from_rel = t->from_ns - s->start_ns;
	r.to_rel = t->to_ns - s->start_ns;
	r.bucket_ns = t->bucket_ns;
	r.agg = !fleetquery_raw_forced() && fleetplot_aggregable(&r, o->by, end - s->start_ns);

	fleetplot_sql_buckets(&sql, &r, TL_BY_NONE, NULL);
	if (fleetquery_rows(fp->c, &sql, 14, &b, all_row, e) < 0)
		goto fail;
	t->samples = t->all.total[TL_SAMPLES];
	if (!t->samples) {
		timeline_no_samples(t, o, s->start_ns, fp->nss == 1 ? "the session" :
				    "the sessions", e);
		goto fail;
	}
	if (o->by != TL_BY_NONE) {
		fleetplot_sql_totals(&sql, &r, o->by);
		if (fleetquery_rows(fp->c, &sql, 15, &b, key_row, e) < 0)
			goto fail;
		t->nkeys = b.nkeys;
		timeline_rank_keys(b.t, b.o, b.keys, b.nkeys, sizeof(*b.keys), key_name, NULL);
		if (r.agg && o->by == TL_BY_PID && pid_comms(&b, &r, e) < 0)
			goto fail;
		if (o->by == TL_BY_SYMBOL) {
			struct symkeys sk = { .b = &b, .in = &in };

			/* the binary keys of the top symbols */
			sbuf_addf(&sql, "SELECT symbol, bname, binary_key FROM ");
			{
				struct sbuf sub = { 0 };

				sbuf_addf(&sub, "SELECT DISTINCT host, session, binary_id, "
					  "binary_key, offset FROM samples WHERE ");
				fleetplot_sql_where(&sub, &r);
				fleetplot_sql_join_names(&sql, &r, NULL, sub.s, "host, session, binary_key, offset");
				free(sub.s);
			}
			sbuf_addf(&sql, " GROUP BY symbol, bname, binary_key FORMAT TabSeparated");
			if (fleetquery_rows(fp->c, &sql, 3, &sk, symkey_row, e) < 0) {
				smap_free(&sk.seen);
				goto fail;
			}
			smap_free(&sk.seen);
		} else if (o->by != TL_BY_HOST) {
			group_keys(&b, &in);
		}
		if (t->ngroups) {
			fleetplot_sql_buckets(&sql, &r, o->by, in.s ? in.s : "");
			if (fleetquery_rows(fp->c, &sql, 14, &b, group_row, e) < 0)
				goto fail;
		}
	}
	fleetplot_sql_markers(&sql, &r, s->start_ns);
	if (fleetquery_rows(fp->c, &sql, 4, &b, marker_row, e) < 0)
		goto fail;
	goto out;
fail:
	timeline_free(t);
	t = NULL;
out:
	smap_free(&b.map);
	free(b.keys);
	free(start.s);
	free(sql.s);
	free(in.s);
	free(hosts);
	free(ids);
	free(starts);
	return t;
}
