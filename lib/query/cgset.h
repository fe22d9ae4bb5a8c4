/*
 * cgset.h - the cgroups of a session's processes in queries (schema 13):
 * --cgroup PATH filters and --by cgroup groups by processes.cgroup_id's
 * path, the cgroup of the process's latest sample.
 *
 * A path is a cgroup's from the cgroup v2 root ("/a/b").  A process whose
 * cgroup is not known (no cgroup recorded: a session before schema 13 or
 * without cgroup v2, a process strobed had no row for, its /proc/PID/cgroup
 * unreadable) is "[unknown]"; a cgroup id with no path stored is
 * "[cgroup ID]".  Pid 0 (the idle tasks, which have no processes row) is
 * in the root cgroup "/", where the kernel keeps them, when the session
 * recorded cgroups.
 */
#ifndef STROBE_CGSET_H
#define STROBE_CGSET_H

#include <stddef.h>
#include <stdint.h>
#include "db.h"

#define CGSET_UNKNOWN "[unknown]"

struct cgset {
	struct cgset_ent { int64_t pid, start_ns; size_t name; } *v;	/* sorted */
	size_t n;
	char **names;			/* names[0] is CGSET_UNKNOWN */
	size_t nnames;
	size_t idle;			/* pid 0's name: "/", or 0 (unknown) */
	int64_t moved;			/* processes whose samples changed cgroup */
	char source[16];		/* sessions.cgroup_source, "" if NULL */
};

int cgset_load(struct db *db, int64_t session, struct cgset *cs, struct error *e);
void cgset_free(struct cgset *cs);

/* The index in names of process (pid, start_ns)'s cgroup; start_ns 0
 * (unknown): pid's when it was one process.  0 (unknown) if none. */
size_t cgset_lookup(const struct cgset *cs, int64_t pid, int64_t start_ns);

/*
 * Does a cgroup path match a --cgroup filter?  A filter ending in '/'
 * matches that cgroup and every one below it ("/a/" matches "/a", "/a/b",
 * not "/ab"; "/" matches every known cgroup), any other filter the path
 * itself.  "[unknown]" and "[cgroup ID]" never match.
 */
int cgset_match(const char *filter, const char *path);

/* A --cgroup argument: 0 if usable, else -1 (it must start with '/'). */
int cgset_check_filter(const char *filter);

#endif
