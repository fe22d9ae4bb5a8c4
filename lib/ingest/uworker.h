/*
 * uworker.h - the ingest worker: user stacks unwound (unwind.h), and
 * build-ids and JIT symbols parsed (uparse.h), in a process without
 * privileges: strobed runs as root, and the CFI of the binaries a process
 * maps and the stack bytes it had are bytes that process's user controls
 * (doc/SECURITY.md, "Which process parses what").
 *
 * The unwinder (unwind.c, its logic unchanged) runs in a worker started,
 * dropped to nobody, filtered and respawned by symworker.h (one home for
 * the worker concept; its comm is "strobe-unwind").  Each sample is one
 * request: the process's identity (pid, start_ns), its maps (at most
 * UWORKER_MAPS), the ABI, regs_mask and registers, the stack copy (at most
 * UWORKER_STACK bytes).  When the worker's unwinder opens a binary, it
 * asks the parent for it, and ops->open_binary's descriptor is passed
 * (SCM_RIGHTS) only for a binary_id of the maps sent; the worker never
 * opens a path.  The answer is checked: result in range, nr <= max,
 * stop_binary 0 or one of the maps' binaries; else the worker is killed.
 *
 * A worker that does not answer within UWORKER_TIMEOUT_MS is killed, one
 * that dies is reaped; the sample in flight gets UNWIND_FAILED ("unwinder
 * failed": no frame, counted per binary by the caller like the other
 * results) and the next sample starts a new worker, at most
 * UWORKER_RESTARTS times over the uworker's life; then every sample is
 * UNWIND_FAILED.  Not thread-safe; the caller must not reap children it
 * did not start (symworker.h).
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
#define UWORKER_RESTARTS	8

struct uworker;

/* Start the worker; ops->open_binary is called in this process (ops->open_debug
 * is not used).  NULL with e set when it cannot start. */
struct uworker *uworker_new(const struct unwind_ops *ops, struct error *e);
void uworker_free(struct uworker *u);

/* unwind_user() in the worker, same arguments and results, and
 * UNWIND_FAILED when the worker hung or died (*nr 0, *stop_binary 0);
 * a process with more than UWORKER_MAPS maps, a stack copy larger than
 * UWORKER_STACK or more than UWORKER_REGS registers is UNWIND_ERROR. */
enum unwind_result uworker_unwind(struct uworker *u, const struct proc *p, uint32_t abi,
				  uint64_t regs_mask, const unsigned char *regs, uint32_t nr_regs,
				  const unsigned char *stack, uint64_t stack_size, uint64_t *ips,
				  size_t max, size_t *nr, int64_t *stop_binary);

/* A request of another kind (uparse.h: its first 4 bytes), answered into
 * out: symworker_call(), the worker asking key 1 gets a dup of fd (and
 * nothing else: no binary of a process's maps).  The answer is unchecked. */
ssize_t uworker_call(struct uworker *u, const void *req, size_t len, void *out, size_t cap,
		     int fd, struct error *e);
/* Kill the worker: its answer did not make sense (counted as a crash). */
void uworker_discard(struct uworker *u);

/* The worker's pid (0: none now), and symworker_stats(). */
pid_t uworker_pid(const struct uworker *u);
void uworker_stats(const struct uworker *u, struct symworker_stats *out);
/* Ask the worker what it runs as (symworker_selftest). */
int uworker_selftest(struct uworker *u, struct symworker_self *out, struct error *e);

#endif
