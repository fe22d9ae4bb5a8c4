/*
 * unwind.h - user-space call stacks from a sample's registers and stack
 * copy (perf's --call-graph dwarf: PERF_SAMPLE_REGS_USER and
 * PERF_SAMPLE_STACK_USER), unwound at ingest with elfutils libdw from the
 * CFI (.eh_frame, .eh_frame_hdr, .debug_frame) of the binaries the process
 * had mapped: the binary cache's copies, and their separate debug files
 * (debuginfo.h) for .debug_frame.
 *
 * Nothing is read from the process: memory outside the stack copy is read
 * only from the mapped binaries' files; an address in neither stops the
 * unwinding.  Every stop before the outermost frame is a result the
 * caller counts per binary (schema 014 unwind_errors), never a guess: a
 * frame is added only when its CFI says where its caller's return address
 * is.
 *
 * libdw's own fallback where no CFI covers an address (the frame-pointer
 * heuristics of its x86_64 and aarch64 backends) is not trusted: a frame
 * is kept only when the CFI of the frame below covers that frame's
 * address (looked up as libdw does: .eh_frame, then .debug_frame), so a
 * binary built without frame pointers and without unwind tables ends the
 * stack with UNWIND_NO_CFI, whatever its frame pointer register holds.
 *
 * The unwinder keeps a libdw session per process, built from the maps the
 * caller passes and rebuilt when they differ from those it was built
 * from (compared whole).  Each binary is reported once per process, at
 * the load bias its first executable mapping implies (the PT_LOAD
 * segment holding the mapping's file offset); a file that is no ELF of
 * this machine's is unreadable (UNWIND_NO_BINARY).  At most 32 processes
 * are kept, holding at most 256 files open together (each binary of a
 * session keeps its fd); the least recently used is dropped first.  The
 * result depends only on the arguments and the files: the stack may be
 * unwound at any time after it was taken, in another process.
 * One thread at a time; no global state.
 */
#ifndef STROBE_UNWIND_H
#define STROBE_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include "callgraph.h"
#include "maps.h"
#include "util.h"

/* The user registers to ask for: callgraph_regs_mask() (capture's,
 * lib/capture/callgraph.h), under the unwinder's name; dwarf_to_perf in
 * unwind.c maps DWARF's registers to those. */
static inline uint64_t unwind_regs_mask(void)
{
	return callgraph_regs_mask();
}

struct unwind_ops {
	void *ctx;
	/*
	 * A read-only fd of binary_id's ELF file (the binary cache's copy,
	 * opened as bincache.h says), which the unwinder owns and closes;
	 * -1 when there is none (frames in it stop the unwinding:
	 * UNWIND_NO_BINARY).
	 */
	int (*open_binary)(void *ctx, int64_t binary_id);
	/* Optional (NULL): an fd of the separate debug file of binary_id
	 * (for .debug_frame), owned by the unwinder; -1: none. */
	int (*open_debug)(void *ctx, int64_t binary_id);
};

struct unwinder;

struct unwinder *unwinder_new(const struct unwind_ops *ops, struct error *e);
void unwinder_free(struct unwinder *u);

/* Forget what is kept for process (pid, start_ns): it exited. */
void unwinder_forget(struct unwinder *u, uint32_t pid, uint64_t start_ns);

enum unwind_result {
	UNWIND_OK = 0,		/* reached the outermost frame */
	UNWIND_DEPTH,		/* stopped at max frames */
	UNWIND_NO_CFI,		/* no CFI covers a frame's address */
	UNWIND_NO_MAP,		/* an address in no mapping of the process */
	UNWIND_NO_BINARY,	/* a mapping whose binary could not be read */
	UNWIND_STACK,		/* the CFI reads outside the stack copy */
	UNWIND_NO_REGS,		/* no user registers (a kernel thread) */
	UNWIND_ERROR,		/* anything else libdw reports */
	UNWIND_FAILED,		/* the unwinder's process hung or died
				 * (uworker.h); never from unwind_user() */
};

/* "no CFI", "no mapping", ... as stored in unwind_errors.reason. */
const char *unwind_result_name(enum unwind_result r);

/*
 * Unwind process p's user stack: regs (nr_regs u64, ascending bit order of
 * regs_mask, the perf ABI abi), stack (stack_size bytes copied from the
 * user stack pointer up).  ips[0] is the user IP of regs, then the return
 * addresses of the callers, innermost first: *nr of them (at most max).
 * *stop_binary is the binary_id of the frame where unwinding stopped (0
 * when none: UNWIND_OK, or an address in no mapping; for UNWIND_DEPTH
 * the binary of the last frame).  Unaligned regs and stack are fine.
 * abi must be PERF_SAMPLE_REGS_ABI_64 on x86_64 and arm64 (32-bit
 * processes are UNWIND_ERROR), nr_regs popcount(regs_mask), and regs_mask
 * must hold the stack pointer and the IP, else UNWIND_ERROR.  ips[0] is
 * kept whatever stops the unwinding after it (*nr is then 1): only
 * UNWIND_NO_REGS, UNWIND_ERROR and max 0 give *nr 0.  A frame
 * interrupted by a signal (the caller of a signal trampoline) holds an
 * exact IP, not a return address.
 */
enum unwind_result unwind_user(struct unwinder *u, const struct proc *p, uint32_t abi,
			       uint64_t regs_mask, const unsigned char *regs, uint32_t nr_regs,
			       const unsigned char *stack, uint64_t stack_size, uint64_t *ips,
			       size_t max, size_t *nr, int64_t *stop_binary);

#endif
