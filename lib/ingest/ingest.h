/*
 * ingest.h - turning a session's records into database rows.
 *
 * The capture backend feeds records in time order (side-band and samples
 * merged across CPUs); ingest keeps the processes' address spaces, names
 * each executable mapping by its binary's hashkey (copying the binary into
 * the cache once), resolves every sample to (binary, file offset), turns
 * running counter totals into per-CPU increases (the attribution rule of
 * report.h), and writes samples in batched transactions while keeping the
 * per-session histogram in memory for sample_agg.
 *
 * Call stacks (schema 14): a sample carrying a callchain
 * (STROBE_SAMPLE_CALLCHAIN) or a user register and stack copy
 * (STROBE_SAMPLE_USTACK, unwound with unwind.h) gets a stack, built and
 * deduplicated as schema/014-stacks.sql says and stored in the batch of its
 * first sample (samples.stack_id); stack_agg is kept in memory like
 * sample_agg, unwinding failures are added to unwind_errors at each commit,
 * and with keep_stacks (ingest_call_graph) the raw copies go to
 * rawstk.raw_stacks.
 */
#ifndef STROBE_INGEST_H
#define STROBE_INGEST_H

#include <stdint.h>
#include "bincache.h"
#include "db.h"
#include "record.h"
#include "sink.h"

struct ingest;

/* s must already be stored (db_session_insert); ingest updates it. */
struct ingest *ingest_new(struct db *db, struct bincache *cache, struct db_session *s,
			  struct error *e);
void ingest_free(struct ingest *in);

/* Key the running kernel and snapshot /proc/kallsyms into the cache. */
int ingest_kernel(struct ingest *in, struct error *e);

int ingest_comm(struct ingest *in, uint32_t pid, uint32_t tid, const char *comm,
		int exec, uint64_t time_ns, struct error *e);
int ingest_fork(struct ingest *in, uint32_t ppid, uint32_t pid, uint32_t tid,
		uint64_t time_ns, struct error *e);
/* The exit of the last thread of a process that mapped anonymous
 * executable memory also copies its perf map (/tmp/perf-PID.map, checked
 * and bounded as jitmap.h says) into jit_maps and jit_symbols (schema 10);
 * that of a process that mapped its jitdump (jit-PID.dump, executable:
 * ingest_mmap() does not make it a binary) copies that file (jitdump.h;
 * opened as doc/DESIGN.md says) the same way.  ingest_finish() does the
 * same for such processes still running. */
int ingest_exit(struct ingest *in, uint32_t pid, uint32_t tid, uint64_t time_ns,
		struct error *e);

/* An executable mapping's record: struct sink_mmap (lib/capture/sink.h),
 * the one type a backend delivers and ingest_mmap() takes. */
/* Whether ingest_mmap() would read a file on behalf of the process that
 * made this mapping (its perf map or jitdump: executable anonymous memory,
 * or jit-PID.dump), so that it needs the process's user (owner_known). */
int ingest_mmap_wants_owner(uint32_t pid, uint32_t prot, const char *filename);
/* Whether ingest_mmap() would read the mapped file itself (a binary to
 * hash and cache): an executable mapping of a file, not a jitdump. */
int ingest_mmap_wants_file(uint32_t pid, uint32_t prot, const char *filename);
/* A [vdso] mapping as long as strobed's own is given strobed's vDSO image
 * (vdso.h), cached once, at offset ip - start; //anon, memfd: and other
 * file-less executable memory is [anon] at offset = address. */
int ingest_mmap(struct ingest *in, const struct sink_mmap *m, struct error *e);

/*
 * Cgroups (schema 13).  ingest_cgroups_start() says where the cgroups of
 * samples come from (from_samples: each sample's record.sample.cgroup,
 * PERF_SAMPLE_CGROUP; else /proc/PID/cgroup at a process's first sample,
 * once), stores it as sessions.cgroup_source and stores every cgroup under
 * root (NULL: cgroups_find_root(); "": none, only those ingest_cgroup()
 * gives; cgroups.h; no cgroup v2 mount: source "none", no cgroups).
 * ingest_cgroup() stores a cgroup's path (PERF_RECORD_CGROUP).  A process's
 * cgroup is that of its latest sample (processes.cgroup_id); a sample in
 * another cgroup than the one before is counted (processes.cgroup_moves).
 * At most INGEST_CGROUPS_MAX paths, the rest counted (cgroups_over).
 */
#define INGEST_CGROUPS_MAX	65536
/* Processes of other mount namespaces with JIT code whose root directory
 * handle is held until their exit (their perf map is in their own /tmp, by
 * their own pid: /proc/PID/root is gone by the exit) */
#define INGEST_JIT_ROOTS_MAX	1024
int ingest_cgroups_start(struct ingest *in, int from_samples, const char *root,
			 struct error *e);
int ingest_cgroup(struct ingest *in, uint64_t id, const char *path, struct error *e);

/*
 * How the session's samples carry call stacks (schema 14): call_graph as
 * callgraph_parse() reads it ("fp", "dwarf", "dwarf,BYTES"; NULL or "":
 * none), stored in sessions.call_graph as callgraph_format() spells it.
 * keep_stacks (dwarf only): the samples' raw register and stack copies
 * are kept after unwinding, in rawstk.raw_stacks (the root-only DB.stacks
 * that db_open attaches: rawstk.h).  Called once, before records.
 */
int ingest_call_graph(struct ingest *in, const char *call_graph, int keep_stacks,
		      struct error *e);

/* A sample or a lost report (kind "ring" for STROBE_REC_LOST).  A sample
 * whose user stack the unwind worker unwinds (--call-graph dwarf) may be
 * held (copied) and stored by the next call of any other ingest function,
 * with the others held, in the order they came (one round trip to the
 * worker for many: uworker.h): ingest_commit(), ingest_finish() and
 * ingest_get_stats() see every sample given before stored. */
int ingest_record(struct ingest *in, const struct record *r, struct error *e);
/* Lost records of another kind ("samples": dropped before the buffer). */
int ingest_lost(struct ingest *in, uint32_t cpu, uint64_t time_ns, uint64_t count,
		const char *kind, struct error *e);
/*
 * Lost records of every kind on cpu (perf's PERF_RECORD_LOST): stored as
 * ingest_lost(kind "ring"), and since mmap, exec, fork and exit records may
 * be among them, every process alive now is marked uncertain (its
 * processes row gets uncertain_ns = time_ns, schema 9): its maps may miss a
 * mapping or still be those of an exited process whose pid was reused.
 * Children forked from it inherit the mark; its exec clears it (the row
 * keeps it).
 */
int ingest_lost_records(struct ingest *in, uint32_t cpu, uint64_t time_ns, uint64_t count,
			struct error *e);
/*
 * The record that follows (of process pid; 0 for a sample or a record of no
 * process) was handed out by the merge late_ns after a younger one, out of
 * time order: counted in the session's late_records and late_max_ns
 * (schema 9).  A side-band record of a process is applied at its delivery,
 * so its samples between its time and now were resolved without it: the
 * process is marked uncertain from time_ns, as by ingest_lost_records().
 */
int ingest_late(struct ingest *in, uint32_t pid, uint64_t time_ns, uint64_t late_ns,
		struct error *e);
int ingest_throttle(struct ingest *in, uint32_t cpu, uint64_t time_ns, struct error *e);
/* cpu's sampling group counted running_ns of the enabled_ns that ended at
 * time_ns (error: the kernel could not schedule it at all, a pinned group
 * in error state).  Stored in unscheduled when it did not count all along. */
int ingest_unscheduled(struct ingest *in, uint32_t cpu, uint64_t time_ns,
		       uint64_t enabled_ns, uint64_t running_ns, int error, struct error *e);
/* A marker (schema 002): a USDT probe hit, or a 'strobe mark'. */
int ingest_marker(struct ingest *in, const struct db_marker *m, struct error *e);

/*
 * Open the batch now, taking the database's write lock (db_begin), and
 * keep it open until ingest_commit(): no commit every 50,000 rows in
 * between, so the lock is never released and taken again in the middle of
 * a drain.  Fails, having read and changed nothing, when another process
 * holds a lock on the database (db_busy() is then 1): the caller keeps its
 * records where they are and tries again later.
 */
int ingest_begin(struct ingest *in, struct error *e);

/* Commit the open batch and the session's running totals. */
int ingest_commit(struct ingest *in, struct error *e);

/* The final running counter totals of a CPU, read when the session stops:
 * their increase after the CPU's last sample is stored as unattributed. */
void ingest_cpu_final(struct ingest *in, uint32_t cpu, const uint64_t *values, int nr);

/* Width of the fine time buckets of sample_time (sessions.time_bucket_ns):
 * 'strobe plot' sums buckets that are multiples of it from that table. */
#define INGEST_TIME_BUCKET_NS	10000000LL	/* 10 ms */

/* Flush everything, write the histogram and per-CPU statistics, and mark
 * the session done with its end time. */
int ingest_finish(struct ingest *in, uint64_t end_ns, struct error *e);

/* What one session may make strobed hold or read, whatever its processes
 * do: distinct binaries (by build-id or inode, and path) and command names
 * in memory, and bytes of binaries opened to hash, compare and copy.
 * Past a limit, new binaries are "[too many binaries]", new names
 * "[too many names]", and binaries not read are stored with a problem; all
 * are counted in ingest_stats.  ingest_new() sets the defaults below. */
struct ingest_limits {
	uint64_t binaries, comms, bytes_read;
	uint64_t stacks;	/* distinct call stacks; 0: INGEST_STACKS_MAX */
};
/* Past INGEST_STACKS_MAX distinct stacks (schema 14) a sample with a new
 * stack is stored without one (stack_id NULL), counted in stacks_over and
 * samples_no_stack.  A stack has at most INGEST_STACK_FRAMES frames (more:
 * cut, flagged incomplete).  Unwinding failures are counted for at most
 * INGEST_UNWIND_ERRORS_MAX (binary, reason) pairs, the rest as no binary. */
#define INGEST_STACKS_MAX		(1u << 20)
#define INGEST_STACK_FRAMES		1024
#define INGEST_UNWIND_ERRORS_MAX	65536
#define INGEST_BINARIES_MAX	65536
#define INGEST_COMMS_MAX	65536
#define INGEST_READ_MAX		(8ULL << 30)
void ingest_set_limits(struct ingest *in, const struct ingest_limits *lim);

struct ingest_stats {
	uint64_t samples, lost, throttled, binaries;
	uint64_t bytes_read;		/* of binaries, to hash, compare and copy */
	uint64_t binaries_over;		/* mappings past INGEST_BINARIES_MAX */
	uint64_t comms_over;		/* names past INGEST_COMMS_MAX */
	uint64_t collisions;		/* build-ids already cached with other bytes */
	uint64_t read_refused;		/* binaries not read: budget or owner's share */
	char read_refusals[256];	/* whose: readbudget_refusals() */
	uint64_t share_refused;		/* names, binaries, cgroups, stacks past a
					 * user's share (shares.h), within the
					 * *_over counts */
	char share_refusals[256];	/* whose: shares_refusals() */
	uint64_t unscheduled_ns;	/* sampling groups enabled but not counting */
	uint64_t uncertain;		/* processes marked by ingest_lost_records */
	uint64_t cgroups;		/* cgroup paths stored */
	uint64_t cgroups_over;		/* past INGEST_CGROUPS_MAX or CGROUP_PATH_MAX */
	uint64_t cgroup_unknown;	/* processes whose /proc/PID/cgroup was unreadable */
	uint64_t cgroup_moved;		/* processes whose samples changed cgroup */
	uint64_t jit_roots_over;	/* JIT processes past INGEST_JIT_ROOTS_MAX:
					 * their perf map looked for in strobed's /tmp */
	uint64_t stacks;		/* distinct call stacks stored */
	uint64_t stacks_over;		/* new stacks past the limit, not stored */
	uint64_t samples_no_stack;	/* samples with a callchain or user stack
					 * stored without a stack (the limit) */
	uint64_t unwind_failures;	/* samples whose user stack unwinding
					 * stopped early (unwind_errors) */
	uint64_t unwinder_crashes;	/* the unwind worker (uworker.h) died, */
	uint64_t unwinder_hangs;	/* was killed after its timeout */
	uint64_t unwinder_started;	/* workers started, the first included */
	uint64_t parse_failed;		/* files the ingest worker did not parse
					 * (uparse.h: crash, hang, bad answer): a
					 * binary keyed by its contents, a JIT
					 * file stored without symbols */
	uint64_t worker_failed[3];	/* the ingest worker's failures charged to
					 * unwinding, build-ids, JIT files (in that
					 * order: uworker.h's kinds) */
	uint64_t worker_refused[3];	/* their requests refused after
					 * UWORKER_RESTARTS + 1 failures of that kind */
	uint64_t unwinder_calls;	/* round trips to it (batches of samples) */
	uint64_t unwinder_samples;	/* samples they carried */
	uint64_t switch_reads;		/* --attribution exact: counter reads at
					 * context switches (STROBE_SAMPLE_SWITCH) */
	uint64_t exact_tails;		/* and threads' last runs stored with no
					 * sample after them (sample_agg rows
					 * with samples 0 added) */
	uint64_t switch_missed;		/* and samples and switch reads after
					 * context switches the kernel counted but
					 * wrote no read for
					 * (STROBE_SAMPLE_SWITCH_MISSED): their
					 * increases went to session_cpus.lost_c* */
};
/* (Held samples are finished first: ingest_record.) */
void ingest_get_stats(struct ingest *in, struct ingest_stats *st);
/* The records lost on CPU cpu so far (in the open batch too, as in
 * ingest_get_stats: summed over the CPUs, its lost); 0 for a CPU not seen. */
uint64_t ingest_cpu_lost(const struct ingest *in, uint32_t cpu);

#endif
