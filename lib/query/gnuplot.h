/*
 * gnuplot.h - the input gnuplot draws a plot's series from (series.h): a
 * data file (x, then one column per series) and a script that reads it,
 * with lost intervals shaded, the sampling groups' idle intervals hatched,
 * markers as labelled dashed lines (more than 16 in groups, "NAME A..B ×N",
 * so that labels never overlap), --expect's lines in red and --onsets'
 * change points in their lines' colours; see "Plots" in doc/DESIGN.md.
 *
 * Nothing from data is a command: every string that comes from data or
 * the user (titles, series and marker names, file names) goes into the
 * script through gnuplot_write_string() (lib/base/util.h), and every
 * terminal is noenhanced.  Running gnuplot is the caller's.
 */
#ifndef STROBE_GNUPLOT_H
#define STROBE_GNUPLOT_H

#include <stdint.h>
#include <stdio.h>
#include "series.h"

enum gnuplot_term { GNUPLOT_PNG, GNUPLOT_SVG, GNUPLOT_PDF, GNUPLOT_DUMB };

/* A red line of --expect: where an expectation of the probe begins
 * (lib/probe/probe_expect.h, probe_expect_onsets()). */
struct gnuplot_mark {
	int64_t time_ns;		/* absolute CLOCK_MONOTONIC */
	const char *label;
};

/* A change point of --onsets (plotonsets.h), drawn in its line's colour
 * (the line's gnuplot linetype): a dotted vertical line, an arrow from
 * the level before to the level after labelled with the shift ("+85%"),
 * and the two levels as short horizontal segments either side. */
struct gnuplot_onset {
	size_t line;			/* s->line[line] */
	int64_t time_ns;		/* absolute CLOCK_MONOTONIC: the first
					 * bucket of the new level */
	int64_t from_ns, to_ns;		/* the segments around it: the level
					 * before from from_ns, after to to_ns */
	double before, after;		/* the levels, in the plot's y units */
	double shift;			/* (after - before) / |before|; +-INFINITY
					 * when before is 0 */
};

struct gnuplot_opts {
	enum gnuplot_term term;		/* pngcairo, svg, pdfcairo or dumb */
	int width, height;		/* pixels (PDF: 1/100 in); DUMB: characters */
	int wall;			/* x: local wall-clock time, not seconds
					 * since the session start */
	const char *title;		/* NULL: the session and what is plotted */
	const char *fleet_what;		/* NULL or "": the session; else the
					 * sessions, "N sessions of M hosts" */
	int expect;			/* draw --expect: expect_on[0..nexpect) and
					 * expect_summary as a key entry */
	const struct gnuplot_mark *expect_on;
	size_t nexpect;
	const char *expect_summary;
	int onsets;			/* draw --onsets: onset[0..nonsets) and a
					 * key entry saying how they were found */
	const struct gnuplot_onset *onset;
	size_t nonsets;
	int64_t onsets_bucket_ns;	/* the bucket they were found at */
};

/*
 * The script that draws s (computed for r) from data file dat (as
 * gnuplot_write_data() writes it, a name relative to where gnuplot runs)
 * into out.  0, or -1 on a write error.
 */
int gnuplot_write_script(FILE *f, const struct series *s, const struct series_req *r,
			 const struct gnuplot_opts *o, const char *dat, const char *out);

/* The data: a row per bucket start, x then each series' value (NaN for
 * none), and a last row at the end of the last bucket repeating its values
 * so that steps draw it.  0, or -1 on a write error. */
int gnuplot_write_data(FILE *f, const struct series *s, int wall);

#endif
