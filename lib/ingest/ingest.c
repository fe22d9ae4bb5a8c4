/*
 * ingest.c - a session's ingest (see ingest.h): its life from
 * ingest_new() to ingest_finish(), the batches its rows are written in,
 * its limits and statistics, and the ingest worker it starts at the first
 * need.  The records themselves are the other files' (ingest_int.h).
 *
 * What the database holds must add up: the session's totals, the per-CPU
 * statistics and the histogram count only committed rows.  Each commit
 * takes a snapshot of them; a batch that fails is rolled back and the
 * snapshot restored.  The histogram of the open batch is kept apart and
 * merged into the session's at commit.  Binaries and comms added by a
 * failed batch are gone with it (their ids would be given again to other
 * rows): the ids above those of the last commit are forgotten, and so are
 * the mappings that use them.
 *
 * The sums per fine time bucket (sample_time, schema 5) of the open batch
 * are kept apart too, and added to the table's rows (an upsert) in the
 * batch's transaction, just before it commits: the table always agrees
 * with the committed samples, also in a session whose strobed died.
 */
#include "config.h"
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "binname.h"
#include "hashkey.h"
#include "ingest_int.h"
#include "kallsyms.h"
#include "readbudget.h"
#include "shares.h"
#include "ubatch.h"
#include "unwind.h"
#include "uworker.h"

int64_t *name_slot(struct otable *t, const char *name, int create)
{
	struct name_id *n;
	int added;

	if (!create) {
		n = otable_find_str(t, name);
		return n ? &n->id : NULL;
	}
	n = otable_get_str(t, name, &added);
	return &n->id;
}

/* Forget the ids in t (struct name_id) above max. */
static void names_forget_above(struct otable *t, int64_t max)
{
	for (struct name_id *n = NULL; (n = otable_next(t, n));)
		if (n->id > max)
			n->id = 0;
}

static void shares_limits(struct ingest *in)
{
	shares_set_limit(in->shares, SHARES_COMMS, in->limits.comms);
	shares_set_limit(in->shares, SHARES_BINARIES, in->limits.binaries);
	shares_set_limit(in->shares, SHARES_CGROUPS, INGEST_CGROUPS_MAX);
	shares_set_limit(in->shares, SHARES_STACKS, in->limits.stacks);
}

void ingest_set_limits(struct ingest *in, const struct ingest_limits *lim)
{
	samples_flush_later(in);
	in->limits = *lim;
	readbudget_set_total(in->budget, lim->bytes_read);
	if (!in->limits.stacks)
		in->limits.stacks = INGEST_STACKS_MAX;
	shares_limits(in);
}

static void proc_forget_ids(struct proc *p, void *arg)
{
	const struct ingest_committed *c = arg;

	proc_map_drop_binaries(p, c->binary_max + 1);
	if (p->comm_id > c->comm_max)
		p->comm_id = 0;
}

/* The marks of a failed batch are not stored: forget them, so that the
 * next loss marks the process again. */
static void proc_forget_uncertain(struct proc *p, void *arg)
{
	const uint64_t *since = arg;

	if (p->uncertain_ns >= *since)
		p->uncertain_ns = 0;
}

/* The open batch is stored: it is what a failed batch goes back to. */
static void batch_committed(struct ingest *in)
{
	in->in_batch = 0;
	in->batch_uncertain_ns = 0;
	in->held = 0;
	agg_merge(&in->agg, &in->pending, offsetof(struct db_agg, sums));
	otable_clear(&in->times);
	in->committed.first_sample = in->s->first_sample;
	in->committed.last_sample = in->s->last_sample;
	in->committed.samples = in->s->samples;
	in->committed.lost = in->s->lost;
	in->committed.throttled = in->s->throttled;
	in->committed.late_samples = in->s->late_samples;
	in->committed.late_records = in->s->late_records;
	in->committed.late_max_ns = in->s->late_max_ns;
	in->committed.max_time = in->max_time;
	in->committed.stats = in->stats;
	in->committed.binary_max = in->binary_max;
	in->committed.comm_max = in->comm_max;
	callstack_commit(in);
	exact_commit(in);
	for (size_t c = 0; c < in->nr_cpus; c++)
		in->cpus[c].committed = in->cpus[c].now;
	cgroups_commit(in);
}

/* The binaries and comms a failed batch added are gone with it: their
 * ids are forgotten, and the mappings and names that use them. */
static void ids_undo(struct ingest *in)
{
	if (in->binary_max <= in->committed.binary_max && in->comm_max <= in->committed.comm_max)
		return;
	names_forget_above(&in->binaries, in->committed.binary_max);
	names_forget_above(&in->comms, in->committed.comm_max);
	proc_table_each(in->procs, proc_forget_ids, &in->committed);
	if (in->unknown_id > in->committed.binary_max)
		in->unknown_id = 0;	/* batch_open adds it again */
	if (in->kernel_id > in->committed.binary_max)
		in->kernel_id = in->s->kernel_binary_id = 0;
	in->binary_max = in->committed.binary_max;
	in->comm_max = in->committed.comm_max;
}

/* The open batch was rolled back (by us or by SQLite): forget its rows. */
static void batch_undo(struct ingest *in)
{
	if (!sqlite3_get_autocommit(db_sqlite(in->db)))
		db_rollback(in->db);
	in->in_batch = 0;
	in->held = 0;
	otable_clear(&in->pending);
	otable_clear(&in->times);
	callstack_undo(in);
	exact_undo(in);
	in->s->late_samples = in->committed.late_samples;
	in->s->late_records = in->committed.late_records;
	in->s->late_max_ns = in->committed.late_max_ns;
	in->max_time = in->committed.max_time;
	in->s->first_sample = in->committed.first_sample;
	in->s->last_sample = in->committed.last_sample;
	in->s->samples = in->committed.samples;
	in->s->lost = in->committed.lost;
	in->s->throttled = in->committed.throttled;
	in->stats = in->committed.stats;
	for (size_t c = 0; c < in->nr_cpus; c++)
		in->cpus[c].now = in->cpus[c].committed;
	if (in->batch_uncertain_ns)
		proc_table_each(in->procs, proc_forget_uncertain, &in->batch_uncertain_ns);
	in->batch_uncertain_ns = 0;
	cgroups_undo(in);
	ids_undo(in);
}

int batch_open(struct ingest *in, struct error *e)
{
	/* SQLite rolls a transaction back by itself on some errors (disk full) */
	if (in->in_batch && sqlite3_get_autocommit(db_sqlite(in->db)))
		batch_undo(in);
	if (in->in_batch)
		return 0;
	if (db_begin(in->db, e))
		return -1;
	in->in_batch = 1;
	in->batch_rows = 0;
	if (!in->unknown_id) {
		in->unknown_id = binary_special(in, "[unknown]", e);
		if (in->unknown_id < 0) {
			in->unknown_id = 0;
			batch_undo(in);
			return -1;
		}
	}
	return 0;
}

struct ingest *ingest_new(struct db *db, struct bincache *cache, struct db_session *s,
			  struct error *e)
{
	struct ingest *in = xcalloc(1, sizeof(*in));
	struct proc *idle;

	in->db = db;
	in->cache = cache;
	in->s = s;
	in->nr = s->nr_events;
	in->limits = (struct ingest_limits){
		.binaries = INGEST_BINARIES_MAX,
		.comms = INGEST_COMMS_MAX,
		.bytes_read = INGEST_READ_MAX,
		.stacks = INGEST_STACKS_MAX,
	};
	in->procs = proc_table_new();
	in->memo = hashkey_memo_new();
	in->budget = readbudget_new(INGEST_READ_MAX);
	in->shares = shares_new();
	in->nr_cpus = s->nr_cpus > 0 ? s->nr_cpus : 1;
	in->cpus = xcalloc(in->nr_cpus, sizeof(*in->cpus));
	s->time_bucket_ns = INGEST_TIME_BUCKET_NS;
	s->late_samples = 0;
	s->late_records = s->late_max_ns = 0;
	in->max_time = INT64_MIN;
	in->committed.max_time = INT64_MIN;
	shares_limits(in);
	otable_init_str(&in->binaries, sizeof(struct name_id), 256);
	otable_init_str(&in->comms, sizeof(struct name_id), 256);
	otable_init_str(&in->cgroups, sizeof(struct name_id), 256);
	otable_init(&in->agg, sizeof(struct db_agg), offsetof(struct db_agg, samples), 4096);
	otable_init(&in->pending, sizeof(struct db_agg), offsetof(struct db_agg, samples), 4096);
	otable_init(&in->times, sizeof(struct db_time_agg), offsetof(struct db_time_agg, samples),
		    1024);
	callstack_init(in);
	exact_init(in);
	in->ubatch = ubatch_new();
	in->unwound = -1;
	if (batch_open(in, e))	/* adds [unknown] */
		goto fail;
	idle = proc_get(in->procs, 0, 1);
	idle->owner_known = 1;	/* root: the kernel's */
	idle->comm_id = db_comm_intern(db, "swapper", e);
	if (idle->comm_id < 0)
		goto fail;
	in->comm_max = idle->comm_id;
	return in;
fail:
	ingest_free(in);
	return NULL;
}

void ingest_free(struct ingest *in)
{
	if (!in)
		return;
	if (in->in_batch)
		db_rollback(in->db);
	proc_table_free(in->procs);
	otable_free(&in->cgroups);
	hashkey_memo_free(in->memo);
	readbudget_free(in->budget);
	shares_free(in->shares);
	otable_free(&in->binaries);
	otable_free(&in->comms);
	otable_free(&in->agg);
	otable_free(&in->pending);
	otable_free(&in->times);
	callstack_free(in);
	exact_free(in);
	uworker_free(in->unwinder);
	ubatch_free(in->ubatch);	/* samples held: not finished */
	free(in->cpus);
	free(in);
}

/* Whether the group may read the kallsyms snapshot: the kernel shows
 * kernel addresses to users without CAP_SYSLOG only with kptr_restrict 0
 * (and then to perf users, which the group is), never with 1 or 2.  The
 * snapshot follows the same rule, as the setting is now: a snapshot shared
 * under 0 becomes root's when a session starts under 1 or 2.  Unreadable
 * counts as 1. */
static int kallsyms_shared(void)
{
	size_t len;
	char *v = file_read_all("/proc/sys/kernel/kptr_restrict", &len);
	int shared = v && len && v[0] == '0';

	free(v);
	return shared;
}

int ingest_kernel(struct ingest *in, struct error *e)
{
	if (samples_flush(in, e))
		return -1;
	char key[HASHKEY_MAX], hex[33];
	struct error ke;
	char *buf;
	size_t len;

	if (hashkey_kernel(key, &ke) < 0)
		snprintf(key, sizeof(key), "kernel:unknown");
	in->kernel_id = db_binary_intern(in->db, key, BINNAME_KERNEL, 0, 1, NULL, e);
	if (in->kernel_id < 0)
		return -1;
	in->binary_max = MAX(in->binary_max, in->kernel_id);
	in->s->kernel_binary_id = in->kernel_id;
	if (kallsyms_snapshot(NULL, &buf, &len, e) < 0)
		return error_prefix(e, "kernel symbols");
	hashkey_xxh3_buf(buf, len, hex);
	snprintf(in->s->kallsyms_key, sizeof(in->s->kallsyms_key), "kallsyms:%s", hex);
	if (bincache_store_buf(in->cache, in->s->kallsyms_key, buf, len,
			       kallsyms_shared() ? BINCACHE_SHARED : BINCACHE_RESTRICT, e) < 0) {
		free(buf);
		return -1;
	}
	free(buf);
	return db_session_update(in->db, in->s, e);
}

/* The unwinder's open_binary: the binary cache's copy of binary_id. */
static int unwind_open_binary(void *ctx, int64_t binary_id)
{
	struct ingest *in = ctx;
	struct db_binary *b = xmalloc(sizeof(*b));
	struct error e;
	int fd = -1;

	if (db_binary_get(in->db, binary_id, b, &e) == 0 && b->cached)
		fd = bincache_open_entry(in->cache, b->key);
	free(b);
	return fd;
}

/* The ingest worker (uworker.h), started at the first need: unwinding,
 * build-ids and JIT files (uparse.h); NULL when it cannot start. */
struct uworker *ingest_worker(struct ingest *in)
{
	if (!in->unwinder && !in->unwinder_failed) {
		struct unwind_ops ops = { .ctx = in, .open_binary = unwind_open_binary };
		struct error e;

		in->unwinder = uworker_new(&ops, &e);
		in->unwinder_failed = !in->unwinder;
	}
	return in->unwinder;
}

/* The worker's counts, for strobed's log at the stop. */
void unwinder_stats(struct ingest *in)
{
	struct symworker_stats ws;
	struct uworker_counts uc;

	uworker_stats(in->unwinder, &ws);
	uworker_counts(in->unwinder, &uc);
	in->stats.unwinder_crashes = ws.crashes;
	in->stats.unwinder_hangs = ws.timeouts;
	in->stats.unwinder_started = ws.started;
	_Static_assert(UWORKER_KINDS == 3 && UWORKER_UNWIND == 0 && UWORKER_BUILD_ID == 1 &&
		       UWORKER_JIT == 2, "ingest_stats.worker_failed's order");
	for (int k = 0; k < UWORKER_KINDS; k++) {
		in->stats.worker_failed[k] = uc.failed[k];
		in->stats.worker_refused[k] = uc.refused[k];
	}
	in->stats.unwinder_calls = uc.calls;
	in->stats.unwinder_samples = uc.samples;
}

void parse_done(struct ingest *in, int failed)
{
	if (failed)
		in->stats.parse_failed++;
	if (in->unwinder)
		unwinder_stats(in);
}

int ingest_begin(struct ingest *in, struct error *e)
{
	if (samples_flush(in, e))
		return -1;
	if (batch_open(in, e) < 0)
		return -1;
	in->held = 1;
	return 0;
}

/*
 * A CPU's increases over lost intervals exist nowhere but here (its
 * samples after a loss carry 0): store them with the batch, so that the
 * rebuild of an interrupted session keeps them.  Only after a loss.
 */
static int cpus_store_lost(struct ingest *in, struct error *e)
{
	for (size_t c = 0; c < in->nr_cpus; c++) {
		struct cpu_counts *now = &in->cpus[c].now;
		struct db_cpu_stats cs;

		if (!memcmp(now->st.lost_inc, in->cpus[c].committed.st.lost_inc,
			    sizeof(now->st.lost_inc)))
			continue;
		cs = now->st;
		cs.cpu = (uint32_t)c;
		memset(cs.tail, 0, sizeof(cs.tail));
		if (db_cpu_stats_put(in->db, in->s->id, in->nr, &cs, e) < 0)
			return -1;
	}
	return 0;
}

/* The rows the open batch keeps in memory until its commit. */
static int batch_store(struct ingest *in, struct error *e)
{
	for (struct db_time_agg *t = NULL; (t = otable_next(&in->times, t));)
		if (db_time_agg_add(in->db, in->s->id, in->nr, t, e) < 0)
			return -1;
	if (cpus_store_lost(in, e) < 0 || callstack_store_errors(in, e) < 0)
		return -1;
	if (in->cgroup_dirty && cgroups_store_all(in, e) < 0)
		return -1;
	return 0;
}

int ingest_commit(struct ingest *in, struct error *e)
{
	if (samples_flush(in, e))
		return -1;
	if (!in->in_batch)
		return 0;
	if (sqlite3_get_autocommit(db_sqlite(in->db))) {
		batch_undo(in);
		return error_set(e, "%s: the last batch was rolled back after an error: "
				 "it was not stored", db_path(in->db));
	}
	if (batch_store(in, e) < 0 || db_session_update(in->db, in->s, e) < 0 ||
	    db_commit(in->db, e) < 0) {
		batch_undo(in);
		return -1;
	}
	batch_committed(in);
	return 0;
}

void ingest_cpu_final(struct ingest *in, uint32_t cpu, const uint64_t *values, int nr)
{
	struct cpu_state *cs = cpu_state(in, cpu);

	cs->have_final = 1;
	for (int i = 0; i < MIN(nr, in->nr); i++)
		cs->final[i] = values[i];
}

/* Each CPU's statistics, with the increases after its last sample. */
static int cpus_store_final(struct ingest *in, struct error *e)
{
	for (size_t c = 0; c < in->nr_cpus; c++) {
		struct cpu_state *cpu = &in->cpus[c];
		struct cpu_counts *cs = &cpu->now;

		cs->st.cpu = c;
		for (int i = 0; i < in->nr; i++) {
			uint64_t base = cs->seen ? cs->last[i] : 0;

			cs->st.tail[i] = cpu->have_final && cpu->final[i] > base ?
					 cpu->final[i] - base : 0;
		}
		if (db_cpu_stats_put(in->db, in->s->id, in->nr, &cs->st, e) < 0)
			return -1;
	}
	return 0;
}

int ingest_finish(struct ingest *in, uint64_t end_ns, struct error *e)
{
	if (samples_flush(in, e))
		return -1;
	if (batch_open(in, e))
		return -1;
	/* the perf maps of processes still running */
	if (jit_copy_all(in, e) < 0)
		goto fail;
	/* exact attribution: the tails of threads still running */
	if (exact_finish(in, end_ns, e) < 0)
		goto fail;
	agg_merge(&in->agg, &in->pending, offsetof(struct db_agg, sums));
	for (struct db_agg *a = NULL; (a = otable_next(&in->agg, a));)
		if (db_agg_add(in->db, in->s->id, in->nr, a, e) < 0)
			goto fail;
	if (callstack_finish(in, e) < 0 || cpus_store_final(in, e) < 0)
		goto fail;
	if (!strcmp(in->s->state, "running"))	/* not one cut short (aborted) */
		snprintf(in->s->state, sizeof(in->s->state), "done");
	in->s->end_ns = end_ns;
	in->s->duration_ns = end_ns - in->s->start_ns;
	return ingest_commit(in, e);
fail:
	batch_undo(in);
	return -1;
}

void ingest_get_stats(struct ingest *in, struct ingest_stats *st)
{
	samples_flush_later(in);
	*st = in->stats;
	readbudget_refusals(in->budget, st->read_refusals, sizeof(st->read_refusals));
	st->share_refused = shares_refused(in->shares);
	shares_refusals(in->shares, st->share_refusals, sizeof(st->share_refusals));
}

uint64_t ingest_cpu_lost(const struct ingest *in, uint32_t cpu)
{
	return cpu < in->nr_cpus ? in->cpus[cpu].now.st.lost : 0;
}
