/*
 * uijson.c - the one reply of strobe ui's API that is not a table
 * (uijson.h): a time series with its lost and throttled spans and its
 * markers, as JSON, every time since the session's start.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include "output.h"
#include "series.h"
#include "timeline.h"
#include "uijson.h"

/* Spans as [{from_ns, to_ns, count}], times since the session start. */
static void spans_json(FILE *f, const struct timeline_span *sp, size_t n, int64_t start)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s{\"from_ns\":%" PRId64 ",\"to_ns\":%" PRId64 ",\"count\":%" PRIu64 "}",
			i ? "," : "", sp[i].from_ns - start, sp[i].to_ns - start, sp[i].count);
	fputc(']', f);
}

void uijson_series(FILE *f, const struct series *s)
{
	const struct timeline *t = s->t;
	int64_t start = t->session.start_ns;

	fprintf(f, "{\"session\":%" PRId64 ",\"from_ns\":%" PRId64 ",\"to_ns\":%" PRId64
		",\"bucket_ns\":%" PRId64 ",\"times\":[", t->session.id, t->from_ns - start,
		t->to_ns - start, t->bucket_ns);
	for (size_t b = 0; b < t->nbuckets; b++)
		fprintf(f, "%s%" PRId64, b ? "," : "", timeline_bucket_from(t, b) - start);
	fputs("],\"series\":[", f);
	for (size_t i = 0; i < s->n; i++) {
		fputs(i ? ",{\"title\":" : "{\"title\":", f);
		json_write_string(f, s->line[i].title);
		fputs(",\"values\":[", f);
		for (size_t b = 0; b < t->nbuckets; b++) {
			double v = s->line[i].v[b];

			if (b)
				fputc(',', f);
			if (isfinite(v))
				fprintf(f, "%.10g", v);
			else
				fputs("null", f);
		}
		fputs("]}", f);
	}
	fputs("],\"lost\":", f);
	spans_json(f, t->lost_samples, t->nlost_samples, start);
	fputs(",\"throttled\":", f);
	spans_json(f, t->throttled, t->nthrottled, start);
	fputs(",\"markers\":[", f);
	for (size_t i = 0; i < t->nmarkers; i++) {
		fprintf(f, "%s{\"time_ns\":%" PRId64 ",\"name\":", i ? "," : "",
			t->markers[i].time_ns - start);
		json_write_string(f, t->markers[i].name);
		fputc('}', f);
	}
	fputs("]}\n", f);
}
