/*
 * probe.h - 'strobe probe': the data caches and the data TLB measured by
 * timing pointer chases (document 002's method: repeat a measurement until
 * its error is bounded, read the parameters off where the latency steps),
 * each result checked against sysfs and CPUID.  doc/DESIGN.md, "strobe
 * probe", describes the experiments.
 */
#ifndef STROBE_PROBE_H
#define STROBE_PROBE_H

#include <stdint.h>
#include "probe_sys.h"
#include "util.h"

struct table;

#define PROBE_MAX_ROWS 8

struct probe_opts {
	uint64_t max_size;	/* largest working set; 0: 2 x the largest cache
				 * sysfs lists, else 64 MiB (at most 1 GiB) */
	double error_pct;	/* bound on each measurement's relative error */
	int cpu;		/* CPU to pin to; -1: the one we run on */
	unsigned max_reps;	/* samples per measurement at most (0: 200) */
	const char *sysfs_root;	/* NULL: /sys/devices/system/cpu */
};

struct probe_row {
	char kind[8];		/* "L1d", "L2", "L3", "L4", "dTLB" */
	uint64_t size_bytes;	/* capacity; dTLB: reach (pages x page size); 0: unknown */
	unsigned line_bytes;	/* line size; dTLB: the page size; 0: unknown */
	unsigned ways;		/* associativity; 0: not measured */
	double latency_ns;	/* load-to-use latency of a hit; dTLB: the extra
				 * ns per access beyond its reach; NAN: unknown */
	double error_pct;	/* the achieved error of latency_ns (95% CI) */
	uint64_t pages;		/* dTLB: reach in pages */
	uint64_t l2_pages;	/* dTLB: the second-level TLB's reach in pages */
	uint64_t cpuid_l2_pages;	/* dTLB: CPUID's L2 TLB entries (4 KiB) */
	struct probe_sys_cache sysfs, cpuid;	/* what the machine says */
	char check[300];	/* disagreements: "size: sysfs 32768, measured
				 * 24576; ..." or "" when all agree */
	char note[300];		/* what was not measured and why, or "" */
};

/* One measured point of an experiment, kept for --curves. */
struct probe_point {
	char exp[12];		/* "size", "line", "ways", "dtlb" */
	char kind[8];		/* the level the experiment is about ("" for size) */
	double x;		/* bytes, bytes apart, lines, pages */
	double ns;		/* ns per access */
	double error_pct;
};

struct probe_result {
	int cpu;
	uint64_t max_size;
	double error_pct;
	double timer_res_ns;	/* the clock's resolution as measured */
	int huge_pages;		/* the size sweep ran on transparent huge pages */
	unsigned measurements;	/* timed measurements made */
	unsigned unbounded;	/* of them, stopped at max_reps above the bound */
	size_t nrows;
	struct probe_row rows[PROBE_MAX_ROWS];
	struct probe_point *points;	/* every measurement, in order (free()) */
	size_t npoints, cappoints;
};

/* Run every experiment (seconds to a minute: grows with max_size).  Fails
 * only when it cannot pin, allocate or time at all. */
int probe_run(const struct probe_opts *o, struct probe_result *r, struct error *e);

/* The results as a table: kind, size_bytes, line_bytes, ways, latency_ns,
 * error_pct, then the sysfs and CPUID columns, check and note; meta: cpu,
 * max_size, error bound, timer resolution, huge pages. */
struct table *probe_table(const struct probe_result *r);

/* Fill the check fields from the sysfs and CPUID fields (probe_run does;
 * also for tests). */
void probe_crosscheck(struct probe_row *row);

#endif
