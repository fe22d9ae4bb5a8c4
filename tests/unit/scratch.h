/*
 * scratch.h - what the database unit tests share: a scratch directory for
 * the whole test program (scratch_setup and scratch_teardown, given to
 * cmocka_run_group_tests; SCRATCH_NAME names it), paths in it, and
 * one-integer queries.  Header-only, included once per test program, after
 * cmocka.h, sqlite3.h and db.h; with SCRATCH_FILES_ONLY defined, the
 * directory and paths alone (no queries, no sqlite3.h or db.h needed).
 */
#ifndef STROBE_TEST_SCRATCH_H
#define STROBE_TEST_SCRATCH_H

#include <ftw.h>
#include <stdio.h>

static char dir[64];

static int scratch_rm(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int scratch_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/strobe-test-" SCRATCH_NAME "-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int scratch_teardown(void **state)
{
	(void)state;
	nftw(dir, scratch_rm, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

/* DIR/name; the last four results stay valid. */
static char *path_of(const char *name)
{
	static char p[4][128];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

#ifndef SCRATCH_FILES_ONLY
/* The first column of the first row of sql, -999 when there is none. */
static int64_t raw_int(sqlite3 *s, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -999;

	if (sqlite3_prepare_v2(s, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(s));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int64_t db_int(struct db *db, const char *sql)
{
	return raw_int(db_sqlite(db), sql);
}
#endif

#endif
