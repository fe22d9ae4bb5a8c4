/*
 * backend_core.c - what every capture backend shares (backend.h): opening
 * the rings of the session's CPUs, the drain thread that empties them into
 * the spool, the per-ring queues, the time merge and delivery to the sink.
 * The rings themselves are backend_perf.c's (perf_event_open(2), with
 * backend_sideband.c for their side-band), backend_dev.c's (/dev/strobe)
 * and backend_usdt.c's (uprobes in the perf rings); backend_core.h says
 * what each provides.
 *
 * Draining, in two steps that never wait for each other.  A thread of its
 * own (backend_start) only empties the rings: what each ring holds is
 * copied as one chunk of raw bytes into the spool (spool.h), and after each
 * pass over all rings a pass mark with the time the pass began.  It never
 * decodes (but for the rare MMAP2 records: sideband_note),
 * resolves or writes the database, so it keeps up whatever ingest does;
 * when the spool is full it leaves the records in their ring, where the
 * kernel (or the driver) counts what no longer fits as lost.
 * backend_drain, in the session's ingest thread, takes the chunks: each is
 * decoded, once, into its ring's queue (a sample as its struct record: a
 * perf sample is converted on the way, a driver record is one already),
 * then the queues are merged by time up to a horizon, because a child's
 * FORK can sit in another CPU's ring than its COMM, MMAP2 and samples.
 * The horizon is the last pass mark taken, less the time a record may take
 * to reach its ring.  Delivery hands each queued record to the sink as it
 * was decoded (backend_core.h: enum qkind).
 */
#include "config.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>
#include "backend_core.h"
#include "log.h"

/* A record written this long before the drain started is in its ring. */
#define MERGE_HORIZON_NS	(5 * 1000 * 1000ULL)
/* backend_drain's share of the ingest thread's pass, when behind */
#define DRAIN_BUDGET_NS		(50 * 1000 * 1000ULL)

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

static void thread_stop(struct backend *b);

/* Every ring's queue, and its CPU, for the merge. */
static void queues_init(struct backend *b)
{
	b->queues = xcalloc(2 * b->nr, sizeof(*b->queues));
	b->queue_cpu = xcalloc(2 * b->nr, sizeof(*b->queue_cpu));
	for (int i = 0; i < b->nr; i++) {
		b->queue_cpu[b->nr_queues] = b->rings[i].cpu;
		b->queues[b->nr_queues++] = &b->rings[i].q;
		if (b->dq) {
			b->queue_cpu[b->nr_queues] = b->rings[i].cpu;
			b->queues[b->nr_queues++] = &b->dq[i];
		}
	}
	merge_init(&b->merge, b->queues, b->nr_queues);
}

struct backend *backend_open(const struct backend_config *cfg, struct error *e)
{
	struct backend *b = xcalloc(1, sizeof(*b));
	long pg = sysconf(_SC_PAGESIZE);
	int *cpus = NULL;
	int n;

	pthread_mutex_init(&b->owners.lock, NULL);
	b->held = binhold_new(BINHOLD_FILES, BINHOLD_NOTES);
	b->wake_fd = -1;
	b->cfg = *cfg;
	if (perf_setup(b, e) < 0)
		goto fail;
	if (cfg->nr_sites > 0 && probes_setup(b, e) < 0)
		goto fail;
	if (!b->cfg.buffer_pages)
		b->cfg.buffer_pages = perf_ring_pages_default(&b->cfg, pg);
	if (b->cfg.buffer_pages & (b->cfg.buffer_pages - 1)) {
		error_set(e, "buffer size %u pages is not a power of two", b->cfg.buffer_pages);
		goto fail;
	}
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
		if (perf_ring_open(b, r, e) < 0 || probes_open(b, r, e) < 0)
			goto fail;
		b->fds[b->nr_fds++] = r->fd;
	}
	free(cpus);
	cpus = NULL;
	if (probes_check(b, e) < 0)
		goto fail;
	if (b->cfg.kind == BACKEND_DRIVER && dev_open(b, e) < 0)
		goto fail;
	queues_init(b);
	perf_tsc_setup(b);
	return b;
fail:
	free(cpus);
	backend_close(b);
	return NULL;
}

int backend_enable(struct backend *b, struct error *e)
{
	/* side-band first: a sample's mapping is announced before it */
	if (perf_enable(b, e) < 0 || probes_enable(b, e) < 0)
		return -1;
	if (b->dev && strobe_dev_start(b->dev, e) < 0) {
		/* the driver's events released: how many of them fit */
		if (errno == ENOSPC && b->nr > 0)
			perf_group_too_big(&b->cfg, b->rings[0].cpu, e);
		return -1;
	}
	b->enable_ns = clock_monotonic_ns();
	return perf_check_scheduled(b, e);
}

int backend_disable(struct backend *b)
{
	if (b->dev)
		strobe_dev_stop(b->dev);
	probes_disable(b);
	perf_disable(b);
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
	for (int i = 0; i < b->nr; i++) {
		/* the uprobes write into the leader's ring: they go first */
		probes_close(b, &b->rings[i]);
		perf_ring_close(b, &b->rings[i]);
	}
	dev_close(b);
	free(b->queues);
	free(b->queue_cpu);
	free(b->rings);
	free(b->fds);
	probes_free(b);
	pthread_mutex_destroy(&b->owners.lock);
	binhold_free(b->held);
	free(b);
}

void queue_record(struct merge_queue *q, const struct record *r)
{
	size_t head = record_head_size(r), tail = record_tail_size(r);
	struct record *dst = merge_queue_push(q, r->time_ns, Q_RECORD, head + tail);

	/* only the counters the record has: deliver() hands the sink a
	 * struct cut short there, which reads none past nr_counters */
	record_head_copy(dst, r);
	record_tail_copy(r, (char *)dst + head);
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
			int r = perf_ring_copy(b, &b->rings[i], i, start);

			put |= r > 0;
			refused |= r < 0 || r == 2;
			if (r < 0 || r == 2)
				spool_short(b->spool);
			if (b->dev) {
				r = dev_copy(b, i, b->nr + i, start);
				put |= r > 0;
				refused |= r < 0 || r == 2;
				if (r < 0 || r == 2)
					spool_short(b->spool);
			}
		}
		if (!refused)
			spool_pass(b->spool, start);
		if (put)
			(void)eventfd_write(b->notify_fd, 1);	/* full: the news is there */
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

int backend_start(struct backend *b, struct spool *sp, int notify_fd, const struct sink *k,
		  struct error *e)
{
	int err;

	b->spool = sp;
	b->notify_fd = notify_fd;
	b->sink = *k;
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
	(void)eventfd_write(b->wake_fd, 1);
	pthread_join(b->thread, NULL);
	b->running = 0;
	close(b->wake_fd);
	b->wake_fd = -1;
}

/* Queue src's entry q to the sink; late_ns as for sideband_deliver(). */
static int deliver(struct backend *b, int src, const struct merge_ent *q, uint64_t late_ns,
		   struct error *e)
{
	const struct sink *k = &b->sink;

	/* sideband_deliver says which process a late side-band record is of */
	if (late_ns && q->kind != Q_PERF && k->late(k->ctx, 0, q->time, late_ns, e) < 0)
		return -1;
	switch (q->kind) {
	case Q_RECORD: {
		/* queue_record's struct (its first record_head_size()
		 * bytes), 8-aligned in the queue's own (writable) buffer:
		 * pointed at its tail where it lies */
		struct record *rec = (struct record *)merge_payload(q);

		record_tail_point(rec, (char *)rec + record_head_size(rec));
		return k->record(k->ctx, rec, e);
	}
	case Q_MARK:
		return probe_deliver(b, q, e);
	case Q_PERF:
		return sideband_deliver(b, b->queue_cpu[src], q, late_ns, e);
	}
	return error_set(e, "internal error: queue entry of kind %u", q->kind);
}

/* A spool entry's records into its ring's queue. */
static void chunk_read(struct backend *b, const struct spool_entry *ent)
{
	struct error e;

	if (ent->src < (uint32_t)b->nr) {
		struct cpu_ring *r = &b->rings[ent->src];

		if (ent->len <= r->size && perf_chunk_read(b, r, ent->data, ent->len) == ent->len)
			return;
		snprintf(e.msg, sizeof(e.msg), "malformed record in the ring of CPU %d: "
			 "the rest of a %zu-byte chunk skipped", r->cpu, ent->len);
	} else if (b->dev && ent->src < 2 * (uint32_t)b->nr) {
		if (dev_chunk_read(b, ent->src - b->nr, ent->data, ent->len, &e) == 0)
			return;
	} else {
		snprintf(e.msg, sizeof(e.msg), "a spool chunk of unknown source %u skipped",
			 ent->src);
	}
	if (b->bad_chunks++ < 10)
		daemon_log("%s", e.msg);
}

/* Merge the queues up to horizon into the sink. */
static int merge_deliver(struct backend *b, uint64_t horizon, struct error *e)
{
	for (;;) {
		uint64_t late = b->merge.stats.late, last = b->merge.last_time;
		const struct merge_ent *q;
		int src;

		q = merge_next(&b->merge, horizon, &src);
		if (!q)
			break;
		/* merge.h: a late entry leaves last_time as it was */
		if (deliver(b, src, q, b->merge.stats.late != late ? last - q->time : 0, e) < 0)
			return -1;
	}
	merge_settle(&b->merge);
	return 0;
}

int backend_drain(struct backend *b, int final, struct error *e)
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
		if (!final && merge_deliver(b, b->pass_ns > MERGE_HORIZON_NS ?
					    b->pass_ns - MERGE_HORIZON_NS : 0, e) < 0)
			return -1;
		if (r == 1 && !final && clock_monotonic_ns() > deadline) {
			/* more waits: come back after the other events */
			(void)eventfd_write(b->notify_fd, 1);	/* full: the news is there */
			return 0;
		}
	}
	if (!final && b->running)
		return 0;
	/* no drain thread (any more): the rings are read in place */
	for (int i = 0; i < b->nr; i++) {
		perf_ring_read(b, &b->rings[i]);
		if (b->dev && dev_read(b, i, e) < 0)
			return -1;
	}
	return merge_deliver(b, final ? UINT64_MAX : clock_monotonic_ns() - MERGE_HORIZON_NS, e);
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

int backend_read_final(struct backend *b, struct error *e)
{
	return b->dev ? dev_read_final(b, e) : perf_read_final(b, e);
}
