/*
 * callstack.c - call stacks in ingest (ingest.h, schema 14): the session's
 * call graph (ingest_call_graph), a sample's frames from its callchain
 * or its unwound user stack (unwind.h, in the ingest worker: uworker.h),
 * deduplicated into stacks by a secret-seeded hash, summed in stack_agg,
 * unwinding failures counted in unwind_errors, raw copies kept in
 * rawstk.raw_stacks.
 */
#include "config.h"
#include <endian.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <linux/perf_event.h>
#include <xxhash.h>
#include "callgraph.h"
#include "ingest_int.h"
#include "shares.h"
#include "unwind.h"
#include "uworker.h"

/* stack_ids: the in-memory key of a stack, and its id */
struct stack_key {
	uint64_t h[2];			/* XXH3-128 of frames and flags, seeded */
	int64_t id;
};

/* unwind_errs: failures of (binary, reason) counted, and as committed */
struct unwind_err {
	int64_t binary_id;
	int64_t reason;			/* enum unwind_result */
	uint64_t count, committed;
};

void callstack_init(struct ingest *in)
{
	otable_init(&in->stack_ids, sizeof(struct stack_key), 2 * sizeof(uint64_t), 1024);
	otable_init(&in->stack_agg, sizeof(struct db_stack_agg),
		    offsetof(struct db_stack_agg, samples), 1024);
	otable_init(&in->stack_pending, sizeof(struct db_stack_agg),
		    offsetof(struct db_stack_agg, samples), 1024);
	otable_init(&in->unwind_errs, sizeof(struct unwind_err),
		    offsetof(struct unwind_err, count), 64);
	/* a stack's key is secret: a process cannot make its stacks collide
	 * with another's */
	if (getrandom(&in->stack_seed, sizeof(in->stack_seed), GRND_NONBLOCK) !=
	    sizeof(in->stack_seed))
		in->stack_seed = (uint64_t)(uintptr_t)in ^ (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ULL;
}

void callstack_free(struct ingest *in)
{
	otable_free(&in->stack_ids);
	otable_free(&in->stack_agg);
	otable_free(&in->stack_pending);
	otable_free(&in->unwind_errs);
	free(in->frames);
	free(in->uips);
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
int raw_stack_store(struct ingest *in, const struct record *r, int64_t rowid,
			   struct error *e)
{
	size_t len = sizeof(struct strobe_ustack) + 8 * (size_t)r->sample.nr_regs +
		     r->sample.stack_size;
	unsigned char *buf = xmalloc(len);
	int rc;

	record_ustack_put(r, buf);
	rc = db_raw_stack_insert(in->db, in->s->id, rowid, buf, len, e);
	free(buf);
	return rc;
}

int stack_sample(struct ingest *in, const struct record *r, struct proc *p,
		 struct db_sample *row, struct error *e)
{
	struct stack_build sb;

	if (!stack_build(in, r, p, row->binary_id, row->offset, &sb))
		return 0;
	row->stack_id = stack_id(in, p, row->pid, &sb, e);
	if (row->stack_id < 0)
		return -1;
	if (!row->stack_id)
		in->stats.samples_no_stack++;
	return 0;
}

void stack_agg_add(struct ingest *in, const struct db_sample *row, uint64_t start_ns)
{
	struct db_stack_agg key, *sa;
	int added;

	memset(&key, 0, sizeof(key));
	key.stack_id = row->stack_id;
	key.pid = row->pid;
	key.start_ns = start_ns;
	key.comm_id = row->comm_id;
	sa = otable_get(&in->stack_pending, &key, &added);
	sa->samples++;
	sa->period += row->period;
	if (!row->period)
		sa->period_unknown = 1;
	for (int i = 0; i < in->nr; i++)
		sa->c[i] += row->c[i];
}

static int stack_committed_keep(void *arg, const void *entry)
{
	return ((const struct stack_key *)entry)->id <= *(const int64_t *)arg;
}

int callstack_store_errors(struct ingest *in, struct error *e)
{
	for (struct unwind_err *u = NULL; (u = otable_next(&in->unwind_errs, u));) {
		if (u->count != u->committed &&
		    db_unwind_error_add(in->db, in->s->id, u->binary_id,
					unwind_result_name((enum unwind_result)u->reason),
					u->count - u->committed, e) < 0)
			return -1;
	}
	return 0;
}

int callstack_finish(struct ingest *in, struct error *e)
{
	agg_merge(&in->stack_agg, &in->stack_pending, offsetof(struct db_stack_agg, sums));
	for (struct db_stack_agg *a = NULL; (a = otable_next(&in->stack_agg, a));)
		if (db_stack_agg_add(in->db, in->s->id, in->nr, a, e) < 0)
			return -1;
	return 0;
}

void callstack_commit(struct ingest *in)
{
	in->stack_committed = in->stack_max;
	agg_merge(&in->stack_agg, &in->stack_pending, offsetof(struct db_stack_agg, sums));
	for (struct unwind_err *u = NULL; (u = otable_next(&in->unwind_errs, u));)
		u->committed = u->count;
}

void callstack_undo(struct ingest *in)
{
	otable_clear(&in->stack_pending);
	for (struct unwind_err *u = NULL; (u = otable_next(&in->unwind_errs, u));)
		u->count = u->committed;
	if (in->stack_max > in->stack_committed) {
		/* the stacks of the batch are gone: their ids are given again */
		otable_filter(&in->stack_ids, stack_committed_keep, &in->stack_committed);
		in->stack_max = in->stack_committed;
	}
}
