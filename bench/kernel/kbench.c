/*
 * kbench.c - what one sample costs: strobe.ko against perf_event_open(2),
 * same sampling configuration, same workload, same machine (run as root,
 * static binary, inside the guest of bench/kernel/run.sh).
 *
 *   gcc -static -O2 -Wall -Wextra -Werror -o kbench kbench.c -lpthread
 *   kbench [-s SECONDS] [-r ROUNDS] [-p PERIOD] [--event cpu-clock|cycles]
 *          [-e COUNTER,...] [-b PAGES] [-m base,driver,perf] [-n ITERATIONS]
 *          [-t INTERRUPTION_NS] [-v]
 *
 *   -s  target seconds of one workload run (default 3): the work per thread
 *       is calibrated once, unless -n gives it in loop iterations
 *   -r  rounds (default 5); the modes run once per round, in an order that
 *       rotates every round, and the medians are reported
 *   -p  sampling period: ns for cpu-clock (default 100000, i.e. 10 kHz),
 *       events for cycles (default 1000000)
 *   --event  sampling event: cpu-clock (hrtimer, hard IRQ; default) or
 *       cycles (hardware PMU, e.g. an arm64 guest with PMUv3)
 *   -e  counting events read at every sample (default cpu-clock,page-faults)
 *   -b  ring pages per CPU, power of two (default 128), for both backends
 *   -m  modes (default base,driver,perf)
 *   -t  a chunk of work slower than usual by more than this was interrupted
 *       (default 5000 ns, for a TCG guest; about 500 on hardware)
 *   -v  print each run's histogram of chunk excess times
 *
 * Modes:
 *   base    the workload alone;
 *   driver  /dev/strobe: the sampling event on every online CPU with the
 *           counting events, rings drained by a consumer thread;
 *   perf    per CPU a perf_event_open group with the same events, set up as
 *           strobed's perf backend does (daemon/backend_perf.c, perf_ring_open():
 *           PERF_SAMPLE_IDENTIFIER|IP|TID|TIME|CPU|PERIOD|READ,
 *           PERF_FORMAT_GROUP|ID, side-band, CLOCK_MONOTONIC, watermark at a
 *           quarter of the ring), its ring drained by the same kind of
 *           consumer thread.
 * The consumer does what a consumer must and no more: it walks the records,
 * counts samples and losses, and keeps each sample's time.
 *
 * Workload: one thread per online CPU, pinned, doing the same fixed amount
 * of integer and cache work.  T = mean over threads of each thread's
 * CLOCK_MONOTONIC elapsed time, so (T - T_base) * ncpu is the CPU time that
 * sampling took from the workload, including the consumer's own CPU.
 * Samples are counted inside the workload's time window only.
 *
 * The work is done in chunks of about 10 us at the speed measured by the
 * calibration (shorter if that was disturbed), each timed with the CPU's
 * counter (TSC, CNTVCT).  A chunk slower than the thread's median chunk by
 * more than -t was interrupted: the excess is what that interruption cost
 * the workload.  This sees each sample's whole cost to the interrupted
 * code (entry, hrtimer or PMU handling, the overflow handler, exit, cache
 * refill) and, unlike T, is little disturbed by a host that deschedules
 * the guest's vCPUs: excesses over 1 ms are left out, and the median is
 * used.
 *
 * Reported per mode: median T, slowdown against base, samples and loss per
 * run, the delivered rate, the overhead per sample
 *   (T_mode - T_base) * ncpu / samples
 * from the medians and as the median of per-round (paired) values; the
 * interruptions per second and CPU and their median cost; the stolen time
 * per sample, (sum of excesses - the same round's base sum) / samples; and
 * for the driver its own handler time from STROBE_IOC_STATS:
 *   handler_ns_total / (samples + lost), and handler_ns_max.
 * It measures; it never fails on a number.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include "../../kernel/uapi/strobe.h"

#define DEV		"/dev/strobe"
#define MAXCPU		256
#define MAXROUNDS	64
#define WORK_WORDS	(16 * 1024)	/* 128 KiB per thread */

enum mode { M_BASE, M_DRIVER, M_PERF, NR_MODES };
static const char *const mode_name[NR_MODES] = { "base", "driver", "perf" };

struct evspec {
	const char *name;
	uint32_t type;
	uint64_t config;
};

static const struct evspec known_events[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
};

/* configuration */
static double opt_secs = 3.0;
static int opt_rounds = 5;
static uint64_t opt_period;
static const struct evspec *sampler = &known_events[0];
static const struct evspec *counters[STROBE_MAX_COUNTERS];
static unsigned nr_counters;
static char counters_str[256] = "cpu-clock,page-faults";
static unsigned opt_pages = 128;
static int modes_on[NR_MODES] = { 1, 1, 1 };
static uint64_t opt_iters;
static int ncpu;
static long pagesize;

static void die(const char *what)
{
	fprintf(stderr, "kbench: %s: %s\n", what, strerror(errno));
	exit(2);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static const struct evspec *find_event(const char *name)
{
	for (size_t i = 0; i < sizeof(known_events) / sizeof(known_events[0]); i++)
		if (!strcmp(known_events[i].name, name))
			return &known_events[i];
	fprintf(stderr, "kbench: unknown event '%s'\n", name);
	exit(2);
}

/* ------------------------------------------------------------------ */
/* Workload                                                             */

struct worker {
	pthread_t th;
	int cpu;
	uint64_t iters;
	uint64_t t0, t1;	/* CLOCK_MONOTONIC, ns */
	uint64_t k0, k1;	/* ticks() at t0 and t1 */
	uint64_t sink;
	uint64_t *buf;
	uint32_t *chunk;	/* ticks per chunk of chunk_iters iterations */
	uint64_t nr_chunks;
};

/* Iterations per chunk: about 10 us of undisturbed work, set after calibration. */
static uint64_t chunk_iters = 1ULL << 62;
static size_t chunk_cap;

/* A cheap user-space clock to time the chunks (converted to ns per run). */
static inline uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
	uint64_t v;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
#else
	return now_ns();
#endif
}

static struct worker workers[MAXCPU];
static pthread_barrier_t start_barrier;

static uint64_t work(uint64_t *buf, uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[x & (WORK_WORDS - 1)] += x;
	}
	return x;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
	pthread_barrier_wait(&start_barrier);
	uint64_t x = 0x9e3779b97f4a7c15ULL + w->cpu, left = w->iters, nc = 0, prev, k, d;

	w->t0 = now_ns();
	w->k0 = prev = ticks();
	while (left) {
		uint64_t n = left < chunk_iters ? left : chunk_iters;

		x = work(w->buf, n, x);
		left -= n;
		k = ticks();
		d = k - prev;
		prev = k;
		if (n == chunk_iters && nc < chunk_cap)
			w->chunk[nc++] = d > UINT32_MAX ? UINT32_MAX : d;
	}
	w->k1 = ticks();
	w->t1 = now_ns();
	w->sink = x;
	w->nr_chunks = nc;
	return NULL;
}

/*
 * Interruptions seen by the workload: a chunk that took longer than the
 * thread's median chunk by more than opt_thresh ns was interrupted, and its
 * excess is what the interruption cost the workload, caches included.  The
 * default threshold, 5 us, is above the 2-4 us jitter of a TCG guest's
 * chunks and below the 8-30 us a sample costs there; on hardware use about
 * 500 ns (-t).  Excesses above 1 ms are not interrupts but the host
 * descheduling a vCPU: they are counted apart and left out of the sum.
 */
static double opt_thresh = 5000;
#define EXCESS_CAP_NS	1000000.0

struct irqstat {
	uint64_t chunks;	/* full chunks timed */
	uint64_t hits;		/* interrupted chunks, excess <= cap */
	uint64_t huge;		/* excess > cap */
	double chunk_ns;	/* median chunk, mean over threads */
	double excess_ns;	/* sum of excesses <= cap, all threads */
	double median_ns;	/* median excess of the interrupted chunks */
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

static int opt_verbose;

static void irq_analyse(struct irqstat *st)
{
	static float *ex;
	static size_t excap;
	size_t nex = 0;
	uint64_t hist[16] = { 0 };	/* excess: < 0.5 us, then doubling */

	memset(st, 0, sizeof(*st));
	for (int i = 0; i < ncpu; i++) {
		struct worker *w = &workers[i];
		uint64_t n = w->nr_chunks;
		double nspt, med, thr;

		if (n < 16 || w->k1 <= w->k0)
			continue;
		nspt = (double)(w->t1 - w->t0) / (w->k1 - w->k0);
		qsort(w->chunk, n, sizeof(*w->chunk), cmp_u32);
		med = w->chunk[n / 2] * nspt;
		thr = opt_thresh;
		st->chunks += n;
		st->chunk_ns += med / ncpu;
		if (excap < nex + n) {
			excap = nex + n;
			ex = realloc(ex, excap * sizeof(*ex));
			if (!ex)
				die("realloc");
		}
		for (uint64_t c = 0; c < n; c++) {
			double e = w->chunk[c] * nspt - med;
			int b = 0;

			while (b < 15 && e >= 500.0 * (1 << b))
				b++;
			hist[b]++;
			if (e <= thr)
				continue;
			if (e > EXCESS_CAP_NS) {
				st->huge++;
				continue;
			}
			st->hits++;
			st->excess_ns += e;
			ex[nex++] = e;
		}
	}
	if (nex) {
		qsort(ex, nex, sizeof(*ex), cmp_float);
		st->median_ns = ex[nex / 2];
	}
	if (opt_verbose) {
		printf("# chunk excess histogram (us: count):");
		for (int b = 0; b < 16; b++)
			if (hist[b])
				printf(" <%g:%llu", b == 15 ? 1e9 : 0.5 * (1 << b),
				       (unsigned long long)hist[b]);
		printf("\n");
	}
}

/* One run of the workload on every CPU: the window, and T (mean elapsed). */
static double run_workload(uint64_t iters, uint64_t *win0, uint64_t *win1)
{
	uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
	int i;

	if (pthread_barrier_init(&start_barrier, NULL, ncpu + 1))
		die("pthread_barrier_init");
	for (i = 0; i < ncpu; i++) {
		workers[i].cpu = i;
		workers[i].iters = iters;
		workers[i].nr_chunks = 0;
		if (pthread_create(&workers[i].th, NULL, worker_main, &workers[i]))
			die("pthread_create");
	}
	pthread_barrier_wait(&start_barrier);
	for (i = 0; i < ncpu; i++) {
		pthread_join(workers[i].th, NULL);
		sum += workers[i].t1 - workers[i].t0;
		if (workers[i].t0 < lo)
			lo = workers[i].t0;
		if (workers[i].t1 > hi)
			hi = workers[i].t1;
	}
	pthread_barrier_destroy(&start_barrier);
	if (win0)
		*win0 = lo;
	if (win1)
		*win1 = hi;
	return sum / 1e9 / ncpu;
}

/* ------------------------------------------------------------------ */
/* Consumer: sample times, losses                                       */

struct ring {
	/* driver */
	volatile struct strobe_ring_ctrl *ctrl;
	/* perf */
	volatile struct perf_event_mmap_page *page;
	int fd;
	int cfds[STROBE_MAX_COUNTERS];
	/* both */
	const uint8_t *data;
	uint64_t size;
	uint8_t tmp[512];
};

static struct ring rings[MAXCPU];
static uint64_t *times;
static size_t nr_times, cap_times;
static uint64_t rec_lost, rec_throttle, rec_other, rec_bad;
static volatile int consumer_stop;
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;

static void keep_time(uint64_t t)
{
	if (nr_times == cap_times) {
		cap_times = cap_times ? 2 * cap_times : 65536;
		times = realloc(times, cap_times * sizeof(*times));
		if (!times)
			die("realloc");
	}
	times[nr_times++] = t;
}

static void drain_driver(struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->ctrl->head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->ctrl->tail;

	while (tail < head) {
		uint32_t off = tail & (r->size - 1);
		const struct strobe_rec_header *h = (const void *)(r->data + off);

		if (h->size < 8 || h->size % 8 || h->size > r->size - off) {
			rec_bad++;
			tail = head;
			break;
		}
		if (h->type == STROBE_REC_SAMPLE)
			keep_time(((const struct strobe_sample *)h)->time_ns);
		else if (h->type == STROBE_REC_LOST)
			rec_lost += ((const struct strobe_lost *)h)->lost;
		else if (h->type != STROBE_REC_PAD)
			rec_other++;
		tail += h->size;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&r->ctrl->tail, tail, __ATOMIC_RELAXED);
}

/* A perf record, copied out if it wraps the end of the ring. */
static const void *perf_rec(struct ring *r, uint64_t pos, uint16_t size)
{
	uint64_t off = pos & (r->size - 1);

	if (off + size <= r->size)
		return r->data + off;
	if (size > sizeof(r->tmp))
		return NULL;
	memcpy(r->tmp, r->data + off, r->size - off);
	memcpy(r->tmp + (r->size - off), r->data, size - (r->size - off));
	return r->tmp;
}

static void drain_perf(struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->page->data_tail;

	while (tail < head) {
		const struct perf_event_header *h0 =
			(const void *)(r->data + (tail & (r->size - 1)));
		struct perf_event_header h;
		const uint64_t *p;

		/* headers are 8-aligned and never wrap */
		h = *h0;
		if (h.size < sizeof(h) || h.size % 8 || !(p = perf_rec(r, tail, h.size))) {
			rec_bad++;
			tail = head;
			break;
		}
		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			/* header; identifier, ip, pid|tid, time, ... */
			keep_time(p[4]);
			break;
		case PERF_RECORD_LOST:
			rec_lost += p[2];	/* header; id, lost */
			break;
		case PERF_RECORD_THROTTLE:
			rec_throttle++;
			break;
		default:
			rec_other++;
		}
		tail += h.size;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&r->page->data_tail, tail, __ATOMIC_RELAXED);
}

static enum mode cur_mode;
static int drv_fd = -1;

static void drain_all(void)
{
	pthread_mutex_lock(&drain_lock);
	for (int i = 0; i < ncpu; i++) {
		if (cur_mode == M_DRIVER)
			drain_driver(&rings[i]);
		else
			drain_perf(&rings[i]);
	}
	pthread_mutex_unlock(&drain_lock);
}

static void *consumer_main(void *arg)
{
	struct pollfd pfd[MAXCPU];
	int n, i;

	(void)arg;
	if (cur_mode == M_DRIVER) {
		pfd[0].fd = drv_fd;
		pfd[0].events = POLLIN;
		n = 1;
	} else {
		for (i = 0; i < ncpu; i++) {
			pfd[i].fd = rings[i].fd;
			pfd[i].events = POLLIN;
		}
		n = ncpu;
	}
	while (!consumer_stop) {
		poll(pfd, n, 100);
		drain_all();
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Setup of the two backends                                            */

static void attr_init(struct perf_event_attr *a, const struct evspec *ev)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = ev->type;
	a->config = ev->config;
}

struct drv_stats {
	uint64_t samples, lost, handler_ns_total, handler_ns_max;
};

static void driver_setup(void)
{
	struct perf_event_attr s, c[STROBE_MAX_COUNTERS];
	struct strobe_config cfg;
	size_t data = (size_t)opt_pages * pagesize, stride = pagesize + data;

	drv_fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (drv_fd < 0)
		die("open " DEV);
	attr_init(&s, sampler);
	s.sample_period = opt_period;
	for (unsigned i = 0; i < nr_counters; i++)
		attr_init(&c[i], counters[i]);
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.nr_counters = nr_counters;
	cfg.sample_attr = (uintptr_t)&s;
	cfg.counter_attrs = (uintptr_t)c;
	cfg.attr_size = sizeof(s);
	cfg.buffer_pages = opt_pages;
	if (ioctl(drv_fd, STROBE_IOC_CONFIG, &cfg))
		die("STROBE_IOC_CONFIG");
	for (int i = 0; i < ncpu; i++) {
		struct ring *r = &rings[i];
		void *m;

		m = mmap(NULL, pagesize, PROT_READ | PROT_WRITE, MAP_SHARED,
			 drv_fd, i * stride);
		if (m == MAP_FAILED)
			die("mmap control page");
		r->ctrl = m;
		m = mmap(NULL, data, PROT_READ, MAP_SHARED, drv_fd,
			 i * stride + pagesize);
		if (m == MAP_FAILED)
			die("mmap data pages");
		r->data = m;
		r->size = data;
	}
}

static void driver_stats(struct drv_stats *out)
{
	static struct strobe_cpu_stats cs[MAXCPU];
	struct strobe_stats st = { sizeof(st), MAXCPU, (uintptr_t)cs };

	memset(out, 0, sizeof(*out));
	if (ioctl(drv_fd, STROBE_IOC_STATS, &st))
		die("STROBE_IOC_STATS");
	for (unsigned i = 0; i < st.nr_cpus && i < MAXCPU; i++) {
		out->samples += cs[i].samples;
		out->lost += cs[i].lost;
		out->handler_ns_total += cs[i].handler_ns_total;
		if (cs[i].handler_ns_max > out->handler_ns_max)
			out->handler_ns_max = cs[i].handler_ns_max;
	}
}

static void driver_teardown(void)
{
	size_t data = (size_t)opt_pages * pagesize;

	for (int i = 0; i < ncpu; i++) {
		munmap((void *)rings[i].ctrl, pagesize);
		munmap((void *)rings[i].data, data);
	}
	close(drv_fd);
	drv_fd = -1;
}

static int perf_open(struct perf_event_attr *a, int cpu, int group)
{
	return syscall(SYS_perf_event_open, a, -1, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

/* As daemon/backend_perf.c perf_ring_open(). */
#define SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ)

static void perf_setup(void)
{
	size_t data = (size_t)opt_pages * pagesize;

	for (int i = 0; i < ncpu; i++) {
		struct ring *r = &rings[i];
		struct perf_event_attr a;
		void *m;

		attr_init(&a, sampler);
		a.disabled = 1;
		a.sample_period = opt_period;
		a.sample_type = SAMPLE_TYPE;
		a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
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
		a.wakeup_watermark = data / 4;
		r->fd = perf_open(&a, i, -1);
		if (r->fd < 0 && errno == EINVAL) {
			a.build_id = 0;
			r->fd = perf_open(&a, i, -1);
		}
		if (r->fd < 0)
			die("perf_event_open (sampling event)");
		for (unsigned k = 0; k < nr_counters; k++) {
			struct perf_event_attr c;

			attr_init(&c, counters[k]);
			c.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
			c.sample_type = SAMPLE_TYPE;
			c.sample_id_all = 1;
			c.use_clockid = 1;
			c.clockid = CLOCK_MONOTONIC;
			r->cfds[k] = perf_open(&c, i, r->fd);
			if (r->cfds[k] < 0)
				die("perf_event_open (counting event)");
		}
		m = mmap(NULL, data + pagesize, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		if (m == MAP_FAILED)
			die("mmap perf ring");
		r->page = m;
		r->data = (const uint8_t *)m + pagesize;
		r->size = data;
	}
}

static void perf_enable(int on)
{
	for (int i = 0; i < ncpu; i++)
		if (ioctl(rings[i].fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0))
			die("PERF_EVENT_IOC_ENABLE/DISABLE");
}

static void perf_teardown(void)
{
	size_t data = (size_t)opt_pages * pagesize;

	for (int i = 0; i < ncpu; i++) {
		munmap((void *)rings[i].page, data + pagesize);
		for (unsigned k = 0; k < nr_counters; k++)
			close(rings[i].cfds[k]);
		close(rings[i].fd);
	}
}

/* ------------------------------------------------------------------ */
/* One measured run                                                     */

struct result {
	double t;		/* mean per-thread elapsed, s */
	double window;		/* first start to last end, s */
	uint64_t samples;	/* sample records inside the window */
	uint64_t all_samples;	/* all sample records of the session */
	uint64_t lost;
	uint64_t throttle;
	struct drv_stats drv;
	double handler_ns;	/* driver: handler_ns_total / (samples + lost) */
	struct irqstat irq;
};

static void run_one(enum mode m, uint64_t iters, struct result *res)
{
	pthread_t cons;
	uint64_t w0, w1;

	memset(res, 0, sizeof(*res));
	nr_times = 0;
	rec_lost = rec_throttle = rec_other = rec_bad = 0;
	cur_mode = m;
	consumer_stop = 0;

	if (m == M_BASE) {
		res->t = run_workload(iters, &w0, &w1);
		res->window = (w1 - w0) / 1e9;
		irq_analyse(&res->irq);
		return;
	}
	if (m == M_DRIVER)
		driver_setup();
	else
		perf_setup();
	if (pthread_create(&cons, NULL, consumer_main, NULL))
		die("pthread_create consumer");
	if (m == M_DRIVER) {
		if (ioctl(drv_fd, STROBE_IOC_START))
			die("STROBE_IOC_START");
	} else {
		perf_enable(1);
	}
	res->t = run_workload(iters, &w0, &w1);
	irq_analyse(&res->irq);
	if (m == M_DRIVER) {
		if (ioctl(drv_fd, STROBE_IOC_STOP))
			die("STROBE_IOC_STOP");
	} else {
		perf_enable(0);
	}
	consumer_stop = 1;
	pthread_join(cons, NULL);
	drain_all();
	res->window = (w1 - w0) / 1e9;
	for (size_t i = 0; i < nr_times; i++)
		if (times[i] >= w0 && times[i] <= w1)
			res->samples++;
	res->all_samples = nr_times;
	res->lost = rec_lost;
	res->throttle = rec_throttle;
	if (m == M_DRIVER) {
		driver_stats(&res->drv);
		if (res->drv.lost > res->lost)
			res->lost = res->drv.lost;
		if (res->drv.samples + res->drv.lost)
			res->handler_ns = (double)res->drv.handler_ns_total /
					  (res->drv.samples + res->drv.lost);
		driver_teardown();
	} else {
		perf_teardown();
	}
	if (rec_bad)
		printf("# %s: %llu malformed records\n", mode_name[m],
		       (unsigned long long)rec_bad);
}

/* ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double s[MAXROUNDS];

	if (n <= 0)
		return 0;
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: kbench [-s SECONDS] [-r ROUNDS] [-p PERIOD] [--event cpu-clock|cycles]\n"
		"              [-e COUNTER,...] [-b PAGES] [-m base,driver,perf] [-n ITERATIONS]\n"
		"              [-t INTERRUPTION_NS] [-v]\n");
	exit(2);
}

static void parse_counters(void)
{
	char buf[sizeof(counters_str)], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", counters_str);
	nr_counters = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (nr_counters == STROBE_MAX_COUNTERS) {
			fprintf(stderr, "kbench: at most %d counting events\n", STROBE_MAX_COUNTERS);
			exit(2);
		}
		counters[nr_counters++] = find_event(tok);
	}
}

static void parse_modes(const char *s)
{
	char buf[64], *save = NULL, *tok;
	int m;

	memset(modes_on, 0, sizeof(modes_on));
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (m = 0; m < NR_MODES; m++)
			if (!strcmp(tok, mode_name[m]))
				break;
		if (m == NR_MODES)
			usage();
		modes_on[m] = 1;
	}
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "event", required_argument, NULL, 'E' },
		{ NULL, 0, NULL, 0 },
	};
	static struct result res[MAXROUNDS][NR_MODES];
	double t[NR_MODES][MAXROUNDS], v[MAXROUNDS];
	double med_t[NR_MODES], med_samples[NR_MODES], med_ovh[NR_MODES] = { 0 };
	double pair_ovh[NR_MODES] = { 0 }, stolen[NR_MODES] = { 0 };
	int c, r, m, k, order[NR_MODES], nmodes = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt_long(argc, argv, "s:r:p:e:b:m:n:t:v", lo, NULL)) != -1) {
		switch (c) {
		case 's': opt_secs = atof(optarg); break;
		case 'r': opt_rounds = atoi(optarg); break;
		case 'p': opt_period = strtoull(optarg, NULL, 0); break;
		case 'e': snprintf(counters_str, sizeof(counters_str), "%s", optarg); break;
		case 'b': opt_pages = strtoul(optarg, NULL, 0); break;
		case 'm': parse_modes(optarg); break;
		case 'n': opt_iters = strtoull(optarg, NULL, 0); break;
		case 'E': sampler = find_event(optarg); break;
		case 'v': opt_verbose = 1; break;
		case 't': opt_thresh = atof(optarg); break;
		default: usage();
		}
	}
	if (optind != argc || opt_rounds < 1 || opt_rounds > MAXROUNDS || opt_secs <= 0 ||
	    !opt_pages || (opt_pages & (opt_pages - 1)))
		usage();
	if (!strcmp(counters_str, "none"))
		counters_str[0] = 0;
	parse_counters();
	if (!opt_period)
		opt_period = sampler->type == PERF_TYPE_SOFTWARE ? 100000 : 1000000;
	pagesize = sysconf(_SC_PAGESIZE);
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1 || ncpu > MAXCPU)
		die("online CPUs");
	for (int i = 0; i < ncpu; i++) {
		workers[i].buf = calloc(WORK_WORDS, sizeof(uint64_t));
		if (!workers[i].buf)
			die("calloc");
	}
	for (m = 0; m < NR_MODES; m++)
		if (modes_on[m])
			order[nmodes++] = m;

	/* Calibration (also the warm-up): scale the work to opt_secs. */
	if (!opt_iters) {
		uint64_t n = 2000000;
		double dt;

		for (;;) {
			dt = run_workload(n, NULL, NULL);
			if (dt >= 0.3 || n > (1ULL << 40))
				break;
			n *= 4;
		}
		/* a second, longer pass refines the scale and warms up */
		n = (uint64_t)(n * opt_secs / 2 / dt);
		dt = run_workload(n, NULL, NULL);
		opt_iters = (uint64_t)(n * opt_secs / dt);
		chunk_iters = (uint64_t)(n / dt * 10e-6);
	} else {
		uint64_t n = opt_iters / 10 + 1;

		chunk_iters = (uint64_t)(n / run_workload(n, NULL, NULL) * 10e-6);
	}
	if (chunk_iters < 16)
		chunk_iters = 16;
	chunk_cap = opt_iters / chunk_iters + 1;
	for (int i = 0; i < ncpu; i++) {
		workers[i].chunk = malloc(chunk_cap * sizeof(uint32_t));
		if (!workers[i].chunk)
			die("malloc");
	}

	printf("kbench: %d CPUs, sampling %s every %llu %s (%.0f Hz requested per CPU), "
	       "counting %s, %u ring pages/CPU, %d rounds of %llu iterations/thread\n",
	       ncpu, sampler->name, (unsigned long long)opt_period,
	       sampler->type == PERF_TYPE_SOFTWARE ? "ns" : "events",
	       sampler->type == PERF_TYPE_SOFTWARE ? 1e9 / opt_period : 0.0,
	       counters_str[0] ? counters_str : "nothing", opt_pages, opt_rounds,
	       (unsigned long long)opt_iters);
	printf("%-5s %-6s %7s %8s %7s %5s %6s %6s %7s %8s | %7s %8s %8s %8s %4s\n",
	       "round", "mode", "T_s", "window_s", "samples", "lost", "thrott", "Hz/CPU",
	       "hdl_ns", "hmax_ns", "chunk", "intr/s", "intr_ns", "stolen", "huge");
	for (r = 0; r < opt_rounds; r++) {
		for (k = 0; k < nmodes; k++) {
			struct result *p;

			m = order[(k + r) % nmodes];
			p = &res[r][m];
			run_one(m, opt_iters, p);
			t[m][r] = p->t;
			printf("%-5d %-6s %7.3f %8.3f %7llu %5llu %6llu %6.0f %7.0f %8llu | %7.0f %8.0f %8.0f %7.1fms %4llu\n",
			       r, mode_name[m], p->t, p->window,
			       (unsigned long long)p->samples,
			       (unsigned long long)p->lost,
			       (unsigned long long)p->throttle,
			       p->samples / p->window / ncpu, p->handler_ns,
			       (unsigned long long)p->drv.handler_ns_max,
			       p->irq.chunk_ns, p->irq.hits / p->window / ncpu,
			       p->irq.median_ns, p->irq.excess_ns / 1e6,
			       (unsigned long long)p->irq.huge);
		}
	}

	for (m = 0; m < NR_MODES; m++) {
		if (!modes_on[m])
			continue;
		med_t[m] = median(t[m], opt_rounds);
		for (r = 0; r < opt_rounds; r++)
			v[r] = res[r][m].samples;
		med_samples[m] = median(v, opt_rounds);
	}
	if (modes_on[M_BASE]) {
		for (m = M_DRIVER; m < NR_MODES; m++) {
			if (!modes_on[m] || !med_samples[m])
				continue;
			med_ovh[m] = (med_t[m] - med_t[M_BASE]) * ncpu / med_samples[m] * 1e9;
			for (r = 0; r < opt_rounds; r++)
				v[r] = res[r][m].samples ?
				       (t[m][r] - t[M_BASE][r]) * ncpu / res[r][m].samples * 1e9 : 0;
			pair_ovh[m] = median(v, opt_rounds);
			for (r = 0; r < opt_rounds; r++)
				v[r] = res[r][m].samples ?
				       (res[r][m].irq.excess_ns - res[r][M_BASE].irq.excess_ns) /
				       res[r][m].samples : 0;
			stolen[m] = median(v, opt_rounds);
		}
	}

	printf("\nSUMMARY, medians of %d rounds (%d CPUs)\n", opt_rounds, ncpu);
	printf("| mode | T (s) | slowdown | samples/run | lost/run | rate/CPU (Hz) | "
	       "overhead ns/sample | paired | interruptions/s/CPU | interruption ns | "
	       "stolen ns/sample | handler ns/sample | handler max ns |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (m = 0; m < NR_MODES; m++) {
		double hs[MAXROUNDS], hm[MAXROUNDS], lost[MAXROUNDS], rate[MAXROUNDS];
		double ir[MAXROUNDS], im[MAXROUNDS];
		char slow[32] = "-", ovh[32] = "-", pair[32] = "-", hns[32] = "-", hmax[32] = "-";
		char stol[32] = "-";

		if (!modes_on[m])
			continue;
		for (r = 0; r < opt_rounds; r++) {
			struct result *p = &res[r][m];

			hs[r] = p->handler_ns;
			hm[r] = p->drv.handler_ns_max;
			lost[r] = p->lost;
			rate[r] = p->samples / p->window / ncpu;
			ir[r] = p->irq.hits / p->window / ncpu;
			im[r] = p->irq.median_ns;
		}
		if (m == M_BASE) {
			printf("| base | %.3f | - | - | - | - | - | - | %.0f | %.0f | - | - | - |\n",
			       med_t[m], median(ir, opt_rounds), median(im, opt_rounds));
			continue;
		}
		if (modes_on[M_BASE]) {
			snprintf(slow, sizeof(slow), "%+.1f %%", (med_t[m] / med_t[M_BASE] - 1) * 100);
			snprintf(ovh, sizeof(ovh), "%.0f", med_ovh[m]);
			snprintf(pair, sizeof(pair), "%.0f", pair_ovh[m]);
			snprintf(stol, sizeof(stol), "%.0f", stolen[m]);
		}
		if (m == M_DRIVER) {
			snprintf(hns, sizeof(hns), "%.0f", median(hs, opt_rounds));
			snprintf(hmax, sizeof(hmax), "%.0f", median(hm, opt_rounds));
		}
		printf("| %s | %.3f | %s | %.0f | %.0f | %.0f | %s | %s | %.0f | %.0f | %s | %s | %s |\n",
		       mode_name[m], med_t[m], slow, med_samples[m], median(lost, opt_rounds),
		       median(rate, opt_rounds), ovh, pair, median(ir, opt_rounds),
		       median(im, opt_rounds), stol, hns, hmax);
	}
	if (modes_on[M_BASE] && modes_on[M_DRIVER] && modes_on[M_PERF] &&
	    med_t[M_PERF] != med_t[M_BASE] && med_ovh[M_PERF] && pair_ovh[M_PERF] && stolen[M_PERF]) {
		double im_d[MAXROUNDS], im_p[MAXROUNDS];

		for (r = 0; r < opt_rounds; r++) {
			im_d[r] = res[r][M_DRIVER].irq.median_ns;
			im_p[r] = res[r][M_PERF].irq.median_ns;
		}
		printf("RATIO driver/perf: slowdown %.2f, overhead per sample %.2f (paired %.2f), "
		       "interruption %.2f, stolen per sample %.2f\n",
		       (med_t[M_DRIVER] - med_t[M_BASE]) / (med_t[M_PERF] - med_t[M_BASE]),
		       med_ovh[M_DRIVER] / med_ovh[M_PERF], pair_ovh[M_DRIVER] / pair_ovh[M_PERF],
		       median(im_d, opt_rounds) / median(im_p, opt_rounds),
		       stolen[M_DRIVER] / stolen[M_PERF]);
	}
	return 0;
}
