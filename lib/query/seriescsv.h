/*
 * seriescsv.h - a plot's series (series.h) as CSV, what 'strobe plot -o
 * FILE.csv' and '--data' write: a header
 *   from_s,to_s,from_ns,to_ns[,wall],TITLE...
 * then a row per bucket: its start and end (cut at the window's end) in
 * seconds since the session start and in CLOCK_MONOTONIC ns, with wall its
 * start as local ISO-8601 time with milliseconds and the UTC offset
 * (2026-11-23T10:15:02.250+0100), then each series' value (%.10g; empty
 * for NaN).  Titles are CSV text fields (the formula guard of
 * csv_write_field(), lib/base/util.h).
 */
#ifndef STROBE_SERIESCSV_H
#define STROBE_SERIESCSV_H

#include <stdio.h>
#include "series.h"

/* Write s to f; 0, or -1 on a write error (errno set). */
int seriescsv_write(FILE *f, const struct series *s, int wall);

#endif
