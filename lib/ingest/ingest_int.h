/*
 * ingest_int.h - what the files of ingest (ingest.h) share: the session's
 * state, struct ingest, and the steps one file calls in another.  Not for
 * use outside lib/ingest.
 *
 * The files, one concern each:
 *   ingest.c    the session: ingest_new/_free, the batch (open, commit,
 *               undo), ingest_finish, limits and statistics, the ingest
 *               worker (uworker.h) started at the first need;
 *   sample.c    the sample path: ingest_record, counter increases, the
 *               histograms sample_agg and sample_time, held samples;
 *               lost, throttle, unscheduled and marker records;
 *   procs.c     processes: comm, exec, fork, exit, whom an entry is
 *               charged to, uncertainty (lost and late records);
 *   binaries.c  binary identification: ingest_mmap, a mapping's binary
 *               keyed, checked and cached, the vDSO;
 *   jitcopy.c   JIT code: perf maps and jitdumps copied at a process's
 *               exit (or the session's end);
 *   cgroups.c   cgroup v2 names, and the cgroups of a session's samples;
 *   callstack.c call stacks: frames, unwinding, stack ids, stack_agg;
 *   exact.c     --attribution exact: switch reads and threads' tails.
 *
 * Locking: none.  An ingest is used by one thread at a time (strobed's
 * ingest thread of the session, under the session's lock; ingest.h's
 * calls are not reentrant), so no field is locked: each field says which
 * file owns it (writes it; others may read it).
 *
 * A failed batch is undone (ingest.c's batch_undo): every file that keeps
 * state changed by the open batch keeps its state as of the last commit
 * too, and has a _commit and an _undo step that batch_committed() and
 * batch_undo() call.
 */
#ifndef STROBE_INGEST_INT_H
#define STROBE_INGEST_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "ingest.h"
#include "maps.h"
#include "otable.h"
#include "vdso.h"

/* Rows of an open batch after which it is committed (unless ingest_begin
 * holds it open). */
#define BATCH_ROWS	50000

/* Slots of the cache of exited processes' starts (struct ingest's gone). */
#define GONE_CACHE	4096

/* An entry of a table keyed by name (otable_init_str): binaries, comms,
 * cgroups. */
struct name_id {
	char *name;		/* the key (otable's copy) */
	int64_t id;		/* 0: none yet (or forgotten by batch_undo) */
};

/* A CPU's counters (sample.c): the running totals of its last record,
 * whether records were lost since, and its statistics. */
struct cpu_counts {
	int seen;		/* a sample has set last[] */
	int after_loss;		/* records were lost since the last sample */
	uint64_t last[STROBE_MAX_COUNTERS];
	struct db_cpu_stats st;
};

struct cpu_state {
	struct cpu_counts now, committed;
	int have_final;		/* final: ingest_cpu_final()'s totals */
	uint64_t final[STROBE_MAX_COUNTERS];
};

/* The session's totals as of the last commit (ingest.c). */
struct ingest_committed {
	int64_t first_sample, last_sample, samples, lost, throttled;
	int64_t late_samples, max_time, late_records, late_max_ns;
	struct ingest_stats stats;
	int64_t binary_max, comm_max;	/* largest ids known to be stored */
};

/* Where a process's cgroup comes from (cgroups.c). */
enum ingest_cgroup_source { CG_NONE, CG_SAMPLE, CG_PROC };

struct ingest {
	/* ingest.c: the session, set by ingest_new() */
	struct db *db;
	struct bincache *cache;
	struct db_session *s;		/* its counts: sample.c, procs.c */
	struct ingest_limits limits;
	struct ingest_stats stats;	/* each count by the file of its concern */
	struct readbudget *budget;	/* binaries.c: bytes of binaries read,
					 * by file and owner */
	struct shares *shares;		/* each user's share of the tables
					 * (binaries, comms, cgroups, stacks) */

	/* ingest.c: the open batch */
	int in_batch;
	int held;		/* ingest_begin: no commit before ingest_commit */
	size_t batch_rows;	/* sample.c counts its rows */
	struct ingest_committed committed;
	uint64_t batch_uncertain_ns;	/* procs.c: first uncertainty marked
					 * in the open batch (0: none): undone
					 * with it */

	/* sample.c: the sample path */
	int nr;			/* counting events (s->nr_events) */
	struct cpu_state *cpus;	/* by CPU, grown by cpu_state() */
	size_t nr_cpus;
	struct otable agg;	/* struct db_agg: committed samples' histogram */
	struct otable pending;	/* struct db_agg: the open batch's */
	struct otable times;	/* struct db_time_agg: the open batch's
				 * sample_time sums */
	int64_t max_time;	/* latest sample time so far */
	struct ubatch *ubatch;	/* samples waiting for a batched unwind */
	int flushing;		/* samples_flush() is finishing them */
	int unwound;		/* >= 0: the uworker's answer of the sample
				 * being finished (read by callstack.c); -1: none */
	int flush_failed;	/* a flush without a caller to tell failed: */
	struct error flush_error;	/* told by the next one */

	/* procs.c: processes, their names */
	struct proc_table *procs;	/* also read and marked by the others */
	struct otable comms;	/* struct name_id: comm -> comms.id */
	int64_t comm_max;	/* largest comms.id handed out */
	/* the starts of processes that exited lately, by pid & (GONE_CACHE - 1),
	 * so that their samples taken after the exit record (their last
	 * moments) still count for the right process (sample.c); an older
	 * exit whose slot a newer one took counts as process unknown
	 * (start 0) */
	struct { uint32_t pid; uint64_t start_ns; } gone[GONE_CACHE];

	/* binaries.c: binaries */
	struct hashkey_memo *memo;
	struct otable binaries;	/* struct name_id: a binary's memo key
				 * ("file:", "unopened:", "ino:": binaries.c's
				 * binary_memo; "vdso:self") or special
				 * name -> binaries.id */
	int64_t kernel_id;	/* [kernel.kallsyms] (ingest.c: ingest_kernel) */
	int64_t unknown_id;	/* [unknown] (ingest.c: batch_open) */
	int64_t binary_max;	/* largest binaries.id handed out */
	struct vdso_image vdso;	/* strobed's own; size 0: none */
	int vdso_tried;
	int parse_lost;		/* the build-id read in flight failed */

	/* jitcopy.c: root handles taken (maps.h jit_root) */
	size_t jit_roots;

	/* cgroups.c: cgroups (schema 13): where a process's comes from;
	 * path -> id of those stored; whether the open batch wrote a
	 * process's cgroup row */
	enum ingest_cgroup_source cgroup_source;
	char cgroup_root[256];	/* the cgroup2 mount */
	struct otable cgroups;	/* struct name_id: path -> cgroup id */
	int cgroup_dirty;

	/* callstack.c: call stacks (schema 14).  ingest_call_graph(): 0 none,
	 * 1 fp, 2 dwarf (enum callgraph_mode); dwarf's raw stacks kept.
	 * stacks.id by the seeded 128-bit hash of a stack's frames and flags;
	 * the largest id handed out and the largest committed; stack_agg
	 * sums (committed, open batch); unwinding failures by (binary,
	 * reason); scratch for one sample */
	int call_graph;
	int keep_stacks;
	struct otable stack_ids;	/* struct stack_key */
	int64_t stack_max, stack_committed;
	uint64_t stack_seed;
	struct otable stack_agg, stack_pending;	/* struct db_stack_agg */
	struct otable unwind_errs;	/* struct unwind_err */
	unsigned char *frames;		/* INGEST_STACK_FRAMES * 16 bytes + 16 */
	uint64_t *uips;			/* INGEST_STACK_FRAMES */

	/* exact.c: --attribution exact: switch records seen; struct
	 * exact_thread by tid */
	int exact;
	struct otable exact_threads;

	/* ingest.c: the ingest worker (uworker.h: unwinding for callstack.c,
	 * build-ids for binaries.c, JIT files for jitcopy.c), started at the
	 * first need; unwinder_failed: it could not start (NO_BINARY) */
	struct uworker *unwinder;
	int unwinder_failed;
};

/* ingest.c */
/* The id slot of name in t (struct name_id), added (id 0) when create is
 * set; NULL when missing and not created.  Valid until the next add. */
int64_t *name_slot(struct otable *t, const char *name, int create);
/* Open the batch if none is (adding [unknown]), as ingest.h's entry
 * points do before writing. */
int batch_open(struct ingest *in, struct error *e);
/* The ingest worker, started at the first need; NULL when it cannot. */
struct uworker *ingest_worker(struct ingest *in);
/* After a parse in the worker: its counts for strobed's log at the stop. */
void parse_done(struct ingest *in, int failed);
/* The worker's counts into in->stats. */
void unwinder_stats(struct ingest *in);

/* sample.c */
/* Finish the held samples (the FLUSH POINTS: sample.c); every entry point
 * of ingest.h calls it first. */
int samples_flush(struct ingest *in, struct error *e);
/* The same where no error can be returned: told by the next flush. */
void samples_flush_later(struct ingest *in);
struct cpu_state *cpu_state(struct ingest *in, uint32_t cpu);
/* The increases of r's counters since its CPU's previous record into c;
 * 1 when they span lost records (kept as the CPU's, c all zero). */
int counter_increase(struct ingest *in, struct cpu_counts *cs, const struct record *r,
		     uint64_t *c);
/* Add the rows of from (struct db_agg) to t, and empty from. */
/* Add the rows of from to t (the same key and entry type; the entries'
 * struct db_sums at sums_at: offsetof(struct db_agg, sums) or
 * offsetof(struct db_stack_agg, sums)), and empty from. */
void agg_merge(struct otable *t, struct otable *from, size_t sums_at);
/* The bucket of sample_time that time_ns falls in. */
int64_t time_bucket(const struct ingest *in, uint64_t time_ns);

/* procs.c */
/* Whom an entry for pid's process p (NULL: unknown) is charged to. */
uint32_t proc_charge(struct proc *p, uint32_t pid);
/* The process of sample pid when it is not in the table any more (its
 * exit came before its last samples): its start, 0 if unknown. */
static inline uint64_t proc_gone_start(const struct ingest *in, uint32_t pid)
{
	return in->gone[pid & (GONE_CACHE - 1)].pid == pid ?
	       in->gone[pid & (GONE_CACHE - 1)].start_ns : 0;
}

/* binaries.c */
/* binaries.id of a name that is no file ("[unknown]", "[anon]", ...). */
int64_t binary_special(struct ingest *in, const char *key, struct error *e);
/* The file at path as process pid sees it (binaries.c says how). */
int open_in_root(uint32_t pid, const char *path);

/* jitcopy.c */
/* Copy p's perf map and jitdump, if it has any, into the session. */
int jit_copy_proc(struct ingest *in, struct proc *p, struct error *e);
/* The same for every process still running (ingest_finish). */
int jit_copy_all(struct ingest *in, struct error *e);
/* Give back p's handle of its /tmp, if it holds one. */
void jit_root_drop(struct ingest *in, struct proc *p);
/* p, just forked, inherited JIT code: take a handle of its own /tmp. */
void jit_forked(struct ingest *in, struct proc *p);
/* m maps p's jitdump (jitdump_name_matches): remember it for its exit. */
void jit_mmap_dump(struct ingest *in, const struct sink_mmap *m);
/* m is anonymous executable memory of p: JIT code, perhaps. */
void jit_mmap_anon(struct ingest *in, struct proc *p, const struct sink_mmap *m);

/* cgroups.c */
/* A sample of p in cgroup id (0: the sample does not say). */
int cgroup_sample(struct ingest *in, struct proc *p, uint64_t id, struct error *e);
/* p's cgroup row, when it changed in the open batch. */
int cgroup_store(struct ingest *in, struct proc *p, struct error *e);
/* Every such row (at a commit). */
int cgroups_store_all(struct ingest *in, struct error *e);
void cgroups_commit(struct ingest *in);
void cgroups_undo(struct ingest *in);

/* callstack.c */
void callstack_init(struct ingest *in);
void callstack_free(struct ingest *in);
/* The stack of sample r (when it carries one) of process p (NULL:
 * unknown) at its own (row->binary_id, row->offset) into row->stack_id:
 * 0 when none (or past the limit), -1 on error. */
int stack_sample(struct ingest *in, const struct record *r, struct proc *p,
		 struct db_sample *row, struct error *e);
/* Store r's raw register and stack copy for row rowid (keep_stacks). */
int raw_stack_store(struct ingest *in, const struct record *r, int64_t rowid,
		    struct error *e);
/* Add the sample row of process start start_ns to stack_agg's open batch. */
void stack_agg_add(struct ingest *in, const struct db_sample *row, uint64_t start_ns);
/* The unwinding failures counted since the last commit, into unwind_errors. */
int callstack_store_errors(struct ingest *in, struct error *e);
/* stack_agg, all of it (ingest_finish). */
int callstack_finish(struct ingest *in, struct error *e);
void callstack_commit(struct ingest *in);
void callstack_undo(struct ingest *in);

/* exact.c */
void exact_init(struct ingest *in);
void exact_free(struct ingest *in);
/* A switch read (STROBE_SAMPLE_SWITCH). */
int exact_switch(struct ingest *in, const struct record *r, struct error *e);
/* Thread tid of pid exited: its next switch out is its last. */
void exact_exited(struct ingest *in, uint32_t tid, uint32_t pid);
/* Add the increases of the thread's earlier runs to its sample row. */
void exact_take(struct ingest *in, struct db_sample *row);
/* Where the thread's tail goes, should it exit before its next sample:
 * its sample's keys. */
void exact_keys(struct ingest *in, const struct db_sample *row, const struct db_agg *akey,
		const struct db_time_agg *tkey);
/* The tails of threads still running (ingest_finish). */
int exact_finish(struct ingest *in, uint64_t end_ns, struct error *e);
void exact_commit(struct ingest *in);
void exact_undo(struct ingest *in);

#endif
