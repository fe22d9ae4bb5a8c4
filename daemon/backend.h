/*
 * backend.h - a capture backend: it opens the counters of a session on
 * every online CPU, exposes pollable fds, and on each drain delivers the
 * session's records to a sink (sink.h) in time order, each decoded once:
 * samples as struct record, side-band as the sink's comm/fork/exit/mmap
 * calls, and USDT probe hits as its markers.
 *
 * It captures with perf_event_open(2) alone (BACKEND_PERF), or with the
 * strobe driver's /dev/strobe for the samples and perf dummy events for
 * the side-band (BACKEND_DRIVER).  backend_core.h says which file does
 * what: backend_core.c (the drain, spool, merge and delivery), and
 * backend_perf.c, backend_sideband.c, backend_dev.c, backend_usdt.c.
 */
#ifndef STROBE_BACKEND_H
#define STROBE_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include "events.h"
#include "sink.h"
#include "tsc.h"
#include "usdt.h"

enum backend_kind {
	BACKEND_PERF = 0,
	BACKEND_DRIVER = 1,
};

struct backend_config {
	enum backend_kind kind;
	const char *device;			/* BACKEND_DRIVER: NULL = /dev/strobe */
	struct event_desc sampler;		/* the sampling (group leader) event */
	uint64_t freq;				/* Hz, or 0 */
	uint64_t period;			/* events per sample, or 0 */
	struct event_desc events[STROBE_MAX_COUNTERS];	/* counting events */
	int nr_events;
	unsigned buffer_pages;			/* per-CPU ring, power of two */
	/* USDT probe sites, each a uprobe on every CPU writing into that
	 * CPU's ring; their hits are delivered as markers (sink.marker) */
	const struct usdt_site *sites;		/* copied by backend_open */
	/* per site, the open file its notes were read from: its uprobes are
	 * placed on that file (through /proc/self/fd/N), never on sites[i].path
	 * looked up again; open until backend_open returns */
	const int *site_fds;
	int nr_sites;
	/* nice value of the drain thread: strobed's own, whatever the
	 * (lower) priority of the thread that ingests and starts it */
	int drain_nice;
	int drain_rt;		/* SCHED_FIFO 1 for the drain thread (else drain_nice) */
	/*
	 * Call stacks (--call-graph, callgraph.h): 0 none; 1 fp: samples
	 * carry the kernel's callchain, kernel and user (frame pointers);
	 * 2 dwarf: the kernel part of the callchain, and the user registers
	 * (callgraph_regs_mask()) with stack_bytes of user stack.  The driver
	 * does fp only (STROBE_CONFIG_CALLCHAIN).  keep_stacks (dwarf): the
	 * raw copies are kept after unwinding (ingest's business, in the
	 * root-only DB.stacks: rawstk.h); root's sessions only.
	 */
	int call_graph;		/* 0 none, 1 fp, 2 dwarf: enum callgraph_mode */
	uint32_t stack_bytes;
	int keep_stacks;
	/*
	 * --attribution exact (perf backend only): the group is read at every
	 * context switch too, by a context-switches member of the sampling
	 * group with period 1 whose samples (group reads, in the thread
	 * switched out) are delivered as records flagged STROBE_SAMPLE_SWITCH.
	 */
	int exact;
};

struct backend;

/* Open everything, disabled. Errors name the event and the CPU. */
struct backend *backend_open(const struct backend_config *cfg, struct error *e);

/* "perf" or "driver", as stored in sessions.backend. */
/* 1: samples carry their task's cgroup (PERF_SAMPLE_CGROUP, Linux 5.7,
 * perf backend); 0: ingest reads /proc/PID/cgroup (the driver's records
 * have no cgroup, older kernels). */
int backend_has_cgroups(const struct backend *b);
const char *backend_name(const struct backend *b);

/* Driver only, after backend_read_final: samples (incl. dropped), of them
 * dropped (the driver's STATS lost), and the overflow handler's average and
 * longest time.  -1 for perf. */
int backend_handler_stats(const struct backend *b, uint64_t *samples, uint64_t *dropped,
			  uint64_t *avg_ns, uint64_t *max_ns);

int backend_enable(struct backend *b, struct error *e);
int backend_disable(struct backend *b);
/* fds to poll for readable data (one per CPU, and the driver's). */
size_t backend_fds(struct backend *b, const int **fds);
/* Number of CPUs the session covers. */
int backend_nr_cpus(const struct backend *b);
/* The number of its i-th CPU (0 <= i < backend_nr_cpus), in ascending order. */
int backend_cpu(const struct backend *b, int i);
/* The samples of its i-th CPU the drain thread has taken from the rings
 * into the spool so far (the sampling event's: not --attribution exact's
 * switch reads nor --marker probe hits), which ingest, at its lower
 * priority, may store seconds later: what a status shows as sampled now.
 * Callable from any thread while the drain thread runs. */
uint64_t backend_cpu_samples(const struct backend *b, int i);
/* The TSC conversion the backend uses for its records. */
const struct tsc_conv *backend_tsc(const struct backend *b);

/*
 * Start the drain thread (after backend_enable): it copies what the rings
 * hold into sp, raw, and writes to the eventfd notify_fd when it did.  It
 * stops in backend_disable, after a last pass.  sp must outlive b's
 * thread; notify_fd stays the caller's.  k (copied) is where
 * backend_drain and backend_read_final deliver; the drain thread calls its
 * mmap_wants_owner and mmap_wants_file.
 */
struct spool;
int backend_start(struct backend *b, struct spool *sp, int notify_fd, const struct sink *k,
		  struct error *e);

/*
 * Deliver to the sink, in time order, the records older than the merge
 * horizon (the start of the drain thread's last complete pass, less the
 * time a record may take to reach its ring: a record written late on one
 * CPU must not be overtaken).  With a backlog it returns after about
 * 50 ms with notify_fd set again, so that the caller's thread can let
 * others take the session in between.  final (after backend_disable)
 * delivers everything: the spool, then what the rings still hold.
 * Without a drain thread (any more) the rings are read in place.
 */
int backend_drain(struct backend *b, int final, struct error *e);

/*
 * The time merge's records handed out of order so far: delivered after a
 * younger one because they reached their ring more than the merge horizon
 * late; and the largest such lateness, ns.
 */
void backend_merge_stats(const struct backend *b, uint64_t *late, uint64_t *late_max_ns);

/* The files of executable mappings held from drain to ingest (binhold.h):
 * how many, and the records a limit left without one. */
struct binhold_stats;
void backend_held_stats(struct backend *b, struct binhold_stats *st);

/* After disable: the final running totals of the counting events per CPU
 * to the sink (and the driver's drops its rings could not report). */
int backend_read_final(struct backend *b, struct error *e);

void backend_close(struct backend *b);

#endif
