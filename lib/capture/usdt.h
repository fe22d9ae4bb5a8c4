/*
 * usdt.h - USDT probes (<sys/sdt.h>, SystemTap's format, also DTrace's
 * on Linux): finding a probe in an ELF file's .note.stapsdt notes, the
 * file offset a uprobe is placed at, and its arguments.
 *
 * A probe is named PROVIDER:NAME; a binary can hold the same probe at
 * several sites (inlined, or fired in several places), each with its own
 * argument string.  A site's note gives its address, the link-time address
 * of .stapsdt.base (prelink moves both: the difference to the section's
 * address in the file is added back), an optional semaphore (a counter
 * the program tests before firing; the kernel increments it in every
 * process mapping the file through the uprobe's ref_ctr_offset), and the
 * argument string, in the forms of the file's machine (its ELF header's
 * e_machine).  x86_64 (and i386):
 *     -4@%edi    4 bytes, signed, in register edi
 *     8@$5       the constant 5
 *     8@-8(%rbp) 8 bytes at rbp - 8 (read from the copy of the user stack
 *                taken at the hit, when the address lies inside it)
 * Arguments that name a symbol (globals: sym(%rip)), or use an index
 * register or a segment, are refused as unsupported.  aarch64:
 *     -8@x22     8 bytes, signed, in register x22 (x0-x30; w0-w30 are
 *                their low 32 bits; sp; xzr and wzr read 0)
 *     -4@-1      the constant -1 (a '#' before it is allowed)
 *     8@[sp, 16] 8 bytes at sp + 16; [x29, -12], [x3] (the base a 64-bit
 *                register or sp; read from the stack copy as above)
 * Symbols (#:lo12:sym), index registers ([x1, x2]) and the floating point
 * and SIMD registers (b/h/s/d/q/vN: not in a perf sample's user
 * registers) are refused.
 *
 * A marker's registers are read from perf samples, whose register
 * numbers are the running machine's: usdt_find refuses a binary of
 * another architecture (usdt_machine_check).
 *
 * usdt.c reads the notes (usdt_list, usdt_find) and the marker spec;
 * usdtargs.c the argument strings and their values at a hit.
 */
#ifndef STROBE_USDT_H
#define STROBE_USDT_H

#include <elf.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include "util.h"

#define USDT_MAX_ARGS	12	/* <sys/sdt.h> goes up to STAP_PROBE12 */
#define USDT_MAX_NAME	64
#define USDT_MAX_ARGSPEC 512
#define USDT_MAX_SITES	64	/* sites of one file (usdt_list) or probe (usdt_find) */

/* Register numbers are perf's for the binary's machine, so a
 * PERF_SAMPLE_REGS_USER mask is 1 << reg.  x86_64 (arch/x86's
 * asm/perf_regs.h): */
enum usdt_reg {
	USDT_REG_AX = 0, USDT_REG_BX, USDT_REG_CX, USDT_REG_DX, USDT_REG_SI,
	USDT_REG_DI, USDT_REG_BP, USDT_REG_SP, USDT_REG_IP,
	USDT_REG_R8 = 16,	/* .. R15 = 23 */
};

/* aarch64 (arch/arm64's asm/perf_regs.h): x0 .. x30 are 0 .. 30 (x29 the
 * frame pointer, x30 the link register), then sp and pc. */
enum usdt_reg_arm64 {
	USDT_REG_ARM64_X0 = 0,
	USDT_REG_ARM64_SP = 31,
	USDT_REG_ARM64_PC = 32,
};

/* regs[] of a hit holds this many, by register number (either machine's) */
#define USDT_NR_REGS	33

/* Whose registers an argument names (the forms it was parsed in). */
enum usdt_arch {
	USDT_ARCH_X86 = 0,	/* x86_64 and i386 binaries */
	USDT_ARCH_ARM64,	/* aarch64 */
};

/* The ELF machine of the binaries whose markers this strobe can read:
 * the one it is built for (perf samples hold its registers); EM_NONE
 * where markers are not supported. */
#if defined(__x86_64__)
#define USDT_HOST_MACHINE	EM_X86_64
#elif defined(__aarch64__)
#define USDT_HOST_MACHINE	EM_AARCH64
#else
#define USDT_HOST_MACHINE	EM_NONE
#endif

enum usdt_arg_kind {
	USDT_ARG_CONST,		/* value */
	USDT_ARG_REG,		/* reg (>> shift for ah/bh/ch/dh) */
	USDT_ARG_MEM,		/* *(reg + value) */
};

struct usdt_arg {
	enum usdt_arg_kind kind;
	enum usdt_arch arch;	/* the numbering of reg */
	int size;		/* 1, 2, 4 or 8 bytes */
	int is_signed;
	int reg;		/* enum usdt_reg or usdt_reg_arm64 */
	int shift;		/* 8 for ah, bh, ch, dh; else 0 */
	int64_t value;		/* CONST: the constant; MEM: the displacement */
};

/* One probe site. */
struct usdt_site {
	char path[PATH_MAX];		/* the file as named (messages, session_probes) */
	unsigned machine;		/* its ELF header's e_machine (EM_X86_64, ...) */
	char provider[USDT_MAX_NAME], name[USDT_MAX_NAME];
	uint64_t addr;			/* after the prelink adjustment */
	uint64_t offset;		/* file offset of the site */
	uint64_t semaphore;		/* address, 0 when none */
	uint64_t semaphore_offset;	/* its file offset */
	char arg_spec[USDT_MAX_ARGSPEC];
	int nargs;
	struct usdt_arg args[USDT_MAX_ARGS];
};

/*
 * Split "PATH:PROVIDER:NAME" at its last two colons (PATH may hold
 * colons).  PROVIDER and NAME must be C identifiers.  Errors say what a
 * spec looks like.
 */
int usdt_parse_spec(const char *spec, char *path, size_t pathlen,
		    char provider[USDT_MAX_NAME], char name[USDT_MAX_NAME], struct error *e);

/* Parse an argument string in the forms of ELF machine (see above:
 * EM_X86_64 or EM_386, EM_AARCH64); errors name the argument (1-based)
 * and what is wrong with it, or the machine whose forms are not known. */
int usdt_parse_args(unsigned machine, const char *s, struct usdt_arg *args, int max,
		    int *nargs, struct error *e);

/* 0 when this strobe can read the arguments of a probe in path, a binary
 * of ELF machine (that of USDT_HOST_MACHINE: i386's too on x86_64); else
 * an error naming path and both architectures. */
int usdt_machine_check(unsigned machine, const char *path, struct error *e);

/*
 * Every probe site of the ELF file at path, arguments not parsed (nargs
 * is -1).  *sites is malloc'ed (free() it; NULL and 0 when the file has
 * none).  The file is opened once, non-blocking (a FIFO does not make the
 * caller wait), and must be a regular file.  Errors: unreadable file, not
 * a regular file, not ELF, malformed headers or notes, more than
 * USDT_MAX_SITES sites (the file is read no further).
 */
int usdt_list(const char *path, struct usdt_site **sites, size_t *n, struct error *e);

/*
 * The sites of PROVIDER:NAME in the file at path, with their arguments
 * parsed.  Errors: those of usdt_list, no such probe (naming the probes
 * the file has, when they are few), a binary of another architecture
 * (usdt_machine_check), an argument form not supported,
 * more than USDT_MAX_SITES sites of the probe.
 */
int usdt_find(const char *path, const char *provider, const char *name,
	      struct usdt_site **sites, size_t *n, struct error *e);

/*
 * The same, read from the open file fd (pread only: its offset is not
 * moved, and fd stays open); path names it in messages and in the sites.
 * A caller that places uprobes on the sites must place them on that same
 * open file, not on path looked up again (see daemon/backend_usdt.c).
 */
int usdt_list_fd(int fd, const char *path, struct usdt_site **sites, size_t *n,
		 struct error *e);
int usdt_find_fd(int fd, const char *path, const char *provider, const char *name,
		 struct usdt_site **sites, size_t *n, struct error *e);

/* The registers (PERF_SAMPLE_REGS_USER mask, in the numbering of the
 * arguments' arch) the site's arguments need; *stack is set when an
 * argument reads memory (from the user stack copy). */
uint64_t usdt_regs_mask(const struct usdt_site *s, int *stack);

/*
 * The value of an argument at a hit: regs[USDT_NR_REGS] by register
 * number (the argument's arch's), stack the copy of the user stack from
 * regs[SP] (that arch's stack pointer), stack_len bytes.  -1 when it
 * cannot be known (memory outside the copy).
 */
int usdt_arg_value(const struct usdt_arg *a, const uint64_t *regs,
		   const unsigned char *stack, size_t stack_len, int64_t *v);

/* "a0,a1,..." in decimal (signed or not as the argument says), "?" for a
 * value not known (bit i of known clear); "" for a probe without any. */
void usdt_format_args(const struct usdt_site *s, const int64_t *vals, uint32_t known,
		      char *buf, size_t len);

#endif
