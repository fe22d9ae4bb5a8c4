/*
 * seriescsv.c - a plot's series as CSV (see seriescsv.h).
 */
#include "config.h"
#include <math.h>
#include <time.h>
#include "seriescsv.h"

/* A bucket's start (CLOCK_MONOTONIC) as the wall column: local time. */
static void write_wall(FILE *f, const struct series *s, int64_t from)
{
	int64_t w = from + s->session.wall_offset_ns;
	time_t secs = (time_t)(w / 1000000000);
	struct tm tm;
	char buf[64], tz[16];

	localtime_r(&secs, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(tz, sizeof(tz), "%z", &tm);
	fprintf(f, ",%s.%03d%s", buf, (int)(w % 1000000000 / 1000000), tz);
}

int seriescsv_write(FILE *f, const struct series *s, int wall)
{
	const struct timeline *t = s->t;
	int64_t start = s->session.start_ns;

	fputs("from_s,to_s,from_ns,to_ns", f);
	if (wall)
		fputs(",wall", f);
	for (size_t i = 0; i < s->n; i++) {
		fputc(',', f);
		csv_write_field(f, s->line[i].title, CSV_TEXT);
	}
	fputc('\n', f);
	for (size_t b = 0; b < t->nbuckets; b++) {
		int64_t from = timeline_bucket_from(t, b), to = timeline_bucket_to(t, b);

		fprintf(f, "%.9f,%.9f,%lld,%lld", (from - start) / 1e9, (to - start) / 1e9,
			(long long)from, (long long)to);
		if (wall)
			write_wall(f, s, from);
		for (size_t i = 0; i < s->n; i++) {
			double v = s->line[i].v[b];

			if (isnan(v))
				fputc(',', f);
			else
				fprintf(f, ",%.10g", v);
		}
		fputc('\n', f);
	}
	return fflush(f) == EOF || ferror(f) ? -1 : 0;
}
