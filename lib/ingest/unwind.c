/*
 * unwind.c - user call stacks from sampled registers and stack copies
 * (unwind.h), with elfutils libdw.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__aarch64__)
#include <asm/perf_regs.h>
#endif
#include "unwind.h"

uint64_t unwind_regs_mask(void)
{
#if defined(__x86_64__)
	/* the general registers and the IP: no flags, no segment registers */
	return ((1ULL << (PERF_REG_X86_IP + 1)) - 1) |
	       (((1ULL << (PERF_REG_X86_R15 + 1)) - 1) & ~((1ULL << PERF_REG_X86_R8) - 1));
#elif defined(__aarch64__)
	/* x0-x30, sp, pc */
	return (1ULL << PERF_REG_ARM64_MAX) - 1;
#else
	return 0;
#endif
}

struct unwinder {
	struct unwind_ops ops;
};

struct unwinder *unwinder_new(const struct unwind_ops *ops, struct error *e)
{
	struct unwinder *u;

	if (!ops || !ops->open_binary) {
		error_set(e, "unwinder: no open_binary callback");
		return NULL;
	}
	u = xcalloc(1, sizeof(*u));
	u->ops = *ops;
	return u;
}

void unwinder_free(struct unwinder *u)
{
	free(u);
}

void unwinder_forget(struct unwinder *u, uint32_t pid, uint64_t start_ns)
{
}

const char *unwind_result_name(enum unwind_result r)
{
	switch (r) {
	case UNWIND_OK: return "ok";
	case UNWIND_DEPTH: return "depth limit";
	case UNWIND_NO_CFI: return "no CFI";
	case UNWIND_NO_MAP: return "no mapping";
	case UNWIND_NO_BINARY: return "binary unreadable";
	case UNWIND_STACK: return "outside the stack copy";
	case UNWIND_NO_REGS: return "no registers";
	case UNWIND_ERROR: break;
	}
	return "unwinding error";
}

enum unwind_result unwind_user(struct unwinder *u, const struct proc *p, uint32_t abi,
			       uint64_t regs_mask, const unsigned char *regs, uint32_t nr_regs,
			       const unsigned char *stack, uint64_t stack_size, uint64_t *ips,
			       size_t max, size_t *nr, int64_t *stop_binary)
{
	*nr = 0;
	*stop_binary = 0;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE || !nr_regs)
		return UNWIND_NO_REGS;
	return UNWIND_ERROR;
}
