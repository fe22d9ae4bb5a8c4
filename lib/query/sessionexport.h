/*
 * sessionexport.h - the samples of a local session as CSV or a Chrome
 * trace: the local side of source_export() (source.h, whose options and
 * contract it follows), called through it.
 *
 * CSV: one row per sample in time order, exportcsv.h's columns (one per
 * counting event, named as given with -e), then with process_start a
 * column process_start_ns (procset.h: the start of the process its pid
 * was by then; empty when unknown), then with cgroup_column a column
 * cgroup (cgset.h).  A cgroup filter keeps the samples of the processes
 * of that cgroup (or subtree), in both formats.  Chrome trace
 * (chrometrace.h): counters per bucket_ns, markers and lost records of
 * the time range (session-wide: pid and comm do not select them).
 */
#ifndef STROBE_SESSIONEXPORT_H
#define STROBE_SESSIONEXPORT_H

#include "db.h"
#include "source.h"

/* Export session (0: the latest) of db as o says (o->open() is called
 * once there are samples to write).  0, or -1 with e set. */
int sessionexport_run(struct db *db, int64_t session, const struct source_export_opts *o,
		      struct source_export_stats *st, struct error *e);

#endif
