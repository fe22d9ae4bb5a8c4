/*
 * maps.c - per-process executable mappings (see maps.h).  Processes live
 * in an open-addressing hash table keyed by pid; each keeps a sorted array
 * of disjoint mappings searched by bisection on every sample, and its
 * threads in a hash set of tids (looked up whenever a sample's thread
 * differs from the process's previous one).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "maps.h"
#include "util.h"

struct proc_table {
	struct proc **slots;	/* NULL empty, TOMBSTONE removed */
	size_t cap, used;	/* used counts live + tombstones */
};

static struct proc tombstone;
#define TOMBSTONE (&tombstone)

struct proc_table *proc_table_new(void)
{
	struct proc_table *t = xcalloc(1, sizeof(*t));

	t->cap = 1024;
	t->slots = xcalloc(t->cap, sizeof(*t->slots));
	return t;
}

static void proc_free(struct proc *p)
{
	if (p->jit_root)
		close(p->jit_root - 1);
	free(p->maps);
	free(p->tids);
	free(p->jitdump);
	free(p);
}

void proc_table_free(struct proc_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i] && t->slots[i] != TOMBSTONE)
			proc_free(t->slots[i]);
	free(t->slots);
	free(t);
}

static size_t slot_of(const struct proc_table *t, uint32_t pid)
{
	return (pid * 2654435761u) & (t->cap - 1);
}

static void table_rehash(struct proc_table *t, size_t cap)
{
	struct proc **old = t->slots;
	size_t oldcap = t->cap;

	t->slots = xcalloc(cap, sizeof(*t->slots));
	t->cap = cap;
	t->used = 0;
	for (size_t i = 0; i < oldcap; i++) {
		struct proc *p = old[i];
		size_t s;

		if (!p || p == TOMBSTONE)
			continue;
		for (s = slot_of(t, p->pid); t->slots[s]; s = (s + 1) & (t->cap - 1))
			;
		t->slots[s] = p;
		t->used++;
	}
	free(old);
}

struct proc *proc_get(struct proc_table *t, uint32_t pid, int create)
{
	size_t s, free_slot = SIZE_MAX;
	struct proc *p;

	for (s = slot_of(t, pid); t->slots[s]; s = (s + 1) & (t->cap - 1)) {
		if (t->slots[s] == TOMBSTONE) {
			if (free_slot == SIZE_MAX)
				free_slot = s;
			continue;
		}
		if (t->slots[s]->pid == pid)
			return t->slots[s];
	}
	if (!create)
		return NULL;
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	if (free_slot != SIZE_MAX) {
		t->slots[free_slot] = p;
	} else {
		t->slots[s] = p;
		t->used++;
		if (t->used * 2 > t->cap)
			table_rehash(t, t->cap * 2);
	}
	return p;
}

void proc_remove(struct proc_table *t, uint32_t pid)
{
	for (size_t s = slot_of(t, pid); t->slots[s]; s = (s + 1) & (t->cap - 1)) {
		if (t->slots[s] != TOMBSTONE && t->slots[s]->pid == pid) {
			proc_free(t->slots[s]);
			t->slots[s] = TOMBSTONE;
			return;
		}
	}
}

static void tids_clear(struct proc *p)
{
	free(p->tids);
	p->tids = NULL;
	p->nr_tids = p->cap_tids = p->gone_tids = 0;
	p->odd_tids = 0;
}

struct proc *proc_fork(struct proc_table *t, uint32_t ppid, uint32_t pid)
{
	struct proc *parent, *child;

	child = proc_get(t, pid, 1);
	parent = proc_get(t, ppid, 0);
	if (parent == child)
		return child;
	/* pid reuse after a lost exit: nothing of the old process remains */
	child->comm_id = 0;
	child->start_ns = 0;
	child->jit = child->jit_uid_known = 0;
	if (child->jit_root)
		close(child->jit_root - 1);
	child->jit_root = 0;
	child->jit_nspid = 0;
	free(child->jitdump);
	child->jitdump = NULL;
	child->jitdump_uid_known = child->jitdump_dev_known = 0;
	child->cgroup_id = child->cgroup_moves = 0;
	child->cgroup_tried = child->cgroup_dirty = 0;
	child->owner_known = 0;
	proc_exec(child);
	if (!parent)
		return child;
	child->comm_id = parent->comm_id;
	child->uncertain_ns = parent->uncertain_ns;
	child->jit = parent->jit;
	child->jit_uid_known = parent->jit_uid_known;
	child->jit_uid = parent->jit_uid;
	child->owner_known = parent->owner_known ? 2 : 0;
	child->owner = parent->owner;
	ARRAY_GROW(child->maps, child->cap_maps, parent->nr_maps);
	if (parent->nr_maps)
		memcpy(child->maps, parent->maps, parent->nr_maps * sizeof(struct map));
	child->nr_maps = parent->nr_maps;
	return child;
}

void proc_exec(struct proc *p)
{
	p->nr_maps = 0;
	tids_clear(p);
	p->last_tid = 0;
	p->leader_exited = 0;
	p->uncertain_ns = 0;
	if (p->owner_known)
		p->owner_known = 2;
}

/*
 * The thread set.  A tid is a positive int below 2^22 in practice; 0 and
 * TID_GONE mark empty and removed slots, so those two values, which no
 * real thread has, are kept as bits of odd_tids instead.
 */
#define TID_GONE	UINT32_MAX

static size_t tid_slot(uint32_t tid, size_t cap)
{
	return (tid * 2654435761u) & (cap - 1);
}

static void tids_resize(struct proc *p, size_t cap)
{
	uint32_t *old = p->tids;
	size_t oldcap = p->cap_tids;

	p->tids = cap ? xcalloc(cap, sizeof(*p->tids)) : NULL;
	p->cap_tids = cap;
	p->gone_tids = 0;
	for (size_t i = 0; i < oldcap; i++) {
		size_t s;

		if (!old[i] || old[i] == TID_GONE)
			continue;
		for (s = tid_slot(old[i], cap); p->tids[s]; s = (s + 1) & (cap - 1))
			;
		p->tids[s] = old[i];
	}
	free(old);
}

/* The slot holding tid, or SIZE_MAX. */
static size_t tids_find(const struct proc *p, uint32_t tid)
{
	size_t mask = p->cap_tids - 1;

	if (!p->cap_tids)
		return SIZE_MAX;
	for (size_t s = tid_slot(tid, p->cap_tids), n = 0; p->tids[s] && n < p->cap_tids;
	     s = (s + 1) & mask, n++)
		if (p->tids[s] == tid)
			return s;
	return SIZE_MAX;
}

static int tid_odd_bit(uint32_t tid)
{
	return tid == 0 ? 1 : tid == TID_GONE ? 2 : 0;
}

void proc_thread_add(struct proc *p, uint32_t tid)
{
	size_t s, mask;
	int odd = tid_odd_bit(tid);

	if (tid == p->pid)
		return;
	if (odd) {
		if (!(p->odd_tids & odd))
			p->nr_tids++;
		p->odd_tids |= odd;
		return;
	}
	if (tids_find(p, tid) != SIZE_MAX)
		return;
	/* at most half full, removed slots included */
	if ((p->nr_tids + p->gone_tids + 1) * 2 > p->cap_tids) {
		size_t cap = p->cap_tids ? p->cap_tids : 8;

		while ((p->nr_tids + 1) * 2 > cap && cap < PROC_TIDS_MAX_CAP)
			cap *= 2;
		if ((p->nr_tids + 1) * 2 > cap)
			return;		/* more threads than the kernel has */
		tids_resize(p, cap);
	}
	mask = p->cap_tids - 1;
	for (s = tid_slot(tid, p->cap_tids); p->tids[s] && p->tids[s] != TID_GONE;
	     s = (s + 1) & mask)
		;
	if (p->tids[s] == TID_GONE)
		p->gone_tids--;
	p->tids[s] = tid;
	p->nr_tids++;
}

void proc_thread_seen(struct proc *p, uint32_t tid)
{
	if (tid == p->pid || tid == p->last_tid)
		return;
	proc_thread_add(p, tid);
	p->last_tid = tid;
}

int proc_thread_exit(struct proc *p, uint32_t tid)
{
	int odd = tid_odd_bit(tid);

	if (tid == p->last_tid)
		p->last_tid = 0;
	if (tid == p->pid) {
		p->leader_exited = 1;
	} else if (odd) {
		if (p->odd_tids & odd)
			p->nr_tids--;
		p->odd_tids &= ~odd;
	} else {
		size_t s = tids_find(p, tid);

		if (s != SIZE_MAX) {
			/* the next slot empty: nothing probes past this one */
			if (!p->tids[(s + 1) & (p->cap_tids - 1)])
				p->tids[s] = 0;
			else {
				p->tids[s] = TID_GONE;
				p->gone_tids++;
			}
			p->nr_tids--;
			if (!p->nr_tids && !p->odd_tids)
				tids_clear(p);
			else if (p->cap_tids > 64 && p->nr_tids * 8 < p->cap_tids)
				tids_resize(p, p->cap_tids / 2);
		}
	}
	return p->leader_exited && !p->nr_tids;
}

/* First mapping whose end is above addr. */
static size_t map_bisect(const struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_maps;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (p->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void proc_map_add(struct proc *p, uint64_t start, uint64_t len, uint64_t pgoff,
		  int64_t binary_id)
{
	uint64_t end = start + len;
	size_t i, j;
	struct map keep[2];
	int nkeep = 0;

	if (!len || end < start)
		return;
	i = map_bisect(p, start);
	/* [i, j) are the mappings overlapping [start, end) */
	for (j = i; j < p->nr_maps && p->maps[j].start < end; j++)
		;
	if (i < j && p->maps[i].start < start) {
		keep[nkeep] = p->maps[i];
		keep[nkeep++].end = start;
	}
	if (i < j && p->maps[j - 1].end > end) {
		struct map *m = &keep[nkeep++];

		*m = p->maps[j - 1];
		m->pgoff += end - m->start;
		m->start = end;
	}
	/* replace [i, j) with keep-before, new, keep-after */
	{
		size_t add = nkeep + 1, removed = j - i;
		size_t n = p->nr_maps - removed + add;
		struct map nm = { start, end, pgoff, binary_id };
		size_t k = i;

		ARRAY_GROW(p->maps, p->cap_maps, n);
		memmove(&p->maps[i + add], &p->maps[j], (p->nr_maps - j) * sizeof(struct map));
		if (nkeep && keep[0].start < start)
			p->maps[k++] = keep[0];
		p->maps[k++] = nm;
		if (nkeep && keep[nkeep - 1].start >= end)
			p->maps[k++] = keep[nkeep - 1];
		/* fewer pieces than reserved: close the gap */
		if (k < i + add) {
			memmove(&p->maps[k], &p->maps[i + add],
				(p->nr_maps - j) * sizeof(struct map));
			n -= i + add - k;
		}
		p->nr_maps = n;
	}
}

void proc_map_drop_binaries(struct proc *p, int64_t first_id)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nr_maps; i++)
		if (p->maps[i].binary_id < first_id)
			p->maps[n++] = p->maps[i];
	p->nr_maps = n;
}

const struct map *proc_map_find(const struct proc *p, uint64_t ip)
{
	size_t i = map_bisect(p, ip);

	if (i < p->nr_maps && p->maps[i].start <= ip)
		return &p->maps[i];
	return NULL;
}

void proc_table_each(struct proc_table *t, void (*fn)(struct proc *p, void *arg), void *arg)
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i] && t->slots[i] != TOMBSTONE)
			fn(t->slots[i], arg);
}
