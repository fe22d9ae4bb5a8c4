/*
 * procs.c - the processes of a session in ingest (ingest.h): their
 * comm, exec, fork and exit records applied to the process table
 * (maps.h) and stored in processes, their names (comms), whom their
 * entries are charged to (shares.h), and the uncertainty that lost and
 * late records leave (ingest_lost_records, ingest_late).
 */
#include "config.h"
#include <string.h>
#include "ingest_int.h"
#include "shares.h"

/* Whom an entry for pid's process is charged to (shares.h): p's real
 * uid, read once while it lives (again after an exec); when it is gone
 * by then (short-lived), its parent's or its own before its exec; root
 * for pid 0 (the kernel's idle); else SHARES_UNKNOWN. */
uint32_t proc_charge(struct proc *p, uint32_t pid)
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

/* The id of name comm, new for p (pid) when not known yet. */
static int64_t comm_id(struct ingest *in, struct proc *p, uint32_t pid, const char *comm,
		       struct error *e)
{
	int64_t *slot = name_slot(&in->comms, comm, 0);

	if (!slot && (in->comms.nr >= in->limits.comms ||
		      !shares_take(in->shares, SHARES_COMMS, proc_charge(p, pid)))) {
		in->stats.comms_over++;
		comm = "[too many names]";
	}
	slot = name_slot(&in->comms, comm, 1);

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
	if (p->jit)
		jit_forked(in, p);
	if (p->uncertain_ns)	/* a copy of maps that may be wrong */
		p->uncertain_ns = time_ns;
	return db_process_put_uncertain(in->db, in->s->id, pid, ppid, p->comm_id, time_ns, 0,
					p->uncertain_ns, e);
}

int ingest_exit(struct ingest *in, uint32_t pid, uint32_t tid, uint64_t time_ns,
		struct error *e)
{
	struct proc *p;
	int ret = 0;

	if (samples_flush(in, e))
		return -1;
	if (in->exact)
		exact_exited(in, tid, pid);
	p = proc_get(in->procs, pid, 0);
	if (!p || !proc_thread_exit(p, tid))
		return 0;	/* other threads still use the address space */
	if (batch_open(in, e))
		return -1;
	if (p->start_ns)
		ret = db_process_put(in->db, in->s->id, pid, 0, 0, p->start_ns, time_ns, e);
	in->gone[pid & (GONE_CACHE - 1)].pid = pid;
	in->gone[pid & (GONE_CACHE - 1)].start_ns = p->start_ns;
	if (!ret)
		ret = jit_copy_proc(in, p, e);
	if (!ret)
		ret = cgroup_store(in, p, e);
	jit_root_drop(in, p);	/* jit_copy's failed or never ran */
	proc_remove(in->procs, pid);
	return ret;
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
