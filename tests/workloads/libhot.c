/*
 * libhot.so - a shared library with one hot function, loaded late by
 * dlopener (see dlopener.c).
 *
 * void hot_in_lib(double seconds): burns CPU for `seconds` of
 * CLOCK_MONOTONIC in its own loop (the spin is in hot_in_lib itself, not
 * in a helper, so samples land on this symbol).
 *
 * Known answer: while it runs, nearly all samples of the process are in
 * hot_in_lib in libhot.so (the clock is read only every ~30 us).
 */
#include "workload.h"

void hot_in_lib(double seconds);

static volatile uint64_t sink;

__attribute__((noinline)) void hot_in_lib(double seconds)
{
	WL_SPIN(seconds, sink);
}
