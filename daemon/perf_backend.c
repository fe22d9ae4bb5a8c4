/*
 * perf_backend.c - capture with perf_event_open(2), on unmodified kernels.
 *
 * Per online CPU one group: the sampling event leads, the counting events
 * follow, and every sample reads the whole group (PERF_SAMPLE_READ with
 * PERF_FORMAT_GROUP), so each sample carries all counter values read at
 * the same instant.  The leader also carries the side-band (mmap2 with
 * build-id, comm, fork/exit, and from Linux 5.7 the cgroups created) of
 * its CPU.  Where the kernel has it (5.7), every sample also carries its
 * task's cgroup id (PERF_SAMPLE_CGROUP): kept beside the strobe record in
 * the merge queue (8 bytes after it), since the record format has no
 * place for it; older kernels refuse the bits and the session goes on
 * without them (backend_has_cgroups() is 0: ingest then reads
 * /proc/PID/cgroup).  Sample times are CLOCK_MONOTONIC
 * (use_clockid); the TSC of a sample is derived from its time through the
 * kernel's cyc2ns scale published in the mmap page (see tsc.h).
 *
 * With the driver (BACKEND_DRIVER), the samples come from /dev/strobe
 * (strobe_dev.h) instead, already in strobe's record format with an exact
 * TSC; the per-CPU perf events are then dummy events that only carry the
 * side-band, on the same CLOCK_MONOTONIC clock as the driver's time_ns.
 *
 * Call stacks (cfg->call_graph, callgraph.h): fp adds PERF_SAMPLE_CALLCHAIN
 * to the leader's samples, kernel and user, at most
 * kernel.perf_event_max_stack frames (sample_max_stack); dwarf adds the
 * user registers unwind_regs_mask() names and cfg->stack_bytes of user
 * stack (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER) and keeps only the
 * kernel part of the callchain (exclude_callchain_user, as perf does): the
 * user part is unwound at ingest.  queue_sample() carries them in the
 * strobe record (STROBE_SAMPLE_CALLCHAIN, STROBE_SAMPLE_USTACK), the stack
 * copy cut to fit a record.  The driver records fp callchains itself
 * (STROBE_CONFIG_CALLCHAIN); dwarf needs this backend.
 *
 * Draining, in two steps that never wait for each other.  A thread of its
 * own (backend_start) only empties the rings: what each ring holds is
 * copied as one chunk of raw bytes into the spool (spool.h), and after each
 * pass over all rings a pass mark with the time the pass began.  It never
 * decodes, resolves or writes the database, so it keeps up whatever ingest
 * does; when the spool is full it leaves the records in their ring, where
 * the kernel (or the driver) counts what no longer fits as lost.
 * backend_drain, in strobed's main thread, takes the chunks: each is
 * decoded into its ring's queue (perf samples are converted to strobe
 * records on the way), then the queues are merged by time up to a horizon,
 * because a child's FORK can sit in another CPU's ring than its COMM,
 * MMAP2 and samples.  The horizon is the last pass mark taken, less the
 * time a record may take to reach its ring.
 *
 * USDT markers (cfg->sites): per CPU and probe site one uprobe perf event
 * (the "uprobe" PMU: config1 = a path, config2 = file offset, config's high
 * half = the semaphore's offset), on the same clock, writing into that
 * CPU's leader ring (PERF_EVENT_IOC_SET_OUTPUT).  Its samples carry the
 * user registers (and a copy of the top of the user stack) the probe's
 * arguments need; they are told from the leader's samples by their
 * PERF_SAMPLE_IDENTIFIER, their arguments are read on the way into the
 * queue, and they reach ingest as markers in the same time merge.  Their
 * sample_id_all trailer has the leader's layout (pid/tid, time, cpu, id),
 * so a LOST record written for either is read the same way.
 *
 * The uprobe PMU looks its path up again for each event (kern_path in
 * create_local_trace_uprobe, following symlinks, each CPU in turn).  So the
 * path given is never the site's file name but /proc/self/fd/N of the file
 * the notes were read from (cfg->site_fds, opened with the requester's
 * rights): that magic link leads to the open file itself, whatever has
 * become of its name.  It is checked to lead there before the events are
 * opened and again after; once placed, each uprobe holds its file, so the
 * fds may be closed after backend_open.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include "backend.h"
#include "binhold.h"
#include "callgraph.h"
#include "log.h"
#include "merge.h"
#include "perfrec.h"
#include "record.h"
#include "spool.h"
#include "strobe_dev.h"
#include "unwind.h"

/* Group read of the leader: nr, time enabled, time running, {value, id}... */
#define READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED | \
		     PERF_FORMAT_TOTAL_TIME_RUNNING)
/* Enabled but not running for less than this between two samples is noise. */
#define UNSCHED_MIN_NS		10000
/* A record written this long before the drain started is in its ring. */
#define MERGE_HORIZON_NS	(5 * 1000 * 1000ULL)
/* backend_drain's share of strobed's main thread per call, when behind */
#define DRAIN_BUDGET_NS		(50 * 1000 * 1000ULL)

/* sample_type and its sample_id_all trailer: pid,tid; time; cpu,res; identifier */
#define SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ)

/* a uprobe's samples: the same trailer, then the registers and stack */
#define PROBE_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			   PERF_SAMPLE_CPU)
#define PROBE_STACK_BYTES 512
#define UPROBE_PMU "/sys/bus/event_source/devices/uprobe"

enum qkind { Q_STROBE = 1, Q_PERF = 2, Q_MARK = 3 };

/* Q_MARK payload: one probe hit, its arguments already read */
struct probe_hit {
	uint32_t site, cpu, pid, tid;
	uint32_t known;		/* bit i: vals[i] could be read */
	uint32_t pad;
	int64_t vals[USDT_MAX_ARGS];
};

struct cpu_ring {
	int cpu;
	int fd;			/* group leader */
	int cfds[STROBE_MAX_COUNTERS];
	uint64_t ids[STROBE_MAX_COUNTERS + 1];	/* leader, then counting events */
	struct perf_event_mmap_page *page;
	unsigned char *data;
	uint64_t size;		/* data bytes, power of two */
	struct merge_queue q;	/* its records waiting for the merge */
	unsigned char *tmp;	/* PERFREC_MAX_SIZE: a record that wraps the ring end */
	unsigned char *dtmp;	/* the same, for the drain thread */
	int swfd;		/* --attribution exact: its context-switches member, or -1 */
	uint64_t swid;		/* and that member's id */
	uint64_t sw_count;	/* its count in the ring's last sample or switch read */
	int *pfds;		/* per probe site: its uprobe event, or -1 */
	uint64_t *pids;		/* and that event's id */
	/* the group's time enabled and running at its last sample, and when
	 * that was (backend_drain's side) */
	uint64_t seen_enabled, seen_running, seen_ns;
	/* the samples (the sampling event's: not switch reads nor probe hits)
	 * the drain thread has put into the spool: written by it alone,
	 * read by backend_cpu_samples (atomic) */
	uint64_t taken;
};

/*
 * The users of processes whose mappings ingest reads a file for
 * (ingest_mmap_wants_owner(): a JIT's perf map or jitdump), looked up by
 * the drain thread when it copies the MMAP2 record out of the ring, while
 * the process surely runs; ingest, seconds behind under load, would find it
 * gone or its pid reused.  A ring of the latest OWNERS_MAX, under a mutex
 * (the drain thread puts, backend_drain's side takes); one that is
 * overwritten before its record is delivered leaves ingest to look itself.
 */
#define OWNERS_MAX	1024

struct owner_seen {
	uint64_t time;		/* the record's */
	uint32_t pid, uid;
};

struct owners {
	pthread_mutex_t lock;
	struct owner_seen seen[OWNERS_MAX];
	uint64_t next;		/* entries put so far */
};

/* The open file of a probe site, as the uprobe PMU is given it. */
struct site_file {
	int fd;			/* cfg->site_fds[i]: open during backend_open only */
	char path[40];		/* "/proc/self/fd/N" */
	dev_t dev;
	ino_t ino;
};

struct backend {
	struct backend_config cfg;
	struct cpu_ring *rings;
	int nr;
	int *fds;
	int nr_fds;
	struct tsc_conv tsc;
	struct perfrec_format fmt;	/* the leader's records (all but uprobe samples) */
	struct merge_queue **queues;	/* every ring's queue, for the merge */
	int *queue_cpu;			/* and its CPU */
	int nr_queues;
	struct merge merge;
	/* USDT probe sites (own copy) and what their uprobes sample */
	struct usdt_site *sites;
	uint64_t *site_regs;	/* PERF_SAMPLE_REGS_USER mask per site */
	int *site_stack;	/* PERF_SAMPLE_STACK_USER per site */
	struct perfrec_format *site_fmt;	/* and the layout of its samples */
	struct site_file *site_files;	/* and the file its uprobes go on */
	uint32_t uprobe_type;	/* the uprobe PMU's perf_event_attr.type */
	/* BACKEND_DRIVER only: the device, one queue and LOST total per CPU */
	struct strobe_dev *dev;
	struct merge_queue *dq;
	uint64_t *dev_lost;
	struct strobe_cpu_stats *dev_stats;
	/* the drain thread (backend_start): it alone touches the rings'
	 * tails while it runs; quit is its only input, wake_fd its alarm */
	struct spool *spool;		/* not owned */
	pthread_t thread;
	int running;
	int quit;			/* atomic: make a last pass and return */
	int wake_fd;			/* eventfd: quit was set */
	int notify_fd;			/* eventfd: chunks were put (the caller's) */
	/* backend_drain's side */
	uint64_t pass_ns;		/* start of the last pass whose mark was taken */
	uint64_t enable_ns;		/* when backend_enable enabled the groups */
	uint64_t disable_ns;		/* and backend_disable disabled them */
	uint64_t bad_chunks;		/* chunks cut short by a malformed record */
	int cgroups;			/* samples carry PERF_SAMPLE_CGROUP, and
					 * PERF_RECORD_CGROUP is asked for */
	/* the leader's sample_type (less CGROUP once the kernel refused it),
	 * and with dwarf its user register mask */
	uint64_t sample_type;
	uint64_t regs_mask;
	uint16_t max_stack;		/* fp, dwarf: sample_max_stack */
	struct perfrec_format sw_fmt;	/* --attribution exact: its members' samples */
	struct owners owners;
	struct binhold *held;	/* the files of executable mappings drained */
};

static int perf_open(struct perf_event_attr *a, int cpu, int group)
{
	return syscall(SYS_perf_event_open, a, -1, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static int online_cpus(int **out, struct error *e)
{
	char *s = file_read_all("/sys/devices/system/cpu/online", NULL), *p;
	int *cpus = NULL, n = 0;
	size_t cap = 0;

	if (!s)
		return error_set(e, "cannot read /sys/devices/system/cpu/online: %s",
				 strerror(errno));
	for (p = s; *p && *p != '\n';) {
		long a = strtol(p, &p, 10), b = a;

		if (*p == '-')
			b = strtol(p + 1, &p, 10);
		for (long c = a; c <= b; c++) {
			ARRAY_GROW(cpus, cap, (size_t)n + 1);
			cpus[n++] = c;
		}
		if (*p == ',')
			p++;
	}
	free(s);
	*out = cpus;
	return n;
}

static const char *open_hint(int err)
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

static void thread_stop(struct backend *b);

/* Add 1 to the eventfd fd: a full counter is set already. */
static void efd_signal(int fd)
{
	uint64_t one = 1;
	ssize_t n = write(fd, &one, sizeof(one));

	(void)n;
}

static void ring_close(struct backend *b, struct cpu_ring *r)
{
	/* the uprobes write into the leader's ring: they go first */
	for (int i = 0; r->pfds && i < b->cfg.nr_sites; i++)
		if (r->pfds[i] >= 0)
			close(r->pfds[i]);
	free(r->pfds);
	free(r->pids);
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
	r->swfd = perf_open(&a, r->cpu, r->fd);
	if (r->swfd < 0)
		return error_set(e, "--attribution exact: cannot add a context-switches "
				 "reader to the group of '%s' on CPU %d: %s",
				 b->cfg.sampler.name, r->cpu, open_hint(errno));
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

static int ring_open(struct backend *b, struct cpu_ring *r, struct error *e)
{
	const struct backend_config *cfg = &b->cfg;
	struct perf_event_attr a = cfg->sampler.attr;
	long pg = sysconf(_SC_PAGESIZE);
	void *m;

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
	r->fd = perf_open(&a, r->cpu, -1);
	if (r->fd < 0 && errno == EINVAL) {
		a.build_id = 0;		/* kernels before 5.12: dev/inode instead */
		r->fd = perf_open(&a, r->cpu, -1);
		a.build_id = r->fd >= 0 ? 0 : 1;
	}
	if (r->fd < 0 && errno == EINVAL && b->cgroups && r == b->rings) {
		/* kernels before 5.7: no cgroup in samples or side-band (the
		 * first CPU decides for all: one sample layout) */
		a.sample_type &= ~(uint64_t)PERF_SAMPLE_CGROUP;
		a.cgroup = 0;
		r->fd = perf_open(&a, r->cpu, -1);
		if (r->fd < 0 && errno == EINVAL) {
			a.build_id = 0;
			r->fd = perf_open(&a, r->cpu, -1);
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
				 open_hint(errno));
	if (r->fd < 0)
		return error_set(e, "cannot open %s '%s' on CPU %d: %s",
				 cfg->kind == BACKEND_DRIVER ? "side-band event" : "sampling event",
				 cfg->kind == BACKEND_DRIVER ? "dummy" : cfg->sampler.name,
				 r->cpu, open_hint(errno));
	if (ioctl(r->fd, PERF_EVENT_IOC_ID, &r->ids[0]) < 0)
		return error_set(e, "PERF_EVENT_IOC_ID: %s", strerror(errno));
	for (int i = 0; cfg->kind == BACKEND_PERF && i < cfg->nr_events; i++) {
		struct perf_event_attr c = cfg->events[i].attr;

		c.size = sizeof(c);
		c.disabled = 0;
		c.read_format = READ_FORMAT;
		/* the trailer's fields; a member never samples, so no stacks */
		c.sample_type = a.sample_type & ~(uint64_t)(PERF_SAMPLE_CALLCHAIN |
							    PERF_SAMPLE_REGS_USER |
							    PERF_SAMPLE_STACK_USER);
		c.sample_id_all = 1;
		c.use_clockid = 1;	/* a group shares one clock */
		c.clockid = CLOCK_MONOTONIC;
		r->cfds[i] = perf_open(&c, r->cpu, r->fd);
		if (r->cfds[i] < 0)
			return error_set(e, "cannot count event '%s' on CPU %d with '%s': %s",
					 cfg->events[i].name, r->cpu, cfg->sampler.name,
					 open_hint(errno));
		if (ioctl(r->cfds[i], PERF_EVENT_IOC_ID, &r->ids[i + 1]) < 0)
			return error_set(e, "PERF_EVENT_IOC_ID: %s", strerror(errno));
	}
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

/* Read the cyc2ns parameters under the page's seqlock. */
static void tsc_setup(struct backend *b)
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

/* Open the driver's session on the CPUs of b->rings. */
static int dev_open(struct backend *b, struct error *e)
{
	const struct backend_config *cfg = &b->cfg;
	struct perf_event_attr s = cfg->sampler.attr, c[STROBE_MAX_COUNTERS];
	const char *names[STROBE_MAX_COUNTERS];
	uint32_t flags = 0;
	int *cpus;

	/* the driver walks frame pointers in its handler; nothing copies
	 * stacks: call_graph_setup() refused dwarf already */
	if (cfg->call_graph == CALLGRAPH_FP)
		flags |= STROBE_CONFIG_CALLCHAIN;
	cpus = xcalloc(b->nr, sizeof(*cpus));
	s.size = sizeof(s);
	if (cfg->period) {
		s.freq = 0;
		s.sample_period = cfg->period;
	} else {
		s.freq = 1;
		s.sample_freq = cfg->freq;
	}
	for (int i = 0; i < cfg->nr_events; i++) {
		c[i] = cfg->events[i].attr;
		c[i].size = sizeof(c[i]);
		c[i].disabled = 0;
		names[i] = cfg->events[i].name;
	}
	for (int i = 0; i < b->nr; i++)
		cpus[i] = b->rings[i].cpu;
	b->dev = strobe_dev_open(cfg->device ? cfg->device : STROBE_DEV_PATH, &s,
				 cfg->sampler.name, c, names, cfg->nr_events, cpus, b->nr,
				 cfg->buffer_pages, flags, e);
	free(cpus);
	if (!b->dev)
		return -1;
	b->dq = xcalloc(b->nr, sizeof(*b->dq));
	b->dev_lost = xcalloc(b->nr, sizeof(*b->dev_lost));
	b->dev_stats = xcalloc(b->nr, sizeof(*b->dev_stats));
	b->fds[b->nr_fds++] = strobe_dev_fd(b->dev);
	return 0;
}

/*
 * Does f->path (what the uprobe PMU will look up) lead to the file open as
 * f->fd, the one the site's notes were read from, and is that file still
 * f->dev:f->ino (set when set)?
 */
static int site_file_check(struct site_file *f, const struct usdt_site *s, int set,
			   struct error *e)
{
	struct stat fst, pst;

	if (fstat(f->fd, &fst) < 0 || !S_ISREG(fst.st_mode))
		return error_set(e, "marker %s:%s:%s: its open file is gone or not a regular "
				 "file: try again", s->path, s->provider, s->name);
	if (stat(f->path, &pst) < 0 || pst.st_dev != fst.st_dev || pst.st_ino != fst.st_ino)
		return error_set(e, "marker %s:%s:%s: %s does not lead to the file its notes "
				 "were read from (is /proc mounted?)", s->path, s->provider,
				 s->name, f->path);
	if (set) {
		f->dev = fst.st_dev;
		f->ino = fst.st_ino;
	} else if (fst.st_dev != f->dev || fst.st_ino != f->ino) {
		return error_set(e, "marker %s:%s:%s: its file changed while its uprobes were "
				 "placed: try again", s->path, s->provider, s->name);
	}
	return 0;
}

/* The uprobe PMU, and what each site's uprobes must sample. */
static int probes_setup(struct backend *b, struct error *e)
{
	char *type = file_read_all(UPROBE_PMU "/type", NULL);
	int n = b->cfg.nr_sites;
	uint64_t v;

	if (!type || parse_u64(strtok(type, "\n"), &v) < 0 || v > UINT32_MAX) {
		free(type);
		return error_set(e, "USDT markers need uprobe perf events, which this kernel "
				 "lacks (%s: CONFIG_UPROBE_EVENTS): start without --marker",
				 UPROBE_PMU);
	}
	free(type);
	b->uprobe_type = v;
	b->sites = xcalloc(n, sizeof(*b->sites));
	memcpy(b->sites, b->cfg.sites, n * sizeof(*b->sites));
	b->cfg.sites = b->sites;
	b->site_regs = xcalloc(n, sizeof(*b->site_regs));
	b->site_stack = xcalloc(n, sizeof(*b->site_stack));
	b->site_fmt = xcalloc(n, sizeof(*b->site_fmt));
	b->site_files = xcalloc(n, sizeof(*b->site_files));
	if (!b->cfg.site_fds)
		return error_set(e, "internal error: marker sites without their open files");
	for (int i = 0; i < n; i++) {
		const struct usdt_site *s = &b->sites[i];
		struct site_file *f = &b->site_files[i];

		f->fd = b->cfg.site_fds[i];
		snprintf(f->path, sizeof(f->path), "/proc/self/fd/%d", f->fd);
		if (site_file_check(f, s, 1, e) < 0)
			return -1;
		b->site_regs[i] = usdt_regs_mask(s, &b->site_stack[i]);
		if (perfrec_format_init(&b->site_fmt[i], PROBE_SAMPLE_TYPE |
					(b->site_regs[i] ? PERF_SAMPLE_REGS_USER : 0) |
					(b->site_stack[i] ? PERF_SAMPLE_STACK_USER : 0),
					0, b->site_regs[i]) < 0)
			return error_set(e, "internal error: uprobe sample layout not decodable");
#ifndef __x86_64__
		if (b->site_regs[i])
			return error_set(e, "marker %s:%s:%s: probe arguments are read on x86_64 "
					 "only", s->path, s->provider, s->name);
#endif
		if (s->semaphore && access(UPROBE_PMU "/format/ref_ctr_offset", F_OK) < 0)
			return error_set(e, "marker %s:%s:%s: the probe has a semaphore, which needs "
					 "uprobe reference counters (Linux 4.20 or later)", s->path,
					 s->provider, s->name);
	}
	return 0;
}

/* Per site, a uprobe on r's CPU writing into r's ring. */
static int probes_open(struct backend *b, struct cpu_ring *r, struct error *e)
{
	if (!b->cfg.nr_sites)
		return 0;
	r->pfds = xcalloc(b->cfg.nr_sites, sizeof(*r->pfds));
	r->pids = xcalloc(b->cfg.nr_sites, sizeof(*r->pids));
	for (int i = 0; i < b->cfg.nr_sites; i++)
		r->pfds[i] = -1;
	for (int i = 0; i < b->cfg.nr_sites; i++) {
		const struct usdt_site *site = &b->sites[i];
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = b->uprobe_type;
		a.config = site->semaphore ? site->semaphore_offset << 32 : 0;
		a.config1 = (uint64_t)(uintptr_t)b->site_files[i].path;
		a.config2 = site->offset;
		a.sample_period = 1;
		a.sample_type = PROBE_SAMPLE_TYPE;
		if (b->site_regs[i]) {
			a.sample_type |= PERF_SAMPLE_REGS_USER;
			a.sample_regs_user = b->site_regs[i];
		}
		if (b->site_stack[i]) {
			a.sample_type |= PERF_SAMPLE_STACK_USER;
			a.sample_stack_user = PROBE_STACK_BYTES;
		}
		a.sample_id_all = 1;
		a.use_clockid = 1;	/* SET_OUTPUT needs the leader's clock */
		a.clockid = CLOCK_MONOTONIC;
		a.disabled = 1;
		r->pfds[i] = perf_open(&a, r->cpu, -1);
		if (r->pfds[i] < 0)
			return error_set(e, "cannot place the uprobe of marker %s:%s:%s (offset 0x%"
					 PRIx64 ") on CPU %d: %s", site->path, site->provider,
					 site->name, site->offset, r->cpu,
					 errno == EACCES || errno == EPERM ? open_hint(errno) :
					 strerror(errno));
		if (ioctl(r->pfds[i], PERF_EVENT_IOC_SET_OUTPUT, r->fd) < 0)
			return error_set(e, "cannot send the uprobe of marker %s:%s:%s into the "
					 "ring of CPU %d: %s", site->path, site->provider,
					 site->name, r->cpu, strerror(errno));
		if (ioctl(r->pfds[i], PERF_EVENT_IOC_ID, &r->pids[i]) < 0)
			return error_set(e, "PERF_EVENT_IOC_ID: %s", strerror(errno));
	}
	return 0;
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
static unsigned ring_pages_default(const struct backend_config *cfg, long pg)
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
		b->regs_mask = unwind_regs_mask();
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

struct backend *backend_open(const struct backend_config *cfg, struct error *e)
{
	struct backend *b = xcalloc(1, sizeof(*b));

	pthread_mutex_init(&b->owners.lock, NULL);
	b->held = binhold_new(BINHOLD_FILES, BINHOLD_NOTES);
	long pg = sysconf(_SC_PAGESIZE);
	int *cpus = NULL;
	int n;

	b->cfg = *cfg;
	b->cgroups = 1;		/* until the kernel refuses them */
	b->sample_type = SAMPLE_TYPE | (cfg->kind == BACKEND_PERF ? PERF_SAMPLE_CGROUP : 0);
	if (call_graph_setup(b, e) < 0)
		goto fail;
	if (perfrec_format_init(&b->fmt, b->sample_type, READ_FORMAT, b->regs_mask) < 0) {
		error_set(e, "internal error: sample layout not decodable");
		goto fail;
	}
	if (cfg->nr_sites > 0 && probes_setup(b, e) < 0)
		goto fail;
	if (!b->cfg.buffer_pages)
		b->cfg.buffer_pages = ring_pages_default(&b->cfg, pg);
	if (b->cfg.buffer_pages & (b->cfg.buffer_pages - 1))
		goto bad_pages;
	n = online_cpus(&cpus, e);
	if (n <= 0)
		goto fail;
	b->rings = xcalloc(n, sizeof(*b->rings));
	b->fds = xcalloc(n + 1, sizeof(*b->fds));
	for (int i = 0; i < n; i++) {
		struct cpu_ring *r = &b->rings[i];

		r->cpu = cpus[i];
		r->fd = -1;
		r->swfd = -1;
		for (int j = 0; j < STROBE_MAX_COUNTERS; j++)
			r->cfds[j] = -1;
		r->size = (uint64_t)b->cfg.buffer_pages * pg;
		r->tmp = xmalloc(PERFREC_MAX_SIZE);
		r->dtmp = xmalloc(PERFREC_MAX_SIZE);
		b->nr++;
		if (ring_open(b, r, e) < 0 || probes_open(b, r, e) < 0)
			goto fail;
		b->fds[b->nr_fds++] = r->fd;
	}
	free(cpus);
	cpus = NULL;
	/* every uprobe placed: on the files the notes came from, still */
	for (int i = 0; i < b->cfg.nr_sites; i++)
		if (site_file_check(&b->site_files[i], &b->sites[i], 0, e) < 0)
			goto fail;
	b->cfg.site_fds = NULL;		/* the caller's, closed after we return */
	if (b->cfg.kind == BACKEND_DRIVER && dev_open(b, e) < 0)
		goto fail;
	b->queues = xcalloc(2 * n, sizeof(*b->queues));
	b->queue_cpu = xcalloc(2 * n, sizeof(*b->queue_cpu));
	for (int i = 0; i < n; i++) {
		b->queue_cpu[b->nr_queues] = b->rings[i].cpu;
		b->queues[b->nr_queues++] = &b->rings[i].q;
		if (b->dq) {
			b->queue_cpu[b->nr_queues] = b->rings[i].cpu;
			b->queues[b->nr_queues++] = &b->dq[i];
		}
	}
	merge_init(&b->merge, b->queues, b->nr_queues);
	tsc_setup(b);
	return b;
bad_pages:
	error_set(e, "buffer size %u pages is not a power of two", b->cfg.buffer_pages);
fail:
	free(cpus);
	backend_close(b);
	return NULL;
}

int backend_enable(struct backend *b, struct error *e)
{
	/* side-band first: a sample's mapping is announced before it */
	for (int i = 0; i < b->nr; i++)
		if (ioctl(b->rings[i].fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) < 0)
			return error_set(e, "cannot enable the events of CPU %d: %s",
					 b->rings[i].cpu, strerror(errno));
	for (int i = 0; i < b->nr; i++)
		for (int j = 0; j < b->cfg.nr_sites; j++)
			if (ioctl(b->rings[i].pfds[j], PERF_EVENT_IOC_ENABLE, 0) < 0)
				return error_set(e, "cannot enable the uprobe of marker %s:%s:%s "
						 "on CPU %d: %s", b->sites[j].path,
						 b->sites[j].provider, b->sites[j].name,
						 b->rings[i].cpu, strerror(errno));
	if (b->dev && strobe_dev_start(b->dev, e) < 0)
		return -1;
	b->enable_ns = clock_monotonic_ns();
	/*
	 * Enabling a per-CPU group schedules it at once (an IPI to its CPU):
	 * a pinned group the PMU cannot take is in error state now, and a
	 * read of it returns nothing.
	 */
	for (int i = 0; b->cfg.kind == BACKEND_PERF && i < b->nr; i++) {
		uint64_t buf[3 + 2 * (STROBE_MAX_COUNTERS + 1)];

		if (read(b->rings[i].fd, buf, sizeof(buf)) == 0)
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

int backend_disable(struct backend *b)
{
	if (b->dev)
		strobe_dev_stop(b->dev);
	for (int i = 0; i < b->nr; i++)
		for (int j = 0; b->rings[i].pfds && j < b->cfg.nr_sites; j++)
			if (b->rings[i].pfds[j] >= 0)
				ioctl(b->rings[i].pfds[j], PERF_EVENT_IOC_DISABLE, 0);
	for (int i = 0; i < b->nr; i++)
		ioctl(b->rings[i].fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	if (!b->disable_ns)
		b->disable_ns = clock_monotonic_ns();
	thread_stop(b);
	return 0;
}

size_t backend_fds(struct backend *b, const int **fds)
{
	*fds = b->fds;
	return b->nr_fds;
}

int backend_has_cgroups(const struct backend *b)
{
	return b->cgroups && b->cfg.kind == BACKEND_PERF;
}

const char *backend_name(const struct backend *b)
{
	return b->cfg.kind == BACKEND_DRIVER ? "driver" : "perf";
}

int backend_handler_stats(const struct backend *b, uint64_t *samples, uint64_t *dropped,
			  uint64_t *avg_ns, uint64_t *max_ns)
{
	uint64_t n = 0, lost = 0, total = 0, max = 0;
	if (!b->dev)
		return -1;
	for (int i = 0; i < b->nr; i++) {
		n += b->dev_stats[i].samples + b->dev_stats[i].lost;
		lost += b->dev_stats[i].lost;
		total += b->dev_stats[i].handler_ns_total;
		max = MAX(max, b->dev_stats[i].handler_ns_max);
	}
	*samples = n;
	*dropped = lost;
	*avg_ns = n ? total / n : 0;
	*max_ns = max;
	return 0;
}

int backend_nr_cpus(const struct backend *b)
{
	return b->nr;
}

int backend_cpu(const struct backend *b, int i)
{
	return b->rings[i].cpu;
}

uint64_t backend_cpu_samples(const struct backend *b, int i)
{
	return __atomic_load_n(&b->rings[i].taken, __ATOMIC_RELAXED);
}

const struct tsc_conv *backend_tsc(const struct backend *b)
{
	return &b->tsc;
}

void backend_close(struct backend *b)
{
	if (!b)
		return;
	thread_stop(b);
	for (int i = 0; i < b->nr; i++)
		ring_close(b, &b->rings[i]);
	strobe_dev_close(b->dev);
	for (int i = 0; b->dq && i < b->nr; i++)
		merge_queue_free(&b->dq[i]);
	free(b->dq);
	free(b->queues);
	free(b->queue_cpu);
	free(b->dev_lost);
	free(b->dev_stats);
	free(b->rings);
	free(b->fds);
	free(b->sites);
	free(b->site_regs);
	free(b->site_stack);
	free(b->site_fmt);
	free(b->site_files);
	pthread_mutex_destroy(&b->owners.lock);
	binhold_free(b->held);
	free(b);
}

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
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
	void *dst;

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
	dst = merge_queue_push(&r->q, now, Q_STROBE, sizeof(struct strobe_unsched));
	record_encode(&u, dst, sizeof(struct strobe_unsched));
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
 * The leader's PERF_RECORD_SAMPLE (len bytes at p) -> struct strobe_sample,
 * the counting events' values picked from the group read by their ids; or,
 * is_switch, a sample of the context-switches member (--attribution exact,
 * laid out as b->sw_fmt): the same with STROBE_SAMPLE_SWITCH.
 */
static void queue_sample(struct backend *b, struct cpu_ring *r, const unsigned char *p,
			 size_t len, int is_switch)
{
	const struct perfrec_format *fmt = is_switch ? &b->sw_fmt : &b->fmt;
	struct perfrec pr;
	struct record rec;
	size_t size;
	void *dst;

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
	size = record_size(&rec);
	if (!size)
		return;		/* cannot happen: sample_stacks() made it fit */
	/* the cgroup id after the record: deliver() reads it back */
	dst = merge_queue_push(&r->q, rec.time_ns, Q_STROBE, size + (b->cgroups ? 8 : 0));
	record_encode(&rec, dst, size);
	if (b->cgroups)
		memcpy((unsigned char *)dst + size, &pr.sample.cgroup, 8);
}

/* The probe site whose uprobe on r has this sample id, or -1. */
static int probe_site(const struct backend *b, const struct cpu_ring *r, uint64_t id)
{
	for (int i = 0; i < b->cfg.nr_sites; i++)
		if (r->pids[i] == id)
			return i;
	return -1;
}

/*
 * A uprobe's PERF_RECORD_SAMPLE (laid out as b->site_fmt[site]) -> a
 * probe_hit with the arguments read from its registers and stack copy.
 */
static void queue_probe(struct backend *b, struct cpu_ring *r, int site,
			const unsigned char *p, size_t len)
{
	const struct usdt_site *s = &b->sites[site];
	uint64_t regs[USDT_NR_REGS] = { 0 }, mask = b->site_regs[site];
	const unsigned char *stack = NULL;
	size_t stack_len = 0;
	struct probe_hit *hit;
	struct perfrec pr;
	int have_regs;

	if (perfrec_decode(&b->site_fmt[site], p, len, &pr) != PERFREC_OK)
		return;
	hit = merge_queue_push(&r->q, pr.sample.time, Q_MARK, sizeof(*hit));
	memset(hit, 0, sizeof(*hit));
	hit->site = site;
	hit->pid = pr.sample.pid;
	hit->tid = pr.sample.tid;
	hit->cpu = pr.sample.cpu;
	have_regs = pr.sample.regs != NULL;
	if (have_regs) {
		const unsigned char *q = pr.sample.regs;

		/* in ascending bit order, as many as the mask has bits */
		for (int i = 0; i < USDT_NR_REGS; i++)
			if (mask & (1ULL << i)) {
				regs[i] = rd64(q);
				q += 8;
			}
	}
	if (b->site_stack[site] && have_regs && pr.sample.stack) {
		stack = pr.sample.stack;
		stack_len = pr.sample.stack_dyn_size;	/* what was copied */
	}
	for (int i = 0; i < s->nargs; i++) {
		const struct usdt_arg *a = &s->args[i];

		if ((a->kind == USDT_ARG_CONST || have_regs) &&
		    usdt_arg_value(a, regs, stack, stack_len, &hit->vals[i]) == 0)
			hit->known |= 1u << i;
	}
}

/*
 * Queue the records of r in [tail, head) of data (size bytes, a power of
 * two: the ring itself, or a chunk copied from it), converting samples.
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
				queue_probe(b, r, site, p, h.size);
			else
				queue_sample(b, r, p, h.size, r->swfd >= 0 && id == r->swid);
			break;
		}
		case PERF_RECORD_MMAP2:
		case PERF_RECORD_COMM:
		case PERF_RECORD_FORK:
		case PERF_RECORD_EXIT:
		case PERF_RECORD_LOST:
		case PERF_RECORD_LOST_SAMPLES:
		case PERF_RECORD_THROTTLE:
		case PERF_RECORD_CGROUP: {
			struct perfrec pr;

			/* checked now, decoded again when delivered (side-band is rare) */
			if (perfrec_decode(&b->fmt, p, h.size, &pr) == PERFREC_OK)
				memcpy(merge_queue_push(&r->q, pr.time, Q_PERF, h.size), p, h.size);
			break;
		}
		default:
			break;	/* MMAP (never with mmap2 set), UNTHROTTLE, ... */
		}
		tail += h.size;
	}
	return tail;
}

/* Queue what the ring holds now, read in place (no drain thread runs). */
static void ring_read(struct backend *b, struct cpu_ring *r)
{
	struct perf_event_mmap_page *pc = r->page;
	/* pairs with the kernel's smp_wmb() before it publishes data_head */
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = records_read(b, r, r->data, r->size, pc->data_tail, head);

	/* the kernel may reuse the space once it sees the new tail */
	__atomic_store_n(&pc->data_tail, tail, __ATOMIC_RELEASE);
}

/* The drain thread's look at an MMAP2 record at ring offset off (h its
 * header), spooled already: the user of its process, if ingest will want
 * it; the file of an executable file mapping, held until ingest reads it
 * (binhold.h). */
static void mmap2_note(struct backend *b, struct cpu_ring *r, uint64_t off,
		       const struct perf_event_header *h)
{
	const unsigned char *p = r->data + (off & (r->size - 1));
	uint64_t first = r->size - (off & (r->size - 1));
	struct owner_seen *o;
	struct perfrec pr;
	char proc_dir[32];
	struct stat st;

	if (h->size > r->size)
		return;		/* malformed: decoding says so later */
	if (h->size > first) {
		memcpy(r->dtmp, p, first);
		memcpy(r->dtmp + first, r->data, h->size - first);
		p = r->dtmp;
	}
	if (perfrec_decode(&b->fmt, p, h->size, &pr) != PERFREC_OK)
		return;
	if (ingest_mmap_wants_file(pr.mmap2.pid, pr.mmap2.prot, pr.mmap2.filename)) {
		struct binhold_rec hr = {
			.pid = pr.mmap2.pid, .time = pr.time, .start = pr.mmap2.start,
			.end = pr.mmap2.start + pr.mmap2.len, .has_ino = !pr.mmap2.has_build_id,
			.maj = pr.mmap2.maj, .min = pr.mmap2.min, .ino = pr.mmap2.ino,
			.gen = pr.mmap2.ino_generation,
		};

		binhold_note(b->held, &hr);
	}
	if (!ingest_mmap_wants_owner(pr.mmap2.pid, pr.mmap2.prot, pr.mmap2.filename))
		return;
	snprintf(proc_dir, sizeof(proc_dir), "/proc/%u", pr.mmap2.pid);
	if (stat(proc_dir, &st) < 0)
		return;		/* gone already: ingest says so */
	pthread_mutex_lock(&b->owners.lock);
	o = &b->owners.seen[b->owners.next++ % OWNERS_MAX];
	*o = (struct owner_seen){ .time = pr.time, .pid = pr.mmap2.pid, .uid = st.st_uid };
	pthread_mutex_unlock(&b->owners.lock);
}

/* What mmap2_note() saw for pid's record of time t: 1 and *uid, or 0. */
static int owner_find(struct backend *b, uint32_t pid, uint64_t t, uint32_t *uid)
{
	int found = 0;

	pthread_mutex_lock(&b->owners.lock);
	for (uint64_t i = b->owners.next; i > 0 && b->owners.next - i < OWNERS_MAX; i--) {
		const struct owner_seen *o = &b->owners.seen[(i - 1) % OWNERS_MAX];

		if (o->pid == pid && o->time == t) {
			*uid = o->uid;
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&b->owners.lock);
	return found;
}

/*
 * The drain thread's copy of ring r: what it holds, as one chunk of the
 * spool, or as many whole records of it as the spool has room for.
 * 0: empty, 1: all copied, 2: some (the rest stays in the ring), -1: no
 * room for even one record.  Only the headers are read, to count records and
 * samples.
 */
static int ring_copy(struct backend *b, struct cpu_ring *r, uint32_t src, uint64_t now)
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
			mmap2_note(b, r, off, &h);
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

struct dev_put {
	struct backend *b;
	struct cpu_ring *r;	/* of the driver's ring's CPU */
	uint32_t src;
	uint64_t now;
};

/* The driver's rings hold its samples only (strobe_dev_copy counts them). */
static int dev_put(void *ctx, const void *a, size_t alen, const void *bb, size_t blen,
		   uint64_t records, uint64_t samples)
{
	struct dev_put *p = ctx;

	if (spool_put(p->b->spool, p->src, p->now, a, alen, bb, blen, records, samples) != 0)
		return -1;
	__atomic_store_n(&p->r->taken, p->r->taken + samples, __ATOMIC_RELAXED);
	return 0;
}

/*
 * The drain thread: passes over every ring (perf ring i is source i, the
 * driver's ring i source nr + i), each followed by a pass mark, then a
 * wait for the rings' watermark wakeups or 100 ms.  A pass the spool
 * refused part of gets no mark, and the next comes after 1 ms: the
 * records wait in their rings, which the kernel guards.  Once quit is
 * set, one last pass, and return.
 */
static void *drain_thread(void *arg)
{
	struct backend *b = arg;
	struct pollfd *pfd = xcalloc(b->nr_fds + 1, sizeof(*pfd));

	/*
	 * The rings are emptied at strobed's priority, not ingest's; with
	 * drain_rt at the lowest real-time priority, so that CPUs saturated
	 * by the workload (and by the sampling interrupts themselves) never
	 * keep it waiting longer than a ring lasts.  It sleeps in poll and
	 * each wakeup only copies, so it takes little CPU; the kernel's
	 * real-time throttling bounds it in any case.
	 */
	if (b->cfg.drain_rt) {
		struct sched_param sp = { .sched_priority = 1 };

		if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
			daemon_log("drain thread: cannot take SCHED_FIFO: ring overflows "
				   "under load are likelier");
	} else if (setpriority(PRIO_PROCESS, 0, b->cfg.drain_nice) < 0) {
		daemon_log("drain thread: cannot take nice %d: %s", b->cfg.drain_nice,
			   strerror(errno));
	}
	for (int i = 0; i < b->nr_fds; i++)
		pfd[i] = (struct pollfd){ .fd = b->fds[i], .events = POLLIN };
	pfd[b->nr_fds] = (struct pollfd){ .fd = b->wake_fd, .events = POLLIN };
	for (;;) {
		int quit = __atomic_load_n(&b->quit, __ATOMIC_ACQUIRE);
		uint64_t start = clock_monotonic_ns();
		int put = 0, refused = 0;

		for (int i = 0; i < b->nr; i++) {
			int r = ring_copy(b, &b->rings[i], i, start);

			put |= r > 0;
			refused |= r < 0 || r == 2;
			if (r < 0 || r == 2)
				spool_short(b->spool);
			if (b->dev) {
				struct dev_put p = { b, &b->rings[i], b->nr + i, start };

				r = strobe_dev_copy(b->dev, i, spool_room(b->spool), dev_put, &p);
				put |= r > 0;
				refused |= r < 0 || r == 2;
				if (r < 0 || r == 2)
					spool_short(b->spool);
			}
		}
		if (!refused)
			spool_pass(b->spool, start);
		if (put)
			efd_signal(b->notify_fd);
		if (quit)
			break;
		if (refused) {
			usleep(1000);
			continue;
		}
		/* quit is read again at the top: the wakeup need not be reset */
		poll(pfd, b->nr_fds + 1, 100);
	}
	free(pfd);
	return NULL;
}

int backend_start(struct backend *b, struct spool *sp, int notify_fd, struct error *e)
{
	int err;

	b->spool = sp;
	b->notify_fd = notify_fd;
	for (int i = 0; i < b->nr; i++) {
		spool_source(sp, i, b->rings[i].cpu);
		if (b->dev)
			spool_source(sp, b->nr + i, b->rings[i].cpu);
	}
	b->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (b->wake_fd < 0)
		return error_set(e, "eventfd: %s", strerror(errno));
	err = pthread_create(&b->thread, NULL, drain_thread, b);
	if (err) {
		close(b->wake_fd);
		b->wake_fd = -1;
		return error_set(e, "cannot start the drain thread: %s", strerror(err));
	}
	b->running = 1;
	return 0;
}

/* Stop the drain thread after its last pass (the events are off). */
static void thread_stop(struct backend *b)
{
	if (!b->running)
		return;
	__atomic_store_n(&b->quit, 1, __ATOMIC_RELEASE);
	efd_signal(b->wake_fd);
	pthread_join(b->thread, NULL);
	b->running = 0;
	close(b->wake_fd);
	b->wake_fd = -1;
}

/* The process whose maps a side-band record changes, 0 for others. */
static uint32_t perfrec_pid(const struct perfrec *pr)
{
	switch (pr->type) {
	case PERF_RECORD_MMAP2:
		return pr->mmap2.prot & PROT_EXEC ? pr->mmap2.pid : 0;
	case PERF_RECORD_COMM:
		return pr->comm.exec ? pr->comm.pid : 0;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return pr->task.pid;
	}
	return 0;
}

/* Side-band and loss records of CPU cpu, in perf's layout, to ingest;
 * late_ns: handed out that long after a younger record (0: in order). */
static int deliver_perf(struct backend *b, struct ingest *in, int cpu, const unsigned char *p,
			size_t len, uint64_t late_ns, struct error *e)
{
	struct perfrec pr;
	int ret;

	if (perfrec_decode(&b->fmt, p, len, &pr) != PERFREC_OK)
		return 0;	/* cannot happen: checked when queued */
	/* a late sample is counted; only a late side-band record leaves the
	 * maps of its process wrong for a while (ingest.h) */
	if (late_ns && ingest_late(in, pr.type == PERF_RECORD_SAMPLE ? 0 : perfrec_pid(&pr),
				   pr.time, late_ns, e) < 0)
		return -1;
	switch (pr.type) {
	case PERF_RECORD_MMAP2: {
		struct ingest_mmap m;

		memset(&m, 0, sizeof(m));
		m.pid = pr.mmap2.pid;
		m.start = pr.mmap2.start;
		m.len = pr.mmap2.len;
		m.pgoff = pr.mmap2.pgoff;
		if (pr.mmap2.has_build_id) {
			m.build_id_len = pr.mmap2.build_id_len;
			m.build_id = pr.mmap2.build_id;
		} else {
			m.maj = pr.mmap2.maj;
			m.min = pr.mmap2.min;
			m.ino = pr.mmap2.ino;
			m.ino_generation = pr.mmap2.ino_generation;
		}
		m.prot = pr.mmap2.prot;
		m.filename = pr.mmap2.filename;
		m.time_ns = pr.time;
		if (ingest_mmap_wants_owner(m.pid, m.prot, m.filename))
			m.owner_known = owner_find(b, m.pid, pr.time, &m.owner_uid);
		if (ingest_mmap_wants_file(m.pid, m.prot, m.filename)) {
			m.held_fd = binhold_take(b->held, m.pid, pr.time, m.start, &m.held_over);
			m.held = m.held_fd >= 0;
		}
		ret = ingest_mmap(in, &m, e);
		if (m.held)
			close(m.held_fd);
		return ret;
	}
	case PERF_RECORD_COMM:
		return ingest_comm(in, pr.comm.pid, pr.comm.tid, pr.comm.comm, pr.comm.exec,
				   pr.time, e);
	case PERF_RECORD_FORK:
		return ingest_fork(in, pr.task.ppid, pr.task.pid, pr.task.tid, pr.time, e);
	case PERF_RECORD_EXIT:
		return ingest_exit(in, pr.task.pid, pr.task.tid, pr.time, e);
	case PERF_RECORD_LOST:
		return ingest_lost_records(in, cpu, pr.time, pr.lost.lost, e);
	case PERF_RECORD_LOST_SAMPLES:
		return ingest_lost(in, cpu, pr.time, pr.lost.lost, "samples", e);
	case PERF_RECORD_THROTTLE:
		return ingest_throttle(in, cpu, pr.time, e);
	case PERF_RECORD_CGROUP:
		return ingest_cgroup(in, pr.cgroup.id, pr.cgroup.path, e);
	}
	return 0;
}

/* A probe hit to ingest, as a marker "usdt" named PROVIDER:NAME. */
static int deliver_probe(struct backend *b, struct ingest *in, const struct merge_ent *q,
			 const struct probe_hit *hit, struct error *e)
{
	const struct usdt_site *s = &b->sites[hit->site];
	char name[2 * USDT_MAX_NAME + 1], args[USDT_MAX_ARGS * 24];
	struct db_marker m = {
		.time_ns = q->time, .cpu = hit->cpu, .pid = hit->pid, .tid = hit->tid,
		.kind = "usdt", .name = name, .args = s->nargs ? args : NULL,
	};

	snprintf(name, sizeof(name), "%s:%s", s->provider, s->name);
	usdt_format_args(s, hit->vals, hit->known, args, sizeof(args));
	return ingest_marker(in, &m, e);
}

/* Queue src's entry q to ingest; late_ns as for deliver_perf(). */
static int deliver(struct backend *b, struct ingest *in, int src, const struct merge_ent *q,
		   uint64_t late_ns, struct error *e)
{
	const unsigned char *p = merge_payload(q);
	int cpu = b->queue_cpu[src];

	if (late_ns && q->kind != Q_PERF && ingest_late(in, 0, q->time, late_ns, e) < 0)
		return -1;

	if (q->kind == Q_MARK)
		return deliver_probe(b, in, q, (const struct probe_hit *)p, e);

	if (q->kind == Q_STROBE) {
		struct record rec;
		size_t used;

		if (record_decode(p, q->len, &rec, &used) != RECORD_OK)
			return error_set(e, "internal error: undecodable record on CPU %d", cpu);
		if (rec.type == STROBE_REC_SAMPLE && q->len >= used + 8)
			memcpy(&rec.sample.cgroup, p + used, 8);	/* queue_sample's */
		return ingest_record(in, &rec, e);
	}
	return deliver_perf(b, in, cpu, p, q->len, late_ns, e);
}

/* strobe_dev_read() callback: queue one driver record of CPU ctx. */
struct dev_ctx {
	struct backend *b;
	int i;
};

static int dev_record(void *ctx, const struct record *rec, struct error *e)
{
	struct dev_ctx *c = ctx;
	size_t len = record_size(rec);

	(void)e;
	if (rec->type == STROBE_REC_LOST)
		c->b->dev_lost[c->i] += rec->lost.lost;
	record_encode(rec, merge_queue_push(&c->b->dq[c->i], rec->time_ns, Q_STROBE, len), len);
	return 0;
}

/* A spool entry's records into its ring's queue. */
static void chunk_read(struct backend *b, const struct spool_entry *ent)
{
	struct error e;

	if (ent->src < (uint32_t)b->nr) {
		struct cpu_ring *r = &b->rings[ent->src];

		if (ent->len <= r->size &&
		    records_read(b, r, ent->data, r->size, 0, ent->len) == ent->len)
			return;
		snprintf(e.msg, sizeof(e.msg), "malformed record in the ring of CPU %d: "
			 "the rest of a %zu-byte chunk skipped", r->cpu, ent->len);
	} else if (b->dev && ent->src < 2 * (uint32_t)b->nr) {
		struct dev_ctx c = { b, ent->src - b->nr };

		if (strobe_dev_parse(b->dev, c.i, ent->data, ent->len, dev_record, &c, &e) == 0)
			return;
	} else {
		snprintf(e.msg, sizeof(e.msg), "a spool chunk of unknown source %u skipped",
			 ent->src);
	}
	if (b->bad_chunks++ < 10)
		daemon_log("%s", e.msg);
}

/* Merge the queues up to horizon into ingest. */
static int merge_deliver(struct backend *b, struct ingest *in, uint64_t horizon,
			 struct error *e)
{
	for (;;) {
		uint64_t late = b->merge.stats.late, last = b->merge.last_time;
		const struct merge_ent *q;
		int src;

		q = merge_next(&b->merge, horizon, &src);
		if (!q)
			break;
		/* merge.h: a late entry leaves last_time as it was */
		if (deliver(b, in, src, q, b->merge.stats.late != late ? last - q->time : 0,
			    e) < 0)
			return -1;
	}
	merge_settle(&b->merge);
	return 0;
}

int backend_drain(struct backend *b, struct ingest *in, int final, struct error *e)
{
	uint64_t deadline = clock_monotonic_ns() + DRAIN_BUDGET_NS;
	struct spool_entry ent;
	int r = 1;

	/* a pass at a time: its chunks, then what they let the merge hand out */
	while (b->spool && r == 1) {
		while ((r = spool_take(b->spool, &ent, e)) == 1) {
			if (ent.is_pass) {
				b->pass_ns = ent.time;
				break;
			}
			chunk_read(b, &ent);
		}
		if (r < 0)
			return -1;
		if (!final && merge_deliver(b, in, b->pass_ns > MERGE_HORIZON_NS ?
					    b->pass_ns - MERGE_HORIZON_NS : 0, e) < 0)
			return -1;
		if (r == 1 && !final && clock_monotonic_ns() > deadline) {
			/* more waits: come back after the other events */
			efd_signal(b->notify_fd);
			return 0;
		}
	}
	if (!final && b->running)
		return 0;
	/* no drain thread (any more): the rings are read in place */
	for (int i = 0; i < b->nr; i++) {
		ring_read(b, &b->rings[i]);
		if (b->dev) {
			struct dev_ctx c = { b, i };

			if (strobe_dev_read(b->dev, i, dev_record, &c, e) < 0)
				return -1;
		}
	}
	return merge_deliver(b, in, final ? UINT64_MAX : clock_monotonic_ns() - MERGE_HORIZON_NS, e);
}

void backend_held_stats(struct backend *b, struct binhold_stats *st)
{
	binhold_get_stats(b->held, st);
}

void backend_merge_stats(const struct backend *b, uint64_t *late, uint64_t *late_max_ns)
{
	struct merge_stats st;

	merge_get_stats(&b->merge, &st);
	*late = st.late;
	*late_max_ns = st.late_max_ns;
}

/*
 * Driver: final counter totals from STATS, and drops the rings could not
 * report in-band (a full ring at STOP) are stored now, so none is silent.
 */
static int dev_read_final(struct backend *b, struct ingest *in, struct error *e)
{
	uint64_t now = clock_monotonic_ns();

	if (strobe_dev_stats(b->dev, b->dev_stats, e) < 0)
		return -1;
	for (int i = 0; i < b->nr; i++) {
		const struct strobe_cpu_stats *st = &b->dev_stats[i];
		uint64_t vals[STROBE_MAX_COUNTERS];

		if (st->nr_counters != (uint64_t)b->cfg.nr_events)
			return error_set(e, "driver reports %llu counters on CPU %d, expected %d",
					 (unsigned long long)st->nr_counters, b->rings[i].cpu,
					 b->cfg.nr_events);
		for (int j = 0; j < b->cfg.nr_events; j++)
			vals[j] = st->counters[j];
		ingest_cpu_final(in, b->rings[i].cpu, vals, b->cfg.nr_events);
		if (st->lost > b->dev_lost[i] &&
		    ingest_lost(in, b->rings[i].cpu, now, st->lost - b->dev_lost[i], "ring", e) < 0)
			return -1;
	}
	return 0;
}

int backend_read_final(struct backend *b, struct ingest *in, struct error *e)
{
	if (b->dev)
		return dev_read_final(b, in, e);
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
			if (ingest_unscheduled(in, (uint32_t)r->cpu, now, now - MIN(from, now), 0,
					       1, e) < 0)
				return -1;
			continue;
		}
		if (n < 24)
			return error_set(e, "cannot read the counters of CPU %d: %s", r->cpu,
					 n < 0 ? strerror(errno) : "short read");
		for (uint64_t k = 0; k < buf[0] && (ssize_t)(24 + k * 16 + 16) <= n; k++)
			for (int j = 0; j < b->cfg.nr_events; j++)
				if (r->ids[j + 1] == buf[4 + 2 * k])
					vals[j] = buf[3 + 2 * k];
		ingest_cpu_final(in, r->cpu, vals, b->cfg.nr_events);
		/* not counting after the CPU's last sample (or all along) */
		de = buf[1] - MIN(r->seen_enabled, buf[1]);
		dr = buf[2] - MIN(r->seen_running, buf[2]);
		if (dr <= de && de - dr >= UNSCHED_MIN_NS &&
		    ingest_unscheduled(in, (uint32_t)r->cpu, MIN(from + de, now), MIN(de, from + de),
				       dr, 0, e) < 0)
			return -1;
	}
	return 0;
}
