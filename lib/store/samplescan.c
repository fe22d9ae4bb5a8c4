/*
 * samplescan.c - a session's raw samples from sample_blocks (see
 * samplescan.h).
 */
#include <stdlib.h>
#include <string.h>
#include "progress.h"
#include "samplescan.h"
#include "util.h"

struct sample_scan {
	struct db *db;
	struct sample_scan_filter f;
	sqlite3_stmt *st;
	struct sampleblk_row *rows;	/* the current block, decoded */
	size_t nr, i;
	int64_t first;
	uint32_t cols;			/* columns decoded */
	struct sample_scan_row cur;
	struct sampleblk_row sorted;	/* the current row of the sorted query */
	uint64_t nsorted;		/* its rows returned so far */
};

uint64_t sample_scan_total(struct db *db, const struct sample_scan_filter *f)
{
	sqlite3_stmt *st;
	uint64_t n = 0;

	if (f->row_lo > f->row_hi)
		return 0;
	if (sqlite3_prepare_v2(db_sqlite(db), "SELECT sum(nr) FROM sample_blocks WHERE "
			       "session_id=?1 AND first_row BETWEEN ?2 AND ?3 AND "
			       "first_row+nr-1>=?4 AND max_ns>=?5 AND min_ns<=?6", -1, &st, NULL))
		return 0;
	sqlite3_bind_int64(st, 1, f->session_id);
	sqlite3_bind_int64(st, 2, f->row_lo < INT64_MIN + SAMPLEBLK_MAX ? INT64_MIN :
			   f->row_lo - (SAMPLEBLK_MAX - 1));
	sqlite3_bind_int64(st, 3, f->row_hi);
	sqlite3_bind_int64(st, 4, f->row_lo);
	sqlite3_bind_int64(st, 5, f->has_time ? f->time_lo : INT64_MIN);
	sqlite3_bind_int64(st, 6, f->has_time ? f->time_hi : INT64_MAX);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0)
		n = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

uint64_t sample_scan_session_total(struct db *db, const struct db_session *s, int has_from,
				   int64_t from_ns, int has_to, int64_t to_ns)
{
	struct sample_scan_filter f = {
		.session_id = s->id, .has_time = has_from || has_to,
		.time_lo = has_from ? s->start_ns + from_ns : INT64_MIN,
		.time_hi = has_to ? s->start_ns + to_ns : INT64_MAX,
	};

	sample_scan_range(s, &f.row_lo, &f.row_hi);
	return sample_scan_total(db, &f);
}

void sample_scan_range(const struct db_session *s, int64_t *lo, int64_t *hi)
{
	*lo = INT64_MIN;
	*hi = INT64_MAX;
	if (s->first_sample > 0 && s->last_sample >= s->first_sample && db_session_complete(s)) {
		*lo = s->first_sample;
		*hi = s->last_sample;
	} else if (s->first_sample > 0) {
		*lo = s->first_sample;
	} else if (db_session_complete(s)) {
		*lo = 1;
		*hi = 0;
	}
}

static int open_sorted(struct sample_scan *sc, struct error *e)
{
	const struct sample_scan_filter *f = &sc->f;
	struct sbuf sql = { 0 };
	int rc;

	sbuf_addf(&sql, "SELECT rowid,time_ns,tsc,cpu,pid,tid,comm_id,binary_id,offset,flags,"
		  "c0,c1,c2,c3,c4,c5,c6,c7,period,stack_id FROM samples WHERE session_id=?1 AND "
		  "rowid BETWEEN ?2 AND ?3");
	if (f->has_time)
		sbuf_addf(&sql, " AND time_ns BETWEEN ?4 AND ?5");
	if (f->has_pid)
		sbuf_addf(&sql, " AND pid=?6");
	if (f->has_comm)
		sbuf_addf(&sql, " AND comm_id=?7");
	for (size_t i = 0; i < f->nbinaries; i++)
		sbuf_addf(&sql, "%s%lld", i ? "," : " AND binary_id IN (", (long long)f->binaries[i]);
	if (f->nbinaries)
		sbuf_addf(&sql, ")");
	sbuf_addf(&sql, " ORDER BY time_ns,rowid");
	rc = sqlite3_prepare_v2(db_sqlite(sc->db), sql.s, -1, &sc->st, NULL);
	free(sql.s);
	if (rc)
		return db_sql_error(sc->db, e, "reading samples");
	sqlite3_bind_int64(sc->st, 4, f->time_lo);
	sqlite3_bind_int64(sc->st, 5, f->time_hi);
	sqlite3_bind_int64(sc->st, 6, f->pid);
	sqlite3_bind_int64(sc->st, 7, f->comm_id);
	return 0;
}

struct sample_scan *sample_scan_open(struct db *db, const struct sample_scan_filter *f,
				     struct error *e)
{
	struct sample_scan *sc = xcalloc(1, sizeof(*sc));
	int64_t lo = f->row_lo;

	sc->db = db;
	sc->f = *f;
	sc->cols = f->cols ? f->cols : SAMPLEBLK_ALL;
	if (f->has_time)
		sc->cols |= 1u << SB_TIME_NS;
	if (f->has_pid)
		sc->cols |= 1u << SB_PID;
	if (f->has_comm)
		sc->cols |= 1u << SB_COMM_ID;
	if (f->nbinaries)
		sc->cols |= 1u << SB_BINARY_ID;
	if (f->has_keep)
		sc->cols |= 1u << SB_TIME_NS;
	if (f->by_time) {
		if (open_sorted(sc, e) < 0)
			goto fail;
	} else {
		/* a block's first row is at most SAMPLEBLK_MAX - 1 before row_lo */
		if (sqlite3_prepare_v2(db_sqlite(db), "SELECT first_row,nr,data FROM sample_blocks "
				       "WHERE session_id=?1 AND first_row BETWEEN ?2 AND ?3 AND "
				       "max_ns>=?4 AND min_ns<=?5 ORDER BY first_row", -1, &sc->st,
				       NULL)) {
			db_sql_error(db, e, "reading samples");
			goto fail;
		}
		sqlite3_bind_int64(sc->st, 4, f->has_time ? f->time_lo : INT64_MIN);
		sqlite3_bind_int64(sc->st, 5, f->has_time ? f->time_hi : INT64_MAX);
		lo = lo < INT64_MIN + SAMPLEBLK_MAX ? INT64_MIN : lo - (SAMPLEBLK_MAX - 1);
		sc->rows = xmalloc(SAMPLEBLK_MAX * sizeof(*sc->rows));
	}
	sqlite3_bind_int64(sc->st, 1, f->session_id);
	sqlite3_bind_int64(sc->st, 2, f->by_time ? f->row_lo : lo);
	sqlite3_bind_int64(sc->st, 3, f->row_hi);
	return sc;
fail:
	sample_scan_close(sc);
	return NULL;
}

/* Does row r pass the filters in C only (keep, row_keep)? */
static int row_kept(const struct sample_scan_filter *f, const struct sampleblk_row *r)
{
	if (f->has_keep) {
		size_t lo = 0, hi = f->nkeep;
		int64_t t = r->v[SB_TIME_NS];

		if (r->null & (1u << SB_TIME_NS))
			return 0;
		while (lo < hi) {	/* the first range ending at or after t */
			size_t mid = (lo + hi) / 2;

			if (f->keep[2 * mid + 1] < t)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo >= f->nkeep || f->keep[2 * lo] > t)
			return 0;
	}
	return !f->row_keep || f->row_keep(f->row_ctx, r);
}

/* Does row r pass the filters? */
static int row_passes(const struct sample_scan_filter *f, int64_t rowid,
		      const struct sampleblk_row *r)
{
	if (rowid < f->row_lo || rowid > f->row_hi)
		return 0;
	if (f->has_time && ((r->null & (1u << SB_TIME_NS)) || r->v[SB_TIME_NS] < f->time_lo ||
			    r->v[SB_TIME_NS] > f->time_hi))
		return 0;
	if (f->has_pid && ((r->null & (1u << SB_PID)) || r->v[SB_PID] != f->pid))
		return 0;
	if (f->has_comm && ((r->null & (1u << SB_COMM_ID)) || r->v[SB_COMM_ID] != f->comm_id))
		return 0;
	if (f->nbinaries) {
		size_t lo = 0, hi = f->nbinaries;
		int64_t v = r->v[SB_BINARY_ID];

		if (r->null & (1u << SB_BINARY_ID))
			return 0;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (f->binaries[mid] < v)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo >= f->nbinaries || f->binaries[lo] != v)
			return 0;
	}
	return row_kept(f, r);
}

static int next_sorted(struct sample_scan *sc, struct error *e)
{
	struct sampleblk_row *r = &sc->sorted;
	int rc = sqlite3_step(sc->st);

	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return db_sql_error(sc->db, e, "reading samples");
	/* the first step read and sorted every row (the progress counted
	 * the blocks): then the rows returned, as many as were read but
	 * for those of the edge blocks out of the time range, unless rows
	 * are filtered (the total is not known then) */
	if (!sc->nsorted++) {
		struct progress *p = db_progress(sc->db);

		if (p)
			progress_phase(p, sc->f.has_pid || sc->f.has_comm || sc->f.nbinaries ? 0 :
				       p->done, "sorted samples");
	}
	progress_update(db_progress(sc->db), sc->nsorted);
	sc->cur.rowid = sqlite3_column_int64(sc->st, 0);
	sc->cur.r = r;
	r->null = 0;
	for (int c = 0; c < SAMPLEBLK_COLS; c++) {
		if (sqlite3_column_type(sc->st, 1 + c) == SQLITE_NULL)
			r->null |= 1u << c;
		r->v[c] = sqlite3_column_int64(sc->st, 1 + c);
	}
	return 1;
}

int sample_scan_next(struct sample_scan *sc, const struct sample_scan_row **row,
		     struct error *e)
{
	int rc;

	if (sc->f.by_time) {
		while ((rc = next_sorted(sc, e)) == 1 && !row_kept(&sc->f, sc->cur.r))
			;
		*row = rc == 1 ? &sc->cur : NULL;
		return rc;
	}
	for (;;) {
		int64_t first, nr;

		while (sc->i < sc->nr) {
			const struct sampleblk_row *r = &sc->rows[sc->i];
			int64_t rowid = sc->first + (int64_t)sc->i++;

			if (rowid > sc->f.row_hi)
				break;
			if (!row_passes(&sc->f, rowid, r))
				continue;
			sc->cur.rowid = rowid;
			sc->cur.r = r;
			*row = &sc->cur;
			return 1;
		}
		rc = sqlite3_step(sc->st);
		if (rc == SQLITE_DONE) {
			*row = NULL;
			sc->nr = sc->i = 0;
			return 0;
		}
		if (rc != SQLITE_ROW)
			return db_sql_error(sc->db, e, "reading samples");
		first = sqlite3_column_int64(sc->st, 0);
		nr = sqlite3_column_int64(sc->st, 1);
		if (nr < 1 || nr > SAMPLEBLK_MAX ||
		    sampleblk_decode_cols(sqlite3_column_blob(sc->st, 2),
					  (size_t)sqlite3_column_bytes(sc->st, 2), (size_t)nr,
					  sc->cols, sc->rows))
			return error_set(e, "%s: the database is corrupt: sample block at rowid %lld "
					 "is malformed; the other sessions may still be read",
					 db_path(sc->db), (long long)first);
		sc->first = first;
		sc->nr = (size_t)nr;
		sc->i = 0;
		if (first + nr - 1 >= sc->f.row_lo)	/* as sample_scan_total() counts */
			progress_add(db_progress(sc->db), (uint64_t)nr);
	}
}

void sample_scan_close(struct sample_scan *sc)
{
	if (!sc)
		return;
	sqlite3_finalize(sc->st);
	free(sc->rows);
	free(sc);
}
