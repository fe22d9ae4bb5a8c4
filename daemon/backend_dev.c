/*
 * backend_dev.c - the driver backend's samples (BACKEND_DRIVER,
 * backend_core.h): /dev/strobe (strobe_dev.h) on the session's CPUs, each
 * driver ring a source of the spool and a queue of the time merge of its
 * own, beside its CPU's perf ring, which carries only the side-band
 * (backend_perf.c).
 *
 * The driver writes strobe's record format with an exact TSC.  The drain
 * thread copies its rings as they are (strobe_dev_copy); a chunk is
 * decoded once, by record_decode() inside strobe_dev_parse, and each
 * record is queued as that struct record (queue_record), delivered as is.
 */
#include "config.h"
#include <stdlib.h>
#include "backend_core.h"
#include "callgraph.h"

/* Open the driver's session on the CPUs of b->rings. */
int dev_open(struct backend *b, struct error *e)
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

int dev_copy(struct backend *b, int i, uint32_t src, uint64_t now)
{
	struct dev_put p = { b, &b->rings[i], src, now };

	return strobe_dev_copy(b->dev, i, spool_room(b->spool), dev_put, &p);
}

/* strobe_dev_read() and _parse() callback: queue one record of the
 * driver's ring i, as decoded. */
struct dev_ctx {
	struct backend *b;
	int i;
};

static int dev_record(void *ctx, const struct record *rec, struct error *e)
{
	struct dev_ctx *c = ctx;

	(void)e;
	if (rec->type == STROBE_REC_LOST)
		c->b->dev_lost[c->i] += rec->lost.lost;
	queue_record(&c->b->dq[c->i], rec);
	return 0;
}

int dev_chunk_read(struct backend *b, int i, const void *data, size_t len, struct error *e)
{
	struct dev_ctx c = { b, i };

	return strobe_dev_parse(b->dev, i, data, len, dev_record, &c, e);
}

int dev_read(struct backend *b, int i, struct error *e)
{
	struct dev_ctx c = { b, i };

	return strobe_dev_read(b->dev, i, dev_record, &c, e);
}

/*
 * Driver: final counter totals from STATS, and drops the rings could not
 * report in-band (a full ring at STOP) are stored now, so none is silent.
 */
int dev_read_final(struct backend *b, struct error *e)
{
	const struct sink *k = &b->sink;
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
		k->cpu_final(k->ctx, b->rings[i].cpu, vals, b->cfg.nr_events);
		if (st->lost > b->dev_lost[i] &&
		    k->lost(k->ctx, b->rings[i].cpu, now, st->lost - b->dev_lost[i], "ring",
			    e) < 0)
			return -1;
	}
	return 0;
}

void dev_close(struct backend *b)
{
	strobe_dev_close(b->dev);
	for (int i = 0; b->dq && i < b->nr; i++)
		merge_queue_free(&b->dq[i]);
	free(b->dq);
	free(b->dev_lost);
	free(b->dev_stats);
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
