/*
 * plotonsets.c - the change points of a plot's lines (see plotonsets.h).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "plotonsets.h"
#include "seriesonsets.h"

/* The line of s titled title, or s->n. */
static size_t line_titled(const struct series *s, const char *title)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->line[i].title, title))
			break;
	return i;
}

int plotonsets_find(const struct series *plot, const struct series *os, int metric,
		    const struct onsets_opts *o, struct gnuplot_onset **out, size_t *n,
		    struct error *e)
{
	const struct timeline *t = os->t;
	double scale = metric ? 1 : (double)plot->t->bucket_ns / (double)t->bucket_ns;
	struct gnuplot_onset *v = NULL;
	size_t nv = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < os->n; i++) {
		size_t line = line_titled(plot, os->line[i].title), nc = 0;
		struct onset *c = NULL;

		if (line == plot->n)
			continue;
		if (seriesonsets_find(os, i, metric, o, &c, &nc, e) < 0) {
			free(v);
			return -1;
		}
		if (nc)
			v = xrealloc(v, (nv + nc) * sizeof(*v));
		for (size_t k = 0; k < nc; k++) {
			struct gnuplot_onset *g = &v[nv++];

			g->line = line;
			g->time_ns = timeline_bucket_from(t, c[k].at);
			g->from_ns = k ? timeline_bucket_from(t, c[k - 1].at) : t->from_ns;
			g->to_ns = k + 1 < nc ? timeline_bucket_from(t, c[k + 1].at) :
				   timeline_bucket_from(t, t->nbuckets);
			g->before = c[k].before * scale;
			g->after = c[k].after * scale;
			g->shift = c[k].shift;
		}
		free(c);
	}
	*out = v;
	*n = nv;
	return 0;
}
