/*
 * plotonsets.h - the change points 'strobe plot --onsets' draws: those
 * 'strobe onsets' finds with the same options (seriesonsets.h, on a
 * series of its own bucket), put on the plot's lines and y units for
 * gnuplot.h.
 */
#ifndef STROBE_PLOTONSETS_H
#define STROBE_PLOTONSETS_H

#include "gnuplot.h"
#include "onsets.h"
#include "series.h"

/*
 * The change points of each line of os (the series 'strobe onsets'
 * segments, of the same request as plot but maybe of another bucket;
 * metric: its lines are a metric's), for the line of plot of the same
 * title (a line of os with none is left out): *out (malloc'ed, NULL when
 * none) and *n.  Each one's time is os's bucket's start, its segments
 * reach to the change before and after on its line (else the range's
 * ends), its levels are os's per bucket, an event's scaled to plot's
 * bucket (times plot's bucket / os's), a metric's as they are.  0, or -1
 * with e set (onsets_find()'s error).
 */
int plotonsets_find(const struct series *plot, const struct series *os, int metric,
		    const struct onsets_opts *o, struct gnuplot_onset **out, size_t *n,
		    struct error *e);

#endif
