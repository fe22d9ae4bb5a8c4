/*
 * eventpmu.c - the PMU of a parsed event as sysfs describes it: the CPUs
 * it counts on (cpumask, cpus) and the event's scale and unit, each file
 * read bounded and checked; and whether such an event can join a strobed
 * session's sampling group (see eventpmu.h).
 */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cpulist.h"
#include "eventpmu.h"
#include "events_int.h"

#define PMU_DEVICES	"/sys/bus/event_source/devices"
#define CPULIST_MAX	4096	/* the kernel writes a cpumask in at most a page */
#define NUMBER_MAX	64	/* a type or a scale */

/*
 * The file at path into buf (at most max bytes after one trailing newline
 * is dropped, NUL-terminated; buf holds max + 1).  1 when it does not
 * exist, 0 read, -1 with e set: unreadable, longer than max, empty, or
 * holding a byte that is not printable ASCII.
 */
static int read_small(const char *path, char *buf, size_t max, struct error *e)
{
	char *tmp = xmalloc(max + 3);	/* max, a newline, one byte too many */
	size_t n = 0;
	ssize_t r = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), ret = 0;

	if (fd < 0) {
		free(tmp);
		if (errno == ENOENT)
			return 1;
		return error_set(e, "cannot read %s: %s", path, strerror(errno));
	}
	while (n < max + 2) {
		r = read(fd, tmp + n, max + 2 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	tmp[n] = 0;
	if (n && tmp[n - 1] == '\n')
		tmp[--n] = 0;
	if (r < 0)
		ret = error_set(e, "cannot read %s: %s", path, strerror(errno));
	else if (n > max)
		ret = error_set(e, "bad %s: longer than %zu bytes", path, max);
	else if (!n)
		ret = error_set(e, "bad %s: empty", path);
	for (size_t i = 0; i < n && !ret; i++)
		if ((unsigned char)tmp[i] < 0x20 || (unsigned char)tmp[i] > 0x7e)
			ret = error_set(e, "bad %s: byte 0x%02x at %zu is not printable text",
					path, (unsigned char)tmp[i], i);
	if (!ret)
		memcpy(buf, tmp, n + 1);
	free(tmp);
	return ret;
}

/* Whether PMU dir's type is type (a missing or malformed file: not). */
static int type_is(const char *dir, uint32_t type)
{
	char *path = xasprintf("%s/type", dir), buf[NUMBER_MAX + 1];
	struct error ignored;
	uint64_t t;
	int r = read_small(path, buf, NUMBER_MAX, &ignored);

	free(path);
	return r == 0 && parse_u64(buf, &t) == 0 && t == type;
}

/*
 * ev's PMU into p->name and, when ev names it by a sysfs alias
 * (pmu/NAME/ with NAME in its events/), that alias into alias; both ""
 * when ev is of no sysfs PMU.
 */
static void find_pmu(const char *devdir, const struct event_desc *ev, struct event_pmu *p,
		     char *alias, size_t alen)
{
	const char *slash = strchr(ev->name, '/'), *last = strrchr(ev->name, '/');
	char *dir, *path;

	alias[0] = 0;
	if (slash && last > slash) {
		char pmu[EVENT_NAME_MAX], terms[EVENT_NAME_MAX];

		snprintf(pmu, sizeof(pmu), "%.*s", (int)(slash - ev->name), ev->name);
		snprintf(terms, sizeof(terms), "%.*s", (int)(last - slash - 1), slash + 1);
		if (!event_path_component_ok(pmu))
			return;
		dir = xasprintf("%s/%s", devdir, pmu);
		if (type_is(dir, ev->attr.type)) {
			snprintf(p->name, sizeof(p->name), "%s", pmu);
			path = xasprintf("%s/events/%s", dir, terms);
			if (event_path_component_ok(terms) && access(path, F_OK) == 0)
				snprintf(alias, alen, "%s", terms);
			free(path);
		}
		free(dir);
		return;
	}
	if (ev->attr.type >= PERF_TYPE_MAX) {	/* a dynamic PMU's type: find it */
		DIR *d = opendir(devdir);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			if (!event_path_component_ok(de->d_name) || strlen(de->d_name) >= sizeof(p->name))
				continue;
			dir = xasprintf("%s/%s", devdir, de->d_name);
			if (type_is(dir, ev->attr.type))
				memcpy(p->name, de->d_name, strlen(de->d_name) + 1);
			free(dir);
			if (p->name[0])
				break;
		}
		if (d)
			closedir(d);
	}
}

/* The PMU's cpumask, else its cpus, into p. */
static int read_cpus(const char *pmudir, struct event_pmu *p, struct error *e)
{
	static const struct { const char *file; enum event_pmu_cpus kind; } f[] = {
		{ "cpumask", EVENT_PMU_CPUMASK }, { "cpus", EVENT_PMU_CPUS },
	};
	char *buf = xmalloc(CPULIST_MAX + 1);
	int ret = 0;

	for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
		char *path = xasprintf("%s/%s", pmudir, f[i].file);
		int r = read_small(path, buf, CPULIST_MAX, e);

		if (r == 0 && cpulist_parse(buf, &p->cpus, &p->ncpus, e) < 0)
			r = error_set(e, "bad %s: '%.32s' is not a CPU list", path, buf);
		free(path);
		if (r <= 0) {
			ret = r;
			if (r == 0)
				p->kind = f[i].kind;
			break;
		}
	}
	free(buf);
	return ret;
}

/* events/ALIAS.scale and .unit into p. */
static int read_scale_unit(const char *pmudir, const char *alias, struct event_pmu *p,
			   struct error *e)
{
	char *path = xasprintf("%s/events/%s.scale", pmudir, alias), buf[NUMBER_MAX + 1], *end;
	int r = read_small(path, buf, NUMBER_MAX, e);

	if (r == 0) {
		errno = 0;
		p->scale = strtod(buf, &end);
		if (end == buf || *end || errno == ERANGE || !isfinite(p->scale) ||
		    p->scale <= 0)
			r = error_set(e, "bad %s: '%s' is not a positive number", path, buf);
	}
	free(path);
	if (r < 0)
		return -1;
	path = xasprintf("%s/events/%s.unit", pmudir, alias);
	r = read_small(path, p->unit, EVENT_PMU_UNIT_MAX - 1, e);
	free(path);
	if (r == 1)
		p->unit[0] = 0;
	return r < 0 ? -1 : 0;
}

int event_pmu_read(const char *sysroot, const struct event_desc *ev, struct event_pmu *p,
		   struct error *e)
{
	char *devdir, *pmudir, alias[EVENT_NAME_MAX];
	int r = 0;

	memset(p, 0, sizeof(*p));
	p->scale = 1;
	p->kind = EVENT_PMU_EVERY_CPU;
	devdir = xasprintf("%s" PMU_DEVICES, sysroot ? sysroot : "");
	find_pmu(devdir, ev, p, alias, sizeof(alias));
	if (p->name[0]) {
		pmudir = xasprintf("%s/%s", devdir, p->name);
		r = read_cpus(pmudir, p, e);
		if (r == 0 && alias[0])
			r = read_scale_unit(pmudir, alias, p, e);
		free(pmudir);
	}
	free(devdir);
	if (r < 0)
		error_prefix(e, "event '%s'", ev->name);
	return r;
}

void event_pmu_free(struct event_pmu *p)
{
	free(p->cpus);
	p->cpus = NULL;
	p->ncpus = 0;
}

int event_pmu_on_cpu(const struct event_pmu *p, int cpu)
{
	return p->kind == EVENT_PMU_EVERY_CPU || cpulist_has(p->cpus, p->ncpus, cpu);
}

int event_pmu_session_check(const char *sysroot, const struct event_desc *ev, int sampler,
			    struct error *e)
{
	struct event_pmu p;
	char list[128];
	int *online = NULL, ret = 0;
	size_t non = 0;

	if (event_pmu_read(sysroot, ev, &p, e) < 0) {
		event_pmu_free(&p);
		return -1;
	}
	cpulist_format(p.cpus, p.ncpus, list, sizeof(list));
	if (p.kind == EVENT_PMU_CPUMASK) {
		ret = error_set(e, "event '%s' cannot %s: PMU '%s' is not a core PMU, it counts "
				"system-wide, opened on CPU%s %s only (its cpumask: one per package); "
				"count it beside the session with 'strobe count -a -I 100 --save NAME "
				"-e %s', and 'strobe plot --session ID --event %s' shows its value "
				"per bucket", ev->name, sampler ? "be a session's sampling event" :
				"join a session's sampling group", p.name, p.ncpus > 1 ? "s" : "",
				list, ev->name, ev->name);
	} else if (p.kind == EVENT_PMU_CPUS) {
		if (cpulist_online(sysroot ? sysroot : "", &online, &non, e) < 0) {
			ret = -1;
		} else {
			for (size_t i = 0; i < non; i++)
				if (!cpulist_has(p.cpus, p.ncpus, online[i])) {
					ret = error_set(e, "event '%s' cannot %s: PMU '%s' counts "
							"only on CPUs %s (its cpus), not on CPU %d "
							"that the session samples; count it with "
							"'strobe count -a -I 100 --save NAME -e %s' "
							"beside the session", ev->name, sampler ?
							"be a session's sampling event" :
							"join a session's sampling group", p.name,
							list, online[i], ev->name);
					break;
				}
		}
		free(online);
	}
	event_pmu_free(&p);
	return ret;
}
