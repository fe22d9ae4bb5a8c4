/*
 * plotfile.h - the files of 'strobe plot': the series drawn by gnuplot (a
 * PNG, SVG, PDF, or text for the terminal) or written as CSV, made in a
 * private temporary directory and moved into place only when they are
 * whole, so that a failed plot never leaves a file behind (gnuplot.h
 * writes gnuplot's data and script, seriescsv.h the CSV).
 *
 * gnuplot is the program named by env STROBE_GNUPLOT (default gnuplot),
 * run in the directory with its stdin and stdout on /dev/null; the first
 * line of its stderr that says what went wrong makes the error.
 */
#ifndef STROBE_PLOTFILE_H
#define STROBE_PLOTFILE_H

#include "gnuplot.h"
#include "series.h"

enum plotfile_fmt {
	PLOTFILE_NONE, PLOTFILE_PNG, PLOTFILE_SVG, PLOTFILE_PDF, PLOTFILE_CSV, PLOTFILE_TERM,
};

struct plotfile {
	char tmpdir[64];		/* "": none */
};

/* The format a file name's extension names (.png, .svg, .pdf, .csv, in
 * any case); PLOTFILE_NONE for another. */
enum plotfile_fmt plotfile_format(const char *path);

/* Make the private directory in /tmp.  0, or -1 with e set. */
int plotfile_begin(struct plotfile *pf, struct error *e);
/* Remove it and what was left in it. */
void plotfile_end(struct plotfile *pf);

/*
 * Draw s (computed for r) in format fmt (PNG, SVG, PDF or TERM) with o
 * (its term is fmt's): TERM's text to stdout, else the file at output.
 * 0, or -1 with e set (one line: gnuplot missing or failing, a file that
 * cannot be written).
 */
int plotfile_render(struct plotfile *pf, enum plotfile_fmt fmt, const struct series *s,
		    const struct series_req *r, const struct gnuplot_opts *o,
		    const char *output, struct error *e);

/* The CSV of s (seriescsv.h) at dst ("-": stdout), made as tmpname in the
 * directory first.  0, or -1 with e set. */
int plotfile_csv(struct plotfile *pf, const struct series *s, int wall, const char *tmpname,
		 const char *dst, struct error *e);

#endif
