/*
 * stacks.c - the call stacks of a session, named, with what their samples
 * weigh (see stacks.h).
 *
 * Steps:
 *  1. entries: the (stack, process, comm) sums that pass the filters
 *     (qfilter.h, as report.c's), from stack_agg, or, with a time range or
 *     a session not stored whole, from the raw samples (samples.stack_id),
 *     whose process is the one of their pid at their time (procset.h).
 *  2. frames: the stacks those entries use, read from stacks in one range
 *     scan by id, each checked (nr frames of 16 bytes, leaf first: int64
 *     LE binary_id, int64 LE offset; schema 014) and its frames interned
 *     as distinct locations.  A stack the database does not hold, or a
 *     malformed one, is an error: the database is corrupt.
 *  3. stack_agg rows have no location of their own: --binary, --kernel
 *     and --user apply to their frame 0 (the sampled location).
 *  4. names: each location once through the resolver, and locations of
 *     one function (binary and symbol) share a sym.
 */
#include "config.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "qfilter.h"
#include "resolve.h"
#include "stacks.h"
#include "progress.h"
#include "samplescan.h"

#define NR_NOTES ((int)(sizeof(((struct stack_set *)0)->notes) / \
			sizeof(((struct stack_set *)0)->notes[0])))
/* More frames than this in one stack: a corrupt row (the kernel's
 * callchains stop at 127 by default, perf_event_max_stack at most
 * 65535; the unwinder's own limit is lower). */
#define STACKS_MAX_FRAMES 65536

/* ---- a hash map of indices into an array whose elements start with a
 * 4-integer key ---- */

struct k4 {
	int64_t v[4];
};

struct k4map {
	size_t *slot;		/* index + 1; 0: empty */
	size_t mask;
};

#define K4AT(base, sz, i) ((const struct k4 *)((const char *)(base) + (i) * (sz)))

static uint64_t k4_hash(const struct k4 *k)
{
	return hash_mix64((uint64_t)k->v[0] ^ hash_mix64((uint64_t)k->v[1] ^
			  hash_mix64((uint64_t)k->v[2] ^ hash_mix64((uint64_t)k->v[3]))));
}

static void k4map_rehash(struct k4map *m, const void *base, size_t sz, size_t n)
{
	size_t nslots = m->slot ? (m->mask + 1) * 2 : 1024, i;

	while (nslots < 2 * (n + 1))
		nslots *= 2;
	free(m->slot);
	m->slot = xcalloc(nslots, sizeof(*m->slot));
	m->mask = nslots - 1;
	for (i = 0; i < n; i++) {
		size_t h = k4_hash(K4AT(base, sz, i)) & m->mask;

		while (m->slot[h])
			h = (h + 1) & m->mask;
		m->slot[h] = i + 1;
	}
}

/* The slot of key k among the n elements of base: *slot is its index + 1,
 * or 0 when it is not there (the caller appends it as element n and sets
 * *slot = n + 1).  Valid until the next call. */
static size_t *k4map_slot(struct k4map *m, const void *base, size_t sz, size_t n,
			  const struct k4 *k)
{
	size_t h;

	if (!m->slot || (n + 1) * 2 > m->mask + 1)
		k4map_rehash(m, base, sz, n);
	h = k4_hash(k) & m->mask;
	while (m->slot[h] && memcmp(K4AT(base, sz, m->slot[h] - 1), k, sizeof(*k)))
		h = (h + 1) & m->mask;
	return &m->slot[h];
}

static void k4map_free(struct k4map *m)
{
	free(m->slot);
	m->slot = NULL;
	m->mask = 0;
}

/* ---- the state of one stacks_load() ---- */

/* An entry being gathered: key (stack_id, pid, comm_id, start_ns). */
struct gent {
	struct k4 k;
	uint64_t samples, period;
	uint64_t c[STROBE_MAX_COUNTERS];
};

/* A distinct stack read from the stacks table. */
struct stk {
	int64_t id;
	uint32_t nr, flags;
	size_t lo;		/* its locs in pool (those of pid 0) */
	int bypid;		/* a frame is in a binary named per process */
};

/* A location being interned: key (binary_id, offset, pid, 0). */
struct iloc {
	struct k4 k;
};

/* What stacks_free() frees beyond the public set. */
struct stacks_priv {
	struct stack_set set;
	struct resolver *res;	/* owns the syms' strings */
	int64_t *comm_ids;	/* per entry */
	struct pcomm {
		struct k4 k;	/* comm_id, 0, 0, 0 */
		char *name;
	} *comms;		/* the distinct comm names */
	size_t ncomms;
	uint32_t *pool;		/* the entries' locs */
	int raw;		/* entries were read from the raw samples */
};

struct sload {
	struct db *db;
	const struct report_opts *o;
	struct stacks_priv *p;
	struct stack_set *set;
	struct qfilter qf;
	int raw, nev;
	int dropped_notes;
	int period_unknown;
	struct gent *g;
	size_t ng, gcap;
	struct k4map gmap;
	struct stk *stks;
	size_t nstks, stkcap;
	struct iloc *locs;
	size_t nlocs, loccap;
	struct k4map lmap;
	size_t npool, poolcap;
	size_t *entry_lo;	/* per entry: its locs in pool */
	struct k4map cmap;	/* of p->comms */
	size_t commcap;
	uint64_t missing;	/* samples whose stack is not stored */
};

/* What stacks_load() held while loading (not the set it returns). */
static void sload_free(struct sload *l)
{
	qfilter_free(&l->qf);
	free(l->g);
	k4map_free(&l->gmap);
	free(l->stks);
	free(l->locs);
	k4map_free(&l->lmap);
	free(l->entry_lo);
	k4map_free(&l->cmap);
}

static void note_add(struct sload *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note_add(struct sload *l, const char *fmt, ...)
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
	note_add(ctx, "%s", msg);
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

/* ---- step 1: entries ---- */

static void gent_add(struct sload *l, int64_t stack_id, int64_t pid, int64_t comm_id,
		     int64_t start, uint64_t samples, sqlite3_stmt *st, int col_period,
		     int col_c0)
{
	struct k4 k = { { stack_id, pid, comm_id, start } };
	size_t *slot = k4map_slot(&l->gmap, l->g, sizeof(*l->g), l->ng, &k);
	struct gent *g;
	int i;

	if (!*slot) {
		ARRAY_GROW(l->g, l->gcap, l->ng + 1);
		g = &l->g[l->ng];
		memset(g, 0, sizeof(*g));
		g->k = k;
		*slot = ++l->ng;
	}
	g = &l->g[*slot - 1];
	g->samples += samples;
	if (sqlite3_column_type(st, col_period) == SQLITE_NULL)
		l->period_unknown = 1;
	else
		g->period += (uint64_t)sqlite3_column_int64(st, col_period);
	for (i = 0; i < l->nev; i++)
		g->c[i] += (uint64_t)sqlite3_column_int64(st, col_c0 + i);
}

/* The raw samples' rowid range conditions, as report.c reads them; 0
 * when a finished session has none. */
static int raw_range_sql(const struct db_session *s, struct sbuf *sql)
{
	if (s->first_sample > 0 && s->last_sample >= s->first_sample && db_session_complete(s))
		sbuf_addf(sql, "rowid BETWEEN ?2 AND ?3 AND ");
	else if (s->first_sample > 0)
		sbuf_addf(sql, "rowid >= ?2 AND ");
	else if (db_session_complete(s))
		return 0;
	return 1;
}

static void raw_bind(sqlite3_stmt *st, const struct db_session *s, const struct report_opts *o)
{
	sqlite3_bind_int64(st, 1, s->id);
	sqlite3_bind_int64(st, 2, s->first_sample);
	sqlite3_bind_int64(st, 3, s->last_sample);
	sqlite3_bind_int64(st, 4, s->start_ns + o->from_ns);
	sqlite3_bind_int64(st, 5, s->start_ns + o->to_ns);
}

static int gather(struct sload *l, struct error *e)
{
	const struct report_opts *o = l->o;
	const struct db_session *s = &l->set->session;
	const char *what = l->raw ? "reading samples" : "reading the stacks histogram";
	struct sbuf sql = { 0 };
	sqlite3_stmt *st;
	int i, rc, ret = -1;

	sbuf_addf(&sql, "SELECT stack_id,pid,comm_id,%s,%s,period",
		  l->raw ? "time_ns" : "start_ns", l->raw ? "1" : "samples");
	for (i = 0; i < l->nev; i++)
		sbuf_addf(&sql, ",c%d", i);
	if (l->raw) {
		sbuf_addf(&sql, " FROM samples WHERE ");
		if (!raw_range_sql(s, &sql)) {
			free(sql.s);
			return 0;
		}
		sbuf_addf(&sql, "session_id=?1");
		if (o->has_from)
			sbuf_addf(&sql, " AND time_ns >= ?4");
		if (o->has_to)
			sbuf_addf(&sql, " AND time_ns <= ?5");
		qfilter_sql(&l->qf, &sql, QFILTER_SQL_ALL);
	} else {
		sbuf_addf(&sql, " FROM stack_agg WHERE session_id=?1");
		qfilter_sql(&l->qf, &sql, QFILTER_SQL_PID | QFILTER_SQL_COMM);
	}
	if (sqlite3_prepare_v2(db_sqlite(l->db), sql.s, -1, &st, NULL)) {
		db_sql_error(l->db, e, what);
		goto out;
	}
	raw_bind(st, s, o);
	if (l->raw && o->progress) {
		progress_phase(o->progress, sample_scan_session_total(l->db, s, o->has_from,
				o->from_ns, o->has_to, o->to_ns), "samples");
		db_set_progress(l->db, o->progress);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(st, 1), x = sqlite3_column_int64(st, 3), proc;
		size_t cg;

		if (!qfilter_row(&l->qf, pid, x, &proc, &cg))
			continue;
		if (sqlite3_column_type(st, 0) == SQLITE_NULL) {
			l->set->no_stack += (uint64_t)sqlite3_column_int64(st, 4);
			continue;
		}
		gent_add(l, sqlite3_column_int64(st, 0), pid, sqlite3_column_int64(st, 2),
			 qfilter_start(&l->qf, pid, x), (uint64_t)sqlite3_column_int64(st, 4), st,
			 5, 6);
	}
	sqlite3_finalize(st);
	db_set_progress(l->db, NULL);
	if (rc != SQLITE_DONE) {
		db_sql_error(l->db, e, what);
		goto out;
	}
	ret = 0;
out:
	free(sql.s);
	return ret;
}

/* The samples of the histogram sample_agg that pass the filters, less
 * those in the set: the samples with no stack (the histogram of stacks
 * has no row for them). */
static int no_stack_agg(struct sload *l, struct error *e)
{
	struct sbuf sql = { 0 };
	uint64_t n = 0;
	sqlite3_stmt *st;
	int rc;

	sbuf_addf(&sql, "SELECT pid,start_ns,samples FROM sample_agg WHERE session_id=?1");
	qfilter_sql(&l->qf, &sql, QFILTER_SQL_ALL);
	rc = sqlite3_prepare_v2(db_sqlite(l->db), sql.s, -1, &st, NULL);
	free(sql.s);
	if (rc)
		return db_sql_error(l->db, e, "reading the session histogram");
	sqlite3_bind_int64(st, 1, l->set->session.id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t proc;
		size_t cg;

		if (qfilter_row(&l->qf, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
				&proc, &cg))
			n += (uint64_t)sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_sql_error(l->db, e, "reading the session histogram");
	l->set->no_stack = n > l->set->samples + l->missing ? n - l->set->samples - l->missing : 0;
	return 0;
}

/* ---- step 2: frames ---- */

static uint32_t loc_intern(struct sload *l, int64_t binary_id, uint64_t offset, uint32_t pid)
{
	struct k4 k = { { binary_id, (int64_t)offset, pid, 0 } };
	size_t *slot = k4map_slot(&l->lmap, l->locs, sizeof(*l->locs), l->nlocs, &k);

	if (!*slot) {
		ARRAY_GROW(l->locs, l->loccap, l->nlocs + 1);
		l->locs[l->nlocs].k = k;
		*slot = ++l->nlocs;
	}
	return (uint32_t)(*slot - 1);
}

static int64_t le64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return (int64_t)v;
}

/* Intern the nr frames of blob as locations of process pid (0: not per
 * process), appended to the pool; returns where they start. */
static size_t frames_intern(struct sload *l, struct resolver *res, const unsigned char *blob,
			    uint32_t nr, uint32_t pid, int *bypid)
{
	size_t lo = l->npool;

	ARRAY_GROW(l->p->pool, l->poolcap, l->npool + nr);
	for (uint32_t i = 0; i < nr; i++) {
		int64_t b = le64(blob + 16 * (size_t)i);
		uint64_t off = (uint64_t)le64(blob + 16 * (size_t)i + 8);
		int per_pid = resolver_by_pid(res, b);

		if (per_pid && bypid)
			*bypid = 1;
		l->p->pool[l->npool++] = loc_intern(l, b, off, per_pid ? pid : 0);
	}
	return lo;
}

static int id_cmp(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

static int stk_cmp(const void *key, const void *elem)
{
	int64_t a = *(const int64_t *)key, b = ((const struct stk *)elem)->id;

	return (a > b) - (a < b);
}

static int frames_load(struct sload *l, struct resolver *res, struct error *e)
{
	const struct db_session *s = &l->set->session;
	int64_t *ids;
	size_t nids = 0, i;
	sqlite3_stmt *st;
	int rc;

	if (!l->ng)
		return 0;
	ids = xcalloc(l->ng, sizeof(*ids));
	for (i = 0; i < l->ng; i++)
		ids[i] = l->g[i].k.v[0];
	qsort(ids, l->ng, sizeof(*ids), id_cmp);
	for (i = 0; i < l->ng; i++)
		if (!nids || ids[nids - 1] != ids[i])
			ids[nids++] = ids[i];
	if (sqlite3_prepare_v2(db_sqlite(l->db), "SELECT id,nr,flags,frames FROM stacks "
			       "WHERE session_id=?1 AND id BETWEEN ?2 AND ?3 ORDER BY id", -1, &st,
			       NULL)) {
		free(ids);
		return db_sql_error(l->db, e, "reading stacks");
	}
	sqlite3_bind_int64(st, 1, s->id);
	sqlite3_bind_int64(st, 2, ids[0]);
	sqlite3_bind_int64(st, 3, ids[nids - 1]);
	i = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0), nr = sqlite3_column_int64(st, 1);
		const unsigned char *blob = sqlite3_column_blob(st, 3);
		int bytes = sqlite3_column_bytes(st, 3);
		struct stk *k;

		while (i < nids && ids[i] < id)
			i++;
		if (i == nids)
			break;
		if (ids[i] != id)
			continue;	/* a stack no entry uses */
		if (nr < 1 || nr > STACKS_MAX_FRAMES || !blob || bytes != nr * 16) {
			sqlite3_finalize(st);
			free(ids);
			return error_set(e, "stack %lld of session %lld is malformed (%lld frames "
					 "in %d bytes): the database is corrupt", (long long)id,
					 (long long)s->id, (long long)nr, bytes);
		}
		ARRAY_GROW(l->stks, l->stkcap, l->nstks + 1);
		k = &l->stks[l->nstks++];
		memset(k, 0, sizeof(*k));
		k->id = id;
		k->nr = (uint32_t)nr;
		k->flags = (uint32_t)sqlite3_column_int64(st, 2);
		k->lo = frames_intern(l, res, blob, k->nr, 0, &k->bypid);
	}
	sqlite3_finalize(st);
	free(ids);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return db_sql_error(l->db, e, "reading stacks");
	return 0;
}

/* ---- steps 3 and 4: entries with their frames, named ---- */

static int is_kernel_key(const char *key)
{
	return key && !strncmp(key, "kernel:", 7);
}

/* The kernel binaries of the database (keys "kernel:..."), sorted. */
static int kernel_ids(struct sload *l, int64_t **ids, size_t *n, struct error *e)
{
	size_t cap = 0;
	sqlite3_stmt *st;
	int rc;

	*ids = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db_sqlite(l->db), "SELECT id FROM binaries WHERE "
			       "substr(key,1,7)='kernel:' ORDER BY id", -1, &st, NULL))
		return db_sql_error(l->db, e, "reading binaries");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ARRAY_GROW(*ids, cap, *n + 1);
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_sql_error(l->db, e, "reading binaries");
	return 0;
}

static const char *comm_intern(struct sload *l, int64_t comm_id, struct error *e)
{
	struct stacks_priv *p = l->p;
	struct k4 k = { { comm_id, 0, 0, 0 } };
	size_t *slot = k4map_slot(&l->cmap, p->comms, sizeof(*p->comms), p->ncomms, &k);
	sqlite3_stmt *st;
	const char *name = "[unknown]";
	int rc;

	if (*slot)
		return p->comms[*slot - 1].name;
	if (sqlite3_prepare_v2(db_sqlite(l->db), "SELECT name FROM comms WHERE id=?1", -1, &st,
			       NULL)) {
		db_sql_error(l->db, e, "reading comms");
		return NULL;
	}
	sqlite3_bind_int64(st, 1, comm_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
		name = (const char *)sqlite3_column_text(st, 0);
	ARRAY_GROW(p->comms, l->commcap, p->ncomms + 1);
	p->comms[p->ncomms].k = k;
	name = p->comms[p->ncomms].name = xstrdup(name);
	*slot = ++p->ncomms;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		db_sql_error(l->db, e, "reading comms");
		return NULL;
	}
	return name;
}

static int entries_make(struct sload *l, struct resolver *res, struct error *e)
{
	struct stack_set *set = l->set;
	struct stacks_priv *p = l->p;
	const struct report_opts *o = l->o;
	int64_t *kids = NULL;
	size_t nkids = 0, i;
	int filter0 = !l->raw && (o->binary || o->mode != REPORT_ALL);

	if (filter0 && o->mode != REPORT_ALL && kernel_ids(l, &kids, &nkids, e) < 0)
		return -1;
	set->stacks = xcalloc(l->ng ? l->ng : 1, sizeof(*set->stacks));
	p->comm_ids = xcalloc(l->ng ? l->ng : 1, sizeof(*p->comm_ids));
	l->entry_lo = xcalloc(l->ng ? l->ng : 1, sizeof(*l->entry_lo));
	for (i = 0; i < l->ng; i++) {
		const struct gent *g = &l->g[i];
		const struct stk *k = bsearch(&g->k.v[0], l->stks, l->nstks, sizeof(*l->stks),
					      stk_cmp);
		struct stack_entry *se;
		const char *comm;
		size_t lo;

		if (!k) {
			l->missing += g->samples;
			continue;
		}
		lo = k->lo;
		if (filter0) {
			int64_t b0 = l->locs[p->pool[lo]].k.v[0];
			int kern = nkids && bsearch(&b0, kids, nkids, sizeof(*kids), id_cmp);

			if (!qfilter_binary(&l->qf, b0) || (o->mode == REPORT_KERNEL && !kern) ||
			    (o->mode == REPORT_USER && kern))
				continue;
		}
		if (k->bypid && g->k.v[1]) {
			/* JIT code named from this process's perf map: its own
			 * locations (frames read again from the pool's copy) */
			size_t n = k->nr, j;

			lo = l->npool;
			ARRAY_GROW(p->pool, l->poolcap, l->npool + n);
			for (j = 0; j < n; j++) {
				struct k4 f = l->locs[p->pool[k->lo + j]].k;	/* a copy: */
				int per_pid = resolver_by_pid(res, f.v[0]);	/* locs grow */
				uint32_t x = loc_intern(l, f.v[0], (uint64_t)f.v[1],
							per_pid ? (uint32_t)g->k.v[1] : 0);

				p->pool[l->npool + j] = x;
			}
			l->npool += n;
		}
		comm = comm_intern(l, g->k.v[2], e);
		if (!comm) {
			free(kids);
			return -1;
		}
		se = &set->stacks[set->nr_stacks];
		p->comm_ids[set->nr_stacks] = g->k.v[2];
		l->entry_lo[set->nr_stacks] = lo;
		set->nr_stacks++;
		se->stack_id = k->id;
		se->pid = (uint32_t)g->k.v[1];
		se->start_ns = (uint64_t)g->k.v[3];
		se->comm = comm;
		se->flags = k->flags;
		se->nr = k->nr;
		se->samples = g->samples;
		se->weight = g->period;	/* for now: weigh() decides */
		memcpy(se->c, g->c, sizeof(se->c));
		set->samples += g->samples;
		if (k->flags & STACK_INCOMPLETE)
			set->incomplete += g->samples;
		for (int c = 0; c < l->nev; c++)
			set->total[c] += g->c[c];
	}
	free(kids);
	for (i = 0; i < set->nr_stacks; i++)
		set->stacks[i].locs = p->pool + l->entry_lo[i];
	if (l->missing)
		note_add(l, "%" PRIu64 " samples refer to stacks that are not stored (yet: a "
			 "session still being written); they are left out", l->missing);
	return 0;
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

static uint64_t str_hash(const char *s)
{
	return hash_mix64(hash_string(HASH_STRING_INIT, s));
}

/* Name every location; locations of one (binary, symbol) share a sym. */
static void name_locs(struct sload *l, struct resolver *res)
{
	struct stack_set *set = l->set;
	size_t *slot, mask, i, symcap = 0, nslots = 1024;
	int64_t prob[4];	/* binaries noted */
	size_t nprob = 0;
	int more = 0;

	while (nslots < 2 * l->nlocs)
		nslots *= 2;
	slot = xcalloc(nslots, sizeof(*slot));
	mask = nslots - 1;
	set->locs = xcalloc(l->nlocs ? l->nlocs : 1, sizeof(*set->locs));
	set->nr_locs = l->nlocs;
	progress_phase(l->o->progress, l->nlocs, "locations named");
	for (i = 0; i < l->nlocs; i++) {
		const struct k4 *k = &l->locs[i].k;
		struct stack_loc *sl = &set->locs[i];
		struct resolved rv;
		size_t h;

		progress_update(l->o->progress, i);

		resolver_lookup_pid(res, k->v[0], (uint64_t)k->v[1], (uint32_t)k->v[2], 0, &rv);
		sl->binary_id = k->v[0];
		sl->offset = (uint64_t)k->v[1];
		sl->pid = (uint32_t)k->v[2];
		h = (str_hash(rv.symbol) ^ hash_mix64((uint64_t)k->v[0])) & mask;
		while (slot[h]) {
			const struct stack_sym *y = &set->syms[slot[h] - 1];

			if (y->binary_id == k->v[0] && !strcmp(y->symbol, rv.symbol))
				break;
			h = (h + 1) & mask;
		}
		if (!slot[h]) {
			struct stack_sym *y;

			if (set->nr_syms * 2 + 2 > nslots) {
				/* grow: rehash the syms so far */
				size_t j;

				free(slot);
				nslots *= 2;
				mask = nslots - 1;
				slot = xcalloc(nslots, sizeof(*slot));
				for (j = 0; j < set->nr_syms; j++) {
					const struct stack_sym *z = &set->syms[j];
					size_t g = (str_hash(z->symbol) ^
						    hash_mix64((uint64_t)z->binary_id)) & mask;

					while (slot[g])
						g = (g + 1) & mask;
					slot[g] = j + 1;
				}
				h = (str_hash(rv.symbol) ^ hash_mix64((uint64_t)k->v[0])) & mask;
				while (slot[h])
					h = (h + 1) & mask;
			}
			ARRAY_GROW(set->syms, symcap, set->nr_syms + 1);
			y = &set->syms[set->nr_syms];
			y->binary_id = k->v[0];
			y->binary = rv.binary;
			y->build_id = rv.build_id;
			y->symbol = rv.symbol;
			y->kernel = is_kernel_key(rv.key);
			slot[h] = ++set->nr_syms;
			if (rv.problem || rv.no_symbols) {
				size_t j;

				for (j = 0; j < nprob && prob[j] != k->v[0]; j++)
					;
				if (j == nprob && nprob < ARRAY_SIZE(prob)) {
					prob[nprob++] = k->v[0];
					if (rv.problem)
						note_add(l, "%s (%s): not available: %s; its frames "
							 "are not symbolised", rv.binary, rv.key,
							 rv.problem);
					else
						note_add(l, "%s (%s): has no function symbols "
							 "(stripped); its frames show as [unknown]",
							 rv.binary, rv.key);
				} else if (j == nprob) {
					more = 1;
				}
			}
		}
		sl->sym = (uint32_t)(slot[h] - 1);
	}
	if (more)
		note_add(l, "more binaries in these stacks cannot be symbolised");
	free(slot);
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
		note_add(l, "unwinding stopped before the outermost frame in %" PRIu64
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
	l.raw = p->raw = o->has_from || o->has_to || !db_session_complete(s);
	if (!(p->res = resolver_new(db, s, e)))
		goto fail;
	resolver_set_demangle(p->res, !o->no_demangle);
	if (!strcmp(s->state, "running"))
		note_add(&l, "session %lld is still running: these stacks are those of the "
			 "samples stored so far", (long long)s->id);

	if (qfilter_init(&l.qf, db, o, s, l.raw, QFILTER_PROCS, qf_note, &l, e) < 0)
		goto fail;
	if (!l.qf.none) {
		if (gather(&l, e) < 0 || frames_load(&l, p->res, e) < 0 ||
		    entries_make(&l, p->res, e) < 0)
			goto fail;
		if (!l.raw && no_stack_agg(&l, e) < 0)
			goto fail;
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
	free(set->syms);
	free(set->locs);
	free(set->stacks);
	free(p);
}

/* ---- stacks_scan ---- */

int stacks_scan(struct db *db, const struct stack_set *set, const struct report_opts *o,
		stacks_sample_fn fn, void *ctx, struct error *e)
{
	const struct stacks_priv *p = (const struct stacks_priv *)set;
	const struct db_session *s = &set->session;
	size_t n = set->nr_stacks ? set->nr_stacks : 1;
	struct qfilter qf;
	struct sbuf sql = { 0 };
	struct k4map m = { 0 };
	struct k4 *keys = xcalloc(n, sizeof(*keys));
	size_t *first = xcalloc(n, sizeof(*first)), *last = xcalloc(n, sizeof(*last));
	size_t *chain = xcalloc(n, sizeof(*chain));	/* entry + 1 of the same key, 0: end */
	size_t nkeys = 0, i;
	sqlite3_stmt *st = NULL;
	int rc, ret = -1;

	memset(&qf, 0, sizeof(qf));
	/* (stack, pid, comm) -> its entries (one per process start), chained */
	for (i = 0; i < set->nr_stacks; i++) {
		const struct stack_entry *se = &set->stacks[i];
		struct k4 k = { { se->stack_id, se->pid, p->comm_ids[i], 0 } };
		size_t *slot = k4map_slot(&m, keys, sizeof(*keys), nkeys, &k);

		if (!*slot) {
			keys[nkeys] = k;
			first[nkeys] = last[nkeys] = i;
			*slot = ++nkeys;
		} else {
			chain[last[*slot - 1]] = i + 1;
			last[*slot - 1] = i;
		}
	}
	if (qfilter_init(&qf, db, o, s, 1, QFILTER_PROCS, NULL, NULL, e) < 0)
		goto out;
	ret = 0;
	if (qf.none || !set->nr_stacks)
		goto out;
	sbuf_addf(&sql, "SELECT time_ns,cpu,tid,pid,comm_id,stack_id FROM samples WHERE ");
	if (!raw_range_sql(s, &sql))
		goto out;
	ret = -1;
	sbuf_addf(&sql, "session_id=?1 AND stack_id IS NOT NULL");
	if (o->has_from)
		sbuf_addf(&sql, " AND time_ns >= ?4");
	if (o->has_to)
		sbuf_addf(&sql, " AND time_ns <= ?5");
	qfilter_sql(&qf, &sql, QFILTER_SQL_ALL);
	if (s->late_samples)	/* stored out of time order (or not known) */
		sbuf_addf(&sql, " ORDER BY time_ns, rowid");
	if (sqlite3_prepare_v2(db_sqlite(db), sql.s, -1, &st, NULL)) {
		db_sql_error(db, e, "reading samples");
		goto out;
	}
	raw_bind(st, s, o);
	if (o->progress) {
		progress_phase(o->progress, sample_scan_session_total(db, s, o->has_from,
				o->from_ns, o->has_to, o->to_ns), "samples");
		db_set_progress(db, o->progress);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t t = sqlite3_column_int64(st, 0), pid = sqlite3_column_int64(st, 3), proc;
		struct k4 k = { { sqlite3_column_int64(st, 5), pid, sqlite3_column_int64(st, 4),
				  0 } };
		size_t cg, *slot, ent, best;
		int64_t start;

		if (!qfilter_row(&qf, pid, t, &proc, &cg))
			continue;
		slot = k4map_slot(&m, keys, sizeof(*keys), nkeys, &k);
		if (!*slot)
			continue;	/* not in the set (filtered out when loaded) */
		/* the entry of this sample's process, else the key's first */
		start = qfilter_start(&qf, pid, t);
		best = first[*slot - 1];
		for (ent = best + 1; ent; ent = chain[ent - 1]) {
			if ((int64_t)set->stacks[ent - 1].start_ns == start) {
				best = ent - 1;
				break;
			}
		}
		if (fn(ctx, t - s->start_ns, (uint32_t)sqlite3_column_int64(st, 1),
		       (uint32_t)sqlite3_column_int64(st, 2), best, e) < 0)
			goto out;
	}
	if (rc != SQLITE_DONE) {
		db_sql_error(db, e, "reading samples");
		goto out;
	}
	ret = 0;
out:
	if (st)
		sqlite3_finalize(st);
	db_set_progress(db, NULL);
	qfilter_free(&qf);
	free(sql.s);
	free(keys);
	free(first);
	free(last);
	free(chain);
	k4map_free(&m);
	return ret;
}
