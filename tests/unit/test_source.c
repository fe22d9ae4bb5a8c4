/*
 * test_source.c - lib/query/source.c, where a command's samples come from:
 * a spec's text is checked before anything is opened (a fleet URL that
 * chclient refuses is SOURCE_BAD_SPEC, no client made), a local database
 * that is missing fails and leaves the source empty, and the local
 * session header's queries on a database made here: the lost samples by
 * kind and CPU (the lost table, else session_cpus for older sessions,
 * none when the session lost nothing), and the processes whose maps may
 * be wrong, counted, the first five named.
 */
#include "config.h"
#include <ftw.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "db.h"
#include "source.h"

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(p);
	return 0;
}

static void test_spec_check(void **state)
{
	struct error e = { "" };
	struct source src;

	(void)state;
	assert_int_equal(source_check(&(struct source_spec){ .db = "/nonexistent" }, &e), 0);
	assert_int_equal(source_check(&(struct source_spec){ .url = "http://h:8123/?database=strobe" },
				      &e), 0);
	assert_int_equal(source_check(&(struct source_spec){ .url = "ftp://h/" }, &e),
			 SOURCE_BAD_SPEC);
	assert_true(e.msg[0]);
	/* credentials never in the URL */
	assert_int_equal(source_check(&(struct source_spec){ .url = "http://u:p@h:8123/" }, &e),
			 SOURCE_BAD_SPEC);
	assert_null(strstr(e.msg, ":p@"));
	/* opening refuses it the same way, before any client or credentials */
	e.msg[0] = 0;
	assert_int_equal(source_open(&(struct source_spec){ .url = "ftp://h/" }, &src, &e),
			 SOURCE_BAD_SPEC);
	assert_true(e.msg[0]);
	assert_null(src.fleet);
	assert_null(src.db);
	assert_false(source_is_fleet(&src));
	source_close(&src);
}

static void test_local_missing(void **state)
{
	struct error e = { "" };
	struct source src;

	(void)state;
	assert_int_equal(source_open(&(struct source_spec){ .db = "/nonexistent/strobe.db" },
				     &src, &e), -1);
	assert_true(e.msg[0]);
	assert_null(src.db);
	assert_null(src.fleet);
	source_close(&src);
}

static void exec_sql(struct db *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db_sqlite(db), sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err ? err : "?");
}

static void test_header_queries(void **state)
{
	char dir[64], path[128];
	struct db *db;
	struct source src;
	struct source_summary ss;
	struct error e = { "" };
	char buf[400];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/strobe-test-source-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/strobe.db", dir);
	db = db_open(path, DB_WRITE, &e);
	if (!db)
		fail_msg("db_open: %s", e.msg);
	exec_sql(db, "INSERT INTO lost(session_id,cpu,time_ns,count,kind) VALUES "
		 "(7,1,10,5,'ring'),(7,1,20,2,'ring'),(7,0,30,1,'throttle'),(8,3,5,9,'ring')");
	exec_sql(db, "INSERT INTO session_cpus(session_id,cpu,samples,lost) VALUES "
		 "(9,5,1,6),(9,0,10,0),(9,2,10,4)");
	exec_sql(db, "INSERT INTO comms(id,name) VALUES (1,'worker')");
	exec_sql(db, "INSERT INTO processes(session_id,pid,comm_id,start_ns,uncertain_ns) "
		 "VALUES (7,100,1,0,50),(7,101,NULL,0,40),(7,102,1,0,NULL),"
		 "(8,1,NULL,0,1),(8,2,NULL,0,2),(8,3,NULL,0,3),(8,4,NULL,0,4),"
		 "(8,5,NULL,0,5),(8,6,NULL,0,6),(8,7,NULL,0,7)");
	db_close(db);

	assert_int_equal(source_open(&(struct source_spec){ .db = path }, &src, &e), 0);
	assert_non_null(src.db);
	assert_false(source_is_fleet(&src));

	/* the lost table, summed by kind and CPU, in that order */
	memset(&ss, 0, sizeof(ss));
	ss.sum.session.id = 7;
	ss.sum.session.lost = 8;
	source_lost_load(&src, &ss);
	assert_int_equal(ss.nlost, 2);
	assert_string_equal(ss.lost[0].kind, "ring");
	assert_int_equal(ss.lost[0].cpu, 1);
	assert_int_equal(ss.lost[0].count, 7);
	assert_string_equal(ss.lost[1].kind, "throttle");
	assert_int_equal(ss.lost[1].cpu, 0);
	assert_int_equal(ss.lost[1].count, 1);
	source_summary_free(&ss);
	assert_null(ss.lost);
	/* no lost rows: session_cpus.lost, kind "", by CPU, the zeros left out */
	ss.sum.session.id = 9;
	ss.sum.session.lost = 10;
	source_lost_load(&src, &ss);
	assert_int_equal(ss.nlost, 2);
	assert_string_equal(ss.lost[0].kind, "");
	assert_int_equal(ss.lost[0].cpu, 2);
	assert_int_equal(ss.lost[0].count, 4);
	assert_int_equal(ss.lost[1].cpu, 5);
	assert_int_equal(ss.lost[1].count, 6);
	source_summary_free(&ss);
	/* a session that lost nothing is not read */
	ss.sum.session.id = 7;
	ss.sum.session.lost = 0;
	source_lost_load(&src, &ss);
	assert_int_equal(ss.nlost, 0);
	assert_null(ss.lost);

	/* uncertain maps: by uncertain_ns, named when the comm is known */
	assert_int_equal(source_uncertain(&src, 7, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "pid 101, pid 100 (worker)");
	assert_int_equal(source_uncertain(&src, 8, buf, sizeof(buf)), 7);
	assert_string_equal(buf, "pid 1, pid 2, pid 3, pid 4, pid 5, ...");
	assert_int_equal(source_uncertain(&src, 8, buf, 12), 7);	/* cut to fit */
	assert_string_equal(buf, "pid 1, pid ");
	assert_int_equal(source_uncertain(&src, 9, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	source_close(&src);
	assert_null(src.db);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_check),
		cmocka_unit_test(test_local_missing),
		cmocka_unit_test(test_header_queries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
