/*
 * maps.h - the address spaces of the processes of a session, rebuilt from
 * side-band records (fork, comm/exec, mmap, exit) and /proc at start, so
 * that a sample's (pid, ip) resolves to (binary, file offset).
 *
 * Only executable mappings are tracked.  A new mapping replaces whatever
 * part of older ones it overlaps, as mmap(MAP_FIXED) does.  fork copies the
 * parent's maps, exec clears them.  The address space lives as long as the
 * process: until its last thread exits, which need not be the leader
 * thread (tid == pid).
 */
#ifndef STROBE_MAPS_H
#define STROBE_MAPS_H

#include <stddef.h>
#include <stdint.h>

struct map {
	uint64_t start, end;	/* [start, end) */
	uint64_t pgoff;		/* file offset of start */
	int64_t binary_id;	/* db binaries.id */
};

struct proc {
	uint32_t pid;
	int64_t comm_id;	/* db comms.id, 0 if unknown */
	uint64_t start_ns;
	struct map *maps;	/* sorted by start, disjoint */
	size_t nr_maps, cap_maps;
	uint32_t *tids;		/* live threads besides the leader: a hash
				 * set, open addressing (0 empty, TID_GONE
				 * removed); NULL while it has none */
	size_t nr_tids;		/* threads in it */
	size_t cap_tids;	/* slots: 0 or a power of two, at most
				 * PROC_TIDS_MAX_CAP */
	size_t gone_tids;	/* slots marked removed */
	uint8_t odd_tids;	/* bit 0: tid 0, bit 1: tid TID_GONE, which
				 * the slots cannot hold (not real tids) */
	uint32_t last_tid;	/* proc_thread_seen()'s last, known in tids */
	int leader_exited;	/* the leader thread exited, others may run */
	uint64_t uncertain_ns;	/* maps may be wrong from then on (side-band
				 * records lost); 0: complete.  A fork
				 * inherits it, an exec clears it. */
	int jit;		/* had anonymous executable memory (JIT code?):
				 * its perf map is looked for at its exit */
	int jit_uid_known;
	uint32_t jit_uid;	/* its euid then (the owner of /proc/PID) */
	int jit_root;		/* 1 + an O_PATH handle of its /tmp (in
				 * /proc/PID/root) when it lives in another
				 * mount namespace: its perf map is there;
				 * 0: none.  Closed with it */
	uint32_t jit_nspid;	/* its pid in its own pid namespace (the
				 * name of its map there); 0: as pid */
	char *jitdump;		/* NULL, or the path of the jit-PID.dump it mapped
				 * (jitdump.h): read at its exit; not inherited */
	int jitdump_uid_known, jitdump_dev_known;
	uint32_t jitdump_uid;	/* its euid when it mapped the file */
	uint32_t jitdump_maj, jitdump_min;	/* the file's device and inode, */
	uint64_t jitdump_ino;			/* when the record had them */
	uint64_t cgroup_id;	/* of its latest sample, as stored; 0: none
				 * yet.  Not inherited (the child's row has
				 * its own) */
	int owner_known;	/* owner: its real uid (shares.h).  1: read
				 * from /proc; 2: its parent's, or its own
				 * before an exec (setuid), read again while
				 * it lives; 0: not known */
	uint32_t owner;
	uint64_t cgroup_moves;	/* samples whose cgroup differed from the
				 * one before */
	int cgroup_tried;	/* /proc/PID/cgroup read (once) */
	int cgroup_dirty;	/* its row written by the open batch */
};

struct proc_table;

struct proc_table *proc_table_new(void);
void proc_table_free(struct proc_table *t);

/* The process pid; created empty when create is set, else NULL if unknown. */
struct proc *proc_get(struct proc_table *t, uint32_t pid, int create);
/* Forget pid (after its exit). */
void proc_remove(struct proc_table *t, uint32_t pid);
/* Child pid gets a copy of parent's maps, comm and uncertainty; an existing
 * pid (its exit was lost) is started afresh, with nothing of its old self. */
struct proc *proc_fork(struct proc_table *t, uint32_t ppid, uint32_t pid);
/* exec: the address space is replaced (its maps are certain again); the
 * process has one thread. */
void proc_exec(struct proc *p);
/*
 * The thread set: tids of a process besides its leader.  Adding, looking
 * up and removing cost O(1) on average whatever the number of threads
 * (the slots are at most half full, removed slots included); it grows by
 * doubling up to PROC_TIDS_MAX_CAP slots (room for every tid the kernel
 * can hand out: its PID_MAX_LIMIT is 4,194,304) and shrinks when three
 * quarters of its threads have exited, so a process that had many threads
 * does not keep their memory.
 */
#define PROC_TIDS_MAX_CAP	(1u << 23)

/* Thread tid (not the leader) runs in p; adding it twice is harmless.
 * A thread beyond PROC_TIDS_MAX_CAP / 2 is not kept (its exit is then
 * taken as that of a thread p never heard of). */
void proc_thread_add(struct proc *p, uint32_t tid);
/* A sample of thread tid of p: it runs, so p's address space lives until
 * its exit too (a thread whose start strobe did not see).  Cheap when the
 * same thread is seen again. */
void proc_thread_seen(struct proc *p, uint32_t tid);
/* Thread tid of p exited: 1 if p has no thread left (the process exited),
 * else 0.  Threads p never heard of (started before the session) count
 * as gone. */
int proc_thread_exit(struct proc *p, uint32_t tid);

/* Add [start, start+len) at file offset pgoff of binary_id. */
void proc_map_add(struct proc *p, uint64_t start, uint64_t len, uint64_t pgoff,
		  int64_t binary_id);
/* Remove the mappings of binaries whose id is first_id or above. */
void proc_map_drop_binaries(struct proc *p, int64_t first_id);
/* Mapping containing ip, or NULL. */
const struct map *proc_map_find(const struct proc *p, uint64_t ip);

/* Call fn on every process (for final bookkeeping). */
void proc_table_each(struct proc_table *t, void (*fn)(struct proc *p, void *arg), void *arg);

#endif
