/*
 * timeline.c - a session's samples per time bucket (see timeline.h).
 *
 * Phases 1 and 2 read either the session's sums per fine time bucket,
 * CPU, process, comm and binary (sample_time, written by lib/ingest/ingest.c),
 * when they can answer exactly (see timeline.h), or else its raw sample
 * rows through its rowid range (the samples table has no index; see
 * doc/DESIGN.md).  Both are streamed, never held in memory, through one
 * column layout (COL_*): a raw row is a sum of one sample.
 *
 *  0. with --by symbol or a symbol filter: the distinct (binary, offset)
 *     locations of the filtered samples, each named by the resolver;
 *  1. with --by: the totals per key (CPU, pid, binary or symbol), from
 *     which each ranking keeps its top N keys as groups;
 *  2. the sums per bucket, for all filtered samples and per kept group.
 *
 * Lost intervals come from table lost and one more pass over the session's
 * (cpu, time) pairs, unfiltered; markers from table markers.
 */
#include "config.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include "resolve.h"
#include "progress.h"
#include "samplescan.h"
#include "eventscan.h"
#include "cgset.h"
#include "countstore.h"
#include "procset.h"
#include "qfilter.h"
#include "timeline.h"

/* ---- a string buffer ---- */

/* ---- a hash map (int64, uint64) -> size_t ---- */

struct kv {
	int64_t a;
	uint64_t b;
	size_t v;
	int used;
};

struct hmap {
	struct kv *slots;
	size_t cap, n;		/* cap: power of two */
};

static size_t hmap_slot(const struct hmap *m, int64_t a, uint64_t b)
{
	/* one multiply-xorshift round: the keys (ids, offsets) are not chosen
	 * against it, and this runs for every raw row */
	uint64_t h = ((uint64_t)a * 0x9e3779b97f4a7c15ULL ^ b) * 0xff51afd7ed558ccdULL;
	size_t i = (size_t)(h ^ h >> 29) & (m->cap - 1);

	while (m->slots[i].used && (m->slots[i].a != a || m->slots[i].b != b))
		i = (i + 1) & (m->cap - 1);
	return i;
}

/* The value of (a, b), or NULL. */
static size_t *hmap_find(const struct hmap *m, int64_t a, uint64_t b)
{
	size_t i;

	if (!m->cap)
		return NULL;
	i = hmap_slot(m, a, b);
	return m->slots[i].used ? &m->slots[i].v : NULL;
}

/* The value of (a, b), added as v if missing; *added says which. */
static size_t *hmap_put(struct hmap *m, int64_t a, uint64_t b, size_t v, int *added)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		struct hmap big = { .cap = m->cap ? 2 * m->cap : 64 };

		big.slots = xcalloc(big.cap, sizeof(*big.slots));
		for (i = 0; i < m->cap; i++)
			if (m->slots[i].used)
				big.slots[hmap_slot(&big, m->slots[i].a, m->slots[i].b)] = m->slots[i];
		big.n = m->n;
		free(m->slots);
		*m = big;
	}
	i = hmap_slot(m, a, b);
	*added = !m->slots[i].used;
	if (*added) {
		m->slots[i] = (struct kv){ .a = a, .b = b, .v = v, .used = 1 };
		m->n++;
	}
	return &m->slots[i].v;
}

static void hmap_free(struct hmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* ---- pure helpers ---- */

int64_t timeline_default_bucket(int64_t range_ns)
{
	static const int steps[] = { 1, 2, 5 };
	int64_t want = range_ns / 500, p = 1000000;	/* 1 ms */

	for (;;) {
		for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
			if (steps[i] * p >= want)
				return steps[i] * p;
		if (p > INT64_MAX / 100)
			return p;
		p *= 10;
	}
}

size_t timeline_bucket_count(int64_t range_ns, int64_t bucket_ns)
{
	int64_t n;

	if (range_ns <= 0 || bucket_ns <= 0)
		return 1;
	n = range_ns / bucket_ns + (range_ns % bucket_ns != 0);
	return n < 1 ? 1 : (size_t)n;
}

int timeline_parse_by(const char *s, enum timeline_by *by)
{
	static const struct { const char *name; enum timeline_by by; } t[] = {
		{ "cpu", TL_BY_CPU }, { "pid", TL_BY_PID },
		{ "binary", TL_BY_BINARY }, { "symbol", TL_BY_SYMBOL },
		{ "cgroup", TL_BY_CGROUP },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++)
		if (!strcmp(s, t[i].name)) {
			*by = t[i].by;
			return 0;
		}
	return -1;
}

const char *timeline_by_name(enum timeline_by by)
{
	switch (by) {
	case TL_BY_NONE: return "none";
	case TL_BY_CPU: return "cpu";
	case TL_BY_PID: return "pid";
	case TL_BY_BINARY: return "binary";
	case TL_BY_SYMBOL: return "symbol";
	case TL_BY_CGROUP: return "cgroup";
	case TL_BY_HOST: return "host";
	}
	return "?";
}

const struct timeline_rank *timeline_rank_of(const struct timeline *t, int value)
{
	for (int i = 0; i < t->nranks; i++)
		if (t->ranks[i].value == value)
			return &t->ranks[i];
	return NULL;
}

/* ---- building ---- */

/* Per key of --by (phase 1). */
struct keyent {
	struct timeline_key tk;		/* tk.start, of a pid: its process's
					 * start when the pid was several
					 * processes, else 0 */
	int64_t comm_id;		/* pid: the comm of its latest sample */
	int64_t comm_row;		/* the rowid of that sample */
	double *v;			/* one pass: its buckets, as a group's */
};

/* One pass over raw rows keeps every key's buckets up to this much. */
#define ONEPASS_MAX_BYTES	(128u << 20)

/* A named location (phase 0). */
struct locname {
	char *name;			/* "symbol (binary)" */
	int match;			/* passes the symbol filter */
};

struct build {
	struct db *db;
	const struct timeline_opts *o;
	struct timeline *t;
	struct error *e;
	struct sample_scan_filter raw;	/* the raw rows, with the filters */
	int64_t *bins;			/* its binary ids, sorted */
	size_t nbins;
	struct sbuf filt;		/* " AND pid=.. AND comm_id=.. AND binary_id IN (..)" */
	int summed;			/* phases 1 and 2 read sample_time */
	int64_t k0, k1;			/* its fine buckets in the range */
	int cut;			/* k1 holds rows after to_ns: leave them out */
	int64_t comm_id;
	int need_locs;
	struct hmap locs;		/* (binary_id, offset) -> index in sym */
	struct locname *sym;		/* distinct symbol names ... */
	size_t nsym, capsym;
	struct hmap symidx;		/* hash of name -> candidates in sym (by hash) */
	size_t *locsym;			/* location index -> sym index */
	size_t nloc, caploc;
	struct hmap keys;		/* key -> index in ent */
	struct keyent *ent;
	size_t nent, capent;
	int onepass;			/* phase 1 filled the buckets too */
	size_t onepass_bytes;
	uint64_t pass_rows;		/* progress_plan(): what a scan of raw reads */
	struct procset procs;		/* --by pid, --pid: pids that were several
					 * processes (procset.h) */
	int64_t sel;			/* --pid P@T: the start of the one chosen */
	int cg;				/* --cgroup or --by cgroup: cgs loaded */
	struct cgset cgs;
	struct procset all;		/* and every process (raw rows) */
};

static void ent_free_buckets(struct build *b)
{
	for (size_t i = 0; i < b->nent; i++) {
		free(b->ent[i].v);
		b->ent[i].v = NULL;
	}
	b->onepass = 0;
}

static int sql_fail(struct build *b, const char *what)
{
	return db_sql_error(b->db, b->e, what);
}

static const char *path_base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s && s[1] ? s + 1 : p;
}

static int64_t comm_lookup(struct build *b, const char *name)
{
	sqlite3_stmt *st;
	int64_t id = 0;
	int rc;

	if (sqlite3_prepare_v2(db_sqlite(b->db), "SELECT id FROM comms WHERE name=?1",
			       -1, &st, NULL))
		return sql_fail(b, "reading comms");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sql_fail(b, "reading comms");
	return id;
}

/* The name a binary row is shown with: "[kernel.kallsyms]", "[vdso]", or
 * the file name of its path. */
static void binary_display(struct build *b, int64_t id, char *buf, size_t len)
{
	struct db_binary *row = xmalloc(sizeof(*row));
	struct error ign;

	if (id <= 0 || db_binary_get(b->db, id, row, &ign) < 0)
		snprintf(buf, len, "[unknown]");
	else if (!strncmp(row->key, "kernel:", 7))
		snprintf(buf, len, "[kernel.kallsyms]");
	else if (row->key[0] == '[' || !row->path[0])
		snprintf(buf, len, "%s", row->key[0] ? row->key : "[unknown]");
	else
		snprintf(buf, len, "%.*s", (int)MIN(len, 255), path_base(row->path));
	free(row);
}

/* " AND binary_id IN (...)" for --binary; the number of binaries, or -1. */
static int binary_filter(struct build *b, struct sbuf *sql)
{
	if (qfilter_binaries(b->db, b->o->binary, &b->bins, &b->nbins, b->e) < 0)
		return -1;
	for (size_t i = 0; i < b->nbins; i++)
		sbuf_addf(sql, "%s%lld", i ? "," : " AND binary_id IN (", (long long)b->bins[i]);
	if (b->nbins)
		sbuf_addf(sql, ")");
	return (int)b->nbins;
}

/* Time of the sample at rowid, or -1. */
static int64_t rowid_time(struct build *b, int64_t rowid)
{
	sqlite3_stmt *st;
	int64_t t = -1;

	if (rowid <= 0 || sqlite3_prepare_v2(db_sqlite(b->db),
					     "SELECT time_ns FROM samples WHERE rowid=?1",
					     -1, &st, NULL))
		return -1;
	sqlite3_bind_int64(st, 1, rowid);
	if (sqlite3_step(st) == SQLITE_ROW)
		t = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return t;
}

/* The session's rows: "samples WHERE <rowid range> AND session_id=?1". */
static void rows_sql(struct build *b, struct sbuf *sql)
{
	const struct db_session *s = &b->t->session;

	sbuf_addf(sql, "FROM samples WHERE ");
	if (s->first_sample > 0 && s->last_sample >= s->first_sample &&
	    db_session_complete(s))
		sbuf_addf(sql, "rowid BETWEEN %lld AND %lld AND ", (long long)s->first_sample,
			(long long)s->last_sample);
	else if (s->first_sample > 0)
		sbuf_addf(sql, "rowid >= %lld AND ", (long long)s->first_sample);
	sbuf_addf(sql, "session_id=%lld", (long long)s->id);
}

/* The end of the session's data: its end, or its last sample if later. */
static int session_end(struct build *b, int64_t *end)
{
	const struct db_session *s = &b->t->session;
	int64_t last = -1;

	if (s->first_sample <= 0)
		last = -1;
	else if (s->last_sample >= s->first_sample && db_session_complete(s))
		last = rowid_time(b, s->last_sample);
	else {
		struct sbuf sql = { 0 };
		sqlite3_stmt *st;

		sbuf_addf(&sql, "SELECT max(time_ns) ");
		rows_sql(b, &sql);
		if (sqlite3_prepare_v2(db_sqlite(b->db), sql.s, -1, &st, NULL)) {
			free(sql.s);
			return sql_fail(b, "reading samples");
		}
		free(sql.s);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
			last = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	*end = s->start_ns;
	if (s->end_ns > s->start_ns)
		*end = s->end_ns;
	else if (s->duration_ns > 0)
		*end = s->start_ns + s->duration_ns;
	if (last > *end)
		*end = last;
	return 0;
}

/* The filters of the options (but the time range) in b->filt, for
 * sample_time, and the raw rows they select in b->raw. */
static int make_where(struct build *b)
{
	const struct timeline_opts *o = b->o;
	struct timeline *t = b->t;

	sample_scan_range(&t->session, &b->raw.row_lo, &b->raw.row_hi);
	b->raw.session_id = t->session.id;
	b->raw.has_time = 1;
	b->raw.time_lo = t->from_ns;
	b->raw.time_hi = t->to_ns;
	b->raw.cols = 1u << SB_TIME_NS | 1u << SB_CPU | 1u << SB_PID | 1u << SB_BINARY_ID |
		      1u << SB_OFFSET | 1u << SB_COMM_ID |
		      (((1u << MIN(t->session.nr_events, STROBE_MAX_COUNTERS)) - 1) << SB_C0);
	if (o->pid >= 0) {
		sbuf_addf(&b->filt, " AND pid=%lld", (long long)o->pid);
		b->raw.has_pid = 1;
		b->raw.pid = o->pid;
	}
	if (o->comm) {
		b->comm_id = comm_lookup(b, o->comm);
		if (b->comm_id < 0)
			return -1;
		if (!b->comm_id)
			return error_set(b->e, "no process named '%s' was ever seen in %s",
					 o->comm, db_path(b->db));
		sbuf_addf(&b->filt, " AND comm_id=%lld", (long long)b->comm_id);
		b->raw.has_comm = 1;
		b->raw.comm_id = b->comm_id;
	}
	if (o->binary) {
		int n = binary_filter(b, &b->filt);

		if (n < 0)
			return -1;
		if (!n)
			return error_set(b->e, "no binary in %s has path or name '%s'",
					 db_path(b->db), o->binary);
		b->raw.binaries = b->bins;
		b->raw.nbinaries = b->nbins;
	}
	return 0;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b < 0);
}

/*
 * Can sample_time give phases 1 and 2 exactly?  Its fine buckets must map
 * whole into the buckets (the bucket and --from multiples of their width),
 * and no row of the fine bucket holding --to (inclusive) may hold samples
 * both up to --to and after it: its rows before --to are counted, those
 * after it not (b->cut).  With no symbol involved: sample_time has no
 * offsets.
 */
static int time_sums_usable(struct build *b)
{
	const struct db_session *s = &b->t->session;
	struct timeline *t = b->t;
	int64_t w = s->time_bucket_ns, across = 1;
	sqlite3_stmt *st;
	int rc;

	if (b->o->raw || b->need_locs || w <= 0 || t->bucket_ns % w ||
	    (t->from_ns - s->start_ns) % w)
		return 0;
	b->k0 = floor_div(t->from_ns - s->start_ns, w);
	b->k1 = floor_div(t->to_ns - s->start_ns, w);
	b->cut = (t->to_ns - s->start_ns + 1) % w != 0;
	if (!b->cut)
		return 1;
	if (sqlite3_prepare_v2(db_sqlite(b->db), "SELECT count(*) FROM sample_time WHERE "
			       "session_id=?1 AND bucket=?2 AND min_ns<=?3 AND max_ns>?3",
			       -1, &st, NULL))
		return sql_fail(b, "reading sample_time");
	sqlite3_bind_int64(st, 1, s->id);
	sqlite3_bind_int64(st, 2, b->k1);
	sqlite3_bind_int64(st, 3, t->to_ns);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		across = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return sql_fail(b, "reading sample_time");
	return across == 0;
}

/*
 * The rows of phases 1 and 2: sums of sample_time (b->summed), or the raw
 * samples, each a sum of one.  time is a sum's fine bucket's start, row
 * the rowid of its latest sample; offset is 0 in sums.
 */
struct trow {
	int64_t cpu, pid, bin, off, comm, time, row;
	int64_t start;			/* its process's start: sums only, else 0 */
	uint64_t n, c[STROBE_MAX_COUNTERS];
};

struct tsrc {
	sqlite3_stmt *st;		/* sample_time */
	struct sample_scan *sc;		/* raw */
	int nev;
};

static int tsrc_open(struct build *b, struct tsrc *src)
{
	const struct db_session *s = &b->t->session;
	struct sbuf sql = { 0 };
	int rc;

	memset(src, 0, sizeof(*src));
	src->nev = MIN((int)s->nr_events, STROBE_MAX_COUNTERS);
	if (!b->summed) {
		src->sc = sample_scan_open(b->db, &b->raw, b->e);
		return src->sc ? 0 : -1;
	}
	sbuf_addf(&sql, "SELECT cpu,pid,binary_id,0,comm_id,%lld+bucket*%lld,last_row,samples,"
		  "start_ns",
		  (long long)s->start_ns, (long long)s->time_bucket_ns);
	for (int i = 0; i < src->nev; i++)
		sbuf_addf(&sql, ",c%d", i);
	sbuf_addf(&sql, " FROM sample_time WHERE session_id=%lld AND bucket BETWEEN "
		  "%lld AND %lld%s", (long long)s->id, (long long)b->k0, (long long)b->k1,
		  b->filt.n ? b->filt.s : "");
	if (b->cut)
		sbuf_addf(&sql, " AND (bucket<%lld OR max_ns<=%lld)", (long long)b->k1,
			  (long long)b->t->to_ns);
	rc = sqlite3_prepare_v2(db_sqlite(b->db), sql.s, -1, &src->st, NULL);
	free(sql.s);
	return rc ? sql_fail(b, "reading samples") : 0;
}

/* The next row into *r: 1, 0 after the last, -1 on error. */
static int tsrc_next(struct build *b, struct tsrc *src, struct trow *r)
{
	if (src->sc) {
		const struct sample_scan_row *row;
		int rc = sample_scan_next(src->sc, &row, b->e);

		if (rc != 1)
			return rc;
		r->cpu = row->r->v[SB_CPU];
		r->pid = row->r->v[SB_PID];
		r->bin = row->r->v[SB_BINARY_ID];
		r->off = row->r->v[SB_OFFSET];
		r->comm = row->r->v[SB_COMM_ID];
		r->time = row->r->v[SB_TIME_NS];
		r->row = row->rowid;
		r->start = 0;
		r->n = 1;
		for (int i = 0; i < src->nev; i++)
			r->c[i] = (uint64_t)row->r->v[SB_C0 + i];
		return 1;
	}
	switch (sqlite3_step(src->st)) {
	case SQLITE_ROW:
		break;
	case SQLITE_DONE:
		return 0;
	default:
		return sql_fail(b, "reading samples");
	}
	r->cpu = sqlite3_column_int64(src->st, 0);
	r->pid = sqlite3_column_int64(src->st, 1);
	r->bin = sqlite3_column_int64(src->st, 2);
	r->off = sqlite3_column_int64(src->st, 3);
	r->comm = sqlite3_column_int64(src->st, 4);
	r->time = sqlite3_column_int64(src->st, 5);
	r->row = sqlite3_column_int64(src->st, 6);
	r->n = (uint64_t)sqlite3_column_int64(src->st, 7);
	r->start = sqlite3_column_int64(src->st, 8);
	for (int i = 0; i < src->nev; i++)
		r->c[i] = (uint64_t)sqlite3_column_int64(src->st, 9 + i);
	return 1;
}

static void tsrc_close(struct tsrc *src)
{
	sqlite3_finalize(src->st);
	sample_scan_close(src->sc);
}

/* Row r into the buckets of all and, if given, of vg (a group's). */
static void add_row(struct timeline *t, const struct trow *r, double *vg)
{
	size_t bk = (size_t)((r->time - t->from_ns) / t->bucket_ns);
	int nv = t->nv;
	double *va;

	if (bk >= t->nbuckets)
		bk = t->nbuckets - 1;
	va = &t->all.v[bk * (size_t)nv];
	if (vg)
		vg += bk * (size_t)nv;
	va[TL_SAMPLES] += (double)r->n;
	t->all.total[TL_SAMPLES] += r->n;
	if (vg)
		vg[TL_SAMPLES] += (double)r->n;
	for (int i = 1; i < nv; i++) {
		uint64_t c = r->c[i - 1];

		va[i] += (double)c;
		t->all.total[i] += c;
		if (vg)
			vg[i] += (double)c;
	}
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

/* Index in b->sym of name, added if new. */
static size_t sym_intern(struct build *b, const char *name)
{
	uint64_t h = str_hash(name);
	int added;

	/* chain through the low bits of the hash: (hash, n) for the n-th
	 * name with that hash */
	for (uint64_t n = 0;; n++) {
		size_t *v = hmap_put(&b->symidx, (int64_t)h, n, b->nsym, &added);

		if (added) {
			ARRAY_GROW(b->sym, b->capsym, b->nsym + 1);
			b->sym[b->nsym] = (struct locname){ .name = xstrdup(name) };
			return b->nsym++;
		}
		if (!strcmp(b->sym[*v].name, name))
			return *v;
	}
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

/*
 * Can the histogram sample_agg list the filtered samples' locations?  Its
 * keys hold pid and comm_id, so the filters but the time range apply to
 * it; it is whole once the session is finished, and the time range must
 * then leave out none of its samples.
 */
static int agg_usable(struct build *b)
{
	const struct db_session *s = &b->t->session;
	sqlite3_stmt *st;
	int ok = 0;

	if (b->o->raw || !db_session_complete(s))
		return 0;
	if (sqlite3_prepare_v2(db_sqlite(b->db), "SELECT min(min_ns),max(max_ns) FROM "
			       "sample_blocks WHERE session_id=?1", -1, &st, NULL))
		return sql_fail(b, "reading samples");
	sqlite3_bind_int64(st, 1, s->id);
	if (sqlite3_step(st) == SQLITE_ROW)
		ok = sqlite3_column_type(st, 0) != SQLITE_NULL &&
		     sqlite3_column_int64(st, 0) >= b->t->from_ns &&
		     sqlite3_column_int64(st, 1) <= b->t->to_ns;
	sqlite3_finalize(st);
	return ok;
}

/* The distinct locations of the filtered samples, unsorted, into *out. */
static int collect_locations(struct build *b, struct loc **out, size_t *n)
{
	size_t cap = 0;
	int use_agg = agg_usable(b), rc, added;

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
			return sql_fail(b, "reading sample_agg");
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			ARRAY_GROW(*out, cap, *n + 1);
			(*out)[(*n)++] = (struct loc){ sqlite3_column_int64(st, 0),
						       (uint64_t)sqlite3_column_int64(st, 1) };
		}
		sqlite3_finalize(st);
		return rc == SQLITE_DONE ? 0 : sql_fail(b, "reading sample_agg");
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

			hmap_put(&b->locs, l.bin, l.off, 0, &added);
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
 * The progress of the scans of raw samples to come, as one total: those
 * of b->raw of phase 0 (when sample_agg cannot give the locations), of
 * phases 1 (--by) and 2, one scan for both (phase 1 fills the buckets
 * too, unless they take too much memory: key_totals() adds phase 2 then),
 * unless sample_time gives their sums, and that of the whole session for
 * the lost intervals (when there are any).
 */
static int progress_plan(struct build *b)
{
	const struct timeline_opts *o = b->o;
	struct sample_scan_filter all = { .session_id = b->t->session.id };
	uint64_t total = 0, rows = b->pass_rows = sample_scan_total(b->db, &b->raw);
	sqlite3_stmt *st;
	int agg = 1, lost = 0;

	if (b->need_locs && (agg = agg_usable(b)) < 0)
		return -1;
	total += (uint64_t)!agg * rows;
	if (!b->summed)
		total += rows;
	if (sqlite3_prepare_v2(db_sqlite(b->db), "SELECT 1 FROM lost WHERE session_id=?1 "
			       "LIMIT 1", -1, &st, NULL))
		return sql_fail(b, "reading lost records");
	sqlite3_bind_int64(st, 1, b->t->session.id);
	lost = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (lost) {
		sample_scan_range(&b->t->session, &all.row_lo, &all.row_hi);
		total += sample_scan_total(b->db, &all);
	}
	progress_phase(o->progress, total, "samples");
	db_set_progress(b->db, o->progress);
	return 0;
}

/*
 * Phase 0: name the distinct locations of the filtered samples, in
 * (binary, offset) order, whichever way they were found, so that symbols
 * tied in a ranking come in the same order.
 */
static int name_locations(struct build *b)
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
			 res.binary ? path_base(res.binary) : "[unknown]");
		si = sym_intern(b, name);
		if (o->symbol && res.symbol && !strcmp(res.symbol, o->symbol)) {
			b->sym[si].match = 1;
			nmatch++;
		}
		ARRAY_GROW(b->locsym, b->caploc, b->nloc + 1);
		b->locsym[b->nloc] = si;
		*hmap_put(&b->locs, locs[i].bin, locs[i].off, b->nloc, &added) = b->nloc;
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
	size_t *li = hmap_find(&b->locs, bin, off);
	size_t si;

	if (!li)
		return -1;	/* not seen in phase 0: a row added since */
	si = b->locsym[*li];
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
static int key_totals(struct build *b)
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
			size_t *ei = hmap_put(&b->keys, key, (uint64_t)start, b->nent, &added);

			if (added) {
				ARRAY_GROW(b->ent, b->capent, b->nent + 1);
				memset(&b->ent[b->nent], 0, sizeof(b->ent[0]));
				b->ent[b->nent].tk.key = key;
				b->ent[b->nent].tk.start = start;
				b->ent[b->nent].tk.group = -1;
				b->nent++;
			}
			last_key = key;
			last_start = start;
			last_ent = *ei;
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

				ent_free_buckets(b);	/* phase 2 reads them */
				if (p)	/* progress_plan() counted one scan */
					progress_total(p, p->total + b->pass_rows);
				memset(t->all.v, 0, kbytes);
				memset(t->all.total, 0, sizeof(t->all.total));
			} else {
				k->v = xcalloc(t->nbuckets * (size_t)nv, sizeof(double));
			}
		}
		if (b->onepass)
			add_row(t, &r, k->v);
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
static void cgroup_note(struct timeline *t, const struct cgset *cs)
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
static void key_name(void *ctx, const struct timeline_key *k, char *buf, size_t len)
{
	group_name(ctx, (const struct keyent *)k, buf, len);
}

/* Phase 2: the buckets. */
static int fill(struct build *b)
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
		size_t *ei;

		if (skip)
			continue;
		if (b->o->by != TL_BY_NONE && (ei = hmap_find(&b->keys, key, (uint64_t)start)) &&
		    b->ent[*ei].tk.group >= 0)
			g = &t->groups[b->ent[*ei].tk.group];
		add_row(t, &r, g ? g->v : NULL);
	}
	tsrc_close(&src);
	if (rc < 0)
		return -1;
	t->samples = t->all.total[TL_SAMPLES];
	return 0;
}

/* ---- lost intervals ---- */

struct lostrow {
	int cpu;
	int64_t time, prev, next;
	uint64_t count;
	int throttle;
};

static int lostrow_cmp(const void *pa, const void *pb)
{
	const struct lostrow *a = pa, *c = pb;

	if (a->cpu != c->cpu)
		return a->cpu < c->cpu ? -1 : 1;
	return a->time < c->time ? -1 : a->time > c->time;
}

static int span_cmp(const void *pa, const void *pb)
{
	const struct timeline_span *a = pa, *c = pb;

	return a->from_ns < c->from_ns ? -1 : a->from_ns > c->from_ns;
}

/*
 * Each lost row's gap on its CPU: prev = the latest sample at or before
 * it, next = the earliest sample after it.  One pass over the session's
 * (cpu, time) pairs in any order: a sample is a candidate prev of the
 * first lost row at or after it on its CPU and a candidate next of the
 * last lost row before it; the candidates are then carried forward (prev)
 * and backward (next) along each CPU's rows.
 */
/* Merge the overlapping or touching spans of sp[0..n), sorted by start,
 * adding their counts; returns how many are left. */
static size_t spans_merge(struct timeline_span *sp, size_t n)
{
	size_t i, j;

	for (i = 0, j = 0; i < n; i++) {
		if (j && sp[i].from_ns <= sp[j - 1].to_ns) {
			sp[j - 1].to_ns = MAX(sp[j - 1].to_ns, sp[i].to_ns);
			sp[j - 1].count += sp[i].count;
		} else {
			sp[j++] = sp[i];
		}
	}
	return j;
}

static int lost_spans(struct build *b)
{
	struct timeline *t = b->t;
	struct lostrow *rows = NULL;
	size_t nrows = 0, cap = 0, i;
	struct sample_scan_filter sf = { 0 };
	struct sample_scan *sc;
	const struct sample_scan_row *row;
	struct event_filter ef;
	struct lost_scan *ls;
	struct db_lost l;
	int rc;

	event_filter_all(&ef, t->session.id);
	ls = lost_scan_open(b->db, &ef, b->e);
	if (!ls)
		return -1;
	while ((rc = lost_scan_next(ls, &l, b->e)) == 1) {
		ARRAY_GROW(rows, cap, nrows + 1);
		rows[nrows].cpu = l.cpu;
		rows[nrows].time = l.time_ns;
		rows[nrows].throttle = !strcmp(l.kind, "throttle");
		rows[nrows].count = rows[nrows].throttle ? 0 : l.count;
		rows[nrows].prev = INT64_MIN;
		rows[nrows].next = INT64_MAX;
		nrows++;
	}
	lost_scan_close(ls);
	if (rc < 0) {
		free(rows);
		return -1;
	}
	if (!nrows)
		return 0;
	qsort(rows, nrows, sizeof(*rows), lostrow_cmp);

	sf.session_id = t->session.id;
	sf.cols = 1u << SB_CPU | 1u << SB_TIME_NS;
	sample_scan_range(&t->session, &sf.row_lo, &sf.row_hi);
	sc = sample_scan_open(b->db, &sf, b->e);
	if (!sc) {
		free(rows);
		return -1;
	}
	while ((rc = sample_scan_next(sc, &row, b->e)) == 1) {
		int cpu = (int)row->r->v[SB_CPU];
		int64_t time = row->r->v[SB_TIME_NS];
		size_t lo = 0, hi = nrows;

		/* first row with (cpu, time) >= (cpu, sample time) */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (rows[mid].cpu < cpu || (rows[mid].cpu == cpu && rows[mid].time < time))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nrows && rows[lo].cpu == cpu && time > rows[lo].prev)
			rows[lo].prev = time;
		if (lo > 0 && rows[lo - 1].cpu == cpu && time < rows[lo - 1].next)
			rows[lo - 1].next = time;
	}
	sample_scan_close(sc);
	if (rc < 0) {
		free(rows);
		return -1;
	}
	for (i = 1; i < nrows; i++)
		if (rows[i].cpu == rows[i - 1].cpu && rows[i - 1].prev > rows[i].prev)
			rows[i].prev = rows[i - 1].prev;
	for (i = nrows - 1; i > 0; i--)
		if (rows[i].cpu == rows[i - 1].cpu && rows[i].next < rows[i - 1].next)
			rows[i - 1].next = rows[i].next;

	t->lost = xcalloc(nrows, sizeof(*t->lost));
	for (i = 0; i < nrows; i++) {
		int64_t from = rows[i].prev == INT64_MIN ? rows[i].time : rows[i].prev;
		int64_t to = rows[i].next == INT64_MAX ? t->to_ns : rows[i].next;
		struct timeline_span *sp;

		if (to < rows[i].time)
			to = rows[i].time;
		if (to < t->from_ns || from > t->to_ns)
			continue;
		from = MAX(from, t->from_ns);
		to = MIN(to, t->to_ns);
		/* widen to the buckets it touches */
		from = t->from_ns + (from - t->from_ns) / t->bucket_ns * t->bucket_ns;
		to = t->from_ns + ((to - t->from_ns) / t->bucket_ns + 1) * t->bucket_ns;
		to = MIN(to, t->from_ns + (int64_t)t->nbuckets * t->bucket_ns);
		sp = &t->lost[t->nlost++];
		sp->from_ns = from;
		sp->to_ns = to;
		sp->count = rows[i].count;
		t->lost_total += rows[i].count;
		t->throttles += rows[i].throttle;
	}
	free(rows);
	qsort(t->lost, t->nlost, sizeof(*t->lost), span_cmp);
	t->nlost = spans_merge(t->lost, t->nlost);
	return 0;
}

/*
 * Where a CPU's sampling group was enabled but not counting (table
 * unscheduled): each row's interval, clipped to the range and widened to
 * the buckets it touches, overlapping ones merged.  Their count is the
 * time not counting, in ns.
 */
static int unsched_spans(struct build *b)
{
	struct timeline *t = b->t;
	size_t cap = 0;
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db_sqlite(b->db), "SELECT start_ns,end_ns,enabled_ns-running_ns "
			       "FROM unscheduled WHERE session_id=?1 AND end_ns>=?2 AND "
			       "start_ns<=?3 ORDER BY start_ns", -1, &st, NULL))
		return sql_fail(b, "reading when sampling groups did not count");
	sqlite3_bind_int64(st, 1, t->session.id);
	sqlite3_bind_int64(st, 2, t->from_ns);
	sqlite3_bind_int64(st, 3, t->to_ns);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t from = MAX(sqlite3_column_int64(st, 0), t->from_ns);
		int64_t to = MIN(sqlite3_column_int64(st, 1), t->to_ns);
		struct timeline_span *sp;

		from = t->from_ns + (from - t->from_ns) / t->bucket_ns * t->bucket_ns;
		to = t->from_ns + ((to - t->from_ns) / t->bucket_ns + 1) * t->bucket_ns;
		to = MIN(to, t->from_ns + (int64_t)t->nbuckets * t->bucket_ns);
		ARRAY_GROW(t->unsched, cap, t->nunsched + 1);
		sp = &t->unsched[t->nunsched++];
		sp->from_ns = from;
		sp->to_ns = to;
		sp->count = (uint64_t)sqlite3_column_int64(st, 2);
		t->unsched_ns += sp->count;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_fail(b, "reading when sampling groups did not count");
	t->nunsched = spans_merge(t->unsched, t->nunsched);
	return 0;
}

/* ---- markers ---- */

#define TL_MAX_MARKERS 10000

static int markers(struct build *b)
{
	struct timeline *t = b->t;
	struct event_filter ef;
	struct marker_scan *sc;
	struct db_marker dm;
	size_t cap = 0;
	int rc;

	event_filter_all(&ef, t->session.id);
	ef.time_lo = t->from_ns;
	ef.time_hi = t->to_ns;
	ef.limit = TL_MAX_MARKERS + 1;
	sc = marker_scan_open(b->db, &ef, b->e);
	if (!sc)
		return -1;
	while ((rc = marker_scan_next(sc, &dm, b->e)) == 1) {
		struct timeline_marker *m;

		if (t->nmarkers == TL_MAX_MARKERS) {
			snprintf(t->note, sizeof(t->note), "only the first %d markers of the "
				 "range are drawn", TL_MAX_MARKERS);
			break;
		}
		ARRAY_GROW(t->markers, cap, t->nmarkers + 1);
		m = &t->markers[t->nmarkers++];
		m->time_ns = (int64_t)dm.time_ns;
		snprintf(m->kind, sizeof(m->kind), "%s", dm.kind);
		snprintf(m->name, sizeof(m->name), "%s", dm.name);
		snprintf(m->args, sizeof(m->args), "%s", dm.args ? dm.args : "");
	}
	marker_scan_close(sc);
	return rc < 0 ? -1 : 0;
}

/* ---- the whole ---- */

/* What timeline_build gathered on the way, once it is done or failed. */
static void build_free(struct build *b)
{
	db_set_progress(b->db, NULL);
	procset_free(&b->procs);
	procset_free(&b->all);
	cgset_free(&b->cgs);
	free(b->bins);
	free(b->filt.s);
	hmap_free(&b->locs);
	hmap_free(&b->symidx);
	hmap_free(&b->keys);
	for (size_t i = 0; i < b->nsym; i++)
		free(b->sym[i].name);
	free(b->sym);
	free(b->locsym);
	ent_free_buckets(b);
	free(b->ent);
}

/* A count session's values, summed per bucket: each interval's count in
 * the bucket of the interval's end. */
struct count_fill {
	struct timeline *t;
	int64_t start_ns;
	uint64_t n;
};

static void count_value(void *ctx, int64_t t_ns, int idx, double value)
{
	struct count_fill *f = ctx;
	struct timeline *t = f->t;
	int64_t at = f->start_ns + t_ns;
	size_t b;

	if (at <= t->from_ns || at > t->to_ns || idx < 0 || 1 + idx >= t->nv)
		return;
	b = (size_t)((at - 1 - t->from_ns) / t->bucket_ns);
	if (b >= t->nbuckets)
		return;
	t->all.v[b * (size_t)t->nv + 1 + (size_t)idx] += value;
	t->all.total[1 + idx] += (uint64_t)(value + 0.5);
	f->n++;
}

/*
 * A count session ('strobe count --save', backend 'count'): no samples,
 * only its events' counts per interval (countstore.h); no split and no
 * filter, which need samples.
 */
static int count_timeline(struct db *db, const struct timeline_opts *o, struct timeline *t,
			  struct error *e)
{
	const struct db_session *s = &t->session;
	int64_t end = s->end_ns > s->start_ns ? s->end_ns : s->start_ns + 1;
	struct count_fill f = { t, s->start_ns, 0 };

	if (o->by != TL_BY_NONE || o->pid >= 0 || o->comm || o->binary || o->symbol || o->cgroup)
		return error_set(e, "session %lld is a count session ('strobe count --save'): it "
				 "has counts, not samples, so no --by and no process, binary, "
				 "symbol or cgroup filter", (long long)s->id);
	t->from_ns = s->start_ns + (o->has_from ? o->from_ns : 0);
	t->to_ns = o->has_to ? MIN(s->start_ns + o->to_ns, end) : end;
	if (t->to_ns <= t->from_ns)
		return error_set(e, "empty time range in count session %lld (%.3f s long)",
				 (long long)s->id, (end - s->start_ns) / 1e9);
	t->bucket_ns = o->bucket_ns > 0 ? o->bucket_ns :
		       timeline_default_bucket(t->to_ns - t->from_ns);
	t->nbuckets = timeline_bucket_count(t->to_ns - t->from_ns, t->bucket_ns);
	if (t->nbuckets > TL_MAX_BUCKETS)
		return error_set(e, "too many buckets (%zu, at most %d): give a bigger --bucket",
				 t->nbuckets, TL_MAX_BUCKETS);
	t->all.v = xcalloc(t->nbuckets * (size_t)t->nv, sizeof(double));
	snprintf(t->all.name, sizeof(t->all.name), "all");
	if (countstore_each(db, s->id, count_value, &f, e) < 0)
		return -1;
	if (!f.n)
		return error_set(e, "count session %lld has no counts in this range",
				 (long long)s->id);
	snprintf(t->note, sizeof(t->note), "count session: each interval's count is in the "
		 "bucket of its end");
	return 0;
}

void timeline_filters_text(const struct timeline_opts *o, int pid_at, struct sbuf *b)
{
	size_t n0 = b->n;

	if (o->pid >= 0)
		sbuf_addf(b, "pid %lld", (long long)o->pid);
	if (o->pid >= 0 && pid_at && o->has_pid_at)
		sbuf_addf(b, " at %.9g s", o->pid_at_ns / 1e9);
	if (o->comm)
		sbuf_addf(b, "%scomm %s", b->n > n0 ? ", " : "", o->comm);
	if (o->binary)
		sbuf_addf(b, "%sbinary %s", b->n > n0 ? ", " : "", o->binary);
	if (o->symbol)
		sbuf_addf(b, "%ssymbol %s", b->n > n0 ? ", " : "", o->symbol);
	if (o->cgroup)
		sbuf_addf(b, "%scgroup %s", b->n > n0 ? ", " : "", o->cgroup);
}

int timeline_no_samples(const struct timeline *t, const struct timeline_opts *o,
			int64_t start_ns, const char *what, struct error *e)
{
	struct sbuf f = { 0 };

	timeline_filters_text(o, 0, &f);
	error_set(e, "no samples between %.9g s and %.9g s of %s%s%s%s",
		  (t->from_ns - start_ns) / 1e9, (t->to_ns - start_ns) / 1e9, what,
		  f.n ? " with these filters (" : "", f.n ? f.s : "", f.n ? ")" : "");
	free(f.s);
	return -1;
}

int timeline_range(struct timeline *t, const struct timeline_opts *o, int64_t start_ns,
		   int64_t end, const char *what, struct error *e)
{
	t->from_ns = start_ns + (o->has_from ? o->from_ns : 0);
	t->to_ns = o->has_to ? MIN(start_ns + o->to_ns, end) : end;
	if (t->from_ns >= end)
		return error_set(e, "empty time range: %s%.9g s is at or after the end of %s "
				 "(%.3f s long)", o->has_from ? "--from " : "",
				 (t->from_ns - start_ns) / 1e9, what, (end - start_ns) / 1e9);
	if (t->to_ns <= t->from_ns)
		return error_set(e, "empty time range: from %.9g s to %.9g s: give --to after "
				 "--from", (t->from_ns - start_ns) / 1e9,
				 (t->to_ns - start_ns) / 1e9);
	t->bucket_ns = o->bucket_ns > 0 ? o->bucket_ns :
		       timeline_default_bucket(t->to_ns - t->from_ns);
	t->nbuckets = timeline_bucket_count(t->to_ns - t->from_ns, t->bucket_ns);
	if (t->nbuckets > TL_MAX_BUCKETS)
		return error_set(e, "buckets of %.9g ms over %.9g s make %zu buckets, more "
				 "than %d: give a bigger --bucket", t->bucket_ns / 1e6,
				 (t->to_ns - t->from_ns) / 1e9, t->nbuckets, TL_MAX_BUCKETS);
	t->all.v = xcalloc(t->nbuckets * (size_t)t->nv, sizeof(double));
	snprintf(t->all.name, sizeof(t->all.name), "all");
	return 0;
}

struct timeline *timeline_build(struct db *db, const struct timeline_opts *o,
				struct error *e)
{
	struct timeline *t = xcalloc(1, sizeof(*t));
	struct build b = { .db = db, .o = o, .t = t, .e = e };
	int64_t end = 0;
	char what[64];
	const struct db_session *s = &t->session;

	if (db_session_get(db, o->session, &t->session, e) < 0)
		goto fail;
	t->nv = 1 + s->nr_events;
	if (!strcmp(s->backend, "count")) {
		if (count_timeline(db, o, t, e) < 0)
			goto fail;
		return t;
	}
	if (s->first_sample <= 0) {
		error_set(e, "session %lld has no samples", (long long)s->id);
		goto fail;
	}
	t->key_noun = o->by == TL_BY_CPU ? "CPUs" : o->by == TL_BY_PID ? "processes" :
		      o->by == TL_BY_BINARY ? "binaries" : o->by == TL_BY_CGROUP ? "cgroups" :
		      "symbols";
	if (session_end(&b, &end) < 0)
		goto fail;
	snprintf(what, sizeof(what), "session %lld", (long long)s->id);
	if (timeline_range(t, o, s->start_ns, end, what, e) < 0)
		goto fail;
	if (make_where(&b) < 0)
		goto fail;
	/* pid reuse: the processes of --pid's pid, or for --by pid of every
	 * pid that was several */
	if (o->pid >= 0 || o->by == TL_BY_PID) {
		if (procset_load(db, s, o->pid, &b.procs, e) < 0)
			goto fail;
		if (o->pid >= 0 && o->has_pid_at) {
			if (!b.procs.n) {
				error_set(e, "--pid %lld@%.9g: no process with pid %lld is recorded "
					  "in session %lld: give --pid %lld", (long long)o->pid,
					  o->pid_at_ns / 1e9, (long long)o->pid, (long long)s->id,
					  (long long)o->pid);
				goto fail;
			}
			b.sel = procset_at(&b.procs, o->pid,
					   s->start_ns + o->pid_at_ns + o->pid_at_slack_ns);
		}
	}
	if (o->cgroup || o->by == TL_BY_CGROUP) {
		if (cgset_load(db, s->id, &b.cgs, e) < 0 ||
		    procset_load(db, s, PROCSET_ALL, &b.all, e) < 0)
			goto fail;
		b.cg = 1;
		cgroup_note(t, &b.cgs);
	}
	b.need_locs = o->by == TL_BY_SYMBOL || o->symbol;
	b.summed = time_sums_usable(&b);
	if (b.summed < 0)
		goto fail;
	t->summed = b.summed;
	if (o->progress && progress_plan(&b) < 0)
		goto fail;
	if (b.need_locs && name_locations(&b) < 0)
		goto fail;
	if (o->by != TL_BY_NONE) {
		if (key_totals(&b) < 0)
			goto fail;
		timeline_rank_keys(b.t, b.o, b.ent, b.nent, sizeof(*b.ent), key_name, &b);
	}
	if (fill(&b) < 0)
		goto fail;
	if (!t->samples) {
		char what[48];

		snprintf(what, sizeof(what), "session %lld", (long long)s->id);
		timeline_no_samples(t, o, s->start_ns, what, e);
		goto fail;
	}
	if (lost_spans(&b) < 0 || unsched_spans(&b) < 0 || markers(&b) < 0)
		goto fail;
	build_free(&b);
	return t;
fail:
	build_free(&b);
	timeline_free(t);
	return NULL;
}

void timeline_free(struct timeline *t)
{
	if (!t)
		return;
	free(t->all.v);
	for (size_t i = 0; i < t->ngroups; i++)
		free(t->groups[i].v);
	free(t->groups);
	free(t->lost);
	free(t->unsched);
	free(t->markers);
	free(t);
}
