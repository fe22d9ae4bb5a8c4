/*
 * probe_sys.h - what the machine says about its data caches and data TLB,
 * for 'strobe probe' to check its measurements against: sysfs
 * (/sys/devices/system/cpu/cpuN/cache/index*) and, on x86, CPUID (leaf 4
 * on Intel, 0x8000001D on AMD: the deterministic cache parameters; AMD's
 * 0x80000005 for the L1 data TLB).
 */
#ifndef STROBE_PROBE_SYS_H
#define STROBE_PROBE_SYS_H

#include <stdint.h>

#define PROBE_SYS_LEVELS 4	/* L1d, L2, L3, L4: index by level - 1 */

struct probe_sys_cache {
	int have;		/* 1: this source described the level */
	uint64_t size_bytes;
	unsigned line_bytes;
	unsigned ways;		/* 0: unknown; fully associative: the line count */
};

struct probe_sys {
	/* data or unified caches by level (level 1: the data cache) */
	struct probe_sys_cache sysfs[PROBE_SYS_LEVELS];
	struct probe_sys_cache cpuid[PROBE_SYS_LEVELS];
	int have_cpuid;			/* x86 and the leaf exists */
	int hypervisor;			/* CPUID says we run in a VM */
	unsigned cpuid_dtlb_entries;	/* L1 dTLB entries for 4K pages, 0: unknown */
	unsigned cpuid_l2_dtlb_entries;	/* L2 dTLB entries for 4K pages, 0: unknown */
	char cpuid_note[128];		/* why CPUID says nothing, or "" */
	char sysfs_note[160];		/* why sysfs says nothing, or "" */
};

/*
 * Read sysfs for CPU cpu under root (normally "/sys/devices/system/cpu";
 * tests give another tree) and CPUID of the CPU this thread runs on (the
 * caller pins it).  Never fails: what is missing is left out with a note.
 */
void probe_sys_read(struct probe_sys *s, const char *root, int cpu);

#endif
