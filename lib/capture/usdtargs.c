/*
 * usdtargs.c - a USDT site's arguments (usdt.h): its argument string
 * parsed in the operand forms <sys/sdt.h> writes for the binary's
 * machine (x86_64: %reg, $N, N(%reg); aarch64: xN, N, [xN, N]), the
 * registers and stack they need at a hit, their values from a hit's
 * registers and stack copy, and those values as text; whether this
 * strobe can read a binary's arguments at all (the perf registers it
 * samples are its own machine's).  usdt.c finds the sites and their
 * strings in an ELF file.
 */
#include "config.h"
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "usdt.h"

static const struct regname {
	const char *name;
	int reg, shift, size;
} regnames[] = {
	{ "rax", USDT_REG_AX, 0, 8 }, { "eax", USDT_REG_AX, 0, 4 }, { "ax", USDT_REG_AX, 0, 2 },
	{ "al", USDT_REG_AX, 0, 1 }, { "ah", USDT_REG_AX, 8, 1 },
	{ "rbx", USDT_REG_BX, 0, 8 }, { "ebx", USDT_REG_BX, 0, 4 }, { "bx", USDT_REG_BX, 0, 2 },
	{ "bl", USDT_REG_BX, 0, 1 }, { "bh", USDT_REG_BX, 8, 1 },
	{ "rcx", USDT_REG_CX, 0, 8 }, { "ecx", USDT_REG_CX, 0, 4 }, { "cx", USDT_REG_CX, 0, 2 },
	{ "cl", USDT_REG_CX, 0, 1 }, { "ch", USDT_REG_CX, 8, 1 },
	{ "rdx", USDT_REG_DX, 0, 8 }, { "edx", USDT_REG_DX, 0, 4 }, { "dx", USDT_REG_DX, 0, 2 },
	{ "dl", USDT_REG_DX, 0, 1 }, { "dh", USDT_REG_DX, 8, 1 },
	{ "rsi", USDT_REG_SI, 0, 8 }, { "esi", USDT_REG_SI, 0, 4 }, { "si", USDT_REG_SI, 0, 2 },
	{ "sil", USDT_REG_SI, 0, 1 },
	{ "rdi", USDT_REG_DI, 0, 8 }, { "edi", USDT_REG_DI, 0, 4 }, { "di", USDT_REG_DI, 0, 2 },
	{ "dil", USDT_REG_DI, 0, 1 },
	{ "rbp", USDT_REG_BP, 0, 8 }, { "ebp", USDT_REG_BP, 0, 4 }, { "bp", USDT_REG_BP, 0, 2 },
	{ "bpl", USDT_REG_BP, 0, 1 },
	{ "rsp", USDT_REG_SP, 0, 8 }, { "esp", USDT_REG_SP, 0, 4 }, { "sp", USDT_REG_SP, 0, 2 },
	{ "spl", USDT_REG_SP, 0, 1 },
	{ "rip", USDT_REG_IP, 0, 8 },
};

/* "%name" at s (len bytes) -> a register; -1 if it is none. */
static int parse_reg(const char *s, size_t len, int *reg, int *shift, int *size)
{
	char nm[8];

	if (len < 2 || len > 5 || s[0] != '%')
		return -1;
	memcpy(nm, s + 1, len - 1);
	nm[len - 1] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(regnames); i++)
		if (!strcmp(nm, regnames[i].name)) {
			*reg = regnames[i].reg;
			*shift = regnames[i].shift;
			*size = regnames[i].size;
			return 0;
		}
	/* r8 .. r15, with d (32), w (16), b or l (8) */
	if (nm[0] == 'r' && isdigit((unsigned char)nm[1])) {
		char *end;
		long r = strtol(nm + 1, &end, 10);

		if (r < 8 || r > 15)
			return -1;
		*reg = USDT_REG_R8 + (r - 8);
		*shift = 0;
		if (!*end)
			*size = 8;
		else if (!strcmp(end, "d"))
			*size = 4;
		else if (!strcmp(end, "w"))
			*size = 2;
		else if (!strcmp(end, "b") || !strcmp(end, "l"))
			*size = 1;
		else
			return -1;
		return 0;
	}
	return -1;
}

/* A decimal or 0x number with an optional sign, the whole of s[0..len). */
static int parse_num(const char *s, size_t len, int64_t *v)
{
	char buf[32];
	int neg = 0;
	uint64_t u;

	if (!len || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	s = buf;
	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	if (!isdigit((unsigned char)*s) || parse_u64(s, &u) < 0)
		return -1;
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return 0;
}

/* The argument's size: the one before '@' (signed when it had a '-'),
 * else dflt bytes, signed. */
static void arg_size(struct usdt_arg *a, int size, int dflt)
{
	a->size = size ? size : dflt;
	if (!size)
		a->is_signed = 1;
}

/* An x86_64 operand op[0..oplen) of argument i (tok[0..len)); size is
 * the one before '@', 0 when none. */
static int x86_operand(const char *tok, size_t len, int i, const char *op, size_t oplen,
		       int size, struct usdt_arg *a, struct error *e)
{
	const char *open, *close;
	int rsize = 8, shift = 0;

	if (op[0] == '%') {
		if (memchr(op, ':', oplen))
			return error_set(e, "argument %d '%.*s': segment-relative memory is not "
					 "supported", i, (int)len, tok);
		if (parse_reg(op, oplen, &a->reg, &shift, &rsize) < 0)
			return error_set(e, "argument %d '%.*s': unknown x86_64 register", i,
					 (int)len, tok);
		a->kind = USDT_ARG_REG;
		a->shift = shift;
		arg_size(a, size, rsize);
		return 0;
	}
	if (op[0] == '$') {
		if (parse_num(op + 1, oplen - 1, &a->value) < 0)
			return error_set(e, "argument %d '%.*s': the address of a symbol is not "
					 "supported (only numeric constants)", i, (int)len, tok);
		a->kind = USDT_ARG_CONST;
		arg_size(a, size, 8);
		return 0;
	}
	open = memchr(op, '(', oplen);
	close = op + oplen - 1;
	if (!open || *close != ')')
		return error_set(e, "argument %d '%.*s': not a register (%%reg), constant ($N) "
				 "or memory (N(%%reg)) operand", i, (int)len, tok);
	if (memchr(open, ',', close - open))
		return error_set(e, "argument %d '%.*s': memory with an index register is not "
				 "supported", i, (int)len, tok);
	if (open > op && parse_num(op, open - op, &a->value) < 0)
		return error_set(e, "argument %d '%.*s': a global variable (a symbol) is not "
				 "supported, only memory at a numeric offset from a register",
				 i, (int)len, tok);
	if (parse_reg(open + 1, close - open - 1, &a->reg, &shift, &rsize) < 0 || shift ||
	    rsize != 8)
		return error_set(e, "argument %d '%.*s': the base is not a 64-bit x86_64 "
				 "register", i, (int)len, tok);
	a->kind = USDT_ARG_MEM;
	arg_size(a, size, 8);
	return 0;
}

/* What an aarch64 register name is. */
enum { ARM64_GENERAL, ARM64_ZERO, ARM64_FP, ARM64_UNKNOWN };

/* The aarch64 register named s[0..len): its perf number and width. */
static int arm64_reg(const char *s, size_t len, int *reg, int *size)
{
	char nm[8];
	int n = 0;

	if (!len || len >= sizeof(nm))
		return ARM64_UNKNOWN;
	memcpy(nm, s, len);
	nm[len] = 0;
	*size = nm[0] == 'w' ? 4 : 8;
	if (!strcmp(nm, "sp") || !strcmp(nm, "wsp")) {
		*reg = USDT_REG_ARM64_SP;
		return ARM64_GENERAL;
	}
	if (!strcmp(nm, "xzr") || !strcmp(nm, "wzr"))
		return ARM64_ZERO;
	/* b h s d q v: the floating point and SIMD registers (v0.4s too) */
	if (strchr("bhsdqv", nm[0]) && isdigit((unsigned char)nm[1]))
		return ARM64_FP;
	if (nm[0] != 'x' && nm[0] != 'w')
		return ARM64_UNKNOWN;
	/* x0 .. x30, w0 .. w30: decimal, no leading zero */
	if (!isdigit((unsigned char)nm[1]) || (nm[1] == '0' && nm[2]))
		return ARM64_UNKNOWN;
	for (const char *p = nm + 1; *p; p++) {
		if (!isdigit((unsigned char)*p) || n > 30)
			return ARM64_UNKNOWN;
		n = n * 10 + (*p - '0');
	}
	if (n > 30)
		return ARM64_UNKNOWN;
	*reg = USDT_REG_ARM64_X0 + n;
	return ARM64_GENERAL;
}

/* s[0..*len) without the blanks at either end. */
static const char *trim(const char *s, size_t *len)
{
	while (*len && (*s == ' ' || *s == '\t'))
		s++, (*len)--;
	while (*len && (s[*len - 1] == ' ' || s[*len - 1] == '\t'))
		(*len)--;
	return s;
}

/* A constant: N or #N (decimal or 0x, with a sign), the whole of s. */
static int arm64_num(const char *s, size_t len, int64_t *v)
{
	if (len && *s == '#')
		s++, len--;
	return parse_num(s, len, v);
}

/* "[BASE]" or "[BASE, OFF]" at op (oplen bytes, the brackets included). */
static int arm64_mem(const char *tok, size_t len, int i, const char *op, size_t oplen,
		     struct usdt_arg *a, struct error *e)
{
	const char *in = op + 1, *comma, *base, *off;
	size_t inlen = oplen - 2, blen, olen;
	int rsize, dummy;

	comma = memchr(in, ',', inlen);
	blen = comma ? (size_t)(comma - in) : inlen;
	base = trim(in, &blen);
	if (arm64_reg(base, blen, &a->reg, &rsize) != ARM64_GENERAL || rsize != 8)
		return error_set(e, "argument %d '%.*s': the base is not a 64-bit aarch64 "
				 "register (x0-x30 or sp)", i, (int)len, tok);
	a->value = 0;
	if (!comma)
		return 0;
	olen = inlen - (size_t)(comma + 1 - in);
	off = trim(comma + 1, &olen);
	if (arm64_num(off, olen, &a->value) == 0)
		return 0;
	if (memchr(off, ':', olen))
		return error_set(e, "argument %d '%.*s': a global variable (a symbol) is not "
				 "supported, only memory at a numeric offset from a register",
				 i, (int)len, tok);
	if (memchr(off, ',', olen) ||
	    arm64_reg(off, olen, &dummy, &rsize) != ARM64_UNKNOWN)
		return error_set(e, "argument %d '%.*s': memory with an index register is not "
				 "supported", i, (int)len, tok);
	return error_set(e, "argument %d '%.*s': the offset '%.*s' is not a number", i,
			 (int)len, tok, (int)MIN(olen, 32), off);
}

/* An aarch64 operand op[0..oplen) of argument i (tok[0..len)); size is
 * the one before '@', 0 when none. */
static int arm64_operand(const char *tok, size_t len, int i, const char *op, size_t oplen,
			 int size, struct usdt_arg *a, struct error *e)
{
	int rsize = 8;

	if (op[0] == '[') {
		if (oplen < 2 || op[oplen - 1] != ']')
			return error_set(e, "argument %d '%.*s': memory without its closing ']'",
					 i, (int)len, tok);
		if (arm64_mem(tok, len, i, op, oplen, a, e) < 0)
			return -1;
		a->kind = USDT_ARG_MEM;
		arg_size(a, size, 8);
		return 0;
	}
	switch (arm64_reg(op, oplen, &a->reg, &rsize)) {
	case ARM64_GENERAL:
		a->kind = USDT_ARG_REG;
		arg_size(a, size, rsize);
		return 0;
	case ARM64_ZERO:
		a->kind = USDT_ARG_CONST;
		a->reg = 0;
		a->value = 0;
		arg_size(a, size, rsize);
		return 0;
	case ARM64_FP:
		return error_set(e, "argument %d '%.*s': a floating point or SIMD register, "
				 "which perf samples do not hold (only x0-x30 and sp)", i,
				 (int)len, tok);
	}
	if (arm64_num(op, oplen, &a->value) < 0)
		return error_set(e, "argument %d '%.*s': not an aarch64 register (x0-x30, "
				 "w0-w30, sp), constant (N) or memory ([xN, N]) operand", i,
				 (int)len, tok);
	a->kind = USDT_ARG_CONST;
	arg_size(a, size, 8);
	return 0;
}

static int parse_one(enum usdt_arch arch, const char *tok, size_t len, int i,
		     struct usdt_arg *a, struct error *e)
{
	const char *at = memchr(tok, '@', len), *op = tok;
	size_t oplen = len;
	int size = 0;

	memset(a, 0, sizeof(*a));
	a->arch = arch;
	if (at) {
		const char *p = tok;

		if (*p == '-') {
			a->is_signed = 1;
			p++;
		}
		if (at - p != 1 || !strchr("1248", *p))
			return error_set(e, "argument %d '%.*s': the size before '@' is not "
					 "1, 2, 4 or 8 bytes (floating point is not supported)",
					 i, (int)len, tok);
		size = *p - '0';
		op = at + 1;
		oplen = len - (op - tok);
	}
	if (!oplen)
		return error_set(e, "argument %d '%.*s': no operand after '@'", i, (int)len, tok);
	if (arch == USDT_ARCH_ARM64)
		return arm64_operand(tok, len, i, op, oplen, size, a, e);
	return x86_operand(tok, len, i, op, oplen, size, a, e);
}

/* The architecture whose operand forms a binary of ELF machine has; -1
 * when none this file knows. */
static int machine_arch(unsigned machine)
{
	switch (machine) {
	case EM_X86_64:
	case EM_386:
		return USDT_ARCH_X86;
	case EM_AARCH64:
		return USDT_ARCH_ARM64;
	}
	return -1;
}

/* machine's name in messages, buf when it has none here. */
static const char *machine_name(unsigned machine, char *buf, size_t len)
{
	switch (machine) {
	case EM_X86_64:
		return "x86_64";
	case EM_386:
		return "i386";
	case EM_AARCH64:
		return "aarch64";
	case EM_ARM:
		return "32-bit arm";
	case EM_RISCV:
		return "riscv";
	case EM_PPC64:
		return "ppc64";
	case EM_S390:
		return "s390";
	}
	snprintf(buf, len, "ELF machine %u", machine);
	return buf;
}

int usdt_machine_check(unsigned machine, const char *path, struct error *e)
{
	char b1[32], b2[32];

	if (USDT_HOST_MACHINE == EM_NONE)
		return error_set(e, "%s: USDT markers are read on x86_64 and aarch64 only",
				 path);
	if (machine_arch(machine) == machine_arch(USDT_HOST_MACHINE))
		return 0;
	return error_set(e, "%s is a binary for %s, and this strobe runs on %s: mark it with "
			 "a strobe on a machine that runs it", path,
			 machine_name(machine, b1, sizeof(b1)),
			 machine_name(USDT_HOST_MACHINE, b2, sizeof(b2)));
}

int usdt_parse_args(unsigned machine, const char *s, struct usdt_arg *args, int max,
		    int *nargs, struct error *e)
{
	int n = 0, arch = machine_arch(machine);
	char buf[32];

	*nargs = 0;
	if (arch < 0)
		return error_set(e, "the USDT argument forms of %s binaries are not known "
				 "(x86_64, i386 and aarch64 only)",
				 machine_name(machine, buf, sizeof(buf)));
	for (;;) {
		const char *tok;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		tok = s;
		while (*s && *s != ' ' && *s != '\t') {
			/* aarch64's memory operands have a blank: [sp, 16] */
			if (*s == '[' && arch == USDT_ARCH_ARM64)
				while (s[1] && *s != ']')
					s++;
			s++;
		}
		if (n >= max)
			return error_set(e, "more than %d arguments", max);
		if (parse_one((enum usdt_arch)arch, tok, s - tok, n + 1, &args[n], e) < 0)
			return -1;
		n++;
	}
	*nargs = n;
	return 0;
}

/* The number of the stack pointer in arch's perf registers. */
static int sp_reg(enum usdt_arch arch)
{
	return arch == USDT_ARCH_ARM64 ? USDT_REG_ARM64_SP : USDT_REG_SP;
}

uint64_t usdt_regs_mask(const struct usdt_site *s, int *stack)
{
	uint64_t mask = 0;

	*stack = 0;
	for (int i = 0; i < s->nargs; i++) {
		const struct usdt_arg *a = &s->args[i];

		if (a->kind == USDT_ARG_CONST)
			continue;
		mask |= 1ULL << a->reg;
		if (a->kind == USDT_ARG_MEM) {
			mask |= 1ULL << sp_reg(a->arch);
			*stack = 1;
		}
	}
	return mask;
}

int usdt_arg_value(const struct usdt_arg *a, const uint64_t *regs,
		   const unsigned char *stack, size_t stack_len, int64_t *v)
{
	uint64_t raw = 0;
	int bits = a->size * 8;

	switch (a->kind) {
	case USDT_ARG_CONST:
		raw = (uint64_t)a->value;
		break;
	case USDT_ARG_REG:
		raw = regs[a->reg] >> a->shift;
		break;
	case USDT_ARG_MEM: {
		uint64_t addr = regs[a->reg] + (uint64_t)a->value, sp = regs[sp_reg(a->arch)];

		if (!stack || addr < sp || addr - sp > stack_len ||
		    stack_len - (addr - sp) < (size_t)a->size)
			return -1;
		memcpy(&raw, stack + (addr - sp), a->size);	/* little-endian */
		break;
	}
	}
	if (bits < 64) {
		raw &= (1ULL << bits) - 1;
		if (a->is_signed && (raw >> (bits - 1)) & 1)
			raw |= ~0ULL << bits;
	}
	*v = (int64_t)raw;
	return 0;
}

void usdt_format_args(const struct usdt_site *s, const int64_t *vals, uint32_t known,
		      char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = 0;
	for (int i = 0; i < s->nargs && used < len; i++) {
		int r;

		if (!(known & (1u << i)))
			r = snprintf(buf + used, len - used, "%s?", i ? "," : "");
		else if (s->args[i].is_signed)
			r = snprintf(buf + used, len - used, "%s%" PRId64, i ? "," : "", vals[i]);
		else
			r = snprintf(buf + used, len - used, "%s%" PRIu64, i ? "," : "",
				     (uint64_t)vals[i]);
		used = r < 0 ? len : used + (size_t)r;
	}
}
