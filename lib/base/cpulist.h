/*
 * cpulist.h - the kernel's CPU lists ("0-3,8,10-11", as in
 * /sys/devices/system/cpu/online and a PMU's cpumask): parsing, the
 * online CPUs under a sysroot, and writing a list back in that form.
 */
#ifndef STROBE_CPULIST_H
#define STROBE_CPULIST_H

#include <stddef.h>
#include "util.h"

/* Parse s (a trailing newline allowed; CPUs 0 to 65535) into a malloc'd
 * array *cpus of *n entries, in the list's order.  An empty list gives
 * *n 0.  Fails "bad CPU list 'S'". */
int cpulist_parse(const char *s, int **cpus, size_t *n, struct error *e);

/* The online CPUs, from SYSROOT/sys/devices/system/cpu/online (sysroot ""
 * for the real /sys; tests pass a fake tree).  Fails naming the file when
 * it cannot be read, is malformed or lists no CPU. */
int cpulist_online(const char *sysroot, int **cpus, size_t *n, struct error *e);

/* cpus[n] as a list into buf ("0-3,8"; runs of consecutive CPUs as
 * ranges), cut with "..." when it does not fit. */
void cpulist_format(const int *cpus, size_t n, char *buf, size_t len);

/* Whether cpu is in cpus[n]. */
int cpulist_has(const int *cpus, size_t n, int cpu);

#endif
