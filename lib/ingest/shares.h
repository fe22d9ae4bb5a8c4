/*
 * shares.h - each user's share of a session's ingest tables.
 *
 * A session remembers at most so many command names, binaries, cgroups
 * and call stacks (ingest_limits, INGEST_CGROUPS_MAX).  First come, first
 * served, one user's 65,536 renames (prctl(PR_SET_NAME)), paths to one
 * file or delegated cgroups filled a table for everyone, and every later
 * process's name became "[too many names]" (doc/SECURITY.md, R1).  So an
 * entry is charged to a user when it is added, and each user but root has
 * at most a share of each table (SHARES_DIV of its limit); root's
 * processes and files (the system's) may use the whole table.  An entry
 * whose owner is not known (the process is gone) is charged to one
 * "unknown" owner, which has a share like a user.
 *
 * Who is charged: for a name, a binary and a stack the real uid of the
 * process it came from (proc_owner below: /proc/PID/status, read once a
 * process; not the owner of /proc/PID, which a process that makes itself
 * not dumpable hands to root); for a cgroup the owner of its directory
 * (whom it was delegated to).  A pid reused between the record and the
 * lookup charges the new process's user: this is accounting, not access
 * control.
 *
 * Refusals are counted per owner (at most SHARES_OWNERS_MAX, the rest as
 * one) for the stop's log line.  Not thread-safe (ingest's thread).
 */
#ifndef STROBE_SHARES_H
#define STROBE_SHARES_H

#include <stddef.h>
#include <stdint.h>

#define SHARES_DIV		4
#define SHARES_OWNERS_MAX	256
#define SHARES_UNKNOWN		UINT32_MAX	/* the owner of what has none */

enum shares_table { SHARES_COMMS, SHARES_BINARIES, SHARES_CGROUPS, SHARES_STACKS,
		    SHARES_TABLES };

struct shares;

struct shares *shares_new(void);
void shares_free(struct shares *s);
/* The table's whole size (the limit ingest applies to all). */
void shares_set_limit(struct shares *s, enum shares_table t, uint64_t limit);

/*
 * One more entry of table t for uid: 1 (charged), or 0 when uid is not
 * root and its share is spent (the refusal counted for uid).  The caller
 * checks the table's whole limit itself.
 */
int shares_take(struct shares *s, enum shares_table t, uint32_t uid);
/* Refusals in all, and a line naming whose ("names: uid 1000 refused 12;
 * stacks: ..."), most refused first in each table; "" if none. */
uint64_t shares_refused(const struct shares *s);
void shares_refusals(const struct shares *s, char *buf, size_t len);

/* The real uid of process pid now: 0 and *uid, or -1 (gone, unreadable). */
int proc_owner(uint32_t pid, uint32_t *uid);

#endif
