/*
 * cgroups.h - cgroup v2 ids and paths, as the kernel names them: a
 * cgroup's id is its kernfs node id (what PERF_SAMPLE_CGROUP and
 * PERF_RECORD_CGROUP carry, and the file handle of its directory under
 * the cgroup2 mount), its path is from the cgroup root ("/", "/a/b").
 *
 * The processes' cgroup names are hostile (a delegated user names its
 * cgroups): every path is bounded to CGROUP_PATH_MAX, directories are
 * walked by handle (openat, O_NOFOLLOW, O_DIRECTORY) to CGROUP_DEPTH_MAX
 * levels, and nothing is passed to a shell.  No global state; errors are
 * returned, never printed.
 */
#ifndef STROBE_CGROUPS_H
#define STROBE_CGROUPS_H

#include <stddef.h>
#include <stdint.h>
#include "util.h"

#define CGROUP_ROOT		"/sys/fs/cgroup"
#define CGROUP_PATH_MAX		4096
#define CGROUP_DEPTH_MAX	64

/*
 * Where the cgroup v2 hierarchy is mounted: CGROUP_ROOT, else (the
 * "hybrid" layout of systemd) CGROUP_ROOT "/unified", else the first
 * cgroup2 mount of /proc/self/mounts.  0 with out set, -1 if none.
 */
int cgroups_find_root(char *out, size_t len);

/* Called for each cgroup: nonzero stops the walk (returned by it). */
typedef int (*cgroups_fn)(void *ctx, uint64_t id, const char *path);

/*
 * Every cgroup under the cgroup2 mount root (root itself as "/"), at most
 * max of them: returns how many were seen (past max: counted, not
 * reported, in *over), -1 with e set when root is not a cgroup2 mount, or
 * the callback's nonzero value.  Directories that vanish while walked are
 * skipped.
 */
long cgroups_scan(const char *root, size_t max, cgroups_fn fn, void *ctx, uint64_t *over,
		  struct error *e);

/* The id of the cgroup at path (from the root) under root, 0 if none. */
uint64_t cgroups_id(const char *root, const char *path);

/*
 * The cgroup v2 path of a /proc/PID/cgroup text (len bytes: its "0::PATH"
 * line) into out (outlen bytes).  Returns 0, or -1 when it has none or the
 */
int cgroups_parse_proc(const char *buf, size_t len, char *out, size_t outlen);

/* The cgroup v2 path of process pid, read from /proc/PID/cgroup; -1 if
 * the process is gone or has none. */
int cgroups_of_pid(uint32_t pid, char *out, size_t outlen);

#endif
