/*
 * uworker.h - the ingest worker: user stacks unwound (unwind.h), and
 * build-ids and JIT symbols parsed (uparse.h), in a process without
 * privileges: strobed runs as root, and the CFI of the binaries a process
 * maps and the stack bytes it had are bytes that process's user controls
 * (doc/SECURITY.md, "Which process parses what").
 *
 * The unwinder (unwind.c, its logic unchanged) runs in a worker started,
 * dropped to nobody, filtered and respawned by symworker.h (one home for
 * the worker concept; its comm is "strobe-unwind").
 *
 * Samples go in batches (a round trip costs more than most unwinds, and
 * on a loaded machine each one waits for the worker to be scheduled): one
 * request holds up to UWORKER_BATCH samples, and each distinct process's
 * identity (pid, start_ns) and maps (at most UWORKER_MAPS) once, then per
 * sample its process's index, the ABI, regs_mask and registers, the stack
 * copy (at most UWORKER_STACK bytes); the answer and its worst case (max
 * ips a sample) fit SYMWORKER_EXT_MAX bytes.  uworker_add() copies a
 * sample into the batch being built (nothing of the caller's is kept),
 * uworker_run() sends it, uworker_result() reads each sample's answer.
 * uworker_unwind() is a batch of one.
 *
 * When the worker's unwinder opens a binary, it asks the parent for it,
 * and ops->open_binary's descriptor is passed (SCM_RIGHTS) only for a
 * binary_id of the maps sent in that batch; the worker never opens a
 * path.  The answer is checked sample by sample: result in range, nr <=
 * max, stop_binary 0 or one of that sample's process's binaries; one
 * answer that fails gets the worker killed and fails the whole batch.
 *
 * A worker that does not answer within UWORKER_TIMEOUT_MS is killed, one
 * that dies is reaped; every sample of the batch in flight gets
 * UNWIND_FAILED ("unwinder failed": no frame, counted per binary by the
 * caller like the other results) and the next batch starts a new worker.
 *
 * The budget of failures is per kind of request (enum uworker_kind:
 * unwinding, build-ids, JIT files), so that files that crash or hang one
 * parser cannot take the others away: each failure (a crash, a hang, an
 * answer that did not make sense, and a worker found dead when a request
 * came) is charged to the kind of the request in flight, and a kind that
 * failed more than UWORKER_RESTARTS times (its failures started that many
 * new workers, and the last failed too: the whole worker's budget before
 * it was per kind) is not asked again over the uworker's life (its
 * samples UNWIND_FAILED, its requests -1 at once, counted in
 * uworker_counts.refused); the others go on, in new workers.  Not thread-safe;
 * the caller must not reap children it did not start (symworker.h).
 */
#ifndef STROBE_UWORKER_H
#define STROBE_UWORKER_H

#include "symworker.h"
#include "unwind.h"

#define UWORKER_MAPS		2048
#define UWORKER_STACK		65536
#define UWORKER_REGS		64
#define UWORKER_FRAMES		1024	/* ips per answer */
#define UWORKER_TIMEOUT_MS	3000
#define UWORKER_RESTARTS	8	/* new workers for one kind's failures */
#define UWORKER_BATCH		64	/* samples per request, at most */

struct uworker;

/* The worker's request kind, for a program that executes its workers
 * afresh (symworker_exec_main): named "unwind". */
extern const struct symworker_ext uworker_ext;

/* The kinds of request, each with its own budget of failures. */
enum uworker_kind {
	UWORKER_UNWIND,		/* uworker_run, uworker_unwind */
	UWORKER_BUILD_ID,	/* uworker_call of UPARSE_BUILD_ID */
	UWORKER_JIT,		/* uworker_call of UPARSE_JITMAP, UPARSE_JITDUMP */
	UWORKER_KINDS
};

/* Start the worker; ops->open_binary is called in this process (ops->open_debug
 * is not used).  NULL with e set when it cannot start. */
struct uworker *uworker_new(const struct unwind_ops *ops, struct error *e);
void uworker_free(struct uworker *u);

/* unwind_user() in the worker, alone in its batch (a batch being built
 * is run first and its answers are lost: the caller runs it before),
 * same arguments and results, and
 * UNWIND_FAILED when the worker hung or died (*nr 0, *stop_binary 0);
 * a process with more than UWORKER_MAPS maps, a stack copy larger than
 * UWORKER_STACK or more than UWORKER_REGS registers is UNWIND_ERROR. */
enum unwind_result uworker_unwind(struct uworker *u, const struct proc *p, uint32_t abi,
				  uint64_t regs_mask, const unsigned char *regs, uint32_t nr_regs,
				  const unsigned char *stack, uint64_t stack_size, uint64_t *ips,
				  size_t max, size_t *nr, int64_t *stop_binary);

/* A request of another kind (uparse.h: its first 4 bytes), answered into
 * out: symworker_call(), the worker asking key 1 gets a dup of fd (and
 * nothing else: no binary of a process's maps).  The answer is unchecked.
 * -1 at once (e set) when its kind is refused (its budget spent). */
ssize_t uworker_call(struct uworker *u, const void *req, size_t len, void *out, size_t cap,
		     int fd, struct error *e);
/* Kill the worker: its answer did not make sense (counted as a crash,
 * and a failure of the last request's kind). */
void uworker_discard(struct uworker *u);
/*
 * Add a sample of process p to the batch being built (started by the
 * first add after uworker_run()): its index in the batch (0, 1, ...);
 * UWORKER_FULL when it does not fit (run the batch, then add it again);
 * UWORKER_INVALID when it never will (more than UWORKER_MAPS maps, a
 * stack copy larger than UWORKER_STACK, more than UWORKER_REGS
 * registers: unwind_user() would not be asked, the result is
 * UNWIND_ERROR).  p's maps are copied; a process whose identity and maps
 * equal those of one already in the batch is not sent again.  At most
 * max (<= UWORKER_FRAMES) ips come back for it.
 */
#define UWORKER_FULL	(-1)
#define UWORKER_INVALID	(-2)
int uworker_add(struct uworker *u, const struct proc *p, uint32_t abi, uint64_t regs_mask,
		const unsigned char *regs, uint32_t nr_regs, const unsigned char *stack,
		uint64_t stack_size, size_t max);
/* Send the batch and receive every sample's answer (each checked): the
 * number of samples in it (0: nothing was sent).  When the worker hung,
 * died or answered what does not make sense, every sample is
 * UNWIND_FAILED. */
size_t uworker_run(struct uworker *u);
/* Sample i's answer after uworker_run() (until the next uworker_add()):
 * unwind_user()'s result, its *nr ips into ips (room for the max given to
 * uworker_add), *stop_binary. */
enum unwind_result uworker_result(const struct uworker *u, size_t i, uint64_t *ips, size_t *nr,
				  int64_t *stop_binary);

/* Round trips to the worker and samples they carried, over the uworker's
 * life (a batch that could not be sent is counted too). */
struct uworker_counts {
	uint64_t calls, samples;
	uint64_t failed[UWORKER_KINDS];		/* failures charged to each kind */
	uint64_t refused[UWORKER_KINDS];	/* requests refused: budget spent */
};
void uworker_counts(const struct uworker *u, struct uworker_counts *out);

/* The worker's pid (0: none now), and symworker_stats(). */
pid_t uworker_pid(const struct uworker *u);
void uworker_stats(const struct uworker *u, struct symworker_stats *out);
/* Ask the worker what it runs as (symworker_selftest). */
int uworker_selftest(struct uworker *u, struct symworker_self *out, struct error *e);

#endif
