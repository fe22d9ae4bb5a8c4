/*
 * callgraph.h - the --call-graph option of 'strobe start' and 'strobe
 * record': whether and how samples carry their call stacks.
 *
 * Spelled as perf spells it: "fp" (the kernel walks frame pointers,
 * PERF_SAMPLE_CALLCHAIN) or "dwarf[,BYTES]" (the kernel copies the user
 * registers and BYTES of the user stack, unwound at ingest with the
 * binaries' CFI).  The CLI checks it, sends it to strobed as given, and
 * strobed parses it again (everything a client sends is checked) and
 * stores callgraph_format()'s spelling in sessions.call_graph.
 */
#ifndef STROBE_CALLGRAPH_H
#define STROBE_CALLGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include "record.h"
#include "util.h"

enum callgraph_mode {
	CALLGRAPH_NONE = 0,
	CALLGRAPH_FP = 1,
	CALLGRAPH_DWARF = 2,
};

/* dwarf's default stack copy, as perf's */
#define CALLGRAPH_STACK_DEFAULT	8192
/* The largest stack copy a record can hold beside a sample without
 * counters, registers or callchain (a multiple of 8); a sample with more
 * gets its copy truncated to fit (doc/DESIGN.md). */
#define CALLGRAPH_STACK_MAX \
	((RECORD_MAX_SIZE - STROBE_SAMPLE_SIZE(0) - sizeof(struct strobe_ustack)) & ~(size_t)7)

struct callgraph {
	enum callgraph_mode mode;
	uint32_t stack_bytes;	/* CALLGRAPH_DWARF: bytes of stack copied; else 0 */
};

/*
 * Parse "fp", "dwarf" or "dwarf,BYTES" (BYTES a positive multiple of 8 up
 * to CALLGRAPH_STACK_MAX).  NULL or "" is CALLGRAPH_NONE.  Errors are one
 * line naming the bad part, without the option's name.
 */
int callgraph_parse(const char *s, struct callgraph *cg, struct error *e);

/* "fp", "dwarf,BYTES", or "" for CALLGRAPH_NONE (buf of at least 32). */
void callgraph_format(const struct callgraph *cg, char *buf, size_t len);

/* The user registers dwarf asks for (perf_event_attr.sample_regs_user, in
 * perf's numbering): what ingest's unwinder (lib/ingest/unwind.c, which
 * maps them to DWARF's) needs on this architecture: x86_64 the general
 * registers and ip, not flags nor segment registers; arm64 x0-x30, sp,
 * pc; 0 where dwarf unwinding is not built (other architectures). */
uint64_t callgraph_regs_mask(void);

#endif
