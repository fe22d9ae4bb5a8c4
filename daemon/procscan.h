/*
 * procscan.h - the processes already running when a session starts: their
 * names and executable mappings, read from /proc and fed to ingest as if
 * they had been side-band records at the session's start.
 */
#ifndef STROBE_PROCSCAN_H
#define STROBE_PROCSCAN_H

#include <stdint.h>
#include "ingest.h"

/* Returns the number of processes scanned, or -1 (ingest failed). */
int procscan_all(struct ingest *in, uint64_t time_ns, struct error *e);

#endif
