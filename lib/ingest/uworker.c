/*
 * uworker.c - user stacks unwound in a process without privileges (see
 * uworker.h): the request and answer of a batch of unwinds, both sides;
 * the process and its transport are symworker.c's, its drop symchild.c's.
 *
 * A request is a sequence of items, each a header then its bytes: a
 * process (UI_PROC: identity, then its maps), sent before the first sample
 * of it, and a sample (UI_SAMPLE: the index of its process among the
 * request's, then its registers and stack copy), after the request's
 * kind, UPARSE_UNWIND (the worker's other kinds: uparse.h).  The answer
 * is, sample after sample, a struct urep and its ips.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "uparse.h"
#include "uworker.h"

#define UREQ_HEAD	sizeof(uint32_t)	/* the kind, UPARSE_UNWIND */

enum { UI_PROC = 1, UI_SAMPLE = 2 };

struct uiproc {			/* then nr_maps struct map */
	uint32_t kind, pid, nr_maps, pad;
	uint64_t start_ns;
};

struct uisample {		/* then nr_regs u64, stack_size bytes */
	uint32_t kind, proc, abi, nr_regs, max, pad;
	uint64_t regs_mask, stack_size;
};

struct urep {			/* then nr ips */
	int32_t result;
	uint32_t nr;
	int64_t stop_binary;
};

/* A process of the batch being built: its maps are in the request. */
struct bproc {
	uint32_t pid, nr_maps;
	uint64_t start_ns;
	size_t maps_off;
};

/* A sample of the batch: what was asked, then what came back. */
struct bsample {
	uint32_t proc, max;
	enum unwind_result result;
	uint32_t nr;
	int64_t stop_binary;
	size_t ips_off;		/* in rep */
};

struct uworker {
	struct symworker *w;
	struct unwind_ops ops;
	unsigned char *req;	/* SYMWORKER_EXT_MAX */
	unsigned char *rep;	/* SYMWORKER_EXT_MAX */
	size_t len;		/* of the request built */
	size_t rep_max;		/* the worst answer of the batch */
	int ran;		/* answers in s[]: the next add starts anew */
	size_t nr, nr_procs;
	struct bproc procs[UWORKER_BATCH];
	struct bsample s[UWORKER_BATCH];
	struct uworker_counts counts;
	int calling;		/* in uworker_call(): */
	int fd;			/* its descriptor, or -1 */
	enum uworker_kind last;	/* the kind of the last request sent */
};

struct wstate {			/* a worker's: each kind's own */
	void *unwinder;
	void *parse;		/* uparse.c's */
};

/* --- the worker --- */

static int w_open_binary(void *ctx, int64_t binary_id)
{
	(void)ctx;
	return symworker_ext_fd((uint64_t)binary_id);
}

/* Unwind the samples of request b (len bytes); their answers into out.
 * A request that does not parse gets an answer of 0 bytes. */
static size_t w_unwind(void **state, const void *req, size_t len, void *out, size_t cap)
{
	static uint64_t ips[UWORKER_FRAMES];
	static struct proc procs[UWORKER_BATCH];
	const unsigned char *b = (const unsigned char *)req + UREQ_HEAD, *end = b + len - UREQ_HEAD;
	unsigned char *o = out;
	size_t nr_procs = 0, used = 0, nr_samples = 0, ok = 0;

	if (!*state) {
		struct unwind_ops ops = { .open_binary = w_open_binary };
		struct error e;

		*state = unwinder_new(&ops, &e);
	}
	while (b < end) {
		uint32_t kind;

		if ((size_t)(end - b) < sizeof(kind))
			goto out;
		memcpy(&kind, b, sizeof(kind));
		if (kind == UI_PROC) {
			struct uiproc h;
			struct proc *p = &procs[nr_procs];

			if ((size_t)(end - b) < sizeof(h) || nr_procs == UWORKER_BATCH)
				goto out;
			memcpy(&h, b, sizeof(h));
			b += sizeof(h);
			if (h.nr_maps > UWORKER_MAPS ||
			    (size_t)(end - b) < h.nr_maps * sizeof(struct map))
				goto out;
			memset(p, 0, sizeof(*p));
			p->pid = h.pid;
			p->start_ns = h.start_ns;
			p->nr_maps = p->cap_maps = h.nr_maps;
			p->maps = xmalloc((h.nr_maps ? h.nr_maps : 1) * sizeof(struct map));
			memcpy(p->maps, b, h.nr_maps * sizeof(struct map));
			b += h.nr_maps * sizeof(struct map);
			nr_procs++;
		} else if (kind == UI_SAMPLE) {
			struct uisample h;
			struct urep r = { .result = UNWIND_ERROR };
			size_t max, nr = 0;

			if ((size_t)(end - b) < sizeof(h) || nr_samples == UWORKER_BATCH)
				goto out;
			memcpy(&h, b, sizeof(h));
			b += sizeof(h);
			if (h.proc >= nr_procs || h.nr_regs > UWORKER_REGS ||
			    h.stack_size > UWORKER_STACK ||
			    (size_t)(end - b) < 8 * (size_t)h.nr_regs + h.stack_size ||
			    cap - used < sizeof(r))
				goto out;
			max = MIN((size_t)h.max, (size_t)UWORKER_FRAMES);
			max = MIN(max, (cap - used - sizeof(r)) / 8);
			if (*state)
				r.result = (int32_t)unwind_user(*state, &procs[h.proc], h.abi,
								h.regs_mask, b, h.nr_regs,
								b + 8 * (size_t)h.nr_regs,
								h.stack_size, ips, max, &nr,
								&r.stop_binary);
			b += 8 * (size_t)h.nr_regs + h.stack_size;
			r.nr = (uint32_t)MIN(nr, max);
			memcpy(o + used, &r, sizeof(r));
			memcpy(o + used + sizeof(r), ips, 8 * (size_t)r.nr);
			used += sizeof(r) + 8 * (size_t)r.nr;
			nr_samples++;
		} else {
			goto out;
		}
	}
	ok = 1;
out:
	for (size_t i = 0; i < nr_procs; i++)
		free(procs[i].maps);
	return ok ? used : 0;
}

/* Every request starts with its kind (uparse.h). */
static size_t w_serve(void **state, const void *req, size_t len, void *out, size_t cap)
{
	struct wstate *w = *state;
	uint32_t kind;

	if (!w)
		w = *state = xcalloc(1, sizeof(*w));
	if (len < sizeof(kind))
		return 0;
	memcpy(&kind, req, sizeof(kind));
	if (kind == UPARSE_UNWIND)
		return w_unwind(&w->unwinder, req, len, out, cap);
	return uparse_serve(&w->parse, req, len, out, cap);
}

const struct symworker_ext uworker_ext = { .name = "unwind", .serve = w_serve };

/* --- the parent --- */

static int bproc_has(const struct uworker *u, const struct bproc *bp, int64_t binary_id)
{
	for (uint32_t i = 0; i < bp->nr_maps; i++) {
		struct map m;

		memcpy(&m, u->req + bp->maps_off + i * sizeof(m), sizeof(m));
		if (m.binary_id == binary_id)
			return 1;
	}
	return 0;
}

/* The worker asks for a binary: only one of the batch's processes' maps. */
static int give_fd(void *ctx, uint64_t key)
{
	struct uworker *u = ctx;
	size_t i;

	if (u->calling)		/* uworker_call(): its file, nothing else */
		return key == 1 && u->fd >= 0 ? dup(u->fd) : -1;
	if (!key || !u->ops.open_binary)
		return -1;
	for (i = 0; i < u->nr_procs; i++)
		if (bproc_has(u, &u->procs[i], (int64_t)key))
			break;
	if (i == u->nr_procs)
		return -1;
	return u->ops.open_binary(u->ops.ctx, (int64_t)key);
}

/* The budget per kind (uworker.h): is kind k still asked?  Counts a
 * refusal when not. */
static int kind_open(struct uworker *u, enum uworker_kind k)
{
	if (u->counts.failed[k] <= UWORKER_RESTARTS)
		return 1;
	u->counts.refused[k]++;
	return 0;
}

/* symworker_call() for a request of kind k: the worker's failures during
 * it (a crash, a hang, one found dead when the request came) are k's. */
static ssize_t kind_call(struct uworker *u, enum uworker_kind k, const void *req, size_t len,
			 void *out, size_t cap, struct error *e)
{
	struct symworker_stats a, b;
	ssize_t n;

	symworker_stats(u->w, &a);
	u->last = k;
	n = symworker_call(u->w, req, len, out, cap, give_fd, u, e);
	symworker_stats(u->w, &b);
	u->counts.failed[k] += (b.crashes + b.timeouts) - (a.crashes + a.timeouts);
	return n;
}

struct uworker *uworker_new(const struct unwind_ops *ops, struct error *e)
{
	struct symworker_opts o = {
		.timeout_ms = UWORKER_TIMEOUT_MS,
		/* each kind's failures start at most UWORKER_RESTARTS + 1 */
		.max_restarts = UWORKER_KINDS * (UWORKER_RESTARTS + 1),
		.mem_max = 4ULL << 30,		/* libdw maps the binaries */
		.cpu_s = 1u << 30,		/* a session's life; hangs: the timeout */
		.comm = "strobe-unwind",
		.ext = &uworker_ext,
	};
	struct uworker *u = xcalloc(1, sizeof(*u));

	u->ops = *ops;
	u->fd = -1;
	u->w = symworker_new(&o, e);
	if (!u->w) {
		free(u);
		return NULL;
	}
	u->req = xmalloc(SYMWORKER_EXT_MAX);
	u->rep = xmalloc(SYMWORKER_EXT_MAX);
	return u;
}

void uworker_free(struct uworker *u)
{
	if (!u)
		return;
	symworker_free(u->w);
	free(u->req);
	free(u->rep);
	free(u);
}

/* The index of p in the batch, added when new (its maps copied); -1 when
 * it does not fit. */
static int batch_proc(struct uworker *u, const struct proc *p)
{
	struct uiproc h = { .kind = UI_PROC, .pid = p->pid, .nr_maps = (uint32_t)p->nr_maps,
			    .start_ns = p->start_ns };
	size_t maps = p->nr_maps * sizeof(struct map);
	struct bproc *bp;

	for (size_t i = 0; i < u->nr_procs; i++) {
		bp = &u->procs[i];
		if (bp->pid == p->pid && bp->start_ns == p->start_ns &&
		    bp->nr_maps == p->nr_maps && !memcmp(u->req + bp->maps_off, p->maps, maps))
			return (int)i;
	}
	if (u->nr_procs == UWORKER_BATCH || SYMWORKER_EXT_MAX - u->len < sizeof(h) + maps)
		return -1;
	memcpy(u->req + u->len, &h, sizeof(h));
	u->len += sizeof(h);
	bp = &u->procs[u->nr_procs];
	bp->pid = p->pid;
	bp->nr_maps = (uint32_t)p->nr_maps;
	bp->start_ns = p->start_ns;
	bp->maps_off = u->len;
	memcpy(u->req + u->len, p->maps, maps);
	u->len += maps;
	return (int)u->nr_procs++;
}

int uworker_add(struct uworker *u, const struct proc *p, uint32_t abi, uint64_t regs_mask,
		const unsigned char *regs, uint32_t nr_regs, const unsigned char *stack,
		uint64_t stack_size, size_t max)
{
	struct uisample h = { .kind = UI_SAMPLE, .abi = abi, .nr_regs = nr_regs,
			      .max = (uint32_t)MIN(max, (size_t)UWORKER_FRAMES),
			      .regs_mask = regs_mask, .stack_size = stack_size };
	size_t need = sizeof(h) + 8 * (size_t)nr_regs + stack_size;
	size_t rep = sizeof(struct urep) + 8 * (size_t)h.max;
	size_t len0, procs0;
	int i;

	if (p->nr_maps > UWORKER_MAPS || nr_regs > UWORKER_REGS || stack_size > UWORKER_STACK)
		return UWORKER_INVALID;
	if (u->ran) {
		u->ran = 0;
		u->nr = u->nr_procs = u->len = u->rep_max = 0;
	}
	if (!u->len) {		/* a new request: its kind first */
		uint32_t kind = UPARSE_UNWIND;

		memcpy(u->req, &kind, sizeof(kind));
		u->len = UREQ_HEAD;
	}
	if (u->nr == UWORKER_BATCH || SYMWORKER_EXT_MAX - u->rep_max < rep)
		return UWORKER_FULL;
	len0 = u->len;
	procs0 = u->nr_procs;
	i = batch_proc(u, p);
	if (i < 0 || SYMWORKER_EXT_MAX - u->len < need) {
		u->len = len0;		/* the process too, if it was new */
		u->nr_procs = procs0;
		return UWORKER_FULL;
	}
	h.proc = (uint32_t)i;
	memcpy(u->req + u->len, &h, sizeof(h));
	u->len += sizeof(h);
	memcpy(u->req + u->len, regs, 8 * (size_t)nr_regs);
	u->len += 8 * (size_t)nr_regs;
	memcpy(u->req + u->len, stack, stack_size);
	u->len += stack_size;
	u->rep_max += rep;
	u->s[u->nr].proc = h.proc;
	u->s[u->nr].max = h.max;
	return (int)u->nr++;
}

/* Check the answer (n bytes in rep) sample by sample: 0 when it all makes
 * sense. */
static int check_answer(struct uworker *u, size_t n)
{
	size_t off = 0;

	for (size_t i = 0; i < u->nr; i++) {
		struct bsample *s = &u->s[i];
		struct urep r;

		if (n - off < sizeof(r))
			return -1;
		memcpy(&r, u->rep + off, sizeof(r));
		off += sizeof(r);
		if (r.result < UNWIND_OK || r.result > UNWIND_ERROR || r.nr > s->max ||
		    n - off < 8 * (size_t)r.nr ||
		    (r.stop_binary && !bproc_has(u, &u->procs[s->proc], r.stop_binary)))
			return -1;
		s->result = (enum unwind_result)r.result;
		s->nr = r.nr;
		s->stop_binary = r.stop_binary;
		s->ips_off = off;
		off += 8 * (size_t)r.nr;
	}
	return off == n ? 0 : -1;
}

size_t uworker_run(struct uworker *u)
{
	struct error e;
	ssize_t n;

	if (u->ran || !u->nr)
		return 0;
	u->ran = 1;
	u->counts.calls++;
	u->counts.samples += u->nr;
	n = kind_open(u, UWORKER_UNWIND) ?
		kind_call(u, UWORKER_UNWIND, u->req, u->len, u->rep, SYMWORKER_EXT_MAX, &e) : -1;
	if (n >= 0 && check_answer(u, (size_t)n) < 0)
		uworker_discard(u);	/* the answer is the worker's: checked */
	else if (n >= 0)
		return u->nr;
	for (size_t i = 0; i < u->nr; i++) {
		u->s[i].result = UNWIND_FAILED;
		u->s[i].nr = 0;
		u->s[i].stop_binary = 0;
	}
	return u->nr;
}

enum unwind_result uworker_result(const struct uworker *u, size_t i, uint64_t *ips, size_t *nr,
				  int64_t *stop_binary)
{
	const struct bsample *s = &u->s[i];

	memcpy(ips, u->rep + s->ips_off, 8 * (size_t)s->nr);
	*nr = s->nr;
	*stop_binary = s->stop_binary;
	return s->result;
}

enum unwind_result uworker_unwind(struct uworker *u, const struct proc *p, uint32_t abi,
				  uint64_t regs_mask, const unsigned char *regs, uint32_t nr_regs,
				  const unsigned char *stack, uint64_t stack_size, uint64_t *ips,
				  size_t max, size_t *nr, int64_t *stop_binary)
{
	int i;

	*nr = 0;
	*stop_binary = 0;
	uworker_run(u);		/* a batch being built: the caller's loss */
	i = uworker_add(u, p, abi, regs_mask, regs, nr_regs, stack, stack_size, max);
	if (i < 0)		/* UWORKER_INVALID: an empty batch fits a sample */
		return UNWIND_ERROR;
	uworker_run(u);
	return uworker_result(u, (size_t)i, ips, nr, stop_binary);
}

void uworker_counts(const struct uworker *u, struct uworker_counts *out)
{
	*out = u->counts;
}

pid_t uworker_pid(const struct uworker *u)
{
	return symworker_pid(u->w);
}

void uworker_stats(const struct uworker *u, struct symworker_stats *out)
{
	symworker_stats(u->w, out);
}

int uworker_selftest(struct uworker *u, struct symworker_self *out, struct error *e)
{
	return symworker_selftest(u->w, out, e);
}

ssize_t uworker_call(struct uworker *u, const void *req, size_t len, void *out, size_t cap,
		     int fd, struct error *e)
{
	enum uworker_kind k = UWORKER_JIT;
	uint32_t kind = UPARSE_JITMAP;
	ssize_t n;

	if (len >= sizeof(kind))
		memcpy(&kind, req, sizeof(kind));
	if (kind == UPARSE_BUILD_ID)
		k = UWORKER_BUILD_ID;
	else if (kind == UPARSE_UNWIND)
		k = UWORKER_UNWIND;
	if (!kind_open(u, k))
		return error_set(e, "the ingest worker failed %u times on %s: not asked again",
				 UWORKER_RESTARTS + 1, k == UWORKER_BUILD_ID ? "build-ids" :
				 k == UWORKER_JIT ? "JIT files" : "unwinding");
	u->calling = 1;
	u->fd = fd;
	n = kind_call(u, k, req, len, out, cap, e);
	u->fd = -1;
	u->calling = 0;
	return n;
}

void uworker_discard(struct uworker *u)
{
	u->counts.failed[u->last]++;
	symworker_discard(u->w);
}
