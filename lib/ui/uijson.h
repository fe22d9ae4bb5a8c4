/*
 * uijson.h - JSON of strobe ui's /api/series (uijson.c).
 */
#ifndef STROBE_UIJSON_H
#define STROBE_UIJSON_H

#include <stdio.h>

struct series;

/* s as {session, from_ns, to_ns, bucket_ns, times, series: [{title,
 * values}], lost, throttled, markers}: times since the session's start,
 * a value that is not finite as null, every name escaped for JSON. */
void uijson_series(FILE *f, const struct series *s);

#endif
