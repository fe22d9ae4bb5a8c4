/*
 * usdtargs.c - a USDT site's arguments (usdt.h): its argument string
 * parsed (the x86_64 operand forms <sys/sdt.h> writes: %reg, $N,
 * N(%reg)), the registers and stack they need at a hit, their values
 * from a hit's registers and stack copy, and those values as text.
 * usdt.c finds the sites and their strings in an ELF file.
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

static int parse_one(const char *tok, size_t len, int i, struct usdt_arg *a, struct error *e)
{
	const char *at = memchr(tok, '@', len), *op = tok, *open, *close;
	size_t oplen = len;
	int rsize = 8, shift = 0, size = 0;

	memset(a, 0, sizeof(*a));
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

int usdt_parse_args(const char *s, struct usdt_arg *args, int max, int *nargs,
		    struct error *e)
{
	int n = 0;

	*nargs = 0;
	for (;;) {
		const char *tok;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		tok = s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
		if (n >= max)
			return error_set(e, "more than %d arguments", max);
		if (parse_one(tok, s - tok, n + 1, &args[n], e) < 0)
			return -1;
		n++;
	}
	*nargs = n;
	return 0;
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
			mask |= 1ULL << USDT_REG_SP;
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
		uint64_t addr = regs[a->reg] + (uint64_t)a->value, sp = regs[USDT_REG_SP];

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
