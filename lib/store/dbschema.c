/*
 * dbschema.c - the schema of the strobe database (db.h, db_int.h): whether
 * a file is ours, new, foreign or newer than this build, the whole-file
 * check before strobed writes, and the migrations from schema/NNN-*.sql
 * (embedded as schema_migrations), with the steps SQL alone cannot do.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "db_int.h"
#include "rawstk.h"

extern const char *const schema_migrations[];
extern const size_t schema_nr_migrations;

int db_schema_version(void)
{
	return (int)schema_nr_migrations;
}

/* strobed writes only into a sound file: PRAGMA quick_check reads it all. */
static int quick_check(struct db *db, struct error *e)
{
	sqlite3_stmt *st;
	char why[256] = "";
	int rc;

	rc = sqlite3_prepare_v2(db->sql, "PRAGMA quick_check(1)", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			const unsigned char *t = sqlite3_column_text(st, 0);

			if (t && strcmp((const char *)t, "ok")) {
				const char *m = (const char *)t, *hdr = "*** in database main ***\n";

				if (!strncmp(m, hdr, strlen(hdr)))
					m += strlen(hdr);
				snprintf(why, sizeof(why), "%s", m);
				for (char *c = why; *c; c++)	/* one line */
					if ((unsigned char)*c < ' ')
						*c = ' ';
			}
			rc = SQLITE_OK;
		}
		sqlite3_finalize(st);
	}
	if (rc != SQLITE_OK)
		return db_sql_error(db, e, "checking it");
	if (why[0])
		return error_set(e, "%s is corrupt (%s): strobed will not write to it; restore "
				 "it from a backup or move it away and choose another file with "
				 "--db", db->path, why);
	return 0;
}

/*
 * Schema 006: pack the rows of the old samples table (renamed samples_v5
 * by the migration) into sample_blocks, keeping their rowids, and drop it.
 * A block never spans two sessions or a gap in the rowids.
 */
static int pack_legacy_samples(struct db *db, struct error *e)
{
	sqlite3_stmt *rd = NULL, *wr = NULL;
	struct sampleblk_row *rows = xmalloc(SAMPLEBLK_MAX * sizeof(*rows));
	uint8_t *out = xmalloc(sampleblk_bound(SAMPLEBLK_MAX));
	int64_t first = 0, session = 0, lo = 0, hi = 0;
	size_t nr = 0;
	int rc, ret = -1;

	if (sqlite3_prepare_v2(db->sql, "SELECT rowid,* FROM samples_v5 ORDER BY rowid", -1,
			       &rd, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->sql, db_stmt_sql[STMT_SAMPLE], -1, &wr, NULL) != SQLITE_OK) {
		db_sql_error(db, e, "packing the samples into blocks");
		goto out;
	}
	for (;;) {
		int64_t rowid = 0, sid = 0;

		rc = sqlite3_step(rd);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			db_sql_error(db, e, "reading the old samples table");
			goto out;
		}
		if (rc == SQLITE_ROW) {
			rowid = sqlite3_column_int64(rd, 0);
			sid = sqlite3_column_int64(rd, 1);
		}
		if (nr && (rc == SQLITE_DONE || nr == SAMPLEBLK_MAX || sid != session ||
			   rowid != first + (int64_t)nr)) {
			if (db_block_write(db, wr, first, session, rows, nr, lo, hi, out, e))
				goto out;
			nr = 0;
		}
		if (rc == SQLITE_DONE)
			break;
		if (!nr) {
			first = rowid;
			session = sid;
		}
		/* no period before schema 8, no stack before 14 */
		rows[nr].null = 1u << SB_PERIOD | 1u << SB_STACK;
		rows[nr].v[SB_PERIOD] = rows[nr].v[SB_STACK] = 0;
		for (int c = 0; c < SB_PERIOD; c++) {
			if (sqlite3_column_type(rd, 2 + c) == SQLITE_NULL)
				rows[nr].null |= 1u << c;
			rows[nr].v[c] = sqlite3_column_int64(rd, 2 + c);
		}
		if (!nr || rows[nr].v[SB_TIME_NS] < lo)
			lo = rows[nr].v[SB_TIME_NS];
		if (!nr || rows[nr].v[SB_TIME_NS] > hi)
			hi = rows[nr].v[SB_TIME_NS];
		nr++;
	}
	ret = db_exec(db, "DROP TABLE samples_v5", e);
out:
	sqlite3_finalize(rd);
	sqlite3_finalize(wr);
	free(rows);
	free(out);
	return ret;
}

/* PRAGMA name=v */
static int pragma_set(struct db *db, const char *name, int v, struct error *e)
{
	char sql[96];

	snprintf(sql, sizeof(sql), "PRAGMA %s=%d", name, v);
	return db_exec(db, sql, e);
}

int db_check_schema(struct db *db, enum db_mode mode, struct error *e)
{
	int64_t app, ver, tables;
	int want = db_schema_version();

	if (db_pragma_int(db, "PRAGMA application_id", &app, e) ||
	    db_pragma_int(db, "PRAGMA user_version", &ver, e) ||
	    db_pragma_int(db, "SELECT count(*) FROM sqlite_master", &tables, e))
		return -1;
	if (app != DB_APPLICATION_ID && (app != 0 || tables != 0))
		return error_set(e, "%s is not a strobe database (it belongs to another "
				 "program): refusing to touch it; choose another file with --db",
				 db->path);
	if (app == 0 && mode == DB_READ)
		return error_set(e, "%s is empty, not a strobe database: record a session "
				 "first (strobe record -- CMD)", db->path);
	if (ver > want)
		return error_set(e, "%s has schema version %lld, newer than this strobe "
				 "(%d): upgrade strobe to read it; the file was not changed",
				 db->path, (long long)ver, want);
	if (mode == DB_WRITE && tables != 0 && quick_check(db, e))	/* not DB_WRITE_TRUSTED */
		return -1;
	/* the raw stack copies' own file (rawstk.h), before any migration:
	 * schema 17 moves them there */
	if (mode != DB_READ && rawstk_attach(db->sql, db->path, e))
		return -1;
	if (ver == want)
		return 0;
	if (mode == DB_READ)
		return error_set(e, "%s has schema version %lld and needs migrating to %d: "
				 "start strobed on it once (strobed --db %s)", db->path,
				 (long long)ver, want, db->path);
	if (db_exec(db, "BEGIN IMMEDIATE", e))
		return -1;
	for (int v = (int)ver; v < want; v++) {
		/* 17 empties main.raw_stacks: its rows go to DB.stacks first */
		if ((v + 1 == 17 &&
		     db_exec(db, "INSERT OR REPLACE INTO rawstk.raw_stacks(session_id,"
			     "sample_row,ustack) SELECT session_id,sample_row,ustack FROM "
			     "main.raw_stacks", e)) ||
		    db_exec(db, schema_migrations[v], e) ||
		    (v + 1 == 6 && pack_legacy_samples(db, e))) {
			db_rollback(db);
			return error_prefix(e, "migration to schema version %d failed", v + 1);
		}
		if (pragma_set(db, "user_version", v + 1, e)) {
			db_rollback(db);
			return -1;
		}
	}
	if (pragma_set(db, "application_id", DB_APPLICATION_ID, e)) {
		db_rollback(db);
		return -1;
	}
	if (db_commit(db, e))
		return -1;
	/* schema 17 zeroed the raw stacks' pages in the WAL: into the file,
	 * which members read, now (a reader's snapshot may delay it) */
	if (ver < 17 && tables != 0)
		sqlite3_wal_checkpoint_v2(db->sql, "main", SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	return 0;
}
