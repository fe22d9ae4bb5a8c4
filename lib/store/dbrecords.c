/*
 * dbrecords.c - the records of a session beside its samples, into the
 * strobe database (db.h): lost counts (lost), the intervals a sampling
 * group was not counting (unscheduled), markers (USDT probe hits and
 * 'strobe mark'), the sites of its --marker probes (session_probes), and
 * its totals per CPU (session_cpus).
 */
#include "config.h"
#include "db_int.h"

int db_lost_insert(struct db *db, int64_t session_id, uint32_t cpu, uint64_t time_ns,
		   uint64_t count, const char *kind, struct error *e)
{
	sqlite3_stmt *st = db->stmt[STMT_LOST];

	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int(st, 2, cpu);
	sqlite3_bind_int64(st, 3, (int64_t)time_ns);
	sqlite3_bind_int64(st, 4, (int64_t)count);
	sqlite3_bind_text(st, 5, kind, -1, SQLITE_STATIC);
	return db_step_done(db, st, e, "storing lost counts");
}

int db_unscheduled_insert(struct db *db, int64_t session_id, uint32_t cpu, uint64_t end_ns,
			  uint64_t enabled_ns, uint64_t running_ns, const char *kind,
			  struct error *e)
{
	sqlite3_stmt *st = db->stmt[STMT_UNSCHED];

	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int(st, 2, cpu);
	sqlite3_bind_int64(st, 3, (int64_t)(end_ns - enabled_ns));
	sqlite3_bind_int64(st, 4, (int64_t)end_ns);
	sqlite3_bind_int64(st, 5, (int64_t)enabled_ns);
	sqlite3_bind_int64(st, 6, (int64_t)running_ns);
	sqlite3_bind_text(st, 7, kind, -1, SQLITE_STATIC);
	return db_step_done(db, st, e, "storing when a sampling group was not counting");
}

int db_marker_insert(struct db *db, int64_t session_id, const struct db_marker *m,
		     struct error *e)
{
	sqlite3_stmt *st = db->stmt[STMT_MARKER];

	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int64(st, 2, (int64_t)m->time_ns);
	db_bind_known(st, 3, m->cpu);
	db_bind_known(st, 4, m->pid);
	db_bind_known(st, 5, m->tid);
	sqlite3_bind_text(st, 6, m->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, m->name, -1, SQLITE_STATIC);
	if (m->args)
		sqlite3_bind_text(st, 8, m->args, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 8);
	return db_step_done(db, st, e, "storing a marker");
}

int db_probe_insert(struct db *db, int64_t session_id, const struct db_probe *p,
		    struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db->sql, "INSERT INTO session_probes(session_id,spec,binary_key,"
			       "offset,semaphore,nargs,arg_spec) VALUES(?1,?2,?3,?4,?5,?6,?7)",
			       -1, &st, NULL))
		return db_sql_error(db, e, "storing the session's probes");
	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_text(st, 2, p->spec, -1, SQLITE_STATIC);
	if (p->binary_key)
		sqlite3_bind_text(st, 3, p->binary_key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, (int64_t)p->offset);
	db_bind_known(st, 5, p->semaphore);
	sqlite3_bind_int(st, 6, p->nargs);
	sqlite3_bind_text(st, 7, p->arg_spec, -1, SQLITE_STATIC);
	rc = db_step_done(db, st, e, "storing the session's probes");
	sqlite3_finalize(st);
	return rc ? -1 : 0;
}

int db_cpu_stats_put(struct db *db, int64_t session_id, int nr,
		     const struct db_cpu_stats *cs, struct error *e)
{
	sqlite3_stmt *st = db->stmt[STMT_CPU];

	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int(st, 2, cs->cpu);
	sqlite3_bind_int64(st, 3, (int64_t)cs->samples);
	sqlite3_bind_int64(st, 4, (int64_t)cs->lost);
	db_bind_counters(st, 5, nr, cs->tail);
	db_bind_counters(st, 13, nr, cs->lost_inc);
	return db_step_done(db, st, e, "storing CPU statistics");
}
