/*
 * push.c - sessions from SQLite to ClickHouse in idempotent batches:
 * push.h, doc/FLEET.md.
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sqlite3.h>
#include <xxhash.h>
#include "chclient.h"
#include "db.h"
#include "otable.h"
#include "progress.h"
#include "push.h"
#include "resolve.h"
#include "samplescan.h"
#include "symworker.h"

#define NS_PER_DAY	(86400LL * 1000000000LL)

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	sbuf_add(b, s, n);
}

/* v in decimal at the end of tmp[24], then sep unless it is 0: the
 * start.  By hand: snprintf was 40% of a push's CPU time (bench/push.sh) */
static char *fmt_u64(char tmp[24], uint64_t v, char sep)
{
	char *p = tmp + 24;

	if (sep)
		*--p = sep;
	do {
		*--p = '0' + v % 10;
		v /= 10;
	} while (v);
	return p;
}

static void sb_u64(struct sbuf *b, uint64_t v, char sep)
{
	char tmp[24], *p = fmt_u64(tmp, v, sep);

	sb_put(b, p, tmp + sizeof(tmp) - p);
}

static void sb_i64(struct sbuf *b, int64_t v, char sep)
{
	char tmp[24], *p = fmt_u64(tmp, v < 0 ? -(uint64_t)v : (uint64_t)v, sep);

	if (v < 0)
		*--p = '-';
	sb_put(b, p, tmp + sizeof(tmp) - p);
}

void push_tsv_escape(struct sbuf *b, const char *s)
{
	if (!s)
		s = "";
	for (const char *p = s; *p; ) {
		size_t n = strcspn(p, "\\\t\n\r\b\f'");

		sb_put(b, p, n);
		p += n;
		if (!*p)
			break;
		switch (*p) {
		case '\\': sb_put(b, "\\\\", 2); break;
		case '\t': sb_put(b, "\\t", 2); break;
		case '\n': sb_put(b, "\\n", 2); break;
		case '\r': sb_put(b, "\\r", 2); break;
		case '\b': sb_put(b, "\\b", 2); break;
		case '\f': sb_put(b, "\\f", 2); break;
		case '\'': sb_put(b, "\\'", 2); break;
		}
		p++;
	}
	if (!b->s)
		sb_put(b, "", 0);
}

void push_sql_quote(struct sbuf *b, const char *s)
{
	sb_put(b, "'", 1);
	push_tsv_escape(b, s);
	sb_put(b, "'", 1);
}

int64_t push_day(int64_t wall_ns)
{
	int64_t d = wall_ns / NS_PER_DAY;

	if (wall_ns % NS_PER_DAY < 0)
		d--;
	return d;
}

void push_day_str(int64_t day, char out[11])
{
	/* days since 1970-01-01 to a civil date (proleptic Gregorian) */
	int64_t z = day + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153, dd = doy - (153 * mp + 2) / 5 + 1;
	int64_t m = mp < 10 ? mp + 3 : mp - 9;

	if (m <= 2)
		y++;
	if (y < 1970)		/* ClickHouse's Date starts there */
		y = 1970, m = 1, dd = 1;
	if (y > 2105)
		y = 2105, m = 12, dd = 31;
	snprintf(out, 11, "%04d-%02d-%02d", (int)y, (int)m, (int)dd);
}

void push_batcher_init(struct push_batcher *b, size_t max, uint32_t first)
{
	memset(b, 0, sizeof(*b));
	b->max = max ? max : 1;
	b->batch = first;
}

int push_batcher_row(struct push_batcher *b, int64_t day)
{
	int cut = b->rows > 0 && (b->rows >= b->max || day != b->day);

	if (cut) {
		b->batch++;
		b->rows = 0;
	}
	b->day = day;
	b->rows++;
	return cut;
}

int push_batcher_end(struct push_batcher *b)
{
	if (!b->rows)
		return 0;
	b->batch++;
	b->rows = 0;
	return 1;
}

int64_t push_bucket_ns(int64_t t)
{
	int64_t r = t % PUSH_BUCKET_NS;

	return t - (r < 0 ? r + PUSH_BUCKET_NS : r);
}

int push_parse_batches(const char *text, uint8_t *have, size_t n)
{
	const char *p = text ? text : "";

	while (*p) {
		uint64_t v = 0;
		const char *q = p;

		while (*q >= '0' && *q <= '9') {
			if (v > UINT32_MAX)
				return -1;
			v = v * 10 + (*q++ - '0');
		}
		if (q == p || (*q && *q != '\n') || v >= n)
			return -1;
		have[v] = 1;
		p = *q ? q + 1 : q;
	}
	return 0;
}

/* --- generating a session's rows --- */

struct loc {			/* a sampled location, its names */
	int64_t binary_id;
	uint64_t offset;
	const char *key, *binary, *symbol;
};

/* The aggregates of schema 2, summed from the samples as they are read:
 * per location (samples_by_loc) and per 100 ms (samples_by_time), each of
 * one UTC day.  Keys without padding (otable.h). */
struct agg_sums {
	int64_t n, period, c[STROBE_MAX_COUNTERS];
};

struct agg_loc {
	int64_t day, binary_id, offset, pid, comm_id, flags;
	struct agg_sums x;
	const char *key;		/* binary_key: the resolver's */
};
#define AGG_LOC_KEY	(6 * sizeof(int64_t))

struct agg_time {
	int64_t day, bucket_ns, cpu, pid, binary_id;
	struct agg_sums x;
};
#define AGG_TIME_KEY	(5 * sizeof(int64_t))

struct gen;
/* A batch ready: rows of table (cols) as TSV.  0 or -1 with e set. */
typedef int (*emit_fn)(struct gen *g, uint32_t batch, const char *table, const char *cols,
		       const struct sbuf *rows, size_t nrows, struct error *e);

struct gen {
	struct db *db;
	const struct db_session *s;
	const char *host;
	int64_t start_day;
	size_t batch_rows;		/* this session's */
	size_t default_rows;		/* a new session's */
	struct resolver *res;
	struct symworker *worker;	/* o->parse_in_worker; NULL: parse here */
	char **comms;			/* by comms.id */
	size_t ncomms;
	struct otable locs;		/* struct loc */
	struct otable by_loc;		/* struct agg_loc: samples_by_loc */
	struct otable by_time;		/* struct agg_time: samples_by_time */
	emit_fn emit;
	struct progress *progress;
	/* pass 1 */
	XXH3_state_t *hash;		/* of the session (NULL: not hashed) */
	XXH3_state_t *phash;		/* of the part being made */
	uint64_t part_samples;		/* its sample rows */
	uint32_t nbatches;		/* counting batch 0: the end of the plan */
	/* pass 2 */
	struct chclient *c;
	const uint8_t *have;
	uint64_t sent, rows_sent;
	int running;			/* pushing an interval of a running session */
};

/* the batch being filled */
struct bb {
	struct push_batcher b;
	struct sbuf rows;
	const char *table, *cols;
};

static int bb_flush(struct gen *g, struct bb *x, uint32_t batch, struct error *e)
{
	int ret = g->emit(g, batch, x->table, x->cols, &x->rows, 0, e);

	x->rows.n = 0;
	if (x->rows.s)
		x->rows.s[0] = 0;
	return ret;
}

/* start a row of day: the prefix host, session, batch, day */
static int bb_row(struct gen *g, struct bb *x, int64_t day, struct error *e)
{
	char ds[11];
	uint32_t before = x->b.batch;

	if (push_batcher_row(&x->b, day) && bb_flush(g, x, before, e) < 0)
		return -1;
	push_tsv_escape(&x->rows, g->host);
	sb_put(&x->rows, "\t", 1);
	sb_i64(&x->rows, g->s->id, '\t');
	sb_u64(&x->rows, x->b.batch, '\t');
	push_day_str(day, ds);
	sb_put(&x->rows, ds, 10);
	sb_put(&x->rows, "\t", 1);
	return 0;
}

static int bb_end(struct gen *g, struct bb *x, struct error *e)
{
	uint32_t before = x->b.batch;

	if (push_batcher_end(&x->b))
		return bb_flush(g, x, before, e);
	return 0;
}

static void bb_start(struct bb *x, struct push_batcher *prev, size_t max, const char *table,
		     const char *cols)
{
	push_batcher_init(&x->b, max, prev ? prev->batch : 1);
	x->table = table;
	x->cols = cols;
}

#define PREFIX	"host, session, batch, day, "

static int64_t col_i64(sqlite3_stmt *st, int i, int64_t null)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? null : sqlite3_column_int64(st, i);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	const char *t = (const char *)sqlite3_column_text(st, i);

	return t ? t : "";
}

static int gen_processes(struct gen *g, struct bb *x, struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db_sqlite(g->db),
			       "SELECT p.pid, p.ppid, c.name, p.start_ns, p.exit_ns FROM processes p "
			       "LEFT JOIN comms c ON c.id = p.comm_id WHERE p.session_id = ? "
			       "ORDER BY p.pid, p.start_ns", -1, &st, NULL) != SQLITE_OK)
		return db_sql_error(g->db, e, "reading processes");
	sqlite3_bind_int64(st, 1, g->s->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (bb_row(g, x, g->start_day, e) < 0)
			goto fail;
		sb_i64(&x->rows, sqlite3_column_int64(st, 0), '\t');
		sb_i64(&x->rows, col_i64(st, 1, -1), '\t');
		push_tsv_escape(&x->rows, col_text(st, 2));
		sb_put(&x->rows, "\t", 1);
		sb_i64(&x->rows, col_i64(st, 3, -1), '\t');
		sb_i64(&x->rows, col_i64(st, 4, -1), '\n');
	}
	if (rc != SQLITE_DONE) {
		db_sql_error(g->db, e, "reading processes");
		goto fail;
	}
	sqlite3_finalize(st);
	return bb_end(g, x, e);
fail:
	sqlite3_finalize(st);
	return -1;
}

static int gen_markers(struct gen *g, struct bb *x, struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db_sqlite(g->db),
			       "SELECT time_ns, cpu, pid, tid, kind, name, args FROM markers "
			       "WHERE session_id = ? ORDER BY time_ns, rowid", -1, &st, NULL) != SQLITE_OK)
		return db_sql_error(g->db, e, "reading markers");
	sqlite3_bind_int64(st, 1, g->s->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t t = sqlite3_column_int64(st, 0);

		if (bb_row(g, x, push_day(t + g->s->wall_offset_ns), e) < 0)
			goto fail;
		sb_i64(&x->rows, t, '\t');
		sb_i64(&x->rows, col_i64(st, 1, -1), '\t');
		sb_i64(&x->rows, col_i64(st, 2, 0), '\t');
		sb_i64(&x->rows, col_i64(st, 3, 0), '\t');
		for (int i = 4; i < 7; i++) {
			push_tsv_escape(&x->rows, col_text(st, i));
			sb_put(&x->rows, i < 6 ? "\t" : "\n", 1);
		}
	}
	if (rc != SQLITE_DONE) {
		db_sql_error(g->db, e, "reading markers");
		goto fail;
	}
	sqlite3_finalize(st);
	return bb_end(g, x, e);
fail:
	sqlite3_finalize(st);
	return -1;
}

static int gen_lost(struct gen *g, struct bb *x, struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db_sqlite(g->db),
			       "SELECT time_ns, cpu, count, kind FROM lost WHERE session_id = ? "
			       "ORDER BY time_ns, cpu, rowid", -1, &st, NULL) != SQLITE_OK)
		return db_sql_error(g->db, e, "reading lost records");
	sqlite3_bind_int64(st, 1, g->s->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t t = sqlite3_column_int64(st, 0);

		if (bb_row(g, x, push_day(t + g->s->wall_offset_ns), e) < 0)
			goto fail;
		sb_i64(&x->rows, t, '\t');
		sb_i64(&x->rows, sqlite3_column_int64(st, 1), '\t');
		sb_i64(&x->rows, sqlite3_column_int64(st, 2), '\t');
		push_tsv_escape(&x->rows, col_text(st, 3));
		sb_put(&x->rows, "\n", 1);
	}
	if (rc != SQLITE_DONE) {
		db_sql_error(g->db, e, "reading lost records");
		goto fail;
	}
	sqlite3_finalize(st);
	return bb_end(g, x, e);
fail:
	sqlite3_finalize(st);
	return -1;
}

static int load_comms(struct gen *g, struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db_sqlite(g->db), "SELECT id, name FROM comms ORDER BY id", -1, &st,
			       NULL) != SQLITE_OK)
		return db_sql_error(g->db, e, "reading comms");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);

		if (id < 0 || id > 100000000) {
			sqlite3_finalize(st);
			return error_set(e, "comms.id %" PRId64 " out of range: a corrupt database", id);
		}
		if ((size_t)id >= g->ncomms) {
			size_t n = g->ncomms ? g->ncomms : 256;

			while (n <= (size_t)id)
				n *= 2;
			g->comms = xrealloc(g->comms, n * sizeof(*g->comms));
			memset(g->comms + g->ncomms, 0, (n - g->ncomms) * sizeof(*g->comms));
			g->ncomms = n;
		}
		free(g->comms[id]);
		g->comms[id] = strdup(col_text(st, 1));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_sql_error(g->db, e, "reading comms");
	return 0;
}

static void agg_sums_add(struct agg_sums *a, const int64_t *v)
{
	a->n++;
	a->period += v[SB_PERIOD];
	for (int i = 0; i < STROBE_MAX_COUNTERS; i++)
		a->c[i] += v[SB_C0 + i];
}

/* a sample (v) of location l on day into the aggregates; comm -1: none */
static void agg_add(struct gen *g, int64_t day, const struct loc *l, const int64_t *v,
		    int64_t comm)
{
	struct agg_loc kl, *al;
	struct agg_time kt, *at;
	int64_t t = v[SB_TIME_NS];
	int added;

	memset(&kl, 0, sizeof(kl));
	kl.day = day;
	kl.binary_id = l->binary_id;
	kl.offset = (int64_t)l->offset;
	kl.pid = v[SB_PID];
	kl.comm_id = comm;
	kl.flags = v[SB_FLAGS];
	al = otable_get(&g->by_loc, &kl, &added);
	al->key = l->key;
	agg_sums_add(&al->x, v);
	memset(&kt, 0, sizeof(kt));
	kt.day = day;
	kt.bucket_ns = push_bucket_ns(t - g->s->start_ns);
	kt.cpu = v[SB_CPU];
	kt.pid = v[SB_PID];
	kt.binary_id = l->binary_id;
	at = otable_get(&g->by_time, &kt, &added);
	agg_sums_add(&at->x, v);
}

/* the samples with rowids lo..hi */
static int gen_samples(struct gen *g, struct bb *x, int64_t lo, int64_t hi, struct error *e)
{
	struct sample_scan_filter f = { 0 };
	const struct sample_scan_row *row;
	struct sample_scan *sc;
	int rc;

	if (lo > hi)
		return bb_end(g, x, e);
	f.session_id = g->s->id;
	f.row_lo = lo;
	f.row_hi = hi;
	sc = sample_scan_open(g->db, &f, e);
	if (!sc)
		return -1;
	while ((rc = sample_scan_next(sc, &row, e)) == 1) {
		const struct sampleblk_row *r = row->r;
		const int64_t *v = r->v;
		struct loc key, *l;
		int added;
		int64_t comm = v[SB_COMM_ID], day;

		memset(&key, 0, sizeof(key));
		key.binary_id = (r->null & (1u << SB_BINARY_ID)) ? 0 : v[SB_BINARY_ID];
		key.offset = (r->null & (1u << SB_OFFSET)) ? 0 : (uint64_t)v[SB_OFFSET];
		l = otable_get(&g->locs, &key, &added);
		if (added) {
			struct resolved rs;

			/* named in send_symbols, those the fleet lacks */
			resolver_binary(g->res, l->binary_id, &rs);
			l->key = rs.key;
			l->binary = rs.binary;
			l->symbol = NULL;
		}
		day = push_day(v[SB_TIME_NS] + g->s->wall_offset_ns);
		agg_add(g, day, l, v, (r->null & (1u << SB_COMM_ID)) || comm < 0 ||
			(size_t)comm >= g->ncomms ? -1 : comm);
		if (bb_row(g, x, day, e) < 0)
			goto fail;
		sb_i64(&x->rows, v[SB_TIME_NS], '\t');
		sb_i64(&x->rows, v[SB_TSC], '\t');
		sb_i64(&x->rows, v[SB_CPU], '\t');
		sb_i64(&x->rows, v[SB_PID], '\t');
		sb_i64(&x->rows, v[SB_TID], '\t');
		push_tsv_escape(&x->rows, (r->null & (1u << SB_COMM_ID)) || comm < 0 ||
				(size_t)comm >= g->ncomms ? "" : g->comms[comm]);
		sb_put(&x->rows, "\t", 1);
		sb_i64(&x->rows, l->binary_id, '\t');
		push_tsv_escape(&x->rows, l->key);
		sb_put(&x->rows, "\t", 1);
		sb_u64(&x->rows, l->offset, '\t');
		sb_i64(&x->rows, v[SB_FLAGS], '\t');
		sb_i64(&x->rows, v[SB_PERIOD], '\t');
		for (int i = SB_C0; i <= SB_C7; i++)
			sb_i64(&x->rows, v[i], i < SB_C7 ? '\t' : '\n');
		g->part_samples++;
		progress_add(g->progress, 1);
	}
	if (rc < 0)
		goto fail;
	sample_scan_close(sc);
	return bb_end(g, x, e);
fail:
	sample_scan_close(sc);
	return -1;
}

struct bin {
	int64_t id;
	const char *name;
};

static int cmp_bin(const void *a, const void *b)
{
	int64_t x = ((const struct bin *)a)->id, y = ((const struct bin *)b)->id;

	return x < y ? -1 : x > y;
}

/* the binaries of the sampled locations */
static int gen_binaries(struct gen *g, struct bb *x, struct error *e)
{
	struct bin *bins = xmalloc((g->locs.nr + 1) * sizeof(*bins));
	size_t n = 0;
	sqlite3_stmt *st;
	int rc;

	for (struct loc *l = NULL; (l = otable_next(&g->locs, l));) {
		bins[n].id = l->binary_id;
		bins[n++].name = l->binary;
	}
	qsort(bins, n, sizeof(*bins), cmp_bin);
	if (sqlite3_prepare_v2(db_sqlite(g->db), "SELECT key, path, problem FROM binaries "
			       "WHERE id = ?", -1, &st, NULL) != SQLITE_OK) {
		free(bins);
		return db_sql_error(g->db, e, "reading binaries");
	}
	for (size_t i = 0; i < n; i++) {
		const char *key = "[unknown]", *path = "", *problem = "";

		if (i > 0 && bins[i].id == bins[i - 1].id)
			continue;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, bins[i].id);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			key = col_text(st, 0);
			path = col_text(st, 1);
			problem = col_text(st, 2);
		} else if (rc != SQLITE_DONE) {
			db_sql_error(g->db, e, "reading binaries");
			goto fail;
		}
		if (bb_row(g, x, g->start_day, e) < 0)
			goto fail;
		sb_i64(&x->rows, bins[i].id, '\t');
		push_tsv_escape(&x->rows, key);
		sb_put(&x->rows, "\t", 1);
		push_tsv_escape(&x->rows, path);
		sb_put(&x->rows, "\t", 1);
		push_tsv_escape(&x->rows, bins[i].name);
		sb_put(&x->rows, "\t", 1);
		push_tsv_escape(&x->rows, problem);
		sb_put(&x->rows, "\n", 1);
	}
	sqlite3_finalize(st);
	free(bins);
	return bb_end(g, x, e);
fail:
	sqlite3_finalize(st);
	free(bins);
	return -1;
}

static int cmp_i64s(const int64_t *a, const int64_t *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static int cmp_agg_loc(const void *a, const void *b)
{
	return cmp_i64s(*(const int64_t *const *)a, *(const int64_t *const *)b, 6);
}

static int cmp_agg_time(const void *a, const void *b)
{
	return cmp_i64s(*(const int64_t *const *)a, *(const int64_t *const *)b, 5);
}

static void agg_sums_put(struct sbuf *b, const struct agg_sums *a)
{
	sb_i64(b, a->n, '\t');
	sb_i64(b, a->period, '\t');
	for (int i = 0; i < STROBE_MAX_COUNTERS; i++)
		sb_i64(b, a->c[i], i < STROBE_MAX_COUNTERS - 1 ? '\t' : '\n');
}

/* The entries of t sorted by their keys (the same order on each pass, so
 * the same batches and hash). */
static void **agg_sorted(struct otable *t, int (*cmp)(const void *, const void *))
{
	void **v = xmalloc((t->nr + 1) * sizeof(*v));
	size_t n = 0;

	for (void *p = NULL; (p = otable_next(t, p));)
		v[n++] = p;
	qsort(v, n, sizeof(*v), cmp);
	return v;
}

static int gen_by_loc(struct gen *g, struct bb *x, struct error *e)
{
	void **v = agg_sorted(&g->by_loc, cmp_agg_loc);
	int ret = -1;

	for (size_t i = 0; i < g->by_loc.nr; i++) {
		const struct agg_loc *a = v[i];

		if (bb_row(g, x, a->day, e) < 0)
			goto out;
		sb_i64(&x->rows, a->binary_id, '\t');
		push_tsv_escape(&x->rows, a->key);
		sb_put(&x->rows, "\t", 1);
		sb_u64(&x->rows, (uint64_t)a->offset, '\t');
		sb_i64(&x->rows, a->pid, '\t');
		push_tsv_escape(&x->rows, a->comm_id < 0 ? "" : g->comms[a->comm_id]);
		sb_put(&x->rows, "\t", 1);
		sb_i64(&x->rows, a->flags, '\t');
		agg_sums_put(&x->rows, &a->x);
	}
	ret = bb_end(g, x, e);
out:
	free(v);
	return ret;
}

static int gen_by_time(struct gen *g, struct bb *x, struct error *e)
{
	void **v = agg_sorted(&g->by_time, cmp_agg_time);
	int ret = -1;

	for (size_t i = 0; i < g->by_time.nr; i++) {
		const struct agg_time *a = v[i];

		if (bb_row(g, x, a->day, e) < 0)
			goto out;
		sb_i64(&x->rows, a->bucket_ns, '\t');
		sb_i64(&x->rows, a->cpu, '\t');
		sb_i64(&x->rows, a->pid, '\t');
		sb_i64(&x->rows, a->binary_id, '\t');
		agg_sums_put(&x->rows, &a->x);
	}
	ret = bb_end(g, x, e);
out:
	free(v);
	return ret;
}

#define AGG_COLS	"n, period, c0, c1, c2, c3, c4, c5, c6, c7"

/*
 * A part of the plan: the batches first.. of an interval (its samples with
 * rowids lo..hi, then its binaries) or of the last part (processes,
 * markers, lost records, the samples lo..hi, binaries: the whole session
 * when it was not pushed in intervals).
 */
struct part {
	int64_t lo, hi;
	uint32_t first, end;		/* batches first..end-1 (end: after pass 1) */
	int final;
	const struct push_interval *there;	/* its row on the server, if any */
	uint64_t samples;		/* pass 1: its sample rows */
	char hash[33];			/* pass 1: XXH3-128 of its sample batches */
};

/* every batch of part pt, in order, to g->emit */
static int gen_part(struct gen *g, struct part *pt, struct error *e)
{
	struct bb p = { 0 }, m = { 0 }, l = { 0 }, s = { 0 }, b = { 0 }, al = { 0 }, at = { 0 };
	struct push_batcher start;
	int ret = -1;

	otable_clear(&g->locs);
	otable_clear(&g->by_loc);
	otable_clear(&g->by_time);
	g->part_samples = 0;
	push_batcher_init(&start, g->batch_rows, pt->first);
	if (pt->final) {
		bb_start(&p, &start, g->batch_rows, "processes",
			 PREFIX "pid, ppid, comm, start_ns, exit_ns");
		if (gen_processes(g, &p, e) < 0)
			goto out;
		bb_start(&m, &p.b, g->batch_rows, "markers",
			 PREFIX "time_ns, cpu, pid, tid, kind, name, args");
		if (gen_markers(g, &m, e) < 0)
			goto out;
		bb_start(&l, &m.b, g->batch_rows, "lost", PREFIX "time_ns, cpu, count, kind");
		if (gen_lost(g, &l, e) < 0)
			goto out;
	} else {
		l.b = start;
	}
	bb_start(&s, &l.b, g->batch_rows, "samples", PREFIX "time_ns, tsc, cpu, pid, tid, comm, "
		 "binary_id, binary_key, offset, flags, period, c0, c1, c2, c3, c4, c5, c6, c7");
	if (gen_samples(g, &s, pt->lo, pt->hi, e) < 0)
		goto out;
	bb_start(&b, &s.b, g->batch_rows, "binaries", PREFIX "binary_id, key, path, name, "
		 "problem");
	if (gen_binaries(g, &b, e) < 0)
		goto out;
	bb_start(&al, &b.b, g->batch_rows, "samples_by_loc", PREFIX "binary_id, binary_key, "
		 "offset, pid, comm, flags, " AGG_COLS);
	if (gen_by_loc(g, &al, e) < 0)
		goto out;
	bb_start(&at, &al.b, g->batch_rows, "samples_by_time", PREFIX "bucket_ns, cpu, pid, "
		 "binary_id, " AGG_COLS);
	if (gen_by_time(g, &at, e) < 0)
		goto out;
	pt->end = at.b.batch;
	ret = 0;
out:
	free(al.rows.s);
	free(at.rows.s);
	free(p.rows.s);
	free(m.rows.s);
	free(l.rows.s);
	free(s.rows.s);
	free(b.rows.s);
	return ret;
}

static int emit_hash(struct gen *g, uint32_t batch, const char *table, const char *cols,
		     const struct sbuf *rows, size_t nrows, struct error *e)
{
	if (g->hash) {
		XXH3_128bits_update(g->hash, table, strlen(table) + 1);
		XXH3_128bits_update(g->hash, rows->s, rows->n);
	}
	/* a part's own hash is of its samples only: the binaries' rows say
	 * what the host knows of them at the time (problem, cached), which
	 * may change while the session runs */
	if (!strcmp(table, "samples"))
		XXH3_128bits_update(g->phash, rows->s, rows->n);
	return 0;
}

static int emit_nop(struct gen *g, uint32_t batch, const char *table, const char *cols,
		    const struct sbuf *rows, size_t nrows, struct error *e)
{
	return 0;
}

static const char distributed_sync[] = "insert_distributed_sync=1";

static int emit_send(struct gen *g, uint32_t batch, const char *table, const char *cols,
		     const struct sbuf *rows, size_t nrows, struct error *e)
{
	struct sbuf q = { 0 };
	int ret;

	if (batch >= g->nbatches)
		return error_set(e, "session %" PRId64 " changed while it was pushed (batch %u of "
				 "%u): push it again", g->s->id, batch, g->nbatches);
	if (g->have[batch])
		return 0;
	sbuf_addf(&q, "INSERT INTO %s (%s) FORMAT TabSeparated", table, cols);
	ret = chclient_insert(g->c, q.s, distributed_sync, rows->s, rows->n, e);
	free(q.s);
	if (ret < 0)
		return error_prefix(e, "session %" PRId64 ", batch %u of %u", g->s->id, batch,
				    g->nbatches);
	g->sent++;
	for (size_t i = 0; i < rows->n; i++)
		g->rows_sent += rows->s[i] == '\n';
	return 0;
}

static void session_row(struct gen *g, const char *hash, struct sbuf *out)
{
	const struct db_session *s = g->s;
	char ds[11];

	push_tsv_escape(out, g->host);
	sbuf_addf(out, "\t%" PRId64 "\t0\t", s->id);
	push_day_str(g->start_day, ds);
	sbuf_addf(out, "%s\t%s\t%u\t%zu\t", ds, hash, g->nbatches, g->batch_rows);
	push_tsv_escape(out, s->name);
	sb_put(out, "\t", 1);
	push_tsv_escape(out, s->state);
	sb_put(out, "\t", 1);
	push_tsv_escape(out, s->backend);
	sb_put(out, "\t", 1);
	push_tsv_escape(out, s->kernel_release);
	sbuf_addf(out, "\t%" PRId64 "\t", s->nr_cpus);
	push_tsv_escape(out, s->sample_event);
	sbuf_addf(out, "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64
		  "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t[", s->sample_freq, s->sample_period,
		  s->start_ns, s->end_ns, s->wall_offset_ns, s->samples, s->lost, s->throttled);
	for (int i = 0; i < s->nr_events; i++) {
		struct sbuf t = { 0 };

		push_sql_quote(&t, s->events[i].name);
		sbuf_addf(out, "%s%s", i ? "," : "", t.s);
		free(t.s);
	}
	sb_put(out, "]\n", 2);
}

#define SESSION_COLS	"host, session, batch, day, content_hash, batches, batch_rows, name, " \
	"state, " \
	"backend, kernel_release, nr_cpus, sample_event, sample_freq, sample_period, start_ns, " \
	"end_ns, wall_offset_ns, samples, lost, throttled, events"

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
			sb_put(&q, ",", 1);
		push_sql_quote(&q, keys[i]);
		first = 0;
	}
	sb_put(&q, ") FORMAT TabSeparated", strlen(") FORMAT TabSeparated"));
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
	sb_put(line, "\t", 1);
	sb_u64(line, l->offset, 0);
}

/* the names of the session's locations the fleet lacks */
static int send_symbols(struct gen *g, struct error *e)
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
		sb_put(&rows, line.s, strlen(line.s));
		sb_put(&rows, "\t", 1);
		push_tsv_escape(&rows, l->symbol);
		sb_put(&rows, "\n", 1);
		if (++n == g->batch_rows) {
			ret = chclient_insert(g->c, "INSERT INTO symbols (binary_key, offset, symbol) "
					      "FORMAT TabSeparated", distributed_sync,
					      rows.s, rows.n, e);
			rows.n = n = 0;
			if (ret < 0)
				break;
		}
	}
	if (!ret && n)
		ret = chclient_insert(g->c, "INSERT INTO symbols (binary_key, offset, symbol) "
				      "FORMAT TabSeparated", distributed_sync, rows.s, rows.n, e);
	free(todo);
	free(rows.s);
	free(line.s);
	free(text.s);
	free(have);
	return ret < 0 ? error_prefix(e, "session %" PRId64 ", symbols", g->s->id) : 0;
}

int push_check_schema(struct chclient *c, struct error *e)
{
	struct sbuf out = { 0 };
	long v;
	char *end;

	if (chclient_query(c, "SELECT max(version) FROM schema_version", &out, e) < 0) {
		if (strstr(e->msg, "(ClickHouse error 60)") || strstr(e->msg, "(ClickHouse error 81)"))
			return error_set(e, "no strobe schema in that database of ClickHouse: "
					 "apply schema/clickhouse/*.sql there first (doc/FLEET.md)");
		return -1;
	}
	v = strtol(out.s ? out.s : "", &end, 10);
	free(out.s);
	if (end == out.s || v != PUSH_SCHEMA_VERSION)
		return error_set(e, "the ClickHouse database has strobe schema version %ld, this "
				 "strobe writes version %d: upgrade the older of the two "
				 "(doc/FLEET.md)", v, PUSH_SCHEMA_VERSION);
	return 0;
}

static int server_batch_max(struct chclient *c, size_t *max, struct error *e)
{
	struct sbuf out = { 0 };
	unsigned long long v;

	if (chclient_query(c, "SELECT value FROM system.settings WHERE name = "
			   "'max_insert_block_size'", &out, e) < 0)
		return -1;
	if (!out.s || sscanf(out.s, "%llu", &v) != 1 || v == 0) {
		free(out.s);
		return error_set(e, "ClickHouse did not say its max_insert_block_size");
	}
	free(out.s);
	*max = v;
	return 0;
}

/* what the server has of session g->s: its content hash (empty: none) and
 * batches into have[0..n); *extra set when it holds batches numbered n or
 * more, which this push does not make (the caller compares the hash
 * first: other content explains them) */
static int server_state(struct gen *g, char *hash, size_t hsize, uint8_t *have, size_t n,
			int *extra, struct error *e)
{
	static const char *const tables[] = {
		"sessions", "processes", "markers", "lost", "samples", "binaries",
		"samples_by_loc", "samples_by_time",
	};
	struct sbuf where = { 0 }, q = { 0 }, out = { 0 };
	int ret = -1;

	sbuf_addf(&where, "host = ");
	push_sql_quote(&where, g->host);
	sbuf_addf(&where, " AND session = %" PRId64, g->s->id);
	sbuf_addf(&q, "SELECT content_hash FROM sessions WHERE %s LIMIT 1", where.s);
	if (chclient_query(g->c, q.s, &out, e) < 0)
		goto out;
	snprintf(hash, hsize, "%.*s", out.s ? (int)strcspn(out.s, "\n") : 0, out.s ? out.s : "");
	free(out.s);
	memset(&out, 0, sizeof(out));
	q.n = 0;
	for (size_t i = 0; i < sizeof(tables) / sizeof(*tables); i++)
		sbuf_addf(&q, "%sSELECT DISTINCT batch FROM %s WHERE %s", i ? " UNION ALL " : "",
			  tables[i], where.s);
	if (chclient_query(g->c, q.s, &out, e) < 0)
		goto out;
	*extra = push_parse_batches(out.s, have, n) < 0;
	ret = 0;
out:
	free(where.s);
	free(q.s);
	free(out.s);
	return ret;
}

/* the batch size of session g->s on the server, if it is there */
static int server_batch_rows(struct gen *g, size_t *rows, struct error *e)
{
	struct sbuf q = { 0 }, out = { 0 };
	unsigned long long v;
	int ret = 0;

	sbuf_addf(&q, "SELECT batch_rows FROM sessions WHERE host = ");
	push_sql_quote(&q, g->host);
	sbuf_addf(&q, " AND session = %" PRId64 " LIMIT 1", g->s->id);
	if (chclient_query(g->c, q.s, &out, e) < 0)
		ret = -1;
	else if (out.s && sscanf(out.s, "%llu", &v) == 1 && v > 0 && v <= PUSH_BATCH_MAX)
		*rows = v;
	free(q.s);
	free(out.s);
	return ret;
}

/* the session's interval rows on the server, checked (push.h) */
static int server_intervals(struct gen *g, struct push_interval **iv, size_t *n,
			    struct error *e)
{
	struct sbuf q = { 0 }, out = { 0 };
	int ret;

	sbuf_addf(&q, "SELECT DISTINCT interval_no, first_row, last_row, first_batch, batches, "
		  "batch_rows, samples, samples_total, content_hash FROM intervals WHERE host = ");
	push_sql_quote(&q, g->host);
	sbuf_addf(&q, " AND session = %" PRId64 " FORMAT TabSeparated", g->s->id);
	ret = chclient_query(g->c, q.s, &out, e);
	if (ret == 0 && push_parse_intervals(out.s, iv, n, e) < 0)
		ret = error_prefix(e, "session %" PRId64 " of host %.100s", g->s->id, g->host);
	free(q.s);
	free(out.s);
	return ret;
}

/* the newest sample rowid of session g->s committed now (INT64_MIN: none) */
static int committed_cut(struct gen *g, int64_t *cut, struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	*cut = INT64_MIN;
	if (sqlite3_prepare_v2(db_sqlite(g->db), "SELECT max(first_row + nr - 1) FROM "
			       "sample_blocks WHERE session_id = ?", -1, &st, NULL) != SQLITE_OK)
		return db_sql_error(g->db, e, "reading the samples' rowids");
	sqlite3_bind_int64(st, 1, g->s->id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		*cut = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_sql_error(g->db, e, "reading the samples' rowids");
	return 0;
}

static void hash_hex(XXH3_state_t *h, char out[33])
{
	XXH128_hash_t d = XXH3_128bits_digest(h);

	snprintf(out, 33, "%016llx%016llx", (unsigned long long)d.high64,
		 (unsigned long long)d.low64);
}

/* pass 1 of part pt: its batches, samples and hash; checked against its
 * server row if it has one */
static int part_pass1(struct gen *g, struct part *pt, struct error *e)
{
	g->phash = XXH3_createState();
	XXH3_128bits_reset(g->phash);
	g->emit = emit_hash;
	if (gen_part(g, pt, e) < 0) {
		XXH3_freeState(g->phash);
		g->phash = NULL;
		return -1;
	}
	hash_hex(g->phash, pt->hash);
	XXH3_freeState(g->phash);
	g->phash = NULL;
	pt->samples = g->part_samples;
	if (pt->there && (pt->there->first_batch + pt->there->batches != pt->end ||
			  pt->there->samples != pt->samples || strcmp(pt->there->hash, pt->hash)))
		return error_set(e, "interval %u of session %" PRId64 " of host %.100s is in "
				 "ClickHouse with other content (%u batches, %" PRIu64 " samples, "
				 "hash %s; here %u, %" PRIu64 ", %s): drop the session there "
				 "first", pt->there->k, g->s->id, g->host, pt->there->batches,
				 pt->there->samples, pt->there->hash, pt->end - pt->first,
				 pt->samples, pt->hash);
	return 0;
}

/* pass 2 of part pt: its symbols, then the batches the server lacks (an
 * interval all there of a stopped session: the symbols its push left out) */
static int part_send(struct gen *g, struct part *pt, const uint8_t *have, struct error *e)
{
	uint32_t i;

	for (i = pt->first; i < pt->end && have[i]; i++)
		;
	if (i == pt->end && (g->running || !pt->there))
		return 0;
	g->emit = emit_nop;
	if (gen_part(g, pt, e) < 0 || send_symbols(g, e) < 0)
		return -1;
	if (i == pt->end)
		return 0;
	g->have = have;
	g->emit = emit_send;
	progress_phase(g->progress, pt->samples, "samples pushed");
	return gen_part(g, pt, e);
}

/* the row of interval k (pt, new) of the running session */
static int send_interval(struct gen *g, const struct push_interval *iv, const struct part *pt,
			 struct error *e)
{
	const struct db_session *s = g->s;
	struct sbuf r = { 0 };
	char ds[11];
	int ret;

	push_tsv_escape(&r, g->host);
	push_day_str(g->start_day, ds);
	sbuf_addf(&r, "\t%" PRId64 "\t%u\t%s\t%" PRId64 "\t%" PRId64 "\t%u\t%u\t%zu\t%" PRIu64
		  "\t%" PRIu64 "\t%s\t", s->id, iv->k, ds, pt->lo, pt->hi, pt->first,
		  pt->end - pt->first, g->batch_rows, pt->samples, iv->samples_total + pt->samples,
		  pt->hash);
	push_tsv_escape(&r, s->name);
	sb_put(&r, "\t", 1);
	push_tsv_escape(&r, s->backend);
	sb_put(&r, "\t", 1);
	push_tsv_escape(&r, s->kernel_release);
	sbuf_addf(&r, "\t%" PRId64 "\t", s->nr_cpus);
	push_tsv_escape(&r, s->sample_event);
	sbuf_addf(&r, "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t[", s->sample_freq,
		  s->sample_period, s->start_ns, s->wall_offset_ns);
	for (int i = 0; i < s->nr_events; i++) {
		struct sbuf t = { 0 };

		push_sql_quote(&t, s->events[i].name);
		sbuf_addf(&r, "%s%s", i ? "," : "", t.s);
		free(t.s);
	}
	sb_put(&r, "]\n", 2);
	ret = chclient_insert(g->c, "INSERT INTO intervals (host, session, interval_no, day, "
			      "first_row, last_row, first_batch, batches, batch_rows, samples, "
			      "samples_total, content_hash, name, backend, kernel_release, nr_cpus, "
			      "sample_event, sample_freq, sample_period, start_ns, wall_offset_ns, "
			      "events) FORMAT TabSeparated", distributed_sync, r.s, r.n, e);
	free(r.s);
	return ret < 0 ? error_prefix(e, "session %" PRId64 ", interval %u", s->id, iv->k) : 0;
}

/*
 * Push session g->s: whole when it has stopped (after the intervals the
 * server has of it, if any), or, running (o->intervals), its intervals
 * the server lacks batches of and a new one of what was committed since
 * the last.
 */
static int push_session(struct gen *g, struct push_stats *st, const struct push_opts *o,
			struct error *e)
{
	char hash[33], there[80], line[300];
	struct sbuf row = { 0 };
	uint8_t *have = NULL;
	struct push_interval *iv = NULL, niv;
	struct part *parts = NULL;
	size_t niv_there = 0, nparts = 0;
	uint32_t missing = 0, next_batch;
	int64_t lo, hi, next_row, cut;
	int ret = -1, extra = 0, running = !db_session_complete(g->s), cutting = 0;

	g->running = running;
	g->res = resolver_new(g->db, g->s, e);
	if (!g->res)
		return -1;
	if (g->worker)
		resolver_set_worker(g->res, g->worker);
	g->start_day = push_day(g->s->start_ns + g->s->wall_offset_ns);
	/* a session begun with other batches is resumed with its plan */
	g->batch_rows = g->default_rows;
	if (server_batch_rows(g, &g->batch_rows, e) < 0 ||
	    server_intervals(g, &iv, &niv_there, e) < 0)
		goto out;
	if (niv_there)
		g->batch_rows = iv[0].batch_rows;
	sample_scan_range(g->s, &lo, &hi);
	parts = xcalloc(niv_there + 1, sizeof(*parts));
	for (size_t i = 0; i < niv_there; i++) {
		parts[nparts].lo = iv[i].first_row;
		parts[nparts].hi = iv[i].last_row;
		parts[nparts].first = iv[i].first_batch;
		parts[nparts].end = iv[i].first_batch + iv[i].batches;
		parts[nparts++].there = &iv[i];
	}
	push_plan_next(iv, niv_there, lo, &next_row, &next_batch);
	if (running) {
		if (committed_cut(g, &cut, e) < 0)
			goto out;
		/* the comms of the samples up to the cut are committed */
		if (load_comms(g, e) < 0)
			goto out;
		cutting = push_plan_cut(iv, niv_there, lo, cut, &niv);
		if (cutting) {
			parts[nparts].lo = niv.first_row;
			parts[nparts].hi = niv.last_row;
			parts[nparts++].first = niv.first_batch;
		}
	} else {
		parts[nparts].lo = next_row;
		parts[nparts].hi = hi;
		parts[nparts].first = next_batch;
		parts[nparts++].final = 1;
	}
	/* pass 1: count and hash (of a running session, only its new
	 * interval: those there are checked when they lack batches) */
	progress_phase(g->progress, g->s->samples, "samples read");
	if (!running) {
		g->hash = XXH3_createState();
		XXH3_128bits_reset(g->hash);
	}
	for (size_t i = 0; i < nparts; i++)
		if ((!running || !parts[i].there) && part_pass1(g, &parts[i], e) < 0)
			goto out;
	g->nbatches = nparts ? parts[nparts - 1].end : 1;
	if (g->nbatches == 0)
		g->nbatches = 1;
	if (!running) {
		session_row(g, "", &row);
		XXH3_128bits_update(g->hash, row.s, row.n);
		hash_hex(g->hash, hash);
	}
	/* what is there */
	have = xcalloc(g->nbatches, 1);
	if (server_state(g, there, sizeof(there), have, g->nbatches, &extra, e) < 0)
		goto out;
	if (running && *there) {
		error_set(e, "session %" PRId64 " of host %.100s is in ClickHouse as stopped, but "
			  "runs here: push it under another --host, or drop it there first",
			  g->s->id, g->host);
		goto out;
	}
	if (!running && *there && strcmp(there, hash)) {
		error_set(e, "session %" PRId64 " of host %.100s is already in ClickHouse with other "
			  "content (hash %.40s, here %s): push it under another --host, or drop it "
			  "there first", g->s->id, g->host, there, hash);
		goto out;
	}
	if (extra) {
		error_set(e, "ClickHouse holds batches of session %" PRId64 " of host %.100s that "
			  "this push does not make (the session changed since it was pushed?)",
			  g->s->id, g->host);
		goto out;
	}
	for (uint32_t i = 1; i < g->nbatches; i++)
		missing += !have[i];
	if (!running)
		missing += !have[0];
	st->sessions++;
	st->batches += g->nbatches;
	if (!missing) {
		if (running)
			snprintf(line, sizeof(line), "session %" PRId64 " of host %.100s: running, "
				 "nothing new (%zu intervals)", g->s->id, g->host, niv_there);
		else
			snprintf(line, sizeof(line), "session %" PRId64 " of host %.100s: already "
				 "pushed (%u batches)", g->s->id, g->host, g->nbatches);
		ret = 0;
		goto note;
	}
	/* pass 2: the session's row, then part by part the interval's row
	 * (the plan of its batches), its symbols and its missing batches */
	if (!running && !have[0]) {
		free(row.s);
		memset(&row, 0, sizeof(row));
		session_row(g, hash, &row);
		if (chclient_insert(g->c, "INSERT INTO sessions (" SESSION_COLS ") FORMAT TabSeparated",
				    distributed_sync, row.s, row.n, e) < 0) {
			error_prefix(e, "session %" PRId64, g->s->id);
			goto out;
		}
		g->sent++;
		g->rows_sent++;
	}
	for (size_t i = 0; i < nparts; i++) {
		struct part *pt = &parts[i];

		if (running && pt->there) {
			uint32_t b = pt->first;

			while (b < pt->end && have[b])
				b++;
			if (b == pt->end)
				continue;
			/* an interval cut by a strobed killed before it was
			 * sent: the same rows, checked */
			if (part_pass1(g, pt, e) < 0)
				goto out;
		}
		if (running && !pt->there) {
			if (send_interval(g, &niv, pt, e) < 0)
				goto out;
			st->intervals_sent++;
		}
		if (part_send(g, pt, have, e) < 0)
			goto out;
	}
	st->sessions_sent++;
	if (running)
		snprintf(line, sizeof(line), "session %" PRId64 " of host %.100s: running, %s"
			 "sent %u of %u batches", g->s->id, g->host, cutting ? "a new interval, " :
			 "", missing, g->nbatches - 1);
	else
		snprintf(line, sizeof(line), "session %" PRId64 " of host %.100s: sent %u of %u "
			 "batches", g->s->id, g->host, missing, g->nbatches);
	ret = 0;
note:
	if (o->note)
		o->note(o->note_arg, line);
out:
	st->batches_sent += g->sent;
	st->rows_sent += g->rows_sent;
	g->sent = g->rows_sent = 0;
	g->have = NULL;
	free(have);
	free(row.s);
	free(parts);
	free(iv);
	if (g->hash)
		XXH3_freeState(g->hash);
	g->hash = NULL;
	resolver_free(g->res);
	g->res = NULL;
	return ret;
}

/* the sessions to push: o's, or every stopped one (started since) */
static int list_sessions(struct db *db, const struct push_opts *o, int64_t **ids, size_t *n,
			 struct error *e)
{
	sqlite3_stmt *st;
	size_t cap = 16;
	int rc;

	*n = 0;
	*ids = xmalloc(cap * sizeof(**ids));
	if (o->nsessions) {
		*ids = xrealloc(*ids, o->nsessions * sizeof(**ids));
		memcpy(*ids, o->sessions, o->nsessions * sizeof(**ids));
		*n = o->nsessions;
		return 0;
	}
	if (sqlite3_prepare_v2(db_sqlite(db), "SELECT id FROM sessions WHERE state != 'running' "
			       "AND state != 'deleting' AND (? OR start_ns + wall_offset_ns >= ?) "
			       "ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		return db_sql_error(db, e, "listing sessions");
	sqlite3_bind_int(st, 1, !o->has_since);
	sqlite3_bind_int64(st, 2, o->since_wall_ns);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap)
			*ids = xrealloc(*ids, (cap *= 2) * sizeof(**ids));
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_sql_error(db, e, "listing sessions");
	return 0;
}

int push_run(struct db *db, struct chclient *c, const struct push_opts *o,
	     struct push_stats *st, struct error *e)
{
	struct gen g;
	struct db_session s;
	int64_t *ids = NULL;
	size_t n = 0, k = 0, server_max = PUSH_BATCH_MAX;
	int ret = -1;

	memset(st, 0, sizeof(*st));
	memset(&g, 0, sizeof(g));
	g.db = db;
	g.c = c;
	g.host = o->host;
	g.progress = o->progress;
	g.default_rows = o->batch_rows ? o->batch_rows : PUSH_BATCH_ROWS;
	if (push_check_schema(c, e) < 0 || server_batch_max(c, &server_max, e) < 0)
		return -1;
	if (g.default_rows > server_max)
		g.default_rows = server_max;
	if (g.default_rows > PUSH_BATCH_MAX)
		g.default_rows = PUSH_BATCH_MAX;
	if (list_sessions(db, o, &ids, &n, e) < 0)
		goto out;
	/* every session given must be there and stopped before anything
	 * goes; of all sessions, those not stored whole yet are left out */
	for (size_t i = 0; i < n; i++) {
		if (db_session_get(db, ids[i], &s, e) < 0)
			goto out;
		if (db_session_complete(&s) || (o->intervals && !strcmp(s.state, "running")))
			ids[k++] = ids[i];
		else if (o->nsessions && !o->intervals) {
			error_set(e, "session %" PRId64 " is %s: push it once it has stopped (and "
				  "strobed has finished writing it)", ids[i], s.state);
			goto out;
		}
	}
	n = k;
	if (n && o->parse_in_worker && !(g.worker = symworker_new(NULL, e))) {
		error_prefix(e, "naming code");
		goto out;
	}
	otable_init(&g.locs, sizeof(struct loc), 16, 1024);
	otable_init(&g.by_loc, sizeof(struct agg_loc), AGG_LOC_KEY, 1024);
	otable_init(&g.by_time, sizeof(struct agg_time), AGG_TIME_KEY, 1024);
	if (load_comms(&g, e) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (db_session_get(db, ids[i], &s, e) < 0)
			goto out;
		g.s = &s;
		if (push_session(&g, st, o, e) < 0)
			goto out;
	}
	ret = 0;
out:
	if (g.worker) {
		struct symworker_stats ws;

		symworker_stats(g.worker, &ws);
		st->worker_started = ws.started;
		st->worker_crashes = ws.crashes;
		st->worker_timeouts = ws.timeouts;
		st->worker_failed = ws.failed;
		snprintf(st->worker_failed_names, sizeof(st->worker_failed_names), "%s",
			 ws.failed_names);
		symworker_free(g.worker);
	}
	otable_free(&g.locs);
	otable_free(&g.by_loc);
	otable_free(&g.by_time);
	for (size_t i = 0; i < g.ncomms; i++)
		free(g.comms[i]);
	free(g.comms);
	free(ids);
	return ret;
}
