/*
 * uworker.c - user stacks unwound in a process without privileges (see
 * uworker.h): the request and answer of an unwind, both sides; the
 * process, its drop and its transport are symworker.c's.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "uparse.h"
#include "uworker.h"

struct ureq {			/* then maps, regs, stack */
	uint32_t kind, pid, abi, nr_regs;	/* kind: UPARSE_UNWIND */
	uint64_t start_ns, regs_mask, stack_size;
	uint32_t max, nr_maps;
};

struct urep {			/* then nr ips */
	int32_t result;
	uint32_t nr;
	int64_t stop_binary;
};

struct uworker {
	struct symworker *w;
	struct unwind_ops ops;
	unsigned char *req;	/* SYMWORKER_EXT_MAX */
	unsigned char *rep;	/* sizeof(struct urep) + 8 * UWORKER_FRAMES */
	const struct proc *p;	/* of the request in flight */
	int fd;			/* uworker_call()'s, or -1 */
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

static size_t w_unwind(void **state, const void *req, size_t len, void *out, size_t cap)
{
	static uint64_t ips[UWORKER_FRAMES];
	struct urep r = { .result = UNWIND_ERROR };
	const unsigned char *b = req;
	struct ureq h;
	struct proc p;
	size_t need, max, nr = 0;

	if (!*state) {
		struct unwind_ops ops = { .open_binary = w_open_binary };
		struct error e;

		*state = unwinder_new(&ops, &e);
	}
	if (cap < sizeof(r))
		return 0;
	if (len < sizeof(h))
		goto out;
	memcpy(&h, b, sizeof(h));
	if (h.nr_maps > UWORKER_MAPS || h.nr_regs > UWORKER_REGS || h.stack_size > UWORKER_STACK)
		goto out;
	need = sizeof(h) + h.nr_maps * sizeof(struct map) + 8 * (size_t)h.nr_regs + h.stack_size;
	if (len != need || !*state)
		goto out;
	memset(&p, 0, sizeof(p));
	p.pid = h.pid;
	p.start_ns = h.start_ns;
	p.nr_maps = p.cap_maps = h.nr_maps;
	p.maps = xmalloc((h.nr_maps ? h.nr_maps : 1) * sizeof(struct map));
	memcpy(p.maps, b + sizeof(h), h.nr_maps * sizeof(struct map));
	b += sizeof(h) + h.nr_maps * sizeof(struct map);
	max = MIN((size_t)h.max, (size_t)UWORKER_FRAMES);
	max = MIN(max, (cap - sizeof(r)) / 8);
	r.result = (int32_t)unwind_user(*state, &p, h.abi, h.regs_mask, b, h.nr_regs,
					b + 8 * (size_t)h.nr_regs, h.stack_size,
					ips, max, &nr, &r.stop_binary);
	r.nr = (uint32_t)MIN(nr, max);
	memcpy((unsigned char *)out + sizeof(r), ips, 8 * (size_t)r.nr);
	free(p.maps);
out:
	memcpy(out, &r, sizeof(r));
	return sizeof(r) + 8 * (size_t)r.nr;
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

static const struct symworker_ext uworker_ext = { .serve = w_serve };

/* --- the parent --- */

static int in_maps(const struct proc *p, int64_t binary_id)
{
	for (size_t i = 0; i < p->nr_maps; i++)
		if (p->maps[i].binary_id == binary_id)
			return 1;
	return 0;
}

/* The worker asks for a binary: only one of the process's maps. */
static int give_fd(void *ctx, uint64_t key)
{
	struct uworker *u = ctx;

	if (key == 1 && u->fd >= 0)
		return dup(u->fd);
	if (!u->p || !key || !in_maps(u->p, (int64_t)key) || !u->ops.open_binary)
		return -1;
	return u->ops.open_binary(u->ops.ctx, (int64_t)key);
}

struct uworker *uworker_new(const struct unwind_ops *ops, struct error *e)
{
	struct symworker_opts o = {
		.timeout_ms = UWORKER_TIMEOUT_MS,
		.max_restarts = UWORKER_RESTARTS,
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
	u->rep = xmalloc(sizeof(struct urep) + 8 * UWORKER_FRAMES);
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

enum unwind_result uworker_unwind(struct uworker *u, const struct proc *p, uint32_t abi,
				  uint64_t regs_mask, const unsigned char *regs, uint32_t nr_regs,
				  const unsigned char *stack, uint64_t stack_size, uint64_t *ips,
				  size_t max, size_t *nr, int64_t *stop_binary)
{
	struct ureq h = { .kind = UPARSE_UNWIND, .pid = p->pid, .abi = abi, .nr_regs = nr_regs,
			  .nr_maps = (uint32_t)p->nr_maps, .start_ns = p->start_ns,
			  .regs_mask = regs_mask, .stack_size = stack_size,
			  .max = (uint32_t)MIN(max, (size_t)UWORKER_FRAMES) };
	size_t len = sizeof(h), cap = sizeof(struct urep) + 8 * (size_t)h.max;
	struct urep r;
	struct error e;
	ssize_t n;

	*nr = 0;
	*stop_binary = 0;
	if (p->nr_maps > UWORKER_MAPS || nr_regs > UWORKER_REGS || stack_size > UWORKER_STACK)
		return UNWIND_ERROR;
	memcpy(u->req, &h, sizeof(h));
	memcpy(u->req + len, p->maps, p->nr_maps * sizeof(struct map));
	len += p->nr_maps * sizeof(struct map);
	memcpy(u->req + len, regs, 8 * (size_t)nr_regs);
	len += 8 * (size_t)nr_regs;
	memcpy(u->req + len, stack, stack_size);
	len += stack_size;
	u->p = p;
	n = symworker_call(u->w, u->req, len, u->rep, cap, give_fd, u, &e);
	u->p = NULL;
	if (n < 0)
		return UNWIND_FAILED;
	/* the answer is the worker's: checked */
	memcpy(&r, u->rep, MIN((size_t)n, sizeof(r)));
	if ((size_t)n < sizeof(r) || r.result < UNWIND_OK || r.result > UNWIND_ERROR ||
	    r.nr > h.max || (size_t)n != sizeof(r) + 8 * (size_t)r.nr ||
	    (r.stop_binary && !in_maps(p, r.stop_binary))) {
		symworker_discard(u->w);
		return UNWIND_FAILED;
	}
	memcpy(ips, u->rep + sizeof(r), 8 * (size_t)r.nr);
	*nr = r.nr;
	*stop_binary = r.stop_binary;
	return (enum unwind_result)r.result;
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
	ssize_t n;

	u->fd = fd;
	n = symworker_call(u->w, req, len, out, cap, give_fd, u, e);
	u->fd = -1;
	return n;
}

void uworker_discard(struct uworker *u)
{
	symworker_discard(u->w);
}
