/*
 * test_usdtargs.c - lib/capture/usdtargs.c: USDT argument strings parsed
 * in the forms of the binary's machine, x86_64 (%reg, $N, N(%reg)) and
 * aarch64 (xN, wN, sp, N, [xN, N]), on any host; the refusals, one line
 * naming the argument; the values read from a fake register set (perf's
 * numbers for that machine) and stack copy, the registers a site needs,
 * and the values as text.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "usdt.h"

static void test_args(void **state)
{
	struct usdt_arg a[USDT_MAX_ARGS];
	struct error e;
	int n;

	(void)state;
	assert_int_equal(usdt_parse_args(EM_X86_64, "-4@%edi 8@%rax 4@$5 8@-8(%rbp)", a,
					 USDT_MAX_ARGS, &n, &e), 0);
	assert_int_equal(n, 4);
	assert_int_equal(a[0].kind, USDT_ARG_REG);
	assert_int_equal(a[0].size, 4);
	assert_true(a[0].is_signed);
	assert_int_equal(a[0].reg, USDT_REG_DI);
	assert_int_equal(a[1].kind, USDT_ARG_REG);
	assert_int_equal(a[1].size, 8);
	assert_false(a[1].is_signed);
	assert_int_equal(a[1].reg, USDT_REG_AX);
	assert_int_equal(a[2].kind, USDT_ARG_CONST);
	assert_int_equal(a[2].value, 5);
	assert_int_equal(a[3].kind, USDT_ARG_MEM);
	assert_int_equal(a[3].reg, USDT_REG_BP);
	assert_int_equal(a[3].value, -8);

	assert_int_equal(usdt_parse_args(EM_X86_64, "  -1@%ah 2@%r9w -8@%r15 1@%r10b 8@$-1 "
					 "8@$0x10 8@(%rsp) -2@0x10(%r12) %esi", a, USDT_MAX_ARGS,
					 &n, &e), 0);
	assert_int_equal(n, 9);
	assert_int_equal(a[0].reg, USDT_REG_AX);
	assert_int_equal(a[0].shift, 8);
	assert_int_equal(a[1].reg, USDT_REG_R8 + 1);
	assert_int_equal(a[1].size, 2);
	assert_int_equal(a[2].reg, USDT_REG_R8 + 7);
	assert_int_equal(a[3].reg, USDT_REG_R8 + 2);
	assert_int_equal(a[4].value, -1);
	assert_int_equal(a[5].value, 16);
	assert_int_equal(a[6].kind, USDT_ARG_MEM);
	assert_int_equal(a[6].reg, USDT_REG_SP);
	assert_int_equal(a[6].value, 0);
	assert_int_equal(a[7].value, 16);
	assert_int_equal(a[7].size, 2);
	/* no size: the register's width */
	assert_int_equal(a[8].size, 4);
	assert_int_equal(a[8].reg, USDT_REG_SI);

	assert_int_equal(usdt_parse_args(EM_X86_64, "", a, USDT_MAX_ARGS, &n, &e), 0);
	assert_int_equal(n, 0);
}

/* spec, of a binary for machine, is refused with one line containing msg. */
static void expect_bad(unsigned machine, const char *spec, const char *msg)
{
	struct usdt_arg a[USDT_MAX_ARGS];
	struct error e;
	int n;

	e.msg[0] = 0;
	assert_int_equal(usdt_parse_args(machine, spec, a, USDT_MAX_ARGS, &n, &e), -1);
	if (!strstr(e.msg, msg) || strchr(e.msg, '\n'))
		fail_msg("'%s': message '%s' lacks '%s'", spec, e.msg, msg);
}

static void test_bad_args(void **state)
{
	static const struct { const char *spec, *msg; } bad[] = {
		{ "8@counter(%rip)", "argument 1 '8@counter(%rip)': a global variable" },
		{ "8@%rax 8@(%rax,%rbx,8)", "argument 2 '8@(%rax,%rbx,8)': memory with an index" },
		{ "3@%eax", "argument 1 '3@%eax': the size" },
		{ "8f@%xmm0", "floating point" },
		{ "8@%xyz", "unknown x86_64 register" },
		{ "8@$sym", "the address of a symbol" },
		{ "8@%fs:0x28", "segment-relative" },
		{ "8@", "no operand" },
		{ "8@abc", "not a register" },
		{ "8@8(%eax)", "not a 64-bit" },
		{ "1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1", "more than 12" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_bad(EM_X86_64, bad[i].spec, bad[i].msg);
}

/* Without a size before '@' an operand is signed and as wide as its
 * register (else 8 bytes); with one, signed only after a '-'. */
static void test_arg_sizes(void **state)
{
	static const int size[] = { 4, 8, 8, 4, 4, 4, 2, 2, 2 };
	static const int sign[] = { 1, 1, 1, 0, 0, 0, 1, 1, 1 };
	struct usdt_arg a[USDT_MAX_ARGS];
	struct error e;
	int n;

	(void)state;
	assert_int_equal(usdt_parse_args(EM_X86_64, "%esi $7 8(%rbp) 4@%esi 4@$7 4@8(%rbp) "
					 "-2@%si -2@$7 -2@8(%rbp)", a, USDT_MAX_ARGS, &n, &e), 0);
	assert_int_equal(n, 9);
	for (int i = 0; i < n; i++) {
		assert_int_equal(a[i].kind, i % 3 == 0 ? USDT_ARG_REG :
				 i % 3 == 1 ? USDT_ARG_CONST : USDT_ARG_MEM);
		if (a[i].size != size[i] || a[i].is_signed != sign[i])
			fail_msg("argument %d: size %d signed %d, not %d and %d", i + 1,
				 a[i].size, a[i].is_signed, size[i], sign[i]);
	}
}

static void test_values(void **state)
{
	struct usdt_arg a[USDT_MAX_ARGS];
	uint64_t regs[USDT_NR_REGS] = { 0 };
	unsigned char stack[64];
	int64_t v, word = -12345;
	uint32_t u = 0xdeadbeef;
	struct usdt_site s;
	struct error e;
	char buf[256];
	int n, stk;

	(void)state;
	assert_int_equal(usdt_parse_args(EM_X86_64, "-4@%edi 8@%rax -1@%ah 8@$7 -8@16(%rsp) "
					 "4@-4(%rbp) 8@-64(%rbp) 2@%r9w", a, USDT_MAX_ARGS, &n,
					 &e), 0);
	regs[USDT_REG_DI] = 0x12345678fffffffeULL;	/* low 32 bits: -2 */
	regs[USDT_REG_AX] = 0xffffffffffff80aaULL;	/* ah = 0x80: -128 */
	regs[USDT_REG_SP] = 0x7ffc0000;
	regs[USDT_REG_BP] = 0x7ffc0000 + 40;
	regs[USDT_REG_R8 + 1] = 0x10002;
	memset(stack, 0, sizeof(stack));
	memcpy(stack + 16, &word, 8);
	memcpy(stack + 36, &u, 4);
	assert_int_equal(usdt_arg_value(&a[0], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, -2);
	assert_int_equal(usdt_arg_value(&a[1], regs, stack, sizeof(stack), &v), 0);
	assert_true((uint64_t)v == 0xffffffffffff80aaULL);
	assert_int_equal(usdt_arg_value(&a[2], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, -128);
	assert_int_equal(usdt_arg_value(&a[3], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(usdt_arg_value(&a[4], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, -12345);
	assert_int_equal(usdt_arg_value(&a[5], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, 0xdeadbeef);
	/* below the stack pointer: not in the copy */
	assert_int_equal(usdt_arg_value(&a[6], regs, stack, sizeof(stack), &v), -1);
	assert_int_equal(usdt_arg_value(&a[4], regs, NULL, 0, &v), -1);
	assert_int_equal(usdt_arg_value(&a[7], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, 2);

	memset(&s, 0, sizeof(s));
	s.nargs = n;
	memcpy(s.args, a, sizeof(a));
	assert_true(usdt_regs_mask(&s, &stk) == ((1ULL << USDT_REG_DI) | (1ULL << USDT_REG_AX) |
						  (1ULL << USDT_REG_SP) | (1ULL << USDT_REG_BP) |
						  (1ULL << (USDT_REG_R8 + 1))));
	assert_true(stk);
	{
		int64_t vals[8] = { -2, -1, -128, 7, -12345, 5, 0, 2 };

		usdt_format_args(&s, vals, 0xff & ~(1u << 6), buf, sizeof(buf));
		assert_string_equal(buf, "-2,18446744073709551615,-128,7,-12345,5,?,2");
	}
	s.nargs = 0;
	usdt_format_args(&s, NULL, 0, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

/* The aarch64 forms, parsed on any host (by the binary's e_machine). */
static void test_arm64_args(void **state)
{
	static const struct {
		const char *spec;
		enum usdt_arg_kind kind;
		int size, is_signed, reg;
		int64_t value;
	} ok[] = {
		{ "4@w1", USDT_ARG_REG, 4, 0, 1, 0 },
		{ "8@[sp, 16]", USDT_ARG_MEM, 8, 0, USDT_REG_ARM64_SP, 16 },
		{ "-4@[x29, -12]", USDT_ARG_MEM, 4, 1, 29, -12 },
		{ "8@[x3]", USDT_ARG_MEM, 8, 0, 3, 0 },
		{ "4@5", USDT_ARG_CONST, 4, 0, 0, 5 },
		{ "-4@-1", USDT_ARG_CONST, 4, 1, 0, -1 },
		{ "1@[x2, #16]", USDT_ARG_MEM, 1, 0, 2, 16 },
		{ "-2@[ sp , 24 ]", USDT_ARG_MEM, 2, 1, USDT_REG_ARM64_SP, 24 },
		{ "8@sp", USDT_ARG_REG, 8, 0, USDT_REG_ARM64_SP, 0 },
		{ "x30", USDT_ARG_REG, 8, 1, 30, 0 },		/* no size: signed, */
		{ "w7", USDT_ARG_REG, 4, 1, 7, 0 },		/* as wide as the register */
		{ "-4@wzr", USDT_ARG_CONST, 4, 1, 0, 0 },
		{ "8@#0x10", USDT_ARG_CONST, 8, 0, 0, 16 },
	};
	static const int regs[] = { 22, 21, 0 };
	struct usdt_arg a[USDT_MAX_ARGS];
	struct error e;
	int n;

	(void)state;
	assert_int_equal(usdt_parse_args(EM_AARCH64, "-8@x22 -8@x21 8@x0", a, USDT_MAX_ARGS,
					 &n, &e), 0);
	assert_int_equal(n, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(a[i].kind, USDT_ARG_REG);
		assert_int_equal(a[i].arch, USDT_ARCH_ARM64);
		assert_int_equal(a[i].size, 8);
		assert_int_equal(a[i].is_signed, i < 2);
		assert_int_equal(a[i].reg, regs[i]);
	}
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (usdt_parse_args(EM_AARCH64, ok[i].spec, a, USDT_MAX_ARGS, &n, &e) < 0)
			fail_msg("'%s': %s", ok[i].spec, e.msg);
		assert_int_equal(n, 1);
		if (a[0].kind != ok[i].kind || a[0].size != ok[i].size ||
		    a[0].is_signed != ok[i].is_signed || a[0].value != ok[i].value ||
		    (a[0].kind != USDT_ARG_CONST && a[0].reg != ok[i].reg))
			fail_msg("'%s': kind %d size %d signed %d reg %d value %lld", ok[i].spec,
				 a[0].kind, a[0].size, a[0].is_signed, a[0].reg,
				 (long long)a[0].value);
	}
	/* what GCC 12 writes at -O0: blanks inside the memory operands */
	assert_int_equal(usdt_parse_args(EM_AARCH64, "-4@[sp, 28] -8@[sp, 16] -4@x1 -8@x0 "
					 "1@[sp, 27] -2@[sp, 24] -4@5 -4@-1", a, USDT_MAX_ARGS,
					 &n, &e), 0);
	assert_int_equal(n, 8);
	assert_int_equal(a[1].value, 16);
	assert_int_equal(a[4].value, 27);
	assert_int_equal(a[4].size, 1);
	assert_int_equal(a[7].value, -1);
}

static void test_arm64_bad_args(void **state)
{
	static const struct { unsigned machine; const char *spec, *msg; } bad[] = {
		{ EM_AARCH64, "8@x31", "argument 1 '8@x31': not an aarch64 register" },
		{ EM_AARCH64, "8@x0 8@[x1,", "argument 2 '8@[x1,': memory without its closing" },
		{ EM_AARCH64, "8@q0", "argument 1 '8@q0': a floating point or SIMD register" },
		{ EM_AARCH64, "-4@s3", "floating point or SIMD" },
		{ EM_AARCH64, "8@x12345678901", "not an aarch64 register" },
		{ EM_AARCH64, "8@[sp, 1234567890123456789012345678901234567890]",
		  "the offset '12345678901234567890123456789012' is not a number" },
		{ EM_AARCH64, "8@99999999999999999999", "not an aarch64 register" },
		{ EM_AARCH64, "8@[w1, 8]", "the base is not a 64-bit aarch64 register" },
		{ EM_AARCH64, "8@[xzr]", "the base is not a 64-bit" },
		{ EM_AARCH64, "-8@[x0, #:lo12:.LANCHOR0]", "a global variable" },
		{ EM_AARCH64, "8@[x1, x2]", "memory with an index register" },
		{ EM_AARCH64, "8@[x1, x2, lsl 3]", "memory with an index register" },
		{ EM_AARCH64, "8@x01", "not an aarch64 register" },
		{ EM_AARCH64, "3@x0", "the size" },
		{ EM_AARCH64, "8@", "no operand" },
		{ EM_AARCH64, "-4@%edi", "not an aarch64 register" },
		{ EM_X86_64, "-8@x22 -8@x21 8@x0", "argument 1 '-8@x22': not a register (%reg)" },
		{ EM_RISCV, "8@a0", "forms of riscv binaries are not known" },
		{ EM_AARCH64, "1@1 1@1 1@1 1@1 1@1 1@1 1@1 1@1 1@1 1@1 1@1 1@1 1@1", "more than 12" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_bad(bad[i].machine, bad[i].spec, bad[i].msg);
}

/* Values from a fake aarch64 register set (perf's numbers: sp is 31) and
 * stack copy. */
static void test_arm64_values(void **state)
{
	struct usdt_arg a[USDT_MAX_ARGS];
	uint64_t regs[USDT_NR_REGS] = { 0 };
	unsigned char stack[64];
	int64_t v, word = -12345, big = 0x1122334455667788LL;
	int32_t small = -16;
	struct usdt_site s;
	struct error e;
	int n, stk;

	(void)state;
	assert_int_equal(usdt_parse_args(EM_AARCH64, "-8@x22 -8@x21 8@x0 4@w1 8@[sp, 16] "
					 "-4@[x29, -12] 8@[x3] 4@5 -4@-1 8@[x4]", a,
					 USDT_MAX_ARGS, &n, &e), 0);
	assert_int_equal(n, 10);
	regs[22] = (uint64_t)-5;
	regs[21] = 0x123456789ULL;
	regs[0] = 42;
	regs[1] = 0xffffffff00000007ULL;		/* w1: 7 */
	regs[USDT_REG_ARM64_SP] = 0x7ffc0000;
	regs[29] = 0x7ffc0000 + 44;			/* x29 - 12: sp + 32 */
	regs[3] = 0x7ffc0000 + 48;
	regs[4] = 0x7ffc0000 + 60;			/* 8 bytes from 60: past the copy */
	regs[USDT_REG_SP] = 0x7ffc0000 + 1000;		/* x86's sp number: x7, not the sp */
	memset(stack, 0, sizeof(stack));
	memcpy(stack + 16, &word, 8);
	memcpy(stack + 32, &small, 4);
	memcpy(stack + 48, &big, 8);
	assert_int_equal(usdt_arg_value(&a[0], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, -5);
	assert_int_equal(usdt_arg_value(&a[1], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, 0x123456789LL);
	assert_int_equal(usdt_arg_value(&a[2], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(usdt_arg_value(&a[3], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(usdt_arg_value(&a[4], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, -12345);
	assert_int_equal(usdt_arg_value(&a[5], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, -16);
	assert_int_equal(usdt_arg_value(&a[6], regs, stack, sizeof(stack), &v), 0);
	assert_true(v == big);
	assert_int_equal(usdt_arg_value(&a[7], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, 5);
	assert_int_equal(usdt_arg_value(&a[8], regs, stack, sizeof(stack), &v), 0);
	assert_int_equal(v, -1);
	assert_int_equal(usdt_arg_value(&a[9], regs, stack, sizeof(stack), &v), -1);
	assert_int_equal(usdt_arg_value(&a[4], regs, NULL, 0, &v), -1);

	memset(&s, 0, sizeof(s));
	s.nargs = n;
	memcpy(s.args, a, sizeof(a));
	assert_true(usdt_regs_mask(&s, &stk) == ((1ULL << 22) | (1ULL << 21) | (1ULL << 0) |
						  (1ULL << 1) | (1ULL << USDT_REG_ARM64_SP) |
						  (1ULL << 29) | (1ULL << 3) | (1ULL << 4)));
	assert_true(stk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_arg_sizes),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_arm64_args),
		cmocka_unit_test(test_arm64_bad_args),
		cmocka_unit_test(test_arm64_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
