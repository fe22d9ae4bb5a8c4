/*
 * exact.c - exact attribution in ingest (--attribution exact, schema 16,
 * doc/DESIGN.md): the counters read at context switches
 * (STROBE_SAMPLE_SWITCH records) given to the thread switched out, added
 * to its next sample, or, once it has exited, stored as its tail.
 */
#include "config.h"
#include <stddef.h>
#include <string.h>
#include "ingest_int.h"

/*
 * --attribution exact (STROBE_SAMPLE_SWITCH records, doc/DESIGN.md): per
 * thread, the counter increases read when it was switched out after its
 * last sample (added to its next sample), the keys of its last sample
 * (where the increases of its last run go once it has exited: the tail),
 * and whether its exit was seen (its next switch is its last).  cur as of
 * now, saved as of the last commit (batch_undo() puts it back); gone: its
 * tail was stored, the entry is dropped at the next commit.
 */
struct exact_state {
	uint64_t c[STROBE_MAX_COUNTERS];
	struct db_agg akey;
	struct db_time_agg tkey;
	int have_key, exited, gone;
};

struct exact_thread {
	uint32_t tid;			/* the key */
	uint32_t pid;
	struct exact_state cur, saved;
};

void exact_init(struct ingest *in)
{
	otable_init(&in->exact_threads, sizeof(struct exact_thread),
		    offsetof(struct exact_thread, pid), 256);
}

void exact_free(struct ingest *in)
{
	otable_free(&in->exact_threads);
}

/* otable_filter() of exact_threads at a commit: drop the stored tails. */
static int exact_keep(void *arg, const void *entry)
{
	const struct exact_thread *t = entry;

	(void)arg;
	return !t->cur.gone;
}

/* Thread tid's exact_thread, added if missing (or its tail stored). */
static struct exact_thread *exact_get(struct ingest *in, uint32_t tid, uint32_t pid)
{
	struct exact_thread key = { .tid = tid }, *t;
	int added;

	t = otable_get(&in->exact_threads, &key, &added);
	if (added || t->cur.gone || t->pid != pid) {
		/* new, or a thread of that tid whose tail went already */
		memset(&t->cur, 0, sizeof(t->cur));
		if (added)
			memset(&t->saved, 0, sizeof(t->saved));
		t->pid = pid;
	}
	return t;
}

/*
 * Store t's tail: the increases of its last run after its last sample
 * (read at its last switch out, or at the session's end), added to
 * sample_agg and sample_time under its last sample's keys with no
 * sample (the rows are upserted: they add to that sample's).  A thread
 * never sampled has them under [unknown] at offset 0 in its process.
 * In the open batch: a rollback takes them back with it.
 */
static int exact_flush(struct ingest *in, struct exact_thread *t, uint32_t cpu, uint64_t time_ns,
		       struct error *e)
{
	struct db_agg a;
	struct db_time_agg ta;
	int any = 0;

	for (int i = 0; i < in->nr; i++)
		any |= t->cur.c[i] != 0;
	t->cur.gone = 1;
	if (!any)
		return 0;
	if (t->cur.have_key) {
		a = t->cur.akey;
		ta = t->cur.tkey;
	} else {
		struct proc *p = proc_get(in->procs, t->pid, 0);

		memset(&a, 0, sizeof(a));
		a.binary_id = in->unknown_id;
		a.pid = t->pid;
		a.start_ns = p ? p->start_ns : 0;
		a.comm_id = p ? p->comm_id : 0;
		a.flags = STROBE_SAMPLE_USER;
		memset(&ta, 0, sizeof(ta));
		ta.bucket = time_bucket(in, time_ns);
		ta.cpu = cpu;
		ta.pid = a.pid;
		ta.start_ns = a.start_ns;
		ta.comm_id = a.comm_id;
		ta.binary_id = a.binary_id;
		ta.min_ns = ta.max_ns = (int64_t)time_ns;
	}
	a.samples = 0;
	a.period = 0;
	a.period_unknown = 0;
	ta.samples = 0;
	ta.last_row = 0;
	for (int i = 0; i < STROBE_MAX_COUNTERS; i++) {
		a.c[i] = i < in->nr ? t->cur.c[i] : 0;
		ta.c[i] = a.c[i];
		t->cur.c[i] = 0;
	}
	in->stats.exact_tails++;
	if (db_agg_add(in->db, in->s->id, in->nr, &a, e) < 0)
		return -1;
	return db_time_agg_add(in->db, in->s->id, in->nr, &ta, e);
}

/*
 * A switch read (STROBE_SAMPLE_SWITCH): the increases since the CPU's
 * previous record are the outgoing thread's, after its last sample; kept
 * for its next sample, or stored as its tail if its exit was seen.  Not
 * after lost records or switches the kernel wrote no read for
 * (STROBE_SAMPLE_SWITCH_MISSED): then they are the CPU's lost-interval
 * counts (counter_increase).
 */
int exact_switch(struct ingest *in, const struct record *r, struct error *e)
{
	uint64_t c[STROBE_MAX_COUNTERS];
	struct cpu_counts *cs;
	struct exact_thread *t;

	if (samples_flush(in, e))
		return -1;
	if (batch_open(in, e))
		return -1;
	in->exact = 1;
	in->stats.switch_reads++;
	cs = &cpu_state(in, r->cpu)->now;	/* after the flush: it may grow cpus */
	/* after a loss or unseen switches c is all zero, but an exited
	 * thread's tail is still due at its last switch out */
	counter_increase(in, cs, r, c);
	t = exact_get(in, r->sample.tid, r->sample.pid);
	for (int i = 0; i < in->nr; i++)
		t->cur.c[i] += c[i];
	if (t->cur.exited)
		return exact_flush(in, t, r->cpu, r->time_ns, e);
	return 0;
}

void exact_exited(struct ingest *in, uint32_t tid, uint32_t pid)
{
	/* its next switch out is its last: its tail is stored then */
	exact_get(in, tid, pid)->cur.exited = 1;
}

void exact_take(struct ingest *in, struct db_sample *row)
{
	struct exact_thread *t = exact_get(in, row->tid, row->pid);

	for (int i = 0; i < in->nr; i++) {
		row->c[i] += t->cur.c[i];
		t->cur.c[i] = 0;
	}
}

void exact_keys(struct ingest *in, const struct db_sample *row, const struct db_agg *akey,
		const struct db_time_agg *tkey)
{
	struct exact_thread *t = exact_get(in, row->tid, row->pid);

	t->cur.akey = *akey;
	t->cur.tkey = *tkey;
	t->cur.tkey.min_ns = t->cur.tkey.max_ns = (int64_t)row->time_ns;
	t->cur.have_key = 1;
}

int exact_finish(struct ingest *in, uint64_t end_ns, struct error *e)
{
	for (struct exact_thread *t = NULL; (t = otable_next(&in->exact_threads, t));)
		if (!t->cur.gone && exact_flush(in, t, 0, end_ns, e) < 0)
			return -1;
	return 0;
}

/* The open batch is stored: the threads' state as of now is what a
 * failed batch goes back to; the tails stored are dropped. */
void exact_commit(struct ingest *in)
{
	if (!in->exact)
		return;
	for (struct exact_thread *t = NULL; (t = otable_next(&in->exact_threads, t));)
		t->saved = t->cur;
	otable_filter(&in->exact_threads, exact_keep, NULL);
}

void exact_undo(struct ingest *in)
{
	for (struct exact_thread *t = NULL; (t = otable_next(&in->exact_threads, t));)
		t->cur = t->saved;
}
