/*
 * counter.h - counting events with perf_event_open for one target: the
 * engine of 'strobe count' (perf stat's class of tool).
 *
 * A counter set holds one file descriptor per (event, unit).  A unit is
 * where an event counts: the command's process tree (one unit, inherit),
 * one thread of a process (-p: one unit per thread, -t: one), or one CPU
 * (-a: one unit per online CPU).  Counting happens in the calling process
 * with the kernel's own permission checks; nothing goes through strobed.
 *
 * Every descriptor is read with PERF_FORMAT_TOTAL_TIME_ENABLED and
 * _RUNNING, so a multiplexed count is scaled (count * enabled / running)
 * and reported with the percentage of the time it ran; one that never ran
 * is "not counted".
 *
 * The pure parts (scaling, aggregation by CPU, core, socket or thread from
 * a given topology, delta between two readings) take plain arrays and are
 * unit-tested without a kernel.
 */
#ifndef STROBE_COUNTER_H
#define STROBE_COUNTER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "eventpmu.h"
#include "events.h"
#include "util.h"

#define COUNT_EVENTS_MAX	64
#define COUNT_ID_MAX		64	/* "comm-tid", "S0-D0-C12", "CPU123" */

/* One reading of one descriptor: the read() of the read_format above. */
struct count_value {
	uint64_t val, ena, run;
};

/* The three states a count shows as (perf stat's words in brackets). */
enum count_status {
	COUNT_OK,
	COUNT_NOT_COUNTED,	/* "<not counted>": enabled but never ran */
	COUNT_NOT_SUPPORTED,	/* "<not supported>": the kernel refused to open it */
};

/*
 * Scale v: *scaled = val * ena / run (val when run == ena), *pct = 100 *
 * run / ena.  COUNT_NOT_COUNTED when run is 0 (then both are 0), else
 * COUNT_OK.
 */
enum count_status count_scale(const struct count_value *v, double *scaled, double *pct);

/* cur - prev, field by field (a delta over an -I interval); a field that
 * went backwards (a descriptor reopened) gives cur's. */
struct count_value count_value_sub(const struct count_value *cur, const struct count_value *prev);

/* Where a CPU sits: from /sys/devices/system/cpu/cpuN/topology. */
struct count_cpu_topo {
	int socket, die, core;
};

/* Read cpu's topology under sysroot ("" for the real /sys; tests pass a
 * fake tree).  A missing file reads as 0 (a machine without dies). */
int count_topo_read(const char *sysroot, int cpu, struct count_cpu_topo *t, struct error *e);

enum count_aggr {
	COUNT_AGGR_GLOBAL,	/* one line per event */
	COUNT_AGGR_CPU,		/* -A: one per CPU */
	COUNT_AGGR_CORE,	/* --per-core */
	COUNT_AGGR_SOCKET,	/* --per-socket */
	COUNT_AGGR_THREAD,	/* --per-thread */
};

/* What a unit is: a CPU (tid -1) or a thread (cpu -1), or the whole
 * command (both -1). name: "comm-tid" for a thread. */
struct count_unit {
	int cpu;
	pid_t tid;
	char name[COUNT_ID_MAX];
};

/* One aggregated count of one event. */
struct count_group {
	char id[COUNT_ID_MAX];	/* "" global, "0" a CPU, "S0-D0-C1", "S0", "comm-tid" */
	int nr;			/* how many units it sums (perf's aggregate-number) */
	int first_unit;		/* its first unit, for ordering */
	struct count_value sum;	/* ena and run summed over the units */
	double scaled;		/* the sum of the units' scaled counts */
	enum count_status status; /* NOT_COUNTED when no unit ran */
};

/*
 * Aggregate one event's values vals[nunits] by mode.  topo[cpu] (ntopo
 * entries) places a CPU unit for CORE and SOCKET.  Writes at most nunits
 * groups to out, in the order their first unit appears, and returns how
 * many.  Fails (-1) only when a unit's CPU has no topology entry or mode
 * needs CPUs (CPU, CORE, SOCKET) and a unit is not one, or THREAD and a
 * unit is not a thread.
 */
int count_aggregate(enum count_aggr mode, const struct count_unit *units, size_t nunits,
		    const struct count_cpu_topo *topo, size_t ntopo,
		    const struct count_value *vals, struct count_group *out, struct error *e);

enum count_target_kind {
	COUNT_TARGET_CMD,	/* a forked command: inherit, enable_on_exec
				 * (per_thread: one unit per CPU) */
	COUNT_TARGET_PID,	/* every thread of a process (-p) */
	COUNT_TARGET_TID,	/* one thread (-t) */
	COUNT_TARGET_SYSTEM,	/* every CPU (-a) */
};

struct count_target {
	enum count_target_kind kind;
	pid_t pid;		/* CMD: the forked child (stopped before exec); PID, TID */
	int per_thread;		/* CMD: also each thread's own count (counter_threads) */
	const char *sysroot;	/* where sysfs is (NULL or "": the real /sys; tests
				 * pass a fake tree): the online CPUs and each
				 * event's PMU (eventpmu.h) */
};

/* A descriptor an event has no need of: its PMU does not count on the
 * unit's CPU (a cpumask or cpus that does not name it). */
#define COUNT_FD_NOT_HERE	(-2)

struct counter_set {
	size_t nev, nunits;
	struct event_desc ev[COUNT_EVENTS_MAX];
	enum count_status open_status[COUNT_EVENTS_MAX]; /* OK or NOT_SUPPORTED */
	char why[COUNT_EVENTS_MAX][128];	/* why an event is not supported */
	struct count_unit *units;
	int *fd;				/* [event * nunits + unit], -1 unsupported,
						 * COUNT_FD_NOT_HERE not opened there */
	double scale[COUNT_EVENTS_MAX];		/* its PMU's scale; 0: none (1) */
	char unit[COUNT_EVENTS_MAX][EVENT_PMU_UNIT_MAX]; /* its PMU's unit, or "" */
	enum count_target_kind kind;
	pid_t pid;
	int per_thread;
	void **ring;				/* per_thread: each descriptor's ring buffer */
	size_t ring_len;			/* its mapping's length */
};

/*
 * Open ev[nev] for target t: a command's disabled until the kernel
 * enables them at its exec; the others counting at once (so a caller
 * that sees the descriptors knows counting has begun).  An event the kernel does not support is kept as
 * NOT_SUPPORTED (perf's "<not supported>"); a refusal for lack of rights
 * (-a, or another user's process) fails naming kernel.perf_event_paranoid,
 * CAP_PERFMON and root; a missing process or thread fails "no process
 * PID" and returns -2 (a usage error), other failures -1.
 *
 * An event of a PMU with a cpumask (uncore, power/RAPL: eventpmu.h) is
 * opened, as perf does, only on the CPUs its cpumask names (system-wide,
 * -a), its other units COUNT_FD_NOT_HERE; counting it for a command, a
 * process or a thread fails "counts system-wide only: use -a" and
 * returns -2.  An event of a PMU with cpus (a core PMU of some CPUs) is
 * opened system-wide on those CPUs only.  Each event's scale and unit
 * are kept in cs->scale and cs->unit.
 */
int counter_open(struct counter_set *cs, const struct event_desc *ev, size_t nev,
		 const struct count_target *t, struct error *e);

/* Start (PERF_EVENT_IOC_ENABLE) or stop counting on every descriptor. */
int counter_enable(struct counter_set *cs, struct error *e);
int counter_disable(struct counter_set *cs, struct error *e);

/* Read every descriptor into out[nev * nunits] (unsupported: zeros). */
int counter_read(struct counter_set *cs, struct count_value *out, struct error *e);

void counter_close(struct counter_set *cs);

/*
 * A command's per-thread counts (a set opened with per_thread): each event
 * is opened on the command once per CPU (the kernel maps no ring buffer of
 * an inherited per-task event) with inherit_stat and a small ring buffer,
 * and the kernel writes a PERF_RECORD_READ with a thread's own count into
 * each when the thread (or a child process) exits, plus PERF_RECORD_COMM
 * for its name.  After the command has ended: one unit per thread that
 * exited ("comm-tid"), the command's first thread first, whose count is the
 * total minus the others'.  *units and *vals (nev * *nunits) are
 * malloc'd; *lost counts records the kernel could not write (a full ring:
 * about 200 thread exits), whose counts then stay in the first thread's
 * line.
 */
int counter_threads(const struct counter_set *cs, const struct count_value *total,
		    struct count_unit **units, size_t *nunits, struct count_value **vals,
		    uint64_t *lost, struct error *e);

/*
 * The events 'strobe count' counts without -e, like perf stat's default:
 * task-clock (cpu-clock when system-wide), context-switches,
 * cpu-migrations, page-faults, and with a hardware PMU cycles,
 * instructions, branches and branch-misses.  Returns a comma list.
 */
const char *count_default_events(int system_wide, int have_hw_pmu);

/* Whether ev is a clock (task-clock, cpu-clock): shown in msec. */
int count_event_is_clock(const struct event_desc *ev);

/* The online CPUs (from /sys/devices/system/cpu/online under sysroot):
 * a malloc'd array in *cpus, their number in *n.  cpulist_online. */
int count_online_cpus(const char *sysroot, int **cpus, size_t *n, struct error *e);

/* Parse a CPU list "0-3,8,10-11" into a malloc'd array: cpulist_parse. */
int count_parse_cpulist(const char *s, int **cpus, size_t *n, struct error *e);

#endif
