/*
 * test_statussnap.c - strobed's status reply as numbers and the rates
 * between two replies (lib/base/statussnap.c, what 'strobe status
 * --watch' shows): the fields read, the notes, the per-CPU lists (and
 * none when strobed sends no per-CPU counts), an older strobed without
 * taken=, and the rates over an interval, per CPU matched by number,
 * since the session's start when the session changed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "proto.h"
#include "statussnap.h"

/* A status reply of the key=value pairs in kv (NULL-terminated). */
static void reply(struct proto_msg *m, const char *const *kv)
{
	proto_init(m, "ok");
	for (; kv[0]; kv += 2)
		assert_int_equal(proto_add(m, kv[0], kv[1]), 0);
}

static void test_take(void **state)
{
	static const char *const kv[] = {
		"running", "1", "session", "42", "elapsed_ns", "2500000000",
		"samples", "900", "taken", "1000", "lost", "7", "lag_records", "12",
		"lag_ns", "300", "ingest_deferred_ns", "5", "spool_mem", "4096",
		"spool_disk", "0", "spool_mem_max", "8192", "spool_disk_max", "65536",
		"nr_cpus", "4", "cpus", "0,2,3", "cpu_samples", "400,350,250",
		"cpu_lost", "0,7,0", "db", "/var/lib/strobe/db", "db_bytes", "123",
		"db_wal_bytes", "45", "blocked_ms", "1500", "lock_holder", "pid 9", NULL,
	};
	struct status_snap s;
	struct proto_msg m;

	(void)state;
	reply(&m, kv);
	status_snap_take(&s, &m);
	proto_free(&m);
	assert_true(s.running);
	assert_int_equal(s.session, 42);
	assert_true(s.elapsed == 2.5);
	assert_int_equal(s.samples, 1000);	/* taken from the rings */
	assert_int_equal(s.stored, 900);
	assert_int_equal(s.lost, 7);
	assert_int_equal(s.lag_records, 12);
	assert_int_equal(s.lag_ns, 300);
	assert_int_equal(s.deferred_ns, 5);
	assert_int_equal(s.spool_mem, 4096);
	assert_int_equal(s.spool_mem_max, 8192);
	assert_int_equal(s.spool_disk_max, 65536);
	assert_true(s.have_db_bytes);
	assert_int_equal(s.db_bytes, 123);
	assert_int_equal(s.db_wal_bytes, 45);
	assert_string_equal(s.db, "/var/lib/strobe/db");
	assert_string_equal(s.note, "database locked for 1.5 s by pid 9");
	assert_int_equal(s.nr_cpus, 4);
	assert_int_equal(s.nr, 3);
	assert_int_equal(s.cpu[1], 2);
	assert_int_equal(s.cpu[2], 3);
	assert_int_equal(s.cpu_samples[0], 400);
	assert_int_equal(s.cpu_lost[1], 7);
	status_snap_free(&s);
	assert_null(s.db);
	status_snap_free(&s);			/* again: nothing left to free */
}

static void test_take_partial(void **state)
{
	/* an older strobed: no taken=, no per-CPU counts; not running */
	static const char *const old[] = {
		"running", "1", "session", "3", "samples", "50", "cpus", "0,1",
		"stopping", "1", NULL,
	};
	static const char *const idle[] = { "running", "0", "removing", "1", NULL };
	struct status_snap s;
	struct proto_msg m;

	(void)state;
	reply(&m, old);
	status_snap_take(&s, &m);
	proto_free(&m);
	assert_int_equal(s.samples, 50);	/* what it stored */
	assert_int_equal(s.nr, 0);		/* no cpu_samples=: none shown */
	assert_false(s.have_db_bytes);
	assert_string_equal(s.db, "?");
	assert_string_equal(s.note, "stopping: the stop waits until the session can be stored");
	status_snap_free(&s);
	reply(&m, idle);
	status_snap_take(&s, &m);
	proto_free(&m);
	assert_false(s.running);
	assert_int_equal(s.session, 0);
	assert_null(s.cpu);
	assert_string_equal(s.note, "removing sessions: their rows are being deleted");
	status_snap_free(&s);
}

static void test_rates(void **state)
{
	static const char *const a[] = {
		"running", "1", "session", "8", "elapsed_ns", "1000000000", "taken", "100",
		"lost", "2", "cpus", "0,1", "cpu_samples", "60,40", "cpu_lost", "2,0", NULL,
	};
	/* CPU 1 went offline, CPU 5 is new: matched by number, not place */
	static const char *const b[] = {
		"running", "1", "session", "8", "elapsed_ns", "3000000000", "taken", "500",
		"lost", "5", "cpus", "0,5", "cpu_samples", "260,100", "cpu_lost", "3,2", NULL,
	};
	static const char *const other[] = {
		"running", "1", "session", "9", "elapsed_ns", "500000000", "taken", "50",
		"lost", "1", NULL,
	};
	struct status_snap none = { 0 }, sa, sb, so;
	struct status_rates r;
	struct proto_msg m;

	(void)state;
	reply(&m, a);
	status_snap_take(&sa, &m);
	proto_free(&m);
	reply(&m, b);
	status_snap_take(&sb, &m);
	proto_free(&m);
	reply(&m, other);
	status_snap_take(&so, &m);
	proto_free(&m);

	status_rates_get(&r, &sa, &sb);
	assert_true(r.dt == 2.0);
	assert_true(r.samples == 200.0);	/* (500 - 100) / 2 s */
	assert_int_equal(r.lost, 3);
	assert_true(r.cpu_samples[0] == 100.0);	/* CPU 0: (260 - 60) / 2 */
	assert_int_equal(r.cpu_lost[0], 1);
	assert_true(r.cpu_samples[1] == 50.0);	/* CPU 5: all of it, new */
	assert_int_equal(r.cpu_lost[1], 2);
	status_rates_free(&r);

	status_rates_get(&r, &sb, &so);		/* another session: since its start */
	assert_true(r.dt == 0.5);
	assert_true(r.samples == 100.0);
	assert_int_equal(r.lost, 1);
	status_rates_free(&r);

	status_rates_get(&r, &none, &sa);	/* the first: since the start */
	assert_true(r.dt == 1.0);
	assert_true(r.samples == 100.0);
	assert_int_equal(r.lost, 2);
	status_rates_free(&r);
	status_snap_free(&sa);
	status_snap_free(&sb);
	status_snap_free(&so);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take),
		cmocka_unit_test(test_take_partial),
		cmocka_unit_test(test_rates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
