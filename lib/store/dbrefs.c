/*
 * dbrefs.c - the rows samples refer to, in the strobe database (db.h):
 * binaries (found or added by key and path), comms (by name), the
 * processes of a session and their cgroups, and the JIT maps (perf maps,
 * jitdumps) copied from its processes.
 */
#include "config.h"
#include <string.h>
#include "db_int.h"

/* The id of the row st finds by key (and key2); 0: none. */
static int64_t find_id(struct db *db, sqlite3_stmt *st, const char *key, const char *key2)
{
	int64_t id = 0;

	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (key2)
		sqlite3_bind_text(st, 2, key2, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return id;
}

int64_t db_binary_intern(struct db *db, const char *key, const char *path,
			 int64_t size, int cached, const char *problem, struct error *e)
{
	int64_t id = find_id(db, db->stmt[STMT_BINARY_FIND], key, path);
	sqlite3_stmt *st = db->stmt[id ? STMT_BINARY_SET : STMT_BINARY_ADD];

	if (id)
		sqlite3_bind_int64(st, 1, id);
	else
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	db_bind_opt_int(st, 3, size);
	sqlite3_bind_int(st, 4, cached);
	db_bind_text_or_null(st, 5, problem);
	if (db_step_done(db, st, e, "storing a binary"))
		return -1;
	return id ? id : sqlite3_last_insert_rowid(db->sql);
}

int db_binary_get(struct db *db, int64_t id, struct db_binary *b, struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	memset(b, 0, sizeof(*b));
	if (sqlite3_prepare_v2(db->sql, "SELECT id,key,path,size,cached,problem,note FROM binaries "
			       "WHERE id=?1", -1, &st, NULL))
		return db_sql_error(db, e, "reading binaries");
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		b->id = sqlite3_column_int64(st, 0);
		db_col_text(st, 1, b->key, sizeof(b->key));
		db_col_text(st, 2, b->path, sizeof(b->path));
		b->size = sqlite3_column_int64(st, 3);
		b->cached = sqlite3_column_int(st, 4);
		db_col_text(st, 5, b->problem, sizeof(b->problem));
		db_col_text(st, 6, b->note, sizeof(b->note));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return error_set(e, "%s: no binary %lld", db->path, (long long)id);
	return 0;
}

int db_binary_note(struct db *db, int64_t id, const char *note, struct error *e)
{
	/* NULL or "": no note */
	return db_exec_bound(db, "UPDATE binaries SET note=nullif(?5,'') WHERE id=?1", e,
			     "noting a binary", id, 0, 0, 0, note);
}

int db_jit_map_put(struct db *db, int64_t session_id, uint32_t pid, uint64_t start_ns,
		   const char *path, uint64_t symbols, uint64_t dropped,
		   const char *problem, struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db->sql, "INSERT INTO jit_maps(session_id,pid,start_ns,path,"
			       "symbols,dropped,problem) VALUES(?1,?2,?3,?4,?5,?6,?7)",
			       -1, &st, NULL))
		return db_sql_error(db, e, "storing a perf map");
	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int64(st, 2, pid);
	sqlite3_bind_int64(st, 3, (int64_t)start_ns);
	sqlite3_bind_text(st, 4, path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, (int64_t)symbols);
	sqlite3_bind_int64(st, 6, (int64_t)dropped);
	db_bind_text_or_null(st, 7, problem);
	rc = db_step_done(db, st, e, "storing a perf map");
	sqlite3_finalize(st);
	return rc ? -1 : 0;
}

int db_jit_symbols_put(struct db *db, int64_t session_id, uint32_t pid, uint64_t start_ns,
		       const struct jitmap *m, struct error *e)
{
	sqlite3_stmt *st;
	int rc = 0;

	if (sqlite3_prepare_v2(db->sql, "INSERT INTO jit_symbols(session_id,pid,start_ns,seq,"
			       "addr,size,name,load_ns) VALUES(?1,?2,?3,?4,?5,?6,?7,?8)", -1,
			       &st, NULL))
		return db_sql_error(db, e, "storing perf map symbols");
	for (size_t i = 0; i < m->nr && !rc; i++) {
		sqlite3_bind_int64(st, 1, session_id);
		sqlite3_bind_int64(st, 2, pid);
		sqlite3_bind_int64(st, 3, (int64_t)start_ns);
		sqlite3_bind_int64(st, 4, (int64_t)i);
		sqlite3_bind_int64(st, 5, (int64_t)m->syms[i].start);
		sqlite3_bind_int64(st, 6, (int64_t)m->syms[i].size);
		sqlite3_bind_text(st, 7, m->syms[i].name, -1, SQLITE_STATIC);
		db_bind_opt_int(st, 8, (int64_t)m->syms[i].load_ns);
		rc = db_step_done(db, st, e, "storing perf map symbols");
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc ? -1 : 0;
}

int64_t db_comm_intern(struct db *db, const char *name, struct error *e)
{
	int64_t id = find_id(db, db->stmt[STMT_COMM_FIND], name, NULL);
	sqlite3_stmt *st = db->stmt[STMT_COMM_ADD];

	if (id)
		return id;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (db_step_done(db, st, e, "storing a command name"))
		return -1;
	return sqlite3_last_insert_rowid(db->sql);
}

int db_process_put(struct db *db, int64_t session_id, uint32_t pid, uint32_t ppid,
		   int64_t comm_id, uint64_t start_ns, uint64_t exit_ns, struct error *e)
{
	return db_process_put_uncertain(db, session_id, pid, ppid, comm_id, start_ns, exit_ns,
					0, e);
}

int db_process_put_uncertain(struct db *db, int64_t session_id, uint32_t pid, uint32_t ppid,
			     int64_t comm_id, uint64_t start_ns, uint64_t exit_ns,
			     uint64_t uncertain_ns, struct error *e)
{
	sqlite3_stmt *st = db->stmt[STMT_PROCESS];

	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int(st, 2, pid);
	db_bind_opt_int(st, 3, ppid);
	db_bind_opt_int(st, 4, comm_id);
	sqlite3_bind_int64(st, 5, (int64_t)start_ns);
	db_bind_opt_int(st, 6, (int64_t)exit_ns);
	db_bind_opt_int(st, 7, (int64_t)uncertain_ns);
	return db_step_done(db, st, e, "storing a process");
}

int db_cgroup_put(struct db *db, int64_t session_id, uint64_t id, const char *path,
		  struct error *e)
{
	return db_exec_bound(db, "INSERT OR REPLACE INTO cgroups(session_id,id,path) "
			     "VALUES(?1,?2,?5)", e, "storing a cgroup", session_id,
			     (int64_t)id, 0, 0, path);
}

int db_process_cgroup(struct db *db, int64_t session_id, uint32_t pid, uint64_t start_ns,
		      uint64_t cgroup_id, uint64_t moves, struct error *e)
{
	return db_exec_bound(db, "UPDATE processes SET cgroup_id=nullif(?4,0) "
			     "WHERE session_id=?1 AND pid=?2 AND "
			     "start_ns=?3", e, "storing a process's cgroup", session_id, pid,
			     (int64_t)start_ns, (int64_t)cgroup_id, NULL) < 0 ? -1 :
	       moves ? db_exec_bound(db, "UPDATE processes SET cgroup_moves=?4 WHERE "
				     "session_id=?1 AND pid=?2 AND start_ns=?3", e,
				     "storing a process's cgroup", session_id, pid,
				     (int64_t)start_ns, (int64_t)moves, NULL) : 0;
}
