/*
 * report_markers.h - "strobe report --markers": a session's markers as a
 * table (report_markers.c).
 */
#ifndef STROBE_REPORT_MARKERS_H
#define STROBE_REPORT_MARKERS_H

#include <stdio.h>
#include "db.h"
#include "output.h"
#include "report.h"

/* Write the markers of session o->session (0: the latest) that pass o's
 * --pid, --comm, --from/--to and --limit, in time order. */
int report_markers(struct db *db, const struct report_opts *o, enum output_format fmt,
		   FILE *f, struct error *e);

#endif
