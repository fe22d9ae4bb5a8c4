/*
 * ingestsink.c - the capture sink (sink.h) that feeds ingest: each
 * callback is one function of ingest.h, the capture structs copied into
 * ingest's own (struct db_marker).
 */
#include "config.h"
#include <string.h>
#include "ingestsink.h"

static int k_record(void *ctx, const struct record *r, struct error *e)
{
	return ingest_record(ctx, r, e);
}

static int k_comm(void *ctx, uint32_t pid, uint32_t tid, const char *comm, int exec,
		  uint64_t time_ns, struct error *e)
{
	return ingest_comm(ctx, pid, tid, comm, exec, time_ns, e);
}

static int k_fork(void *ctx, uint32_t ppid, uint32_t pid, uint32_t tid, uint64_t time_ns,
		  struct error *e)
{
	return ingest_fork(ctx, ppid, pid, tid, time_ns, e);
}

static int k_exit(void *ctx, uint32_t pid, uint32_t tid, uint64_t time_ns, struct error *e)
{
	return ingest_exit(ctx, pid, tid, time_ns, e);
}

static int k_mmap(void *ctx, const struct sink_mmap *s, struct error *e)
{
	return ingest_mmap(ctx, s, e);
}

static int k_cgroup(void *ctx, uint64_t id, const char *path, struct error *e)
{
	return ingest_cgroup(ctx, id, path, e);
}

static int k_lost(void *ctx, uint32_t cpu, uint64_t time_ns, uint64_t count, const char *kind,
		  struct error *e)
{
	return ingest_lost(ctx, cpu, time_ns, count, kind, e);
}

static int k_lost_records(void *ctx, uint32_t cpu, uint64_t time_ns, uint64_t count,
			  struct error *e)
{
	return ingest_lost_records(ctx, cpu, time_ns, count, e);
}

static int k_throttle(void *ctx, uint32_t cpu, uint64_t time_ns, struct error *e)
{
	return ingest_throttle(ctx, cpu, time_ns, e);
}

static int k_late(void *ctx, uint32_t pid, uint64_t time_ns, uint64_t late_ns,
		  struct error *e)
{
	return ingest_late(ctx, pid, time_ns, late_ns, e);
}

static int k_unscheduled(void *ctx, uint32_t cpu, uint64_t time_ns, uint64_t enabled_ns,
			 uint64_t running_ns, int error, struct error *e)
{
	return ingest_unscheduled(ctx, cpu, time_ns, enabled_ns, running_ns, error, e);
}

static int k_marker(void *ctx, const struct sink_marker *s, struct error *e)
{
	struct db_marker m = {
		.time_ns = s->time_ns, .cpu = s->cpu, .pid = s->pid, .tid = s->tid,
		.kind = s->kind, .name = s->name, .args = s->args,
	};

	return ingest_marker(ctx, &m, e);
}

static void k_cpu_final(void *ctx, uint32_t cpu, const uint64_t *values, int nr)
{
	ingest_cpu_final(ctx, cpu, values, nr);
}

void ingestsink_init(struct sink *k, struct ingest *in)
{
	*k = (struct sink){
		.ctx = in,
		.record = k_record,
		.comm = k_comm,
		.fork = k_fork,
		.exit = k_exit,
		.mmap = k_mmap,
		.cgroup = k_cgroup,
		.lost = k_lost,
		.lost_records = k_lost_records,
		.throttle = k_throttle,
		.late = k_late,
		.unscheduled = k_unscheduled,
		.marker = k_marker,
		.cpu_final = k_cpu_final,
		.mmap_wants_owner = ingest_mmap_wants_owner,
		.mmap_wants_file = ingest_mmap_wants_file,
	};
}
