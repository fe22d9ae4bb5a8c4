/*
 * procset.h - process identity in queries: a pid can be several processes
 * in one session (the kernel reused it), told apart by their start
 * (processes.start_ns; schema 11 keys sample_agg and sample_time by it).
 *
 * A procset holds the (pid, start_ns) of a session's processes whose pid
 * was more than one process (or of one pid's processes).  Raw samples
 * carry no start: a sample of pid P at time t belongs to the process of P
 * started last at or before t, or to P's earliest when none was (the rule
 * ingest and crash recovery follow, lib/store/recover.c).
 *
 * Labels: "P@S" with S the process's start in seconds since the session
 * start, with 3 decimals (more when two of P's processes would print
 * alike); "P@?" for a start unknown (0: rows written before schema 11
 * that could not be matched, a pid strobed had no process for).
 */
#ifndef STROBE_PROCSET_H
#define STROBE_PROCSET_H

#include <stddef.h>
#include <stdint.h>
#include "db.h"

struct procset {
	struct procset_ent { int64_t pid, start_ns; } *v;	/* sorted */
	size_t n, cap;
	int64_t session_start_ns;
	int decimals;			/* of the labels' seconds: 3, 6 or 9 */
};

/* Load the processes of session s: those of pid (all of them, however
 * many), with PROCSET_REUSED those of every pid that was several
 * processes, with PROCSET_ALL every process. */
#define PROCSET_REUSED	(-1)
#define PROCSET_ALL	(-2)
int procset_load(struct db *db, const struct db_session *s, int64_t pid, struct procset *ps,
		 struct error *e);
void procset_free(struct procset *ps);
/* Add a process (start_ns 0: unknown) to a procset filled by its caller
 * (the fleet's processes), in (pid, start_ns) order as procset_load()'s. */
void procset_add(struct procset *ps, int64_t pid, int64_t start_ns);

/* How many processes pid was (0: none recorded, or not loaded). */
size_t procset_count(const struct procset *ps, int64_t pid);
/* The start of pid's process at time_ns (the rule above); 0 if none. */
int64_t procset_at(const struct procset *ps, int64_t pid, int64_t time_ns);
/* Is start_ns the start of one of pid's processes? */
int procset_has(const struct procset *ps, int64_t pid, int64_t start_ns);
/* "P@S" (or "P@?" for a start not among pid's) into buf. */
void procset_label(const struct procset *ps, int64_t pid, int64_t start_ns, char *buf,
		   size_t len);

/*
 * Parse a --pid argument: "P" (any process that had pid P) or "P@T", the
 * process that had pid P at T seconds since the session start (the label
 * of one selects it: a process started up to *slack_ns after T, half a
 * unit of T's last decimal, counts as started at T).  Returns 0, or -1 for
 * a malformed argument.  *at_ns is -1 without "@T"; *pid is at most
 * UINT32_MAX.
 */
int procset_parse_pid(const char *s, int64_t *pid, int64_t *at_ns, int64_t *slack_ns);

#endif
