/*
 * libnocfi.so - a shared library without frame pointers and without any
 * unwind information: built with -fomit-frame-pointer
 * -fno-asynchronous-unwind-tables -fno-unwind-tables and without the C
 * runtime's start files, so it has no .eh_frame, .eh_frame_hdr or
 * .debug_frame at all (Makefile.am checks with readelf).  No unwinder can
 * find the caller of a frame in it: a sample there must be counted as an
 * unwinding failure in this library, never given a made-up stack.
 *
 * uint64_t nocfi_spin(uint64_t n, uint64_t x): n iterations of a
 * dependent xorshift64 chain, called by nocfi_outer (the exported entry),
 * both in this library.  Used by tests/workloads/nocfi.c.
 */
#include <stdint.h>

uint64_t nocfi_outer(uint64_t n, uint64_t x);

__attribute__((noinline)) static uint64_t nocfi_spin(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		__asm__ __volatile__("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) uint64_t nocfi_outer(uint64_t n, uint64_t x)
{
	uint64_t r = nocfi_spin(n, x);

	__asm__ __volatile__("" : "+r"(r));
	return r ^ 1;
}
