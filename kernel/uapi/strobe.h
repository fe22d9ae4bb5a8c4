/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * strobe.h - the one record format of strobe, and the driver's user ABI.
 *
 * Both capture backends produce these records: the strobe driver writes
 * them into its per-CPU ring buffers, and strobed's perf_event backend
 * converts each PERF_RECORD_SAMPLE / PERF_RECORD_LOST* into them before
 * anything else sees the data.  The daemon decodes nothing else.
 *
 * Records are little-endian host order, 8-byte aligned, and start with a
 * struct strobe_rec_header whose size covers the whole record.  Counter
 * values are the raw running totals of the counting events since they
 * were enabled; the consumer computes per-CPU increases.
 */
#ifndef _UAPI_STROBE_H
#define _UAPI_STROBE_H

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * 2: the control area is one PAGE_SIZE page (was 4096 bytes), CONFIG reports
 * a refused counting event, hotplug records, STATS has hotplug counts.
 * 3: strobe_sample.period; the control page says its ABI version;
 *    STROBE_REC_UNSCHED.
 * 4: call stacks: strobe_sample.nr_ips, callchain entries and a user
 *    register and stack copy after the counters (STROBE_SAMPLE_CALLCHAIN,
 *    STROBE_SAMPLE_USTACK); strobe_config.flags.  A version-3 record has
 *    nr_ips 0 and neither flag: consumers read both.
 */
#define STROBE_ABI_VERSION	4

/* Most counting events per session, besides the sampling event. */
#define STROBE_MAX_COUNTERS	8

enum strobe_rec_type {
	STROBE_REC_SAMPLE	= 1,	/* struct strobe_sample */
	STROBE_REC_LOST		= 2,	/* struct strobe_lost */
	STROBE_REC_CPU_OFFLINE	= 3,	/* struct strobe_cpu_rec: sampling stopped */
	STROBE_REC_CPU_ONLINE	= 4,	/* struct strobe_cpu_rec: sampling resumed */
	STROBE_REC_UNSCHED	= 5,	/* struct strobe_unsched: group not counting */
};

struct strobe_rec_header {
	__u16	type;		/* enum strobe_rec_type */
	__u16	size;		/* bytes, header included, multiple of 8 */
	__u32	cpu;		/* CPU whose buffer holds the record */
};

/* strobe_sample.flags: where the PC was. Exactly one of the mode bits. */
#define STROBE_SAMPLE_USER	(1U << 0)
#define STROBE_SAMPLE_KERNEL	(1U << 1)
#define STROBE_SAMPLE_HV	(1U << 2)
#define STROBE_SAMPLE_GUEST	(1U << 3)
#define STROBE_SAMPLE_MODE_MASK	0xfU
/* The TSC value is exact (read at the sample), not derived from time_ns. */
#define STROBE_SAMPLE_TSC_EXACT	(1U << 8)
/*
 * Set by strobed when it stores a sample, never by a capture backend:
 * records of this CPU were lost just before it, so its counter increases
 * span the lost interval.  They are kept as that CPU's unattributed
 * lost-interval counts (session_cpus.lost_c<i>), not charged to the sample.
 */
#define STROBE_SAMPLE_AFTER_LOSS	(1U << 9)
/*
 * Call stacks (ABI 4).  CALLCHAIN: nr_ips __u64 entries follow counters[],
 * in perf's PERF_SAMPLE_CALLCHAIN layout: leaf first, each context's
 * addresses after a PERF_CONTEXT_KERNEL / PERF_CONTEXT_USER marker
 * (values >= PERF_CONTEXT_MAX as unsigned), callers as return addresses.
 * USTACK: after those entries, a struct strobe_ustack: the user registers
 * and a copy of the top of the user stack, for unwinding by the consumer
 * (perf's --call-graph dwarf).
 */
#define STROBE_SAMPLE_CALLCHAIN	(1U << 10)
#define STROBE_SAMPLE_USTACK	(1U << 11)
/*
 * Not a sample: the counters read at a context switch (exact attribution,
 * --attribution exact).  pid/tid: the thread switched out; ip: where it
 * was (in the scheduler); period 0; no callchain.  Its counters' increases
 * since the previous record of this CPU are that thread's.  Produced by the
 * perf backend only (a context-switches member of the sampling group with
 * period 1); the driver does not read at switches.
 */
#define STROBE_SAMPLE_SWITCH	(1U << 12)
/*
 * Exact attribution: the CPU counted context switches since its previous
 * record (sample or switch read) for which the kernel wrote no switch
 * read, so the counters' increases since then are not this record's
 * thread's alone: other threads ran, unseen, in between.  Like a loss,
 * they are kept as the CPU's unattributed lost-interval counts.  Set by the
 * perf backend from the context-switches member's own count in the group
 * read (one more at a switch read than at the CPU's previous record, the
 * same at a sample); never stored (the sample is stored with
 * STROBE_SAMPLE_AFTER_LOSS).
 */
#define STROBE_SAMPLE_SWITCH_MISSED	(1U << 13)

/* Most callchain entries of one sample, context markers included. */
#define STROBE_MAX_IPS		512

struct strobe_sample {
	struct strobe_rec_header hdr;	/* type STROBE_REC_SAMPLE */
	__u64	tsc;		/* time stamp counter (x86 TSC, arm64 CNTVCT) */
	__u64	time_ns;	/* CLOCK_MONOTONIC, ns */
	__u64	ip;		/* program counter */
	__u32	pid;		/* process (thread group) id */
	__u32	tid;		/* thread id */
	__u16	flags;		/* STROBE_SAMPLE_* */
	__u8	nr_counters;	/* <= STROBE_MAX_COUNTERS */
	__u8	reserved0;
	__u16	nr_ips;		/* callchain entries after counters[] (CALLCHAIN),
				 * <= STROBE_MAX_IPS; 0 without the flag */
	__u16	reserved1;
	/*
	 * The sampling event's period that ended at this sample: how many of
	 * its events this sample stands for (ns for cpu-clock).  Constant
	 * with a fixed period (-c); in frequency mode (-F) the kernel adjusts
	 * it, and reports weight each sample by it, as perf report does.
	 * 0: unknown (the sample then weighs as one period).
	 */
	__u64	period;
	__u64	counters[];	/* nr_counters running totals, in -e order */
	/* then __u64 ips[nr_ips] (CALLCHAIN), then struct strobe_ustack (USTACK) */
};

/*
 * A sample's user registers and stack copy (STROBE_SAMPLE_USTACK): regs
 * are nr_regs values in ascending bit order of regs_mask (the arch's
 * PERF_REG_* numbers, as perf_event_attr.sample_regs_user), then come
 * stack_size bytes copied from the user stack pointer upwards, padded with
 * zeroes to a multiple of 8.  abi 0 (PERF_SAMPLE_REGS_ABI_NONE): the task
 * had no user state (a kernel thread); nr_regs and stack_size are then 0.
 * The record's size (a __u16) bounds the copy: a producer truncates the
 * stack to fit, never the registers.
 */
struct strobe_ustack {
	__u32	abi;		/* PERF_SAMPLE_REGS_ABI_* */
	__u32	nr_regs;	/* popcount(regs_mask) when abi != 0 */
	__u64	regs_mask;
	__u64	stack_size;	/* valid bytes of the stack copy */
	__u64	regs[];		/* nr_regs values, then the stack copy */
};

struct strobe_lost {
	struct strobe_rec_header hdr;	/* type STROBE_REC_LOST */
	__u64	time_ns;	/* CLOCK_MONOTONIC of the report, ns */
	__u64	lost;		/* records dropped since the previous report */
};

/*
 * CPU hotplug (driver only).  OFFLINE: hdr.cpu went offline; no sample of it
 * follows until its ONLINE record.  time_ns of OFFLINE is when the driver
 * saw the CPU go down (never before the CPU's previous record), of ONLINE
 * when sampling resumed.  Counter totals continue across the gap: what the
 * CPU counted until it went down is kept, and it counts nothing while down.
 */
struct strobe_cpu_rec {
	struct strobe_rec_header hdr;	/* type STROBE_REC_CPU_OFFLINE/ONLINE */
	__u64	time_ns;	/* CLOCK_MONOTONIC, ns */
};

/*
 * The CPU's sampling group was enabled but not counting for part of the
 * enabled_ns that ended at time_ns: the kernel multiplexed it with other
 * events (running_ns < enabled_ns), or, with STROBE_UNSCHED_ERROR, could
 * not schedule it at all (a pinned group in error state: running_ns is
 * what it counted before, enabled_ns reaches back to the CPU's last
 * sample).  No sample and no counter increase exists for the time it did
 * not count.  The perf backend writes it from the group's time enabled and
 * running, read with every sample and at the end; the driver's events are
 * pinned and it does not write it (see kernel/README.md).
 */
#define STROBE_UNSCHED_ERROR	(1U << 0)

struct strobe_unsched {
	struct strobe_rec_header hdr;	/* type STROBE_REC_UNSCHED */
	__u64	time_ns;	/* CLOCK_MONOTONIC at the end of the interval */
	__u64	enabled_ns;	/* the interval: time_ns - enabled_ns .. time_ns */
	__u64	running_ns;	/* of which the group counted */
	__u32	flags;		/* STROBE_UNSCHED_* */
	__u32	reserved;
};

#define STROBE_SAMPLE_SIZE(nr) \
	(sizeof(struct strobe_sample) + (nr) * sizeof(__u64))

/*
 * Driver ring buffer, one per CPU, mmap'ed from /dev/strobe.  Sizes and
 * offsets are in pages of the kernel's PAGE_SIZE, which is what
 * sysconf(_SC_PAGESIZE) returns (4 KiB on x86, 4, 16 or 64 KiB on arm64):
 * CPU c's ring is at offset c * (page_size + data_size), first one control
 * page (struct strobe_ring_ctrl, its page_size field says how long the page
 * is), then data_size = buffer_pages * page_size bytes of records.  A mapping
 * is the control page alone, the records alone, or the whole ring.  Records never straddle
 * the end: a producer that cannot fit a record before the end writes a
 * header of type STROBE_REC_PAD whose size covers the rest of the buffer.
 *
 * Single producer (the CPU's overflow handler), single consumer (strobed):
 *   producer: write record at head; smp_wmb(); WRITE_ONCE(head, new);
 *   consumer: h = READ_ONCE(head); smp_rmb(); read records up to h;
 *             smp_mb(); WRITE_ONCE(tail, new);
 * A record that does not fit between head and tail is counted in
 * ->lost and never overwrites unread data.
 */
#define STROBE_REC_PAD		0xffff	/* skip to the end of the buffer */

struct strobe_ring_ctrl {
	__u64	head;		/* written by the producer: bytes produced */
	__u64	tail;		/* written by the consumer: bytes consumed */
	__u64	lost;		/* records dropped, producer-maintained */
	__u32	data_size;	/* bytes of record space, power of two */
	__u32	watermark;	/* wake the reader past this many bytes */
	__u32	page_size;	/* bytes of this control page: the kernel's PAGE_SIZE */
	__u32	abi_version;	/* STROBE_ABI_VERSION of the driver (0 before 3) */
	__u64	reserved[59];
};

/* ioctl ABI: configuration of one session */
struct strobe_config {
	__u32	size;		/* sizeof(struct strobe_config), for extension */
	__u32	nr_counters;	/* <= STROBE_MAX_COUNTERS */
	__u64	sample_attr;	/* user pointer to struct perf_event_attr */
	__u64	counter_attrs;	/* user pointer to nr_counters perf_event_attr */
	__u32	attr_size;	/* sizeof(struct perf_event_attr) of the caller */
	__u32	buffer_pages;	/* per-CPU data pages, power of two */
	__u64	cpu_mask[4];	/* CPUs to sample; all zero = all online */
	__u32	refused;	/* out: see below */
	__u32	flags;		/* STROBE_CONFIG_* (ABI 4; was reserved, zero) */
};

/*
 * strobe_config.flags.  CALLCHAIN: samples carry the kernel callchain and
 * the user callchain walked by frame pointers (STROBE_SAMPLE_CALLCHAIN).
 * A driver that cannot fails CONFIG with EOPNOTSUPP.
 */
#define STROBE_CONFIG_CALLCHAIN	(1U << 0)

/*
 * CONFIG fails with EOPNOTSUPP and sets strobe_config.refused to 1 + the index
 * of a counting event whose value the overflow handler cannot read safely
 * (its PMU's read may take locks or do I/O, or the PMU counts it on another
 * CPU: uncore, package, device and other dynamic PMUs, and task-clock).  The
 * handler reads only the CPU's own hardware PMU, software events but
 * task-clock, and tracepoint counts.  refused is 0 for every other error.
 */

struct strobe_cpu_stats {
	__u64	samples;	/* sample records written */
	__u64	lost;		/* samples dropped: ring full */
	__u64	handler_ns_total;	/* time in the overflow handler */
	__u64	handler_ns_max;
	__u64	nr_counters;	/* entries of counters[] that are valid */
	__u64	counters[STROBE_MAX_COUNTERS];	/* running totals at STATS time */
	__u64	offline;	/* times the CPU went offline during the session */
	__u64	online;		/* times it came back and was sampled again */
};

struct strobe_stats {
	__u32	size;		/* sizeof(struct strobe_stats) */
	__u32	nr_cpus;	/* entries available at cpus */
	__u64	cpus;		/* user pointer to nr_cpus strobe_cpu_stats */
};

#define STROBE_IOC_MAGIC	0xB5
#define STROBE_IOC_CONFIG	_IOWR(STROBE_IOC_MAGIC, 1, struct strobe_config)
#define STROBE_IOC_START	_IO(STROBE_IOC_MAGIC, 2)
#define STROBE_IOC_STOP		_IO(STROBE_IOC_MAGIC, 3)
/* 4 was ABI 1's STATS, with a shorter struct strobe_cpu_stats */
#define STROBE_IOC_STATS	_IOWR(STROBE_IOC_MAGIC, 5, struct strobe_stats)

#endif /* _UAPI_STROBE_H */
