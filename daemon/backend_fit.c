/*
 * backend_fit.c - how many events of the sampling group one CPU's PMU
 * takes at once, found by trial, for the one line that refuses a group
 * the PMU cannot schedule (perf_check_scheduled).
 *
 * The kernel says nothing of a PMU's number of counters (arm64's PMUv3
 * has PMCR_EL0.N of them, x86 CPUID leaf 0xa, others none at all), and
 * a pinned group it cannot take is accepted by perf_event_open() and put
 * in error state when enabled.  So the way to know is the kernel's own
 * answer: open the leader and its first k - 1 counting events as a
 * pinned counting group on that CPU, enable it and read it; a read of
 * nothing is the error state.  The largest k that counts is the limit.
 * Called only after the session's own group failed on that CPU: its
 * perf_event_open() refused a member (the kernel checks a hardware
 * group against the PMU's counters at open on arm64 and x86), or the
 * group, enabled, is in error state; either way it holds no counters.
 */
#include "config.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include "backend_core.h"
#include "events.h"

/* 1 if the group of the sampler and the first k - 1 counting events
 * counts pinned on cpu, 0 if not, -1 if it cannot even be opened. */
static int group_counts(const struct backend_config *cfg, int cpu, int k)
{
	int fds[STROBE_MAX_COUNTERS + 1], n = 0, leader = -1, ret = -1;
	uint64_t buf[3 + 2 * (STROBE_MAX_COUNTERS + 1)];

	for (int i = 0; i < k; i++) {
		struct perf_event_attr a = i ? cfg->events[i - 1].attr : cfg->sampler.attr;

		a.size = sizeof(a);
		a.sample_period = 0;
		a.freq = 0;
		a.sample_type = 0;
		a.read_format = READ_FORMAT;
		a.disabled = !i;
		a.pinned = !i;
		a.inherit = 0;
		a.mmap = a.mmap2 = a.comm = a.task = 0;
		fds[n] = event_open(&a, -1, cpu, leader);
		if (fds[n] < 0)
			goto out;
		if (!i)
			leader = fds[0];
		n++;
	}
	if (ioctl(leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) < 0)
		goto out;
	ret = read(leader, buf, sizeof(buf)) > 0;
out:
	while (n > 0)
		close(fds[--n]);
	return ret;
}

int perf_group_too_big(const struct backend_config *cfg, int cpu, struct error *e)
{
	int fit, all = cfg->nr_events + 1;

	for (fit = all; fit > 0; fit--)
		if (group_counts(cfg, cpu, fit) == 1)
			break;
	if (fit == 0 || fit == all)
		return 0;
	return error_set(e, "the sampling group '%s' with its %d counting events cannot be "
			 "scheduled on CPU %d: its PMU counts at most %d of the group's %d "
			 "events at once ('%s' is the first that does not fit; tried here); "
			 "count at most %d events with it ('strobe count' multiplexes any "
			 "number)", cfg->sampler.name, cfg->nr_events, cpu, fit, all,
			 cfg->events[fit - 1].name, fit - 1);
}
