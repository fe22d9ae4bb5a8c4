/*
 * procscan.h - the processes already running when a session starts: their
 * names and executable mappings, read from /proc and fed to ingest as if
 * they had been side-band records at the session's start.
 */
#ifndef STROBE_PROCSCAN_H
#define STROBE_PROCSCAN_H

#include <stdint.h>
#include "ingest.h"

/*
 * The processes running now, each by pid and start time (field 22 of
 * /proc/PID/stat): taken when the session starts, before it answers, so
 * that a process started afterwards (the command 'strobe record' runs) is
 * left to its own side-band records and not also made up at the start.
 * Cheap: a directory listing and one small read per process.
 */
struct procscan_list {
	uint32_t *pid;
	uint64_t *start;
	size_t nr;
};
void procscan_snapshot(struct procscan_list *l);
void procscan_list_free(struct procscan_list *l);

/* Read the processes of l that still are what they were (same start
 * time), later, from the session's ingest thread.  Returns the number of
 * processes scanned, or -1 (ingest failed). */
int procscan_all(struct ingest *in, const struct procscan_list *l, uint64_t time_ns,
		 struct error *e);

#endif
