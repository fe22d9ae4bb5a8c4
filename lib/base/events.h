/*
 * events.h - event names to perf_event_attr, and what this machine supports.
 *
 * Accepted names, tried in this order:
 *   perf's generic names: cycles, instructions, cache-misses, branch-misses,
 *     cpu-clock, task-clock, page-faults (faults), context-switches (cs), ...
 *   hardware cache events: L1-dcache-load-misses, dTLB-load-misses, LLC-loads, ...
 *   raw events: rXXXX (hex config for the core PMU)
 *   tracepoints: subsystem:name (e.g. sched:sched_switch)
 *   PMU events from sysfs: pmu/event/ (e.g. msr/tsc/)
 *   PMU-specific names through libpfm4: DTLB_LOAD_MISSES:WALK_COMPLETED, ...
 * An optional ":u" / ":k" / ":uk" suffix on a generic, cache or raw name (or
 * "u"/"k" after the last '/' of a PMU event) restricts to user/kernel.
 *
 * Names are events.c, opening and probing eventopen.c, the listing
 * eventlist.c.
 */
#ifndef STROBE_EVENTS_H
#define STROBE_EVENTS_H

#include <stdio.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#include "util.h"

#define EVENT_NAME_MAX 128

struct event_desc {
	char name[EVENT_NAME_MAX];	/* as the user wrote it */
	struct perf_event_attr attr;	/* type, config, config1/2, exclude_* */
};

/* Parse one name. Unknown names fail with
 * "unknown event 'NAME': run 'strobe list' to see the events of this machine". */
int event_parse(const char *name, struct event_desc *out, struct error *e);

/* Parse a comma-separated list (names may contain ':' but not ','; a
 * pmu/a=1,b=2/ term keeps its commas). At most max events; more is an error. */
int event_parse_list(const char *list, struct event_desc *out, size_t max,
		     size_t *n, struct error *e);

/* Check that the kernel accepts the event for system-wide counting on one
 * CPU: opens and closes it. Fails with "event 'NAME' is not supported on this
 * machine (REASON): run 'strobe list' ...". */
int event_probe(const struct event_desc *ev, struct error *e);

/* Check that the kernel accepts evs[0..n) counted as one group, evs[0]
 * leading (e.g. Intel's TopDown events, which count only in a group led by
 * slots): opens and closes them, system-wide on CPU 0 as strobed does, or if
 * that fails, on this process counting user space only, which needs no
 * privilege.  Fails naming the first event the kernel refused, as
 * event_probe, and setting *failed (if not NULL) to its index.  At most
 * EVENT_GROUP_MAX events. */
#define EVENT_GROUP_MAX 16
int event_probe_group(const struct event_desc *evs, size_t n, size_t *failed,
		      struct error *e);

/* 1 if the machine has a usable hardware PMU (cycles can be opened). */
int event_have_hw_pmu(void);

/* The default sampling event: "cycles" with a hardware PMU, else
 * "cpu-clock". */
const char *event_default_sampler(void);

/* Put val into the attr bits that a sysfs PMU format spec names, e.g.
 * "config:0-7,32-35", "config1:0-15", "config:18". Fails if val does not
 * fit or the spec is not understood. */
int event_format_apply(const char *spec, uint64_t val,
		       struct perf_event_attr *attr, struct error *e);

/* Print the events this machine supports, grouped by kind (what
 * 'strobe list' shows). verbose lists every tracepoint and PMU event. */
int event_list(FILE *f, int verbose, struct error *e);

/* perf_event_open(2) of a, close-on-exec: pid and cpu as the system call
 * takes them, group the leader's fd or -1.  The fd, or -1 with errno.
 * The one place strobe (CLI, strobed, benches) makes that call. */
int event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group);

#endif
