/*
 * test_callgraph.c - the --call-graph option (lib/capture/callgraph.c):
 * what parses and how it is spelled again, every bad spelling refused with
 * a message naming it; and ingest_call_graph(): sessions.call_graph
 * stored at once and kept by the session row's later writes
 * (db_session_update rewrites the whole row), --keep-stacks refused
 * without dwarf, a bad mode refused without writing.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "bincache.h"
#include "callgraph.h"
#include "db.h"
#include "ingest.h"
#define SCRATCH_NAME "callgraph"
#include "scratch.h"

static void test_parse(void **state)
{
	static const struct {
		const char *s;
		enum callgraph_mode mode;
		uint32_t bytes;
		const char *spelled;
	} good[] = {
		{ "fp", CALLGRAPH_FP, 0, "fp" },
		{ "dwarf", CALLGRAPH_DWARF, CALLGRAPH_STACK_DEFAULT, "dwarf,8192" },
		{ "dwarf,8", CALLGRAPH_DWARF, 8, "dwarf,8" },
		{ "dwarf,4096", CALLGRAPH_DWARF, 4096, "dwarf,4096" },
		{ "", CALLGRAPH_NONE, 0, "" },
		{ NULL, CALLGRAPH_NONE, 0, "" },
	};
	static const struct {
		const char *s, *msg;
	} bad[] = {
		{ "xyz", "unknown mode 'xyz' (fp or dwarf[,BYTES])" },
		{ "FP", "unknown mode 'FP'" },
		{ "lbr", "unknown mode 'lbr'" },
		{ "dwarf8192", "unknown mode 'dwarf8192'" },
		{ "fp,64", "mode 'fp' takes no size" },
		{ "dwarf,", "bad stack size ''" },
		{ "dwarf,0", "bad stack size '0'" },
		{ "dwarf,12", "bad stack size '12'" },
		{ "dwarf,-8", "bad stack size '-8'" },
		{ "dwarf,8x", "bad stack size '8x'" },
		{ "dwarf,8,8", "bad stack size '8,8'" },
		{ "dwarf,99999999999999999999", "bad stack size" },
		{ "dwarf,65536", "bad stack size '65536'" },
	};
	struct callgraph cg;
	struct error e;
	char buf[32], big[32];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(callgraph_parse(good[i].s, &cg, &e), 0);
		assert_int_equal(cg.mode, good[i].mode);
		assert_int_equal(cg.stack_bytes, good[i].bytes);
		callgraph_format(&cg, buf, sizeof(buf));
		assert_string_equal(buf, good[i].spelled);
		/* the spelling parses to the same */
		if (buf[0]) {
			struct callgraph again;

			assert_int_equal(callgraph_parse(buf, &again, &e), 0);
			assert_true(again.mode == cg.mode && again.stack_bytes == cg.stack_bytes);
		}
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(callgraph_parse(bad[i].s, &cg, &e), -1);
		if (!strstr(e.msg, bad[i].msg))
			fail_msg("'%s': '%s', not '%s'", bad[i].s, e.msg, bad[i].msg);
		assert_int_equal(cg.mode, CALLGRAPH_NONE);
	}
	/* the largest copy fits a record beside a sample without counters */
	snprintf(big, sizeof(big), "dwarf,%zu", (size_t)CALLGRAPH_STACK_MAX);
	assert_int_equal(callgraph_parse(big, &cg, &e), 0);
	assert_true(CALLGRAPH_STACK_MAX % 8 == 0);
	assert_true(STROBE_SAMPLE_SIZE(0) + sizeof(struct strobe_ustack) + CALLGRAPH_STACK_MAX <=
		    RECORD_MAX_SIZE);
	snprintf(big, sizeof(big), "dwarf,%zu", (size_t)CALLGRAPH_STACK_MAX + 8);
	assert_int_equal(callgraph_parse(big, &cg, &e), -1);
}

static struct ingest *session(struct db *db, struct bincache *cache, struct db_session *s)
{
	struct error e;
	struct ingest *in;

	memset(s, 0, sizeof(*s));
	snprintf(s->state, sizeof(s->state), "running");
	snprintf(s->backend, sizeof(s->backend), "perf");
	snprintf(s->sample_event, sizeof(s->sample_event), "cpu-clock");
	s->sample_freq = 1000;
	s->nr_cpus = 1;
	s->late_samples = s->late_records = s->late_max_ns = -1;
	if (db_session_insert(db, s, &e) < 0)
		fail_msg("%s", e.msg);
	in = ingest_new(db, cache, s, &e);
	if (!in)
		fail_msg("%s", e.msg);
	return in;
}

static char *call_graph_of(struct db *db, int64_t id)
{
	static char buf[64];
	sqlite3_stmt *st;

	buf[0] = 0;
	assert_int_equal(sqlite3_prepare_v2(db_sqlite(db), "SELECT ifnull(call_graph,'(null)') "
					    "FROM sessions WHERE id=?1", -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW)
		snprintf(buf, sizeof(buf), "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return buf;
}

static void test_ingest_call_graph(void **state)
{
	struct bincache cache;
	struct db_session s, got;
	struct ingest *in;
	struct error e;
	struct db *db;

	(void)state;
	db = db_open(path_of("cg.db"), DB_WRITE, &e);
	if (!db)
		fail_msg("%s", e.msg);
	assert_int_equal(bincache_open(&cache, path_of("cache"), &e), 0);

	in = session(db, &cache, &s);
	assert_int_equal(ingest_call_graph(in, "dwarf", 1, &e), 0);
	assert_string_equal(call_graph_of(db, s.id), "dwarf,8192");
	/* the row's rewrites (every commit, the end) keep it */
	assert_int_equal(ingest_finish(in, 1000, &e), 0);
	assert_string_equal(call_graph_of(db, s.id), "dwarf,8192");
	assert_int_equal(db_session_get(db, s.id, &got, &e), 0);
	assert_string_equal(got.call_graph, "dwarf,8192");
	ingest_free(in);

	in = session(db, &cache, &s);
	/* refused: nothing written */
	assert_int_equal(ingest_call_graph(in, "fp", 1, &e), -1);
	assert_non_null(strstr(e.msg, "needs --call-graph dwarf"));
	assert_int_equal(ingest_call_graph(in, "bogus", 0, &e), -1);
	assert_non_null(strstr(e.msg, "unknown mode 'bogus'"));
	assert_string_equal(call_graph_of(db, s.id), "(null)");
	assert_int_equal(ingest_call_graph(in, "fp", 0, &e), 0);
	assert_int_equal(ingest_finish(in, 1000, &e), 0);
	assert_string_equal(call_graph_of(db, s.id), "fp");
	ingest_free(in);

	/* none: NULL */
	in = session(db, &cache, &s);
	assert_int_equal(ingest_call_graph(in, NULL, 0, &e), 0);
	assert_int_equal(ingest_finish(in, 1000, &e), 0);
	assert_string_equal(call_graph_of(db, s.id), "(null)");
	ingest_free(in);
	assert_int_equal(db_int(db, "SELECT count(*) FROM sessions WHERE call_graph IS NULL"), 1);
	bincache_close(&cache);
	db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_ingest_call_graph),
	};

	return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
