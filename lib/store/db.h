/*
 * db.h - the strobe database: opening it safely, schema versions, and the
 * rows strobed writes and the tools read (schema/NNN-*.sql, doc/SCHEMA.md).
 *
 * db_open() refuses, without writing anything, a file that is not a strobe
 * database, one whose schema is newer than this build, and a corrupt one.
 * A strobe database is marked by PRAGMA application_id = DB_APPLICATION_ID;
 * PRAGMA user_version is its schema version.  A connection that writes
 * also has DB.stacks attached (rawstk.h): raw stack copies are root's.
 * The files behind it, one concern each, are listed in db_int.h.
 */
#ifndef STROBE_DB_H
#define STROBE_DB_H

#include <stdint.h>
#include <sqlite3.h>
#include "strobe.h"
#include "util.h"
#include "jitmap.h"

#define DB_APPLICATION_ID 0x5354524f	/* "STRO" */

enum db_mode {
	DB_READ,	/* must exist; never written */
	DB_WRITE,	/* created (mode 0640) and migrated if needed; an existing
			 * file is checked whole (PRAGMA quick_check) first.
			 * DB.stacks, root's raw stack copies, is attached
			 * as schema rawstk (rawstk.h) */
	DB_WRITE_TRUSTED,	/* DB_WRITE without the whole-file check: for
				 * strobed when the file is, by its stamp
				 * (dblock.h), exactly as a strobed left it */
};

struct db;

struct db *db_open(const char *path, enum db_mode mode, struct error *e);
/*
 * db_open, with busy(arg, n) deciding what to do when another connection
 * holds a lock db_open needs (SQLite's busy handler: n is how many times
 * it was called for that lock; return nonzero to wait and try again, 0 to
 * fail).  db_open alone waits up to 5 s.  A strobed opening a WAL database
 * that no other connection has open must recover its index, and for that
 * takes the WAL write lock, which any reader of the files can hold.
 */
struct db *db_open_busy(const char *path, enum db_mode mode, int (*busy)(void *, int),
			void *arg, struct error *e);
void db_close(struct db *db);
sqlite3 *db_sqlite(struct db *db);

struct progress;
/* Show on p (progress.h; NULL: stop) the reading of samples on db: every
 * block of samples decoded, by a sample_scan (samplescan.h) or through the
 * samples table, adds its rows to p.  sample_scan_total() gives p its
 * total. */
void db_set_progress(struct db *db, struct progress *p);
struct progress *db_progress(struct db *db);
const char *db_path(const struct db *db);
/* Schema version this build writes and reads. */
int db_schema_version(void);
/* Directory of the binary cache that goes with this database: the
 * database's path with ".cache" appended. free() it. */
char *db_cache_dir(const struct db *db);

/* e = what failed and SQLite's message, saying so when the file is corrupt
 * or locked. */
int db_sql_error(struct db *db, struct error *e, const char *what);

/* How long a statement waits for a lock another connection holds before
 * it fails with SQLITE_BUSY (db_open sets 5000 ms).  strobed lowers it
 * once started: its event loop must not sleep in SQLite. */
void db_set_busy_timeout(struct db *db, int ms);
/* 1 if the last failure was a lock another process holds (SQLITE_BUSY or
 * SQLITE_LOCKED): nothing was written, and the same call may succeed later. */
int db_busy(struct db *db);

/* A write transaction.  On a DB_WRITE database it is BEGIN IMMEDIATE: the
 * write lock is taken here or not at all, so a lock held by another
 * process fails db_begin (db_busy() is then 1), never a statement or the
 * COMMIT in the middle of a batch. */
int db_begin(struct db *db, struct error *e);
int db_commit(struct db *db, struct error *e);
int db_rollback(struct db *db);

struct db_session {
	int64_t id;
	char name[128];
	char state[16];			/* running | done | aborted | interrupted
					 * (| deleting: never returned) */
	char backend[16];
	int64_t owner_uid;
	char hostname[128];
	char kernel_release[128];
	int64_t nr_cpus;
	char sample_event[128];
	int64_t sample_freq, sample_period;	/* one of them is 0 */
	int64_t start_ns, end_ns;
	int64_t wall_offset_ns;
	int64_t tsc_mult, tsc_shift, tsc_ref, tsc_ref_ns;
	char tsc_source[16];
	int64_t kernel_binary_id;
	char kallsyms_key[128];
	int64_t first_sample, last_sample;	/* rowids; 0 when none */
	int64_t samples, lost, throttled, duration_ns;
	/* schema 5: the width of the session's sample_time buckets (0: it
	 * has no sample_time rows), and the samples stored after one of a
	 * later time (-1: not counted, sessions from before schema 5) */
	int64_t time_bucket_ns, late_samples;
	/* schema 9: records the merge handed out after a younger one, and the
	 * largest lateness (-1: not counted, sessions from before schema 9) */
	int64_t late_records, late_max_ns;
	/* schema 13: where its processes' cgroups came from: "sample",
	 * "proc", "none"; "" before schema 13 (doc/SCHEMA.md) */
	char cgroup_source[16];
	/* schema 14: how its samples' stacks were recorded: "fp",
	 * "dwarf,BYTES"; "" none (NULL in the table) */
	char call_graph[32];
	/* schema 16: "exact" (--attribution exact); "" sample (NULL) */
	char attribution[16];
	/* counting events, in column order c0.. */
	int nr_events;
	struct db_event {
		char name[128];
		uint32_t type;
		uint64_t config, config1, config2;
	} events[STROBE_MAX_COUNTERS];
};

/* Insert s (id is set); its events are stored too. */
int db_session_insert(struct db *db, struct db_session *s, struct error *e);
/* Write back the mutable fields: state, end_ns, tsc_*, kernel/kallsyms,
 * first/last_sample, samples, lost, throttled, duration_ns,
 * time_bucket_ns, late_samples, late_records, late_max_ns, cgroup_source,
 * call_graph. */
int db_session_update(struct db *db, const struct db_session *s, struct error *e);
/* Load session id, or the latest when id is 0. Fails with a clear
 * message when there is none.  Sessions being deleted do not exist. */
int db_session_get(struct db *db, int64_t id, struct db_session *s, struct error *e);
/* Schema 14: store how session id's stacks were recorded ("fp",
 * "dwarf,BYTES"; NULL: none) in sessions.call_graph at once (the row's
 * other writes keep db_session.call_graph). */
int db_session_set_call_graph(struct db *db, int64_t id, const char *call_graph,
			      struct error *e);
/* The largest session id (0: none). */
int db_session_max_id(struct db *db, int64_t *id, struct error *e);
/* Is s stored whole: its rowid range final and sample_agg, session_cpus
 * and its totals written ('done', and 'interrupted' once strobed rebuilt
 * them)?  Reports read the histogram only of such sessions. */
int db_session_complete(const struct db_session *s);

struct db_sample {
	int64_t session_id;
	uint64_t time_ns, tsc;
	uint32_t cpu, pid, tid;
	int64_t comm_id, binary_id;
	uint64_t offset;
	uint32_t flags;
	uint8_t nr;			/* counter columns in use */
	uint64_t c[STROBE_MAX_COUNTERS];
	uint64_t period;		/* the sampling event's period; 0: unknown */
	int64_t stack_id;		/* (schema 14) stacks.id; 0: none (NULL) */
};

/* Append one sample row; returns its rowid, or -1. Call inside db_begin(). */
int64_t db_sample_insert(struct db *db, const struct db_sample *s, struct error *e);

/* What a histogram row sums, the same at the end of struct db_agg and
 * struct db_stack_agg (named .sums there, its fields also directly). */
#define DB_SUMS_FIELDS							\
	uint64_t samples;						\
	uint64_t c[STROBE_MAX_COUNTERS];				\
	uint64_t period;		/* sum of the samples' periods */	\
	int period_unknown		/* a sample had none: period is NULL */
struct db_sums {
	DB_SUMS_FIELDS;
};

/* Add from's sums to to's. */
static inline void db_sums_add(struct db_sums *to, const struct db_sums *from)
{
	to->samples += from->samples;
	to->period += from->period;
	to->period_unknown |= from->period_unknown;
	for (int i = 0; i < STROBE_MAX_COUNTERS; i++)
		to->c[i] += from->c[i];
}

/* One row of sample_agg; added to an existing row with the same key. */
struct db_agg {
	int64_t binary_id;
	uint64_t offset;
	uint32_t pid;
	uint64_t start_ns;		/* (schema 11) the process's start
					 * (processes.start_ns); 0: unknown */
	int64_t comm_id;
	uint32_t flags;
	union {				/* the sums, also as one struct */
		struct db_sums sums;
		struct { DB_SUMS_FIELDS; };
	};
};
int db_agg_add(struct db *db, int64_t session_id, int nr, const struct db_agg *a,
	       struct error *e);

/* One row of sample_time (schema 5): the samples of one fine time bucket,
 * CPU, process, comm and binary; added to an existing row with the same
 * key (last_row and max_ns: the larger, min_ns: the smaller). */
struct db_time_agg {
	int64_t bucket;
	uint32_t cpu, pid;
	uint64_t start_ns;		/* (schema 11) as in db_agg */
	int64_t comm_id, binary_id;
	uint64_t samples;
	int64_t last_row, min_ns, max_ns;
	uint64_t c[STROBE_MAX_COUNTERS];
};
int db_time_agg_add(struct db *db, int64_t session_id, int nr, const struct db_time_agg *a,
		    struct error *e);

/* Schema 14.  A row of stacks: nr frames of 16 bytes (schema/014-stacks.sql). */
int db_stack_insert(struct db *db, int64_t session_id, int64_t id, int64_t hash, uint32_t nr,
		    uint32_t flags, const void *frames, struct error *e);

/* One row of stack_agg; added to an existing row with the same key. */
struct db_stack_agg {
	int64_t stack_id;
	uint32_t pid;
	uint32_t zero;			/* 0: the key has no padding */
	uint64_t start_ns;		/* as in db_agg */
	int64_t comm_id;
	union {
		struct db_sums sums;
		struct { DB_SUMS_FIELDS; };
	};
};
int db_stack_agg_add(struct db *db, int64_t session_id, int nr, const struct db_stack_agg *a,
		     struct error *e);

/* count more samples whose user stack stopped in binary_id (0: no
 * binary, NULL) for reason (unwind_errors). */
int db_unwind_error_add(struct db *db, int64_t session_id, int64_t binary_id,
			const char *reason, uint64_t count, struct error *e);

/* The raw user registers and stack copy of sample rowid (--keep-stacks:
 * raw_stacks), len bytes. */
int db_raw_stack_insert(struct db *db, int64_t session_id, int64_t rowid, const void *ustack,
			size_t len, struct error *e);

/* A row of unscheduled: the interval end_ns - enabled_ns .. end_ns of cpu,
 * kind "multiplexed" or "unschedulable" (schema 8). */
int db_unscheduled_insert(struct db *db, int64_t session_id, uint32_t cpu, uint64_t end_ns,
			  uint64_t enabled_ns, uint64_t running_ns, const char *kind,
			  struct error *e);
int db_lost_insert(struct db *db, int64_t session_id, uint32_t cpu, uint64_t time_ns,
		   uint64_t count, const char *kind, struct error *e);

/* A row of markers (schema 002): a USDT probe hit or a 'strobe mark'. */
struct db_marker {
	uint64_t time_ns;	/* CLOCK_MONOTONIC */
	int cpu;		/* -1: none (strobe mark) */
	int64_t pid, tid;	/* -1: unknown */
	const char *kind;	/* "usdt" or "mark" */
	const char *name;
	const char *args;	/* NULL: none */
};
int db_marker_insert(struct db *db, int64_t session_id, const struct db_marker *m,
		     struct error *e);

/* A row of session_probes (schema 002): one site of a --marker probe. */
struct db_probe {
	const char *spec;		/* PATH:PROVIDER:NAME */
	const char *binary_key;		/* NULL: unknown */
	uint64_t offset;		/* file offset of the site */
	int64_t semaphore;		/* file offset of its semaphore, -1: none */
	int nargs;
	const char *arg_spec;
};
int db_probe_insert(struct db *db, int64_t session_id, const struct db_probe *p,
		    struct error *e);

struct db_cpu_stats {
	uint32_t cpu;
	uint64_t samples, lost;
	uint64_t tail[STROBE_MAX_COUNTERS];	/* increase after the last sample */
	/* (schema 7) increases over lost intervals: the counter increases of
	 * the samples flagged STROBE_SAMPLE_AFTER_LOSS, which they do not carry */
	uint64_t lost_inc[STROBE_MAX_COUNTERS];
};
int db_cpu_stats_put(struct db *db, int64_t session_id, int nr,
		     const struct db_cpu_stats *st, struct error *e);

/* Find or add the binary with this key at this path; size/cached/problem
 * update an existing row. Returns the id or -1. */
int64_t db_binary_intern(struct db *db, const char *key, const char *path,
			 int64_t size, int cached, const char *problem,
			 struct error *e);

struct db_binary {
	int64_t id;
	char key[128];
	char path[4096];
	int64_t size;
	int cached;
	char problem[256];		/* "" when none */
	char note[512];			/* "" when none */
};
int db_binary_get(struct db *db, int64_t id, struct db_binary *b, struct error *e);

/* Set the note of binary id: a warning that does not stop symbolisation. */
int db_binary_note(struct db *db, int64_t id, const char *note, struct error *e);

/* A perf map or jitdump of process (pid, start_ns) copied into the session
 * (schema 10): its row in jit_maps, then each symbol (load_ns, schema 12:
 * NULL when 0); problem NULL when read. */
int db_jit_map_put(struct db *db, int64_t session_id, uint32_t pid, uint64_t start_ns,
		   const char *path, uint64_t symbols, uint64_t dropped,
		   const char *problem, struct error *e);
int db_jit_symbols_put(struct db *db, int64_t session_id, uint32_t pid, uint64_t start_ns,
		       const struct jitmap *m, struct error *e);

int64_t db_comm_intern(struct db *db, const char *name, struct error *e);

/* Store or update the row of process (pid, start_ns); ppid, comm_id,
 * exit_ns 0: keep what the row has. */
int db_process_put(struct db *db, int64_t session_id, uint32_t pid, uint32_t ppid,
		   int64_t comm_id, uint64_t start_ns, uint64_t exit_ns,
		   struct error *e);
/* The same, and uncertain_ns (schema 9; 0: none): the time from which its
 * maps may be wrong.  A row keeps the first it was given. */
int db_process_put_uncertain(struct db *db, int64_t session_id, uint32_t pid, uint32_t ppid,
			     int64_t comm_id, uint64_t start_ns, uint64_t exit_ns,
			     uint64_t uncertain_ns, struct error *e);

/* Schema 13: cgroup id's path in session (an id stored again keeps the
 * latest path); process (pid, start_ns)'s cgroup (0: unknown, NULL) and
 * how many times its samples changed cgroup. */
int db_cgroup_put(struct db *db, int64_t session_id, uint64_t id, const char *path,
		  struct error *e);
int db_process_cgroup(struct db *db, int64_t session_id, uint32_t pid, uint64_t start_ns,
		      uint64_t cgroup_id, uint64_t moves, struct error *e);

#endif
