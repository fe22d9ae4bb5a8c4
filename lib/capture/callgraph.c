/*
 * callgraph.c - parse and spell the --call-graph option (see callgraph.h).
 */
#include "config.h"
#include <string.h>
#if defined(__x86_64__) || defined(__aarch64__)
#include <asm/perf_regs.h>
#endif
#include "callgraph.h"

int callgraph_parse(const char *s, struct callgraph *cg, struct error *e)
{
	uint64_t v;

	cg->mode = CALLGRAPH_NONE;
	cg->stack_bytes = 0;
	if (!s || !*s)
		return 0;
	if (!strcmp(s, "fp")) {
		cg->mode = CALLGRAPH_FP;
		return 0;
	}
	if (!strcmp(s, "dwarf")) {
		cg->mode = CALLGRAPH_DWARF;
		cg->stack_bytes = CALLGRAPH_STACK_DEFAULT;
		return 0;
	}
	if (strncmp(s, "dwarf,", 6)) {
		if (!strncmp(s, "fp,", 3))
			return error_set(e, "mode 'fp' takes no size: '%.64s' (fp or dwarf[,BYTES])", s);
		return error_set(e, "unknown mode '%.64s' (fp or dwarf[,BYTES])", s);
	}
	if (parse_u64(s + 6, &v) < 0 || !v || v % 8 || v > CALLGRAPH_STACK_MAX)
		return error_set(e, "bad stack size '%.64s': give a multiple of 8 bytes from 8 to %zu",
				 s + 6, (size_t)CALLGRAPH_STACK_MAX);
	cg->mode = CALLGRAPH_DWARF;
	cg->stack_bytes = v;
	return 0;
}

void callgraph_format(const struct callgraph *cg, char *buf, size_t len)
{
	switch (cg->mode) {
	case CALLGRAPH_FP:
		snprintf(buf, len, "fp");
		break;
	case CALLGRAPH_DWARF:
		snprintf(buf, len, "dwarf,%u", cg->stack_bytes);
		break;
	default:
		snprintf(buf, len, "%s", "");
	}
}

uint64_t callgraph_regs_mask(void)
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
