/*
 * nocfi - a program whose hot path runs in a library without unwind
 * information (libnocfi.so, linked with an rpath of its own directory).
 *
 * Usage: nocfi [SECONDS]   (SECONDS default 3)
 *
 * main -> run_lib (this program, frame pointers and .eh_frame) ->
 * nocfi_outer -> nocfi_spin (libnocfi.so: no frame pointers, no
 * .eh_frame, no .debug_frame), in rounds of about 1 ms until SECONDS of
 * CLOCK_MONOTONIC have passed.
 *
 * Known answer: nearly all samples of the process are in libnocfi.so.
 * Unwinding them by CFI (--call-graph dwarf) must stop in libnocfi.so,
 * counted ("no CFI"), never reach run_lib and main by guesswork.  Prints
 * nothing, exits 0 (1 after one line on stderr when the argument is bad).
 */
#include <stdint.h>
#include "workload.h"

#define U 70000ULL

uint64_t nocfi_outer(uint64_t n, uint64_t x);

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t run_lib(uint64_t n, uint64_t x)
{
	uint64_t r = nocfi_outer(n, x);

	__asm__ __volatile__("" : "+r"(r));
	return r;
}

int main(int argc, char **argv)
{
	double seconds = 3, end;
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	if (wl_seconds_arg(argc, argv, "nocfi", &seconds) < 0)
		return 1;
	end = wl_now() + seconds;
	do {
		x = run_lib(10 * U, x);
	} while (wl_now() < end);
	sink = x;
	return 0;
}
