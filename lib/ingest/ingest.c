/*
 * ingest.c - records to rows (see ingest.h).
 *
 * Hot path: ingest_record() for a sample does one hash probe for the
 * process, one bisection of its maps, one prepared INSERT and one probe of
 * the histogram; no allocation once the tables have grown.
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
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <link.h>
#include <linux/openat2.h>
#include "callgraph.h"
#include "cgroups.h"
#include "hashkey.h"
#include "ingest.h"
#include "kallsyms.h"
#include "jitdump.h"
#include "jitmap.h"
#include "maps.h"
#include "otable.h"
#include "public.h"
#include "readbudget.h"
#include "shares.h"
#include "unwind.h"
#include "uparse.h"
#include "uworker.h"
#include "ubatch.h"
#include "vdso.h"
#include <linux/perf_event.h>
#include <sys/random.h>
#include <xxhash.h>

#define BATCH_ROWS	50000

/* string -> id map, open addressing */
struct strmap {
	struct strmap_ent {
		char *key;
		int64_t id;
	} *ent;
	size_t cap, nr;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static int64_t *strmap_slot(struct strmap *m, const char *key, int create)
{
	size_t i;

	if (create && (m->nr + 1) * 2 > m->cap) {
		struct strmap old = *m;

		m->cap = old.cap ? old.cap * 2 : 256;
		m->ent = xcalloc(m->cap, sizeof(*m->ent));
		m->nr = 0;
		for (size_t j = 0; j < old.cap; j++) {
			if (!old.ent[j].key)
				continue;
			for (i = str_hash(old.ent[j].key) & (m->cap - 1); m->ent[i].key;
			     i = (i + 1) & (m->cap - 1))
				;
			m->ent[i] = old.ent[j];
			m->nr++;
		}
		free(old.ent);
	}
	if (!m->cap)
		return NULL;
	for (i = str_hash(key) & (m->cap - 1); m->ent[i].key; i = (i + 1) & (m->cap - 1))
		if (!strcmp(m->ent[i].key, key))
			return &m->ent[i].id;
	if (!create)
		return NULL;
	m->ent[i].key = xstrdup(key);
	m->ent[i].id = 0;
	m->nr++;
	return &m->ent[i].id;
}

static void strmap_free(struct strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->ent[i].key);
	free(m->ent);
}

/* the per-session histogram */
struct agg_table {
	struct db_agg *ent;	/* samples == 0: empty */
	size_t cap, nr;
};

static uint64_t agg_hash(const struct db_agg *a)
{
	uint64_t h = a->binary_id * 0x9E3779B97F4A7C15ULL;

	h ^= a->offset + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2);
	h ^= ((uint64_t)a->pid << 32 | a->flags) + (h << 6) + (h >> 2);
	h ^= a->comm_id * 0xC2B2AE3D27D4EB4FULL + a->start_ns;
	return h ^ (h >> 29);
}

static int agg_same(const struct db_agg *a, const struct db_agg *b)
{
	return a->binary_id == b->binary_id && a->offset == b->offset && a->pid == b->pid &&
	       a->start_ns == b->start_ns && a->comm_id == b->comm_id && a->flags == b->flags;
}

static struct db_agg *agg_slot(struct agg_table *t, const struct db_agg *key)
{
	size_t i;

	if ((t->nr + 1) * 2 > t->cap) {
		struct agg_table old = *t;

		t->cap = old.cap ? old.cap * 2 : 4096;
		t->ent = xcalloc(t->cap, sizeof(*t->ent));
		for (size_t j = 0; j < old.cap; j++) {
			if (!old.ent[j].samples)
				continue;
			for (i = agg_hash(&old.ent[j]) & (t->cap - 1); t->ent[i].samples;
			     i = (i + 1) & (t->cap - 1))
				;
			t->ent[i] = old.ent[j];
		}
		free(old.ent);
	}
	for (i = agg_hash(key) & (t->cap - 1); t->ent[i].samples; i = (i + 1) & (t->cap - 1))
		if (agg_same(&t->ent[i], key))
			return &t->ent[i];
	t->ent[i] = *key;
	t->nr++;
	return &t->ent[i];
}

/* Empty the table, keeping its memory. */
static void agg_clear(struct agg_table *t)
{
	if (t->nr)
		memset(t->ent, 0, t->cap * sizeof(*t->ent));
	t->nr = 0;
}

/* Add the rows of from to t, and empty from. */
static void agg_merge(struct agg_table *t, struct agg_table *from)
{
	for (size_t j = 0; from->nr && j < from->cap; j++) {
		const struct db_agg *f = &from->ent[j];
		size_t nr = t->nr;
		struct db_agg *a;

		if (!f->samples)
			continue;
		a = agg_slot(t, f);	/* a new row is a copy of f */
		if (t->nr == nr) {
			a->samples += f->samples;
			a->period += f->period;
			a->period_unknown |= f->period_unknown;
			for (int i = 0; i < STROBE_MAX_COUNTERS; i++)
				a->c[i] += f->c[i];
		}
	}
	agg_clear(from);
}

/* the open batch's sums per (fine bucket, cpu, process, comm, binary) */
struct time_table {
	struct db_time_agg *ent;	/* samples == 0: empty */
	size_t cap, nr;
};

static uint64_t time_hash(const struct db_time_agg *a)
{
	uint64_t h = (uint64_t)a->bucket * 0x9E3779B97F4A7C15ULL;

	h ^= ((uint64_t)a->pid << 32 | a->cpu) + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2);
	h ^= (uint64_t)a->binary_id * 0xC2B2AE3D27D4EB4FULL + (h << 6) + (h >> 2);
	h ^= (uint64_t)a->comm_id * 0x165667B19E3779F9ULL + a->start_ns;
	return h ^ (h >> 29);
}

static int time_same(const struct db_time_agg *a, const struct db_time_agg *b)
{
	return a->bucket == b->bucket && a->cpu == b->cpu && a->pid == b->pid &&
	       a->start_ns == b->start_ns && a->comm_id == b->comm_id &&
	       a->binary_id == b->binary_id;
}

/* The row of key's (bucket, cpu, pid, start_ns, comm_id, binary_id), added empty
 * (samples 0, the caller fills it) when missing. */
static struct db_time_agg *time_slot(struct time_table *t, const struct db_time_agg *key)
{
	size_t i;

	if ((t->nr + 1) * 2 > t->cap) {
		struct time_table old = *t;

		t->cap = old.cap ? old.cap * 2 : 1024;
		t->ent = xcalloc(t->cap, sizeof(*t->ent));
		for (size_t j = 0; j < old.cap; j++) {
			if (!old.ent[j].samples)
				continue;
			for (i = time_hash(&old.ent[j]) & (t->cap - 1); t->ent[i].samples;
			     i = (i + 1) & (t->cap - 1))
				;
			t->ent[i] = old.ent[j];
		}
		free(old.ent);
	}
	for (i = time_hash(key) & (t->cap - 1); t->ent[i].samples; i = (i + 1) & (t->cap - 1))
		if (time_same(&t->ent[i], key))
			return &t->ent[i];
	t->ent[i] = *key;
	t->nr++;
	return &t->ent[i];
}

static void time_clear(struct time_table *t)
{
	if (t->nr)
		memset(t->ent, 0, t->cap * sizeof(*t->ent));
	t->nr = 0;
}

struct cpu_counts {
	int seen;		/* a sample has set last[] */
	int after_loss;		/* records were lost since the last sample */
	uint64_t last[STROBE_MAX_COUNTERS];
	struct db_cpu_stats st;
};

struct cpu_state {
	struct cpu_counts now, committed;
	int have_final;
	uint64_t final[STROBE_MAX_COUNTERS];
};

/* The session's totals as of the last commit. */
struct ingest_committed {
	int64_t first_sample, last_sample, samples, lost, throttled;
	int64_t late_samples, max_time, late_records, late_max_ns;
	struct ingest_stats stats;
	int64_t binary_max, comm_max;	/* largest ids known to be stored */
};

#define GONE_CACHE	4096

struct ingest {
	struct db *db;
	struct bincache *cache;
	struct db_session *s;
	struct proc_table *procs;
	struct hashkey_memo *memo;
	struct readbudget *budget;	/* bytes of binaries read, by file and owner */
	struct shares *shares;		/* each user's share of the tables */
	struct strmap binaries;	/* "bid:<hex>" / "ino:..." / special -> binaries.id */
	struct strmap comms;	/* comm -> comms.id */
	struct agg_table agg;		/* committed samples */
	struct agg_table pending;	/* samples of the open batch */
	struct time_table times;	/* sample_time sums of the open batch */
	int64_t max_time;		/* latest sample time so far */
	struct ingest_committed committed;
	struct cpu_state *cpus;
	size_t nr_cpus;
	int nr;			/* counting events */
	int in_batch;
	int held;		/* ingest_begin: no commit before ingest_commit */
	size_t batch_rows;
	int64_t kernel_id, unknown_id;
	int64_t binary_max, comm_max;	/* largest ids handed out */
	uint64_t batch_uncertain_ns;	/* first uncertainty marked in the open
					 * batch (0: none): undone with it */
	struct ingest_stats stats;
	struct ingest_limits limits;
	struct vdso_image vdso;		/* strobed's own; size 0: none */
	int vdso_tried;
	/* the starts of processes that exited lately, by pid & (GONE_CACHE - 1),
	 * so that their samples taken after the exit record (their last
	 * moments) still count for the right process; an older exit whose
	 * slot a newer one took counts as process unknown (start 0) */
	struct { uint32_t pid; uint64_t start_ns; } gone[GONE_CACHE];
	/* cgroups (schema 13): 0 not recorded, else where a process's comes
	 * from; path -> id of those stored; processes whose cgroup row the
	 * open batch wrote */
	size_t jit_roots;		/* root handles taken (maps.h jit_root) */
	enum { CG_NONE, CG_SAMPLE, CG_PROC } cgroup_source;
	char cgroup_root[256];		/* the cgroup2 mount */
	struct strmap cgroups;
	int cgroup_dirty;
	/* ingest_call_graph(): 0 none, 1 fp, 2 dwarf (enum callgraph_mode);
	 * dwarf's raw stacks kept */
	int call_graph;
	int keep_stacks;
	/* call stacks (schema 14): stacks.id by the seeded 128-bit hash of
	 * a stack's frames and flags; the largest id handed out and the
	 * largest committed; stack_agg sums (committed, open batch);
	 * unwinding failures by (binary, reason); scratch for one sample */
	struct otable stack_ids;	/* struct stack_key */
	int64_t stack_max, stack_committed;
	uint64_t stack_seed;
	struct otable stack_agg, stack_pending;	/* struct db_stack_agg */
	struct otable unwind_errs;	/* struct unwind_err */
	/* --attribution exact: switch records seen; struct exact_thread */
	int exact;
	struct otable exact_threads;
	struct uworker *unwinder;	/* unwind.h in a worker without rights */
	struct ubatch *ubatch;		/* samples waiting for a batched unwind */
	int flushing;			/* samples_flush() is finishing them */
	int unwound;			/* >= 0: the uworker's answer of the sample
					 * being finished; -1: none */
	int flush_failed;		/* a flush without a caller to tell failed: */
	struct error flush_error;	/* told by the next one */
	int unwinder_failed;		/* unwinder_new() failed: NO_BINARY */
	int parse_lost;			/* the build-id read in flight failed */
	unsigned char *frames;		/* INGEST_STACK_FRAMES * 16 bytes */
	uint64_t *uips;			/* INGEST_STACK_FRAMES */
};

static int samples_flush(struct ingest *in, struct error *e);
static void samples_flush_later(struct ingest *in);

/* stack_ids: the in-memory key of a stack, and its id */
struct stack_key {
	uint64_t h[2];			/* XXH3-128 of frames and flags, seeded */
	int64_t id;
};

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

/* unwind_errs: failures of (binary, reason) counted, and as committed */
struct unwind_err {
	int64_t binary_id;
	int64_t reason;			/* enum unwind_result */
	uint64_t count, committed;
};

static void shares_limits(struct ingest *in)
{
	shares_set_limit(in->shares, SHARES_COMMS, in->limits.comms);
	shares_set_limit(in->shares, SHARES_BINARIES, in->limits.binaries);
	shares_set_limit(in->shares, SHARES_CGROUPS, INGEST_CGROUPS_MAX);
	shares_set_limit(in->shares, SHARES_STACKS, in->limits.stacks);
}

/* Whom an entry for pid's process is charged to (shares.h): p's real
 * uid, read once while it lives (again after an exec); when it is gone
 * by then (short-lived), its parent's or its own before its exec; root
 * for pid 0 (the kernel's idle); else SHARES_UNKNOWN. */
static uint32_t proc_charge(struct proc *p, uint32_t pid)
{
	uint32_t uid;

	if (!pid)
		return 0;
	if (p && p->owner_known == 1)
		return p->owner;
	if (proc_owner(pid, &uid) < 0)
		return p && p->owner_known ? p->owner : SHARES_UNKNOWN;
	if (p) {
		p->owner = uid;
		p->owner_known = 1;
	}
	return uid;
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

static int64_t binary_special(struct ingest *in, const char *key, struct error *e)
{
	int64_t *slot = strmap_slot(&in->binaries, key, 1);

	if (!*slot) {
		*slot = db_binary_intern(in->db, key, key, 0, 0, NULL, e);
		if (*slot < 0) {
			*slot = 0;
			return -1;
		}
		in->binary_max = MAX(in->binary_max, *slot);
	}
	return *slot;
}

/* Forget the ids in m above max. */
static void strmap_forget_above(struct strmap *m, int64_t max)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->ent[i].key && m->ent[i].id > max)
			m->ent[i].id = 0;
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

static void proc_cgroup_clean(struct proc *p, void *arg)
{
	(void)arg;
	p->cgroup_dirty = 0;
}

/* its cgroup row was not stored: the next sample stores it again */
static void proc_cgroup_undo(struct proc *p, void *arg)
{
	(void)arg;
	if (p->cgroup_dirty)
		p->cgroup_id = 0, p->cgroup_tried = 0, p->cgroup_dirty = 0;
}

/* Add the rows of from to t, and empty from. */
static void stack_agg_merge(struct otable *t, struct otable *from)
{
	for (struct db_stack_agg *f = NULL; (f = otable_next(from, f));) {
		int added;
		struct db_stack_agg *a = otable_get(t, f, &added);

		a->samples += f->samples;
		a->period += f->period;
		a->period_unknown |= f->period_unknown;
		for (int i = 0; i < STROBE_MAX_COUNTERS; i++)
			a->c[i] += f->c[i];
	}
	otable_clear(from);
}

static int stack_committed_keep(void *arg, const void *entry)
{
	return ((const struct stack_key *)entry)->id <= *(const int64_t *)arg;
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

/* The open batch is stored: it is what a failed batch goes back to. */
static void batch_committed(struct ingest *in)
{
	in->in_batch = 0;
	in->batch_uncertain_ns = 0;
	in->held = 0;
	agg_merge(&in->agg, &in->pending);
	time_clear(&in->times);
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
	in->stack_committed = in->stack_max;
	stack_agg_merge(&in->stack_agg, &in->stack_pending);
	for (struct unwind_err *u = NULL; (u = otable_next(&in->unwind_errs, u));)
		u->committed = u->count;
	if (in->exact) {
		for (struct exact_thread *t = NULL; (t = otable_next(&in->exact_threads, t));)
			t->saved = t->cur;
		otable_filter(&in->exact_threads, exact_keep, NULL);
	}
	for (size_t c = 0; c < in->nr_cpus; c++)
		in->cpus[c].committed = in->cpus[c].now;
	if (in->cgroup_dirty)
		proc_table_each(in->procs, proc_cgroup_clean, NULL);
	in->cgroup_dirty = 0;
}

/* The open batch was rolled back (by us or by SQLite): forget its rows. */
static void batch_undo(struct ingest *in)
{
	if (!sqlite3_get_autocommit(db_sqlite(in->db)))
		db_rollback(in->db);
	in->in_batch = 0;
	in->held = 0;
	agg_clear(&in->pending);
	time_clear(&in->times);
	otable_clear(&in->stack_pending);
	for (struct unwind_err *u = NULL; (u = otable_next(&in->unwind_errs, u));)
		u->count = u->committed;
	for (struct exact_thread *t = NULL; (t = otable_next(&in->exact_threads, t));)
		t->cur = t->saved;
	if (in->stack_max > in->stack_committed) {
		/* the stacks of the batch are gone: their ids are given again */
		otable_filter(&in->stack_ids, stack_committed_keep, &in->stack_committed);
		in->stack_max = in->stack_committed;
	}
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
	if (in->cgroup_dirty) {
		/* and the cgroups it stored: looked up again when needed */
		proc_table_each(in->procs, proc_cgroup_undo, NULL);
		strmap_free(&in->cgroups);
		memset(&in->cgroups, 0, sizeof(in->cgroups));
	}
	in->cgroup_dirty = 0;
	if (in->binary_max > in->committed.binary_max || in->comm_max > in->committed.comm_max) {
		strmap_forget_above(&in->binaries, in->committed.binary_max);
		strmap_forget_above(&in->comms, in->committed.comm_max);
		proc_table_each(in->procs, proc_forget_ids, &in->committed);
		if (in->unknown_id > in->committed.binary_max)
			in->unknown_id = 0;	/* batch_open adds it again */
		if (in->kernel_id > in->committed.binary_max)
			in->kernel_id = in->s->kernel_binary_id = 0;
		in->binary_max = in->committed.binary_max;
		in->comm_max = in->committed.comm_max;
	}
}

static int batch_open(struct ingest *in, struct error *e)
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
	in->limits.stacks = INGEST_STACKS_MAX;
	shares_limits(in);
	otable_init(&in->stack_ids, sizeof(struct stack_key), 2 * sizeof(uint64_t), 1024);
	otable_init(&in->stack_agg, sizeof(struct db_stack_agg),
		    offsetof(struct db_stack_agg, samples), 1024);
	otable_init(&in->stack_pending, sizeof(struct db_stack_agg),
		    offsetof(struct db_stack_agg, samples), 1024);
	otable_init(&in->unwind_errs, sizeof(struct unwind_err),
		    offsetof(struct unwind_err, count), 64);
	otable_init(&in->exact_threads, sizeof(struct exact_thread),
		    offsetof(struct exact_thread, pid), 256);
	/* a stack's key is secret: a process cannot make its stacks collide
	 * with another's */
	if (getrandom(&in->stack_seed, sizeof(in->stack_seed), GRND_NONBLOCK) !=
	    sizeof(in->stack_seed))
		in->stack_seed = (uint64_t)(uintptr_t)in ^ (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ULL;
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
	strmap_free(&in->cgroups);
	hashkey_memo_free(in->memo);
	readbudget_free(in->budget);
	shares_free(in->shares);
	strmap_free(&in->binaries);
	strmap_free(&in->comms);
	free(in->agg.ent);
	free(in->pending.ent);
	free(in->times.ent);
	otable_free(&in->stack_ids);
	otable_free(&in->stack_agg);
	otable_free(&in->stack_pending);
	otable_free(&in->unwind_errs);
	otable_free(&in->exact_threads);
	uworker_free(in->unwinder);
	ubatch_free(in->ubatch);	/* samples held: not finished */
	free(in->frames);
	free(in->uips);
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
	in->kernel_id = db_binary_intern(in->db, key, "[kernel.kallsyms]", 0, 1, NULL, e);
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

/* The id of name comm, new for p (pid) when not known yet. */
static int64_t comm_id(struct ingest *in, struct proc *p, uint32_t pid, const char *comm,
		       struct error *e)
{
	int64_t *slot = strmap_slot(&in->comms, comm, 0);

	if (!slot && (in->comms.nr >= in->limits.comms ||
		      !shares_take(in->shares, SHARES_COMMS, proc_charge(p, pid)))) {
		in->stats.comms_over++;
		comm = "[too many names]";
	}
	slot = strmap_slot(&in->comms, comm, 1);

	if (!*slot) {
		int64_t id = db_comm_intern(in->db, comm, e);

		if (id < 0)
			return -1;
		*slot = id;
		in->comm_max = MAX(in->comm_max, id);
	}
	return *slot;
}

int ingest_comm(struct ingest *in, uint32_t pid, uint32_t tid, const char *comm,
		int exec, uint64_t time_ns, struct error *e)
{
	struct proc *p;
	int64_t id;

	if (samples_flush(in, e))
		return -1;
	if (pid != tid && !exec)
		return 0;	/* thread names: the process keeps its own */
	if (batch_open(in, e))
		return -1;
	p = proc_get(in->procs, pid, 1);
	if (exec)
		proc_exec(p);
	id = comm_id(in, p, pid, comm, e);
	if (id < 0)
		return -1;
	p->comm_id = id;
	if (!p->start_ns)
		p->start_ns = time_ns;
	return db_process_put(in->db, in->s->id, pid, 0, id, p->start_ns, 0, e);
}

static int proc_own_tmp(uint32_t pid, uint32_t *nspid);
static int cgroup_store(struct ingest *in, struct proc *p, struct error *e);

/* Give back p's handle of its /tmp (maps.h jit_root), if it holds one:
 * closed and no longer counted against INGEST_JIT_ROOTS_MAX. */
static void jit_root_drop(struct ingest *in, struct proc *p)
{
	if (!p->jit_root)
		return;
	close(p->jit_root - 1);
	p->jit_root = 0;
	in->jit_roots--;
}

int ingest_fork(struct ingest *in, uint32_t ppid, uint32_t pid, uint32_t tid,
		uint64_t time_ns, struct error *e)
{
	struct proc *p;

	if (samples_flush(in, e))
		return -1;
	if (pid != tid) {
		/* a new thread shares its process's maps */
		p = proc_get(in->procs, pid, 0);
		if (p)
			proc_thread_add(p, tid);
		return 0;
	}
	if (pid == ppid)
		return 0;
	if (batch_open(in, e))
		return -1;
	/* a process of pid still held (its exit lost): its row first, its
	 * /tmp handle given back (proc_fork would close it uncounted) */
	p = proc_get(in->procs, pid, 0);
	if (p && cgroup_store(in, p, e) < 0)
		return -1;
	if (p)
		jit_root_drop(in, p);
	p = proc_fork(in->procs, ppid, pid);
	p->start_ns = time_ns;
	if (p->jit && in->jit_roots < INGEST_JIT_ROOTS_MAX) {
		/* its parent's JIT code: its own perf map, in its own /tmp */
		int tmp = proc_own_tmp(pid, &p->jit_nspid);

		if (tmp >= 0) {
			p->jit_root = tmp + 1;
			in->jit_roots++;
		}
	}
	if (p->uncertain_ns)	/* a copy of maps that may be wrong */
		p->uncertain_ns = time_ns;
	return db_process_put_uncertain(in->db, in->s->id, pid, ppid, p->comm_id, time_ns, 0,
					p->uncertain_ns, e);
}

/* Where a process's perf map is: the convention every JIT follows. */
#define JIT_MAP_PATH "/tmp/perf-%u.map"

/* Flags for a file named by a profiled process: strobed runs as root, so
 * never block (a FIFO), never acquire a controlling tty. */
#define OPEN_UNTRUSTED (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

/*
 * Process pid's pid in its own pid namespace (the last NStgid of
 * /proc/PID/status; 0 if unknown) and, when it lives in another mount
 * namespace than strobed, an O_PATH handle of its /tmp as it sees it
 * (resolved in its root, never out of it; -1 otherwise): where its perf
 * map is, read at its exit, when /proc/PID is gone.  The handle is of the
 * directory itself, so it still leads to the container's /tmp (a tmpfs of
 * its own, say) after the container's mount namespace is torn down.
 */
static int proc_own_tmp(uint32_t pid, uint32_t *nspid)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char path[64], buf[4096], *l, *save;
	struct stat a, b;
	ssize_t n;
	int fd, root;

	*nspid = 0;
	snprintf(path, sizeof(path), "/proc/%u/ns/mnt", pid);
	if (stat(path, &a) < 0 || stat("/proc/self/ns/mnt", &b) < 0 ||
	    (a.st_dev == b.st_dev && a.st_ino == b.st_ino))
		return -1;
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	l = strstr(buf, "\nNStgid:");
	if (l) {
		char *end = strchr(l + 1, '\n'), *last = NULL;

		if (end)
			*end = 0;
		for (char *t = strtok_r(l + 9, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
			last = t;
		if (last)
			*nspid = (uint32_t)strtoul(last, NULL, 10);
	}
	snprintf(path, sizeof(path), "/proc/%u/root", pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -1;
	fd = (int)syscall(SYS_openat2, root, "/tmp", &how, sizeof(how));
	close(root);
	return fd;
}

static int unwind_open_binary(void *ctx, int64_t binary_id);

/* The ingest worker (uworker.h), started at the first need: unwinding,
 * build-ids and JIT files (uparse.h); NULL when it cannot start. */
static struct uworker *ingest_worker(struct ingest *in)
{
	if (!in->unwinder && !in->unwinder_failed) {
		struct unwind_ops ops = { .ctx = in, .open_binary = unwind_open_binary };
		struct error e;

		in->unwinder = uworker_new(&ops, &e);
		in->unwinder_failed = !in->unwinder;
	}
	return in->unwinder;
}

static void unwinder_stats(struct ingest *in);

/* After a parse in the worker: its counts for strobed's log at the stop. */
static void parse_done(struct ingest *in, int failed)
{
	if (failed)
		in->stats.parse_failed++;
	if (in->unwinder)
		unwinder_stats(in);
}

/* hashkey_file_by()'s reader: the build-id read in the worker; -2 when it
 * could not (the file then keyed by its contents). */
static int build_id_in_worker(void *ctx, int fd, uint8_t *id, size_t cap, struct error *e)
{
	struct ingest *in = ctx;
	struct uworker *w = ingest_worker(in);
	int n;

	if (!w) {
		parse_done(in, 1);
		in->parse_lost = 1;
		return -2;
	}
	n = uparse_build_id(w, fd, id, cap, e);
	parse_done(in, n == -2);
	in->parse_lost |= n == -2;
	return n;
}

/* jitmap_parse() / jitdump_parse() in the worker (uparse_jit()): -2 when
 * the worker failed (m empty, e says why), else as jitdump_parse(). */
static int jit_parse_in_worker(struct ingest *in, enum uparse_kind kind, const void *buf,
			       size_t len, uint32_t pid, uint64_t not_before, struct jitmap *m,
			       struct jitdump_info *info, struct error *e)
{
	struct uworker *w = ingest_worker(in);
	int rc;

	if (!w) {
		memset(m, 0, sizeof(*m));
		parse_done(in, 1);
		error_set(e, "the ingest worker could not start");
		return -2;
	}
	rc = uparse_jit(w, kind, buf, len, pid, not_before, m, info, e);
	parse_done(in, rc == -2);
	return rc;
}

/* The perf map name ("perf-N.map", N its own pid) in tmp, p's /tmp
 * (proc_own_tmp(), closed here): beneath it, no symlink, no magic link;
 * then checked and read as jitmap_read() does.  path is how jit_maps
 * names it. */
static int jit_copy_in(struct ingest *in, struct proc *p, int root, const char *name,
		       const char *path, struct error *e)
{
	const char *problem = NULL;
	struct jitmap m = { 0 };
	struct error je;
	char pmsg[sizeof(je.msg) + 160];
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd, rc;

	fd = open_regular_untrusted(root, name, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS |
				    RESOLVE_NO_SYMLINKS, OPEN_UNTRUSTED_NO_FUSE, &st);
	if (fd < 0 && errno == ENOENT) {
		close(root);
		return 0;
	}
	if (fd < 0) {
		snprintf(je.msg, sizeof(je.msg), "%s: %s", path, errno == ELOOP ?
			 "a symbolic link, refused" : errno == EFTYPE_NOT_REGULAR ?
			 "not a regular file, refused" : errno == EFTYPE_FUSE ?
			 EFTYPE_FUSE_TEXT : strerror(errno));
		problem = je.msg;
		rc = -1;
	} else if (!p->jit_uid_known) {
		close(fd);
		problem = "not read: the process's user is unknown (it exited before "
			  "its executable memory was seen)";
		rc = -1;
	} else if (in->stats.bytes_read >= in->limits.bytes_read) {
		close(fd);
		problem = "not read: the session has read its limit of bytes";
		rc = -1;
	} else {
		int64_t not_before = p->start_ns > (uint64_t)in->s->start_ns ?
				     (int64_t)p->start_ns + in->s->wall_offset_ns -
				     1000000000 : 0;

		rc = jitmap_read_fd(fd, path, p->jit_uid, not_before > 0 ? not_before : 0, &buf,
				    &len, &je);
		if (rc < 0)
			problem = je.msg;
	}
	close(root);
	if (rc > 0) {
		in->stats.bytes_read += len;
		if (jit_parse_in_worker(in, UPARSE_JITMAP, buf, len, p->pid, 0, &m, NULL,
					&je) < 0) {
			snprintf(pmsg, sizeof(pmsg), "%s: not parsed: %s", path, je.msg);
			problem = pmsg;
		}
		free(buf);
	}
	rc = db_jit_map_put(in->db, in->s->id, p->pid, p->start_ns, path, m.nr, m.dropped,
			    problem, e);
	if (!rc && m.nr)
		rc = db_jit_symbols_put(in->db, in->s->id, p->pid, p->start_ns, &m, e);
	jitmap_free(&m);
	return rc;
}

/*
 * Copy the perf map of p, a process that had anonymous executable memory,
 * into the session (schema 10; jitmap.h says what is refused and why).
 * The file is read in strobed's own /tmp, or for a process of another
 * mount namespace, in its own (jit_copy_in(), through the handle of its
 * /tmp taken by proc_own_tmp() while it ran).
 */
static int jit_copy(struct ingest *in, struct proc *p, struct error *e)
{
	char path[96], *buf = NULL;
	const char *problem = NULL;
	struct jitmap m = { 0 };
	struct error je;
	char pmsg[sizeof(je.msg) + 160];
	size_t len;
	int rc;

	if (!p->jit)
		return 0;
	p->jit = 0;	/* once */
	if (p->jit_root) {
		/* in its own mount namespace, named by its own pid */
		char name[64];
		int tmp = p->jit_root - 1;

		p->jit_root = 0;
		in->jit_roots--;
		snprintf(name, sizeof(name), "perf-%u.map", p->jit_nspid ? p->jit_nspid : p->pid);
		snprintf(path, sizeof(path), "/proc/%u/root/tmp/%s", p->pid, name);
		return jit_copy_in(in, p, tmp, name, path, e);
	}
	snprintf(path, sizeof(path), JIT_MAP_PATH, p->pid);
	if (!p->jit_uid_known) {
		/* its owner cannot be checked: read nothing */
		struct stat st;

		if (lstat(path, &st) < 0)
			return 0;
		problem = "not read: the process's user is unknown (it exited before "
			  "its executable memory was seen)";
		rc = -1;
	} else if (in->stats.bytes_read >= in->limits.bytes_read) {
		problem = "not read: the session has read its limit of bytes";
		rc = -1;
	} else {
		/* a process started in the session (its fork seen) wrote its
		 * map since; the file system's clock is coarser: 1 s slack */
		int64_t not_before = p->start_ns > (uint64_t)in->s->start_ns ?
				     (int64_t)p->start_ns + in->s->wall_offset_ns -
				     1000000000 : 0;

		rc = jitmap_read(path, p->jit_uid, not_before > 0 ? not_before : 0, &buf,
				 &len, &je);
		if (!rc)
			return 0;
		if (rc < 0)
			problem = je.msg;
	}
	if (rc > 0) {
		in->stats.bytes_read += len;
		if (jit_parse_in_worker(in, UPARSE_JITMAP, buf, len, p->pid, 0, &m, NULL,
					&je) < 0) {
			snprintf(pmsg, sizeof(pmsg), "%s: not parsed: %s", path, je.msg);
			problem = pmsg;
		}
		free(buf);
	}
	rc = db_jit_map_put(in->db, in->s->id, p->pid, p->start_ns, path, m.nr, m.dropped,
			    problem, e);
	if (!rc && m.nr)
		rc = db_jit_symbols_put(in->db, in->s->id, p->pid, p->start_ns, &m, e);
	jitmap_free(&m);
	return rc;
}

static int jitdump_copy(struct ingest *in, struct proc *p, struct error *e);

struct jit_all {
	struct ingest *in;
	struct error *e;
	int rc;
};

static void jit_copy_each(struct proc *p, void *arg)
{
	struct jit_all *a = arg;

	if (!a->rc && p->jit)
		a->rc = jit_copy(a->in, p, a->e);
	if (!a->rc && p->jitdump)
		a->rc = jitdump_copy(a->in, p, a->e);
}

int ingest_exit(struct ingest *in, uint32_t pid, uint32_t tid, uint64_t time_ns,
		struct error *e)
{
	struct proc *p;
	int ret = 0;

	if (samples_flush(in, e))
		return -1;
	if (in->exact) {
		/* its next switch out is its last: its tail is stored then */
		exact_get(in, tid, pid)->cur.exited = 1;
	}
	p = proc_get(in->procs, pid, 0);
	if (!p || !proc_thread_exit(p, tid))
		return 0;	/* other threads still use the address space */
	if (batch_open(in, e))
		return -1;
	if (p->start_ns)
		ret = db_process_put(in->db, in->s->id, pid, 0, 0, p->start_ns, time_ns, e);
	in->gone[pid & (GONE_CACHE - 1)].pid = pid;
	in->gone[pid & (GONE_CACHE - 1)].start_ns = p->start_ns;
	if (!ret && p->jit)
		ret = jit_copy(in, p, e);
	if (!ret && p->jitdump)
		ret = jitdump_copy(in, p, e);
	if (!ret)
		ret = cgroup_store(in, p, e);
	jit_root_drop(in, p);	/* jit_copy's failed or never ran */
	proc_remove(in->procs, pid);
	return ret;
}

static const char *const special_maps[] = {
	"[vdso]", "[vsyscall]", "[heap]", "[stack]", "[uprobes]", "[vvar]",
};

/*
 * The file at path as process pid sees it: path resolved under its root
 * directory (/proc/PID/root, its mount namespace and chroot), symlinks
 * included, never escaping that root (openat2 RESOLVE_IN_ROOT: an absolute
 * link target or ".." stays inside) and never through a magic link; the
 * last component is not followed.  -1 with errno when it cannot: the
 * process is gone, or the kernel predates openat2 (Linux 5.6).
 */
static int open_in_root(uint32_t pid, const char *path)
{
	char root[64];
	struct stat st;
	int dfd, fd, err;

	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	fd = open_regular_untrusted(dfd, path, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
				    OPEN_UNTRUSTED_NO_FUSE, &st);
	err = errno;
	close(dfd);
	errno = err;
	return fd;
}

/*
 * Copy the jitdump p mapped (jitdump.h) into the session, as jit_copy()
 * does a perf map, and forget its path.  The path is the process's word:
 * it is opened in the process's own view while it lives (open_in_root(),
 * its mount namespace), else in strobed's without following any symlink
 * (RESOLVE_NO_SYMLINKS: a directory of the path may be the process's
 * user's, pointing anywhere); the last component is never followed, a FIFO
 * never blocks.  Then jitdump_read_fd() checks the owner (the process's
 * user, not root: see jitdump.h), the type and the size, and when the
 * MMAP2 record had the file's device and inode, the file opened must be
 * that one.  Records
 * stamped before the process started (an earlier process of the same pid)
 * are dropped.  A jit_maps row says what came of it, missing file included.
 */
static int jitdump_copy(struct ingest *in, struct proc *p, struct error *e)
{
	char *path = p->jitdump, problem[PATH_MAX + 1024];
	unsigned char *buf = NULL;
	struct jitmap m = { 0 };
	struct jitdump_info info;
	struct error je;
	struct stat st;
	size_t len = 0;
	int fd = -1, rc;

	p->jitdump = NULL;	/* once */
	problem[0] = 0;
	if (!p->jitdump_uid_known) {
		snprintf(problem, sizeof(problem), "%s: not read: the process's user is "
			 "unknown (it exited before its mapping was seen)", path);
	} else if (in->stats.bytes_read >= in->limits.bytes_read) {
		snprintf(problem, sizeof(problem), "%s: not read: the session has read its "
			 "limit of bytes", path);
	} else {
		fd = open_in_root(p->pid, path);
		if (fd < 0 && errno != ELOOP)
			fd = open_regular_untrusted(AT_FDCWD, path, RESOLVE_NO_SYMLINKS |
						    RESOLVE_NO_MAGICLINKS, OPEN_UNTRUSTED_NO_FUSE,
						    &st);
		if (fd < 0)
			snprintf(problem, sizeof(problem), "%s: %s", path,
				 errno == ENOENT ? "gone (deleted before the process's exit was "
				 "seen): keep the file until the session stops" :
				 errno == ELOOP ? "a symbolic link on the way, refused" :
				 errno == EFTYPE_NOT_REGULAR ? "not a regular file, refused" :
				 errno == EFTYPE_FUSE ? EFTYPE_FUSE_TEXT : strerror(errno));
	}
	if (fd >= 0 && p->jitdump_dev_known &&
	    (fstat(fd, &st) < 0 || major(st.st_dev) != p->jitdump_maj ||
	     minor(st.st_dev) != p->jitdump_min || (uint64_t)st.st_ino != p->jitdump_ino))
		snprintf(problem, sizeof(problem), "%s: no longer the file the process mapped "
			 "(device or inode differ), refused", path);
	else if (fd >= 0 && jitdump_read_fd(fd, path, p->jitdump_uid, &buf, &len, &je) < 0)
		snprintf(problem, sizeof(problem), "%s", je.msg);
	if (fd >= 0)
		close(fd);
	if (buf) {
		/* a process started in the session (its fork seen) wrote its
		 * dump since: records stamped before its start are not its */
		uint64_t not_before = p->start_ns > (uint64_t)in->s->start_ns ? p->start_ns : 0;

		in->stats.bytes_read += len;
		rc = jit_parse_in_worker(in, UPARSE_JITDUMP, buf, len, p->pid, not_before, &m,
					 &info, &je);
		if (rc == -2)
			snprintf(problem, sizeof(problem), "%s: not parsed: %s", path, je.msg);
		else if (rc < 0)
			snprintf(problem, sizeof(problem), "%s: %s, refused", path, je.msg);
		free(buf);
	}
	rc = db_jit_map_put(in->db, in->s->id, p->pid, p->start_ns, path, m.nr, m.dropped,
			    problem[0] ? problem : NULL, e);
	if (!rc && m.nr)
		rc = db_jit_symbols_put(in->db, in->s->id, p->pid, p->start_ns, &m, e);
	jitmap_free(&m);
	free(path);
	return rc;
}

/* fd is the mapped object of m (else -1, fd closed, problem says why): a
 * regular file of at most HASHKEY_FILE_MAX bytes and, opened by path, the
 * device and inode of the record when it has them. */
static int mapped_check(int fd, const struct ingest_mmap *m, int by_path, struct stat *st,
			char *problem, size_t size)
{
	if (fstat(fd, st) < 0) {
		snprintf(problem, size, "cannot stat %s: %s", m->filename, strerror(errno));
	} else if (!S_ISREG(st->st_mode)) {
		snprintf(problem, size, "%s is not a regular file", m->filename);
	} else if (st->st_size > HASHKEY_FILE_MAX) {
		snprintf(problem, size, "%s is larger than " HASHKEY_FILE_MAX_TEXT,
			 m->filename);
	} else if (by_path && !m->build_id_len &&
		   (major(st->st_dev) != m->maj || minor(st->st_dev) != m->min ||
		    (uint64_t)st->st_ino != m->ino)) {
		snprintf(problem, size, "%s is no longer the mapped file (device "
			 "or inode differ)", m->filename);
	} else {
		/* With a build-id instead of dev/ino, binary_of_file() accepts
		 * the file only if it has that build-id. */
		problem[0] = 0;
		return fd;
	}
	close(fd);
	return -1;
}

/*
 * Open exactly the mapped object, by handle, first of:
 *  0. the handle the capture backend held since it drained the record
 *     (m->held: binhold.h), opened then through 1, while the process
 *     surely ran: ingest, seconds behind under load, may find 1 gone
 *     with the process, and a deleted binary with it;
 *  1. /proc/PID/map_files/START-END: the mapping itself, whatever became
 *     of its path (renamed, deleted, replaced);
 *  2. the path in the process's own view (open_in_root()): a process in a
 *     container maps files of its mount namespace, which the same path in
 *     strobed's may not name;
 *  3. the path in strobed's namespace (the process has exited).
 * By path (2, 3), the path is the mapping process's word only: by now it
 * may be a symlink to /etc/shadow, a FIFO, a device, another file; its pid
 * may even be another process's.  So the last component is not followed,
 * and a handle is kept only if mapped_check() finds the very file the
 * kernel reported mapped (device and inode; with a build-id instead,
 * binary_of_file() checks that).  -1 if none is: problem says why (the
 * last reason).
 */
static int open_mapped(const struct ingest_mmap *m, struct stat *st,
		       char *problem, size_t size)
{
	char path[128];
	int fd;

	if (m->held && (fd = fcntl(m->held_fd, F_DUPFD_CLOEXEC, 0)) >= 0)
		return mapped_check(fd, m, 0, st, problem, size);
	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64,
		 m->pid, m->start, m->start + m->len);
	/* the mapping itself (a magic link: followed), never opened unless
	 * it is a regular file: a device mapped executable is not */
	fd = open_regular_untrusted(AT_FDCWD, path, 0, OPEN_UNTRUSTED_FOLLOW |
				    OPEN_UNTRUSTED_NO_FUSE, st);
	if (fd >= 0)
		return mapped_check(fd, m, 0, st, problem, size);
	if (errno == EFTYPE_NOT_REGULAR) {
		snprintf(problem, size, "%s is not a regular file", m->filename);
		return -1;
	}
	if (errno == EFTYPE_FUSE) {	/* and so is its path */
		snprintf(problem, size, "%s is " EFTYPE_FUSE_TEXT, m->filename);
		return -1;
	}
	fd = open_in_root(m->pid, m->filename);
	if (fd >= 0 && (fd = mapped_check(fd, m, 1, st, problem, size)) >= 0)
		return fd;
	/* strobed's view: no symlink anywhere on the path (the kernel names
	 * a mapping by its resolved path), the end opened only if regular */
	fd = open_regular_untrusted(AT_FDCWD, m->filename, RESOLVE_NO_SYMLINKS |
				    RESOLVE_NO_MAGICLINKS, OPEN_UNTRUSTED_NO_FUSE, st);
	if (fd < 0) {
		snprintf(problem, size, "cannot open %s: %s%s", m->filename,
			 errno == EFTYPE_NOT_REGULAR ? "not a regular file" :
			 errno == EFTYPE_FUSE ? EFTYPE_FUSE_TEXT : strerror(errno),
			 m->held_over ? " (and strobed held no handle of it from the "
			 "drain: its limit of files held was reached)" : "");
		return -1;
	}
	return mapped_check(fd, m, 1, st, problem, size);
}

/* The cache entry for the file at fd (content hash hex, key as found in
 * the file): the key itself, unless the cache already holds different
 * bytes under it.  Build-ids are chosen by whoever builds the file, so an
 * ELF file crafted with libc's build-id, mapped before libc is cached,
 * would otherwise have libc's samples named from it.  Such a file is keyed
 * by its contents instead, and note says so; if even that entry holds other
 * bytes the binary cannot be cached (-1, problem set). */
static int cache_key_verify(struct ingest *in, int fd, char key[HASHKEY_MAX],
			    char *note, size_t note_size, char *problem, size_t psize)
{
	char hex[33], other[HASHKEY_MAX];
	struct error fe;
	int same;

	same = bincache_same(in->cache, key, fd, &fe);
	if (same < 0) {
		snprintf(problem, psize, "%s", fe.msg);
		return -1;
	}
	if (same)
		return 0;
	if (hashkey_content(in->memo, fd, hex, &fe) < 0) {
		snprintf(problem, psize, "%s", fe.msg);
		return -1;
	}
	snprintf(other, sizeof(other), "xxh3:%s", hex);
	if (!strcmp(other, key) || bincache_same(in->cache, other, fd, &fe) != 1) {
		snprintf(problem, psize, "the binary cache holds different contents under "
			 "%s and %s: not cached", key, other);
		return -1;
	}
	snprintf(note, note_size, "its build-id %s is also that of a different binary in "
		 "the cache: named from its own contents (%s)", key, other);
	in->stats.collisions++;
	snprintf(key, HASHKEY_MAX, "%s", other);
	return 0;
}

/* binaries.id of the file behind an executable mapping. */
static int64_t binary_of_file(struct ingest *in, const struct ingest_mmap *m,
			      struct error *e)
{
	/* the memo key holds the whole path: cut, two paths alike in their
	 * first few hundred bytes were one binary (the first's name) */
	char memo[PATH_MAX + 3 * HASHKEY_MAX], key[HASHKEY_MAX];
	char problem[sizeof(((struct error *)0)->msg)] = "";
	char note[512] = "";
	struct ingest_mmap unheld;
	int64_t *slot, id;
	int64_t size = 0;
	int cached = 0, fd, pre = -1, tried;
	struct stat st;
	struct error fe;

	if (strlen(m->filename) >= PATH_MAX)	/* no path the kernel names */
		return binary_special(in, "[path too long]", e);
	if (m->build_id_len) {
		/*
		 * A record with a build-id has no device and inode, and a path
		 * and a build-id name no file: another mount namespace may put
		 * a file of the same build-id, other bytes, at the same path
		 * (a bind mount of a doctored libc).  So the file is opened and
		 * remembered by what it is (device, inode, size, times): only
		 * the same file skips the checks below (bytes compared with
		 * the cache's under its build-id).
		 */
		hashkey_format(key, "buildid", m->build_id, m->build_id_len);
		pre = open_mapped(m, &st, problem, sizeof(problem));
		if (pre >= 0)
			snprintf(memo, sizeof(memo), "file:%ju:%ju:%jd:%jd.%09ld:%jd.%09ld:%s",
				 (uintmax_t)st.st_dev, (uintmax_t)st.st_ino, (intmax_t)st.st_size,
				 (intmax_t)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
				 (intmax_t)st.st_ctim.tv_sec, st.st_ctim.tv_nsec, key);
		else
			snprintf(memo, sizeof(memo), "unopened:%s:%s", key, m->filename);
	} else {
		snprintf(memo, sizeof(memo), "ino:%u:%u:%" PRIu64 ":%" PRIu64 ":%s", m->maj,
			 m->min, m->ino, m->ino_generation, m->filename);
		key[0] = 0;
	}
	slot = strmap_slot(&in->binaries, memo, 0);
	if (slot && *slot) {
		if (pre >= 0)
			close(pre);
		return *slot;
	}
	if (in->binaries.nr >= in->limits.binaries ||
	    !shares_take(in->shares, SHARES_BINARIES,
			 proc_charge(proc_get(in->procs, m->pid, 0), m->pid))) {
		if (pre >= 0)
			close(pre);
		in->stats.binaries_over++;
		return binary_special(in, "[too many binaries]", e);
	}
	slot = strmap_slot(&in->binaries, memo, 1);

	tried = m->build_id_len != 0;	/* opened above (pre, or problem) */
again:
	fd = tried ? pre : open_mapped(m, &st, problem, sizeof(problem));
	tried = 0;
	pre = -1;
	if (fd >= 0) {
		/* read once a file (not a path), within its owner's share */
		const struct readbudget_seen *seen;
		int ok;

		seen = readbudget_take(in->budget, &st, &ok, problem, sizeof(problem));
		if (!ok) {
			in->stats.read_refused++;
			close(fd);
			fd = -1;
		} else if (seen) {
			size = st.st_size;
			if (key[0] && strcmp(key, seen->fkey) && m->held) {
				unheld = *m;
				unheld.held = 0;
				m = &unheld;
				close(fd);
				goto again;
			} else if (key[0] && strcmp(key, seen->fkey)) {
				snprintf(problem, sizeof(problem), "%s no longer matches the "
					 "mapped binary (its build-id changed)", m->filename);
			} else {
				snprintf(key, sizeof(key), "%s", seen->key);
				cached = seen->cached;
			}
			close(fd);
			fd = -1;
		}
	}
	if (fd >= 0) {
		char fkey[HASHKEY_MAX];
		int hk;

		size = st.st_size;
		in->stats.bytes_read += st.st_size;
		in->parse_lost = 0;
		hk = hashkey_file_by(in->memo, fd, fkey, build_id_in_worker, in, &fe);
		if (!hk && in->parse_lost && key[0] && strcmp(key, fkey)) {
			/* the kernel's build-id could not be checked against the
			 * file's (the ingest worker failed): keyed by its contents */
			snprintf(note, sizeof(note), "its build-id was not read (the ingest "
				 "worker failed): named from its contents (%s)", fkey);
			snprintf(key, sizeof(key), "%s", fkey);
		}
		if (hk < 0) {
			snprintf(problem, sizeof(problem), "%s", fe.msg);
		} else if (key[0] && strcmp(key, fkey) && m->held) {
			/* the mapping held since the drain is another file (the
			 * address remapped, the pid reused before it was opened):
			 * the other ways, as if none was held */
			unheld = *m;
			unheld.held = 0;
			m = &unheld;
			close(fd);
			goto again;
		} else if (key[0] && strcmp(key, fkey)) {
			snprintf(problem, sizeof(problem), "%s no longer matches the mapped "
				 "binary (its build-id changed)", m->filename);
		} else {
			snprintf(key, sizeof(key), "%s", fkey);
			if (cache_key_verify(in, fd, key, note, sizeof(note), problem,
					     sizeof(problem)) < 0)
				;
			else if (bincache_store_fd(in->cache, key, fd,
						   file_public(m->filename, fd, &st) ?
						   BINCACHE_SHARED : BINCACHE_PRIVATE, &fe) < 0)
				snprintf(problem, sizeof(problem), "%s", fe.msg);
			else
				cached = 1;
			if (!problem[0] && !in->parse_lost)	/* else read again */
				readbudget_done(in->budget, &st, fkey, key, cached);
		}
		close(fd);
	}
	if (!key[0]) {
		/* nothing identifies the contents: key by what the kernel said */
		hashkey_xxh3_buf(memo, strlen(memo), key + snprintf(key, sizeof(key), "missing:"));
	}
	id = db_binary_intern(in->db, key, m->filename, size, cached,
			      problem[0] ? problem : NULL, e);
	if (id < 0)
		return -1;
	if (note[0] && db_binary_note(in->db, id, note, e) < 0)
		return -1;
	*slot = id;
	in->binary_max = MAX(in->binary_max, id);
	in->stats.binaries++;
	return id;
}

/* Whether the cache entry for key is missing (1), holds exactly buf (1),
 * or something else (0). */
static int cache_entry_is(struct ingest *in, const char *key, const void *buf, size_t len)
{
	char tmp[4096];
	size_t done = 0;
	ssize_t n;
	int fd, same = 1;

	if (!bincache_has(in->cache, key))
		return 1;
	fd = bincache_open_entry(in->cache, key);
	if (fd < 0)
		return 0;
	while (same && (n = read(fd, tmp, sizeof(tmp))) > 0) {
		if ((size_t)n > len - done || memcmp(tmp, (const char *)buf + done, n))
			same = 0;
		done += n;
	}
	close(fd);
	return same && done == len;
}

/*
 * binaries.id of strobed's own vDSO image, copied into the cache once (see
 * vdso.h), for a [vdso] mapping of len bytes; 0 when the mapping is not of
 * that image (another ABI's) or strobed has none: then it stays "[vdso]"
 * with no symbols, never named from the wrong image.
 */
static int64_t binary_vdso(struct ingest *in, uint64_t len, struct error *e)
{
	static const char memo[] = "vdso:self";
	const ElfW(Ehdr) *eh;
	char key[HASHKEY_MAX], hex[33];
	uint8_t bid[BUILD_ID_MAX];
	int64_t *slot, id;
	struct error ve;
	int n = 0;

	if (!in->vdso_tried) {
		in->vdso_tried = 1;
		if (vdso_self(&in->vdso, &ve) < 0)
			in->vdso.size = 0;
	}
	if (!vdso_matches(&in->vdso, len))
		return 0;
	slot = strmap_slot(&in->binaries, memo, 1);
	if (*slot)
		return *slot;
	eh = in->vdso.image;
	for (size_t i = 0; i < eh->e_phnum && !n; i++) {
		const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff) + i;

		/* vdso_image_size() checked that it lies within the image */
		if (ph->p_type == PT_NOTE)
			n = hashkey_build_id_notes((const char *)eh + ph->p_offset,
						   ph->p_filesz, bid, sizeof(bid));
	}
	if (n > 0)
		hashkey_format(key, "buildid", bid, n);
	/* a build-id is the builder's choice: a file cached under the same
	 * one (planted by a profiled process) must not name the vDSO */
	if (n <= 0 || !cache_entry_is(in, key, in->vdso.image, in->vdso.size)) {
		hashkey_xxh3_buf(in->vdso.image, in->vdso.size, hex);
		snprintf(key, sizeof(key), "xxh3:%s", hex);
	}
	if (bincache_store_buf(in->cache, key, in->vdso.image, in->vdso.size,
			       BINCACHE_SHARED, &ve) < 0)
		id = db_binary_intern(in->db, key, "[vdso]", in->vdso.size, 0, ve.msg, e);
	else
		id = db_binary_intern(in->db, key, "[vdso]", in->vdso.size, 1, NULL, e);
	if (id < 0)
		return -1;
	*slot = id;
	in->binary_max = MAX(in->binary_max, id);
	return id;
}

/* What ingest_mmap() makes of a mapping's name: one of special_maps,
 * "[anon]" for file-less executable memory, or NULL for a file. */
static const char *mmap_special(const char *filename)
{
	if (filename[0] == '[') {
		for (size_t i = 0; i < ARRAY_SIZE(special_maps); i++)
			if (!strcmp(filename, special_maps[i]))
				return special_maps[i];
		return "[anon]";
	}
	if (filename[0] != '/' || !strcmp(filename, "//anon") ||
	    !strncmp(filename, "/memfd:", 7) || !strncmp(filename, "/dev/zero", 9) ||
	    !strncmp(filename, "/SYSV", 5))
		return "[anon]";
	return NULL;
}

int ingest_mmap_wants_file(uint32_t pid, uint32_t prot, const char *filename)
{
	return (prot & PROT_EXEC) && !mmap_special(filename) &&
	       !jitdump_name_matches(filename, pid);
}

int ingest_mmap_wants_owner(uint32_t pid, uint32_t prot, const char *filename)
{
	const char *special;

	if (!(prot & PROT_EXEC))
		return 0;
	special = mmap_special(filename);
	if (special)
		return !strcmp(special, "[anon]");
	return jitdump_name_matches(filename, pid);
}

/* The user of m's process: the backend's look (m->owner_known), else the
 * owner of its /proc/PID now.  0: unknown. */
static int mmap_owner(const struct ingest_mmap *m, uid_t *uid)
{
	char proc_dir[32];
	struct stat st;

	if (m->owner_known) {
		*uid = m->owner_uid;
		return 1;
	}
	snprintf(proc_dir, sizeof(proc_dir), "/proc/%u", m->pid);
	if (stat(proc_dir, &st) < 0)
		return 0;
	*uid = st.st_uid;
	return 1;
}

int ingest_mmap(struct ingest *in, const struct ingest_mmap *m, struct error *e)
{
	struct proc *p;
	int64_t id;
	const char *special;
	uid_t uid;

	if (samples_flush(in, e))
		return -1;
	if (!(m->prot & PROT_EXEC))
		return 0;
	if (batch_open(in, e))
		return -1;
	special = mmap_special(m->filename);
	if (!special && jitdump_name_matches(m->filename, m->pid) &&
	    strlen(m->filename) < PATH_MAX) {
		/* a JIT's jitdump (jitdump.h), mapped only to be seen here:
		 * read at its exit, never a binary of its own */
		p = proc_get(in->procs, m->pid, 1);
		free(p->jitdump);
		p->jitdump = xstrdup(m->filename);
		p->jitdump_uid_known = mmap_owner(m, &uid);
		p->jitdump_uid = p->jitdump_uid_known ? uid : 0;
		p->jitdump_dev_known = !m->build_id;
		p->jitdump_maj = m->maj;
		p->jitdump_min = m->min;
		p->jitdump_ino = m->ino;
		return 0;
	}
	if (special && !strcmp(special, "[vdso]")) {
		id = binary_vdso(in, m->len, e);
		if (id < 0)
			return -1;
		if (id) {
			/* the image from offset 0 at the mapping's start (vdso.h) */
			p = proc_get(in->procs, m->pid, 1);
			proc_map_add(p, m->start, m->len, 0, id);
			return 0;
		}
	}
	id = special ? binary_special(in, special, e) : binary_of_file(in, m, e);
	if (id < 0)
		return -1;
	p = proc_get(in->procs, m->pid, 1);
	if (special && !strcmp(special, "[anon]") && !p->jit) {
		/* JIT code, perhaps: its perf map is read at its exit, if
		 * owned by its user, who owns /proc/PID while it runs (root
		 * when it is not dumpable: then only root's file is taken) */
		p->jit = 1;
		if (mmap_owner(m, &uid)) {
			p->jit_uid_known = 1;
			p->jit_uid = uid;
		}
		/* a container's: its map is in its own /tmp, by its own pid;
		 * the handle is kept (bounded) until its exit */
		if (in->jit_roots < INGEST_JIT_ROOTS_MAX) {
			int root = proc_own_tmp(m->pid, &p->jit_nspid);

			if (root >= 0) {
				p->jit_root = root + 1;
				in->jit_roots++;
			}
		} else {
			in->stats.jit_roots_over++;
		}
	}
	proc_map_add(p, m->start, m->len, special ? m->start : m->pgoff, id);
	return 0;
}

static struct cpu_state *cpu_state(struct ingest *in, uint32_t cpu)
{
	if (cpu >= in->nr_cpus) {
		size_t n = cpu + 1;

		in->cpus = xrealloc(in->cpus, n * sizeof(*in->cpus));
		memset(in->cpus + in->nr_cpus, 0, (n - in->nr_cpus) * sizeof(*in->cpus));
		in->nr_cpus = n;
	}
	return &in->cpus[cpu];
}

/* Whom a new cgroup is charged to (shares.h): its directory's owner,
 * the user it was delegated to; SHARES_UNKNOWN when it is gone. */
static uint32_t cgroup_charge(const struct ingest *in, const char *path)
{
	char full[sizeof(in->cgroup_root) + CGROUP_PATH_MAX];
	struct stat st;

	snprintf(full, sizeof(full), "%s%s", in->cgroup_root, path);
	if (!in->cgroup_root[0] || lstat(full, &st) < 0)
		return SHARES_UNKNOWN;
	return st.st_uid;
}

int ingest_cgroup(struct ingest *in, uint64_t id, const char *path, struct error *e)
{
	int64_t *slot;
	size_t n = strnlen(path, CGROUP_PATH_MAX);

	if (samples_flush(in, e))
		return -1;
	if (!in->cgroup_source || !id || n >= CGROUP_PATH_MAX || path[0] != '/')
		return 0;
	slot = strmap_slot(&in->cgroups, path, 0);
	if (slot && *slot == (int64_t)id)
		return 0;
	if (!slot && (in->cgroups.nr >= INGEST_CGROUPS_MAX ||
		      !shares_take(in->shares, SHARES_CGROUPS, cgroup_charge(in, path)))) {
		in->stats.cgroups_over++;
		return 0;
	}
	if (batch_open(in, e) || db_cgroup_put(in->db, in->s->id, id, path, e) < 0)
		return -1;
	if (!slot)
		in->stats.cgroups++;
	*strmap_slot(&in->cgroups, path, 1) = (int64_t)id;
	in->cgroup_dirty = 1;
	return 0;
}

static int cgroup_scan_one(void *ctx, uint64_t id, const char *path)
{
	void **a = ctx;

	return ingest_cgroup(a[0], id, path, a[1]) < 0 ? -2 : 0;
}

int ingest_cgroups_start(struct ingest *in, int from_samples, const char *root,
			 struct error *e)
{
	if (samples_flush(in, e))
		return -1;
	struct error se;
	void *a[2] = { in, e };
	long n = -1;

	in->cgroup_source = from_samples ? CG_SAMPLE : CG_PROC;
	if (root && !*root)
		goto stored;	/* "": no scan */
	if (root)
		snprintf(in->cgroup_root, sizeof(in->cgroup_root), "%s", root);
	else if (cgroups_find_root(in->cgroup_root, sizeof(in->cgroup_root)) < 0)
		goto none;
	n = cgroups_scan(in->cgroup_root, INGEST_CGROUPS_MAX, cgroup_scan_one, a, &in->stats.cgroups_over,
			 &se);
none:
	if (n == -1) {
		/* not a cgroup2 mount: no cgroups in this session, said so */
		in->cgroup_source = CG_NONE;
		snprintf(in->s->cgroup_source, sizeof(in->s->cgroup_source), "none");
		return 0;
	}
	if (n < 0)
		return -1;
stored:
	/* stored with the session at the next commit */
	snprintf(in->s->cgroup_source, sizeof(in->s->cgroup_source), "%s",
		 from_samples ? "sample" : "proc");
	return 0;
}

int ingest_call_graph(struct ingest *in, const char *call_graph, int keep_stacks,
		      struct error *e)
{
	struct callgraph cg;
	char spelled[32];

	if (samples_flush(in, e))
		return -1;
	if (callgraph_parse(call_graph, &cg, e) < 0)
		return error_prefix(e, "call graph");
	if (keep_stacks && cg.mode != CALLGRAPH_DWARF)
		return error_set(e, "keeping stacks needs --call-graph dwarf");
	callgraph_format(&cg, spelled, sizeof(spelled));
	if (db_session_set_call_graph(in->db, in->s->id, spelled[0] ? spelled : NULL, e) < 0)
		return -1;
	/* and kept by the session's next writes (db_session_update) */
	snprintf(in->s->call_graph, sizeof(in->s->call_graph), "%s", spelled);
	in->call_graph = cg.mode;
	in->keep_stacks = keep_stacks;
	return 0;
}

/* The id of process pid's cgroup from /proc/PID/cgroup; 0 if unknown. */
static uint64_t cgroup_of_proc(struct ingest *in, uint32_t pid, struct error *e, int *fail)
{
	char path[CGROUP_PATH_MAX];
	int64_t *slot;
	uint64_t id;

	if (cgroups_of_pid(pid, path, sizeof(path)) < 0)
		return 0;
	slot = strmap_slot(&in->cgroups, path, 0);
	if (slot && *slot)
		return (uint64_t)*slot;
	id = cgroups_id(in->cgroup_root, path);
	if (id && ingest_cgroup(in, id, path, e) < 0)
		*fail = 1;
	return id;
}

/* p's cgroup row, when it changed in the open batch */
static int cgroup_store(struct ingest *in, struct proc *p, struct error *e)
{
	if (!p->cgroup_dirty || !p->cgroup_id)
		return 0;
	return db_process_cgroup(in->db, in->s->id, p->pid, p->start_ns, p->cgroup_id,
				 p->cgroup_moves, e);
}

struct cgroup_store_all {
	struct ingest *in;
	struct error *e;
	int rc;
};

static void cgroup_store_each(struct proc *p, void *arg)
{
	struct cgroup_store_all *a = arg;

	if (!a->rc && cgroup_store(a->in, p, a->e) < 0)
		a->rc = -1;
}

/*
 * A sample of p in cgroup id (0: the sample does not say): p's cgroup is
 * that of its latest sample; a change is counted in cgroup_moves.  Without
 * the sample's, /proc/PID/cgroup at the process's first sample, once.
 */
static int sample_cgroup(struct ingest *in, struct proc *p, uint64_t id, struct error *e)
{
	int fail = 0;

	if (!id && in->cgroup_source == CG_PROC && !p->cgroup_tried) {
		p->cgroup_tried = 1;
		id = cgroup_of_proc(in, p->pid, e, &fail);
		if (fail)
			return -1;
		if (!id)
			in->stats.cgroup_unknown++;
	}
	if (!id || id == p->cgroup_id)
		return 0;
	if (p->cgroup_id) {
		if (!p->cgroup_moves)
			in->stats.cgroup_moved++;
		p->cgroup_moves++;
	}
	/* stored at the commit (or its exit): once per batch however often
	 * its threads flip between cgroups */
	p->cgroup_id = id;
	p->cgroup_dirty = 1;
	in->cgroup_dirty = 1;
	return 0;
}

/*
 * Call stacks (schema 14).  A sample's frames, leaf first, 16 bytes each:
 * its own (binary_id, offset), then each caller's return address less one
 * resolved as the sample's would be: through the kernel for addresses of
 * the callchain's kernel context, through the process's maps for user
 * ones ([unknown], offset = address, outside them).  The user part is the
 * callchain's user context, or for a sample with a user register and
 * stack copy (--call-graph dwarf), what unwind_user() finds from them.
 */
#define STACK_INCOMPLETE	1
#define STACK_KERNEL		2
#define STACK_USER		4

struct stack_build {
	unsigned char *frames;
	uint32_t nr, flags;
	const struct map *last;		/* of the last user frame */
};

static void frame_put(struct stack_build *b, int64_t binary_id, uint64_t offset)
{
	uint64_t v[2] = { htole64((uint64_t)binary_id), htole64(offset) };

	if (b->nr >= INGEST_STACK_FRAMES) {
		b->flags |= STACK_INCOMPLETE;
		return;
	}
	memcpy(b->frames + 16 * (size_t)b->nr++, v, 16);
}

static void frame_user(struct ingest *in, struct stack_build *b, const struct proc *p,
		       uint64_t addr)
{
	const struct map *m = b->last;

	/* callers are often in the mapping of the frame before */
	if (!m || addr < m->start || addr >= m->end)
		m = b->last = p ? proc_map_find(p, addr) : NULL;

	if (m)
		frame_put(b, m->binary_id, addr - m->start + m->pgoff);
	else
		frame_put(b, in->unknown_id, addr);
	b->flags |= STACK_USER;
}

static uint64_t u64_at(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Count one failure to unwind to the outermost frame. */
static void unwind_failed(struct ingest *in, int64_t binary_id, enum unwind_result r)
{
	struct unwind_err key = { .binary_id = binary_id, .reason = r };
	int added;
	struct unwind_err *u;

	if (!otable_find(&in->unwind_errs, &key) && in->unwind_errs.nr >= INGEST_UNWIND_ERRORS_MAX)
		key.binary_id = 0;	/* bounded: the rest as no binary */
	u = otable_get(&in->unwind_errs, &key, &added);
	u->count++;
	in->stats.unwind_failures++;
}

struct unwind_ctx {
	struct ingest *in;
};

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

/* The worker's counts, for strobed's log at the stop. */
static void unwinder_stats(struct ingest *in)
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

/* The user frames unwound from the sample's registers and stack copy
 * (a held sample's: its batch's answer, samples_flush); skip_first:
 * ips[0] (the user IP) is frame 0 already. */
static void stack_unwound(struct ingest *in, struct stack_build *b, const struct proc *p,
			  const struct record *r, int skip_first)
{
	enum unwind_result res;
	int64_t stop = 0;
	size_t nr = 0;

	if (!r->sample.regs_abi || !r->sample.nr_regs) {
		/* a kernel thread has no user stack: complete without */
		if ((r->sample.flags & STROBE_SAMPLE_MODE_MASK) != STROBE_SAMPLE_KERNEL) {
			b->flags |= STACK_INCOMPLETE;
			unwind_failed(in, 0, UNWIND_NO_REGS);
		}
		return;
	}
	ingest_worker(in);
	if (!p) {
		res = UNWIND_NO_MAP;
	} else if (!in->unwinder) {
		res = UNWIND_ERROR;
	} else if (in->unwound >= 0) {
		res = uworker_result(in->unwinder, (size_t)in->unwound, in->uips, &nr, &stop);
	} else {
		res = uworker_unwind(in->unwinder, p, r->sample.regs_abi, r->sample.regs_mask,
				  r->sample.regs, r->sample.nr_regs, r->sample.stack,
				  r->sample.stack_size, in->uips, INGEST_STACK_FRAMES, &nr, &stop);
		unwinder_stats(in);
	}
	nr = MIN(nr, (size_t)INGEST_STACK_FRAMES);
	for (size_t i = skip_first ? 1 : 0; i < nr; i++)
		if (in->uips[i])
			frame_user(in, b, p, in->uips[i] - 1);
	if (res != UNWIND_OK) {
		b->flags |= STACK_INCOMPLETE;
		unwind_failed(in, stop, res);
	}
}

/*
 * The frames of sample r of process p (NULL: unknown), whose own location
 * is (binary_id, offset), into b; 0 when the sample carries no stack.
 * Hostile input: markers anywhere, any address, nr_ips up to
 * STROBE_MAX_IPS.  The first address of the callchain is the sampled IP
 * itself (frame 0, not repeated); each context's first address after
 * that is where the context was left (a system call's return address, as
 * good as one); the hypervisor's and guests' contexts are skipped.
 */
static int stack_build(struct ingest *in, const struct record *r, const struct proc *p,
		       int64_t binary_id, uint64_t offset, struct stack_build *b)
{
	int kernel_mode = (r->sample.flags & STROBE_SAMPLE_MODE_MASK) == STROBE_SAMPLE_KERNEL;
	int ustack = !!(r->sample.flags & STROBE_SAMPLE_USTACK);
	enum { CTX_NONE, CTX_KERNEL, CTX_USER, CTX_OTHER } ctx = CTX_NONE;
	int first = 1;

	if (!(r->sample.flags & (STROBE_SAMPLE_CALLCHAIN | STROBE_SAMPLE_USTACK)))
		return 0;
	if (!in->frames) {
		in->frames = xmalloc(16 * (size_t)INGEST_STACK_FRAMES + 16);
		in->uips = xmalloc(sizeof(*in->uips) * INGEST_STACK_FRAMES);
	}
	b->frames = in->frames;
	b->nr = 0;
	b->flags = 0;
	b->last = NULL;
	frame_put(b, binary_id, offset);
	b->flags |= kernel_mode ? STACK_KERNEL : STACK_USER;
	for (uint32_t i = 0; i < MIN(r->sample.nr_ips, STROBE_MAX_IPS) && r->sample.ips; i++) {
		uint64_t a = u64_at(r->sample.ips + 8 * (size_t)i);

		if (a >= (uint64_t)PERF_CONTEXT_MAX) {
			ctx = a == (uint64_t)PERF_CONTEXT_KERNEL ? CTX_KERNEL :
			      a == (uint64_t)PERF_CONTEXT_USER ? CTX_USER : CTX_OTHER;
			continue;
		}
		if (ctx == CTX_NONE || ctx == CTX_OTHER || !a)
			continue;
		if (first) {
			first = 0;
			if (a == r->sample.ip)
				continue;	/* frame 0 */
		}
		if (ctx == CTX_KERNEL) {
			frame_put(b, in->kernel_id ? in->kernel_id : in->unknown_id, a - 1);
			b->flags |= STACK_KERNEL;
		} else if (!ustack) {
			frame_user(in, b, p, a - 1);
		}
	}
	if (r->sample.nr_ips >= STROBE_MAX_IPS)
		b->flags |= STACK_INCOMPLETE;	/* cut by the kernel, perhaps */
	if (ustack)
		stack_unwound(in, b, p, r, !kernel_mode);
	return 1;
}

/* The id of the stack in b, stored when new; 0 past the session's limit. */
static int64_t stack_id(struct ingest *in, struct proc *p, uint32_t pid,
			const struct stack_build *b, struct error *e)
{
	struct stack_key key, *k;
	XXH128_hash_t h;
	size_t len = 16 * (size_t)b->nr;
	int added;

	/* the frames, then the flags (room for them: stack_build) */
	memset(&key, 0, sizeof(key));
	memcpy(b->frames + len, &b->flags, sizeof(b->flags));
	h = XXH3_128bits_withSeed(b->frames, len + sizeof(b->flags), in->stack_seed);
	key.h[0] = h.low64;
	key.h[1] = h.high64;
	k = otable_find(&in->stack_ids, &key);
	if (k)
		return k->id;
	if (in->stack_ids.nr >= in->limits.stacks ||
	    !shares_take(in->shares, SHARES_STACKS, proc_charge(p, pid))) {
		in->stats.stacks_over++;
		return 0;
	}
	if (db_stack_insert(in->db, in->s->id, in->stack_max + 1,
			    (int64_t)XXH3_64bits(b->frames, len), b->nr, b->flags, b->frames,
			    e) < 0)
		return -1;
	k = otable_get(&in->stack_ids, &key, &added);
	k->id = ++in->stack_max;
	in->stats.stacks++;
	return k->id;
}

/* The strobe_ustack bytes of r, as captured (raw_stacks). */
static int raw_stack_store(struct ingest *in, const struct record *r, int64_t rowid,
			   struct error *e)
{
	struct strobe_ustack u;
	size_t regs = 8 * (size_t)r->sample.nr_regs, len;
	unsigned char *buf;
	int rc;

	memset(&u, 0, sizeof(u));
	u.abi = r->sample.regs_abi;
	u.nr_regs = r->sample.nr_regs;
	u.regs_mask = r->sample.regs_mask;
	u.stack_size = r->sample.stack_size;
	len = sizeof(u) + regs + r->sample.stack_size;
	buf = xmalloc(len);
	memcpy(buf, &u, sizeof(u));
	if (regs)
		memcpy(buf + sizeof(u), r->sample.regs, regs);
	if (r->sample.stack_size)
		memcpy(buf + sizeof(u) + regs, r->sample.stack, r->sample.stack_size);
	rc = db_raw_stack_insert(in->db, in->s->id, rowid, buf, len, e);
	free(buf);
	return rc;
}

/*
 * The increases of r's counters since the previous record of its CPU
 * (sample or, with exact attribution, switch read), into c; the CPU's
 * baseline moves to r.  After lost records they span the lost interval:
 * they are kept as the CPU's lost-interval counts, c is all zero, and 1 is
 * returned.
 */
static int counter_increase(struct ingest *in, struct cpu_counts *cs, const struct record *r,
			    uint64_t *c)
{
	int nr = MIN((int)r->sample.nr_counters, in->nr);

	for (int i = 0; i < in->nr; i++) {
		uint64_t v = i < nr ? r->sample.counters[i] : 0;

		c[i] = cs->seen && v >= cs->last[i] ? v - cs->last[i] : (cs->seen ? 0 : v);
		cs->last[i] = v;
	}
	cs->seen = 1;
	if (!cs->after_loss)
		return 0;
	/* what the counters did over the lost interval is no record's */
	for (int i = 0; i < in->nr; i++) {
		cs->st.lost_inc[i] += c[i];
		c[i] = 0;
	}
	cs->after_loss = 0;
	return 1;
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
		int64_t rel = (int64_t)time_ns - in->s->start_ns;

		memset(&a, 0, sizeof(a));
		a.binary_id = in->unknown_id;
		a.pid = t->pid;
		a.start_ns = p ? p->start_ns : 0;
		a.comm_id = p ? p->comm_id : 0;
		a.flags = STROBE_SAMPLE_USER;
		memset(&ta, 0, sizeof(ta));
		ta.bucket = rel / INGEST_TIME_BUCKET_NS - (rel % INGEST_TIME_BUCKET_NS < 0);
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
 * for its next sample, or stored as its tail if its exit was seen.
 */
static int ingest_switch(struct ingest *in, const struct record *r, struct error *e)
{
	struct cpu_counts *cs = &cpu_state(in, r->cpu)->now;
	uint64_t c[STROBE_MAX_COUNTERS];
	struct exact_thread *t;

	if (samples_flush(in, e))
		return -1;
	if (batch_open(in, e))
		return -1;
	in->exact = 1;
	in->stats.switch_reads++;
	if (counter_increase(in, cs, r, c))
		return 0;
	t = exact_get(in, r->sample.tid, r->sample.pid);
	for (int i = 0; i < in->nr; i++)
		t->cur.c[i] += c[i];
	if (t->cur.exited)
		return exact_flush(in, t, r->cpu, r->time_ns, e);
	return 0;
}

/* Store sample r (held or not: all but its user stack's unwinding). */
static int sample_finish(struct ingest *in, const struct record *r, struct error *e)
{
	struct cpu_counts *cs = &cpu_state(in, r->cpu)->now;
	struct db_sample row;
	struct db_agg key, *a;
	struct db_time_agg tkey, *ta;
	struct stack_build sb;
	int64_t rel;
	struct proc *p;
	int64_t rowid;

	if (batch_open(in, e))
		return -1;
	row.session_id = in->s->id;
	row.time_ns = r->time_ns;
	row.tsc = r->sample.tsc;
	row.cpu = r->cpu;
	row.pid = r->sample.pid;
	row.tid = r->sample.tid;
	row.flags = r->sample.flags;
	row.period = r->sample.period;
	row.nr = in->nr;
	cs->st.samples++;
	if (counter_increase(in, cs, r, row.c))
		row.flags |= STROBE_SAMPLE_AFTER_LOSS;
	if (in->exact) {
		/* its increases of earlier runs, read at its switches out */
		struct exact_thread *t = exact_get(in, row.tid, row.pid);

		for (int i = 0; i < in->nr; i++) {
			row.c[i] += t->cur.c[i];
			t->cur.c[i] = 0;
		}
	}

	p = proc_get(in->procs, row.pid, 0);
	if (p && row.tid != row.pid)
		proc_thread_seen(p, row.tid);
	row.comm_id = p ? p->comm_id : 0;
	if (p && in->cgroup_source && sample_cgroup(in, p, r->sample.cgroup, e) < 0)
		return -1;
	if ((row.flags & STROBE_SAMPLE_MODE_MASK) == STROBE_SAMPLE_KERNEL && in->kernel_id) {
		row.binary_id = in->kernel_id;
		row.offset = r->sample.ip;
	} else {
		const struct map *m = p ? proc_map_find(p, r->sample.ip) : NULL;

		if (m) {
			row.binary_id = m->binary_id;
			row.offset = r->sample.ip - m->start + m->pgoff;
		} else {
			row.binary_id = in->unknown_id;
			row.offset = r->sample.ip;
		}
	}

	row.stack_id = 0;
	if (stack_build(in, r, p, row.binary_id, row.offset, &sb)) {
		row.stack_id = stack_id(in, p, row.pid, &sb, e);
		if (row.stack_id < 0)
			return -1;
		if (!row.stack_id)
			in->stats.samples_no_stack++;
	}

	rowid = db_sample_insert(in->db, &row, e);
	if (rowid < 0)
		return -1;
	if (in->keep_stacks && (r->sample.flags & STROBE_SAMPLE_USTACK) &&
	    raw_stack_store(in, r, rowid, e) < 0)
		return -1;
	if (!in->s->first_sample)
		in->s->first_sample = rowid;
	in->s->last_sample = rowid;
	in->s->samples++;
	in->stats.samples++;

	memset(&key, 0, sizeof(key));
	key.binary_id = row.binary_id;
	key.offset = row.offset;
	key.pid = row.pid;
	/* the process, not just its pid (schema 11) */
	if (p)
		key.start_ns = p->start_ns;
	else if (in->gone[row.pid & (GONE_CACHE - 1)].pid == row.pid)
		key.start_ns = in->gone[row.pid & (GONE_CACHE - 1)].start_ns;
	key.comm_id = row.comm_id;
	key.flags = row.flags & STROBE_SAMPLE_MODE_MASK;
	a = agg_slot(&in->pending, &key);
	a->samples++;
	a->period += row.period;
	if (!row.period)
		a->period_unknown = 1;
	for (int i = 0; i < in->nr; i++)
		a->c[i] += row.c[i];
	if (row.stack_id) {
		struct db_stack_agg skey, *sa;
		int added;

		memset(&skey, 0, sizeof(skey));
		skey.stack_id = row.stack_id;
		skey.pid = row.pid;
		skey.start_ns = key.start_ns;
		skey.comm_id = row.comm_id;
		sa = otable_get(&in->stack_pending, &skey, &added);
		sa->samples++;
		sa->period += row.period;
		if (!row.period)
			sa->period_unknown = 1;
		for (int i = 0; i < in->nr; i++)
			sa->c[i] += row.c[i];
	}

	if ((int64_t)row.time_ns < in->max_time)
		in->s->late_samples++;
	else
		in->max_time = (int64_t)row.time_ns;
	memset(&tkey, 0, sizeof(tkey));
	rel = (int64_t)row.time_ns - in->s->start_ns;
	tkey.bucket = rel / INGEST_TIME_BUCKET_NS - (rel % INGEST_TIME_BUCKET_NS < 0);
	tkey.cpu = row.cpu;
	tkey.pid = row.pid;
	tkey.start_ns = key.start_ns;
	tkey.comm_id = row.comm_id;
	tkey.binary_id = row.binary_id;
	ta = time_slot(&in->times, &tkey);
	ta->samples++;
	ta->last_row = rowid;
	if ((int64_t)row.time_ns > ta->max_ns || ta->samples == 1)
		ta->max_ns = (int64_t)row.time_ns;
	if ((int64_t)row.time_ns < ta->min_ns || ta->samples == 1)
		ta->min_ns = (int64_t)row.time_ns;
	for (int i = 0; i < in->nr; i++)
		ta->c[i] += row.c[i];
	if (in->exact) {
		/* where its tail goes, should it exit before its next sample */
		struct exact_thread *t = exact_get(in, row.tid, row.pid);

		t->cur.akey = key;
		t->cur.tkey = tkey;
		t->cur.tkey.min_ns = t->cur.tkey.max_ns = (int64_t)row.time_ns;
		t->cur.have_key = 1;
	}

	if (++in->batch_rows >= BATCH_ROWS && !in->held)
		return ingest_commit(in, e);
	return 0;
}

/*
 * Hold sample r for a batched unwind (ubatch.h) when its user stack is
 * the worker's to unwind: its index in the uworker's batch; UWORKER_FULL
 * (flush, then try again); < 0 else (finished at once: stack_unwound).
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
static int samples_flush(struct ingest *in, struct error *e)
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

/* The same where no error can be returned: told by the next flush. */
static void samples_flush_later(struct ingest *in)
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

struct mark_arg {
	struct ingest *in;
	uint64_t time_ns;
	struct error *e;
	int ret;
};

static void proc_mark_uncertain(struct proc *p, void *arg)
{
	struct mark_arg *a = arg;
	struct ingest *in = a->in;

	if (!p->pid || p->uncertain_ns || a->ret < 0)
		return;	/* the idle task maps nothing */
	p->uncertain_ns = a->time_ns;
	if (!in->batch_uncertain_ns)
		in->batch_uncertain_ns = a->time_ns;
	if (!p->start_ns)	/* known from its mmaps only: it gets a row */
		p->start_ns = a->time_ns;
	in->stats.uncertain++;
	a->ret = db_process_put_uncertain(in->db, in->s->id, p->pid, 0, p->comm_id,
					  p->start_ns, 0, a->time_ns, a->e);
}

int ingest_late(struct ingest *in, uint32_t pid, uint64_t time_ns, uint64_t late_ns,
		struct error *e)
{
	struct mark_arg a = { in, time_ns ? time_ns : 1, e, 0 };
	struct proc *p;

	if (samples_flush(in, e))
		return -1;
	if (batch_open(in, e))
		return -1;
	in->s->late_records++;
	in->s->late_max_ns = MAX(in->s->late_max_ns, (int64_t)MIN(late_ns, (uint64_t)INT64_MAX));
	p = pid ? proc_get(in->procs, pid, 0) : NULL;
	if (p)
		proc_mark_uncertain(p, &a);
	return a.ret;
}

int ingest_lost_records(struct ingest *in, uint32_t cpu, uint64_t time_ns, uint64_t count,
			struct error *e)
{
	struct mark_arg a = { in, time_ns ? time_ns : 1, e, 0 };

	if (samples_flush(in, e))
		return -1;
	if (!count)
		return 0;
	if (ingest_lost(in, cpu, time_ns, count, "ring", e) < 0)
		return -1;
	proc_table_each(in->procs, proc_mark_uncertain, &a);
	return a.ret;
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

int ingest_record(struct ingest *in, const struct record *r, struct error *e)
{
	switch (r->type) {
	case STROBE_REC_SAMPLE:
		if (r->sample.flags & STROBE_SAMPLE_SWITCH)
			return ingest_switch(in, r, e);
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

int ingest_begin(struct ingest *in, struct error *e)
{
	if (samples_flush(in, e))
		return -1;
	if (batch_open(in, e) < 0)
		return -1;
	in->held = 1;
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
	for (size_t i = 0; in->times.nr && i < in->times.cap; i++) {
		if (in->times.ent[i].samples &&
		    db_time_agg_add(in->db, in->s->id, in->nr, &in->times.ent[i], e) < 0) {
			batch_undo(in);
			return -1;
		}
	}
	/*
	 * A CPU's increases over lost intervals exist nowhere but here (its
	 * samples after a loss carry 0): store them with the batch, so that
	 * the rebuild of an interrupted session keeps them.  Only after a loss.
	 */
	for (size_t c = 0; c < in->nr_cpus; c++) {
		struct cpu_counts *now = &in->cpus[c].now;
		struct db_cpu_stats cs;

		if (!memcmp(now->st.lost_inc, in->cpus[c].committed.st.lost_inc,
			    sizeof(now->st.lost_inc)))
			continue;
		cs = now->st;
		cs.cpu = (uint32_t)c;
		memset(cs.tail, 0, sizeof(cs.tail));
		if (db_cpu_stats_put(in->db, in->s->id, in->nr, &cs, e) < 0) {
			batch_undo(in);
			return -1;
		}
	}
	for (struct unwind_err *u = NULL; (u = otable_next(&in->unwind_errs, u));) {
		if (u->count != u->committed &&
		    db_unwind_error_add(in->db, in->s->id, u->binary_id,
					unwind_result_name((enum unwind_result)u->reason),
					u->count - u->committed, e) < 0) {
			batch_undo(in);
			return -1;
		}
	}
	if (in->cgroup_dirty) {
		struct cgroup_store_all a = { in, e, 0 };

		proc_table_each(in->procs, cgroup_store_each, &a);
		if (a.rc < 0) {
			batch_undo(in);
			return -1;
		}
	}
	if (db_session_update(in->db, in->s, e) < 0 || db_commit(in->db, e) < 0) {
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

int ingest_finish(struct ingest *in, uint64_t end_ns, struct error *e)
{
	struct jit_all ja = { in, e, 0 };

	if (samples_flush(in, e))
		return -1;
	if (batch_open(in, e))
		return -1;
	/* the perf maps of processes still running */
	proc_table_each(in->procs, jit_copy_each, &ja);
	if (ja.rc < 0)
		goto fail;
	/* exact attribution: the tails of threads still running */
	for (struct exact_thread *t = NULL; (t = otable_next(&in->exact_threads, t));)
		if (!t->cur.gone && exact_flush(in, t, 0, end_ns, e) < 0)
			goto fail;
	agg_merge(&in->agg, &in->pending);
	for (size_t i = 0; i < in->agg.cap; i++) {
		if (in->agg.ent[i].samples &&
		    db_agg_add(in->db, in->s->id, in->nr, &in->agg.ent[i], e) < 0)
			goto fail;
	}
	stack_agg_merge(&in->stack_agg, &in->stack_pending);
	for (struct db_stack_agg *a = NULL; (a = otable_next(&in->stack_agg, a));)
		if (db_stack_agg_add(in->db, in->s->id, in->nr, a, e) < 0)
			goto fail;
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
			goto fail;
	}
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
