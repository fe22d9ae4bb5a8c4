/*
 * counter.c - counting events with perf_event_open for one target (see
 * counter.h): opening a set for a command, process, thread or the whole
 * system, reading and scaling, and aggregating units by CPU, core, socket
 * or thread.
 */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "counter.h"
#include "cpulist.h"


enum count_status count_scale(const struct count_value *v, double *scaled, double *pct)
{
	if (!v->run) {
		*scaled = 0;
		*pct = 0;
		return COUNT_NOT_COUNTED;
	}
	if (v->run >= v->ena) {
		*scaled = (double)v->val;
		*pct = 100;
	} else {
		*scaled = (double)v->val * ((double)v->ena / (double)v->run);
		*pct = 100.0 * (double)v->run / (double)v->ena;
	}
	return COUNT_OK;
}

struct count_value count_value_sub(const struct count_value *cur, const struct count_value *prev)
{
	struct count_value d;

	d.val = cur->val >= prev->val ? cur->val - prev->val : cur->val;
	d.ena = cur->ena >= prev->ena ? cur->ena - prev->ena : cur->ena;
	d.run = cur->run >= prev->run ? cur->run - prev->run : cur->run;
	return d;
}

static int read_int_file(const char *path, int *v)
{
	char *s = file_read_all(path, NULL), *end;
	long l;

	if (!s)
		return -1;
	errno = 0;
	l = strtol(s, &end, 10);
	if (errno || end == s) {
		free(s);
		return -1;
	}
	free(s);
	*v = (int)l;
	return 0;
}

int count_topo_read(const char *sysroot, int cpu, struct count_cpu_topo *t, struct error *e)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d/topology/physical_package_id",
		 sysroot, cpu);
	if (read_int_file(path, &t->socket) < 0)
		return error_set(e, "cannot read %s: the CPU topology is needed for "
				 "--per-core and --per-socket", path);
	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d/topology/die_id", sysroot, cpu);
	if (read_int_file(path, &t->die) < 0)
		t->die = 0;
	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d/topology/core_id", sysroot, cpu);
	if (read_int_file(path, &t->core) < 0)
		return error_set(e, "cannot read %s: the CPU topology is needed for "
				 "--per-core and --per-socket", path);
	if (t->socket < 0)	/* some virtual machines say -1 */
		t->socket = 0;
	if (t->die < 0)
		t->die = 0;
	return 0;
}

static int group_key(enum count_aggr mode, const struct count_unit *u,
		     const struct count_cpu_topo *topo, size_t ntopo, char *id, size_t len,
		     struct error *e)
{
	const struct count_cpu_topo *t;

	switch (mode) {
	case COUNT_AGGR_GLOBAL:
		id[0] = 0;
		return 0;
	case COUNT_AGGR_THREAD:
		if (u->tid < 0)
			return error_set(e, "--per-thread needs threads to count (-p PID or -t TID)");
		snprintf(id, len, "%s", u->name);
		return 0;
	default:
		break;
	}
	if (u->cpu < 0)
		return error_set(e, "-A, --per-core and --per-socket need system-wide counting (-a)");
	if (mode == COUNT_AGGR_CPU) {
		snprintf(id, len, "%d", u->cpu);
		return 0;
	}
	if ((size_t)u->cpu >= ntopo)
		return error_set(e, "no topology for CPU %d", u->cpu);
	t = &topo[u->cpu];
	if (mode == COUNT_AGGR_CORE)
		snprintf(id, len, "S%d-D%d-C%d", t->socket, t->die, t->core);
	else
		snprintf(id, len, "S%d", t->socket);
	return 0;
}

int count_aggregate(enum count_aggr mode, const struct count_unit *units, size_t nunits,
		    const struct count_cpu_topo *topo, size_t ntopo,
		    const struct count_value *vals, struct count_group *out, struct error *e)
{
	size_t ng = 0;

	for (size_t u = 0; u < nunits; u++) {
		char id[COUNT_ID_MAX];
		struct count_group *g = NULL;
		double scaled, pct;
		enum count_status st;

		if (group_key(mode, &units[u], topo, ntopo, id, sizeof(id), e) < 0)
			return -1;
		for (size_t i = 0; i < ng; i++)
			if (!strcmp(out[i].id, id)) {
				g = &out[i];
				break;
			}
		if (!g) {
			g = &out[ng++];
			memset(g, 0, sizeof(*g));
			snprintf(g->id, sizeof(g->id), "%s", id);
			g->first_unit = (int)u;
			g->status = COUNT_NOT_COUNTED;
		}
		g->nr++;
		g->sum.val += vals[u].val;
		g->sum.ena += vals[u].ena;
		g->sum.run += vals[u].run;
		st = count_scale(&vals[u], &scaled, &pct);
		if (st == COUNT_OK) {
			g->scaled += scaled;
			g->status = COUNT_OK;
		}
	}
	return (int)ng;
}

int count_parse_cpulist(const char *s, int **cpus, size_t *n, struct error *e)
{
	return cpulist_parse(s, cpus, n, e);
}

int count_online_cpus(const char *sysroot, int **cpus, size_t *n, struct error *e)
{
	return cpulist_online(sysroot, cpus, n, e);
}

const char *count_default_events(int system_wide, int have_hw_pmu)
{
	if (have_hw_pmu)
		return system_wide ?
		       "cpu-clock,context-switches,cpu-migrations,page-faults,"
		       "cycles,instructions,branches,branch-misses" :
		       "task-clock,context-switches,cpu-migrations,page-faults,"
		       "cycles,instructions,branches,branch-misses";
	return system_wide ? "cpu-clock,context-switches,cpu-migrations,page-faults" :
	       "task-clock,context-switches,cpu-migrations,page-faults";
}

int count_event_is_clock(const struct event_desc *ev)
{
	return ev->attr.type == PERF_TYPE_SOFTWARE &&
	       (ev->attr.config == PERF_COUNT_SW_TASK_CLOCK ||
		ev->attr.config == PERF_COUNT_SW_CPU_CLOCK);
}

/* Ring pages per descriptor for --per-thread: a thread's READ record is 40
 * bytes, so 2 pages hold ~200 exits; small, as unprivileged users may lock
 * only kernel.perf_event_mlock_kb (516 KiB) of them. */
#define COUNT_RING_PAGES 2

static int paranoid_level(void)
{
	int v = 99;

	if (read_int_file("/proc/sys/kernel/perf_event_paranoid", &v) < 0)
		return 99;
	return v;
}

static void unit_add(struct counter_set *cs, size_t *cap, int cpu, pid_t tid, const char *name)
{
	struct count_unit *u;

	ARRAY_GROW(cs->units, *cap, cs->nunits + 1);
	u = &cs->units[cs->nunits++];
	u->cpu = cpu;
	u->tid = tid;
	snprintf(u->name, sizeof(u->name), "%s", name);
}

static void thread_name(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[128], *s, *nl;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	s = file_read_all(path, NULL);
	if (s && (nl = strchr(s, '\n')))
		*nl = 0;
	snprintf(buf, len, "%.*s-%d", 32, s && *s ? s : "?", (int)tid);
	free(s);
}

static int tid_cmp(const void *a, const void *b)
{
	const struct count_unit *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int units_for_target(struct counter_set *cs, const struct count_target *t, struct error *e)
{
	size_t cap = 0;
	char path[128], name[COUNT_ID_MAX];

	switch (t->kind) {
	case COUNT_TARGET_CMD:
		if (t->per_thread) {
			int *cpus;
			size_t n;

			if (cpulist_online(t->sysroot ? t->sysroot : "", &cpus, &n, e) < 0)
				return -1;
			for (size_t i = 0; i < n; i++)
				unit_add(cs, &cap, cpus[i], t->pid, "");
			free(cpus);
			return 0;
		}
		unit_add(cs, &cap, -1, t->pid, "");
		return 0;
	case COUNT_TARGET_TID:
		snprintf(path, sizeof(path), "/proc/%d/status", (int)t->pid);
		if (t->pid <= 0 || access(path, F_OK) < 0)
			return error_set(e, "no thread %d: check the thread id (ps -eLf)", (int)t->pid);
		thread_name(t->pid, t->pid, name, sizeof(name));
		unit_add(cs, &cap, -1, t->pid, name);
		return 0;
	case COUNT_TARGET_PID: {
		DIR *d;
		struct dirent *de;

		snprintf(path, sizeof(path), "/proc/%d/task", (int)t->pid);
		if (t->pid <= 0 || !(d = opendir(path)))
			return error_set(e, "no process %d: check the process id (ps -p %d)",
					 (int)t->pid, (int)t->pid);
		while ((de = readdir(d))) {
			char *end;
			long tid = strtol(de->d_name, &end, 10);

			if (de->d_name[0] < '0' || de->d_name[0] > '9' || *end || tid <= 0)
				continue;
			thread_name(t->pid, (pid_t)tid, name, sizeof(name));
			unit_add(cs, &cap, -1, (pid_t)tid, name);
		}
		closedir(d);
		if (!cs->nunits)
			return error_set(e, "no process %d: check the process id (ps -p %d)",
					 (int)t->pid, (int)t->pid);
		qsort(cs->units, cs->nunits, sizeof(cs->units[0]), tid_cmp);
		return 0;
	}
	case COUNT_TARGET_SYSTEM: {
		int *cpus;
		size_t n;

		if (cpulist_online(t->sysroot ? t->sysroot : "", &cpus, &n, e) < 0)
			return -1;
		for (size_t i = 0; i < n; i++)
			unit_add(cs, &cap, cpus[i], -1, "");
		free(cpus);
		return 0;
	}
	}
	return error_set(e, "unknown target");
}

static int rights_error(const struct count_target *t, struct error *e)
{
	int p = paranoid_level();

	if (t->kind == COUNT_TARGET_SYSTEM)
		return error_set(e, "system-wide counting (-a) is not allowed: it needs "
				 "kernel.perf_event_paranoid <= 0 (it is %d), CAP_PERFMON or root", p);
	return error_set(e, "counting %s %d is not allowed: it must be yours and "
			 "kernel.perf_event_paranoid <= 2 (it is %d), or it needs CAP_PERFMON or root",
			 t->kind == COUNT_TARGET_TID ? "thread" : "process", (int)t->pid, p);
}

/* The attributes of event i of cs for target t (user_only: its kernel
 * side is not ours to count). */
static struct perf_event_attr count_attr(const struct counter_set *cs,
					 const struct count_target *t, size_t i, int user_only)
{
	struct perf_event_attr attr = cs->ev[i].attr;

	attr.size = sizeof(attr);
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	/* a command's count starts at its exec; the others count from the
	 * moment they are open */
	attr.disabled = t->kind == COUNT_TARGET_CMD;
	attr.inherit = t->kind != COUNT_TARGET_SYSTEM;
	attr.enable_on_exec = t->kind == COUNT_TARGET_CMD;
	attr.sample_period = 0;
	attr.sample_type = 0;
	if (cs->per_thread) {
		/* a PERF_RECORD_READ of each exiting thread's own count; the
		 * first event also names the threads and sees them start */
		attr.inherit_stat = 1;
		attr.comm = i == 0;
		attr.comm_exec = i == 0;
		attr.task = i == 0;
	}
	if (user_only) {
		attr.exclude_kernel = 1;
		attr.exclude_hv = 1;
	}
	return attr;
}

/*
 * Event i on unit u: its fd (and, --per-thread, its ring) into cs; 0, or
 * 0 with cs->open_status[i] COUNT_NOT_SUPPORTED (why in cs->why[i]) when
 * this machine cannot count it, or -1 with e set.  *user_only set when
 * only user space may be counted.
 */
static int open_one(struct counter_set *cs, const struct count_target *t, size_t i, size_t u,
		    int *user_only, struct error *e)
{
	const struct count_unit *un = &cs->units[u];
	struct perf_event_attr attr = count_attr(cs, t, i, *user_only);
	int fd = event_open(&attr, un->tid, un->cpu, -1), err = errno;

	if (fd < 0 && (err == EACCES || err == EPERM) && t->kind != COUNT_TARGET_SYSTEM &&
	    !attr.exclude_kernel) {
		/* like perf stat: without the right to count the kernel,
		 * count user space only (NAME:u) */
		*user_only = 1;
		attr = count_attr(cs, t, i, 1);
		fd = event_open(&attr, un->tid, un->cpu, -1);
		err = errno;
	}
	if (fd >= 0 && cs->per_thread) {
		void *m = mmap(NULL, cs->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

		if (m == MAP_FAILED) {
			error_set(e, "--per-thread: mapping the ring buffer of event '%s': %s%s",
				  cs->ev[i].name, strerror(errno), errno == EPERM ?
				  " (over kernel.perf_event_mlock_kb: count fewer events)" : "");
			close(fd);
			return -1;
		}
		cs->ring[i * cs->nunits + u] = m;
	}
	if (fd >= 0) {
		cs->fd[i * cs->nunits + u] = fd;
		return 0;
	}
	switch (err) {
	case EACCES:
	case EPERM:
		return rights_error(t, e);
	case ESRCH:
		if (t->kind == COUNT_TARGET_PID)
			return 0;	/* a thread that has just exited */
		return error_set(e, "no %s %d: it has exited", t->kind == COUNT_TARGET_TID ?
				 "thread" : "process", (int)un->tid);
	case EMFILE:
	case ENFILE:
		return error_set(e, "too many open files for %zu events on %zu %s: raise "
				 "'ulimit -n' or count fewer events", cs->nev, cs->nunits,
				 t->kind == COUNT_TARGET_SYSTEM ? "CPUs" : "threads");
	default:
		cs->open_status[i] = COUNT_NOT_SUPPORTED;
		snprintf(cs->why[i], sizeof(cs->why[i]), "%s",
			 err == ENOENT ? "no such event on this machine's PMU" : strerror(err));
		return 0;
	}
}

/* Each event this machine cannot count closed on every unit; those
 * counted in user space only named NAME:u. */
static void open_finish(struct counter_set *cs, const int *user_only)
{
	for (size_t i = 0; i < cs->nev; i++) {
		if (cs->open_status[i] == COUNT_NOT_SUPPORTED) {
			for (size_t u = 0; u < cs->nunits; u++) {
				size_t k = i * cs->nunits + u;

				if (cs->ring && cs->ring[k]) {
					munmap(cs->ring[k], cs->ring_len);
					cs->ring[k] = NULL;
				}
				if (cs->fd[k] >= 0) {
					close(cs->fd[k]);
					cs->fd[k] = -1;
				}
			}
		} else if (user_only[i] && strlen(cs->ev[i].name) + 2 < EVENT_NAME_MAX &&
			   !strchr(cs->ev[i].name, ':') && !strchr(cs->ev[i].name, '/')) {
			strcat(cs->ev[i].name, ":u");
		}
	}
}

/*
 * Event i's PMU (eventpmu.h): its scale and unit into cs, and, counting
 * system-wide, the units whose CPU it does not count on marked
 * COUNT_FD_NOT_HERE (all of them: NOT_SUPPORTED, why said).  A cpumask
 * PMU's event for a command, process or thread: -2 (a usage error), a
 * malformed sysfs file -1, e set.
 */
static int pmu_units(struct counter_set *cs, const struct count_target *t, size_t i,
		     struct error *e)
{
	struct event_pmu p;
	char list[96];
	size_t here = 0;

	if (event_pmu_read(t->sysroot, &cs->ev[i], &p, e) < 0) {
		event_pmu_free(&p);
		return -1;
	}
	cs->scale[i] = p.scale;
	snprintf(cs->unit[i], sizeof(cs->unit[i]), "%s", p.unit);
	cpulist_format(p.cpus, p.ncpus, list, sizeof(list));
	if (p.kind == EVENT_PMU_CPUMASK && t->kind != COUNT_TARGET_SYSTEM) {
		error_set(e, "event '%s' counts system-wide only (PMU '%s' is not a core PMU: it "
			  "counts per package, on CPU%s %s): count it with -a", cs->ev[i].name,
			  p.name, p.ncpus > 1 ? "s" : "", list);
		event_pmu_free(&p);
		return -2;
	}
	if (p.kind != EVENT_PMU_EVERY_CPU && t->kind == COUNT_TARGET_SYSTEM) {
		for (size_t u = 0; u < cs->nunits; u++)
			if (event_pmu_on_cpu(&p, cs->units[u].cpu))
				here++;
			else
				cs->fd[i * cs->nunits + u] = COUNT_FD_NOT_HERE;
		if (!here) {
			cs->open_status[i] = COUNT_NOT_SUPPORTED;
			snprintf(cs->why[i], sizeof(cs->why[i]), "PMU '%.32s' counts on CPUs %.40s, "
				 "none of them online", p.name, list);
		}
	}
	event_pmu_free(&p);
	return 0;
}

int counter_open(struct counter_set *cs, const struct event_desc *ev, size_t nev,
		 const struct count_target *t, struct error *e)
{
	int user_only[COUNT_EVENTS_MAX] = { 0 };

	memset(cs, 0, sizeof(*cs));
	if (nev > COUNT_EVENTS_MAX)
		return error_set(e, "too many events (%zu): at most %d", nev, COUNT_EVENTS_MAX);
	cs->nev = nev;
	cs->kind = t->kind;
	cs->pid = t->pid;
	cs->per_thread = t->kind == COUNT_TARGET_CMD && t->per_thread;
	memcpy(cs->ev, ev, nev * sizeof(*ev));
	if (units_for_target(cs, t, e) < 0) {
		counter_close(cs);
		return t->kind == COUNT_TARGET_PID || t->kind == COUNT_TARGET_TID ? -2 : -1;
	}
	cs->fd = xmalloc(nev * cs->nunits * sizeof(int));
	for (size_t i = 0; i < nev * cs->nunits; i++)
		cs->fd[i] = -1;
	if (cs->per_thread) {
		cs->ring = xcalloc(nev * cs->nunits, sizeof(*cs->ring));
		cs->ring_len = (size_t)(1 + COUNT_RING_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
	}
	for (size_t i = 0; i < nev; i++)
		cs->open_status[i] = COUNT_OK;
	/*
	 * Unit by unit, each unit's events in order: with --per-thread the
	 * kernel pairs a task's events with another's in list order when it
	 * swaps their contexts (inherit_stat), and an inherited context lists
	 * them by CPU first, so the parent must too.
	 */
	for (size_t i = 0; i < nev; i++) {
		int r = pmu_units(cs, t, i, e);

		if (r < 0) {
			counter_close(cs);
			return r;
		}
	}
	for (size_t u = 0; u < cs->nunits; u++)
		for (size_t i = 0; i < nev; i++)
			if (cs->open_status[i] != COUNT_NOT_SUPPORTED &&
			    cs->fd[i * cs->nunits + u] != COUNT_FD_NOT_HERE &&
			    open_one(cs, t, i, u, &user_only[i], e) < 0) {
				counter_close(cs);
				return -1;
			}
	open_finish(cs, user_only);
	return 0;
}

static int ioctl_all(struct counter_set *cs, unsigned long req, const char *what, struct error *e)
{
	for (size_t i = 0; i < cs->nev * cs->nunits; i++)
		if (cs->fd[i] >= 0 && ioctl(cs->fd[i], req, 0) < 0)
			return error_set(e, "%s event '%s': %s", what, cs->ev[i / cs->nunits].name,
					 strerror(errno));
	return 0;
}

int counter_enable(struct counter_set *cs, struct error *e)
{
	return ioctl_all(cs, PERF_EVENT_IOC_ENABLE, "enabling", e);
}

int counter_disable(struct counter_set *cs, struct error *e)
{
	return ioctl_all(cs, PERF_EVENT_IOC_DISABLE, "disabling", e);
}

int counter_read(struct counter_set *cs, struct count_value *out, struct error *e)
{
	for (size_t i = 0; i < cs->nev * cs->nunits; i++) {
		uint64_t buf[3];
		ssize_t r;

		memset(&out[i], 0, sizeof(out[i]));
		if (cs->fd[i] < 0)
			continue;
		do
			r = read(cs->fd[i], buf, sizeof(buf));
		while (r < 0 && errno == EINTR);
		if (r != (ssize_t)sizeof(buf))
			return error_set(e, "reading event '%s': %s", cs->ev[i / cs->nunits].name,
					 r < 0 ? strerror(errno) : "short read");
		out[i].val = buf[0];
		out[i].ena = buf[1];
		out[i].run = buf[2];
	}
	return 0;
}

void counter_close(struct counter_set *cs)
{
	if (cs->ring && cs->fd)
		for (size_t i = 0; i < cs->nev * cs->nunits; i++)
			if (cs->ring[i])
				munmap(cs->ring[i], cs->ring_len);
	free(cs->ring);
	cs->ring = NULL;
	if (cs->fd)
		for (size_t i = 0; i < cs->nev * cs->nunits; i++)
			if (cs->fd[i] >= 0)
				close(cs->fd[i]);
	free(cs->fd);
	free(cs->units);
	cs->fd = NULL;
	cs->units = NULL;
	cs->nunits = 0;
}

/* The unit of tid in *units (added, named "?-tid", when new). */
static size_t thread_unit(struct count_unit **units, size_t *n, size_t *cap, pid_t tid)
{
	for (size_t i = 0; i < *n; i++)
		if ((*units)[i].tid == tid)
			return i;
	ARRAY_GROW(*units, *cap, *n + 1);
	(*units)[*n].cpu = -1;
	(*units)[*n].tid = tid;
	snprintf((*units)[*n].name, sizeof((*units)[*n].name), "?-%d", (int)tid);
	return (*n)++;
}

struct thread_read {
	size_t ev, cpu_unit;
	pid_t tid;
	struct count_value v;
};

/* What the --per-thread rings tell: the threads, their counts, the lost. */
struct thread_scan {
	struct count_unit *units;
	size_t n, cap;
	struct thread_read *reads;
	size_t nr, rcap;
	uint64_t lost;
};

/* One record (h, its first len bytes in rec) of event i's ring on CPU unit
 * cpu_unit into ts. */
static void scan_record(struct thread_scan *ts, size_t i, size_t cpu_unit,
			const struct perf_event_header *h, const unsigned char *rec, size_t len)
{
	const size_t hl = sizeof(*h);

	if (h->type == PERF_RECORD_READ && len >= hl + 8 + 24) {
		uint32_t pt[2];
		uint64_t v[3];

		memcpy(pt, rec + hl, 8);
		memcpy(v, rec + hl + 8, 24);
		ARRAY_GROW(ts->reads, ts->rcap, ts->nr + 1);
		ts->reads[ts->nr].ev = i;
		ts->reads[ts->nr].cpu_unit = cpu_unit;
		ts->reads[ts->nr].tid = (pid_t)pt[1];
		ts->reads[ts->nr].v.val = v[0];
		ts->reads[ts->nr].v.ena = v[1];
		ts->reads[ts->nr].v.run = v[2];
		ts->nr++;
		thread_unit(&ts->units, &ts->n, &ts->cap, (pid_t)pt[1]);
	} else if (h->type == PERF_RECORD_COMM && len > hl + 8) {
		uint32_t pt[2];
		size_t u;
		char name[17];

		memcpy(pt, rec + hl, 8);
		snprintf(name, sizeof(name), "%.*s", (int)MIN(len - hl - 8, 16),
			 (const char *)rec + hl + 8);
		u = thread_unit(&ts->units, &ts->n, &ts->cap, (pid_t)pt[1]);
		snprintf(ts->units[u].name, sizeof(ts->units[u].name), "%s-%d", name, (int)pt[1]);
	} else if ((h->type == PERF_RECORD_FORK || h->type == PERF_RECORD_EXIT) &&
		   len >= hl + 16) {
		uint32_t f[4];	/* pid, ppid, tid, ptid */

		memcpy(f, rec + hl, 16);
		thread_unit(&ts->units, &ts->n, &ts->cap, (pid_t)f[2]);
	} else if (h->type == PERF_RECORD_LOST && len >= hl + 16) {
		uint64_t l[2];

		memcpy(l, rec + hl, 16);
		ts->lost += l[1];
	}
}

/* The records of ring d (event d / nunits, CPU unit d % nunits) into ts;
 * 0, or -1 with e set. */
static int scan_ring(const struct counter_set *cs, size_t d, struct thread_scan *ts,
		     struct error *e)
{
	struct perf_event_mmap_page *mp = cs->ring[d];
	size_t page = (size_t)sysconf(_SC_PAGESIZE), data_len = cs->ring_len - page;
	const unsigned char *data;
	uint64_t head, tail;

	if (!mp)
		return 0;
	data = (const unsigned char *)mp + page;
	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	tail = mp->data_tail;
	if (head - tail > data_len)
		return error_set(e, "--per-thread: the ring buffer of '%s' is inconsistent",
				 cs->ev[d / cs->nunits].name);
	while (tail + sizeof(struct perf_event_header) <= head) {
		unsigned char rec[256];
		struct perf_event_header h;
		size_t len;

		for (size_t k = 0; k < sizeof(h); k++)
			((unsigned char *)&h)[k] = data[(tail + k) % data_len];
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		len = MIN((size_t)h.size, sizeof(rec));
		for (size_t k = 0; k < len; k++)
			rec[k] = data[(tail + k) % data_len];
		tail += h.size;
		scan_record(ts, d / cs->nunits, d % cs->nunits, &h, rec, len);
	}
	return 0;
}

/*
 * The counts of ts's threads, event by event (nev x ts->n, calloc'ed).
 * A thread's count is split over its per-CPU events: the counts and
 * running times add up.  Their enabled times are not comparable (the
 * kernel swaps the contexts of tasks with cloned ones, inherit_stat
 * moving counts and times with them), so a thread's line is not scaled:
 * its enabled time is taken to be its running time.  What no record
 * reports (the total less all records, CPU by CPU) is the count of the
 * one thread that ended holding the original events: the first thread
 * seen (FORK, COMM, READ records; the command's first) without a record
 * of that event.
 */
static struct count_value *threads_attribute(const struct counter_set *cs,
					     const struct count_value *total,
					     struct thread_scan *ts)
{
	struct count_value *vals, *first;
	size_t n;
	int *has;

	n = ts->n;	/* each read's thread has its unit (scan_record) */
	vals = xcalloc(cs->nev * n + 1, sizeof(*vals));
	first = xcalloc(cs->nev * cs->nunits + 1, sizeof(*first));
	has = xcalloc(cs->nev * n + 1, sizeof(*has));
	memcpy(first, total, cs->nev * cs->nunits * sizeof(*first));
	for (size_t r = 0; r < ts->nr; r++) {
		const struct thread_read *rd = &ts->reads[r];
		size_t u = thread_unit(&ts->units, &ts->n, &ts->cap, rd->tid);
		struct count_value *f = &first[rd->ev * cs->nunits + rd->cpu_unit];
		struct count_value *t = &vals[rd->ev * n + u];

		has[rd->ev * n + u] = 1;
		t->val += rd->v.val;
		t->run += rd->v.run;
		t->ena = t->run;
		f->val -= MIN(f->val, rd->v.val);
		f->run -= MIN(f->run, rd->v.run);
	}
	for (size_t i = 0; i < cs->nev; i++) {
		size_t holder = 0;
		struct count_value *t;

		for (size_t u = 0; u < n; u++)
			if (!has[i * n + u]) {
				holder = u;
				break;
			}
		t = &vals[i * n + holder];
		for (size_t u = 0; u < cs->nunits; u++) {
			t->val += first[i * cs->nunits + u].val;
			t->run += first[i * cs->nunits + u].run;
		}
		t->ena = t->run;
	}
	free(first);
	free(has);
	return vals;
}

int counter_threads(const struct counter_set *cs, const struct count_value *total,
		    struct count_unit **unitsp, size_t *nunitsp, struct count_value **valsp,
		    uint64_t *lost, struct error *e)
{
	struct thread_scan ts;

	memset(&ts, 0, sizeof(ts));
	*lost = 0;
	if (!cs->per_thread || !cs->ring)
		return error_set(e, "per-thread counts need a command's counter set");
	thread_unit(&ts.units, &ts.n, &ts.cap, cs->pid);	/* the command's first thread */
	for (size_t d = 0; d < cs->nev * cs->nunits; d++)
		if (scan_ring(cs, d, &ts, e) < 0) {
			free(ts.units);
			free(ts.reads);
			return -1;
		}
	*valsp = threads_attribute(cs, total, &ts);
	free(ts.reads);
	*unitsp = ts.units;
	*nunitsp = ts.n;
	*lost = ts.lost;
	return 0;
}
