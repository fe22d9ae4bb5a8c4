/*
 * eventopen.c - opening events (see events.h): event_open, the one
 * perf_event_open(2) call of strobe, and probing whether the kernel
 * accepts an event, alone or in a group, and whether there is a
 * hardware PMU.
 */
#include "config.h"
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "events.h"
#include "events_int.h"

int event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

/* attr, disabled, opened alone: can it be? */
static int open_disabled(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	attr->size = sizeof(*attr);
	attr->disabled = 1;
	return event_open(attr, pid, cpu, -1);
}

int event_probe_self(const struct perf_event_attr *attr)
{
	struct perf_event_attr a = *attr;
	int fd;

	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = open_disabled(&a, 0, -1);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* Why perf_event_open failed with err, in words. */
static const char *probe_why(int err)
{
	switch (err) {
	case ENOENT:
		return "no such event on this CPU's PMU";
	case EACCES:
	case EPERM:
		return "permission denied: run as root or lower "
		       "/proc/sys/kernel/perf_event_paranoid";
	case EOPNOTSUPP:
		return "the PMU cannot do this (e.g. sampling not supported)";
	default:
		return strerror(err);
	}
}

int event_probe(const struct event_desc *ev, struct error *e)
{
	struct perf_event_attr attr = ev->attr;
	int fd = open_disabled(&attr, -1, 0);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return error_set(e, "event '%s' is not supported on this machine (%s): " EVENT_HINT,
			 ev->name, probe_why(errno));
}

/* Open evs as one group, system-wide on CPU 0 or (self) on this process
 * counting user space only, and close it.  0, or -1 with *bad the index of
 * the event that failed and *err its errno. */
static int open_group(const struct event_desc *evs, size_t n, int self, size_t *bad,
		      int *err)
{
	int fds[EVENT_GROUP_MAX], ret = 0;
	size_t i, k;

	for (i = 0; i < n; i++) {
		struct perf_event_attr a = evs[i].attr;

		if (self) {
			a.exclude_kernel = 1;
			a.exclude_hv = 1;
		}
		a.size = sizeof(a);
		a.disabled = !i;
		fds[i] = event_open(&a, self ? 0 : -1, self ? -1 : 0, i ? fds[0] : -1);
		if (fds[i] < 0) {
			*bad = i;
			*err = errno;
			ret = -1;
			break;
		}
	}
	for (k = 0; k < i; k++)
		close(fds[k]);
	return ret;
}

int event_probe_group(const struct event_desc *evs, size_t n, size_t *failed,
		      struct error *e)
{
	size_t bad = 0, bad_self = 0;
	char led[EVENT_NAME_MAX + 32] = "";
	int err = 0, err_self = 0;

	if (n > EVENT_GROUP_MAX)
		return error_set(e, "too many events in one group: at most %d", EVENT_GROUP_MAX);
	if (!n || !open_group(evs, n, 0, &bad, &err) || !open_group(evs, n, 1, &bad_self, &err_self))
		return 0;
	if (err == EACCES || err == EPERM) {	/* the user's lack, not the machine's */
		bad = bad_self;
		err = err_self;
	}
	if (failed)
		*failed = bad;
	if (bad)
		snprintf(led, sizeof(led), " in a group led by '%s'", evs[0].name);
	return error_set(e, "event '%s' is not supported on this machine%s (%s): " EVENT_HINT,
			 evs[bad].name, led, probe_why(err));
}

int event_have_hw_pmu(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
	};

	return event_probe_self(&attr);
}

const char *event_default_sampler(void)
{
	return event_have_hw_pmu() ? "cycles" : "cpu-clock";
}
