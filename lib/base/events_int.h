/*
 * events_int.h - what events.c (names), eventopen.c (opening, probing),
 * eventlist.c ('strobe list') and eventpmu.c (a PMU's sysfs files) share:
 * the tables of perf's generic and hardware cache names, where tracefs and
 * the sysfs PMUs are, the one check of a name put in their paths, libpfm4's
 * one initialisation, and opening an event on this process.  Not for use
 * outside those four files: events.h and eventpmu.h are their interfaces.
 */
#ifndef STROBE_EVENTS_INT_H
#define STROBE_EVENTS_INT_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#define EVENT_HINT	"run 'strobe list' to see the events of this machine"
#define EVENT_PMU_DIR	"/sys/bus/event_source/devices"

/* Where tracefs may be mounted, tried in order. */
extern const char *const event_tracefs_dirs[];
extern const size_t event_nr_tracefs_dirs;

/* A name safe to put in a sysfs/tracefs path: [A-Za-z0-9_.-], no leading
 * '.', so neither '/' nor '..' can get through (events.c). */
int event_path_component_ok(const char *s);

/* perf's generic names (alias NULL when there is none). */
struct event_generic {
	const char *name;
	const char *alias;
	uint32_t type;
	uint64_t config;
};
extern const struct event_generic event_generics[];
extern const size_t event_nr_generics;

/* Hardware cache events are NAME-SUFFIX: event_cache_names is indexed by
 * enum perf_hw_cache_id, event_cache_ops gives each suffix's op and
 * result; event_cache_config() is the attr config of the pair. */
extern const char *const event_cache_names[];
extern const size_t event_nr_cache_names;
struct event_cache_op {
	const char *suffix;
	unsigned op, result;
};
extern const struct event_cache_op event_cache_ops[];
extern const size_t event_nr_cache_ops;
uint64_t event_cache_config(unsigned id, const struct event_cache_op *op);

/* libpfm4 initialised once per process; PFM_SUCCESS or its error. */
int event_pfm_ready(void);

/* 1 if this process can open attr on itself, counting user space only
 * (opened disabled, then closed); else 0.  What the listing and
 * event_have_hw_pmu() use, so they work without root. */
int event_probe_self(const struct perf_event_attr *attr);

#endif
