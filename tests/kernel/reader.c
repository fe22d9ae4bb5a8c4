/*
 * reader.c - functional test of strobe.ko (run as root, static binary).
 *
 *   gcc -static -O2 -Wall -o reader reader.c -lpthread
 *   reader [--sample EVENT] [--period N | --freq HZ] [--count EVENT[,EVENT...]]
 *          [--irq NAME] [--hot-ms MS] [N]
 *
 *   N          page faults the workload takes (default 16384)
 *   --sample   sampling event of the main session: cpu-clock (default) or a
 *              hardware event, cycles or instructions
 *   --period   its sample period (default 1000000: 1 ms of cpu-clock)
 *   --freq     or its sample frequency (perf's frequency mode)
 *   --count    counting events (default page-faults); page-faults must be
 *              among them.  Events: cpu-clock task-clock page-faults
 *              context-switches cpu-migrations cycles instructions
 *   --irq      name of the /proc/interrupts line of the sampling interrupt
 *              (e.g. arm-pmu): each CPU's count must grow by at least its
 *              samples + lost, i.e. every sample came from that interrupt
 *   --hot-ms   how long the workload spins in user mode (default 300)
 *
 * The workload thread first takes N page faults, then spins in user mode;
 * both loops live in the ELF section strobe_hot, and its user-mode samples
 * must resolve into that section.
 *
 * Then: the mmap page-size ABI (mmap-*), which counting events CONFIG
 * refuses or accepts (counter-*), CPU 1 going offline and coming back during
 * a session (hotplug-*, SKIP without a CPU 1 that can go offline), and a
 * ring that overflows (overflow-*).
 *
 * Prints one "PASS <name>" or "FAIL <name>: why" line per check, then
 * "RESULT PASS" or "RESULT FAIL"; exit status 0 only on PASS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include "../../kernel/uapi/strobe.h"
#include "ktest.h"

#define DEV "/dev/strobe"
#define MAXCPU 256


/* ioctl expected to fail with errno @want (0: any error) */
static void expect_err(int fd, unsigned long cmd, void *arg, int want,
		       const char *name)
{
	int r = ioctl(fd, cmd, arg);
	int e = errno;

	check(r < 0 && (!want || e == want), name, "ret %d errno %d (%s), want %d",
	      r, r < 0 ? e : 0, r < 0 ? strerror(e) : "-", want);
}

/* ------------------------------------------------------------------ */

struct ring {
	int cpu;
	volatile struct strobe_ring_ctrl *ctrl;
	const uint8_t *data;
	uint32_t size;
	/* results */
	unsigned long long samples, lost_recs, lost_sum, pads, bad;
	unsigned long long last_tsc, last_time, last_ctr[STROBE_MAX_COUNTERS];
	unsigned long long first_time, min_time_violations, tsc_violations, ctr_violations;
	unsigned long long user, kernel, tsc_exact, badflags, badcpu, badmode;
	unsigned long long first_ctr[STROBE_MAX_COUNTERS];
	/* hotplug: records, their times, samples in and after the gap */
	unsigned long long offline_recs, online_recs, hp_order_bad;
	unsigned long long gap_samples;
	unsigned long long before_samples, since_online;
	unsigned long long off_times[4], on_times[4];
	int down;	/* an OFFLINE record was read, its ONLINE not yet */
};

static struct ring rings[MAXCPU];
static int nr_rings;
static unsigned nr_counters;
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;

/* The workload's code: its user-mode samples must fall in here. */
#define HOT __attribute__((section("strobe_hot"), noinline))
extern const char __start_strobe_hot[], __stop_strobe_hot[];

/* Samples of the workload thread, tallied by drain_one() while hot_tid != 0. */
static volatile uint32_t hot_tid;
static unsigned long long hot_user, hot_user_in, hot_kernel;
static unsigned long long hot_first_out, hot_nr_out;

/* Events by name. */
struct event {
	const char *name;
	uint32_t type;
	unsigned long long config;
};

static const struct event events[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
};

static const struct event *event_by_name(const char *name)
{
	unsigned i;

	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (!strcmp(events[i].name, name))
			return &events[i];
	fprintf(stderr, "reader: unknown event %s\n", name);
	exit(2);
}

/* Options. */
static const struct event *opt_sample;
static unsigned long long opt_period = 1000000, opt_freq;
static const struct event *opt_count[STROBE_MAX_COUNTERS];
static unsigned opt_nr_count;
static int opt_pf_index = -1;	/* index of page-faults among the counters */
static const char *opt_irq;
static int opt_hot_ms = 300;

static void drain_one(struct ring *r)
{
	unsigned long long head = __atomic_load_n(&r->ctrl->head, __ATOMIC_ACQUIRE); /* C */
	unsigned long long tail = r->ctrl->tail;

	while (tail < head) {
		uint32_t off = tail & (r->size - 1);
		const struct strobe_rec_header *h = (const void *)(r->data + off);

		if (h->size < 8 || h->size % 8 || h->size > r->size - off) {
			r->bad++;
			tail = head;	/* give up on this ring */
			break;
		}
		if (h->cpu != (uint32_t)r->cpu)
			r->badcpu++;
		if (h->type == STROBE_REC_PAD) {
			r->pads++;
		} else if (h->type == STROBE_REC_LOST) {
			const struct strobe_lost *l = (const void *)h;

			if (h->size != sizeof(*l))
				r->bad++;
			r->lost_recs++;
			r->lost_sum += l->lost;
		} else if (h->type == STROBE_REC_CPU_OFFLINE || h->type == STROBE_REC_CPU_ONLINE) {
			const struct strobe_cpu_rec *c = (const void *)h;
			int off = h->type == STROBE_REC_CPU_OFFLINE;

			if (h->size != sizeof(*c))
				r->bad++;
			/* OFFLINE, ONLINE, OFFLINE, ... never twice in a row */
			if (off == r->down)
				r->hp_order_bad++;
			if (r->samples && c->time_ns < r->last_time)
				r->min_time_violations++;
			r->down = off;
			if (off) {
				if (r->offline_recs < 4)
					r->off_times[r->offline_recs] = c->time_ns;
				r->offline_recs++;
			} else {
				if (r->online_recs < 4)
					r->on_times[r->online_recs] = c->time_ns;
				r->online_recs++;
				r->since_online = 0;
			}
			r->last_time = c->time_ns;
		} else if (h->type == STROBE_REC_SAMPLE) {
			const struct strobe_sample *s = (const void *)h;
			unsigned mode = s->flags & STROBE_SAMPLE_MODE_MASK;
			unsigned i;

			if (s->nr_counters != nr_counters ||
			    h->size != STROBE_SAMPLE_SIZE(s->nr_counters)) {
				r->bad++;
			} else {
				if (!r->samples)
					r->first_time = s->time_ns;
				if (r->samples && s->time_ns < r->last_time)
					r->min_time_violations++;
				if (r->samples && s->tsc < r->last_tsc)
					r->tsc_violations++;
				for (i = 0; i < nr_counters; i++) {
					if (!r->samples)
						r->first_ctr[i] = s->counters[i];
					if (s->counters[i] < r->last_ctr[i])
						r->ctr_violations++;
					r->last_ctr[i] = s->counters[i];
				}
				r->last_time = s->time_ns;
				r->last_tsc = s->tsc;
				r->samples++;
				if (r->down)
					r->gap_samples++;
				else if (r->online_recs)
					r->since_online++;
				else if (!r->offline_recs)
					r->before_samples++;
				if (mode == STROBE_SAMPLE_USER)
					r->user++;
				else if (mode == STROBE_SAMPLE_KERNEL)
					r->kernel++;
				else
					r->badflags++;
#if defined(__x86_64__) || defined(__aarch64__)
				/* kernel addresses have the top bit set, user ones not */
				if ((mode == STROBE_SAMPLE_USER && (s->ip >> 63 || !s->ip)) ||
				    (mode == STROBE_SAMPLE_KERNEL && !(s->ip >> 63)))
					r->badmode++;
#endif
				if (hot_tid && s->tid == hot_tid && s->pid == (uint32_t)getpid()) {
					if (mode == STROBE_SAMPLE_USER) {
						hot_user++;
						if (s->ip >= (uintptr_t)__start_strobe_hot &&
						    s->ip < (uintptr_t)__stop_strobe_hot)
							hot_user_in++;
						else if (!hot_nr_out++)
							hot_first_out = s->ip;
					} else {
						hot_kernel++;
					}
				}
				if (s->flags & STROBE_SAMPLE_TSC_EXACT)
					r->tsc_exact++;
			}
		} else {
			r->bad++;
		}
		tail += h->size;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* D */
	__atomic_store_n(&r->ctrl->tail, tail, __ATOMIC_RELAXED);
}

static void drain_all(void)
{
	int i;

	pthread_mutex_lock(&drain_lock);
	for (i = 0; i < nr_rings; i++)
		drain_one(&rings[i]);
	pthread_mutex_unlock(&drain_lock);
}

static volatile int drain_stop;
static int drain_fd;
static unsigned long polls_ready;

static void *drain_thread(void *arg)
{
	(void)arg;
	while (!drain_stop) {
		struct pollfd p = { drain_fd, POLLIN, 0 };

		if (poll(&p, 1, 20) > 0 && (p.revents & POLLIN))
			polls_ready++;
		drain_all();
	}
	return NULL;
}

/* ------------------------------------------------------------------ */

static void invalid_ioctls(int fd)
{
	struct perf_event_attr s, c[STROBE_MAX_COUNTERS + 1];
	struct strobe_config cfg;
	struct strobe_stats st = { sizeof(st), 0, 0 };
	/* larger than any kernel's perf_event_attr (6.12's is 144 bytes) */
	char big[512];
	unsigned i;
	int fd2;

	attr_init(&s, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	s.sample_period = 1000000;
	for (i = 0; i <= STROBE_MAX_COUNTERS; i++)
		attr_init(&c[i], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);

	fd2 = open(DEV, O_RDWR);
	check(fd2 < 0 && errno == EBUSY, "second-open-ebusy", "fd %d errno %d", fd2, errno);
	if (fd2 >= 0)
		close(fd2);

	expect_err(fd, STROBE_IOC_START, NULL, EINVAL, "start-unconfigured");
	expect_err(fd, STROBE_IOC_STATS, &st, EINVAL, "stats-unconfigured");
	expect_err(fd, _IO(STROBE_IOC_MAGIC, 99), NULL, ENOTTY, "unknown-ioctl");
	expect_err(fd, STROBE_IOC_CONFIG, NULL, EFAULT, "config-null");
	expect_err(fd, STROBE_IOC_CONFIG, (void *)16, EFAULT, "config-badptr");

	cfg_init(&cfg, &s, c, 1, 16);
	cfg.size -= 8;
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, EINVAL, "config-bad-size");

	cfg_init(&cfg, &s, c, STROBE_MAX_COUNTERS + 1, 16);
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, E2BIG, "config-too-many-counters");

	cfg_init(&cfg, &s, c, 1, 16);
	cfg.attr_size = 32;
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, EINVAL, "config-attr-size-small");
	cfg.attr_size = 1 << 20;
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, EINVAL, "config-attr-size-huge");

	memset(big, 0, sizeof(big));
	memcpy(big, &s, sizeof(s));
	((struct perf_event_attr *)big)->size = sizeof(big);
	big[sizeof(big) - 1] = 1;
	cfg_init(&cfg, (void *)big, NULL, 0, 16);
	cfg.attr_size = sizeof(big);
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, E2BIG, "config-attr-nonzero-tail");

	cfg_init(&cfg, &s, c, 1, 3);
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, EINVAL, "config-pages-not-pow2");
	cfg.buffer_pages = 0;
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, EINVAL, "config-pages-zero");
	cfg.buffer_pages = 1 << 20;
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, EINVAL, "config-pages-huge");

	cfg_init(&cfg, &s, c, 1, 16);
	cfg.sample_attr = 16;
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, EFAULT, "config-sample-attr-badptr");
	cfg_init(&cfg, &s, c, 1, 16);
	cfg.counter_attrs = (unsigned long long)-4096;
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, EFAULT, "config-counter-attrs-badptr");
	cfg_init(&cfg, &s, NULL, 2, 16);
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, EFAULT, "config-counter-attrs-null");

	cfg_init(&cfg, &s, c, 1, 16);
	cfg.cpu_mask[3] = 1ULL << 63;
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, EINVAL, "config-cpu-mask-offline");

	s.type = 0x7ffff000;
	cfg_init(&cfg, &s, c, 1, 16);
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, 0, "config-sample-unknown-type");
	s.type = PERF_TYPE_SOFTWARE;
	c[0].type = 0x7ffff000;
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, 0, "config-counter-unknown-type");
	c[0].type = PERF_TYPE_SOFTWARE;
	c[0].config = 0xffffff;
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, 0, "config-counter-unknown-config");
	c[0].config = PERF_COUNT_SW_PAGE_FAULTS;

	c[0].inherit = 1;
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, EINVAL, "config-counter-inherit");
	c[0].inherit = 0;
	c[0].sample_period = 1000;
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, EINVAL, "config-counter-with-period");
	c[0].sample_period = 0;

	s.sample_period = 0;
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, EINVAL, "config-sample-no-period");
	s.freq = 1;
	s.sample_freq = 10000000;
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, EINVAL, "config-sample-freq-huge");
	s.freq = 0;
	s.sample_period = 1ULL << 63;
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, EINVAL, "config-sample-period-negative");
	s.sample_period = 1000000;

	/* after all those failures a valid config still works */
	cfg_init(&cfg, &s, c, 1, 16);
	check(ioctl(fd, STROBE_IOC_CONFIG, &cfg) == 0, "config-valid-after-errors",
	      "errno %d (%s)", errno, strerror(errno));
	expect_err(fd, STROBE_IOC_CONFIG, &cfg, EBUSY, "config-twice-ebusy");
	st.size = 4;
	expect_err(fd, STROBE_IOC_STATS, &st, EINVAL, "stats-bad-size");
	st.size = sizeof(st);
	st.nr_cpus = 4;
	st.cpus = 16;
	expect_err(fd, STROBE_IOC_STATS, &st, EFAULT, "stats-badptr");
	expect_err(fd, STROBE_IOC_STATS, NULL, EFAULT, "stats-null");
}

/* ------------------------------------------------------------------ */

static int map_rings(int fd, uint32_t pages, int ncpu, int abi_checks)
{
	size_t pg = STROBE_PAGE;
	size_t data_size = (size_t)pages * pg, stride = pg + data_size;
	int cpu, ok = 1;
	void *p;

	nr_rings = 0;
	for (cpu = 0; cpu < ncpu && cpu < MAXCPU; cpu++) {
		struct ring *r = &rings[nr_rings];
		void *c, *d;

		memset(r, 0, sizeof(*r));
		c = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, cpu * stride);
		d = mmap(NULL, data_size, PROT_READ, MAP_SHARED, fd, cpu * stride + pg);
		if (c == MAP_FAILED || d == MAP_FAILED) {
			printf("# mmap cpu %d: %s\n", cpu, strerror(errno));
			ok = 0;
			continue;
		}
		r->cpu = cpu;
		r->ctrl = c;
		r->data = d;
		r->size = data_size;
		if (r->ctrl->data_size != data_size || r->ctrl->page_size != pg)
			ok = 0;
		nr_rings++;
	}
	check(ok && nr_rings == ncpu, "mmap-rings", "%d of %d rings mapped, or data_size/page_size "
	      "in the control page differ from %zu/%zu", nr_rings, ncpu, data_size, pg);

	/* permission checks on CPU 0's ring */
	p = mmap(NULL, data_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, pg);
	check(p == MAP_FAILED && errno == EPERM, "mmap-data-writable-refused",
	      "p %p errno %d", p, errno);
	if (p != MAP_FAILED)
		munmap(p, data_size);
	p = mmap(NULL, data_size, PROT_READ, MAP_SHARED, fd, pg);
	if (p != MAP_FAILED) {
		int r = mprotect(p, data_size, PROT_READ | PROT_WRITE);

		check(r < 0, "mprotect-data-writable-refused", "mprotect succeeded");
		munmap(p, data_size);
	}
	p = mmap(NULL, stride + pg, PROT_READ, MAP_SHARED, fd, 0);
	check(p == MAP_FAILED, "mmap-across-rings-refused", "mapped");
	if (p != MAP_FAILED)
		munmap(p, stride + pg);
	if (!abi_checks || pages < 2)
		return ok;

	/*
	 * Page-size ABI: a mapping is the control page, the records or the
	 * whole ring, in pages of sysconf(_SC_PAGESIZE).  Anything else is
	 * what a consumer gets when its idea of the page or of the layout is
	 * wrong, and is refused.
	 */
	p = mmap(NULL, stride, PROT_READ, MAP_SHARED, fd, (ncpu - 1) * stride);
	check(p != MAP_FAILED && ((volatile struct strobe_ring_ctrl *)p)->page_size == pg &&
	      ((volatile struct strobe_ring_ctrl *)p)->data_size == data_size,
	      "mmap-whole-ring", "%s", p == MAP_FAILED ? strerror(errno) : "bad control page");
	if (p != MAP_FAILED)
		munmap(p, stride);
	p = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, 2 * pg);
	check(p == MAP_FAILED && errno == EINVAL, "mmap-mid-records-refused",
	      "one page at record page 1: %s", p == MAP_FAILED ? strerror(errno) : "mapped");
	if (p != MAP_FAILED)
		munmap(p, pg);
	p = mmap(NULL, 2 * pg, PROT_READ, MAP_SHARED, fd, 0);
	check(p == MAP_FAILED && errno == EINVAL, "mmap-ctrl-plus-part-refused",
	      "control page and one record page: %s", p == MAP_FAILED ? strerror(errno) : "mapped");
	if (p != MAP_FAILED)
		munmap(p, 2 * pg);
	p = mmap(NULL, data_size - pg, PROT_READ, MAP_SHARED, fd, pg);
	check(p == MAP_FAILED && errno == EINVAL, "mmap-short-records-refused",
	      "records less a page: %s", p == MAP_FAILED ? strerror(errno) : "mapped");
	if (p != MAP_FAILED)
		munmap(p, data_size - pg);
	return ok;
}

/* Mappings hold the file open: unmap before close, or the next open is EBUSY. */
static void unmap_rings(void)
{
	int i;

	for (i = 0; i < nr_rings; i++) {
		munmap((void *)rings[i].ctrl, STROBE_PAGE);
		munmap((void *)rings[i].data, rings[i].size);
	}
	nr_rings = 0;
}

static int get_stats(int fd, struct strobe_cpu_stats *cs, int ncpu)
{
	struct strobe_stats st = { sizeof(st), (uint32_t)ncpu, (uintptr_t)cs };

	memset(cs, 0, sizeof(*cs) * ncpu);
	if (ioctl(fd, STROBE_IOC_STATS, &st) < 0) {
		check(0, "stats", "errno %d (%s)", errno, strerror(errno));
		return -1;
	}
	return st.nr_cpus;
}

/* The workload's loops, in section strobe_hot. */
static HOT void hot_touch(volatile char *m, long n, long pg)
{
	long i;

	for (i = 0; i < n; i++)
		m[i * pg] = 1;
}

static HOT unsigned long hot_spin(unsigned long n, unsigned long x)
{
	while (n--) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/*
 * Touch @n fresh anonymous pages: exactly n page faults.  Then spin in user
 * mode for @spin_ms, so that the workload thread has user-mode samples.
 */
static void workload(long n, int spin_ms)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, n * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long long t_end;
	unsigned long x = 1;

	if (m == MAP_FAILED) {
		perror("mmap workload");
		exit(2);
	}
	madvise(m, n * pg, MADV_NOHUGEPAGE);
	hot_touch(m, n, pg);
	munmap(m, n * pg);
	/* the clock is read (vDSO, outside the section) once per 100k rounds */
	t_end = now_ns() + spin_ms * 1000000ULL;
	while (now_ns() < t_end)
		x = hot_spin(100000, x);
	if (x == 42)
		printf("#\n");	/* keep x alive */
}

/*
 * Per-CPU counts of the /proc/interrupts line whose name is @name; returns
 * the number of CPU columns read, 0 if there is no such line.
 */
static int irq_counts(const char *name, unsigned long long *cnt, int ncpu)
{
	char line[1024];
	FILE *f = fopen("/proc/interrupts", "r");
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		size_t l = strlen(line), nl = strlen(name);
		char *p, *e;

		while (l && (line[l - 1] == '\n' || line[l - 1] == ' '))
			line[--l] = 0;
		if (l < nl || strcmp(line + l - nl, name) || (l > nl && line[l - nl - 1] != ' '))
			continue;
		p = strchr(line, ':');
		if (!p)
			continue;
		for (p++, n = 0; n < ncpu; n++, p = e) {
			cnt[n] = strtoull(p, &e, 10);
			if (e == p)
				break;
		}
		break;
	}
	fclose(f);
	return n;
}

static void test_session(long nfaults, int ncpu)
{
	struct perf_event_attr s, c[STROBE_MAX_COUNTERS];
	struct strobe_config cfg;
	struct strobe_cpu_stats cs[MAXCPU];
	unsigned long long t0, t1, total = 0;
	unsigned long long irq0[MAXCPU], irq1[MAXCPU];
	int nirq0 = 0, nirq1 = 0;
	pthread_t th;
	int fd, i, ok;
	unsigned j;
	/* small, 8 KiB with 4 KiB pages: forces wrap-around and PAD records */
	const uint32_t pages = STROBE_PAGE > 4096 ? 1 : 2;

	fd = open(DEV, O_RDWR);
	if (fd < 0) {
		check(0, "open", "%s", strerror(errno));
		return;
	}
	attr_init(&s, opt_sample->type, opt_sample->config);
	if (opt_freq) {
		s.freq = 1;
		s.sample_freq = opt_freq;
	} else {
		s.sample_period = opt_period;
	}
	for (j = 0; j < opt_nr_count; j++)
		attr_init(&c[j], opt_count[j]->type, opt_count[j]->config);
	nr_counters = opt_nr_count;
	cfg_init(&cfg, &s, c, opt_nr_count, pages);
	printf("# session: sample %s %s %llu, count", opt_sample->name,
	       opt_freq ? "freq" : "period", opt_freq ? opt_freq : opt_period);
	for (j = 0; j < opt_nr_count; j++)
		printf(" %s", opt_count[j]->name);
	printf("\n");
	if (ioctl(fd, STROBE_IOC_CONFIG, &cfg) < 0) {
		check(0, "config", "errno %d (%s)", errno, strerror(errno));
		close(fd);
		return;
	}
	check(1, "config", "%s", "");
	map_rings(fd, pages, ncpu, 0);

	drain_fd = fd;
	drain_stop = 0;
	if (pthread_create(&th, NULL, drain_thread, NULL)) {
		check(0, "pthread", "%s", "");
		return;
	}
	/* fault in everything we have so far: the workload is the only faulter */
	mlockall(MCL_CURRENT);
	sleep_ms(50);

	if (opt_irq)
		nirq0 = irq_counts(opt_irq, irq0, ncpu);
	hot_tid = gettid();
	t0 = now_ns();
	check(ioctl(fd, STROBE_IOC_START, 0) == 0, "start", "errno %d", errno);
	expect_err(fd, STROBE_IOC_START, NULL, EBUSY, "start-twice-ebusy");
	sleep_ms(100);
	workload(nfaults, opt_hot_ms);
	sleep_ms(100);	/* every CPU takes samples after the workload */
	check(ioctl(fd, STROBE_IOC_STOP, 0) == 0, "stop", "errno %d", errno);
	t1 = now_ns();
	if (opt_irq)
		nirq1 = irq_counts(opt_irq, irq1, ncpu);
	drain_stop = 1;
	pthread_join(th, NULL);
	drain_all();
	hot_tid = 0;

	{
		struct pollfd p = { fd, POLLIN, 0 };
		int r = poll(&p, 1, 0);

		check(r == 0, "poll-empty-after-drain", "poll %d revents %#x", r, p.revents);
	}
	printf("# poll wakeups seen while running: %lu\n", polls_ready);

	ok = get_stats(fd, cs, ncpu) >= ncpu;
	check(ok, "stats-nr-cpus", "%s", "");
	for (i = 0; i < nr_rings; i++) {
		struct ring *r = &rings[i];
		char name[64];

		printf("# cpu %d: samples %llu (user %llu kernel %llu) in %.3f s, %.0f/s, "
		       "lost %llu lost-recs %llu pads %llu handler avg %llu ns max %llu ns\n",
		       r->cpu, r->samples, r->user, r->kernel, (t1 - t0) / 1e9,
		       r->samples / ((t1 - t0) / 1e9), cs[i].lost, r->lost_recs, r->pads,
		       cs[i].samples ? cs[i].handler_ns_total / (cs[i].samples + cs[i].lost) : 0,
		       cs[i].handler_ns_max);
		for (j = 0; j < nr_counters; j++)
			printf("# cpu %d: %s first %llu last %llu (+%llu) stats %llu\n", r->cpu,
			       opt_count[j]->name, r->first_ctr[j], r->last_ctr[j],
			       r->last_ctr[j] - r->first_ctr[j], cs[i].counters[j]);
		snprintf(name, sizeof(name), "cpu%d-samples", r->cpu);
		check(r->samples > 50, name, "%llu samples", r->samples);
		snprintf(name, sizeof(name), "cpu%d-records-valid", r->cpu);
		check(!r->bad && !r->badcpu && !r->badflags, name, "bad %llu badcpu %llu badflags %llu",
		      r->bad, r->badcpu, r->badflags);
#if defined(__x86_64__) || defined(__aarch64__)
		snprintf(name, sizeof(name), "cpu%d-mode-matches-ip", r->cpu);
		check(!r->badmode, name, "%llu samples with a user/kernel flag that "
		      "contradicts their ip", r->badmode);
#endif
		snprintf(name, sizeof(name), "cpu%d-time-monotonic", r->cpu);
		check(!r->min_time_violations, name, "%llu", r->min_time_violations);
		snprintf(name, sizeof(name), "cpu%d-tsc-monotonic", r->cpu);
		check(!r->tsc_violations, name, "%llu", r->tsc_violations);
#if defined(__x86_64__) || defined(__aarch64__)
		snprintf(name, sizeof(name), "cpu%d-tsc-exact", r->cpu);
		check(r->tsc_exact == r->samples, name, "%llu of %llu", r->tsc_exact, r->samples);
#endif
		snprintf(name, sizeof(name), "cpu%d-counter-monotonic", r->cpu);
		check(!r->ctr_violations, name, "%llu", r->ctr_violations);
		for (j = 0; j < nr_counters; j++) {
			/* cycles and instructions run on every CPU, idle or not */
			if (opt_count[j]->type != PERF_TYPE_HARDWARE)
				continue;
			snprintf(name, sizeof(name), "cpu%d-%s-increase", r->cpu, opt_count[j]->name);
			check(r->first_ctr[j] > 0 && r->last_ctr[j] > r->first_ctr[j], name,
			      "first %llu last %llu", r->first_ctr[j], r->last_ctr[j]);
		}
		snprintf(name, sizeof(name), "cpu%d-time-in-session", r->cpu);
		check(r->first_time + 1000000 >= t0 && r->last_time <= t1 + 1000000, name,
		      "first %llu last %llu session %llu..%llu", r->first_time, r->last_time, t0, t1);
		snprintf(name, sizeof(name), "cpu%d-stats-samples-match", r->cpu);
		check(cs[i].samples == r->samples, name, "stats %llu read %llu",
		      cs[i].samples, r->samples);
		snprintf(name, sizeof(name), "cpu%d-stats-lost-match", r->cpu);
		check(cs[i].lost == r->ctrl->lost && r->lost_sum <= cs[i].lost, name,
		      "stats %llu ctrl %llu records %llu", cs[i].lost, r->ctrl->lost, r->lost_sum);
		snprintf(name, sizeof(name), "cpu%d-stats-counters", r->cpu);
		ok = cs[i].nr_counters == nr_counters;
		for (j = 0; ok && j < nr_counters; j++)
			ok = cs[i].counters[j] >= r->last_ctr[j];
		check(ok, name, "stats has %llu counters, or a total below the last sample's",
		      cs[i].nr_counters);
		snprintf(name, sizeof(name), "cpu%d-handler-time", r->cpu);
		check(cs[i].handler_ns_max > 0 && cs[i].handler_ns_max < 10000000, name,
		      "max %llu ns", cs[i].handler_ns_max);
		if (opt_irq) {
			snprintf(name, sizeof(name), "cpu%d-irq-%s", r->cpu, opt_irq);
			printf("# cpu %d: %s interrupts %llu during the session, samples + lost %llu\n",
			       r->cpu, opt_irq, i < nirq0 && i < nirq1 ? irq1[i] - irq0[i] : 0,
			       r->samples + cs[i].lost);
			check(i < nirq0 && i < nirq1 && irq1[i] - irq0[i] >= r->samples + cs[i].lost,
			      name, "no /proc/interrupts line %s for this CPU, or fewer interrupts "
			      "than samples", opt_irq);
		}
		total += r->last_ctr[opt_pf_index];
	}
	{
		unsigned long long wraps = 0;

		for (i = 0; i < nr_rings; i++)
			wraps += rings[i].pads + (rings[i].ctrl->head >= rings[i].size);
		check(wraps > 0, "rings-wrapped", "no ring wrapped around");
	}
	printf("# page faults counted %llu, workload %ld\n", total, nfaults);
	check(total >= (unsigned long long)nfaults && total <= (unsigned long long)nfaults * 102 / 100,
	      "page-faults-within-2pct", "counted %llu want %ld", total, nfaults);

	/*
	 * The workload thread's user-mode samples resolve to its own code: the
	 * loops in section strobe_hot (it runs nothing else in user mode but a
	 * few instructions around them, and the vDSO clock read).
	 */
	printf("# workload tid: %llu user samples, %llu in strobe_hot [%p, %p), "
	       "%llu kernel samples; first outside: %#llx\n", hot_user, hot_user_in,
	       (void *)__start_strobe_hot, (void *)__stop_strobe_hot, hot_kernel, hot_first_out);
	check(hot_user >= 20 && hot_user_in * 100 >= hot_user * 90, "user-pc-in-workload",
	      "%llu of %llu user samples of the workload thread in strobe_hot (want >= 20, 90%%)",
	      hot_user_in, hot_user);

	/* restart after stop keeps working; counters keep running totals */
	check(ioctl(fd, STROBE_IOC_START, 0) == 0 && ioctl(fd, STROBE_IOC_STOP, 0) == 0,
	      "restart", "errno %d", errno);
	unmap_rings();
	close(fd);
}

/* The page-size ABI of the rings' mappings, on a session of 4-page rings. */
static void test_mmap_abi(int ncpu)
{
	struct perf_event_attr s;
	struct strobe_config cfg;
	int fd = open(DEV, O_RDWR);

	attr_init(&s, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	s.sample_period = 1000000;
	cfg_init(&cfg, &s, NULL, 0, 4);
	if (fd < 0 || ioctl(fd, STROBE_IOC_CONFIG, &cfg) < 0) {
		check(0, "mmap-abi-config", "errno %d (%s)", errno, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	printf("# page size %zu\n", STROBE_PAGE);
	map_rings(fd, 4, ncpu, 1);
	unmap_rings();
	close(fd);
}

/*
 * The kernel lowers kernel.perf_event_max_sample_rate when PMU interrupts
 * seem to take long (under TCG a vCPU can be descheduled inside one), and
 * a throttled event on a tickless idle CPU stays stopped until the next
 * tick: the overflow test below needs 5000 samples/s.
 */
static void ensure_sample_rate(unsigned long min, unsigned long want)
{
	const char *path = "/proc/sys/kernel/perf_event_max_sample_rate";
	unsigned long rate = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	if (fscanf(f, "%lu", &rate) != 1)
		rate = 0;
	fclose(f);
	if (rate >= min)
		return;
	printf("# perf_event_max_sample_rate was lowered to %lu by the kernel; "
	       "set to %lu\n", rate, want);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%lu\n", want);
		fclose(f);
	}
}

/* A ring nobody drains: samples are dropped and counted, never overwritten. */
static void test_overflow(int ncpu)
{
	struct perf_event_attr s;
	struct strobe_config cfg;
	struct strobe_cpu_stats cs[MAXCPU];
	int fd, i;

	fd = open(DEV, O_RDWR);
	if (fd < 0) {
		check(0, "overflow-open", "%s", strerror(errno));
		return;
	}
	attr_init(&s, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	s.sample_period = 200000;	/* 200 us */
	nr_counters = 0;
	cfg_init(&cfg, &s, NULL, 0, 1);
	if (ioctl(fd, STROBE_IOC_CONFIG, &cfg) < 0) {
		check(0, "overflow-config", "errno %d", errno);
		close(fd);
		return;
	}
	map_rings(fd, 1, ncpu, 0);
	{
		struct pollfd p = { fd, POLLIN, 0 };

		ioctl(fd, STROBE_IOC_START, 0);
		i = poll(&p, 1, 5000);
		check(i == 1 && (p.revents & POLLIN), "poll-wakes-at-watermark",
		      "poll %d revents %#x", i, p.revents);
	}
	sleep_ms(300);
	drain_all();		/* frees space: next sample brings a LOST record */
	sleep_ms(50);
	ioctl(fd, STROBE_IOC_STOP, 0);
	drain_all();
	get_stats(fd, cs, ncpu);
	for (i = 0; i < nr_rings; i++) {
		struct ring *r = &rings[i];
		char name[64];

		printf("# overflow cpu %d: samples %llu lost %llu lost-recs %llu lost-sum %llu\n",
		       r->cpu, r->samples, cs[i].lost, r->lost_recs, r->lost_sum);
		snprintf(name, sizeof(name), "overflow-cpu%d", r->cpu);
		check(!r->bad && cs[i].lost > 0 && r->lost_recs > 0 && r->lost_sum > 0 &&
		      r->lost_sum <= cs[i].lost && cs[i].samples == r->samples &&
		      !r->min_time_violations, name,
		      "bad %llu lost %llu lost-recs %llu lost-sum %llu samples %llu/%llu",
		      r->bad, cs[i].lost, r->lost_recs, r->lost_sum, cs[i].samples, r->samples);
	}
	unmap_rings();
	close(fd);
}

/* Read one unsigned number from a sysfs/tracefs file; -1 if there is none. */
static long long read_num(const char *path)
{
	FILE *f = fopen(path, "r");
	long long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * CONFIG with cpu-clock sampling and @n counting events; 0 or the errno.
 * *refused gets strobe_config.refused.  On success the session is left
 * configured in *fdp, else closed.
 */
static int try_counters(struct perf_event_attr *c, unsigned n, uint32_t *refused, int *fdp)
{
	struct perf_event_attr s;
	struct strobe_config cfg;
	int fd = open(DEV, O_RDWR), e = 0;

	*fdp = -1;
	if (fd < 0)
		return errno;
	attr_init(&s, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	s.sample_period = 1000000;
	cfg_init(&cfg, &s, c, n, 4);
	if (ioctl(fd, STROBE_IOC_CONFIG, &cfg) < 0)
		e = errno;
	*refused = cfg.refused;
	if (e)
		close(fd);
	else
		*fdp = fd;
	return e;
}

/* Run a configured session for @ms while this thread yields; per-counter sums of STATS. */
static void run_counters(int fd, unsigned n, int ncpu, unsigned long long *sum, int ms)
{
	struct strobe_cpu_stats cs[MAXCPU];
	unsigned long long t_end;
	int i;
	unsigned j;

	memset(sum, 0, n * sizeof(*sum));
	if (ioctl(fd, STROBE_IOC_START, 0) < 0) {
		check(0, "counters-start", "errno %d", errno);
		return;
	}
	t_end = now_ns() + ms * 1000000ULL;
	while (now_ns() < t_end) {
		sched_yield();
		usleep(100);
	}
	ioctl(fd, STROBE_IOC_STOP, 0);
	if (get_stats(fd, cs, ncpu) < ncpu)
		return;
	for (i = 0; i < ncpu; i++)
		for (j = 0; j < n; j++)
			sum[j] += cs[i].counters[j];
}

/*
 * Which counting events the overflow handler may read (strobe.c,
 * strobe_counter_readable()): refused with EOPNOTSUPP and the event's
 * index in strobe_config.refused, or accepted and counting.
 */
static void test_counter_kinds(int ncpu)
{
	struct perf_event_attr c[4];
	unsigned long long sum[4];
	uint32_t refused;
	long long type, id;
	int fd, e;

	/* task-clock: its read is not NMI-safe (second of two counters) */
	attr_init(&c[0], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	attr_init(&c[1], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	e = try_counters(c, 2, &refused, &fd);
	check(e == EOPNOTSUPP && refused == 2, "counter-task-clock-refused",
	      "errno %d (%s), refused %u; want EOPNOTSUPP, 2", e, strerror(e), refused);
	if (fd >= 0)
		close(fd);

	/*
	 * Another PMU, one the driver does not trust: msr/tsc/ (x86), else a
	 * kprobe on schedule() (the kprobe PMU reads the function name from
	 * config1, a pointer into this process).
	 */
	type = read_num("/sys/bus/event_source/devices/msr/type");
	if (type >= 0) {
		attr_init(&c[0], type, 0);	/* msr/tsc/ */
	} else {
		type = read_num("/sys/bus/event_source/devices/kprobe/type");
		attr_init(&c[0], type, 0);
		c[0].config1 = (uintptr_t)"schedule";
	}
	if (type < 0) {
		printf("SKIP counter-other-pmu-refused: neither an msr nor a kprobe PMU\n");
	} else {
		e = try_counters(c, 1, &refused, &fd);
		check(e == EOPNOTSUPP && refused == 1, "counter-other-pmu-refused",
		      "%s (type %lld): errno %d (%s), refused %u; want EOPNOTSUPP, 1",
		      c[0].config1 ? "kprobe schedule" : "msr/tsc/", type, e, strerror(e), refused);
		printf("# counter-other-pmu-refused: %s\n", c[0].config1 ? "kprobe on schedule" :
		       "msr/tsc/");
		if (fd >= 0)
			close(fd);
	}

	/* software events that are plain counters, and cpu-clock: accepted, count */
	attr_init(&c[0], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	attr_init(&c[1], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
	attr_init(&c[2], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS);
	attr_init(&c[3], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	e = try_counters(c, 4, &refused, &fd);
	check(!e && !refused, "counter-software-accepted", "errno %d (%s), refused %u",
	      e, strerror(e), refused);
	if (fd >= 0) {
		run_counters(fd, 4, ncpu, sum, 200);
		printf("# software counters: page-faults %llu context-switches %llu "
		       "cpu-migrations %llu cpu-clock %llu ns\n", sum[0], sum[1], sum[2], sum[3]);
		check(sum[1] > 0 && sum[3] > 100000000ULL, "counter-software-count",
		      "context-switches %llu, cpu-clock %llu ns (want > 0, > 0.1 s)", sum[1], sum[3]);
		close(fd);
	}

	/* a tracepoint: counted by perf_swevent_event() too, accepted */
	id = read_num("/sys/kernel/tracing/events/sched/sched_switch/id");
	if (id < 0)
		id = read_num("/sys/kernel/debug/tracing/events/sched/sched_switch/id");
	if (id < 0) {
		printf("SKIP counter-tracepoint-accepted: no tracefs sched/sched_switch\n");
		return;
	}
	attr_init(&c[0], PERF_TYPE_TRACEPOINT, id);
	e = try_counters(c, 1, &refused, &fd);
	check(!e && !refused, "counter-tracepoint-accepted", "sched:sched_switch: errno %d (%s)",
	      e, strerror(e));
	if (fd >= 0) {
		run_counters(fd, 1, ncpu, sum, 200);
		printf("# sched:sched_switch counted %llu\n", sum[0]);
		check(sum[0] > 0, "counter-tracepoint-count", "sched:sched_switch counted 0");
		close(fd);
	}
}

static int cpu_set_online(int cpu, int on)
{
	char path[64];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ok = fprintf(f, "%d\n", on) > 0;
	if (fclose(f))
		ok = 0;
	return ok ? 0 : -1;
}

static volatile int spin_stop;

static void *spin_thread(void *arg)
{
	cpu_set_t set;
	unsigned long x = 1;

	CPU_ZERO(&set);
	CPU_SET((int)(intptr_t)arg, &set);
	sched_setaffinity(0, sizeof(set), &set);
	while (!spin_stop)
		x = hot_spin(10000, x);
	return (void *)x;
}

/* Keep CPU @cpu busy for @ms (so that it takes samples whatever the event). */
static void spin_on(int cpu, int ms)
{
	pthread_t th;

	spin_stop = 0;
	if (pthread_create(&th, NULL, spin_thread, (void *)(intptr_t)cpu)) {
		sleep_ms(ms);
		return;
	}
	sleep_ms(ms);
	spin_stop = 1;
	pthread_join(th, NULL);
}

/*
 * CPU hotplug during a session: CPU 1 goes offline while sampling, comes
 * back, then goes offline while the session is stopped and comes back
 * after START.  Its ring must say so (OFFLINE, ONLINE, OFFLINE, ONLINE, with
 * their times), hold no sample in a gap, and samples again after each
 * return; counters go on from where they were; STATS counts the
 * transitions; CPU 0 is untouched.  Then a session is closed while CPU 1 is
 * offline, and the next one works.
 */
static void test_hotplug(int ncpu)
{
	struct perf_event_attr s, c[STROBE_MAX_COUNTERS];
	struct strobe_config cfg;
	struct strobe_cpu_stats cs[MAXCPU];
	unsigned long long t_off[2][2], t_on[2][2];
	struct ring *r0, *r1;
	pthread_t th;
	int fd, i, ok;
	unsigned j;
	const uint32_t pages = 16;

	if (ncpu < 2 || access("/sys/devices/system/cpu/cpu1/online", W_OK)) {
		printf("SKIP hotplug: %s\n", ncpu < 2 ? "one CPU" :
		       "/sys/devices/system/cpu/cpu1/online is not writable");
		return;
	}
	fd = open(DEV, O_RDWR);
	if (fd < 0) {
		check(0, "hotplug-open", "%s", strerror(errno));
		return;
	}
	attr_init(&s, opt_sample->type, opt_sample->config);
	if (opt_freq) {
		s.freq = 1;
		s.sample_freq = opt_freq;
	} else {
		s.sample_period = opt_period;
	}
	for (j = 0; j < opt_nr_count; j++)
		attr_init(&c[j], opt_count[j]->type, opt_count[j]->config);
	/* and cpu-clock, which counts on every CPU: it must go on across a gap */
	nr_counters = opt_nr_count;
	if (nr_counters < STROBE_MAX_COUNTERS)
		attr_init(&c[nr_counters++], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	cfg_init(&cfg, &s, c, nr_counters, pages);
	if (ioctl(fd, STROBE_IOC_CONFIG, &cfg) < 0) {
		check(0, "hotplug-config", "errno %d (%s)", errno, strerror(errno));
		close(fd);
		return;
	}
	map_rings(fd, pages, ncpu, 0);
	r0 = &rings[0];
	r1 = &rings[1];
	drain_fd = fd;
	drain_stop = 0;
	if (pthread_create(&th, NULL, drain_thread, NULL)) {
		check(0, "hotplug-pthread", "%s", "");
		return;
	}

	/* 1: while sampling */
	ok = ioctl(fd, STROBE_IOC_START, 0) == 0;
	spin_on(1, 300);
	t_off[0][0] = now_ns();
	ok &= cpu_set_online(1, 0) == 0;
	t_off[0][1] = now_ns();
	sleep_ms(300);
	t_on[0][0] = now_ns();
	ok &= cpu_set_online(1, 1) == 0;
	t_on[0][1] = now_ns();
	spin_on(1, 400);
	drain_all();
	{
		unsigned long long n = r1->since_online;

		printf("# hotplug: cpu 1 samples before %llu, in the gap %llu, after %llu\n",
		       r1->before_samples, r1->gap_samples, n);
		check(r1->offline_recs == 1 && r1->online_recs == 1 && n > 20,
		      "hotplug-samples-resume", "records offline %llu online %llu, "
		      "%llu samples after the return (want 1, 1, > 20)",
		      r1->offline_recs, r1->online_recs, n);
	}

	/* 2: offline while stopped, START without it, then back */
	ok &= ioctl(fd, STROBE_IOC_STOP, 0) == 0;
	t_off[1][0] = now_ns();
	ok &= cpu_set_online(1, 0) == 0;
	t_off[1][1] = now_ns();
	ok &= ioctl(fd, STROBE_IOC_START, 0) == 0;
	sleep_ms(200);
	t_on[1][0] = now_ns();
	ok &= cpu_set_online(1, 1) == 0;
	t_on[1][1] = now_ns();
	spin_on(1, 400);
	ok &= ioctl(fd, STROBE_IOC_STOP, 0) == 0;
	check(ok, "hotplug-steps", "an ioctl or a write to cpu1/online failed: %s", strerror(errno));

	drain_stop = 1;
	pthread_join(th, NULL);
	drain_all();
	get_stats(fd, cs, ncpu);

	for (i = 0; i < 2; i++) {
		printf("# hotplug cycle %d: offline %llu..%llu record %llu, online %llu..%llu "
		       "record %llu\n", i + 1, t_off[i][0], t_off[i][1], r1->off_times[i],
		       t_on[i][0], t_on[i][1], r1->on_times[i]);
	}
	printf("# hotplug: cpu 1 samples %llu (before %llu, in gaps %llu, after the last "
	       "return %llu), stats offline %llu online %llu; cpu 0 samples %llu\n",
	       r1->samples, r1->before_samples, r1->gap_samples, r1->since_online,
	       cs[1].offline, cs[1].online, r0->samples);
	check(r1->offline_recs == 2 && r1->online_recs == 2 && !r1->hp_order_bad && !r1->bad,
	      "hotplug-records", "offline %llu online %llu out of order %llu bad %llu "
	      "(want 2, 2, 0, 0)", r1->offline_recs, r1->online_recs, r1->hp_order_bad, r1->bad);
	ok = r1->offline_recs == 2 && r1->online_recs == 2;
	for (i = 0; ok && i < 2; i++) {
		/* OFFLINE: when the CPU went; ONLINE: sampling again, soon after it came */
		ok = r1->off_times[i] + 1000000 >= t_off[i][0] && r1->off_times[i] <= t_off[i][1] &&
		     r1->on_times[i] >= t_on[i][0] && r1->on_times[i] <= t_on[i][1] + 2000000000ULL;
	}
	check(ok, "hotplug-record-times", "a record's time is outside its transition "
	      "(see the # lines above)");
	check(!r1->gap_samples && r1->before_samples > 20 && r1->since_online > 20,
	      "hotplug-no-samples-in-gap", "%llu samples inside a gap, %llu before, %llu after "
	      "(want 0, > 20, > 20)", r1->gap_samples, r1->before_samples, r1->since_online);
	check(!r1->ctr_violations && !r1->min_time_violations &&
	      r1->last_ctr[nr_counters - 1] > r1->first_ctr[nr_counters - 1] &&
	      cs[1].counters[nr_counters - 1] >= r1->last_ctr[nr_counters - 1],
	      "hotplug-counters-continue", "%llu counter decreases, %llu time decreases on "
	      "cpu 1; cpu-clock first %llu last %llu stats %llu", r1->ctr_violations,
	      r1->min_time_violations, r1->first_ctr[nr_counters - 1],
	      r1->last_ctr[nr_counters - 1], cs[1].counters[nr_counters - 1]);
	check(cs[1].offline == 2 && cs[1].online == 2 && !cs[0].offline && !cs[0].online &&
	      cs[1].samples == r1->samples, "hotplug-stats",
	      "cpu 1 offline %llu online %llu samples %llu (read %llu), cpu 0 offline %llu "
	      "online %llu", cs[1].offline, cs[1].online, cs[1].samples, r1->samples,
	      cs[0].offline, cs[0].online);
	check(!r0->offline_recs && !r0->online_recs && r0->samples > 50 && !r0->bad,
	      "hotplug-cpu0-unaffected", "cpu 0: records offline %llu online %llu, samples %llu",
	      r0->offline_recs, r0->online_recs, r0->samples);
	for (j = 0; j < nr_counters; j++)
		printf("# hotplug cpu 1: %s first %llu last %llu stats %llu\n",
		       j < opt_nr_count ? opt_count[j]->name : "cpu-clock",
		       r1->first_ctr[j], r1->last_ctr[j], cs[1].counters[j]);
	unmap_rings();
	close(fd);

	/* 3: close while CPU 1 is offline, bring it back, open again */
	fd = open(DEV, O_RDWR);
	cfg_init(&cfg, &s, c, nr_counters, pages);
	ok = fd >= 0 && ioctl(fd, STROBE_IOC_CONFIG, &cfg) == 0 &&
	     ioctl(fd, STROBE_IOC_START, 0) == 0 && cpu_set_online(1, 0) == 0;
	if (fd >= 0)
		close(fd);
	ok &= cpu_set_online(1, 1) == 0;
	sleep_ms(50);
	fd = open(DEV, O_RDWR);
	cfg_init(&cfg, &s, c, nr_counters, pages);
	ok &= fd >= 0 && ioctl(fd, STROBE_IOC_CONFIG, &cfg) == 0 &&
	      ioctl(fd, STROBE_IOC_START, 0) == 0 && ioctl(fd, STROBE_IOC_STOP, 0) == 0;
	check(ok, "hotplug-close-while-offline", "errno %d (%s)", errno, strerror(errno));
	if (fd >= 0)
		close(fd);
	cpu_set_online(1, 1);
}

/* /dev/strobe is root only: an unprivileged process cannot open it. */
static void test_nonroot(void)
{
	int st = 0;
	pid_t pid = fork();

	if (pid == 0) {
		int fd;

		if (setgid(65534) || setuid(65534))
			_exit(3);
		fd = open(DEV, O_RDWR);
		_exit(fd >= 0 ? 1 : (errno == EACCES || errno == EPERM) ? 0 : 2);
	}
	waitpid(pid, &st, 0);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "nonroot-open-refused",
	      "child status %#x", st);
}

static void usage(void)
{
	fprintf(stderr, "usage: reader [--sample EVENT] [--period N | --freq HZ] "
		"[--count EVENT[,EVENT...]] [--irq NAME] [--hot-ms MS] [NFAULTS]\n");
	exit(2);
}

static void parse_count(char *list)
{
	char *tok, *save = NULL;

	opt_nr_count = 0;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (opt_nr_count == STROBE_MAX_COUNTERS)
			usage();
		opt_count[opt_nr_count++] = event_by_name(tok);
	}
}

int main(int argc, char **argv)
{
	long nfaults = 16384;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int fd, a;
	unsigned j;
	char deflist[] = "page-faults";

	opt_sample = event_by_name("cpu-clock");
	parse_count(deflist);
	for (a = 1; a < argc; a++) {
		char *opt = argv[a], *val = strchr(opt, '=');

		if (strncmp(opt, "--", 2)) {
			nfaults = atol(opt);
			continue;
		}
		if (val)
			*val++ = 0;
		else if (a + 1 < argc)
			val = argv[++a];
		else
			usage();
		if (!strcmp(opt, "--sample"))
			opt_sample = event_by_name(val);
		else if (!strcmp(opt, "--period"))
			opt_period = strtoull(val, NULL, 0), opt_freq = 0;
		else if (!strcmp(opt, "--freq"))
			opt_freq = strtoull(val, NULL, 0);
		else if (!strcmp(opt, "--count"))
			parse_count(val);
		else if (!strcmp(opt, "--irq"))
			opt_irq = val;
		else if (!strcmp(opt, "--hot-ms"))
			opt_hot_ms = atoi(val);
		else
			usage();
	}
	for (j = 0; j < opt_nr_count; j++)
		if (!strcmp(opt_count[j]->name, "page-faults"))
			opt_pf_index = j;
	if (opt_pf_index < 0 || nfaults <= 0 || (!opt_freq && !opt_period))
		usage();

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# strobe reader: %d CPUs, %ld faults\n", ncpu, nfaults);
	fd = open(DEV, O_RDWR);
	check(fd >= 0, "open", "%s", strerror(errno));
	if (fd < 0)
		goto out;
	invalid_ioctls(fd);
	close(fd);
	test_nonroot();
	{
		/* informational: no PMU in x86 TCG (-ENOENT); arm64 TCG has one */
		struct perf_event_attr ca;
		struct strobe_config cfg;
		int r;

		fd = open(DEV, O_RDWR);
		attr_init(&ca, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
		ca.sample_period = 1000000;
		cfg_init(&cfg, &ca, NULL, 0, 1);
		r = ioctl(fd, STROBE_IOC_CONFIG, &cfg);
		printf("# cycles sampling config: %s\n", r ? strerror(errno) : "ok");
		close(fd);
	}

	test_session(nfaults, ncpu);
	test_mmap_abi(ncpu);
	test_counter_kinds(ncpu);
	test_hotplug(ncpu);
	ensure_sample_rate(20000, 100000);
	test_overflow(ncpu);
out:
	printf("RESULT %s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
