/*
 * sink.h - where a capture backend delivers a session's records: a struct
 * of callbacks, as perf's struct perf_tool, so that capture never calls
 * the layer that stores what it captured.
 *
 * The backend decodes each record once, where it checks it (record.h for
 * the driver's, perfrec.h for perf's), and calls the sink with the
 * decoded record, in time order: samples (and the driver's LOST, the perf
 * backend's UNSCHED) as one struct record, the side-band as the calls
 * below, USDT probe hits as markers.  Whatever a callback is given points
 * into the backend's buffers: valid during the call only.
 *
 * Every callback that returns int returns 0, or -1 with e set, which ends
 * the delivery with that error.  strobed's sink is ingest
 * (lib/ingest/ingestsink.h); tests may give their own.
 */
#ifndef STROBE_SINK_H
#define STROBE_SINK_H

#include <stddef.h>
#include <stdint.h>
#include "record.h"
#include "util.h"

/* An executable mapping's record (PERF_RECORD_MMAP2), with what the
 * drain thread saw of it while the process surely ran. */
struct sink_mmap {
	uint32_t pid;
	uint64_t start, len, pgoff;
	uint32_t prot;			/* PROT_* */
	const uint8_t *build_id;	/* NULL if the record had none */
	size_t build_id_len;
	uint32_t maj, min;		/* when no build-id */
	uint64_t ino, ino_generation;
	const char *filename;
	uint64_t time_ns;
	/* for mmap_wants_owner's mappings: the owner of /proc/PID when the
	 * record was copied out of the kernel (owner_known), a look taken
	 * while the process surely ran, where ingest's own look (seconds
	 * behind) may find it exited or its pid reused */
	int owner_known;
	uint32_t owner_uid;
	/* for mmap_wants_file's mappings: a handle of the mapped file taken
	 * then (held_fd when held; held_over: none, a limit was reached;
	 * binhold.h).  The backend closes held_fd after the call. */
	int held, held_over;
	int held_fd;
};

/* A USDT probe hit (or another marker). */
struct sink_marker {
	uint64_t time_ns;	/* CLOCK_MONOTONIC */
	int cpu;
	int64_t pid, tid;
	const char *kind;	/* "usdt" */
	const char *name;	/* PROVIDER:NAME */
	const char *args;	/* NULL: none */
};

struct sink {
	void *ctx;		/* every callback's first argument */
	/* STROBE_REC_SAMPLE, STROBE_REC_LOST (the driver's ring), or
	 * STROBE_REC_UNSCHED; a sample's cgroup is 0 when unknown */
	int (*record)(void *ctx, const struct record *r, struct error *e);
	int (*comm)(void *ctx, uint32_t pid, uint32_t tid, const char *comm, int exec,
		    uint64_t time_ns, struct error *e);
	int (*fork)(void *ctx, uint32_t ppid, uint32_t pid, uint32_t tid, uint64_t time_ns,
		    struct error *e);
	int (*exit)(void *ctx, uint32_t pid, uint32_t tid, uint64_t time_ns, struct error *e);
	int (*mmap)(void *ctx, const struct sink_mmap *m, struct error *e);
	/* a cgroup's path (PERF_RECORD_CGROUP) */
	int (*cgroup)(void *ctx, uint64_t id, const char *path, struct error *e);
	/* lost records of one kind ("samples": dropped before the ring;
	 * "ring": the driver's, counted in its statistics at stop) */
	int (*lost)(void *ctx, uint32_t cpu, uint64_t time_ns, uint64_t count,
		    const char *kind, struct error *e);
	/* lost records of every kind, side-band included (PERF_RECORD_LOST) */
	int (*lost_records)(void *ctx, uint32_t cpu, uint64_t time_ns, uint64_t count,
			    struct error *e);
	int (*throttle)(void *ctx, uint32_t cpu, uint64_t time_ns, struct error *e);
	/* the next call's record (of process pid, 0: a sample or no process)
	 * comes late_ns after a younger one, out of time order */
	int (*late)(void *ctx, uint32_t pid, uint64_t time_ns, uint64_t late_ns,
		    struct error *e);
	/* at stop: a CPU's group counted running_ns of the enabled_ns that
	 * ended at time_ns (error: never scheduled) */
	int (*unscheduled)(void *ctx, uint32_t cpu, uint64_t time_ns, uint64_t enabled_ns,
			   uint64_t running_ns, int error, struct error *e);
	int (*marker)(void *ctx, const struct sink_marker *m, struct error *e);
	/* at stop: a CPU's final running counter totals */
	void (*cpu_final)(void *ctx, uint32_t cpu, const uint64_t *values, int nr);
	/* Whether the sink wants, for such a mapping, the owner of its
	 * process (sink_mmap.owner_known) or a handle of its file (held):
	 * pure functions, called by the drain thread too. */
	int (*mmap_wants_owner)(uint32_t pid, uint32_t prot, const char *filename);
	int (*mmap_wants_file)(uint32_t pid, uint32_t prot, const char *filename);
};

#endif
