/*
 * events.c - event names to perf_event_attr (see events.h): the tables of
 * perf's generic and hardware cache names, and the lookup of a name.
 * Opening and probing events is eventopen.c; 'strobe list' is
 * eventlist.c.
 *
 * Lookup order: perf's generic and hardware cache names (with an optional
 * :u/:k/:uk suffix), raw rNNNN, tracepoints sys:name (id from tracefs),
 * sysfs PMU terms pmu/a=1,b/ (bits placed as PMU/format/TERM says), and
 * last libpfm4, which knows the model-specific names of the core PMU.
 */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "events.h"	/* <linux/perf_event.h> before libpfm4's copy of it */
#include "events_int.h"
#include <perfmon/pfmlib_perf_event.h>

const char *const event_tracefs_dirs[] = {
	"/sys/kernel/tracing/events",
	"/sys/kernel/debug/tracing/events",
};

const struct event_generic event_generics[] = {
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
const char *const event_cache_names[] = {
	"L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB", "branch", "node",
};

const struct event_cache_op event_cache_ops[] = {
	{ "loads", PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	{ "load-misses", PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS },
	{ "stores", PERF_COUNT_HW_CACHE_OP_WRITE, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	{ "store-misses", PERF_COUNT_HW_CACHE_OP_WRITE, PERF_COUNT_HW_CACHE_RESULT_MISS },
	{ "prefetches", PERF_COUNT_HW_CACHE_OP_PREFETCH, PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	{ "prefetch-misses", PERF_COUNT_HW_CACHE_OP_PREFETCH, PERF_COUNT_HW_CACHE_RESULT_MISS },
};

const size_t event_nr_tracefs_dirs = ARRAY_SIZE(event_tracefs_dirs);
const size_t event_nr_generics = ARRAY_SIZE(event_generics);
const size_t event_nr_cache_names = ARRAY_SIZE(event_cache_names);
const size_t event_nr_cache_ops = ARRAY_SIZE(event_cache_ops);

static int unknown_event(struct error *e, const char *name)
{
	return error_set(e, "unknown event '%s': " EVENT_HINT, name);
}

static int pfm_status;

static void pfm_init_once(void)
{
	pfm_status = pfm_initialize();
}

/* libpfm4 initialised once per process; PFM_SUCCESS or its error. */
int event_pfm_ready(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, pfm_init_once);
	return pfm_status;
}

int event_path_component_ok(const char *s)
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

	for (i = 0; i < event_nr_generics; i++) {
		const struct event_generic *g = &event_generics[i];

		if (!strcmp(name, g->name) || (g->alias && !strcmp(name, g->alias))) {
			attr->type = g->type;
			attr->config = g->config;
			return 1;
		}
	}
	return 0;
}

uint64_t event_cache_config(unsigned id, const struct event_cache_op *op)
{
	return id | (op->op << 8) | (op->result << 16);
}

static int lookup_cache(const char *name, struct perf_event_attr *attr)
{
	size_t i, j, len;

	for (i = 0; i < event_nr_cache_names; i++) {
		len = strlen(event_cache_names[i]);
		if (strncmp(name, event_cache_names[i], len) || name[len] != '-')
			continue;
		for (j = 0; j < event_nr_cache_ops; j++) {
			if (!strcmp(name + len + 1, event_cache_ops[j].suffix)) {
				attr->type = PERF_TYPE_HW_CACHE;
				attr->config = event_cache_config(i, &event_cache_ops[j]);
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
	if (!event_path_component_ok(sys) || !event_path_component_ok(colon + 1))
		return 0;
	for (i = 0; i < event_nr_tracefs_dirs && ret == 0; i++) {
		path = xasprintf("%s/%s/%s/id", event_tracefs_dirs[i], sys, colon + 1);
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
	if (!event_path_component_ok(term))
		return error_set(e, "bad term '%s'", term);
	path = xasprintf(EVENT_PMU_DIR "/%s/format/%s", pmu, term);
	spec = file_read_all(path, NULL);
	if (!spec)
		ret = error_set(e, "PMU '%s' has no term '%s' (see " EVENT_PMU_DIR "/%s/format)",
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
		if (!eq && aliases && event_path_component_ok(tok)) {
			path = xasprintf(EVENT_PMU_DIR "/%s/events/%s", pmu, tok);
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
	char *path = xasprintf(EVENT_PMU_DIR "/%s/type", name);
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
	if (!*terms || strchr(terms, '/') || !event_path_component_ok(pmu) ||
	    (last[1] && !modifier_ok(last + 1)))
		return unknown_event(e, name);
	if (!strcmp(pmu, "kprobe") || !strcmp(pmu, "uprobe") || !strcmp(pmu, "breakpoint"))
		return address_pmu(e, name, pmu);
	if (last[1])
		modifier_apply(last + 1, attr);
	path = xasprintf(EVENT_PMU_DIR "/%s/type", pmu);
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

	if (event_pfm_ready() != PFM_SUCCESS)
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
		return error_set(e, "bad event '%s': %s: " EVENT_HINT, name, pfm_strerror(ret));
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
