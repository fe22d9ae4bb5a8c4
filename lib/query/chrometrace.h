/*
 * chrometrace.h - the Chrome trace (Trace Event Format, JSON, for the
 * Perfetto UI and chrome://tracing) of 'strobe export --format
 * chrome-trace', written from rows its caller reads: the local export
 * (tools/cmd_export.c, from SQLite) and the fleet's (lib/fleet/
 * fleetexport.c, from ClickHouse) feed it alike, so that one host's
 * session is the same bytes from either.
 *
 * {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}},
 * ts in microseconds since the session's start:
 *  - per counting event and CPU, a counter track "<event> cpu<N>" ("ph":
 *    "C", on the pseudo-process CHROMETRACE_COUNTERS_PID "CPU counters")
 *    whose value is the event's increase in each bucket of that CPU's
 *    samples; it drops to 0 over buckets with no samples;
 *  - markers as instant events: global ("s": "g"), USDT probe hits on
 *    their thread ("s": "t") with the probe's arguments;
 *  - lost and throttle records as global instant events;
 *  - optionally each sample as an instant event on its thread named by its
 *    symbol;
 *  - process_name / thread_name metadata for every pid and tid shown;
 *    a pid or tid of no Linux process (-1) is CHROMETRACE_NOTASK_PID,
 *    "no task".
 *
 * The calls come in that order: chrometrace_begin(), the samples (in time
 * order per session, the sessions one after the other), the markers, the
 * lost records, chrometrace_names(), chrometrace_end().  Each call names
 * the session of its row (struct chrometrace_session): one session's
 * pids are as recorded; several sessions each get a pid_base (their
 * processes and their counters' pseudo-process are pid_base + pid) and a
 * label prefixed to their process names, so that each is its own group
 * of processes (doc/FLEET.md, "Fleet export").
 */
#ifndef STROBE_CHROMETRACE_H
#define STROBE_CHROMETRACE_H

#include <stdint.h>
#include "db.h"
#include "exportcsv.h"
#include "otable.h"

/* The pseudo-process of the counter tracks and the session-wide instant
 * events: PID_MAX_LIMIT (1 << 22), which no Linux pid reaches. */
#define CHROMETRACE_COUNTERS_PID 4194304
/* The pseudo-process of samples and probe hits whose pid (or tid) is no
 * Linux pid: -1, when the kernel had no task to name (one being reaped).
 * Inside the span below, so that pid_base + pid names its session. */
#define CHROMETRACE_NOTASK_PID	 (CHROMETRACE_COUNTERS_PID + 1)
/* The pid_base step of several sessions: above every pid and the above. */
#define CHROMETRACE_PID_SPAN	 (2 * (int64_t)CHROMETRACE_COUNTERS_PID)

struct chrometrace_session {
	int64_t start_ns;		/* CLOCK_MONOTONIC of ts 0 */
	int64_t pid_base;		/* 0 for one session */
	const char *label;		/* NULL, or prefixed to process names */
	int nev;			/* its counting events, */
	const char *const *events;	/* their names, in c[] order */
};

struct chrometrace_sample {
	int64_t time_ns;
	uint64_t cpu;
	uint32_t pid, tid;
	const char *comm;		/* NULL or "": none */
	const char *symbol, *binary;	/* for samples as events only */
	const uint64_t *c;		/* nev counter increases */
};

struct chrometrace_marker {
	int64_t time_ns;
	int has_cpu, has_pid, has_tid;
	int64_t cpu, pid, tid;
	const char *kind, *name;	/* kind NULL: "" */
	const char *args;		/* NULL: none */
};

struct chrometrace_thread {
	const struct chrometrace_session *s;
	int64_t pid;			/* pid_base + pid */
	uint32_t tid;
	char *comm;			/* latest seen, NULL: none */
};

struct chrometrace_track;

struct chrometrace {
	struct ob *ob;
	int64_t bucket_ns;
	int samples;			/* each sample an event */
	int first;			/* no trace event written yet */
	uint64_t rows;			/* samples given */
	const struct chrometrace_session *cur;	/* of the tracks */
	struct chrometrace_track *tracks;
	size_t ntracks;
	struct chrometrace_thread *th;	/* threads seen, */
	size_t nth, cap;
	struct otable idx;		/* (pid, tid) -> index in th */
};

/* Start the trace into ob: counters summed per bucket_ns, with samples
 * each sample an event. */
void chrometrace_begin(struct chrometrace *ct, struct ob *ob, int64_t bucket_ns, int samples);
void chrometrace_sample(struct chrometrace *ct, const struct chrometrace_session *s,
			const struct chrometrace_sample *smp);
/* After the last sample: the counter tracks' last points. */
void chrometrace_samples_end(struct chrometrace *ct);
void chrometrace_marker(struct chrometrace *ct, const struct chrometrace_session *s,
			const struct chrometrace_marker *m);
void chrometrace_lost(struct chrometrace *ct, const struct chrometrace_session *s,
		      int64_t time_ns, int64_t cpu, int64_t count, const char *kind);

/*
 * The metadata: "CPU counters" of each of the n sessions, then the
 * process_name and thread_name of every thread seen.  A process is named
 * *name of proc_name(ctx, s, pid, &name, e) (its latest name in the
 * session; NULL: none, then after its main thread, else any of its
 * threads).  0, or -1 when proc_name returned it (with e set).
 */
int chrometrace_names(struct chrometrace *ct, const struct chrometrace_session *ss, size_t n,
		      int (*proc_name)(void *ctx, const struct chrometrace_session *s,
				       uint32_t pid, const char **name, struct error *e),
		      void *ctx, struct error *e);

/* What otherData tells of the export. */
struct chrometrace_info {
	const char *filters;		/* " pid=P comm=C from=Ts to=Ts" or "" */
	size_t n;			/* sessions (hostname: the host), */
	const struct db_session *const *s;	/* the i-th of pid_base i * SPAN */
};

/* "\n]" and otherData, the end of the trace: one session's fields, or of
 * several a list "sessions" of them with their pid_base. */
void chrometrace_end(struct chrometrace *ct, const struct chrometrace_info *in);
void chrometrace_free(struct chrometrace *ct);

/* The " pid=P comm=C from=Ts to=Ts" of otherData.filters into buf. */
void chrometrace_filters(char *buf, size_t len, int64_t pid, const char *comm, int has_from,
			 int64_t from_ns, int has_to, int64_t to_ns);

#endif
