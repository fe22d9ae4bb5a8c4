/*
 * test_sampleblk.c - packed sample blocks (lib/store/sampleblk.c) and the samples
 * virtual table over them (lib/store/samplevt.c): round trips, every malformed
 * block refused, rowid and session ranges, the schema-006 packing of an
 * old samples table.
 */
#include "config.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <ftw.h>
#include <sqlite3.h>
#include "db.h"
#include "sampleblk.h"
#include "samplescan.h"
#define SCRATCH_NAME "sampleblk"
#include "scratch.h"

static uint64_t rnd_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void fill_rows(struct sampleblk_row *rows, size_t nr)
{
	static const int64_t extremes[] = { 0, 1, -1, INT64_MAX, INT64_MIN, 127, 128, -64, -65 };

	for (size_t i = 0; i < nr; i++) {
		for (int c = 0; c < SAMPLEBLK_COLS; c++) {
			uint64_t r = rnd();

			rows[i].v[c] = r % 4 == 0 ? extremes[r / 4 % 9] :
				       c == SB_TIME_NS ? (int64_t)(1000000 + i * 25000 + r % 100) :
				       (int64_t)(r >> (r % 64));
		}
		/* column 3 mixed, columns C4..C7 all NULL, the others none */
		rows[i].null = (i % 3 == 0 ? 1u << 3 : 0) | 0xfu << SB_C4;
		for (int c = 0; c < SAMPLEBLK_COLS; c++)
			if (rows[i].null & (1u << c))
				rows[i].v[c] = 0;
	}
}

static void test_round_trip(void **state)
{
	static struct sampleblk_row in[SAMPLEBLK_MAX], out[SAMPLEBLK_MAX];
	static uint8_t buf[1 << 20];
	static const size_t sizes[] = { 1, 2, 7, 8, 9, 1000, SAMPLEBLK_MAX };

	(void)state;
	assert_true(sampleblk_bound(SAMPLEBLK_MAX) <= sizeof(buf));
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t nr = sizes[k], len;

		fill_rows(in, nr);
		len = sampleblk_encode(in, nr, buf);
		assert_true(len <= sampleblk_bound(nr));
		memset(out, 0x55, sizeof(out));
		assert_int_equal(sampleblk_decode(buf, len, nr, out), 0);
		for (size_t i = 0; i < nr; i++) {
			assert_int_equal(out[i].null, in[i].null);
			assert_memory_equal(out[i].v, in[i].v, sizeof(in[i].v));
		}
		/* the row count must be the one stored */
		assert_int_equal(sampleblk_decode(buf, len, nr + 1, out), -1);
		if (nr > 1)
			assert_int_equal(sampleblk_decode(buf, len, nr - 1, out), -1);
	}
}

/*
 * Mode 3 (one value for all rows) for constant columns, and blocks of
 * other versions: a version-1 block (17 columns, no period) reads with
 * period NULL; a version-2 block with a column this reader does not know
 * reads, the column skipped by its length; version 1 with mode 3 is bad.
 */
static void test_modes(void **state)
{
	static struct sampleblk_row in[100], out[100];
	uint8_t buf[1 << 16];
	size_t len, len_var;

	(void)state;
	for (size_t i = 0; i < 100; i++) {
		memset(&in[i], 0, sizeof(in[i]));
		in[i].v[SB_TIME_NS] = 1000 + 7 * (int64_t)i;
		in[i].v[SB_CPU] = 1;
		in[i].v[SB_PERIOD] = 1000000;
		in[i].null = 0xffu << SB_C0;
	}
	len = sampleblk_encode(in, 100, buf);
	assert_int_equal(sampleblk_decode(buf, len, 100, out), 0);
	for (size_t i = 0; i < 100; i++) {
		assert_int_equal(out[i].null, in[i].null);
		assert_memory_equal(out[i].v, in[i].v, sizeof(in[i].v));
	}
	/* a constant column costs its mode, length and one value */
	in[50].v[SB_PERIOD] = 999999;
	len_var = sampleblk_encode(in, 100, buf);
	assert_true(len_var >= len + 99 - 4);
	assert_int_equal(sampleblk_decode(buf, len_var, 100, out), 0);
	assert_int_equal(out[50].v[SB_PERIOD], 999999);
	assert_int_equal(out[51].v[SB_PERIOD], 1000000);

	{	/* version 1: time 5, the 16 other columns NULL */
		uint8_t v1[22] = { 1, 1, 17, 1, 1, 10 };

		assert_int_equal(sampleblk_decode(v1, sizeof(v1), 1, out), 0);
		assert_int_equal(out[0].v[SB_TIME_NS], 5);
		assert_int_equal(out[0].null, ((1u << SAMPLEBLK_COLS) - 1) & ~1u);
		v1[2] = 18;	/* version 1 had 17 columns */
		assert_int_equal(sampleblk_decode(v1, sizeof(v1), 1, out), -1);
	}
	{	/* version 2, 19 columns: period 1000 in mode 3, one unknown */
		uint8_t v2[28] = { 2, 1, 19, 1, 1, 10 };

		v2[22] = 3, v2[23] = 2, v2[24] = 0xd0, v2[25] = 0x0f;
		v2[26] = 0, v2[27] = 0;	/* column 18: mode 0 */
		assert_int_equal(sampleblk_decode(v2, 27, 1, out), 0);
		assert_int_equal(out[0].v[SB_TIME_NS], 5);
		assert_int_equal(out[0].v[SB_PERIOD], 1000);
		/* no stack_id in version 2: its column 18 is not SB_STACK */
		assert_int_equal(out[0].null, (((1u << SB_PERIOD) - 1) & ~1u) | 1u << SB_STACK);
		v2[26] = 1, v2[27] = 0;	/* column 18: mode 1, 0 bytes: skipped unread */
		assert_int_equal(sampleblk_decode(v2, 28, 1, out), 0);
		v2[27] = 1;		/* its length past the end */
		assert_int_equal(sampleblk_decode(v2, 28, 1, out), -1);
		v2[0] = 1, v2[2] = 17;	/* mode 3 is not version 1's */
		assert_int_equal(sampleblk_decode(v2, 26, 1, out), -1);
	}
	{	/* version 3: 19 columns, stack_id 7 in mode 3; 18 are too few */
		uint8_t v3[30] = { 3, 1, 19, 1, 1, 10 };

		v3[22] = 3, v3[23] = 2, v3[24] = 0xd0, v3[25] = 0x0f;	/* period 1000 */
		v3[26] = 3, v3[27] = 1, v3[28] = 14;			/* stack 7 */
		assert_int_equal(sampleblk_decode(v3, 29, 1, out), 0);
		assert_int_equal(out[0].v[SB_PERIOD], 1000);
		assert_int_equal(out[0].v[SB_STACK], 7);
		assert_int_equal(out[0].null, ((1u << SB_PERIOD) - 1) & ~1u);
		v3[2] = 18;
		assert_int_equal(sampleblk_decode(v3, 26, 1, out), -1);
		/* the same bytes as version 2: column 18 skipped, stack NULL */
		v3[0] = 2, v3[2] = 19;
		assert_int_equal(sampleblk_decode(v3, 29, 1, out), 0);
		assert_int_equal(out[0].v[SB_PERIOD], 1000);
		assert_true(out[0].null & 1u << SB_STACK);
		assert_int_equal(out[0].v[SB_STACK], 0);
	}
}

/* Every prefix and every single-byte change of a block is refused or
 * decodes within bounds (ASan and the length checks tell). */
static void test_malformed(void **state)
{
	static struct sampleblk_row in[64], out[64];
	uint8_t buf[8192], bad[8192 + 1];
	size_t len;

	(void)state;
	fill_rows(in, 64);
	len = sampleblk_encode(in, 64, buf);
	for (size_t cut = 0; cut < len; cut++)
		assert_int_equal(sampleblk_decode(buf, cut, 64, out), -1);
	memcpy(bad, buf, len);
	bad[len] = 0;
	assert_int_equal(sampleblk_decode(bad, len + 1, 64, out), -1);	/* trailing byte */
	memcpy(bad, buf, len);
	bad[0] = SAMPLEBLK_VERSION + 1;
	assert_int_equal(sampleblk_decode(bad, len, 64, out), -1);	/* version */
	for (size_t i = 0; i < len; i++) {
		memcpy(bad, buf, len);
		bad[i] ^= 0xa5;
		(void)sampleblk_decode(bad, len, 64, out);
	}
	/* an eleven-byte varint, and a tenth byte above 1, are refused */
	{
		uint8_t v[32] = { SAMPLEBLK_VERSION, 1, SAMPLEBLK_COLS, 1 };

		memset(v + 4, 0xff, 10);
		v[14] = 0;
		assert_int_equal(sampleblk_decode(v, 15, 1, out), -1);
		memset(v + 4, 0xff, 9);
		v[13] = 2;
		assert_int_equal(sampleblk_decode(v, 14, 1, out), -1);
	}
	assert_int_equal(sampleblk_decode(buf, len, 0, out), -1);
	assert_int_equal(sampleblk_decode(buf, len, SAMPLEBLK_MAX + 1, out), -1);
}

static void put(struct db *db, int64_t session, uint64_t t, int nr)
{
	struct db_sample s = {
		.session_id = session, .time_ns = t, .tsc = t * 3, .cpu = t % 2, .pid = 100 + t % 5,
		.tid = 200, .comm_id = 1, .binary_id = 2, .offset = 0xffffffff81000000ULL + t,
		.flags = 1, .nr = (uint8_t)nr, .stack_id = (int64_t)(t % 4),	/* 0: NULL */
	};
	struct error e;

	for (int i = 0; i < nr; i++)
		s.c[i] = t * (i + 1);
	assert_true(db_sample_insert(db, &s, &e) > 0);
}

/* Rows through the virtual table: the values, rowids, ranges and sessions
 * that the old table gave. */
static void test_vtab(void **state)
{
	struct error e;
	struct db *db = db_open(path_of("vt.db"), DB_WRITE, &e);
	sqlite3 *s;
	int64_t t;

	(void)state;
	assert_non_null(db);
	s = db_sqlite(db);
	/* 10,000 samples of session 1 (two blocks and a bit), 10 of session
	 * 2, 5 more of session 1, in three transactions */
	assert_int_equal(db_begin(db, &e), 0);
	for (t = 1; t <= 10000; t++)
		put(db, 1, (uint64_t)t, 2);
	assert_int_equal(db_commit(db, &e), 0);
	assert_int_equal(db_begin(db, &e), 0);
	for (t = 10001; t <= 10010; t++)
		put(db, 2, (uint64_t)t, 0);
	for (t = 10011; t <= 10015; t++)
		put(db, 1, (uint64_t)t, 2);
	assert_int_equal(db_commit(db, &e), 0);
	/* a rolled-back transaction leaves no rows and no rowids used */
	assert_int_equal(db_begin(db, &e), 0);
	put(db, 3, 99999, 1);
	db_rollback(db);

	assert_int_equal(raw_int(s, "SELECT count(*) FROM sample_blocks"), 5);
	assert_int_equal(raw_int(s, "SELECT count(*) FROM samples"), 10015);
	assert_int_equal(raw_int(s, "SELECT count(*) FROM samples WHERE rowid = time_ns "
			 "AND tsc = 3 * time_ns AND offset = -2130706432 + time_ns"), 10015);
	assert_int_equal(raw_int(s, "SELECT count(*) FROM samples WHERE session_id=1"), 10005);
	assert_int_equal(raw_int(s, "SELECT count(*) FROM samples WHERE session_id=2"), 10);
	/* schema 14: stack_id, NULL when a sample has none */
	assert_int_equal(raw_int(s, "SELECT count(*) FROM samples WHERE stack_id IS NULL"),
			 10015 / 4);
	assert_int_equal(raw_int(s, "SELECT count(*) FROM samples WHERE stack_id = time_ns % 4"),
			 10015 - 10015 / 4);
	assert_int_equal(raw_int(s, "SELECT count(*) FROM samples WHERE session_id=2 AND "
			 "c0 IS NULL AND c1 IS NULL"), 10);
	assert_int_equal(raw_int(s, "SELECT sum(c1) FROM samples WHERE session_id=1 AND c2 IS NULL"),
			 2 * (10000 * 10001 / 2 + (10011 + 10015) * 5 / 2));
	/* rowid ranges across block edges, open and closed, and a point */
	assert_int_equal(raw_int(s, "SELECT count(*) FROM samples WHERE rowid BETWEEN 4090 AND 4100"), 11);
	assert_int_equal(raw_int(s, "SELECT count(*) FROM samples WHERE rowid > 4095 AND rowid < 4098"), 2);
	assert_int_equal(raw_int(s, "SELECT time_ns FROM samples WHERE rowid=8193"), 8193);
	assert_int_equal(db_int(db, "SELECT count(*) FROM samples WHERE rowid>=9000 AND session_id=1"),
			 1006);
	assert_int_equal(raw_int(s, "SELECT count(*) FROM samples WHERE rowid>=10005 AND "
			 "session_id=2"), 6);
	assert_int_equal(raw_int(s, "SELECT max(rowid) FROM samples"), 10015);
	/* rowid order, and time ranges that skip blocks */
	assert_int_equal(raw_int(s, "SELECT count(*) FROM (SELECT rowid r, lag(rowid) OVER "
			 "(ORDER BY rowid) p FROM samples) WHERE r = p + 1"), 10014);
	assert_int_equal(raw_int(s, "SELECT count(*) FROM samples WHERE time_ns BETWEEN 5000 AND 5009"),
			 10);
	/* a value of another type narrows nothing: SQLite decides */
	assert_int_equal(raw_int(s, "SELECT count(*) FROM samples WHERE rowid >= 10014.5"), 1);
	/* the next rowid after the rollback */
	assert_int_equal(db_begin(db, &e), 0);
	put(db, 3, 20000, 1);
	assert_int_equal(db_commit(db, &e), 0);
	assert_int_equal(raw_int(s, "SELECT rowid FROM samples WHERE session_id=3"), 10016);
	/* writes row by row keep every other row and rowid */
	assert_int_equal(sqlite3_exec(s, "DELETE FROM samples WHERE rowid IN (5,4096,4097,8000);"
				      "UPDATE samples SET binary_id=NULL, c0=c0+1 WHERE rowid=7;"
				      "INSERT INTO samples(rowid,session_id,time_ns,cpu,pid,tid,flags) "
				      "VALUES(4096,9,1,0,0,0,0);"
				      "INSERT INTO samples(session_id,time_ns,cpu,pid,tid,flags) "
				      "VALUES(9,2,0,0,0,0)", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(raw_int(s, "SELECT count(*) FROM samples"), 10016 - 4 + 2);
	assert_int_equal(raw_int(s, "SELECT count(*) FROM samples WHERE session_id<3 AND "
				 "rowid = time_ns AND tsc = 3 * time_ns"), 10015 - 4);
	assert_int_equal(raw_int(s, "SELECT c0 - time_ns FROM samples WHERE rowid=7 AND "
				 "binary_id IS NULL"), 1);
	assert_int_equal(raw_int(s, "SELECT group_concat(rowid, '') FROM samples WHERE session_id=9"),
			 409610017);
	/* consecutive INSERTs of one session gather into one block */
	assert_int_equal(sqlite3_exec(s, "INSERT INTO samples(session_id,time_ns,cpu,pid,tid,flags) "
				      "SELECT 7,time_ns,cpu,pid,tid,flags FROM samples WHERE "
				      "session_id=1 AND rowid<=100", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(raw_int(s, "SELECT count(*) || nr || min(first_row) FROM sample_blocks "
				 "WHERE session_id=7"), 19910018);
	assert_int_equal(raw_int(s, "SELECT sum(time_ns) FROM samples WHERE session_id=7"),
			 100 * 101 / 2 - 5);
	assert_int_not_equal(sqlite3_exec(s, "INSERT INTO samples(rowid,session_id,time_ns,cpu,"
					  "pid,tid,flags) VALUES(6,9,1,0,0,0,0)", NULL, NULL, NULL),
			     SQLITE_OK);	/* rowid taken */

	/* a damaged block is an error naming it, not wrong rows */
	assert_int_equal(sqlite3_exec(s, "UPDATE sample_blocks SET data=substr(data,1,20) "
				      "WHERE first_row=4098", NULL, NULL, NULL), SQLITE_OK);
	{
		sqlite3_stmt *st;
		int rc;

		assert_int_equal(sqlite3_prepare_v2(s, "SELECT count(*) FROM samples", -1, &st,
						    NULL), SQLITE_OK);
		rc = sqlite3_step(st);
		assert_int_not_equal(rc, SQLITE_ROW);
		assert_non_null(strstr(sqlite3_errmsg(s), "sample block at rowid 4098"));
		sqlite3_finalize(st);
	}
	db_close(db);
}

/* Rows, rowid sum and time sum of a scan: what SQL says of the same rows. */
static void check_scan(struct db *db, const struct sample_scan_filter *f, const char *where)
{
	struct sample_scan *sc;
	const struct sample_scan_row *row;
	struct error e;
	int64_t n = 0, rows = 0, times = 0, prev = INT64_MIN, prevt = INT64_MIN;
	char sql[512];
	int rc;

	sc = sample_scan_open(db, f, &e);
	if (!sc)
		fail_msg("%s", e.msg);
	while ((rc = sample_scan_next(sc, &row, &e)) == 1) {
		n++;
		rows += row->rowid;
		times += row->r->v[SB_TIME_NS];
		if (!f->cols || (f->cols & 1u << SB_STACK)) {
			/* put()'s stack: time % 4, NULL for 0 */
			assert_int_equal(!!(row->r->null & 1u << SB_STACK),
					 row->r->v[SB_TIME_NS] % 4 == 0);
			if (row->r->v[SB_TIME_NS] % 4)
				assert_int_equal(row->r->v[SB_STACK], row->r->v[SB_TIME_NS] % 4);
		}
		if (f->by_time) {
			assert_true(row->r->v[SB_TIME_NS] >= prevt);
			prevt = row->r->v[SB_TIME_NS];
		} else {
			assert_true(row->rowid > prev);
		}
		prev = row->rowid;
	}
	assert_int_equal(rc, 0);
	sample_scan_close(sc);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM samples WHERE %s", where);
	assert_int_equal(db_int(db, sql), n);
	snprintf(sql, sizeof(sql), "SELECT coalesce(sum(rowid),0) FROM samples WHERE %s", where);
	assert_int_equal(db_int(db, sql), rows);
	snprintf(sql, sizeof(sql), "SELECT coalesce(sum(time_ns),0) FROM samples WHERE %s", where);
	assert_int_equal(db_int(db, sql), times);
}

/* sample_scan gives the rows SQL gives, filtered and ordered alike. */
static void test_scan(void **state)
{
	struct error e;
	struct db *db = db_open(path_of("scan.db"), DB_WRITE, &e);
	struct sample_scan_filter f = { .session_id = 1, .row_lo = INT64_MIN, .row_hi = INT64_MAX };
	uint64_t t;

	(void)state;
	assert_non_null(db);
	assert_int_equal(db_begin(db, &e), 0);
	for (t = 1; t <= 9000; t++)
		put(db, 1 + (t > 8000), t % 3000 + 1, 1);	/* time not in rowid order */
	assert_int_equal(db_commit(db, &e), 0);

	check_scan(db, &f, "session_id=1");
	f.row_lo = 4000;
	f.row_hi = 4200;
	check_scan(db, &f, "session_id=1 AND rowid BETWEEN 4000 AND 4200");
	f.row_lo = 100;
	f.row_hi = INT64_MAX;
	f.has_time = 1;
	f.time_lo = 500;
	f.time_hi = 700;
	check_scan(db, &f, "session_id=1 AND rowid>=100 AND time_ns BETWEEN 500 AND 700");
	f.has_pid = 1;
	f.pid = 102;
	check_scan(db, &f, "session_id=1 AND rowid>=100 AND time_ns BETWEEN 500 AND 700 AND pid=102");
	f.by_time = 1;
	check_scan(db, &f, "session_id=1 AND rowid>=100 AND time_ns BETWEEN 500 AND 700 AND pid=102");
	f = (struct sample_scan_filter){ .session_id = 2, .row_lo = 1, .row_hi = 0 };
	check_scan(db, &f, "0");
	f.row_hi = INT64_MAX;
	f.by_time = 1;
	check_scan(db, &f, "session_id=2");
	db_close(db);
}

/* A schema-005 database: its samples rows packed, rowids and NULLs kept. */
static void test_migrate(void **state)
{
	const char *p = path_of("old.db");
	struct error e;
	sqlite3 *s;
	struct db *db;

	(void)state;
	/* make a version-5 file with the old table as strobe 5 wrote it */
	db = db_open(p, DB_WRITE, &e);
	assert_non_null(db);
	db_close(db);
	assert_int_equal(sqlite3_open(p, &s), SQLITE_OK);
	assert_int_equal(sqlite3_exec(s,
		"DROP TABLE sample_blocks;"
		"CREATE TABLE samples (session_id INTEGER NOT NULL, time_ns INTEGER NOT NULL,"
		" tsc INTEGER, cpu INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER NOT NULL,"
		" comm_id INTEGER, binary_id INTEGER, offset INTEGER, flags INTEGER NOT NULL,"
		" c0 INTEGER, c1 INTEGER, c2 INTEGER, c3 INTEGER, c4 INTEGER, c5 INTEGER,"
		" c6 INTEGER, c7 INTEGER);"
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<9000)"
		" INSERT INTO samples(rowid,session_id,time_ns,tsc,cpu,pid,tid,comm_id,binary_id,"
		" offset,flags,c0,c1) SELECT i + (i>5000)*100, 1 + (i>7000), i*10,"
		" CASE WHEN i%7=0 THEN NULL ELSE i END, i%2, 5, 5, 1, 1, i*3, 0, i, NULL FROM n;"
		"ALTER TABLE session_cpus DROP COLUMN lost_c0; ALTER TABLE session_cpus DROP COLUMN lost_c1;"
		"ALTER TABLE session_cpus DROP COLUMN lost_c2; ALTER TABLE session_cpus DROP COLUMN lost_c3;"
		"ALTER TABLE session_cpus DROP COLUMN lost_c4; ALTER TABLE session_cpus DROP COLUMN lost_c5;"
		"ALTER TABLE session_cpus DROP COLUMN lost_c6; ALTER TABLE session_cpus DROP COLUMN lost_c7;"
		"DROP TABLE unscheduled; ALTER TABLE sample_agg DROP COLUMN period;"
		"ALTER TABLE processes DROP COLUMN uncertain_ns;"
		"ALTER TABLE sessions DROP COLUMN late_records;"
		"ALTER TABLE sessions DROP COLUMN late_max_ns;"
		"DROP TABLE jit_maps; DROP TABLE jit_symbols; DROP TABLE cgroups;"
		"ALTER TABLE processes DROP COLUMN cgroup_id;"
		"ALTER TABLE processes DROP COLUMN cgroup_moves;"
		"ALTER TABLE sessions DROP COLUMN cgroup_source;"
		"DROP TABLE stacks; DROP TABLE stack_agg; DROP TABLE unwind_errors;"
		"DROP TABLE raw_stacks; ALTER TABLE sessions DROP COLUMN call_graph;"
		"DROP TABLE count_values; ALTER TABLE sessions DROP COLUMN attribution;"
		"PRAGMA user_version=5;", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(s);

	db = db_open(p, DB_WRITE, &e);
	if (!db)
		fail_msg("%s", e.msg);
	s = db_sqlite(db);
	assert_int_equal(raw_int(s, "PRAGMA user_version"), db_schema_version());
	assert_int_equal(raw_int(s, "SELECT count(*) FROM sqlite_master WHERE name='samples_v5'"), 0);
	assert_int_equal(raw_int(s, "SELECT count(*) FROM samples"), 9000);
	/* a gap in the rowids and a change of session each start a block */
	assert_int_equal(raw_int(s, "SELECT count(*) FROM sample_blocks"), 4);
	assert_int_equal(raw_int(s, "SELECT count(*) FROM samples WHERE time_ns = 10 * "
			 "(rowid - (rowid > 5000) * 100) AND offset = 3 * time_ns / 10 AND "
			 "session_id = 1 + (time_ns > 70000) AND c1 IS NULL AND c2 IS NULL"), 9000);
	assert_int_equal(raw_int(s, "SELECT count(*) FROM samples WHERE tsc IS NULL"), 9000 / 7);
	assert_int_equal(raw_int(s, "SELECT min(min_ns) || max(max_ns) FROM sample_blocks"),
			 1090000);
	db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_vtab),
		cmocka_unit_test(test_scan),
		cmocka_unit_test(test_migrate),
	};

	return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
