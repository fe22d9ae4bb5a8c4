/*
 * backend_perf.c - the per-CPU perf rings of a capture backend
 * (backend_core.h): with perf_event_open(2) alone on unmodified kernels
 * (BACKEND_PERF), or for the side-band only beside the driver
 * (BACKEND_DRIVER, backend_dev.c).
 *
 * Per online CPU one group: the sampling event leads, the counting events
 * follow, and every sample reads the whole group (PERF_SAMPLE_READ with
 * PERF_FORMAT_GROUP), so each sample carries all counter values read at
 * the same instant.  The leader also carries the side-band (mmap2 with
 * build-id, comm, fork/exit, and from Linux 5.7 the cgroups created) of
 * its CPU.  Where the kernel has it (5.7), every sample also carries its
 * task's cgroup id (PERF_SAMPLE_CGROUP, struct record's sample.cgroup);
 * older kernels refuse the bits and the session goes on without them
 * (backend_has_cgroups() is 0: ingest then reads /proc/PID/cgroup).
 * Sample times are CLOCK_MONOTONIC (use_clockid); the TSC of a sample is
 * derived from its time through the kernel's cyc2ns scale published in
 * the mmap page (see tsc.h).
 *
 * With the driver, the per-CPU perf events are dummy events that only
 * carry the side-band, on the same CLOCK_MONOTONIC clock as the driver's
 * time_ns.
 *
 * Call stacks (cfg->call_graph, callgraph.h): fp adds PERF_SAMPLE_CALLCHAIN
 * to the leader's samples, kernel and user, at most
 * kernel.perf_event_max_stack frames (sample_max_stack); dwarf adds the
 * user registers callgraph_regs_mask() names and cfg->stack_bytes of user
 * stack (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER) and keeps only the
 * kernel part of the callchain (exclude_callchain_user, as perf does): the
 * user part is unwound at ingest.  queue_sample() carries them in the
 * struct record (STROBE_SAMPLE_CALLCHAIN, STROBE_SAMPLE_USTACK), the stack
 * copy cut to what a strobe record may hold (record_size()).  The driver
 * records fp callchains itself (STROBE_CONFIG_CALLCHAIN); dwarf needs this
 * backend.
 *
 * Each record is decoded once, when its chunk is read (perf_chunk_read):
 * a sample into a struct record (queue_sample), a side-band or loss record
 * into a struct perfrec (backend_sideband.c), a uprobe's sample into a
 * probe hit (backend_usdt.c).  The drain thread (perf_ring_copy) reads only
 * the headers, but for the MMAP2 records, which it looks at too
 * (sideband_note): the files and owners they need must be looked at while
 * the process surely runs, long before the chunk is read.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "backend_core.h"
#include "callgraph.h"

/* sample_type and its sample_id_all trailer: pid,tid; time; cpu,res; identifier */
#define SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ)

const char *perf_open_hint(int err)
{
	switch (err) {
	case EACCES:
	case EPERM:
		return "permission denied: strobed must run as root";
	case ENOENT:
		return "no such event on this CPU's PMU";
	case EOPNOTSUPP:
		return "this PMU cannot sample this event";
	case EINVAL:
		return "invalid: the rate may be above perf_event_max_sample_rate, or the "
		       "group cannot be scheduled together";
	case ENOSPC:
	case EBUSY:
		return "too many events for the PMU's counters";
	case EMFILE:
		return "too many open files: raise ulimit -n";
	}
	return strerror(err);
}

/*
 * --attribution exact: a context-switches member of r's group with period
 * 1.  The kernel counts a switch in perf_event_task_sched_out(), in the
 * thread going out, so each of its samples is a group read taken as that
 * thread stops running on r's CPU: the counters' increases since the
 * CPU's previous read are that thread's.  Its samples go to the leader's
 * ring (PERF_EVENT_IOC_SET_OUTPUT), in the layout b->sw_fmt (the leader's,
 * less stacks).  leader: the leader's attr, for its clock and trailer.
 */
static int switch_open(struct backend *b, struct cpu_ring *r,
		       const struct perf_event_attr *leader, struct error *e)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	a.sample_period = 1;
	a.sample_type = leader->sample_type & ~(uint64_t)(PERF_SAMPLE_CALLCHAIN |
							  PERF_SAMPLE_REGS_USER |
							  PERF_SAMPLE_STACK_USER);
	a.read_format = READ_FORMAT;
	a.sample_id_all = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.cgroup = 0;
	r->swfd = event_open(&a, -1, r->cpu, r->fd);
	if (r->swfd < 0)
		return error_set(e, "--attribution exact: cannot add a context-switches "
				 "reader to the group of '%s' on CPU %d: %s",
				 b->cfg.sampler.name, r->cpu, perf_open_hint(errno));
	if (ioctl(r->swfd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) < 0)
		return error_set(e, "--attribution exact: PERF_EVENT_IOC_SET_OUTPUT on "
				 "CPU %d: %s", r->cpu, strerror(errno));
	if (ioctl(r->swfd, PERF_EVENT_IOC_ID, &r->swid) < 0)
		return error_set(e, "PERF_EVENT_IOC_ID: %s", strerror(errno));
	if (r == b->rings &&
	    perfrec_format_init(&b->sw_fmt, a.sample_type, READ_FORMAT, 0) < 0)
		return error_set(e, "internal error: switch sample layout not decodable");
	return 0;
}

/* The attr of r's group leader: the sampler, or the driver's side-band
 * dummy, with the side-band of r's CPU. */
static void leader_attr(const struct backend *b, const struct cpu_ring *r,
			struct perf_event_attr *out)
{
	const struct backend_config *cfg = &b->cfg;
	struct perf_event_attr a = cfg->sampler.attr;

	if (cfg->kind == BACKEND_DRIVER) {
		/* side-band only: the driver samples */
		memset(&a, 0, sizeof(a));
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_DUMMY;
	}
	a.size = sizeof(a);
	a.disabled = 1;
	if (cfg->kind == BACKEND_DRIVER) {
		a.sample_period = 0;
	} else if (cfg->period) {
		a.freq = 0;
		a.sample_period = cfg->period;
	} else {
		a.freq = 1;
		a.sample_freq = cfg->freq;
	}
	a.sample_type = SAMPLE_TYPE;
	if (b->cgroups) {
		a.sample_type |= cfg->kind == BACKEND_PERF ? PERF_SAMPLE_CGROUP : 0;
		a.cgroup = 1;
	}
	if (cfg->kind == BACKEND_PERF && cfg->call_graph) {
		a.sample_type |= b->sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
						   PERF_SAMPLE_STACK_USER);
		a.sample_max_stack = b->max_stack;
		a.exclude_callchain_kernel = 0;
		a.exclude_callchain_user = cfg->call_graph == CALLGRAPH_DWARF;
		if (cfg->call_graph == CALLGRAPH_DWARF) {
			a.sample_regs_user = b->regs_mask;
			a.sample_stack_user = cfg->stack_bytes;
		}
	}
	a.read_format = READ_FORMAT;
	/*
	 * Pinned: the group is on its CPU's PMU all the time or not at all,
	 * never multiplexed with other groups, so that no interval lacks
	 * samples unseen.  Should other pinned events hold the counters it
	 * needs, the kernel puts it in error state: backend_enable() checks
	 * and refuses to start, and a group seen not counting later (time
	 * running short of time enabled) is recorded (STROBE_REC_UNSCHED).
	 * The driver's side-band-only dummy event is not pinned: an error
	 * state would lose its side-band silently.
	 */
	a.pinned = cfg->kind == BACKEND_PERF;
	a.mmap = 1;
	a.mmap2 = 1;
	a.comm = 1;
	a.comm_exec = 1;
	a.task = 1;
	a.build_id = 1;
	a.sample_id_all = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.watermark = 1;
	a.wakeup_watermark = r->size / 4;
	*out = a;
}

/* The counting events of r's group, after its leader (of attr a). */
static int members_open(struct backend *b, struct cpu_ring *r,
			const struct perf_event_attr *a, struct error *e)
{
	const struct backend_config *cfg = &b->cfg;

	for (int i = 0; cfg->kind == BACKEND_PERF && i < cfg->nr_events; i++) {
		struct perf_event_attr c = cfg->events[i].attr;

		c.size = sizeof(c);
		c.disabled = 0;
		c.read_format = READ_FORMAT;
		/* the trailer's fields; a member never samples, so no stacks */
		c.sample_type = a->sample_type & ~(uint64_t)(PERF_SAMPLE_CALLCHAIN |
							     PERF_SAMPLE_REGS_USER |
							     PERF_SAMPLE_STACK_USER);
		c.sample_id_all = 1;
		c.use_clockid = 1;	/* a group shares one clock */
		c.clockid = CLOCK_MONOTONIC;
		r->cfds[i] = event_open(&c, -1, r->cpu, r->fd);
		if (r->cfds[i] < 0 && errno == EINVAL && cfg->events[i].attr.type != PERF_TYPE_SOFTWARE &&
		    perf_group_too_big(cfg, r->cpu, e) < 0)
			return -1;	/* the kernel checked the group against its PMU */
		if (r->cfds[i] < 0)
			return error_set(e, "cannot count event '%s' on CPU %d with '%s': %s",
					 cfg->events[i].name, r->cpu, cfg->sampler.name,
					 perf_open_hint(errno));
		if (ioctl(r->cfds[i], PERF_EVENT_IOC_ID, &r->ids[i + 1]) < 0)
			return error_set(e, "PERF_EVENT_IOC_ID: %s", strerror(errno));
	}
	return 0;
}

int perf_ring_open(struct backend *b, struct cpu_ring *r, struct error *e)
{
	const struct backend_config *cfg = &b->cfg;
	long pg = sysconf(_SC_PAGESIZE);
	struct perf_event_attr a;
	void *m;

	leader_attr(b, r, &a);
	r->fd = event_open(&a, -1, r->cpu, -1);
	if (r->fd < 0 && errno == EINVAL) {
		a.build_id = 0;		/* kernels before 5.12: dev/inode instead */
		r->fd = event_open(&a, -1, r->cpu, -1);
		a.build_id = r->fd >= 0 ? 0 : 1;
	}
	if (r->fd < 0 && errno == EINVAL && b->cgroups && r == b->rings) {
		/* kernels before 5.7: no cgroup in samples or side-band (the
		 * first CPU decides for all: one sample layout) */
		a.sample_type &= ~(uint64_t)PERF_SAMPLE_CGROUP;
		a.cgroup = 0;
		r->fd = event_open(&a, -1, r->cpu, -1);
		if (r->fd < 0 && errno == EINVAL) {
			a.build_id = 0;
			r->fd = event_open(&a, -1, r->cpu, -1);
		}
		if (r->fd >= 0) {
			b->cgroups = 0;
			b->sample_type &= ~(uint64_t)PERF_SAMPLE_CGROUP;
			perfrec_format_init(&b->fmt, b->sample_type, READ_FORMAT, b->regs_mask);
		}
	}
	if (r->fd < 0 && cfg->kind == BACKEND_PERF && cfg->call_graph)
		return error_set(e, "cannot open sampling event '%s' with call stacks "
				 "(--call-graph %s) on CPU %d: %s", cfg->sampler.name,
				 cfg->call_graph == CALLGRAPH_DWARF ? "dwarf" : "fp", r->cpu,
				 errno == EOVERFLOW ? "more frames asked than "
				 "kernel.perf_event_max_stack allows" :
				 errno == ENOSYS ? "this kernel cannot copy user stacks" :
				 perf_open_hint(errno));
	if (r->fd < 0)
		return error_set(e, "cannot open %s '%s' on CPU %d: %s",
				 cfg->kind == BACKEND_DRIVER ? "side-band event" : "sampling event",
				 cfg->kind == BACKEND_DRIVER ? "dummy" : cfg->sampler.name,
				 r->cpu, perf_open_hint(errno));
	if (ioctl(r->fd, PERF_EVENT_IOC_ID, &r->ids[0]) < 0)
		return error_set(e, "PERF_EVENT_IOC_ID: %s", strerror(errno));
	if (members_open(b, r, &a, e) < 0)
		return -1;
	m = mmap(NULL, r->size + pg, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (m == MAP_FAILED)
		return error_set(e, "cannot map the %" PRIu64 " KiB ring of CPU %d: %s "
				 "(lower --buffer-pages or raise perf_event_mlock_kb)",
				 r->size / 1024, r->cpu, strerror(errno));
	r->page = m;
	r->data = (unsigned char *)m + pg;
	if (cfg->kind == BACKEND_PERF && cfg->exact)
		return switch_open(b, r, &a, e);
	return 0;
}

/* After probes_close(): the uprobes write into the leader's ring. */
void perf_ring_close(struct backend *b, struct cpu_ring *r)
{
	for (int i = 0; i < STROBE_MAX_COUNTERS; i++)
		if (r->cfds[i] >= 0)
			close(r->cfds[i]);
	if (r->swfd >= 0)
		close(r->swfd);
	if (r->page)
		munmap(r->page, (r->size + sysconf(_SC_PAGESIZE)));
	if (r->fd >= 0)
		close(r->fd);
	merge_queue_free(&r->q);
	free(r->tmp);
	free(r->dtmp);
}

/* Read the cyc2ns parameters under the page's seqlock. */
void perf_tsc_setup(struct backend *b)
{
	struct perf_event_mmap_page *pc = b->rings[0].page;
	uint32_t seq, mult;
	uint16_t shift;
	uint64_t tsc0, ns0, tsc1, ns1;
	int time_zero;

	do {
		seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		time_zero = pc->cap_user_time_zero;
		mult = pc->time_mult;
		shift = pc->time_shift;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) != seq || (seq & 1));

	tsc_reference(&tsc0, &ns0);
	if (!tsc0) {
		tsc_conv_init(&b->tsc, 0, 0, 0, 0, "none");
		return;
	}
	/* the kernel converts this counter with a fixed, published scale */
	if (time_zero && mult) {
		tsc_conv_init(&b->tsc, mult, shift, tsc0, ns0, "perf-mmap");
		return;
	}
	/* Fallback: measure the counter's rate against CLOCK_MONOTONIC. */
	{
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		tsc_reference(&tsc1, &ns1);
		if (tsc_conv_calibrate(&b->tsc, tsc0, ns0, tsc1, ns1) < 0)
			tsc_conv_init(&b->tsc, 0, 0, 0, 0, "none");
	}
}

/*
 * The ring per CPU when -m is not given: half a second of samples at the
 * session's rate, in pages, a power of two from 512 up to 2048 (2 to
 * 8 MiB with 4 KiB pages, within what members may pin).  The drain thread
 * empties the rings at each quarter; what a ring must absorb is the time
 * the thread is kept from running: a vCPU taken away by the hypervisor,
 * or the moment the spool starts a run on disk.  At 50 kHz with five
 * counters a 2 MiB ring lasts a quarter of a second.
 */
unsigned perf_ring_pages_default(const struct backend_config *cfg, long pg)
{
	/* a callchain of some 32 frames; dwarf's registers and stack copy */
	uint64_t per = 72 + 16 * (uint64_t)(cfg->nr_events + 1) +
		       (cfg->call_graph ? 8 * 32 : 0) +
		       (cfg->call_graph == CALLGRAPH_DWARF ? 8 * 24 + cfg->stack_bytes : 0);
	uint64_t bytes = cfg->freq * per / 2;
	unsigned pages = 512;

	while (pages < 2048 && (uint64_t)pages * pg < bytes)
		pages *= 2;
	return pages;
}

/* The frames a callchain may have: kernel.perf_event_max_stack, and what
 * a strobe record holds (STROBE_MAX_IPS, less room for the context
 * markers the kernel adds besides the frames). */
static uint16_t max_stack(void)
{
	char *s = file_read_all("/proc/sys/kernel/perf_event_max_stack", NULL);
	uint64_t v = 127;	/* the kernel's default */

	if (s && (parse_u64(strtok(s, "\n"), &v) < 0 || !v))
		v = 127;
	free(s);
	return MIN(v, STROBE_MAX_IPS - 16);
}

/* What cfg->call_graph adds to the leader's samples. */
static int call_graph_setup(struct backend *b, struct error *e)
{
	const struct backend_config *cfg = &b->cfg;

	switch (cfg->call_graph) {
	case CALLGRAPH_NONE:
		return 0;
	case CALLGRAPH_FP:
		break;
	case CALLGRAPH_DWARF:
		if (cfg->kind == BACKEND_DRIVER)
			return error_set(e, "--call-graph dwarf needs the perf backend: strobed "
					 "runs the driver backend (start it with --backend perf), "
					 "or use -g (frame pointers)");
		if (!cfg->stack_bytes || cfg->stack_bytes % 8 ||
		    cfg->stack_bytes > CALLGRAPH_STACK_MAX)
			return error_set(e, "--call-graph dwarf: bad stack size %u",
					 cfg->stack_bytes);
		b->regs_mask = callgraph_regs_mask();
		if (!b->regs_mask)
			return error_set(e, "--call-graph dwarf is not supported on this "
					 "architecture: use -g (frame pointers)");
		b->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		break;
	default:
		return error_set(e, "internal error: call graph mode %d", cfg->call_graph);
	}
	if (cfg->kind == BACKEND_PERF)
		b->sample_type |= PERF_SAMPLE_CALLCHAIN;
	b->max_stack = max_stack();
	return 0;
}

int perf_setup(struct backend *b, struct error *e)
{
	b->cgroups = 1;		/* until the kernel refuses them */
	b->sample_type = SAMPLE_TYPE | (b->cfg.kind == BACKEND_PERF ? PERF_SAMPLE_CGROUP : 0);
	if (call_graph_setup(b, e) < 0)
		return -1;
	if (perfrec_format_init(&b->fmt, b->sample_type, READ_FORMAT, b->regs_mask) < 0)
		return error_set(e, "internal error: sample layout not decodable");
	return 0;
}

int perf_enable(struct backend *b, struct error *e)
{
	for (int i = 0; i < b->nr; i++)
		if (ioctl(b->rings[i].fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) < 0)
			return error_set(e, "cannot enable the events of CPU %d: %s",
					 b->rings[i].cpu, strerror(errno));
	return 0;
}

int perf_check_scheduled(struct backend *b, struct error *e)
{
	/*
	 * Enabling a per-CPU group schedules it at once (an IPI to its CPU):
	 * a pinned group the PMU cannot take is in error state now, and a
	 * read of it returns nothing.
	 */
	for (int i = 0; b->cfg.kind == BACKEND_PERF && i < b->nr; i++) {
		uint64_t buf[3 + 2 * (STROBE_MAX_COUNTERS + 1)];

		if (read(b->rings[i].fd, buf, sizeof(buf)) != 0)
			continue;
		/* the group alone may be more than the PMU has counters, or
		 * other pinned events hold some */
		if (perf_group_too_big(&b->cfg, b->rings[i].cpu, e) < 0)
			return -1;
		return error_set(e, "the sampling group '%s'%s cannot be scheduled on "
				 "CPU %d: other pinned events hold the PMU counters it "
				 "needs (the NMI watchdog: sysctl kernel.nmi_watchdog=0; "
				 "another profiler); count fewer events with it",
				 b->cfg.sampler.name,
				 b->cfg.nr_events ? " with its counting events" : "",
				 b->rings[i].cpu);
	}
	return 0;
}

void perf_disable(struct backend *b)
{
	for (int i = 0; i < b->nr; i++)
		ioctl(b->rings[i].fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
}

static uint16_t sample_mode(uint16_t misc)
{
	switch (misc & PERF_RECORD_MISC_CPUMODE_MASK) {
	case PERF_RECORD_MISC_KERNEL:
		return STROBE_SAMPLE_KERNEL;
	case PERF_RECORD_MISC_USER:
		return STROBE_SAMPLE_USER;
	case PERF_RECORD_MISC_HYPERVISOR:
		return STROBE_SAMPLE_HV;
	default:
		return STROBE_SAMPLE_GUEST;
	}
}

/*
 * The group was enabled for de ns since its last sample (or since it was
 * enabled) and counted dr of them, until time now: queue a
 * STROBE_REC_UNSCHED when it missed more than noise.
 */
static void queue_unsched(struct cpu_ring *r, uint64_t now, uint64_t enabled,
			  uint64_t running)
{
	uint64_t de = enabled - r->seen_enabled, dr = running - r->seen_running;
	struct record u;

	if (enabled < r->seen_enabled || running < r->seen_running)
		de = dr = 0;		/* cannot go back: ignore */
	r->seen_enabled = enabled;
	r->seen_running = running;
	r->seen_ns = now;
	if (dr > de || de - dr < UNSCHED_MIN_NS)
		return;
	memset(&u, 0, sizeof(u));
	u.type = STROBE_REC_UNSCHED;
	u.cpu = (uint32_t)r->cpu;
	u.time_ns = now;
	u.unsched.enabled_ns = MIN(de, now);
	u.unsched.running_ns = MIN(dr, u.unsched.enabled_ns);
	queue_record(&r->q, &u);
}

/*
 * A sample's callchain (the first STROBE_MAX_IPS entries; the kernel keeps
 * to sample_max_stack, below it) and, with dwarf, its user registers and
 * the valid part of its stack copy (dyn_size), into rec, pointing into
 * the perf record.  The stack copy is cut to what fits a strobe record;
 * the registers never are.
 */
static void sample_stacks(const struct backend *b, const struct perfrec_sample *s,
			  struct record *rec)
{
	size_t base;

	rec->sample.flags |= STROBE_SAMPLE_CALLCHAIN;
	rec->sample.nr_ips = MIN(s->nr_ips, STROBE_MAX_IPS);
	rec->sample.ips = s->ips;
	if (!(b->sample_type & PERF_SAMPLE_REGS_USER))
		return;
	rec->sample.flags |= STROBE_SAMPLE_USTACK;
	if (!s->regs || s->regs_abi == PERF_SAMPLE_REGS_ABI_NONE)
		return;		/* no user state (a kernel thread): abi 0 */
	rec->sample.regs_abi = s->regs_abi;
	rec->sample.regs_mask = b->regs_mask;
	rec->sample.nr_regs = __builtin_popcountll(b->regs_mask);
	rec->sample.regs = s->regs;
	base = record_size(rec);
	if (!base || !s->stack || !s->stack_dyn_size)
		return;
	rec->sample.stack = s->stack;
	rec->sample.stack_size = MIN(s->stack_dyn_size, (RECORD_MAX_SIZE - base) & ~(size_t)7);
	if (!rec->sample.stack_size)
		rec->sample.stack = NULL;
}

/*
 * The leader's PERF_RECORD_SAMPLE (len bytes at p) -> struct record, the
 * counting events' values picked from the group read by their ids; or,
 * is_switch, a sample of the context-switches member (--attribution exact,
 * laid out as b->sw_fmt): the same with STROBE_SAMPLE_SWITCH.
 */
static void queue_sample(struct backend *b, struct cpu_ring *r, const unsigned char *p,
			 size_t len, int is_switch)
{
	const struct perfrec_format *fmt = is_switch ? &b->sw_fmt : &b->fmt;
	struct perfrec pr;
	struct record rec;

	/* the leader, the counting events, and with exact the switch reader */
	if (perfrec_decode(fmt, p, len, &pr) != PERFREC_OK ||
	    pr.sample.nr_values > STROBE_MAX_COUNTERS + 2)
		return;
	memset(&rec, 0, sizeof(rec));
	rec.type = STROBE_REC_SAMPLE;
	rec.sample.ip = pr.sample.ip;
	rec.sample.pid = pr.sample.pid;
	rec.sample.tid = pr.sample.tid;
	rec.time_ns = pr.sample.time;
	rec.cpu = pr.sample.cpu;
	rec.sample.flags = sample_mode(pr.misc);
	rec.sample.tsc = tsc_from_ns(&b->tsc, rec.time_ns);
	rec.sample.nr_counters = b->cfg.nr_events;
	rec.sample.cgroup = b->cgroups ? pr.sample.cgroup : 0;
	perfrec_read_values(fmt, &pr.sample, r->ids + 1, b->cfg.nr_events,
			    rec.sample.counters);
	if (r->swfd >= 0) {
		/*
		 * The context-switches member's count: each switch read is
		 * one more than the ring's previous record, a sample the
		 * same.  More: the kernel counted switches it wrote no read
		 * for (it writes nothing while some tasks run, e.g. a
		 * sandbox's own agent: seen with ftrace, which shows them
		 * switched in, never out), and the counters' increases since
		 * the previous record include what those unseen threads did.
		 */
		uint64_t sw = 0;

		if (perfrec_read_values(fmt, &pr.sample, &r->swid, 1, &sw) == 1) {
			if (sw > r->sw_count + (is_switch ? 1 : 0))
				rec.sample.flags |= STROBE_SAMPLE_SWITCH_MISSED;
			r->sw_count = sw;
		}
	}
	if (is_switch) {
		/* a switch read: no period of the sampling event, no stacks */
		rec.sample.flags |= STROBE_SAMPLE_SWITCH;
	} else {
		rec.sample.period = pr.sample.period;
		queue_unsched(r, rec.time_ns, pr.sample.time_enabled, pr.sample.time_running);
		if (b->sample_type & PERF_SAMPLE_CALLCHAIN)
			sample_stacks(b, &pr.sample, &rec);
	}
	if (!record_size(&rec))
		return;		/* cannot happen: sample_stacks() made it fit */
	queue_record(&r->q, &rec);
}

/*
 * Queue the records of r in [tail, head) of data (size bytes, a power of
 * two: the ring itself, or a chunk copied from it), each decoded once
 * (queue_sample, probe_queue, sideband_queue).
 * Returns where it stopped: head, or a malformed header, whose size
 * cannot be trusted.
 */
static uint64_t records_read(struct backend *b, struct cpu_ring *r, const unsigned char *data,
			     uint64_t size, uint64_t tail, uint64_t head)
{
	struct perf_event_header h;
	const unsigned char *p;

	while (perfrec_ring_next(data, size, tail, head, r->tmp, &h, &p) == PERFREC_OK) {
		switch (h.type) {
		case PERF_RECORD_SAMPLE: {
			uint64_t id = 0;
			int site = perfrec_sample_identifier(p, h.size, &id) == 0 ?
				   probe_site(b, r, id) : -1;

			if (site >= 0)
				probe_queue(b, r, site, p, h.size);
			else
				queue_sample(b, r, p, h.size, r->swfd >= 0 && id == r->swid);
			break;
		}
		default:
			/* not MMAP (never with mmap2 set), UNTHROTTLE, ... */
			if (perfrec_sideband(h.type))
				sideband_queue(b, r, p, h.size);
			break;
		}
		tail += h.size;
	}
	return tail;
}

uint64_t perf_chunk_read(struct backend *b, struct cpu_ring *r, const unsigned char *data,
			 uint64_t len)
{
	/* a chunk holds at most the ring's size: read as the ring itself */
	return records_read(b, r, data, r->size, 0, len);
}

void perf_ring_read(struct backend *b, struct cpu_ring *r)
{
	struct perf_event_mmap_page *pc = r->page;
	/* pairs with the kernel's smp_wmb() before it publishes data_head */
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = records_read(b, r, r->data, r->size, pc->data_tail, head);

	/* the kernel may reuse the space once it sees the new tail */
	__atomic_store_n(&pc->data_tail, tail, __ATOMIC_RELEASE);
}

/*
 * The drain thread's copy of ring r: what it holds, as one chunk of the
 * spool, or as many whole records of it as the spool has room for.
 * 0: empty, 1: all copied, 2: some (the rest stays in the ring), -1: no
 * room for even one record.  Only the headers are read, to count records and
 * samples.
 */
int perf_ring_copy(struct backend *b, struct cpu_ring *r, uint32_t src, uint64_t now)
{
	struct perf_event_mmap_page *pc = r->page;
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pc->data_tail, n = 0, samples = 0, leader = 0, mmaps = 0, off, first;
	uint64_t end, room;

	if (head == tail)
		return 0;
	if (head - tail > r->size)
		tail = head - r->size;	/* not the kernel's protocol: decoding says so */
	room = spool_room(b->spool);
	/* records are 8-aligned and 8-sized: a header is never cut by the end */
	for (end = tail; end < head;) {
		struct perf_event_header h;

		memcpy(&h, r->data + (end & (r->size - 1)), sizeof(h));
		/* a record past head (or, with head - tail clamped to the
		 * ring, past the ring) is malformed too: nothing is copied
		 * beyond what the kernel wrote, and data_tail never passes
		 * data_head */
		if (h.size < sizeof(h) || h.size % 8 || h.size > head - end) {
			end = head;	/* malformed: all of it, for decoding to say so */
			break;
		}
		if (end + h.size - tail > room)
			break;
		n++;
		samples += h.type == PERF_RECORD_SAMPLE;
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 8) {
			uint64_t id;	/* PERF_SAMPLE_IDENTIFIER: first, 8-aligned */

			memcpy(&id, r->data + ((end + sizeof(h)) & (r->size - 1)), sizeof(id));
			leader += id == r->ids[0];
		}
		mmaps += h.type == PERF_RECORD_MMAP2;
		end += h.size;
	}
	if (end == tail)
		return -1;
	off = tail & (r->size - 1);
	first = MIN(end - tail, r->size - off);
	if (spool_put(b->spool, src, now, r->data + off, first, r->data,
		      end - tail - first, n, samples) != 0)
		return -1;
	/* spooled (each record noted once), still in the ring: side-band
	 * is rare, so the second walk is too */
	for (off = tail, n = mmaps; n && off < end;) {
		struct perf_event_header h;

		memcpy(&h, r->data + (off & (r->size - 1)), sizeof(h));
		if (h.size < sizeof(h))
			break;
		if (h.type == PERF_RECORD_MMAP2) {
			sideband_note(b, r, off, &h);
			n--;
		}
		off += h.size;
	}
	if (mmaps)
		binhold_kick(b->held);	/* one wakeup for all */
	__atomic_store_n(&r->taken, r->taken + leader, __ATOMIC_RELAXED);
	__atomic_store_n(&pc->data_tail, end, __ATOMIC_RELEASE);
	return end == head ? 1 : 2;
}

/*
 * After disable: each group's final counter totals, and the time it was
 * enabled but not counting since its last sample (or all along; none at
 * all: a pinned group in error state).
 */
int perf_read_final(struct backend *b, struct error *e)
{
	const struct sink *k = &b->sink;

	for (int i = 0; i < b->nr; i++) {
		struct cpu_ring *r = &b->rings[i];
		uint64_t buf[3 + 2 * (STROBE_MAX_COUNTERS + 1)];
		uint64_t vals[STROBE_MAX_COUNTERS] = { 0 };
		uint64_t now = b->disable_ns ? b->disable_ns : clock_monotonic_ns();
		uint64_t from = r->seen_ns ? r->seen_ns : b->enable_ns;
		ssize_t n = read(r->fd, buf, sizeof(buf));
		uint64_t de, dr;

		if (n == 0 && b->cfg.kind == BACKEND_PERF) {
			/* a pinned group in error state: since its last sample */
			if (k->unscheduled(k->ctx, (uint32_t)r->cpu, now, now - MIN(from, now), 0,
					   1, e) < 0)
				return -1;
			continue;
		}
		if (n < 24)
			return error_set(e, "cannot read the counters of CPU %d: %s", r->cpu,
					 n < 0 ? strerror(errno) : "short read");
		for (uint64_t j = 0; j < buf[0] && (ssize_t)(24 + j * 16 + 16) <= n; j++)
			for (int c = 0; c < b->cfg.nr_events; c++)
				if (r->ids[c + 1] == buf[4 + 2 * j])
					vals[c] = buf[3 + 2 * j];
		k->cpu_final(k->ctx, r->cpu, vals, b->cfg.nr_events);
		/* not counting after the CPU's last sample (or all along) */
		de = buf[1] - MIN(r->seen_enabled, buf[1]);
		dr = buf[2] - MIN(r->seen_running, buf[2]);
		if (dr <= de && de - dr >= UNSCHED_MIN_NS &&
		    k->unscheduled(k->ctx, (uint32_t)r->cpu, MIN(from + de, now),
				   MIN(de, from + de), dr, 0, e) < 0)
			return -1;
	}
	return 0;
}
