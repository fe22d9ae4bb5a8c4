/*
 * eventpmu.h - what sysfs says of the PMU of a parsed event beyond its
 * encoding: the CPUs the PMU counts on, and the event's scale and unit.
 *
 * A PMU is a directory of SYSROOT/sys/bus/event_source/devices (sysroot
 * "" for the real /sys; tests pass a fake tree), as the kernel documents
 * it (Documentation/ABI/testing/sysfs-bus-event_source-devices*):
 *   cpumask      a non-core PMU (uncore, power/RAPL, cstate, ...): the
 *                CPUs its events must be opened on, one per package (or
 *                die) it counts for, system-wide only.  Opening such an
 *                event on every CPU counts the package once per CPU.
 *   cpus         a core PMU of some CPUs only (hybrid: cpu_core,
 *                cpu_atom): its events count on those CPUs.
 *   events/NAME.scale  what one count of event NAME is worth in its unit
 *                (a decimal number, e.g. 2.3283064365386962890625e-10)
 *   events/NAME.unit   that unit (e.g. "Joules")
 * An event names its PMU as pmu/NAME/ (pmu/terms/), or, for a name found
 * by libpfm4, by its attr type (a dynamic PMU type, PERF_TYPE_MAX and
 * up).  The scale and unit are those of an event named by its sysfs alias
 * (pmu/NAME/); the generic, cache, raw and tracepoint events have no PMU
 * here (they count on every CPU, scale 1, no unit).
 *
 * Every file is read bounded and checked: a malformed one (too long,
 * empty, not a number, a control character) is a one-line error naming
 * the file.
 */
#ifndef STROBE_EVENTPMU_H
#define STROBE_EVENTPMU_H

#include <stddef.h>
#include "events.h"
#include "util.h"

#define EVENT_PMU_UNIT_MAX	32	/* a unit's bytes, NUL included */

enum event_pmu_cpus {
	EVENT_PMU_EVERY_CPU,	/* no cpumask or cpus file (or no sysfs PMU) */
	EVENT_PMU_CPUMASK,	/* a non-core PMU: cpus[] is its cpumask */
	EVENT_PMU_CPUS,		/* a core PMU of some CPUs: cpus[] is its cpus */
};

struct event_pmu {
	char name[EVENT_NAME_MAX];	/* the sysfs PMU; "" when none */
	enum event_pmu_cpus kind;
	int *cpus;			/* malloc'd, ncpus of them; NULL for EVERY_CPU */
	size_t ncpus;
	double scale;			/* 1 when the event has no .scale */
	char unit[EVENT_PMU_UNIT_MAX];	/* "" when it has no .unit */
};

/* What sysfs under sysroot says of ev's PMU, into *p (event_pmu_free it,
 * also after a failure).  An event of no sysfs PMU gives EVERY_CPU, scale
 * 1, no unit. */
int event_pmu_read(const char *sysroot, const struct event_desc *ev, struct event_pmu *p,
		   struct error *e);
void event_pmu_free(struct event_pmu *p);

/* Whether p's events count on cpu: every CPU for EVERY_CPU, else those
 * it lists. */
int event_pmu_on_cpu(const struct event_pmu *p, int cpu);

/*
 * Whether ev can be a member of a strobed session (sampler: its sampling
 * event), whose group is opened on every online CPU (under sysroot) with
 * the sampling event leading: not an event of a non-core PMU (cpumask),
 * which the kernel does not put in a core PMU's group and counts per
 * package, nor of a core PMU of some CPUs only (cpus) that are not all
 * the online ones.  The refusal is one line naming the event, why, and
 * how to record it instead: 'strobe count -a -I MS --save NAME -e EV'
 * beside the session, whose values 'strobe plot' shows per bucket.
 */
int event_pmu_session_check(const char *sysroot, const struct event_desc *ev, int sampler,
			    struct error *e);

#endif
