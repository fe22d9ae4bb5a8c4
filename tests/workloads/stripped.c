/*
 * stripped - a hot function in a binary without .symtab or debug info.
 *
 * Usage: stripped [SECONDS]      (default 2)
 *
 * Built with -rdynamic and then strip --strip-all: .symtab and DWARF are
 * gone, but stripped_hot (external, noinline) is still in .dynsym.  It
 * burns CPU for SECONDS of CLOCK_MONOTONIC in its own loop.
 *
 * Known answer: nearly all samples are in stripped_hot, which a profiler
 * can only name from .dynsym.  Exits 0.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "workload.h"

void stripped_hot(double seconds);

volatile uint64_t stripped_sink;

__attribute__((noinline)) void stripped_hot(double seconds)
{
	WL_SPIN(seconds, stripped_sink);
}

int main(int argc, char **argv)
{
	double seconds = 2;

	if (wl_seconds_arg(argc, argv, "stripped", &seconds) < 0)
		return 1;
	stripped_hot(seconds);
	return 0;
}
