/*
 * sample.c - the sample path of ingest (ingest.h's ingest_record): a
 * sample's counters turned into increases, its location resolved, its
 * row written and added to the open batch's histograms (sample_agg,
 * sample_time); samples held for a batched unwind; and the other records
 * of a CPU (lost, throttle, unscheduled, marker).
 *
 * Hot path: ingest_record() for a sample does one hash probe for the
 * process, one bisection of its maps, one prepared INSERT and one probe
 * of each histogram (otable_get_sized: inlined); no allocation once the
 * tables have grown.  Stacks (callstack.c) and exact attribution
 * (exact.c) are called only for the samples and sessions that have them.
 */
#include "config.h"
#include <stddef.h>
#include <string.h>
#include "ingest_int.h"
#include "ubatch.h"
#include "uworker.h"

struct cpu_state *cpu_state(struct ingest *in, uint32_t cpu)
{
	if (cpu >= in->nr_cpus) {
		size_t n = cpu + 1;

		in->cpus = xrealloc(in->cpus, n * sizeof(*in->cpus));
		memset(in->cpus + in->nr_cpus, 0, (n - in->nr_cpus) * sizeof(*in->cpus));
		in->nr_cpus = n;
	}
	return &in->cpus[cpu];
}

/*
 * The increases of r's counters since the previous record of its CPU
 * (sample or, with exact attribution, switch read), into c; the CPU's
 * baseline moves to r.  After lost records they span the lost interval,
 * and with STROBE_SAMPLE_SWITCH_MISSED runs of threads the kernel wrote
 * no switch read for: they are nobody's that a record names, kept as the
 * CPU's lost-interval counts, c is all zero, and 1 is returned.
 */
int counter_increase(struct ingest *in, struct cpu_counts *cs, const struct record *r,
		     uint64_t *c)
{
	int nr = MIN((int)r->sample.nr_counters, in->nr);

	for (int i = 0; i < in->nr; i++) {
		uint64_t v = i < nr ? r->sample.counters[i] : 0;

		c[i] = cs->seen && v >= cs->last[i] ? v - cs->last[i] : (cs->seen ? 0 : v);
		cs->last[i] = v;
	}
	cs->seen = 1;
	if (r->sample.flags & STROBE_SAMPLE_SWITCH_MISSED)
		in->stats.switch_missed++;
	else if (!cs->after_loss)
		return 0;
	/* what the counters did over the lost interval is no record's */
	for (int i = 0; i < in->nr; i++) {
		cs->st.lost_inc[i] += c[i];
		c[i] = 0;
	}
	cs->after_loss = 0;
	return 1;
}

int64_t time_bucket(const struct ingest *in, uint64_t time_ns)
{
	int64_t rel = (int64_t)time_ns - in->s->start_ns;

	return rel / INGEST_TIME_BUCKET_NS - (rel % INGEST_TIME_BUCKET_NS < 0);
}

void agg_merge(struct otable *t, struct otable *from, size_t sums_at)
{
	for (char *f = NULL; (f = otable_next(from, f));) {
		int added;
		char *a = otable_get(t, f, &added);

		db_sums_add((struct db_sums *)(a + sums_at), (const struct db_sums *)(f + sums_at));
	}
	otable_clear(from);
}

/* Sample r's row but for its process's part (comm, location, stack): its
 * counters' increases, with exact attribution those of its thread's
 * earlier runs too. */
static void sample_row(struct ingest *in, const struct record *r, struct db_sample *row)
{
	struct cpu_counts *cs = &cpu_state(in, r->cpu)->now;

	row->session_id = in->s->id;
	row->time_ns = r->time_ns;
	row->tsc = r->sample.tsc;
	row->cpu = r->cpu;
	row->pid = r->sample.pid;
	row->tid = r->sample.tid;
	row->flags = r->sample.flags & ~STROBE_SAMPLE_SWITCH_MISSED;	/* AFTER_LOSS says it */
	row->period = r->sample.period;
	row->nr = in->nr;
	row->stack_id = 0;
	cs->st.samples++;
	if (counter_increase(in, cs, r, row->c))
		row->flags |= STROBE_SAMPLE_AFTER_LOSS;
	if (in->exact)
		exact_take(in, row);
}

/* Where the sample was: (binary, file offset), through the kernel or the
 * maps of its process p (NULL: unknown; [unknown] at offset = address). */
static void sample_locate(struct ingest *in, const struct record *r, const struct proc *p,
			  struct db_sample *row)
{
	const struct map *m;

	if ((row->flags & STROBE_SAMPLE_MODE_MASK) == STROBE_SAMPLE_KERNEL && in->kernel_id) {
		row->binary_id = in->kernel_id;
		row->offset = r->sample.ip;
		return;
	}
	m = p ? proc_map_find(p, r->sample.ip) : NULL;
	if (m) {
		row->binary_id = m->binary_id;
		row->offset = r->sample.ip - m->start + m->pgoff;
	} else {
		row->binary_id = in->unknown_id;
		row->offset = r->sample.ip;
	}
}

/* Add row (of the process that started at start_ns) to the open batch's
 * sample_agg sums; its key into *key. */
static void agg_add(struct ingest *in, const struct db_sample *row, uint64_t start_ns,
		    struct db_agg *key)
{
	struct db_agg *a;
	int added;

	memset(key, 0, sizeof(*key));	/* the key's padding: otable.h */
	key->binary_id = row->binary_id;
	key->offset = row->offset;
	key->pid = row->pid;
	key->start_ns = start_ns;
	key->comm_id = row->comm_id;
	key->flags = row->flags & STROBE_SAMPLE_MODE_MASK;
	a = otable_get_sized(&in->pending, key, offsetof(struct db_agg, samples), &added);
	a->samples++;
	a->period += row->period;
	if (!row->period)
		a->period_unknown = 1;
	for (int i = 0; i < in->nr; i++)
		a->c[i] += row->c[i];
}

/* The same for sample_time (row rowid); its key into *key. */
static void time_add(struct ingest *in, const struct db_sample *row, int64_t rowid,
		     uint64_t start_ns, struct db_time_agg *key)
{
	struct db_time_agg *ta;
	int added;

	memset(key, 0, sizeof(*key));
	key->bucket = time_bucket(in, row->time_ns);
	key->cpu = row->cpu;
	key->pid = row->pid;
	key->start_ns = start_ns;
	key->comm_id = row->comm_id;
	key->binary_id = row->binary_id;
	ta = otable_get_sized(&in->times, key, offsetof(struct db_time_agg, samples), &added);
	ta->samples++;
	ta->last_row = rowid;
	if ((int64_t)row->time_ns > ta->max_ns || ta->samples == 1)
		ta->max_ns = (int64_t)row->time_ns;
	if ((int64_t)row->time_ns < ta->min_ns || ta->samples == 1)
		ta->min_ns = (int64_t)row->time_ns;
	for (int i = 0; i < in->nr; i++)
		ta->c[i] += row->c[i];
}

/* Written sample row rowid counted in the session and its histograms. */
static void sample_count(struct ingest *in, const struct proc *p, const struct db_sample *row,
			 int64_t rowid)
{
	struct db_agg key;
	struct db_time_agg tkey;
	/* the process, not just its pid (schema 11) */
	uint64_t start_ns = p ? p->start_ns : proc_gone_start(in, row->pid);

	if (!in->s->first_sample)
		in->s->first_sample = rowid;
	in->s->last_sample = rowid;
	in->s->samples++;
	in->stats.samples++;
	agg_add(in, row, start_ns, &key);
	if (row->stack_id)
		stack_agg_add(in, row, start_ns);
	if ((int64_t)row->time_ns < in->max_time)
		in->s->late_samples++;
	else
		in->max_time = (int64_t)row->time_ns;
	time_add(in, row, rowid, start_ns, &tkey);
	if (in->exact)
		exact_keys(in, row, &key, &tkey);
}

/* Store sample r (held or not: all but its user stack's unwinding). */
static int sample_finish(struct ingest *in, const struct record *r, struct error *e)
{
	struct db_sample row;
	struct proc *p;
	int64_t rowid;

	if (batch_open(in, e))
		return -1;
	sample_row(in, r, &row);
	p = proc_get(in->procs, row.pid, 0);
	if (p && row.tid != row.pid)
		proc_thread_seen(p, row.tid);
	row.comm_id = p ? p->comm_id : 0;
	if (p && in->cgroup_source && cgroup_sample(in, p, r->sample.cgroup, e) < 0)
		return -1;
	sample_locate(in, r, p, &row);
	if ((r->sample.flags & (STROBE_SAMPLE_CALLCHAIN | STROBE_SAMPLE_USTACK)) &&
	    stack_sample(in, r, p, &row, e) < 0)
		return -1;
	rowid = db_sample_insert(in->db, &row, e);
	if (rowid < 0)
		return -1;
	if (in->keep_stacks && (r->sample.flags & STROBE_SAMPLE_USTACK) &&
	    raw_stack_store(in, r, rowid, e) < 0)
		return -1;
	sample_count(in, p, &row, rowid);
	if (++in->batch_rows >= BATCH_ROWS && !in->held)
		return ingest_commit(in, e);
	return 0;
}

/*
 * Hold sample r for a batched unwind (ubatch.h) when its user stack is
 * the worker's to unwind: its index in the uworker's batch; UWORKER_FULL
 * (flush, then try again); < 0 else (finished at once: callstack.c's
 * stack_unwound).
 */
static int sample_hold(struct ingest *in, const struct record *r)
{
	struct proc *p;
	int i;

	if (!(r->sample.flags & STROBE_SAMPLE_USTACK) || !r->sample.regs_abi ||
	    !r->sample.nr_regs || !ingest_worker(in))
		return UWORKER_INVALID;
	p = proc_get(in->procs, r->sample.pid, 0);
	if (!p)
		return UWORKER_INVALID;
	i = uworker_add(in->unwinder, p, r->sample.regs_abi, r->sample.regs_mask,
			r->sample.regs, r->sample.nr_regs, r->sample.stack,
			r->sample.stack_size, INGEST_STACK_FRAMES);
	if (i >= 0)
		ubatch_put(in->ubatch, r);
	return i;
}

/*
 * Finish the held samples in the order they came: one round trip to the
 * worker for all of them, then each exactly as ingest_sample() would
 * have finished it when it came (sample_finish, the worker's answer in
 * place of uworker_unwind's).  That is the same only because of the
 * FLUSH POINTS, where this is called before anything else is done:
 *  - the top of every other entry point (the records of mmap, comm, exec,
 *    fork, exit, cgroups, lost, late, throttle, unscheduled, marker,
 *    switch; ingest_kernel, _call_graph, _cgroups_start, _set_limits,
 *    _begin, _commit, _finish, _get_stats): what finishing reads (the
 *    process table, each process's maps, which are also those sent to the
 *    worker, its threads and cgroup, the counters, the limits) is what it
 *    was when the samples came, and no struct proc they were held with
 *    can have been freed (none is kept: sample_finish looks it up again);
 *  - a sample that is not held (ingest_sample): samples keep their order;
 *  - a full batch (ingest_sample).
 * While it finishes them, the calls finishing makes (ingest_commit every
 * BATCH_ROWS, ingest_cgroup) do not flush again.  Every held sample was
 * held in an open batch (ingest_sample opens it first; ingest_commit
 * flushes before it closes it).
 */
int samples_flush(struct ingest *in, struct error *e)
{
	int rc = 0;

	if (in->flushing)
		return 0;
	if (in->flush_failed) {
		in->flush_failed = 0;
		*e = in->flush_error;
		return -1;
	}
	if (!ubatch_nr(in->ubatch))
		return 0;
	in->flushing = 1;
	uworker_run(in->unwinder);
	unwinder_stats(in);
	for (size_t i = 0; i < ubatch_nr(in->ubatch) && !rc; i++) {
		in->unwound = (int)i;
		rc = sample_finish(in, ubatch_get(in->ubatch, i), e);
	}
	in->unwound = -1;
	ubatch_clear(in->ubatch);
	in->flushing = 0;
	return rc;
}

void samples_flush_later(struct ingest *in)
{
	struct error e;

	if (!in->flush_failed && samples_flush(in, &e) < 0) {
		in->flush_failed = 1;
		in->flush_error = e;
	}
}

/* A sample: held for a batched unwind, or finished now, after the held
 * ones (samples_flush). */
static int ingest_sample(struct ingest *in, const struct record *r, struct error *e)
{
	int i;

	if (batch_open(in, e))
		return -1;
	i = sample_hold(in, r);
	if (i == UWORKER_FULL) {
		if (samples_flush(in, e) || batch_open(in, e))
			return -1;
		i = sample_hold(in, r);
	}
	if (i < 0)
		return samples_flush(in, e) ? -1 : sample_finish(in, r, e);
	if (ubatch_nr(in->ubatch) == UWORKER_BATCH)
		return samples_flush(in, e);
	return 0;
}

int ingest_record(struct ingest *in, const struct record *r, struct error *e)
{
	switch (r->type) {
	case STROBE_REC_SAMPLE:
		if (r->sample.flags & STROBE_SAMPLE_SWITCH)
			return exact_switch(in, r, e);
		return ingest_sample(in, r, e);
	case STROBE_REC_LOST:
		return ingest_lost(in, r->cpu, r->time_ns, r->lost.lost, "ring", e);
	case STROBE_REC_UNSCHED:
		return ingest_unscheduled(in, r->cpu, r->time_ns, r->unsched.enabled_ns,
					  r->unsched.running_ns,
					  !!(r->unsched.flags & STROBE_UNSCHED_ERROR), e);
	}
	return error_set(e, "unknown record type %u", r->type);
}

int ingest_lost(struct ingest *in, uint32_t cpu, uint64_t time_ns, uint64_t count,
		const char *kind, struct error *e)
{
	if (samples_flush(in, e))
		return -1;
	if (!count)
		return 0;
	if (batch_open(in, e))
		return -1;
	cpu_state(in, cpu)->now.st.lost += count;
	cpu_state(in, cpu)->now.after_loss = 1;
	in->s->lost += count;
	in->stats.lost += count;
	return db_lost_insert(in->db, in->s->id, cpu, time_ns, count, kind, e);
}

int ingest_throttle(struct ingest *in, uint32_t cpu, uint64_t time_ns, struct error *e)
{
	if (samples_flush(in, e))
		return -1;
	if (batch_open(in, e))
		return -1;
	in->s->throttled++;
	in->stats.throttled++;
	return db_lost_insert(in->db, in->s->id, cpu, time_ns, 0, "throttle", e);
}

int ingest_marker(struct ingest *in, const struct db_marker *m, struct error *e)
{
	if (samples_flush(in, e))
		return -1;
	if (batch_open(in, e))
		return -1;
	in->batch_rows++;
	return db_marker_insert(in->db, in->s->id, m, e);
}

int ingest_unscheduled(struct ingest *in, uint32_t cpu, uint64_t time_ns,
		       uint64_t enabled_ns, uint64_t running_ns, int error, struct error *e)
{
	if (samples_flush(in, e))
		return -1;
	if (running_ns >= enabled_ns && !error)
		return 0;
	if (batch_open(in, e))
		return -1;
	in->batch_rows++;
	in->stats.unscheduled_ns += enabled_ns - running_ns;
	return db_unscheduled_insert(in->db, in->s->id, cpu, time_ns, enabled_ns, running_ns,
				     error ? "unschedulable" : "multiplexed", e);
}
