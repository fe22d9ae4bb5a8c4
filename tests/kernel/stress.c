/*
 * stress.c - stress test of strobe.ko in the QEMU guest (run as root, static).
 *
 *   gcc -static -O2 -Wall -o stress stress.c -lpthread
 *   stress [-t SECONDS] SUBTEST...
 *
 * Subtests, run in the order given:
 *   storm      a session at the highest sampling rate the kernel allows
 *              (cpu-clock, software counters) with a consumer draining all
 *              rings, while workers fork+exit and fork+exec as fast as they
 *              can for SECONDS (-t, else $STRESS_SECONDS, else 30)
 *   rmmod      rmmod during a session is refused; sampling goes on; after
 *              close + munmap the module is unused again (refcnt 0); does
 *              not unload it (guest/init does)
 *   close      close while mapped and running (the mapping keeps the session
 *              alive until munmap), close while running without mappings,
 *              poll() blocked while other threads STOP and close
 *   race       START/STOP/STATS/mmap/poll from several threads at once
 *   mmap-race  mmap() of the rings racing ioctls whose user buffers are not
 *              present (page faults inside the ioctl)
 *   all        all of the above
 * The race subtests run in a child with a watchdog: a deadlock is reported
 * (with the kernel stacks of the stuck threads) instead of hanging the run.
 *
 * Prints "PASS <name>", "FAIL <name>: why" and "# info" lines, then
 * "RESULT PASS" or "RESULT FAIL"; exit status 0 only on PASS.
 * Arch-neutral: only software events (cpu-clock sampling).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include "../../kernel/uapi/strobe.h"
#include "ktest.h"

#define DEV "/dev/strobe"
#define MAXCPU 256
#define USAGE "usage: stress [-t SECONDS] storm|rmmod|close|race|mmap-race|all...\n"
#define PID_BITS (1u << 22)		/* PID_MAX_LIMIT */

static int ncpu;

static int read_int_file(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int module_refcnt(void)
{
	return read_int_file("/sys/module/strobe/refcnt");
}

/* Wait up to @ms for the module's refcnt to drop to 0; returns the last value. */
static int wait_refcnt_zero(int ms)
{
	int v = module_refcnt();

	while (v != 0 && ms > 0) {
		sleep_ms(10);
		ms -= 10;
		v = module_refcnt();
	}
	return v;
}

/* open() that retries while the device is still busy (a release running in
 * another thread's task_work); returns the fd or -errno of the last try. */
static int open_retry(int ms)
{
	for (;;) {
		int fd = open(DEV, O_RDWR | O_CLOEXEC);

		if (fd >= 0)
			return fd;
		if (errno != EBUSY || ms <= 0)
			return -errno;
		sleep_ms(10);
		ms -= 10;
	}
}

/* ------------------------------------------------------------------ */
/* Sessions, rings and the consumer.                                   */

struct ring {
	int cpu;
	volatile struct strobe_ring_ctrl *ctrl;
	const uint8_t *data;
	uint32_t size;
	/* what was read */
	unsigned long long samples, lost_recs, lost_sum, pads, bad, badcpu, badflags;
	unsigned long long user, kernel, tsc_exact;
	unsigned long long first_time, last_time, last_tsc, last_ctr[STROBE_MAX_COUNTERS];
	unsigned long long time_violations, tsc_violations, ctr_violations;
	unsigned long long max_gap;	/* longest time between two records, ns */
	int have_time;
};

struct sess {
	int fd;			/* -1 once closed */
	unsigned pages, nr_counters;
	int nr_rings;
	struct ring rings[MAXCPU];
	pthread_mutex_t lock;	/* serialises draining */
	/* consumer thread */
	pthread_t th;
	volatile int stop, paused;
	int consumer;
	unsigned long polls, poll_in, poll_nval;
	/* distinct pids sampled */
	int track_pids;
	unsigned long long distinct_pids;
};

static uint8_t pid_seen[PID_BITS / 8];

static struct sess *sess_new(void)
{
	struct sess *S = calloc(1, sizeof(*S));

	if (!S) {
		perror("calloc");
		exit(2);
	}
	S->fd = -1;
	pthread_mutex_init(&S->lock, NULL);
	return S;
}

/* open + CONFIG; returns 0 or -errno (the fd stays open on CONFIG failure) */
static int sess_config(struct sess *S, const struct perf_event_attr *sa,
		       const struct perf_event_attr *ca, unsigned n, unsigned pages)
{
	struct strobe_config cfg;

	if (S->fd < 0) {
		S->fd = open(DEV, O_RDWR | O_CLOEXEC);
		if (S->fd < 0)
			return -errno;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.nr_counters = n;
	cfg.sample_attr = (uintptr_t)sa;
	cfg.counter_attrs = (uintptr_t)ca;
	cfg.attr_size = sizeof(*sa);
	cfg.buffer_pages = pages;
	if (ioctl(S->fd, STROBE_IOC_CONFIG, &cfg) < 0)
		return -errno;
	S->pages = pages;
	S->nr_counters = n;
	return 0;
}

static int sess_map(struct sess *S)
{
	size_t data_size = (size_t)S->pages * STROBE_PAGE, stride = STROBE_PAGE + data_size;
	int cpu;

	S->nr_rings = 0;
	for (cpu = 0; cpu < ncpu && cpu < MAXCPU; cpu++) {
		struct ring *r = &S->rings[S->nr_rings];
		void *c, *d;

		memset(r, 0, sizeof(*r));
		c = mmap(NULL, STROBE_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
			 S->fd, cpu * stride);
		if (c == MAP_FAILED) {
			info("mmap ctrl cpu %d: %s", cpu, strerror(errno));
			return -1;
		}
		d = mmap(NULL, data_size, PROT_READ, MAP_SHARED, S->fd,
			 cpu * stride + STROBE_PAGE);
		if (d == MAP_FAILED) {
			info("mmap data cpu %d: %s", cpu, strerror(errno));
			munmap(c, STROBE_PAGE);
			return -1;
		}
		r->cpu = cpu;
		r->ctrl = c;
		r->data = d;
		r->size = data_size;
		S->nr_rings++;
		if (r->ctrl->data_size != data_size) {
			info("cpu %d: data_size %u, want %zu", cpu, r->ctrl->data_size, data_size);
			return -1;
		}
	}
	return 0;
}

static void sess_unmap(struct sess *S)
{
	int i;

	for (i = 0; i < S->nr_rings; i++) {
		munmap((void *)S->rings[i].ctrl, STROBE_PAGE);
		munmap((void *)S->rings[i].data, S->rings[i].size);
	}
	S->nr_rings = 0;
}

static void sess_close(struct sess *S)
{
	if (S->fd >= 0)
		close(S->fd);
	S->fd = -1;
}

static void sess_free(struct sess *S)
{
	sess_unmap(S);
	sess_close(S);
	free(S);
}

static void note_time(struct ring *r, unsigned long long t)
{
	if (!r->have_time)
		r->first_time = t;
	else if (t < r->last_time)
		r->time_violations++;
	else if (t - r->last_time > r->max_gap)
		r->max_gap = t - r->last_time;
	r->last_time = t;
	r->have_time = 1;
}

static void drain_one(struct sess *S, struct ring *r)
{
	unsigned long long head = __atomic_load_n(&r->ctrl->head, __ATOMIC_ACQUIRE); /* C */
	unsigned long long tail = r->ctrl->tail;

	if (head - tail > r->size) {
		r->bad++;
		tail = head;
	}
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
			if (h->size != r->size - off)
				r->bad++;
		} else if (h->type == STROBE_REC_LOST) {
			const struct strobe_lost *l = (const void *)h;

			if (h->size != sizeof(*l) || !l->lost)
				r->bad++;
			r->lost_recs++;
			r->lost_sum += l->lost;
			note_time(r, l->time_ns);
		} else if (h->type == STROBE_REC_SAMPLE) {
			const struct strobe_sample *s = (const void *)h;
			unsigned mode = s->flags & STROBE_SAMPLE_MODE_MASK;
			unsigned i;

			if (s->nr_counters != S->nr_counters ||
			    h->size != STROBE_SAMPLE_SIZE(s->nr_counters) ||
			    s->reserved0 || s->reserved1 || !s->period) {
				r->bad++;
			} else {
				note_time(r, s->time_ns);
				if (r->samples && s->tsc < r->last_tsc)
					r->tsc_violations++;
				r->last_tsc = s->tsc;
				for (i = 0; i < S->nr_counters; i++) {
					if (s->counters[i] < r->last_ctr[i])
						r->ctr_violations++;
					r->last_ctr[i] = s->counters[i];
				}
				r->samples++;
				if (mode == STROBE_SAMPLE_USER)
					r->user++;
				else if (mode == STROBE_SAMPLE_KERNEL)
					r->kernel++;
				else
					r->badflags++;
				if (s->flags & STROBE_SAMPLE_TSC_EXACT)
					r->tsc_exact++;
				if (S->track_pids && s->pid && s->pid < PID_BITS &&
				    !(pid_seen[s->pid / 8] & (1u << (s->pid % 8)))) {
					pid_seen[s->pid / 8] |= 1u << (s->pid % 8);
					S->distinct_pids++;
				}
			}
		} else {
			r->bad++;
		}
		tail += h->size;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* D */
	__atomic_store_n(&r->ctrl->tail, tail, __ATOMIC_RELAXED);
}

static void drain_all(struct sess *S)
{
	int i;

	pthread_mutex_lock(&S->lock);
	for (i = 0; i < S->nr_rings; i++)
		drain_one(S, &S->rings[i]);
	pthread_mutex_unlock(&S->lock);
}

static unsigned long long total_samples(struct sess *S)
{
	unsigned long long n = 0;
	int i;

	pthread_mutex_lock(&S->lock);
	for (i = 0; i < S->nr_rings; i++)
		n += S->rings[i].samples;
	pthread_mutex_unlock(&S->lock);
	return n;
}

/* Drain on every poll wakeup, and at least every 10 ms. */
static void *consumer_thread(void *arg)
{
	struct sess *S = arg;

	while (!S->stop) {
		int fd = *(volatile int *)&S->fd;

		if (S->paused) {
			sleep_ms(10);
			continue;
		}
		if (fd >= 0) {
			struct pollfd p = { fd, POLLIN, 0 };

			S->polls++;
			if (poll(&p, 1, 10) > 0) {
				if (p.revents & POLLIN)
					S->poll_in++;
				if (p.revents & POLLNVAL) {
					S->poll_nval++;
					sleep_ms(10);
				}
			}
		} else {
			sleep_ms(10);
		}
		drain_all(S);
	}
	return NULL;
}

static int consumer_start(struct sess *S)
{
	S->stop = 0;
	if (pthread_create(&S->th, NULL, consumer_thread, S)) {
		check(0, "pthread_create", "consumer");
		return -1;
	}
	S->consumer = 1;
	return 0;
}

static void consumer_stop(struct sess *S)
{
	if (!S->consumer)
		return;
	S->stop = 1;
	pthread_join(S->th, NULL);
	S->consumer = 0;
}

static int get_stats(int fd, struct strobe_cpu_stats *cs)
{
	struct strobe_stats st = { sizeof(st), (uint32_t)ncpu, (uintptr_t)cs };

	memset(cs, 0, sizeof(*cs) * ncpu);
	if (ioctl(fd, STROBE_IOC_STATS, &st) < 0)
		return -errno;
	return st.nr_cpus;
}

/* Sum of ctrl->lost; *all: every ring dropped more than in @since (may be NULL) */
static unsigned long long ring_lost(struct sess *S, const unsigned long long *since,
				    unsigned long long *now, int *all)
{
	unsigned long long n = 0;
	int i;

	*all = 1;
	for (i = 0; i < S->nr_rings; i++) {
		now[i] = S->rings[i].ctrl->lost;
		n += now[i];
		if (since && now[i] <= since[i])
			*all = 0;
	}
	return n;
}

static unsigned long long ring_heads(struct sess *S)
{
	unsigned long long n = 0;
	int i;

	for (i = 0; i < S->nr_rings; i++)
		n += __atomic_load_n(&S->rings[i].ctrl->head, __ATOMIC_ACQUIRE);
	return n;
}

/*
 * The checks every drained session gets, per CPU: records well formed, time
 * and TSC and counters monotonic, STATS == what was read.  @cs may be NULL
 * (no fd left to ask).  Returns the number of samples read.
 */
static unsigned long long check_rings(struct sess *S, const char *pfx,
				      const struct strobe_cpu_stats *cs,
				      unsigned long long t0, unsigned long long t1)
{
	unsigned long long bad = 0, badcpu = 0, badflags = 0, tviol = 0, tscviol = 0;
	unsigned long long cviol = 0, tsc_inexact = 0, out_of_session = 0, total = 0;
	char name[96], why[512];
	int i, smatch = 1, lmatch = 1, cmatch = 1, n = 0;
	unsigned c;

	why[0] = 0;
	for (i = 0; i < S->nr_rings; i++) {
		struct ring *r = &S->rings[i];

		bad += r->bad;
		badcpu += r->badcpu;
		badflags += r->badflags;
		tviol += r->time_violations;
		tscviol += r->tsc_violations;
		cviol += r->ctr_violations;
		tsc_inexact += r->samples - r->tsc_exact;
		total += r->samples;
		if (r->have_time && t1 &&
		    (r->first_time + 1000000 < t0 || r->last_time > t1 + 1000000))
			out_of_session++;
		if (!cs) {
			if (r->lost_sum > r->ctrl->lost)
				lmatch = 0;
			continue;
		}
		if (cs[i].samples != r->samples) {
			smatch = 0;
			n += snprintf(why + n, sizeof(why) - n > 0 ? sizeof(why) - n : 0,
				      "cpu%d stats %llu read %llu; ", r->cpu,
				      (unsigned long long)cs[i].samples, r->samples);
		}
		if (cs[i].lost != r->ctrl->lost || r->lost_sum > cs[i].lost) {
			lmatch = 0;
			n += snprintf(why + n, sizeof(why) - n > 0 ? sizeof(why) - n : 0,
				      "cpu%d lost stats %llu ctrl %llu records %llu; ", r->cpu,
				      (unsigned long long)cs[i].lost,
				      (unsigned long long)r->ctrl->lost, r->lost_sum);
		}
		if (cs[i].nr_counters != S->nr_counters)
			cmatch = 0;
		for (c = 0; c < S->nr_counters && c < cs[i].nr_counters; c++)
			if (cs[i].counters[c] < r->last_ctr[c])
				cmatch = 0;
	}
	snprintf(name, sizeof(name), "%s-records-valid", pfx);
	check(!bad && !badcpu && !badflags, name, "bad %llu badcpu %llu badflags %llu",
	      bad, badcpu, badflags);
	snprintf(name, sizeof(name), "%s-time-monotonic", pfx);
	check(!tviol, name, "%llu violations", tviol);
	snprintf(name, sizeof(name), "%s-tsc-monotonic", pfx);
	check(!tscviol, name, "%llu violations", tscviol);
#if defined(__x86_64__) || defined(__aarch64__)
	snprintf(name, sizeof(name), "%s-tsc-exact", pfx);
	check(!tsc_inexact, name, "%llu samples without TSC_EXACT", tsc_inexact);
#endif
	snprintf(name, sizeof(name), "%s-counters-monotonic", pfx);
	check(!cviol, name, "%llu violations", cviol);
	if (t1) {
		snprintf(name, sizeof(name), "%s-time-in-session", pfx);
		check(!out_of_session, name, "%llu CPUs with records outside the session",
		      out_of_session);
	}
	if (cs) {
		snprintf(name, sizeof(name), "%s-stats-samples-match", pfx);
		check(smatch, name, "%s", why);
		snprintf(name, sizeof(name), "%s-stats-lost-match", pfx);
		check(lmatch, name, "%s", why);
		snprintf(name, sizeof(name), "%s-stats-counters-final", pfx);
		check(cmatch, name, "STATS counter totals below the last sampled values");
	} else {
		snprintf(name, sizeof(name), "%s-lost-records-le-ctrl-lost", pfx);
		check(lmatch, name, "sum of LOST records above ctrl->lost");
	}
	return total;
}

/* fork + exec /bin/true: the system still works */
static int run_true(void)
{
	int st = 0;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A short session on a fresh open: config, map, sample, stop, check. */
static void short_session(const char *pfx)
{
	struct sess *S = sess_new();
	struct perf_event_attr sa, ca;
	struct strobe_cpu_stats cs[MAXCPU];
	unsigned long long t0, t1, n;
	char name[96];
	int r;

	attr_init(&sa, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	sa.sample_period = 200000;	/* 200 us */
	attr_init(&ca, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
	r = sess_config(S, &sa, &ca, 1, 8);
	snprintf(name, sizeof(name), "%s-config", pfx);
	check(!r, name, "%s", strerror(-r));
	if (r || sess_map(S)) {
		sess_free(S);
		return;
	}
	t0 = now_ns();
	r = ioctl(S->fd, STROBE_IOC_START, 0);
	snprintf(name, sizeof(name), "%s-start", pfx);
	check(!r, name, "%s", strerror(errno));
	sleep_ms(150);
	drain_all(S);
	sleep_ms(150);
	ioctl(S->fd, STROBE_IOC_STOP, 0);
	t1 = now_ns();
	drain_all(S);
	r = get_stats(S->fd, cs);
	n = check_rings(S, pfx, r >= ncpu ? cs : NULL, t0, t1);
	snprintf(name, sizeof(name), "%s-samples", pfx);
	check(n > 0, name, "no samples");
	sess_free(S);
}

/* ------------------------------------------------------------------ */
/* 1. Fork storm at the highest sampling rate.                         */

struct storm_shared {
	unsigned long long deadline;
	long forks, execs, fork_failures, child_failures;
};

static void storm_worker(struct storm_shared *sh, int id)
{
	long i;

	for (i = 0; now_ns() < sh->deadline; i++) {
		int exec = (i + id) % 8 == 0, st = 0;
		pid_t pid = fork();

		if (pid < 0) {
			__atomic_add_fetch(&sh->fork_failures, 1, __ATOMIC_RELAXED);
			sleep_ms(1);
			continue;
		}
		if (pid == 0) {
			if (exec)
				execl("/bin/true", "true", (char *)NULL);
			_exit(exec ? 127 : 0);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			__atomic_add_fetch(&sh->child_failures, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&sh->forks, 1, __ATOMIC_RELAXED);
		if (exec)
			__atomic_add_fetch(&sh->execs, 1, __ATOMIC_RELAXED);
	}
	_exit(0);
}

/* @nw workers fork for @seconds; returns the number of forks */
static long storm_run(struct storm_shared *sh, int nw, int seconds, pid_t *workers)
{
	int i;

	sh->deadline = now_ns() + seconds * 1000000000ULL;
	for (i = 0; i < nw; i++) {
		workers[i] = fork();
		if (workers[i] == 0)
			storm_worker(sh, i);
		if (workers[i] < 0) {
			check(0, "storm-workers", "fork: %s", strerror(errno));
			return i;
		}
	}
	return nw;
}

static void test_storm(int seconds)
{
	static const unsigned long long ctrs[] = {
		PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_CONTEXT_SWITCHES,
		PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_CPU_MIGRATIONS,
	};
	const unsigned nctr = sizeof(ctrs) / sizeof(ctrs[0]);
	struct sess *S = sess_new();
	struct perf_event_attr sa, ca[4];
	struct strobe_cpu_stats cs[MAXCPU], prev[MAXCPU];
	struct storm_shared *sh = MAP_FAILED;
	unsigned long long t0, t1, ts0, ts1, total, lost = 0, h0;
	int freq, r, i, nw = 2 * ncpu, stats_ok = 1, stats_mono = 1, nstats = 0;
	int pauses = 0, all_lost = 0;
	unsigned long long lost0[MAXCPU], lost1[MAXCPU];
	pid_t workers[2 * MAXCPU];
	unsigned c;

	freq = read_int_file("/proc/sys/kernel/perf_event_max_sample_rate");
	info("storm: %d s, perf_event_max_sample_rate %d", seconds, freq);
	if (freq <= 0 || freq > 100000)
		freq = 100000;		/* the driver's cap */
	attr_init(&sa, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	sa.freq = 1;
	sa.sample_freq = freq;
	for (c = 0; c < nctr; c++)
		attr_init(&ca[c], PERF_TYPE_SOFTWARE, ctrs[c]);
	S->track_pids = 1;
	memset(pid_seen, 0, sizeof(pid_seen));

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		check(0, "storm-shared-mmap", "%s", strerror(errno));
		goto out;
	}
	/* the same storm for 2 s without a session, for comparison */
	memset(sh, 0, sizeof(*sh));
	ts0 = now_ns();
	r = storm_run(sh, nw, 2, workers);
	for (i = 0; i < r; i++)
		waitpid(workers[i], NULL, 0);
	info("storm: without a session: %.0f forks/s", sh->forks / ((now_ns() - ts0) / 1e9));
	memset(sh, 0, sizeof(*sh));

	r = sess_config(S, &sa, ca, nctr, 128);
	check(!r, "storm-config", "%s (sample_freq %d)", strerror(-r), freq);
	if (r)
		goto out;
	r = sess_map(S);
	check(!r, "storm-mmap", "mapping the rings failed");
	if (r || consumer_start(S))
		goto out;

	t0 = now_ns();
	r = ioctl(S->fd, STROBE_IOC_START, 0);
	check(!r, "storm-start", "%s", strerror(errno));
	if (r)
		goto out;
	get_stats(S->fd, prev);
	ts0 = now_ns();
	nw = storm_run(sh, nw, seconds, workers);
	/* STATS while the storm runs: totals never go backwards */
	while (now_ns() < sh->deadline) {
		sleep_ms(1000);
		r = get_stats(S->fd, cs);
		nstats++;
		if (r < ncpu) {
			stats_ok = 0;
			continue;
		}
		for (i = 0; i < ncpu; i++) {
			if (cs[i].samples < prev[i].samples || cs[i].lost < prev[i].lost)
				stats_mono = 0;
			for (c = 0; c < nctr; c++)
				if (cs[i].counters[c] < prev[i].counters[c])
					stats_mono = 0;
		}
		memcpy(prev, cs, sizeof(cs[0]) * ncpu);
		/* At 4 s, 14 s, ...: stop draining until every ring has
		 * dropped samples (at most 3 s): LOST records mid-storm. */
		if (nstats % 10 == 4 && now_ns() + 4000000000ULL < sh->deadline) {
			unsigned long long p0 = now_ns(), l0, l1;

			l0 = ring_lost(S, NULL, lost0, &all_lost);
			S->paused = 1;
			do {
				sleep_ms(50);
				l1 = ring_lost(S, lost0, lost1, &all_lost);
			} while (!all_lost && now_ns() - p0 < 3000000000ULL);
			S->paused = 0;
			pauses++;
			info("storm: consumer paused %llu ms: %llu samples dropped",
			     (now_ns() - p0) / 1000000, l1 - l0);
		}
		if (nstats % 10 == 0)
			info("storm: %d s, %ld forks, %llu samples read", nstats,
			     __atomic_load_n(&sh->forks, __ATOMIC_RELAXED), total_samples(S));
	}
	for (i = 0; i < nw; i++)
		waitpid(workers[i], NULL, 0);
	ts1 = now_ns();
	check(stats_ok, "storm-stats-while-running", "STATS failed during the storm");
	check(stats_mono, "storm-stats-monotonic", "STATS totals went backwards");

	{
		unsigned long long s0 = now_ns();

		r = ioctl(S->fd, STROBE_IOC_STOP, 0);
		check(!r, "storm-stop", "%s", strerror(errno));
		info("storm: STOP took %llu us", (now_ns() - s0) / 1000);
	}
	t1 = now_ns();
	consumer_stop(S);
	drain_all(S);
	h0 = ring_heads(S);
	sleep_ms(200);
	check(ring_heads(S) == h0, "storm-stopped-quiet", "records written after STOP");
	{
		struct pollfd p = { S->fd, POLLIN, 0 };
		int pr = poll(&p, 1, 0);

		check(pr == 0, "storm-poll-empty-after-drain", "poll %d revents %#x", pr, p.revents);
	}
	r = get_stats(S->fd, cs);
	check(r >= ncpu, "storm-stats", "%s", r < 0 ? strerror(-r) : "short");
	total = check_rings(S, "storm", r >= ncpu ? cs : NULL, t0, t1);

	{
		double secs = (ts1 - ts0) / 1e9;
		unsigned long long handler_max = 0, handler_tot = 0, events = 0;

		for (i = 0; i < S->nr_rings; i++) {
			struct ring *rg = &S->rings[i];

			lost += cs[i].lost;
			handler_tot += cs[i].handler_ns_total;
			events += cs[i].samples + cs[i].lost;
			if (cs[i].handler_ns_max > handler_max)
				handler_max = cs[i].handler_ns_max;
			info("storm cpu %d: samples %llu (user %llu kernel %llu) = %.0f/s, lost %llu, "
			     "lost-recs %llu sum %llu, pads %llu; faults %llu csw %llu cpu-clock %llu ms "
			     "migrations %llu; longest gap %llu ms", rg->cpu, rg->samples, rg->user, rg->kernel,
			     rg->samples / secs, (unsigned long long)cs[i].lost, rg->lost_recs,
			     rg->lost_sum, rg->pads, rg->last_ctr[0], rg->last_ctr[1],
			     rg->last_ctr[2] / 1000000, rg->last_ctr[3], rg->max_gap / 1000000);
		}
		info("storm: requested %d Hz per CPU; read %llu samples = %.0f/s (%.0f/s per CPU), "
		     "lost %llu; handler avg %llu ns max %llu ns",
		     freq, total, total / secs, total / secs / ncpu, lost,
		     events ? handler_tot / events : 0, handler_max);
		info("storm: %ld forks (%ld with exec) in %.1f s = %.0f forks/s; "
		     "fork failures %ld, child failures %ld; %llu distinct pids sampled; "
		     "%lu polls, %lu POLLIN", sh->forks, sh->execs, secs, sh->forks / secs,
		     sh->fork_failures, sh->child_failures, S->distinct_pids, S->polls, S->poll_in);
		check(sh->forks > 0 && !sh->fork_failures && !sh->child_failures, "storm-forks",
		      "%ld forks, %ld fork failures, %ld child failures", sh->forks,
		      sh->fork_failures, sh->child_failures);
		if (pauses) {
			unsigned long long recs = 0, sum = 0;

			for (i = 0; i < S->nr_rings; i++) {
				recs += S->rings[i].lost_recs;
				sum += S->rings[i].lost_sum;
			}
			info("storm: %d consumer pauses; lost %llu, in %llu LOST records %llu",
			     pauses, lost, recs, sum);
			check(!lost || (recs && sum), "storm-lost-records",
			      "%llu lost but no LOST record", lost);
		}
		check(total >= 100ULL * seconds, "storm-samples", "only %llu samples in %d s",
		      total, seconds);
		/* many short-lived processes were caught on a CPU */
		check(S->distinct_pids >= 50 || (sh->forks < 500 && S->distinct_pids >= 10),
		      "storm-distinct-pids", "%llu distinct pids for %ld forks",
		      S->distinct_pids, sh->forks);
		{
			unsigned long long csw = 0, faults = 0;

			for (i = 0; i < S->nr_rings; i++) {
				csw += cs[i].counters[1];
				faults += cs[i].counters[0];
			}
			check(faults >= (unsigned long long)sh->forks &&
			      csw >= (unsigned long long)sh->forks, "storm-counters-count",
			      "faults %llu csw %llu for %ld forks", faults, csw, sh->forks);
		}
	}
	r = run_true();
	check(r == 0, "storm-system-alive", "fork+exec /bin/true after the storm: %d", r);
out:
	if (sh != MAP_FAILED)
		munmap(sh, sizeof(*sh));
	consumer_stop(S);
	sess_free(S);
}

/* ------------------------------------------------------------------ */
/* 2. rmmod during a session.                                          */

static int rmmod_syscall(void)
{
	if (syscall(SYS_delete_module, "strobe", O_NONBLOCK) == 0)
		return 0;
	return -errno;
}

/* /bin/rmmod strobe; returns its exit status, its output in @msg */
static int rmmod_cmd(char *msg, size_t len)
{
	int p[2], st = 0;
	ssize_t n, got = 0;
	pid_t pid;

	msg[0] = 0;
	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		execl("/bin/rmmod", "rmmod", "strobe", (char *)NULL);
		execl("/sbin/rmmod", "rmmod", "strobe", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while (got < (ssize_t)len - 1 && (n = read(p[0], msg + got, len - 1 - got)) > 0)
		got += n;
	msg[got] = 0;
	if (got && msg[got - 1] == '\n')
		msg[got - 1] = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int module_loaded(void)
{
	struct stat st;

	return stat("/sys/module/strobe", &st) == 0 && stat(DEV, &st) == 0;
}

static void test_rmmod(void)
{
	struct sess *S = sess_new();
	struct perf_event_attr sa, ca;
	struct strobe_cpu_stats cs[MAXCPU];
	unsigned long long t0, t1, n0, n1;
	char msg[256];
	int r, rc;

	info("rmmod: refcnt %d before the session", module_refcnt());
	attr_init(&sa, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	sa.sample_period = 100000;	/* 100 us */
	attr_init(&ca, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	r = sess_config(S, &sa, &ca, 1, 32);
	check(!r, "rmmod-config", "%s", strerror(-r));
	if (r || sess_map(S) || consumer_start(S))
		goto out;
	t0 = now_ns();
	r = ioctl(S->fd, STROBE_IOC_START, 0);
	check(!r, "rmmod-start", "%s", strerror(errno));
	sleep_ms(300);

	rc = module_refcnt();
	check(rc >= 1, "rmmod-refcnt-in-session", "refcnt %d", rc);
	r = rmmod_syscall();
	check(r == -EWOULDBLOCK || r == -EBUSY, "rmmod-syscall-refused",
	      "delete_module: %s", r ? strerror(-r) : "succeeded");
	if (!r) {
		/* the module is gone under an open session: nothing else is safe */
		info("module unloaded during a session!");
		printf("RESULT FAIL\n");
		fflush(stdout);
		_exit(1);
	}
	info("delete_module while in use: %s", strerror(-r));
	r = rmmod_cmd(msg, sizeof(msg));
	check(r != 0 && module_loaded(), "rmmod-cmd-refused", "rmmod exit %d, loaded %d",
	      r, module_loaded());
	info("rmmod: exit %d: %s", r, msg);

	n0 = total_samples(S);
	sleep_ms(300);
	n1 = total_samples(S);
	check(n1 > n0, "rmmod-sampling-continues", "samples %llu -> %llu", n0, n1);
	r = get_stats(S->fd, cs);
	check(r >= ncpu, "rmmod-stats-after", "%s", r < 0 ? strerror(-r) : "short");
	check(!ioctl(S->fd, STROBE_IOC_STOP, 0), "rmmod-stop", "%s", strerror(errno));
	t1 = now_ns();
	consumer_stop(S);
	drain_all(S);
	r = get_stats(S->fd, cs);
	check_rings(S, "rmmod", r >= ncpu ? cs : NULL, t0, t1);

	/* closed but still mapped: the mapping holds the file, and the file the module */
	sess_close(S);
	rc = module_refcnt();
	r = rmmod_syscall();
	check(rc >= 1 && (r == -EWOULDBLOCK || r == -EBUSY), "rmmod-refused-while-mapped",
	      "refcnt %d, delete_module: %s", rc, r ? strerror(-r) : "succeeded");
	if (!r) {
		info("module unloaded while its rings are mapped!");
		printf("RESULT FAIL\n");
		fflush(stdout);
		_exit(1);
	}
	sess_unmap(S);
	rc = wait_refcnt_zero(2000);
	check(rc == 0, "rmmod-refcnt-zero-after-munmap", "refcnt %d", rc);
	short_session("rmmod-after");
	rc = wait_refcnt_zero(2000);
	check(rc == 0 && module_loaded(), "rmmod-unused-at-end", "refcnt %d loaded %d",
	      rc, module_loaded());
out:
	consumer_stop(S);
	sess_free(S);
}

/* ------------------------------------------------------------------ */
/* 3. Close in the middle of a session.                                */

static void close_mapped(void)
{
	struct sess *S = sess_new();
	struct perf_event_attr sa, ca;
	unsigned long long t0, n0, n1;
	int r, fd2, rc;

	attr_init(&sa, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	sa.sample_period = 200000;	/* 200 us */
	attr_init(&ca, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
	r = sess_config(S, &sa, &ca, 1, 32);
	check(!r, "close-mapped-config", "%s", strerror(-r));
	if (r || sess_map(S) || consumer_start(S))
		goto out;
	t0 = now_ns();
	check(!ioctl(S->fd, STROBE_IOC_START, 0), "close-mapped-start", "%s", strerror(errno));
	sleep_ms(200);

	/* the consumer goes on draining through the mappings */
	{
		int fd = S->fd;

		*(volatile int *)&S->fd = -1;
		close(fd);
	}
	n0 = total_samples(S);
	sleep_ms(400);
	n1 = total_samples(S);
	check(n1 > n0, "close-mapped-sampling-continues", "samples %llu -> %llu", n0, n1);
	fd2 = open(DEV, O_RDWR | O_CLOEXEC);
	check(fd2 < 0 && errno == EBUSY, "close-mapped-session-alive",
	      "open after close while mapped: fd %d errno %d", fd2, errno);
	if (fd2 >= 0)
		close(fd2);
	rc = module_refcnt();
	check(rc >= 1, "close-mapped-refcnt", "refcnt %d while mapped", rc);
	consumer_stop(S);
	drain_all(S);
	check_rings(S, "close-mapped", NULL, t0, 0);

	/* last munmap: release stops and tears the session down */
	sess_unmap(S);
	rc = wait_refcnt_zero(2000);
	check(rc == 0, "close-mapped-released", "refcnt %d after munmap", rc);
	fd2 = open_retry(0);
	check(fd2 >= 0, "close-mapped-reopen", "%s", strerror(-fd2));
	if (fd2 >= 0)
		close(fd2);
	short_session("close-mapped-new");
out:
	consumer_stop(S);
	sess_free(S);
}

/* The last mapping is a forked child's: the session lives until it exits. */
static void close_child_mapping(void)
{
	struct sess *S = sess_new();
	struct perf_event_attr sa;
	int r, fd2, st = 0, p[2], nmaps = 0;
	pid_t pid;
	char c;

	attr_init(&sa, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	sa.sample_period = 500000;	/* 500 us */
	r = sess_config(S, &sa, NULL, 0, 64);
	check(!r, "close-child-config", "%s", strerror(-r));
	if (r || sess_map(S) || pipe(p))
		goto out;
	check(!ioctl(S->fd, STROBE_IOC_START, 0), "close-child-start", "%s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		/* keep the inherited mappings, not the fd */
		close(S->fd);
		close(p[1]);
		if (read(p[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(p[0]);
	sess_unmap(S);
	sess_close(S);
	/* the child's mappings keep the session running */
	fd2 = open(DEV, O_RDWR | O_CLOEXEC);
	check(fd2 < 0 && errno == EBUSY, "close-child-session-alive", "open: fd %d errno %d",
	      fd2, errno);
	if (fd2 >= 0)
		close(fd2);
	{
		char path[64];
		FILE *f;
		char line[256];

		snprintf(path, sizeof(path), "/proc/%d/maps", pid);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, "/dev/strobe"))
				nmaps++;
		if (f)
			fclose(f);
		check(nmaps >= 2, "close-child-has-mappings", "%d strobe mappings in the child", nmaps);
	}
	r = module_refcnt();
	check(r >= 1, "close-child-refcnt", "refcnt %d", r);
	/* child exits: release runs in its exit path */
	close(p[1]);
	waitpid(pid, &st, 0);
	check(WIFEXITED(st) && !WEXITSTATUS(st), "close-child-exit", "status %#x", st);
	r = wait_refcnt_zero(2000);
	check(r == 0, "close-child-released", "refcnt %d", r);
	fd2 = open_retry(0);
	check(fd2 >= 0, "close-child-reopen", "%s", strerror(-fd2));
	if (fd2 >= 0)
		close(fd2);
out:
	sess_free(S);
}

/* close() a running, never mapped session; reopen at once; many times */
static void close_unmapped(void)
{
	struct perf_event_attr sa, ca[2];
	struct strobe_config cfg;
	struct strobe_cpu_stats cs[MAXCPU];
	int i, bad = 0, n = 40;
	char why[256] = "";

	attr_init(&sa, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	sa.sample_period = 50000;	/* 50 us */
	attr_init(&ca[0], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	attr_init(&ca[1], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.nr_counters = 2;
	cfg.sample_attr = (uintptr_t)&sa;
	cfg.counter_attrs = (uintptr_t)ca;
	cfg.attr_size = sizeof(sa);
	for (i = 0; i < n; i++) {
		int fd = open(DEV, O_RDWR | O_CLOEXEC);

		if (fd < 0) {
			if (!bad++)
				snprintf(why, sizeof(why), "iteration %d: open: %s", i, strerror(errno));
			continue;
		}
		cfg.buffer_pages = 1u << (i % 5);
		if (ioctl(fd, STROBE_IOC_CONFIG, &cfg) || ioctl(fd, STROBE_IOC_START, 0)) {
			if (!bad++)
				snprintf(why, sizeof(why), "iteration %d: config/start: %s", i,
					 strerror(errno));
		}
		if (i % 3 == 1)
			get_stats(fd, cs);
		if (i % 4)
			sleep_ms(i % 4 * 10);
		close(fd);
	}
	check(!bad, "close-running-unmapped", "%d of %d failed; first: %s", bad, n, why);
	short_session("close-unmapped-new");
}

struct poller {
	int fd, timeout_ms, loop;
	volatile int done;
	int ret, revents, err;
	unsigned long iterations;
	unsigned long long t_ret;
};

/* poll() once, or (loop) until POLLNVAL, an error or 10 s */
static void *poller_thread(void *arg)
{
	struct poller *p = arg;
	unsigned long long t_end = now_ns() + 10000000000ULL;

	do {
		struct pollfd pf = { p->fd, POLLIN, 0 };

		p->ret = poll(&pf, 1, p->timeout_ms);
		p->err = errno;
		p->revents = pf.revents;
		p->iterations++;
	} while (p->loop && p->ret >= 0 && !(p->revents & POLLNVAL) && now_ns() < t_end);
	p->t_ret = now_ns();
	p->done = 1;
	return NULL;
}

/* wait for the poller up to @ms; returns 1 if it is done */
static int poller_wait(struct poller *p, int ms)
{
	while (!p->done && ms > 0) {
		sleep_ms(5);
		ms -= 5;
	}
	return p->done;
}

static void close_poll_stop(void)
{
	struct sess *S = sess_new();
	struct perf_event_attr sa;
	struct poller p = { 0 };
	pthread_t th;
	unsigned long long t_stop;
	int r;

	/* 100 Hz into 64-page rings: the watermark (64 KiB) is far away */
	attr_init(&sa, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	sa.sample_period = 10000000;
	r = sess_config(S, &sa, NULL, 0, 64);
	check(!r, "poll-stop-config", "%s", strerror(-r));
	if (r || sess_map(S))
		goto out;
	check(!ioctl(S->fd, STROBE_IOC_START, 0), "poll-stop-start", "%s", strerror(errno));
	p.fd = S->fd;
	p.timeout_ms = 15000;
	pthread_create(&th, NULL, poller_thread, &p);
	sleep_ms(500);
	check(!p.done, "poll-stop-blocks-below-watermark", "poll returned %d revents %#x early",
	      p.ret, p.revents);
	t_stop = now_ns();
	check(!ioctl(S->fd, STROBE_IOC_STOP, 0), "poll-stop-stop", "%s", strerror(errno));
	r = poller_wait(&p, 5000);
	check(r && p.ret == 1 && (p.revents & POLLIN), "poll-stop-wakes",
	      "done %d poll %d revents %#x after %llu ms", r, p.ret, p.revents,
	      r ? (p.t_ret - t_stop) / 1000000 : 0);
	if (r)
		info("poll returned %llu ms after STOP (data in the rings)",
		     (p.t_ret - t_stop) / 1000000);
	if (!poller_wait(&p, 15000))
		goto out;	/* cannot join a thread stuck in poll */
	pthread_join(th, NULL);
	drain_all(S);
	check_rings(S, "poll-stop", NULL, 0, 0);

	/* Same with empty rings (one sample per CPU every 5 s: none before
	 * STOP): nothing to report, so no EPOLLIN.  Information only. */
	sess_free(S);
	S = sess_new();
	sa.sample_period = 5000000000ULL;
	r = sess_config(S, &sa, NULL, 0, 1);
	check(!r, "poll-stop-empty-config", "%s", strerror(-r));
	if (r)
		goto out;
	memset(&p, 0, sizeof(p));
	p.fd = S->fd;
	p.timeout_ms = 2000;
	check(!ioctl(S->fd, STROBE_IOC_START, 0), "poll-stop-empty-start", "%s", strerror(errno));
	pthread_create(&th, NULL, poller_thread, &p);
	sleep_ms(20);
	t_stop = now_ns();
	ioctl(S->fd, STROBE_IOC_STOP, 0);
	if (poller_wait(&p, 5000)) {
		info("poll with empty rings returned %d (revents %#x) %llu ms after STOP "
		     "(timeout %d ms)", p.ret, p.revents, (p.t_ret - t_stop) / 1000000, p.timeout_ms);
		pthread_join(th, NULL);
	}
out:
	sess_free(S);
}

static void *stopper_thread(void *arg)
{
	ioctl(*(int *)arg, STROBE_IOC_STOP, 0);	/* may lose against close: EBADF */
	return NULL;
}

/* poll() blocked (or spinning) in one thread while another thread closes the
 * fd (after a STOP if @do_stop): poll must return, and the session go away. */
static void close_poll_close(const char *pfx, unsigned long long period, unsigned pages,
			     int do_stop)
{
	struct perf_event_attr sa;
	struct strobe_config cfg;
	struct poller p = { 0 };
	pthread_t th, th2;
	unsigned long long t_close;
	char name[96];
	int fd, fd_copy, r;

	fd = open_retry(2000);
	snprintf(name, sizeof(name), "%s-open", pfx);
	check(fd >= 0, name, "%s", strerror(-fd));
	if (fd < 0)
		return;
	attr_init(&sa, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	sa.sample_period = period;
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.sample_attr = (uintptr_t)&sa;
	cfg.attr_size = sizeof(sa);
	cfg.buffer_pages = pages;
	r = ioctl(fd, STROBE_IOC_CONFIG, &cfg) || ioctl(fd, STROBE_IOC_START, 0);
	snprintf(name, sizeof(name), "%s-start", pfx);
	check(!r, name, "%s", strerror(errno));
	if (r) {
		close(fd);
		return;
	}
	p.fd = fd_copy = fd;
	p.timeout_ms = 3000;
	p.loop = 1;
	pthread_create(&th, NULL, poller_thread, &p);
	sleep_ms(300);
	/* STOP from a second thread while this one closes */
	if (do_stop)
		pthread_create(&th2, NULL, stopper_thread, &fd_copy);
	t_close = now_ns();
	close(fd);
	if (do_stop)
		pthread_join(th2, NULL);
	r = poller_wait(&p, 6000);
	snprintf(name, sizeof(name), "%s-poll-returns", pfx);
	check(r, name, "poll still blocked 6 s after close");
	if (!r)
		return;
	pthread_join(th, NULL);
	info("%s: %lu polls, the last returned %d revents %#x %llu ms after close", pfx,
	     p.iterations, p.ret, p.revents, (p.t_ret - t_close) / 1000000);
	/* the last reference went with the poll table: the device is free again */
	fd = open_retry(2000);
	snprintf(name, sizeof(name), "%s-released", pfx);
	check(fd >= 0, name, "open: %s", strerror(-fd));
	if (fd >= 0)
		close(fd);
}

static void test_close(void)
{
	int rc;

	close_mapped();
	close_child_mapping();
	close_unmapped();
	close_poll_stop();
	/* blocked below the watermark: poll returns at its timeout */
	close_poll_close("poll-close-blocked", 10000000, 64, 0);
	/* rings full, nobody draining: poll returns at once, again and again */
	close_poll_close("poll-close-full", 100000, 1, 0);
	/* STOP and close while another thread polls */
	close_poll_close("poll-stop-close", 1000000, 16, 1);
	rc = wait_refcnt_zero(2000);
	check(rc == 0, "close-refcnt-zero", "refcnt %d", rc);
}

/* ------------------------------------------------------------------ */
/* 4. Racing ioctls.                                                   */

struct racer {
	struct sess *S;
	volatile int *stop;
	int kind;
	unsigned long ops, errors;
	char why[160];
	void *page;		/* a page whose contents are dropped before each use */
};

enum { R_STARTSTOP, R_STOP, R_STATS, R_MMAP, R_FAULT_STATS, R_FAULT_CONFIG, R_NKINDS };

static void racer_err(struct racer *R, const char *what, int e)
{
	if (!R->errors++)
		snprintf(R->why, sizeof(R->why), "%s: %s", what, strerror(e));
}

static void *racer_thread(void *arg)
{
	struct racer *R = arg;
	struct sess *S = R->S;
	struct strobe_cpu_stats cs[MAXCPU], prev[MAXCPU];
	size_t stride = STROBE_PAGE + (size_t)S->pages * STROBE_PAGE;
	int have_prev = 0, i;

	while (!*R->stop) {
		R->ops++;
		switch (R->kind) {
		case R_STARTSTOP:
			if (ioctl(S->fd, STROBE_IOC_START, 0) && errno != EBUSY)
				racer_err(R, "START", errno);
			if (ioctl(S->fd, STROBE_IOC_STOP, 0))
				racer_err(R, "STOP", errno);
			break;
		case R_STOP:
			if (ioctl(S->fd, STROBE_IOC_STOP, 0))
				racer_err(R, "STOP", errno);
			usleep(500);
			break;
		case R_STATS:
			if (get_stats(S->fd, cs) < ncpu) {
				racer_err(R, "STATS", errno);
				break;
			}
			for (i = 0; have_prev && i < ncpu; i++)
				if (cs[i].samples < prev[i].samples || cs[i].lost < prev[i].lost ||
				    cs[i].counters[0] < prev[i].counters[0])
					racer_err(R, "STATS totals went backwards", 0);
			memcpy(prev, cs, sizeof(cs[0]) * ncpu);
			have_prev = 1;
			break;
		case R_MMAP: {
			int cpu = R->ops % ncpu;
			void *c = mmap(NULL, STROBE_PAGE, PROT_READ, MAP_SHARED, S->fd,
				       cpu * stride);
			void *d;

			if (c == MAP_FAILED) {
				racer_err(R, "mmap ctrl", errno);
				break;
			}
			if (((struct strobe_ring_ctrl *)c)->data_size != S->pages * STROBE_PAGE)
				racer_err(R, "ctrl data_size", 0);
			munmap(c, STROBE_PAGE);
			d = mmap(NULL, stride, PROT_READ, MAP_SHARED, S->fd, cpu * stride);
			if (d == MAP_FAILED) {
				racer_err(R, "mmap ring", errno);
				break;
			}
			munmap(d, stride);
			break;
		}
		case R_FAULT_STATS: {
			/* the STATS struct and its output array on a page that is
			 * not present: the ioctl faults it in with its lock held */
			struct strobe_stats *st = R->page;
			struct strobe_cpu_stats *ucs = (void *)((char *)R->page + 64);

			st->size = sizeof(*st);
			st->nr_cpus = ncpu < 16 ? ncpu : 16;
			st->cpus = (uintptr_t)ucs;
			ucs[0].samples = 0;
			madvise(R->page, STROBE_PAGE, MADV_DONTNEED);	/* drops st too */
			if (ioctl(S->fd, STROBE_IOC_STATS, R->page) == 0 || errno != EINVAL)
				racer_err(R, "STATS of a zeroed struct", errno);
			st->size = sizeof(*st);
			st->nr_cpus = ncpu < 16 ? ncpu : 16;
			st->cpus = (uintptr_t)((char *)R->page + STROBE_PAGE + 64);
			madvise((char *)R->page + STROBE_PAGE, STROBE_PAGE, MADV_DONTNEED);
			if (ioctl(S->fd, STROBE_IOC_STATS, st))
				racer_err(R, "STATS", errno);
			break;
		}
		case R_FAULT_CONFIG: {
			struct strobe_config *cfg = R->page;

			madvise(R->page, STROBE_PAGE, MADV_DONTNEED);
			/* a zero config: -EINVAL (size), after faulting it in */
			if (ioctl(S->fd, STROBE_IOC_CONFIG, cfg) == 0 || errno != EINVAL)
				racer_err(R, "CONFIG of a zeroed struct", errno);
			break;
		}
		}
	}
	return NULL;
}

static void race(const char *pfx, int seconds, int faulting)
{
	static const char *const names[R_NKINDS] = {
		"start-stop", "stop", "stats", "mmap", "fault-stats", "fault-config",
	};
	struct sess *S = sess_new();
	struct perf_event_attr sa, ca;
	struct strobe_cpu_stats cs[MAXCPU];
	struct racer R[16];
	pthread_t th[16];
	volatile int stop = 0;
	int kinds[16], nr = 0, i, r;
	char name[96];
	void *pages;

	pages = mmap(NULL, 2 * STROBE_PAGE * 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED) {
		check(0, pfx, "mmap: %s", strerror(errno));
		return;
	}
	attr_init(&sa, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	sa.sample_period = 100000;	/* 100 us */
	attr_init(&ca, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
	r = sess_config(S, &sa, &ca, 1, 16);
	snprintf(name, sizeof(name), "%s-config", pfx);
	check(!r, name, "%s", strerror(-r));
	if (r || sess_map(S) || consumer_start(S))
		goto out;

	if (faulting) {
		kinds[nr++] = R_MMAP;
		kinds[nr++] = R_MMAP;
		kinds[nr++] = R_FAULT_STATS;
		kinds[nr++] = R_FAULT_CONFIG;
		kinds[nr++] = R_STARTSTOP;
	} else {
		kinds[nr++] = R_STARTSTOP;
		kinds[nr++] = R_STARTSTOP;
		kinds[nr++] = R_STOP;
		kinds[nr++] = R_STATS;
		kinds[nr++] = R_STATS;
		kinds[nr++] = R_MMAP;
	}
	for (i = 0; i < nr; i++) {
		memset(&R[i], 0, sizeof(R[i]));
		R[i].S = S;
		R[i].stop = &stop;
		R[i].kind = kinds[i];
		R[i].page = (char *)pages + i * 2 * STROBE_PAGE;
		pthread_create(&th[i], NULL, racer_thread, &R[i]);
	}
	sleep_ms(seconds * 1000);
	stop = 1;
	for (i = 0; i < nr; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < nr; i++) {
		info("%s: %s thread: %lu ops, %lu errors%s%s", pfx, names[R[i].kind], R[i].ops,
		     R[i].errors, R[i].errors ? ": " : "", R[i].why);
		snprintf(name, sizeof(name), "%s-%s-%d", pfx, names[R[i].kind], i);
		check(!R[i].errors && R[i].ops > 0, name, "%lu ops, %lu errors: %s", R[i].ops,
		      R[i].errors, R[i].why);
	}
	/* a clean final state: one more run, stopped, drained, counted */
	r = ioctl(S->fd, STROBE_IOC_START, 0);
	snprintf(name, sizeof(name), "%s-start-after", pfx);
	check(!r, name, "%s", strerror(errno));
	sleep_ms(200);
	ioctl(S->fd, STROBE_IOC_STOP, 0);
	consumer_stop(S);
	drain_all(S);
	r = get_stats(S->fd, cs);
	info("%s: %llu samples read, %lu polls", pfx, total_samples(S), S->polls);
	check_rings(S, pfx, r >= ncpu ? cs : NULL, 0, 0);
out:
	consumer_stop(S);
	sess_free(S);
	munmap(pages, 2 * STROBE_PAGE * 16);
}

/* Run @fn in a child; a child that does not finish in time is reported with
 * the kernel stacks of its threads (it may be unkillable: left behind). */
static void watchdog(const char *name, int seconds, int faulting, int limit)
{
	unsigned long long t0 = now_ns();
	int st = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		failures = 0;
		race(name, seconds, faulting);
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			break;
		if (now_ns() - t0 > limit * 1000000000ULL) {
			char path[512], buf[4096], dname[96];
			DIR *d;
			struct dirent *e;

			check(0, name, "no progress after %d s: deadlock? kernel stacks:", limit);
			snprintf(path, sizeof(path), "/proc/%d/task", pid);
			d = opendir(path);
			while (d && (e = readdir(d))) {
				FILE *f;

				if (e->d_name[0] == '.')
					continue;
				snprintf(path, sizeof(path), "/proc/%d/task/%s/stack", pid, e->d_name);
				f = fopen(path, "r");
				info("thread %s:", e->d_name);
				while (f && fgets(buf, sizeof(buf), f)) {
					buf[strcspn(buf, "\n")] = 0;
					info("  %s", buf);
				}
				if (f)
					fclose(f);
			}
			if (d)
				closedir(d);
			snprintf(dname, sizeof(dname), "%s-no-deadlock", name);
			check(0, dname, "child %d stuck", pid);
			/* fatal signals break a fault's wait for mmap_lock (killable) */
			kill(pid, SIGKILL);
			for (limit = 0; limit < 200 && waitpid(pid, &st, WNOHANG) != pid; limit++)
				sleep_ms(50);
			info("SIGKILL: the stuck child %s", limit < 200 ? "exited" : "is still there");
			return;
		}
		sleep_ms(50);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		failures++;
		if (!WIFEXITED(st))
			check(0, name, "child status %#x", st);
	}
}

/* ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	const char *env = getenv("STRESS_SECONDS");
	int seconds = env && atoi(env) > 0 ? atoi(env) : 30;
	int i, ran = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu > MAXCPU)
		ncpu = MAXCPU;
	for (i = 1; i < argc; i++) {
		const char *t = argv[i];
		int all = !strcmp(t, "all"), known = all;

		if (!strcmp(t, "-t") && i + 1 < argc) {
			seconds = atoi(argv[++i]);
			if (seconds <= 0)
				seconds = 1;
			continue;
		}
		info("stress %s: %d CPUs, refcnt %d", t, ncpu, module_refcnt());
		if (all || !strcmp(t, "storm"))
			test_storm(seconds), known = 1;
		if (all || !strcmp(t, "rmmod"))
			test_rmmod(), known = 1;
		if (all || !strcmp(t, "close"))
			test_close(), known = 1;
		if (all || !strcmp(t, "race"))
			watchdog("race", 5, 0, 45), known = 1;
		if (all || !strcmp(t, "mmap-race"))
			watchdog("mmap-race", 5, 1, 45), known = 1;
		if (!known) {
			fprintf(stderr, USAGE);
			return 2;
		}
		ran++;
	}
	if (!ran) {
		fprintf(stderr, USAGE);
		return 2;
	}
	printf("RESULT %s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
