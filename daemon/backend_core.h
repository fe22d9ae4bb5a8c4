/*
 * backend_core.h - the inside of the capture backend (backend.h), shared by
 * its six files and by nothing else:
 *
 *   backend_core.c      open and close, the drain thread, the spool, the
 *                       per-ring queues, the time merge, delivery to the sink
 *   backend_perf.c      the per-CPU perf rings (with the driver they carry
 *                       the side-band only) and their samples
 *   backend_sideband.c  their side-band (mmap, comm, fork, exit, cgroups)
 *                       and loss records, from the ring to the sink
 *   backend_dev.c       the driver's rings (/dev/strobe, strobe_dev.h)
 *   backend_usdt.c      USDT probe sites: uprobes writing into the perf rings
 *   backend_fit.c       how many of the group's events a CPU's PMU takes
 *
 * A record is decoded once, when its spooled chunk is read into its
 * ring's queue, and queued decoded (enum qkind): a sample as its struct
 * record, a side-band record as its struct perfrec with its bytes, a probe
 * hit with its arguments read.  Delivery hands them to the sink as they
 * are.
 */
#ifndef STROBE_BACKEND_CORE_H
#define STROBE_BACKEND_CORE_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#include "backend.h"
#include "binhold.h"
#include "merge.h"
#include "perfrec.h"
#include "record.h"
#include "sink.h"
#include "spool.h"
#include "strobe_dev.h"

/* Group read of the leader: nr, time enabled, time running, {value, id}... */
#define READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED | \
		     PERF_FORMAT_TOTAL_TIME_RUNNING)
/* Enabled but not running for less than this between two samples is noise. */
#define UNSCHED_MIN_NS		10000

/* What a queue entry holds (merge_ent.kind). */
enum qkind {
	Q_RECORD = 1,	/* struct record's head (record_head_size), then its tail */
	Q_PERF = 2,	/* struct perf_ent, then the perf record's bytes */
	Q_MARK = 3,	/* struct probe_hit */
};

/* Q_PERF: a side-band or loss record, decoded from the bytes at from
 * (the spool's); its bytes follow, for perfrec_rebase() */
struct perf_ent {
	uintptr_t from;
	struct perfrec pr;
};

/* Q_MARK: one probe hit, its arguments already read */
struct probe_hit {
	uint32_t site, cpu, pid, tid;
	uint32_t known;		/* bit i: vals[i] could be read */
	uint32_t pad;
	int64_t vals[USDT_MAX_ARGS];
};

struct cpu_ring {
	int cpu;
	int fd;			/* group leader */
	int cfds[STROBE_MAX_COUNTERS];
	uint64_t ids[STROBE_MAX_COUNTERS + 1];	/* leader, then counting events */
	struct perf_event_mmap_page *page;
	unsigned char *data;
	uint64_t size;		/* data bytes, power of two */
	struct merge_queue q;	/* its records waiting for the merge */
	unsigned char *tmp;	/* PERFREC_MAX_SIZE: a record that wraps the ring end */
	unsigned char *dtmp;	/* the same, for the drain thread */
	int swfd;		/* --attribution exact: its context-switches member, or -1 */
	uint64_t swid;		/* and that member's id */
	uint64_t sw_count;	/* its count in the ring's last sample or switch read */
	int *pfds;		/* per probe site: its uprobe event, or -1 */
	uint64_t *pids;		/* and that event's id */
	/* the group's time enabled and running at its last sample, and when
	 * that was (backend_drain's side) */
	uint64_t seen_enabled, seen_running, seen_ns;
	/* the samples (the sampling event's: not switch reads nor probe hits)
	 * the drain thread has put into the spool: written by it alone,
	 * read by backend_cpu_samples (atomic) */
	uint64_t taken;
};

/*
 * The users of processes whose mappings the sink reads a file for
 * (mmap_wants_owner: a JIT's perf map or jitdump), looked up by the drain
 * thread when it copies the MMAP2 record out of the ring, while the
 * process surely runs; ingest, seconds behind under load, would find it
 * gone or its pid reused.  A ring of the latest OWNERS_MAX, under a mutex
 * (the drain thread puts, backend_drain's side takes); one that is
 * overwritten before its record is delivered leaves ingest to look itself.
 */
#define OWNERS_MAX	1024

struct owner_seen {
	uint64_t time;		/* the record's */
	uint32_t pid, uid;
};

struct owners {
	pthread_mutex_t lock;
	struct owner_seen seen[OWNERS_MAX];
	uint64_t next;		/* entries put so far */
};

/* The open file of a probe site, as the uprobe PMU is given it. */
struct site_file {
	int fd;			/* cfg->site_fds[i]: open during backend_open only */
	char path[40];		/* "/proc/self/fd/N" */
	dev_t dev;
	ino_t ino;
};

struct backend {
	struct backend_config cfg;
	struct cpu_ring *rings;
	int nr;
	int *fds;
	int nr_fds;
	struct tsc_conv tsc;
	struct perfrec_format fmt;	/* the leader's records (all but uprobe samples) */
	struct merge_queue **queues;	/* every ring's queue, for the merge */
	int *queue_cpu;			/* and its CPU */
	int nr_queues;
	struct merge merge;
	struct sink sink;		/* backend_start's */
	/* USDT probe sites (own copy) and what their uprobes sample */
	struct usdt_site *sites;
	uint64_t *site_regs;	/* PERF_SAMPLE_REGS_USER mask per site */
	int *site_stack;	/* PERF_SAMPLE_STACK_USER per site */
	struct perfrec_format *site_fmt;	/* and the layout of its samples */
	struct site_file *site_files;	/* and the file its uprobes go on */
	uint32_t uprobe_type;	/* the uprobe PMU's perf_event_attr.type */
	/* BACKEND_DRIVER only: the device, one queue and LOST total per CPU */
	struct strobe_dev *dev;
	struct merge_queue *dq;
	uint64_t *dev_lost;
	struct strobe_cpu_stats *dev_stats;
	/* the drain thread (backend_start): it alone touches the rings'
	 * tails while it runs; quit is its only input, wake_fd its alarm */
	struct spool *spool;		/* not owned */
	pthread_t thread;
	int running;
	int quit;			/* atomic: make a last pass and return */
	int wake_fd;			/* eventfd: quit was set */
	int notify_fd;			/* eventfd: chunks were put (the caller's) */
	/* backend_drain's side */
	uint64_t pass_ns;		/* start of the last pass whose mark was taken */
	uint64_t enable_ns;		/* when backend_enable enabled the groups */
	uint64_t disable_ns;		/* and backend_disable disabled them */
	uint64_t bad_chunks;		/* chunks cut short by a malformed record */
	int cgroups;			/* samples carry PERF_SAMPLE_CGROUP, and
					 * PERF_RECORD_CGROUP is asked for */
	/* the leader's sample_type (less CGROUP once the kernel refused it),
	 * and with dwarf its user register mask */
	uint64_t sample_type;
	uint64_t regs_mask;
	uint16_t max_stack;		/* fp, dwarf: sample_max_stack */
	struct perfrec_format sw_fmt;	/* --attribution exact: its members' samples */
	struct owners owners;
	struct binhold *held;	/* the files of executable mappings drained */
};

/* backend_core.c: queue a decoded record, with its variable parts. */
void queue_record(struct merge_queue *q, const struct record *r);

/* backend_perf.c */
const char *perf_open_hint(int err);
/* What the leader samples (the call graph's part), before the rings. */
int perf_setup(struct backend *b, struct error *e);
unsigned perf_ring_pages_default(const struct backend_config *cfg, long pg);
int perf_ring_open(struct backend *b, struct cpu_ring *r, struct error *e);
void perf_ring_close(struct backend *b, struct cpu_ring *r);
void perf_tsc_setup(struct backend *b);
int perf_enable(struct backend *b, struct error *e);
/* After perf_enable: refuse a pinned group the PMU could not take. */
int perf_check_scheduled(struct backend *b, struct error *e);
/* After the sampling group failed on cpu: if cpu's PMU counts only part
 * of it (the sampler first, then the counting events in their order) as
 * a pinned group, found by trial (backend_fit.c), set e to the one line
 * naming how many fit and return -1; 0 if it counts all of it or none
 * (other pinned events hold the counters): the caller says why. */
int perf_group_too_big(const struct backend_config *cfg, int cpu, struct error *e);
void perf_disable(struct backend *b);
/* The drain thread's copy of ring r into the spool as source src:
 * 0 empty, 1 all copied, 2 some, -1 none (no room). */
int perf_ring_copy(struct backend *b, struct cpu_ring *r, uint32_t src, uint64_t now);
/* Decode and queue the records of a chunk of ring r (len bytes): returns
 * how many bytes were read, len unless a record was malformed. */
uint64_t perf_chunk_read(struct backend *b, struct cpu_ring *r, const unsigned char *data,
			 uint64_t len);
/* Decode and queue what ring r holds now, read in place (no drain thread). */
void perf_ring_read(struct backend *b, struct cpu_ring *r);
int perf_read_final(struct backend *b, struct error *e);

/* backend_sideband.c */
/* Decode a side-band or loss record (len bytes at p) into a Q_PERF of r's queue. */
void sideband_queue(struct backend *b, struct cpu_ring *r, const unsigned char *p, size_t len);
/* The drain thread: the MMAP2 record at ring offset off of r (h its
 * header), spooled already: hold its file, note its process's user, for
 * the mappings the sink wants them of. */
void sideband_note(struct backend *b, struct cpu_ring *r, uint64_t off,
		   const struct perf_event_header *h);
/* A Q_PERF entry of CPU cpu to the sink; late_ns: handed out that long
 * after a younger record (0: in order). */
int sideband_deliver(struct backend *b, int cpu, const struct merge_ent *q, uint64_t late_ns,
		     struct error *e);

/* backend_dev.c (BACKEND_DRIVER) */
int dev_open(struct backend *b, struct error *e);
/* The drain thread's copy of the driver's ring i, as source src. */
int dev_copy(struct backend *b, int i, uint32_t src, uint64_t now);
/* Decode and queue a chunk of the driver's ring i, or the ring in place. */
int dev_chunk_read(struct backend *b, int i, const void *data, size_t len, struct error *e);
int dev_read(struct backend *b, int i, struct error *e);
int dev_read_final(struct backend *b, struct error *e);
void dev_close(struct backend *b);

/* backend_usdt.c (cfg->sites) */
int probes_setup(struct backend *b, struct error *e);
int probes_open(struct backend *b, struct cpu_ring *r, struct error *e);
/* Once every uprobe is placed: on the files the notes came from still. */
int probes_check(struct backend *b, struct error *e);
int probes_enable(struct backend *b, struct error *e);
void probes_disable(struct backend *b);
void probes_close(struct backend *b, struct cpu_ring *r);
void probes_free(struct backend *b);
/* The probe site whose uprobe on r has this sample id, or -1. */
int probe_site(const struct backend *b, const struct cpu_ring *r, uint64_t id);
/* Decode a uprobe's sample (len bytes at p) into a Q_MARK of r's queue. */
void probe_queue(struct backend *b, struct cpu_ring *r, int site, const unsigned char *p,
		 size_t len);
int probe_deliver(struct backend *b, const struct merge_ent *q, struct error *e);

#endif
