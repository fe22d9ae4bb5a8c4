/*
 * backend_sideband.c - the side-band of the perf rings, in both backends
 * (backend_core.h): MMAP2, COMM, FORK, EXIT, CGROUP, and the LOST,
 * LOST_SAMPLES and THROTTLE records, from perf_chunk_read to the sink.
 *
 * Each is decoded once, when its chunk is read (sideband_queue), and
 * queued as its struct perfrec with its bytes (Q_PERF); delivery points
 * the struct at the bytes where they are now (perfrec_rebase) and calls
 * the sink.  An MMAP2 record is also looked at by the drain thread when it
 * copies it out of the ring (sideband_note), while its process surely
 * runs: the file of an executable mapping is held then (binhold.h), and
 * the user of a process whose JIT files the sink will read is noted
 * (struct owners), both taken again at delivery.
 */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "backend_core.h"

void sideband_queue(struct backend *b, struct cpu_ring *r, const unsigned char *p, size_t len)
{
	struct perf_ent pe;
	unsigned char *dst;

	if (perfrec_decode(&b->fmt, p, len, &pe.pr) != PERFREC_OK)
		return;
	pe.from = (uintptr_t)p;
	dst = merge_queue_push(&r->q, pe.pr.time, Q_PERF, sizeof(pe) + len);
	memcpy(dst, &pe, sizeof(pe));
	memcpy(dst + sizeof(pe), p, len);
}

void sideband_note(struct backend *b, struct cpu_ring *r, uint64_t off,
		   const struct perf_event_header *h)
{
	const unsigned char *p = r->data + (off & (r->size - 1));
	uint64_t first = r->size - (off & (r->size - 1));
	struct owner_seen *o;
	struct perfrec pr;
	char proc_dir[32];
	struct stat st;

	if (h->size > r->size)
		return;		/* malformed: decoding says so later */
	if (h->size > first) {
		memcpy(r->dtmp, p, first);
		memcpy(r->dtmp + first, r->data, h->size - first);
		p = r->dtmp;
	}
	if (perfrec_decode(&b->fmt, p, h->size, &pr) != PERFREC_OK)
		return;
	if (b->sink.mmap_wants_file(pr.mmap2.pid, pr.mmap2.prot, pr.mmap2.filename)) {
		struct binhold_rec hr = {
			.pid = pr.mmap2.pid, .time = pr.time, .start = pr.mmap2.start,
			.end = pr.mmap2.start + pr.mmap2.len, .has_ino = !pr.mmap2.has_build_id,
			.maj = pr.mmap2.maj, .min = pr.mmap2.min, .ino = pr.mmap2.ino,
			.gen = pr.mmap2.ino_generation,
		};

		binhold_note(b->held, &hr);
	}
	if (!b->sink.mmap_wants_owner(pr.mmap2.pid, pr.mmap2.prot, pr.mmap2.filename))
		return;
	snprintf(proc_dir, sizeof(proc_dir), "/proc/%u", pr.mmap2.pid);
	if (stat(proc_dir, &st) < 0)
		return;		/* gone already: ingest says so */
	pthread_mutex_lock(&b->owners.lock);
	o = &b->owners.seen[b->owners.next++ % OWNERS_MAX];
	*o = (struct owner_seen){ .time = pr.time, .pid = pr.mmap2.pid, .uid = st.st_uid };
	pthread_mutex_unlock(&b->owners.lock);
}

/* What sideband_note() saw for pid's record of time t: 1 and *uid, or 0. */
static int owner_find(struct backend *b, uint32_t pid, uint64_t t, uint32_t *uid)
{
	int found = 0;

	pthread_mutex_lock(&b->owners.lock);
	for (uint64_t i = b->owners.next; i > 0 && b->owners.next - i < OWNERS_MAX; i--) {
		const struct owner_seen *o = &b->owners.seen[(i - 1) % OWNERS_MAX];

		if (o->pid == pid && o->time == t) {
			*uid = o->uid;
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&b->owners.lock);
	return found;
}

/* The process whose maps a side-band record changes, 0 for others. */
static uint32_t perfrec_pid(const struct perfrec *pr)
{
	switch (pr->type) {
	case PERF_RECORD_MMAP2:
		return pr->mmap2.prot & PROT_EXEC ? pr->mmap2.pid : 0;
	case PERF_RECORD_COMM:
		return pr->comm.exec ? pr->comm.pid : 0;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return pr->task.pid;
	}
	return 0;
}

/* An MMAP2 record to the sink, with what the drain thread saw of it. */
static int mmap_deliver(struct backend *b, const struct perfrec *pr, struct error *e)
{
	const struct sink *k = &b->sink;
	struct sink_mmap m;
	int ret;

	memset(&m, 0, sizeof(m));
	m.pid = pr->mmap2.pid;
	m.start = pr->mmap2.start;
	m.len = pr->mmap2.len;
	m.pgoff = pr->mmap2.pgoff;
	if (pr->mmap2.has_build_id) {
		m.build_id_len = pr->mmap2.build_id_len;
		m.build_id = pr->mmap2.build_id;
	} else {
		m.maj = pr->mmap2.maj;
		m.min = pr->mmap2.min;
		m.ino = pr->mmap2.ino;
		m.ino_generation = pr->mmap2.ino_generation;
	}
	m.prot = pr->mmap2.prot;
	m.filename = pr->mmap2.filename;
	m.time_ns = pr->time;
	if (k->mmap_wants_owner(m.pid, m.prot, m.filename))
		m.owner_known = owner_find(b, m.pid, pr->time, &m.owner_uid);
	if (k->mmap_wants_file(m.pid, m.prot, m.filename)) {
		m.held_fd = binhold_take(b->held, m.pid, pr->time, m.start, &m.held_over);
		m.held = m.held_fd >= 0;
	}
	ret = k->mmap(k->ctx, &m, e);
	if (m.held)
		close(m.held_fd);
	return ret;
}

int sideband_deliver(struct backend *b, int cpu, const struct merge_ent *q, uint64_t late_ns,
		     struct error *e)
{
	const struct sink *k = &b->sink;
	const unsigned char *p = merge_payload(q);
	struct perfrec pr;

	/* as sideband_queue decoded it, its bytes moved along */
	memcpy(&pr, &((const struct perf_ent *)p)->pr, sizeof(pr));
	perfrec_rebase(&pr, ((const struct perf_ent *)p)->from, p + sizeof(struct perf_ent));
	/* only a late side-band record leaves the maps of its process wrong
	 * for a while (ingest.h) */
	if (late_ns && k->late(k->ctx, perfrec_pid(&pr), pr.time, late_ns, e) < 0)
		return -1;
	switch (pr.type) {
	case PERF_RECORD_MMAP2:
		return mmap_deliver(b, &pr, e);
	case PERF_RECORD_COMM:
		return k->comm(k->ctx, pr.comm.pid, pr.comm.tid, pr.comm.comm, pr.comm.exec,
			       pr.time, e);
	case PERF_RECORD_FORK:
		return k->fork(k->ctx, pr.task.ppid, pr.task.pid, pr.task.tid, pr.time, e);
	case PERF_RECORD_EXIT:
		return k->exit(k->ctx, pr.task.pid, pr.task.tid, pr.time, e);
	case PERF_RECORD_LOST:
		return k->lost_records(k->ctx, cpu, pr.time, pr.lost.lost, e);
	case PERF_RECORD_LOST_SAMPLES:
		return k->lost(k->ctx, cpu, pr.time, pr.lost.lost, "samples", e);
	case PERF_RECORD_THROTTLE:
		return k->throttle(k->ctx, cpu, pr.time, e);
	case PERF_RECORD_CGROUP:
		return k->cgroup(k->ctx, pr.cgroup.id, pr.cgroup.path, e);
	}
	return 0;
}
