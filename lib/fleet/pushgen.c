/*
 * pushgen.c - a session's rows as push sends them (pushgen.h, push.h):
 * the batches of a table, the tables of a part of the plan read from
 * SQLite into TSV, and the rows of tables sessions and intervals.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "db.h"
#include "eventscan.h"
#include "progress.h"
#include "pushgen.h"
#include "resolve.h"
#include "samplescan.h"

/* --- cutting rows into batches --- */

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

void push_table_start(struct push_table *x, struct gen *g, const struct push_batcher *prev,
		      const char *table, const char *cols)
{
	push_batcher_init(&x->b, g->batch_rows, prev ? prev->batch : 1);
	x->table = table;
	x->cols = cols;
	x->g = g;
}

static int table_flush(struct push_table *x, uint32_t batch, struct error *e)
{
	int ret = x->g->emit(x->g, batch, x->table, x->cols, &x->rows, e);

	x->rows.n = 0;
	if (x->rows.s)
		x->rows.s[0] = 0;
	return ret;
}

int push_table_row(struct push_table *x, int64_t day, struct error *e)
{
	char ds[11];
	uint32_t before = x->b.batch;

	if (push_batcher_row(&x->b, day) && table_flush(x, before, e) < 0)
		return -1;
	push_tsv_escape(&x->rows, x->g->host);
	sbuf_add(&x->rows, "\t", 1);
	push_tsv_i64(&x->rows, x->g->s->id, '\t');
	push_tsv_u64(&x->rows, x->b.batch, '\t');
	push_day_str(day, ds);
	sbuf_add(&x->rows, ds, 10);
	sbuf_add(&x->rows, "\t", 1);
	return 0;
}

int push_table_end(struct push_table *x, struct error *e)
{
	uint32_t before = x->b.batch;

	if (push_batcher_end(&x->b))
		return table_flush(x, before, e);
	return 0;
}

void push_table_free(struct push_table *x)
{
	free(x->rows.s);
	memset(&x->rows, 0, sizeof(x->rows));
}

/* --- the tables read row by row from SQLite --- */

static int64_t col_i64(sqlite3_stmt *st, int i, int64_t null)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? null : sqlite3_column_int64(st, i);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	const char *t = (const char *)sqlite3_column_text(st, i);

	return t ? t : "";
}

/*
 * A table of the session's that goes to ClickHouse as SQLite has it: its
 * query (of session ?1), and its columns' kinds in order: 'i' an integer
 * (NULL: 0), 'n' an integer (NULL: -1), 't' text (NULL: empty).  A timed
 * table's rows are of the day of their first column (a time_ns), the
 * others of the session's start day.  Markers and lost records are read
 * by lib/store/eventscan.c instead (gen_events).
 */
struct sql_table {
	const char *table, *cols, *sql, *what, *kinds;
	int timed;
};

static const struct sql_table sql_processes = {
	"processes", PUSH_PREFIX_COLS "pid, ppid, comm, start_ns, exit_ns",
	"SELECT p.pid, p.ppid, c.name, p.start_ns, p.exit_ns FROM processes p "
	"LEFT JOIN comms c ON c.id = p.comm_id WHERE p.session_id = ? "
	"ORDER BY p.pid, p.start_ns", "reading processes", "intnn", 0
};

/* the rows of table t of session g->s into x */
static int gen_sql_table(struct gen *g, struct push_table *x, const struct sql_table *t,
			 struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db_sqlite(g->db), t->sql, -1, &st, NULL) != SQLITE_OK)
		return db_sql_error(g->db, e, t->what);
	sqlite3_bind_int64(st, 1, g->s->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t day = t->timed ? push_day(sqlite3_column_int64(st, 0) +
						  g->s->wall_offset_ns) : g->start_day;

		if (push_table_row(x, day, e) < 0)
			goto fail;
		for (int i = 0; t->kinds[i]; i++) {
			char sep = t->kinds[i + 1] ? '\t' : '\n';

			if (t->kinds[i] == 't') {
				push_tsv_escape(&x->rows, col_text(st, i));
				sbuf_add(&x->rows, &sep, 1);
			} else {
				push_tsv_i64(&x->rows, col_i64(st, i, t->kinds[i] == 'n' ? -1 : 0),
					     sep);
			}
		}
	}
	if (rc != SQLITE_DONE) {
		db_sql_error(g->db, e, t->what);
		goto fail;
	}
	sqlite3_finalize(st);
	return push_table_end(x, e);
fail:
	sqlite3_finalize(st);
	return -1;
}

/* --- markers and lost records, read by eventscan.h --- */

/* A marker as ClickHouse's columns have it: a NULL cpu -1, a NULL pid or
 * tid 0 (eventscan's -1: the database holds none below 0), NULL args
 * empty. */
static void put_marker(struct sbuf *rows, const struct db_marker *m)
{
	push_tsv_i64(rows, (int64_t)m->time_ns, '\t');
	push_tsv_i64(rows, m->cpu, '\t');
	push_tsv_i64(rows, m->pid < 0 ? 0 : m->pid, '\t');
	push_tsv_i64(rows, m->tid < 0 ? 0 : m->tid, '\t');
	push_tsv_escape(rows, m->kind);
	sbuf_add(rows, "\t", 1);
	push_tsv_escape(rows, m->name);
	sbuf_add(rows, "\t", 1);
	push_tsv_escape(rows, m->args ? m->args : "");
	sbuf_add(rows, "\n", 1);
}

static void put_lost(struct sbuf *rows, const struct db_lost *l)
{
	push_tsv_i64(rows, l->time_ns, '\t');
	push_tsv_i64(rows, l->cpu, '\t');
	push_tsv_i64(rows, (int64_t)l->count, '\t');
	push_tsv_escape(rows, l->kind);
	sbuf_add(rows, "\n", 1);
}

/* The session's markers (lost 0) or lost records (lost 1) into x, each
 * row of its own day: the two tables' one loop. */
static int gen_events(struct gen *g, struct push_table *x, int lost, struct error *e)
{
	struct event_filter f;
	struct marker_scan *ms = NULL;
	struct lost_scan *ls = NULL;
	struct db_marker m = { 0 };
	struct db_lost l = { 0 };
	int rc;

	event_filter_all(&f, g->s->id);
	if (lost ? !(ls = lost_scan_open(g->db, &f, e)) : !(ms = marker_scan_open(g->db, &f, e)))
		return -1;
	while ((rc = lost ? lost_scan_next(ls, &l, e) : marker_scan_next(ms, &m, e)) == 1) {
		int64_t t = lost ? l.time_ns : (int64_t)m.time_ns;

		if ((rc = push_table_row(x, push_day(t + g->s->wall_offset_ns), e)) < 0)
			break;
		if (lost)
			put_lost(&x->rows, &l);
		else
			put_marker(&x->rows, &m);
	}
	lost_scan_close(ls);
	marker_scan_close(ms);
	return rc < 0 ? -1 : push_table_end(x, e);
}

/* --- the samples, their binaries and aggregates --- */

/* the samples with rowids lo..hi, their locations into g->locs and their
 * sums into g->agg */
static int gen_samples(struct gen *g, struct push_table *x, int64_t lo, int64_t hi,
		       struct error *e)
{
	struct sample_scan_filter f = { 0 };
	const struct sample_scan_row *row;
	struct sample_scan *sc;
	int rc;

	if (lo > hi)
		return push_table_end(x, e);
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

			/* named in pushsym.c, those the fleet lacks */
			resolver_binary(g->res, l->binary_id, &rs);
			l->key = rs.key;
			l->binary = rs.binary;
			l->symbol = NULL;
		}
		if ((r->null & (1u << SB_COMM_ID)) || comm < 0 || (size_t)comm >= g->ncomms)
			comm = -1;
		day = push_day(v[SB_TIME_NS] + g->s->wall_offset_ns);
		reagg_add(&g->agg, day, g->s->start_ns, l->binary_id, l->offset, l->key, v, comm);
		if ((rc = push_table_row(x, day, e)) < 0)
			break;
		push_tsv_i64(&x->rows, v[SB_TIME_NS], '\t');
		push_tsv_i64(&x->rows, v[SB_TSC], '\t');
		push_tsv_i64(&x->rows, v[SB_CPU], '\t');
		push_tsv_i64(&x->rows, v[SB_PID], '\t');
		push_tsv_i64(&x->rows, v[SB_TID], '\t');
		push_tsv_escape(&x->rows, comm < 0 ? "" : g->comms[comm]);
		sbuf_add(&x->rows, "\t", 1);
		push_tsv_i64(&x->rows, l->binary_id, '\t');
		push_tsv_escape(&x->rows, l->key);
		sbuf_add(&x->rows, "\t", 1);
		push_tsv_u64(&x->rows, l->offset, '\t');
		push_tsv_i64(&x->rows, v[SB_FLAGS], '\t');
		push_tsv_i64(&x->rows, v[SB_PERIOD], '\t');
		for (int i = SB_C0; i <= SB_C7; i++)
			push_tsv_i64(&x->rows, v[i], i < SB_C7 ? '\t' : '\n');
		g->part_samples++;
		progress_add(g->progress, 1);
	}
	sample_scan_close(sc);
	return rc < 0 ? -1 : push_table_end(x, e);
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
static int gen_binaries(struct gen *g, struct push_table *x, struct error *e)
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
		if (push_table_row(x, g->start_day, e) < 0)
			goto fail;
		push_tsv_i64(&x->rows, bins[i].id, '\t');
		push_tsv_escape(&x->rows, key);
		sbuf_add(&x->rows, "\t", 1);
		push_tsv_escape(&x->rows, path);
		sbuf_add(&x->rows, "\t", 1);
		push_tsv_escape(&x->rows, bins[i].name);
		sbuf_add(&x->rows, "\t", 1);
		push_tsv_escape(&x->rows, problem);
		sbuf_add(&x->rows, "\n", 1);
	}
	sqlite3_finalize(st);
	free(bins);
	return push_table_end(x, e);
fail:
	sqlite3_finalize(st);
	free(bins);
	return -1;
}

int pushgen_part(struct gen *g, int final, int64_t lo, int64_t hi, uint32_t first,
		 uint32_t *end, struct error *e)
{
	struct push_table procs = { 0 }, marks = { 0 }, lost = { 0 }, s = { 0 }, b = { 0 },
			  al = { 0 }, at = { 0 };
	struct push_batcher start;
	const struct push_batcher *prev = &start;
	int ret = -1;

	otable_clear(&g->locs);
	reagg_clear(&g->agg);
	g->part_samples = 0;
	push_batcher_init(&start, g->batch_rows, first);
	if (final) {
		/* the session's other tables go with its final part */
		push_table_start(&procs, g, prev, sql_processes.table, sql_processes.cols);
		if (gen_sql_table(g, &procs, &sql_processes, e) < 0)
			goto out;
		push_table_start(&marks, g, &procs.b, "markers",
				 PUSH_PREFIX_COLS "time_ns, cpu, pid, tid, kind, name, args");
		if (gen_events(g, &marks, 0, e) < 0)
			goto out;
		push_table_start(&lost, g, &marks.b, "lost",
				 PUSH_PREFIX_COLS "time_ns, cpu, count, kind");
		if (gen_events(g, &lost, 1, e) < 0)
			goto out;
		prev = &lost.b;
	}
	push_table_start(&s, g, prev, "samples", PUSH_PREFIX_COLS "time_ns, tsc, cpu, pid, "
			 "tid, comm, binary_id, binary_key, offset, flags, period, c0, c1, c2, "
			 "c3, c4, c5, c6, c7");
	if (gen_samples(g, &s, lo, hi, e) < 0)
		goto out;
	push_table_start(&b, g, &s.b, "binaries", PUSH_PREFIX_COLS "binary_id, key, path, "
			 "name, problem");
	if (gen_binaries(g, &b, e) < 0)
		goto out;
	push_table_start(&al, g, &b.b, "samples_by_loc", PUSH_PREFIX_COLS REAGG_LOC_COLS);
	if (reagg_put_by_loc(&g->agg, &al, g->comms, e) < 0)
		goto out;
	push_table_start(&at, g, &al.b, "samples_by_time", PUSH_PREFIX_COLS REAGG_TIME_COLS);
	if (reagg_put_by_time(&g->agg, &at, e) < 0)
		goto out;
	*end = at.b.batch;
	ret = 0;
out:
	push_table_free(&procs);
	push_table_free(&marks);
	push_table_free(&lost);
	push_table_free(&s);
	push_table_free(&b);
	push_table_free(&al);
	push_table_free(&at);
	return ret;
}

/* --- the rows of tables sessions and intervals --- */

/* the session's events as a ClickHouse array: ['a','b'] */
static void events_array(struct sbuf *out, const struct db_session *s)
{
	sbuf_add(out, "[", 1);
	for (int i = 0; i < s->nr_events; i++) {
		struct sbuf t = { 0 };

		push_sql_quote(&t, s->events[i].name);
		sbuf_addf(out, "%s%s", i ? "," : "", t.s);
		free(t.s);
	}
	sbuf_add(out, "]\n", 2);
}

/* The columns of the session's setup both rows have, each ended by a TAB:
 * backend, kernel_release, nr_cpus, sample_event, sample_freq,
 * sample_period, start_ns. */
static void put_setup(struct sbuf *out, const struct db_session *s)
{
	push_tsv_escape(out, s->backend);
	sbuf_add(out, "\t", 1);
	push_tsv_escape(out, s->kernel_release);
	sbuf_addf(out, "\t%" PRId64 "\t", s->nr_cpus);
	push_tsv_escape(out, s->sample_event);
	sbuf_addf(out, "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t", s->sample_freq,
		  s->sample_period, s->start_ns);
}

void pushgen_session_row(struct gen *g, const char *hash, struct sbuf *out)
{
	const struct db_session *s = g->s;
	char ds[11];

	push_tsv_escape(out, g->host);
	sbuf_addf(out, "\t%" PRId64 "\t0\t", s->id);
	push_day_str(g->start_day, ds);
	sbuf_addf(out, "%s\t%s\t%u\t%zu\t", ds, hash, g->nbatches, g->batch_rows);
	push_tsv_escape(out, s->name);
	sbuf_add(out, "\t", 1);
	push_tsv_escape(out, s->state);
	sbuf_add(out, "\t", 1);
	put_setup(out, s);
	sbuf_addf(out, "%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t",
		  s->end_ns, s->wall_offset_ns, s->samples, s->lost, s->throttled);
	events_array(out, s);
}

void pushgen_interval_row(struct gen *g, const struct push_interval *iv, struct sbuf *out)
{
	const struct db_session *s = g->s;
	char ds[11];

	push_tsv_escape(out, g->host);
	push_day_str(g->start_day, ds);
	sbuf_addf(out, "\t%" PRId64 "\t%u\t%s\t%" PRId64 "\t%" PRId64 "\t%u\t%u\t%zu\t%" PRIu64
		  "\t%" PRIu64 "\t%s\t", s->id, iv->k, ds, iv->first_row, iv->last_row,
		  iv->first_batch, iv->batches, iv->batch_rows, iv->samples, iv->samples_total,
		  iv->hash);
	push_tsv_escape(out, s->name);
	sbuf_add(out, "\t", 1);
	put_setup(out, s);
	sbuf_addf(out, "%" PRId64 "\t", s->wall_offset_ns);
	events_array(out, s);
}

/* --- what else push reads of the database --- */

int pushgen_comms(struct gen *g, struct error *e)
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

int pushgen_committed(struct gen *g, int64_t *cut, struct error *e)
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

int pushgen_stopped(struct db *db, int has_since, int64_t since_wall_ns, int64_t **ids,
		    size_t *n, struct error *e)
{
	sqlite3_stmt *st;
	size_t cap = 16;
	int rc;

	*n = 0;
	*ids = xmalloc(cap * sizeof(**ids));
	if (sqlite3_prepare_v2(db_sqlite(db), "SELECT id FROM sessions WHERE state != 'running' "
			       "AND state != 'deleting' AND (? OR start_ns + wall_offset_ns >= ?) "
			       "ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		return db_sql_error(db, e, "listing sessions");
	sqlite3_bind_int(st, 1, !has_since);
	sqlite3_bind_int64(st, 2, since_wall_ns);
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
