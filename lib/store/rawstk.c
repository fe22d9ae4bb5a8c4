/*
 * rawstk.c - DB.stacks, the root-only file of the raw stack copies (see
 * rawstk.h).
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "dblock.h"
#include "rawstk.h"

/* As raw_stacks of schema 14 (doc/SCHEMA.md): each sample's struct
 * strobe_ustack, by the sample's session and rowid. */
static const char rawstk_table[] =
	"CREATE TABLE IF NOT EXISTS rawstk.raw_stacks (\n"
	"	session_id	INTEGER NOT NULL,\n"
	"	sample_row	INTEGER NOT NULL,\n"
	"	ustack		BLOB NOT NULL,\n"
	"	PRIMARY KEY (session_id, sample_row)\n"
	") WITHOUT ROWID";

static int exec(sqlite3 *sql, const char *path, const char *what, const char *q,
		struct error *e)
{
	char *msg = NULL;

	if (sqlite3_exec(sql, q, NULL, NULL, &msg) != SQLITE_OK) {
		error_set(e, "%s: %s: %s", path, what, msg ? msg : sqlite3_errmsg(sql));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int int_pragma(sqlite3 *sql, const char *q, int64_t *v)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(sql, q, -1, &st, NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(st);
	*v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

int rawstk_attach(sqlite3 *sql, const char *db_path, struct error *e)
{
	char *path = xasprintf("%s.stacks", db_path);
	struct stat held, now;
	sqlite3_stmt *st;
	int64_t app, tables;
	int fd, rc, attached = 0, ret = -1;

	fd = dblock_own_file(path, "the raw stacks file", 1, e);
	if (fd < 0)
		goto out;
	if (fstat(fd, &held) < 0) {
		error_set(e, "cannot stat the raw stacks file %s: %s", path, strerror(errno));
		goto out;
	}
	rc = sqlite3_prepare_v2(sql, "ATTACH ?1 AS " RAWSTK_SCHEMA, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
	}
	if (rc != SQLITE_DONE) {
		error_set(e, "cannot open the raw stacks file %s: %s", path, sqlite3_errmsg(sql));
		goto out;
	}
	attached = 1;
	/* SQLite opened the path again: it must be the file checked above */
	if (lstat(path, &now) < 0 || now.st_dev != held.st_dev || now.st_ino != held.st_ino) {
		error_set(e, "the raw stacks file %s was replaced while strobed opened it: "
			  "remove it, or choose another --db", path);
		goto out;
	}
	if (int_pragma(sql, "PRAGMA rawstk.application_id", &app) < 0 ||
	    int_pragma(sql, "SELECT count(*) FROM rawstk.sqlite_master", &tables) < 0) {
		error_set(e, "%s is corrupt or not an SQLite database (%s): move it away",
			  path, sqlite3_errmsg(sql));
		goto out;
	}
	if (app != RAWSTK_APPLICATION_ID && (app != 0 || tables != 0)) {
		error_set(e, "%s is not strobe's raw stacks file (it belongs to another "
			  "program): move it away, or choose another --db", path);
		goto out;
	}
	if (exec(sql, path, "setting it up", "PRAGMA rawstk.journal_mode=WAL;"
		 "PRAGMA rawstk.synchronous=NORMAL", e) < 0)
		goto out;
	if (app == 0) {
		/* the table and the mark at once: a file with a table is ours */
		char *q = xasprintf("BEGIN; %s; PRAGMA rawstk.application_id=%d; COMMIT",
				    rawstk_table, RAWSTK_APPLICATION_ID);

		rc = exec(sql, path, "creating it", q, e);
		free(q);
		if (rc < 0) {
			sqlite3_exec(sql, "ROLLBACK", NULL, NULL, NULL);
			goto out;
		}
	}
	ret = 0;
out:
	if (ret < 0 && attached)
		sqlite3_exec(sql, "DETACH " RAWSTK_SCHEMA, NULL, NULL, NULL);
	if (fd >= 0)
		close(fd);
	free(path);
	return ret;
}
