/*
 * events.c - event names to perf_event_attr, probing what the kernel
 * accepts, and the listing behind 'strobe list' (see events.h).
 *
 * Lookup order: perf's generic and hardware cache names (with an optional
 * :u/:k/:uk suffix), raw rNNNN, tracepoints sys:name (id from tracefs),
 * sysfs PMU terms pmu/a=1,b/ (bits placed as PMU/format/TERM says), and
 * last libpfm4, which knows the model-specific names of the core PMU.
 */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "events.h"	/* <linux/perf_event.h> before libpfm4's copy of it */
#include <perfmon/pfmlib_perf_event.h>

#define HINT		"run 'strobe list' to see the events of this machine"
#define PMU_DIR		"/sys/bus/event_source/devices"

static const char *const tracefs_dirs[] = {
	"/sys/kernel/tracing/events",
	"/sys/kernel/debug/tracing/events",
};

struct generic_event {
	const char *name;
	const char *alias;
	uint32_t type;
	uint64_t config;
};

static const struct generic_event generic_events[] = {
	{ "cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", "branch-instructions", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", "idle-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", "idle-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
};

/* Indexed by enum perf_hw_cache_id. */
static const char *const cache_names[] = {
	"L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB", "branch", "node",
};

static const struct cache_op {
	const char *suffix;
	unsigned op, result;
} cache_ops[] = {
	{ "loads", PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	{ "load-misses", PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS },
	{ "stores", PERF_COUNT_HW_CACHE_OP_WRITE, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	{ "store-misses", PERF_COUNT_HW_CACHE_OP_WRITE, PERF_COUNT_HW_CACHE_RESULT_MISS },
	{ "prefetches", PERF_COUNT_HW_CACHE_OP_PREFETCH, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	{ "prefetch-misses", PERF_COUNT_HW_CACHE_OP_PREFETCH, PERF_COUNT_HW_CACHE_RESULT_MISS },
};

static int unknown_event(struct error *e, const char *name)
{
	return error_set(e, "unknown event '%s': " HINT, name);
}

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

/* Can this process open attr on itself, counting user space only? What
 * listing and event_have_hw_pmu() use, so they work without root. */
static int probe_self(const struct perf_event_attr *attr)
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

static int pfm_status;

static void pfm_init_once(void)
{
	pfm_status = pfm_initialize();
}

/* libpfm4 initialised once per process; PFM_SUCCESS or its error. */
static int pfm_ready(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, pfm_init_once);
	return pfm_status;
}

/* A name safe to put in a sysfs/tracefs path: [A-Za-z0-9_.-], no leading
 * '.', so neither '/' nor '..' can get through. */
static int path_component_ok(const char *s)
{
	if (!*s || *s == '.')
		return 0;
	return s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			"0123456789_.-")] == 0;
}

/* A ":u", ":k" or ":uk" modifier (without the colon)? */
static int modifier_ok(const char *mod)
{
	return !strcmp(mod, "u") || !strcmp(mod, "k") || !strcmp(mod, "uk") ||
	       !strcmp(mod, "ku");
}

static void modifier_apply(const char *mod, struct perf_event_attr *attr)
{
	attr->exclude_user = !strchr(mod, 'u');
	attr->exclude_kernel = !strchr(mod, 'k');
	attr->exclude_hv = 1;
}

static int lookup_generic(const char *name, struct perf_event_attr *attr)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(generic_events); i++) {
		const struct generic_event *g = &generic_events[i];

		if (!strcmp(name, g->name) || (g->alias && !strcmp(name, g->alias))) {
			attr->type = g->type;
			attr->config = g->config;
			return 1;
		}
	}
	return 0;
}

static uint64_t cache_config(unsigned id, const struct cache_op *op)
{
	return id | (op->op << 8) | (op->result << 16);
}

static int lookup_cache(const char *name, struct perf_event_attr *attr)
{
	size_t i, j, len;

	for (i = 0; i < ARRAY_SIZE(cache_names); i++) {
		len = strlen(cache_names[i]);
		if (strncmp(name, cache_names[i], len) || name[len] != '-')
			continue;
		for (j = 0; j < ARRAY_SIZE(cache_ops); j++) {
			if (!strcmp(name + len + 1, cache_ops[j].suffix)) {
				attr->type = PERF_TYPE_HW_CACHE;
				attr->config = cache_config(i, &cache_ops[j]);
				return 1;
			}
		}
	}
	return 0;
}

static int lookup_raw(const char *name, struct perf_event_attr *attr)
{
	size_t n = strspn(name + 1, "0123456789abcdefABCDEF");

	if (name[0] != 'r' || n < 1 || n > 16 || name[n + 1])
		return 0;
	attr->type = PERF_TYPE_RAW;
	attr->config = strtoull(name + 1, NULL, 16);
	return 1;
}

/* Generic, cache and raw names, with an optional modifier. 1 if found. */
static int parse_builtin(const char *name, struct perf_event_attr *attr)
{
	char base[EVENT_NAME_MAX];
	const char *colon = strrchr(name, ':');
	size_t len = colon && modifier_ok(colon + 1) ? (size_t)(colon - name) : strlen(name);

	snprintf(base, sizeof(base), "%.*s", (int)len, name);
	if (!lookup_generic(base, attr) && !lookup_cache(base, attr) &&
	    !lookup_raw(base, attr))
		return 0;
	if (name[len])
		modifier_apply(name + len + 1, attr);
	return 1;
}

/* sys:name from tracefs. 1 found, 0 no such tracepoint, -1 tracefs has it
 * but it cannot be read (e filled; the caller may still try libpfm4). */
static int parse_tracepoint(const char *name, struct perf_event_attr *attr,
			    struct error *e)
{
	const char *colon = strchr(name, ':');
	char sys[EVENT_NAME_MAX], *path, *buf;
	uint64_t id;
	size_t i;
	int ret = 0, err;

	if (!colon)
		return 0;
	snprintf(sys, sizeof(sys), "%.*s", (int)(colon - name), name);
	if (!path_component_ok(sys) || !path_component_ok(colon + 1))
		return 0;
	for (i = 0; i < ARRAY_SIZE(tracefs_dirs) && ret == 0; i++) {
		path = xasprintf("%s/%s/%s/id", tracefs_dirs[i], sys, colon + 1);
		buf = file_read_all(path, NULL);
		err = errno;
		if (!buf) {
			if (err != ENOENT)
				ret = error_set(e, "cannot read the id of tracepoint '%s' "
						"from %s: %s%s", name, path, strerror(err),
						err == EACCES ? ": run as root" : "");
		} else {
			buf[strcspn(buf, "\n")] = 0;
			if (parse_u64(buf, &id))
				ret = error_set(e, "bad tracepoint id '%s' in %s", buf, path);
			else {
				attr->type = PERF_TYPE_TRACEPOINT;
				attr->config = id;
				ret = 1;
			}
		}
		free(buf);
		free(path);
	}
	return ret;
}

int event_format_apply(const char *spec, uint64_t val,
		       struct perf_event_attr *attr, struct error *e)
{
	const char *p = strchr(spec, ':');
	unsigned long lo, hi, bit, width = 0;
	__u64 *field;
	char *end;

	if (p && p - spec == 6 && !strncmp(spec, "config", 6))
		field = &attr->config;
	else if (p && p - spec == 7 && !strncmp(spec, "config1", 7))
		field = &attr->config1;
	else if (p && p - spec == 7 && !strncmp(spec, "config2", 7))
		field = &attr->config2;
	else
		goto bad;
	do {
		lo = hi = strtoul(++p, &end, 10);
		if (end == p)
			goto bad;
		if (*end == '-') {
			p = end + 1;
			hi = strtoul(p, &end, 10);
			if (end == p)
				goto bad;
		}
		if (hi < lo || hi > 63)
			goto bad;
		for (bit = lo; bit <= hi; bit++, width++) {
			*field &= ~(1ULL << bit);
			if (width < 64 && (val >> width) & 1)
				*field |= 1ULL << bit;
		}
		p = end;
	} while (*p == ',');
	if (*p && *p != '\n')
		goto bad;
	if (width < 64 && val >> width)
		return error_set(e, "value 0x%llx does not fit in %lu bits",
				 (unsigned long long)val, width);
	return 0;
bad:
	return error_set(e, "cannot understand the format '%s'", spec);
}

/* One term "name=val" or "name" (val 1) of a PMU event. */
static int pmu_set_term(const char *pmu, const char *term, uint64_t val,
			struct perf_event_attr *attr, struct error *e)
{
	__u64 *field = !strcmp(term, "config") ? &attr->config :
		       !strcmp(term, "config1") ? &attr->config1 :
		       !strcmp(term, "config2") ? &attr->config2 : NULL;
	char *path, *spec;
	int ret;

	if (field) {
		*field = val;
		return 0;
	}
	if (!path_component_ok(term))
		return error_set(e, "bad term '%s'", term);
	path = xasprintf(PMU_DIR "/%s/format/%s", pmu, term);
	spec = file_read_all(path, NULL);
	if (!spec)
		ret = error_set(e, "PMU '%s' has no term '%s' (see " PMU_DIR "/%s/format)",
				pmu, term, pmu);
	else
		ret = event_format_apply(spec, val, attr, e);
	if (ret && spec)
		error_prefix(e, "term '%s'", term);
	free(spec);
	free(path);
	return ret;
}

/* "a=1,b,c=0x2": each term is a format term, or (when aliases is set and
 * it has no value) an event alias from PMU/events/NAME, itself terms. */
static int pmu_apply_terms(const char *pmu, const char *terms, int aliases,
			   struct perf_event_attr *attr, struct error *e)
{
	char *dup = xstrdup(terms), *tok, *save, *eq, *path, *alias;
	uint64_t val;
	int ret = 0;

	for (tok = strtok_r(dup, ",", &save); tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		val = 1;
		eq = strchr(tok, '=');
		if (eq) {
			*eq = 0;
			if (parse_u64(eq + 1, &val)) {
				ret = error_set(e, "bad value '%s' for '%s'", eq + 1, tok);
				break;
			}
		}
		alias = NULL;
		if (!eq && aliases && path_component_ok(tok)) {
			path = xasprintf(PMU_DIR "/%s/events/%s", pmu, tok);
			alias = file_read_all(path, NULL);
			free(path);
		}
		if (alias) {
			alias[strcspn(alias, "\n")] = 0;
			ret = pmu_apply_terms(pmu, alias, 0, attr, e);
			free(alias);
		} else {
			ret = pmu_set_term(pmu, tok, val, attr, e);
		}
	}
	free(dup);
	return ret;
}

static int address_pmu(struct error *e, const char *name, const char *pmu)
{
	return error_set(e, "event '%s': the %s PMU is not accepted as an event "
			 "(its terms are addresses): use --marker for USDT probes", name, pmu);
}

/* Whether the PMU called name exists and has type number type. */
static int pmu_type_is(uint64_t type, const char *name)
{
	char *path = xasprintf(PMU_DIR "/%s/type", name);
	char *buf = file_read_all(path, NULL);
	uint64_t t;
	int ret;

	free(path);
	if (!buf)
		return 0;
	buf[strcspn(buf, "\n")] = 0;
	ret = !parse_u64(buf, &t) && t == type;
	free(buf);
	return ret;
}

/* pmu/terms/ with an optional modifier after the last '/'. */
static int parse_pmu(const char *name, struct perf_event_attr *attr,
		     struct error *e)
{
	const char *slash = strchr(name, '/'), *last = strrchr(name, '/');
	char pmu[EVENT_NAME_MAX], terms[EVENT_NAME_MAX], *path, *buf;
	uint64_t type;
	int ret;

	if (last == slash)
		return unknown_event(e, name);
	snprintf(pmu, sizeof(pmu), "%.*s", (int)(slash - name), name);
	snprintf(terms, sizeof(terms), "%.*s", (int)(last - slash - 1), slash + 1);
	if (!*terms || strchr(terms, '/') || !path_component_ok(pmu) ||
	    (last[1] && !modifier_ok(last + 1)))
		return unknown_event(e, name);
	if (!strcmp(pmu, "kprobe") || !strcmp(pmu, "uprobe") || !strcmp(pmu, "breakpoint"))
		return address_pmu(e, name, pmu);
	if (last[1])
		modifier_apply(last + 1, attr);
	path = xasprintf(PMU_DIR "/%s/type", pmu);
	buf = file_read_all(path, NULL);
	free(path);
	if (buf)
		buf[strcspn(buf, "\n")] = 0;
	if (!buf || parse_u64(buf, &type) || type > UINT32_MAX) {
		free(buf);
		return unknown_event(e, name);
	}
	free(buf);
	/* Some PMUs take addresses in their terms: the probe PMUs a pointer to
	 * a path or symbol name in config1 (and an offset or address in
	 * config2), the breakpoint PMU the watched address (bp_addr, which is
	 * config1).  From a user they would make strobed, as root, probe or
	 * watch whatever address they name.  The check is on the type, so no
	 * other name for the PMU gets round it.  USDT probes go through
	 * --marker, which builds its own attr (lib/capture/usdt.c). */
	if (type == PERF_TYPE_BREAKPOINT || pmu_type_is(type, "kprobe") ||
	    pmu_type_is(type, "uprobe"))
		return address_pmu(e, name, pmu);
	attr->type = type;
	ret = pmu_apply_terms(pmu, terms, 1, attr, e);
	if (ret)
		error_prefix(e, "bad event '%s'", name);
	return ret;
}

/* libpfm4; returns its PFM_* status (PFM_ERR_NOTFOUND if it is unusable). */
static int parse_pfm(const char *name, struct perf_event_attr *attr)
{
	pfm_perf_encode_arg_t arg;

	if (pfm_ready() != PFM_SUCCESS)
		return PFM_ERR_NOTFOUND;
	memset(&arg, 0, sizeof(arg));
	arg.attr = attr;
	arg.size = sizeof(arg);
	return pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3,
					 PFM_OS_PERF_EVENT_EXT, &arg);
}

int event_parse(const char *name, struct event_desc *out, struct error *e)
{
	struct perf_event_attr *attr = &out->attr;
	int tp, ret;

	memset(out, 0, sizeof(*out));
	if (!*name)
		return error_set(e, "empty event name");
	if (strlen(name) >= sizeof(out->name))
		return error_set(e, "event name too long (at most %d characters): '%.40s...'",
				 EVENT_NAME_MAX - 1, name);
	strcpy(out->name, name);
	attr->size = sizeof(*attr);
	if (parse_builtin(name, attr))
		return 0;
	if (strchr(name, '/'))
		return parse_pmu(name, attr, e);
	tp = parse_tracepoint(name, attr, e);
	if (tp > 0)
		return 0;
	ret = parse_pfm(name, attr);
	if (ret == PFM_SUCCESS)
		return 0;
	if (tp < 0)
		return -1;
	if (ret != PFM_ERR_NOTFOUND && ret != PFM_ERR_INVAL)
		return error_set(e, "bad event '%s': %s: " HINT, name, pfm_strerror(ret));
	return unknown_event(e, name);
}

int event_parse_list(const char *list, struct event_desc *out, size_t max,
		     size_t *n, struct error *e)
{
	char item[EVENT_NAME_MAX];
	const char *p, *start = list;
	int in_pmu = 0;
	size_t len;

	*n = 0;
	for (p = list; ; p++) {
		if (*p == '/')
			in_pmu = !in_pmu;
		if (*p && (*p != ',' || in_pmu))
			continue;
		len = p - start;
		if (!len)
			return error_set(e, "empty event name in '%s'", list);
		if (*n == max)
			return error_set(e, "too many events in '%s': at most %zu", list, max);
		if (len >= sizeof(item))
			return error_set(e, "event name too long in '%s' (at most %d characters)",
					 list, EVENT_NAME_MAX - 1);
		memcpy(item, start, len);
		item[len] = 0;
		if (event_parse(item, &out[*n], e))
			return -1;
		(*n)++;
		if (!*p)
			return 0;
		start = p + 1;
	}
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
	return error_set(e, "event '%s' is not supported on this machine (%s): " HINT,
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
	return error_set(e, "event '%s' is not supported on this machine%s (%s): " HINT,
			 evs[bad].name, led, probe_why(err));
}

int event_have_hw_pmu(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
	};

	return probe_self(&attr);
}

const char *event_default_sampler(void)
{
	return event_have_hw_pmu() ? "cycles" : "cpu-clock";
}

/* One line of the listing: the name, padded, then [kind]. */
static void __attribute__((format(printf, 3, 4)))
list_line(FILE *f, const char *kind, const char *fmt, ...)
{
	char name[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	fprintf(f, "  %-48s [%s]\n", name, kind);
}

static void list_generic(FILE *f, uint32_t type, const char *title,
			 const char *kind)
{
	struct perf_event_attr attr = { .type = type };
	size_t i, n = 0;

	fprintf(f, "%s:\n", title);
	for (i = 0; i < ARRAY_SIZE(generic_events); i++) {
		const struct generic_event *g = &generic_events[i];

		attr.config = g->config;
		if (g->type != type || !probe_self(&attr))
			continue;
		if (g->alias)
			list_line(f, kind, "%s OR %s", g->name, g->alias);
		else
			list_line(f, kind, "%s", g->name);
		n++;
	}
	if (!n)
		fputs("  (none on this machine)\n", f);
	fputc('\n', f);
}

static void list_cache(FILE *f)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_HW_CACHE };
	size_t i, j, n = 0;

	fputs("Hardware cache events:\n", f);
	for (i = 0; i < ARRAY_SIZE(cache_names); i++) {
		for (j = 0; j < ARRAY_SIZE(cache_ops); j++) {
			attr.config = cache_config(i, &cache_ops[j]);
			if (!probe_self(&attr))
				continue;
			list_line(f, "Hardware cache event", "%s-%s", cache_names[i],
				  cache_ops[j].suffix);
			n++;
		}
	}
	if (!n)
		fputs("  (none on this machine)\n", f);
	fputc('\n', f);
}

static int not_dot(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

static void free_dirents(struct dirent **ents, int n)
{
	while (n > 0)
		free(ents[--n]);
	free(ents);
}

/* Tracepoints of one subsystem dir/sys (those with a readable id). */
static size_t list_subsystem(FILE *f, const char *dir, const char *sys,
			     int verbose)
{
	struct dirent **evs;
	char *path = xasprintf("%s/%s", dir, sys);
	int nev = scandir(path, &evs, not_dot, alphasort), i;
	size_t n = 0;

	free(path);
	for (i = 0; i < nev; i++) {
		path = xasprintf("%s/%s/%s/id", dir, sys, evs[i]->d_name);
		if (!access(path, R_OK)) {
			n++;
			if (verbose)
				list_line(f, "Tracepoint event", "%s:%s", sys,
					  evs[i]->d_name);
		}
		free(path);
	}
	if (nev >= 0)
		free_dirents(evs, nev);
	return n;
}

static void list_tracepoints(FILE *f, int verbose)
{
	struct dirent **subs = NULL;
	const char *dir = NULL, *errdir = NULL;
	size_t i, n, nsys = 0, ntp = 0;
	int nsub = -1, err = 0, j;

	fputs("Tracepoints:\n", f);
	for (i = 0; i < ARRAY_SIZE(tracefs_dirs) && nsub < 0; i++) {
		dir = tracefs_dirs[i];
		nsub = scandir(dir, &subs, not_dot, alphasort);
		if (nsub < 0 && errno != ENOENT && !errdir) {
			errdir = dir;
			err = errno;
		}
	}
	if (nsub < 0) {
		if (!errdir)
			fputs("  tracefs is not mounted (mount -t tracefs nodev "
			      "/sys/kernel/tracing)\n\n", f);
		else
			fprintf(f, "  cannot read %s: %s%s\n\n", errdir, strerror(err),
				err == EACCES ? " (run as root)" : "");
		return;
	}
	for (j = 0; j < nsub; j++) {
		n = list_subsystem(f, dir, subs[j]->d_name, verbose);
		ntp += n;
		nsys += n > 0;
	}
	free_dirents(subs, nsub);
	if (!verbose)
		fprintf(f, "  %zu tracepoints in %zu subsystems (strobe list -v lists them all)\n",
			ntp, nsys);
	fputc('\n', f);
}

/* sysfs event files that describe another event rather than being one. */
static int pmu_event_is_meta(const char *name)
{
	const char *dot = strrchr(name, '.');

	return dot && (!strcmp(dot, ".scale") || !strcmp(dot, ".unit") ||
		       !strcmp(dot, ".per-pkg") || !strcmp(dot, ".snapshot"));
}

static void list_pmus(FILE *f)
{
	struct dirent **pmus, **evs;
	char *path;
	int npmu, nev, i, j;
	size_t n = 0;

	fputs("PMU events (sysfs):\n", f);
	npmu = scandir(PMU_DIR, &pmus, not_dot, alphasort);
	if (npmu < 0) {
		fprintf(f, "  cannot read " PMU_DIR ": %s\n\n", strerror(errno));
		return;
	}
	for (i = 0; i < npmu; i++) {
		path = xasprintf(PMU_DIR "/%s/events", pmus[i]->d_name);
		nev = scandir(path, &evs, not_dot, alphasort);
		free(path);
		for (j = 0; j < nev; j++) {
			if (pmu_event_is_meta(evs[j]->d_name))
				continue;
			list_line(f, "Kernel PMU event", "%s/%s/", pmus[i]->d_name,
				  evs[j]->d_name);
			n++;
		}
		if (nev >= 0)
			free_dirents(evs, nev);
	}
	free_dirents(pmus, npmu);
	if (!n)
		fputs("  (none on this machine)\n", f);
	fputc('\n', f);
}

static void list_pfm(FILE *f, int verbose)
{
	pfm_pmu_t pmu;
	int ret = pfm_ready(), idx, n = 0;

	fputs("PMU events (libpfm4):\n", f);
	if (ret != PFM_SUCCESS) {
		fprintf(f, "  libpfm4 cannot initialise: %s\n", pfm_strerror(ret));
		return;
	}
	pfm_for_all_pmus(pmu) {
		pfm_pmu_info_t pinfo = { .size = sizeof(pinfo) };

		if (pfm_get_pmu_info(pmu, &pinfo) != PFM_SUCCESS || !pinfo.is_present)
			continue;
		n++;
		if (!verbose) {
			fprintf(f, "  %s (%s): %d event%s\n", pinfo.name, pinfo.desc,
				pinfo.nevents, pinfo.nevents == 1 ? "" : "s");
			continue;
		}
		for (idx = pinfo.first_event; idx != -1; idx = pfm_get_event_next(idx)) {
			pfm_event_info_t einfo = { .size = sizeof(einfo) };

			if (pfm_get_event_info(idx, PFM_OS_NONE, &einfo) != PFM_SUCCESS)
				continue;
			list_line(f, "libpfm4 event", "%s::%s", pinfo.name, einfo.name);
		}
	}
	if (!n)
		fputs("  no PMU detected by libpfm4\n", f);
	else if (!verbose)
		fputs("  (strobe list -v lists them all)\n", f);
}

int event_list(FILE *f, int verbose, struct error *e)
{
	list_generic(f, PERF_TYPE_HARDWARE, "Hardware events", "Hardware event");
	list_generic(f, PERF_TYPE_SOFTWARE, "Software events", "Software event");
	list_cache(f);
	list_tracepoints(f, verbose);
	list_pmus(f);
	list_pfm(f, verbose);
	if (fflush(f) || ferror(f))
		return error_set(e, "cannot write the list: %s", strerror(errno));
	return 0;
}
