/*
 * calltree - a CPU-bound workload with a known call tree, for call stacks.
 *
 * Usage: calltree [SECONDS]   (SECONDS default 3)
 *
 * Each round of main's loop calls outer_a(6 * u), then outer_b(4 * u);
 * both call leaf(n), where all the work is: a dependent xorshift64 chain
 * of n iterations.  u is U give or take up to 50%, drawn afresh each round
 * (so a sampling timer cannot lock onto the round period), and rounds
 * repeat until SECONDS of CLOCK_MONOTONIC have passed.  No call is a tail
 * call (each caller uses the result after it), so every caller's frame is
 * on the stack while leaf runs; noipa keeps GCC from cloning or inlining.
 *
 * Built twice (Makefile.am): calltree-fp with frame pointers in every
 * function, leaf included (-fno-omit-frame-pointer
 * -mno-omit-leaf-frame-pointer), and calltree-nofp without
 * (-fomit-frame-pointer; .eh_frame as by default).
 *
 * Known answer: nearly all samples of the process are in leaf; inclusive,
 * main -> outer_a -> leaf has 60% and main -> outer_b -> leaf 40% (within
 * sampling noise; main, outer_a and outer_b themselves are well under
 * 0.1%).  Prints nothing, exits 0 (1 after one line on stderr when the
 * argument is bad).
 */
#include <stdint.h>
#include "workload.h"

/* Iterations per unit; 10 * U take about 1 ms at ~1.4 ns each. */
#define U 70000ULL

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define CT_ATTR __attribute__((noinline, noipa))
#else
#define CT_ATTR __attribute__((noinline))
#endif

uint64_t leaf(uint64_t n, uint64_t x);
uint64_t outer_a(uint64_t n, uint64_t x);
uint64_t outer_b(uint64_t n, uint64_t x);

static volatile uint64_t sink;

/*
 * The one variable on the stack gives leaf a stack frame: GCC 12 sets up
 * no frame pointer in a function that never touches the stack, even with
 * -mno-omit-leaf-frame-pointer, and frame-pointer unwinding would then
 * skip leaf's caller.  It is read once per call: no cost in the loop.
 */
CT_ATTR uint64_t leaf(uint64_t n, uint64_t x)
{
	volatile uint64_t on_stack = 0;

	for (uint64_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		__asm__ __volatile__("" : "+r"(x));
	}
	return x + on_stack;
}

/* the result is used after the call: never a tail call */
CT_ATTR uint64_t outer_a(uint64_t n, uint64_t x)
{
	uint64_t r = leaf(n, x);

	__asm__ __volatile__("" : "+r"(r));
	return r ^ 0xa;
}

CT_ATTR uint64_t outer_b(uint64_t n, uint64_t x)
{
	uint64_t r = leaf(n, x);

	__asm__ __volatile__("" : "+r"(r));
	return r ^ 0xb;
}

int main(int argc, char **argv)
{
	double seconds = 3, end;
	uint64_t x = 0x9e3779b97f4a7c15ULL, rng = 0x2545f4914f6cdd1dULL, u;

	if (wl_seconds_arg(argc, argv, "calltree", &seconds) < 0)
		return 1;
	end = wl_now() + seconds;
	do {
		u = wl_round_unit(&rng, U);
		x = outer_a(6 * u, x);
		x = outer_b(4 * u, x);
	} while (wl_now() < end);
	sink = x;
	return 0;
}
