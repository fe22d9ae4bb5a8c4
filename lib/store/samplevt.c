/*
 * samplevt.c - the eponymous virtual table "samples" over sample_blocks
 * (see samplevt.h).  Compiled twice: into libstrobe, and with
 * -DSTROBE_SQLITE_EXTENSION into the loadable extension strobe_samples.so.
 */
#ifdef STROBE_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#else
#include <sqlite3.h>
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "sampleblk.h"
#include "samplevt.h"

#define NR_VCOLS	(1 + SAMPLEBLK_COLS)	/* session_id, then sampleblk_col */

/* What a constraint handed to xFilter is, 4 bits per argv slot of idxNum. */
enum {
	K_NONE, K_ROW_EQ, K_ROW_GT, K_ROW_GE, K_ROW_LT, K_ROW_LE, K_SESSION,
	K_TIME_EQ, K_TIME_GT, K_TIME_GE, K_TIME_LT, K_TIME_LE,
};
#define MAX_ARGS	7

struct vt {
	sqlite3_vtab base;
	sqlite3 *db;
	struct samplevt_hook *hook;	/* NULL: none */
	/* rows INSERTed with consecutive rowids, not yet a block (see
	 * vt_update): stored before any read, change or commit */
	struct sampleblk_row *pend;
	int64_t pend_first, pend_session;
	size_t pend_nr;
};

static int pend_flush(struct vt *t);

struct cursor {
	sqlite3_vtab_cursor base;
	sqlite3_stmt *blocks;		/* the blocks that may hold matching rows */
	int64_t row_lo, row_hi;		/* rowid range asked for */
	int64_t first_row, session_id;	/* the current block */
	size_t nr, i;			/* its rows, and the current one */
	int eof;
	struct sampleblk_row rows[SAMPLEBLK_MAX];
};

static int vt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
		      sqlite3_vtab **out, char **err)
{
	struct vt *t;
	int rc;

	rc = sqlite3_declare_vtab(db, "CREATE TABLE x(session_id INTEGER, time_ns INTEGER, "
				  "tsc INTEGER, cpu INTEGER, pid INTEGER, tid INTEGER, "
				  "comm_id INTEGER, binary_id INTEGER, offset INTEGER, "
				  "flags INTEGER, c0 INTEGER, c1 INTEGER, c2 INTEGER, "
				  "c3 INTEGER, c4 INTEGER, c5 INTEGER, c6 INTEGER, c7 INTEGER, "
				  "period INTEGER, stack_id INTEGER)");
	if (rc != SQLITE_OK)
		return rc;
	t = sqlite3_malloc(sizeof(*t));
	if (!t)
		return SQLITE_NOMEM;
	memset(t, 0, sizeof(*t));
	t->db = db;
	t->hook = aux;
	*out = &t->base;
	return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(((struct vt *)vt)->pend);
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int constraint_kind(int col, unsigned char op)
{
	static const struct { unsigned char op; int row, time; } ops[] = {
		{ SQLITE_INDEX_CONSTRAINT_EQ, K_ROW_EQ, K_TIME_EQ },
		{ SQLITE_INDEX_CONSTRAINT_GT, K_ROW_GT, K_TIME_GT },
		{ SQLITE_INDEX_CONSTRAINT_GE, K_ROW_GE, K_TIME_GE },
		{ SQLITE_INDEX_CONSTRAINT_LT, K_ROW_LT, K_TIME_LT },
		{ SQLITE_INDEX_CONSTRAINT_LE, K_ROW_LE, K_TIME_LE },
	};

	if (col == 0)
		return op == SQLITE_INDEX_CONSTRAINT_EQ ? K_SESSION : K_NONE;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (ops[i].op == op)
			return col < 0 ? ops[i].row : col == 1 + SB_TIME_NS ? ops[i].time : K_NONE;
	return K_NONE;
}

/*
 * Every usable constraint on rowid, session_id or time_ns goes to xFilter
 * (argv k+1, its kind in bits 4k..4k+3 of idxNum).  None is omitted:
 * xFilter only narrows what is read, SQLite checks each row, so a value of
 * another type (a text, a real) cannot make a row go missing.
 */
static int vt_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	int n = 0, idx = 0, narrow = 0;

	for (int i = 0; i < info->nConstraint && n < MAX_ARGS; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];
		int kind;

		if (!c->usable)
			continue;
		kind = constraint_kind(c->iColumn, c->op);
		if (kind == K_NONE)
			continue;
		info->aConstraintUsage[i].argvIndex = ++n;
		idx |= kind << (4 * (n - 1));
		narrow |= kind == K_ROW_EQ ? 3 : kind <= K_ROW_GE ? 1 : kind <= K_ROW_LE ? 2 :
			  kind == K_SESSION ? 4 : 8;
	}
	info->idxNum = idx;
	if (info->nOrderBy == 1 && info->aOrderBy[0].iColumn == -1 && !info->aOrderBy[0].desc)
		info->orderByConsumed = 1;
	/* a rowid range is cheapest, then a session, then a time range */
	info->estimatedRows = (narrow & 3) == 3 ? 1000 : narrow & 3 ? 100000 :
			      narrow & 4 ? 1000000 : 10000000;
	info->estimatedCost = (double)info->estimatedRows * (narrow & 8 ? 0.5 : 1.0);
	return SQLITE_OK;
}

static int vt_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	struct cursor *c = sqlite3_malloc(sizeof(*c));

	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, offsetof(struct cursor, rows));
	*out = &c->base;
	return SQLITE_OK;
}

static int vt_close(sqlite3_vtab_cursor *cur)
{
	struct cursor *c = (struct cursor *)cur;

	sqlite3_finalize(c->blocks);
	sqlite3_free(c);
	return SQLITE_OK;
}

static int vt_error(struct cursor *c, int rc, const char *msg)
{
	struct vt *t = (struct vt *)c->base.pVtab;

	sqlite3_free(t->base.zErrMsg);
	t->base.zErrMsg = sqlite3_mprintf("%s", msg);
	return rc;
}

/* Load the next block with rows in [row_lo, row_hi]; eof when none. */
static int next_block(struct cursor *c)
{
	struct vt *t = (struct vt *)c->base.pVtab;

	for (;;) {
		int64_t first;
		int64_t nr;
		int rc = sqlite3_step(c->blocks);

		if (rc == SQLITE_DONE) {
			c->eof = 1;
			return SQLITE_OK;
		}
		if (rc != SQLITE_ROW)
			return vt_error(c, rc, sqlite3_errmsg(t->db));
		first = sqlite3_column_int64(c->blocks, 0);
		nr = sqlite3_column_int64(c->blocks, 2);
		if (nr < 1 || nr > SAMPLEBLK_MAX) {
			char msg[160];

			snprintf(msg, sizeof(msg), "sample block at rowid %lld is malformed "
				 "(%lld rows)", (long long)first, (long long)nr);
			return vt_error(c, SQLITE_CORRUPT, msg);
		}
		if (first + nr - 1 < c->row_lo)
			continue;	/* ends before the range */
		if (sampleblk_decode(sqlite3_column_blob(c->blocks, 3),
				     (size_t)sqlite3_column_bytes(c->blocks, 3), (size_t)nr,
				     c->rows)) {
			char msg[160];

			snprintf(msg, sizeof(msg), "sample block at rowid %lld is malformed",
				 (long long)first);
			return vt_error(c, SQLITE_CORRUPT, msg);
		}
		if (t->hook && t->hook->fn)
			t->hook->fn(t->hook->arg, nr);
		c->first_row = first;
		c->session_id = sqlite3_column_int64(c->blocks, 1);
		c->nr = (size_t)nr;
		c->i = c->row_lo > first ? (size_t)(c->row_lo - first) : 0;
		if (c->i < c->nr && first + (int64_t)c->i <= c->row_hi)
			return SQLITE_OK;
		c->eof = 1;	/* blocks come in rowid order: none further fits */
		return SQLITE_OK;
	}
}

static int vt_filter(sqlite3_vtab_cursor *cur, int idx, const char *idx_str, int argc,
		     sqlite3_value **argv)
{
	struct cursor *c = (struct cursor *)cur;
	struct vt *t = (struct vt *)cur->pVtab;
	int64_t lo = INT64_MIN, hi = INT64_MAX, tlo = INT64_MIN, thi = INT64_MAX, session = 0;
	int has_session = 0, rc;
	const char *sql;

	rc = pend_flush(t);
	if (rc != SQLITE_OK)
		return rc;

	for (int k = 0; k < argc && k < MAX_ARGS; k++) {
		int kind = (idx >> (4 * k)) & 15;
		int64_t v;

		if (sqlite3_value_type(argv[k]) != SQLITE_INTEGER)
			continue;	/* SQLite's own check decides */
		v = sqlite3_value_int64(argv[k]);
		switch (kind) {
		case K_ROW_EQ: lo = lo > v ? lo : v; hi = hi < v ? hi : v; break;
		case K_ROW_GT: if (v == INT64_MAX) hi = INT64_MIN; else if (v + 1 > lo) lo = v + 1; break;
		case K_ROW_GE: if (v > lo) lo = v; break;
		case K_ROW_LT: if (v == INT64_MIN) lo = INT64_MAX; else if (v - 1 < hi) hi = v - 1; break;
		case K_ROW_LE: if (v < hi) hi = v; break;
		case K_SESSION: session = v; has_session = 1; break;
		case K_TIME_EQ: tlo = tlo > v ? tlo : v; thi = thi < v ? thi : v; break;
		case K_TIME_GT: case K_TIME_GE: if (v > tlo) tlo = v; break;
		case K_TIME_LT: case K_TIME_LE: if (v < thi) thi = v; break;
		}
	}
	c->row_lo = lo;
	c->row_hi = hi;
	c->eof = 0;
	c->nr = c->i = 0;
	sqlite3_finalize(c->blocks);
	c->blocks = NULL;
	if (lo > hi || tlo > thi) {
		c->eof = 1;
		return SQLITE_OK;
	}
	/* a block's first row is at most SAMPLEBLK_MAX - 1 before row_lo */
	sql = has_session ?
	      "SELECT first_row,session_id,nr,data FROM main.sample_blocks "
	      "WHERE session_id=?5 AND first_row BETWEEN ?1 AND ?2 "
	      "AND max_ns>=?3 AND min_ns<=?4 ORDER BY first_row" :
	      "SELECT first_row,session_id,nr,data FROM main.sample_blocks "
	      "WHERE first_row BETWEEN ?1 AND ?2 "
	      "AND max_ns>=?3 AND min_ns<=?4 ORDER BY first_row";
	rc = sqlite3_prepare_v3(t->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &c->blocks, NULL);
	if (rc != SQLITE_OK)
		return vt_error(c, rc, sqlite3_errmsg(t->db));
	sqlite3_bind_int64(c->blocks, 1, lo < INT64_MIN + SAMPLEBLK_MAX ? INT64_MIN :
					 lo - (SAMPLEBLK_MAX - 1));
	sqlite3_bind_int64(c->blocks, 2, hi);
	sqlite3_bind_int64(c->blocks, 3, tlo);
	sqlite3_bind_int64(c->blocks, 4, thi);
	if (has_session)
		sqlite3_bind_int64(c->blocks, 5, session);
	return next_block(c);
}

static int vt_next(sqlite3_vtab_cursor *cur)
{
	struct cursor *c = (struct cursor *)cur;

	if (++c->i < c->nr) {
		if (c->first_row + (int64_t)c->i > c->row_hi)
			c->eof = 1;
		return SQLITE_OK;
	}
	return next_block(c);
}

static int vt_eof(sqlite3_vtab_cursor *cur)
{
	return ((struct cursor *)cur)->eof;
}

static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct cursor *c = (struct cursor *)cur;
	const struct sampleblk_row *r = &c->rows[c->i];

	if (col == 0)
		sqlite3_result_int64(ctx, c->session_id);
	else if (col > 0 && col < NR_VCOLS && !(r->null & (1u << (col - 1))))
		sqlite3_result_int64(ctx, r->v[col - 1]);
	else
		sqlite3_result_null(ctx);
	return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	struct cursor *c = (struct cursor *)cur;

	*rowid = c->first_row + (int64_t)c->i;
	return SQLITE_OK;
}

/*
 * Writes.  strobed never writes through here (it appends whole blocks and
 * removes a session's blocks); this is for tests and for people fixing a
 * database by hand.  A change rewrites the block that holds the row: an
 * UPDATE in place, a DELETE splitting the block in two around the row so
 * that every other row keeps its rowid.  INSERTs of one session with
 * consecutive rowids gather in t->pend, up to a block, which is stored
 * before the next read of the table (xFilter), change, or commit (xSync).  SQLite collects the rows of a
 * virtual table's UPDATE or DELETE before the first change, so the
 * statement's own scan never sees a block rewritten under it.
 */
struct blk {
	int64_t first, session, nr;
	struct sampleblk_row *rows;
};

static int run(struct vt *t, const char *sql, sqlite3_stmt **out)
{
	int rc = sqlite3_prepare_v2(t->db, sql, -1, out, NULL);

	if (rc != SQLITE_OK) {
		sqlite3_free(t->base.zErrMsg);
		t->base.zErrMsg = sqlite3_mprintf("%s", sqlite3_errmsg(t->db));
	}
	return rc;
}

/* The block holding rowid into b (b->nr 0: none). */
static int blk_find(struct vt *t, int64_t rowid, struct blk *b)
{
	sqlite3_stmt *st;
	int rc = run(t, "SELECT first_row,session_id,nr,data FROM main.sample_blocks "
		     "WHERE first_row<=?1 ORDER BY first_row DESC LIMIT 1", &st);

	b->nr = 0;
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, rowid);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_int64(st, 0) + sqlite3_column_int64(st, 2) > rowid) {
		b->first = sqlite3_column_int64(st, 0);
		b->session = sqlite3_column_int64(st, 1);
		b->nr = sqlite3_column_int64(st, 2);
		if (b->nr < 1 || b->nr > SAMPLEBLK_MAX ||
		    sampleblk_decode(sqlite3_column_blob(st, 3), (size_t)sqlite3_column_bytes(st, 3),
				     (size_t)b->nr, b->rows)) {
			sqlite3_finalize(st);
			return SQLITE_CORRUPT;
		}
	}
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
	sqlite3_finalize(st);
	return rc;
}

/* Store rows[0..nr) as the block starting at first (nothing when nr 0). */
static int blk_put(struct vt *t, int64_t first, int64_t session,
		   const struct sampleblk_row *rows, int64_t nr)
{
	sqlite3_stmt *st;
	uint8_t *out;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	int rc;

	if (!nr)
		return SQLITE_OK;
	out = sqlite3_malloc64(sampleblk_bound((size_t)nr));
	if (!out)
		return SQLITE_NOMEM;
	for (int64_t i = 0; i < nr; i++) {
		int64_t v = rows[i].null & (1u << SB_TIME_NS) ? 0 : rows[i].v[SB_TIME_NS];

		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	rc = run(t, "INSERT INTO main.sample_blocks VALUES(?1,?2,?3,?4,?5,?6)", &st);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, first);
		sqlite3_bind_int64(st, 2, session);
		sqlite3_bind_int64(st, 3, nr);
		sqlite3_bind_int64(st, 4, lo);
		sqlite3_bind_int64(st, 5, hi);
		sqlite3_bind_blob(st, 6, out, (int)sampleblk_encode(rows, (size_t)nr, out),
				  SQLITE_STATIC);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(t->db);
		sqlite3_finalize(st);
	}
	sqlite3_free(out);
	return rc;
}

static int blk_remove(struct vt *t, int64_t first)
{
	sqlite3_stmt *st;
	int rc = run(t, "DELETE FROM main.sample_blocks WHERE first_row=?1", &st);

	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, first);
	rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(t->db);
	sqlite3_finalize(st);
	return rc;
}

/* argv[2..] (session_id, then the sample columns) into *r. */
static int row_from(sqlite3_value **argv, int64_t *session, struct sampleblk_row *r)
{
	if (sqlite3_value_type(argv[2]) != SQLITE_INTEGER)
		return SQLITE_CONSTRAINT;
	*session = sqlite3_value_int64(argv[2]);
	r->null = 0;
	for (int c = 0; c < SAMPLEBLK_COLS; c++) {
		sqlite3_value *v = argv[3 + c];

		r->v[c] = 0;
		if (sqlite3_value_type(v) == SQLITE_NULL)
			r->null |= 1u << c;
		else if (sqlite3_value_numeric_type(v) == SQLITE_INTEGER)
			r->v[c] = sqlite3_value_int64(v);
		else
			return SQLITE_MISMATCH;	/* the columns hold integers only */
	}
	return SQLITE_OK;
}

static int pend_flush(struct vt *t)
{
	int rc;

	if (!t->pend_nr)
		return SQLITE_OK;
	rc = blk_put(t, t->pend_first, t->pend_session, t->pend, (int64_t)t->pend_nr);
	t->pend_nr = 0;
	return rc;
}

static int vt_sync(sqlite3_vtab *vt)
{
	return pend_flush((struct vt *)vt);
}

static int vt_begin(sqlite3_vtab *vt)
{
	return SQLITE_OK;
}

static int vt_rollback(sqlite3_vtab *vt)
{
	((struct vt *)vt)->pend_nr = 0;
	return SQLITE_OK;
}

static int vt_update(sqlite3_vtab *vt, int argc, sqlite3_value **argv, sqlite3_int64 *rowid)
{
	struct vt *t = (struct vt *)vt;
	struct blk b;
	int64_t old = 0, session = 0;
	struct sampleblk_row row;
	int rc;

	if (sqlite3_value_type(argv[0]) != SQLITE_NULL && (rc = pend_flush(t)) != SQLITE_OK)
		return rc;
	b.rows = sqlite3_malloc64(SAMPLEBLK_MAX * sizeof(*b.rows));
	if (!b.rows)
		return SQLITE_NOMEM;
	if (argc > 1 && (rc = row_from(argv, &session, &row)) != SQLITE_OK)
		goto out;
	if (sqlite3_value_type(argv[0]) != SQLITE_NULL) {
		/* DELETE or UPDATE of the row at rowid argv[0] */
		old = sqlite3_value_int64(argv[0]);
		rc = blk_find(t, old, &b);
		if (rc != SQLITE_OK || !b.nr)
			goto out;
		if (argc > 1 && sqlite3_value_int64(argv[1]) == old && session == b.session) {
			b.rows[old - b.first] = row;	/* in place */
			if ((rc = blk_remove(t, b.first)) == SQLITE_OK)
				rc = blk_put(t, b.first, b.session, b.rows, b.nr);
			goto out;
		}
		if ((rc = blk_remove(t, b.first)) != SQLITE_OK ||
		    (rc = blk_put(t, b.first, b.session, b.rows, old - b.first)) != SQLITE_OK ||
		    (rc = blk_put(t, old + 1, b.session, b.rows + (old - b.first) + 1,
				  b.first + b.nr - old - 1)) != SQLITE_OK || argc == 1)
			goto out;
	}
	/* INSERT, or the new row of an UPDATE that moves it */
	if (sqlite3_value_type(argv[1]) == SQLITE_NULL) {
		sqlite3_stmt *st;

		if (t->pend_nr) {
			*rowid = t->pend_first + (int64_t)t->pend_nr;
		} else {
			if ((rc = run(t, "SELECT coalesce(max(first_row+nr),1) FROM "
				      "main.sample_blocks WHERE first_row=(SELECT max(first_row) "
				      "FROM main.sample_blocks)", &st)) != SQLITE_OK)
				goto out;
			sqlite3_step(st);
			*rowid = sqlite3_column_int64(st, 0);
			sqlite3_finalize(st);
		}
	} else if (sqlite3_value_type(argv[1]) == SQLITE_INTEGER) {
		*rowid = sqlite3_value_int64(argv[1]);
	} else {
		rc = SQLITE_MISMATCH;
		goto out;
	}
	if (t->pend_nr && *rowid >= t->pend_first && *rowid < t->pend_first + (int64_t)t->pend_nr) {
		rc = SQLITE_CONSTRAINT;	/* that rowid is taken */
		goto out;
	}
	if ((rc = blk_find(t, *rowid, &b)) != SQLITE_OK)
		goto out;
	if (b.nr) {
		rc = SQLITE_CONSTRAINT;
		goto out;
	}
	if (t->pend_nr && (*rowid != t->pend_first + (int64_t)t->pend_nr ||
			   session != t->pend_session || t->pend_nr == SAMPLEBLK_MAX) &&
	    (rc = pend_flush(t)) != SQLITE_OK)
		goto out;
	if (!t->pend) {
		t->pend = sqlite3_malloc64(SAMPLEBLK_MAX * sizeof(*t->pend));
		if (!t->pend) {
			rc = SQLITE_NOMEM;
			goto out;
		}
	}
	if (!t->pend_nr) {
		t->pend_first = *rowid;
		t->pend_session = session;
	}
	t->pend[t->pend_nr++] = row;
	rc = SQLITE_OK;
out:
	sqlite3_free(b.rows);
	return rc;
}

static const sqlite3_module samplevt_module = {
	.iVersion = 0,
	.xCreate = NULL,	/* eponymous only: never in the schema */
	.xConnect = vt_connect,
	.xBestIndex = vt_best_index,
	.xDisconnect = vt_disconnect,
	.xDestroy = vt_disconnect,
	.xOpen = vt_open,
	.xClose = vt_close,
	.xFilter = vt_filter,
	.xNext = vt_next,
	.xEof = vt_eof,
	.xColumn = vt_column,
	.xRowid = vt_rowid,
	.xUpdate = vt_update,
	.xBegin = vt_begin,
	.xSync = vt_sync,
	.xCommit = vt_begin,
	.xRollback = vt_rollback,
};

int samplevt_register_hook(sqlite3 *db, struct samplevt_hook *hook)
{
	return sqlite3_create_module(db, "samples", &samplevt_module, hook);
}

int samplevt_register(sqlite3 *db)
{
	return samplevt_register_hook(db, NULL);
}

#ifdef STROBE_SQLITE_EXTENSION
/* The entry point sqlite3_load_extension() looks for by default. */
int sqlite3_extension_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
	SQLITE_EXTENSION_INIT2(api);
	return samplevt_register(db);
}
#endif
