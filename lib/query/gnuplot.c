/*
 * gnuplot.c - a plot's gnuplot script and data file (see gnuplot.h): the
 * terminal, the title and subtitle, the axes, shaded lost and hatched
 * not-counting intervals, the markers (each its own line when few, else
 * in groups: one line and label per group of markers closer than a
 * label's width on the plot), --expect's lines and --onsets' change
 * points, then one step line per series and the key entries of the
 * shadings, --expect and --onsets.
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "metrics.h"
#include "gnuplot.h"

#define MAX_LABELS 100		/* marker groups at most, however wide the plot */
/* Up to this many markers each get their own line and label, as --expect
 * relates a probe's handful of sizes to them (t0631: 13 within 3 % of the
 * range); more are drawn in groups (the demo's 20 tlbwalk sizes, crowded
 * at the right edge, or 1,000 hits). */
#define MAX_OWN_MARKERS 16
#define GROUP_GAP_PX 14		/* between groups: a rotated 8-point label and
				 * a gap (pixels; PDF: 1/100 in) */
#define GROUP_GAP_CHARS 3	/* on a terminal */
#define DUMB_ROWS 4		/* a terminal's rows of labels */
#define MAX_SHADES 2000		/* lost spans drawn */

/* Local time of a CLOCK_MONOTONIC instant as seconds since the epoch with
 * the local UTC offset added (gnuplot formats times as UTC). */
static double wall_local(const struct series *s, int64_t mono_ns)
{
	int64_t wall = mono_ns + s->session.wall_offset_ns;
	time_t secs = (time_t)(wall / 1000000000);
	struct tm tm;

	localtime_r(&secs, &tm);
	return wall / 1e9 + (double)tm.tm_gmtoff;
}

/* x coordinate of an instant. */
static double xval(const struct series *s, int wall, int64_t mono_ns)
{
	if (wall)
		return wall_local(s, mono_ns);
	return (mono_ns - s->session.start_ns) / 1e9;
}

/* gnuplot rectangles over sp[0..n) in style (at most MAX_SHADES: every
 * per-th span then reaches to the end of the per-1 after it). */
static void shade_spans(const struct series *s, int wall, FILE *f,
			const struct timeline_span *sp, size_t n, const char *style)
{
	size_t per = n > MAX_SHADES ? (n + MAX_SHADES - 1) / MAX_SHADES : 1;

	for (size_t i = 0; i < n; i += per) {
		size_t last = MIN(i + per, n) - 1;

		fprintf(f, "set object rect from %.9f, graph 0 to %.9f, graph 1 behind "
			"%s noborder\n", xval(s, wall, sp[i].from_ns),
			xval(s, wall, sp[last].to_ns), style);
	}
}

static const char *ms_text(int64_t ns, char *buf, size_t len)
{
	if (ns >= 1000000000 && ns % 1000000000 == 0)
		snprintf(buf, len, "%lld s", (long long)(ns / 1000000000));
	else if (ns >= 1000000)
		snprintf(buf, len, "%.9g ms", ns / 1e6);
	else
		snprintf(buf, len, "%.9g us", ns / 1e3);
	return buf;
}

/* 1, 2 or 5 x 10^k at least x. */
static double nice_step(double x)
{
	double p = pow(10, floor(log10(x)));

	if (p >= x)
		return p;
	if (2 * p >= x)
		return 2 * p;
	if (5 * p >= x)
		return 5 * p;
	return 10 * p;
}

static int write_terminal(FILE *f, const struct gnuplot_opts *o)
{
	switch (o->term) {
	case GNUPLOT_PNG:
		fprintf(f, "set terminal pngcairo size %d,%d noenhanced font \"sans,10\"\n",
			o->width, o->height);
		return 0;
	case GNUPLOT_SVG:
		fprintf(f, "set terminal svg size %d,%d noenhanced font \"sans,10\" "
			"background rgb \"white\"\n", o->width, o->height);
		return 0;
	case GNUPLOT_PDF:
		fprintf(f, "set terminal pdfcairo size %.2fin,%.2fin noenhanced font \"sans,7\"\n",
			o->width / 100.0, o->height / 100.0);
		return 0;
	case GNUPLOT_DUMB:
		fprintf(f, "set terminal dumb size %d,%d noenhanced\n", o->width, o->height);
		return 0;
	}
	return -1;
}

/* The title: --title, or the session (or sessions) and what is plotted. */
static void title_text(const struct series *s, const struct series_req *r,
		       const struct gnuplot_opts *o, char *title, size_t len)
{
	const struct db_session *ss = &s->session;
	size_t n;

	if (o->title) {
		snprintf(title, len, "%s", o->title);
		return;
	}
	if (o->fleet_what && o->fleet_what[0]) {
		n = (size_t)snprintf(title, len, "strobe fleet, %s", o->fleet_what);
	} else {
		n = (size_t)snprintf(title, len, "strobe session %lld", (long long)ss->id);
		if (ss->name[0])
			n += (size_t)snprintf(title + n, len - MIN(n, len), " \"%s\"", ss->name);
	}
	/* then what is plotted */
	if (r->catalog) {
		char *expr = metric_expr_scaled(r->catalog);

		snprintf(title + MIN(n, len), len - MIN(n, len), ": %s = %s", r->catalog->name,
			 expr);
		free(expr);
	} else if (r->metric) {
		snprintf(title + MIN(n, len), len - MIN(n, len), ": %s", r->metric_src);
	} else {
		for (int e = 0; e < r->nevents && n < len; e++)
			n += (size_t)snprintf(title + n, len - n, "%s%s", e ? ", " : ": ",
					      r->events[e]);
	}
}

/* The subtitle: the bucket, the filters, the split, how markers are
 * grouped (gap_ns: markers closer than it drawn as one; 0: each drawn). */
static void subtitle_text(const struct series *s, const struct series_req *r,
			  int64_t gap_ns, size_t ngroups, char *sub, size_t len)
{
	const struct timeline *t = s->t;
	struct sbuf fb = { 0 };
	char filt[400], bk[32];
	size_t n;

	timeline_filters_text(&r->opts, 1, &fb);
	snprintf(filt, sizeof(filt), "%s", fb.n ? fb.s : "");
	free(fb.s);
	n = (size_t)snprintf(sub, len, "%s buckets", ms_text(t->bucket_ns, bk, sizeof(bk)));
	if (filt[0] && n < len)
		n += (size_t)snprintf(sub + n, len - n, "; %s", filt);
	if (r->opts.by != TL_BY_NONE && n < len)
		n += (size_t)snprintf(sub + n, len - n, "; top %d %s by %s, the rest as other",
				      r->opts.top, t->key_noun,
				      r->metric ? "samples" : r->nevents == 1 ? r->events[0] :
				      "each event");
	if (gap_ns > 0 && n < len)
		n += (size_t)snprintf(sub + n, len - n, "; %zu markers as %zu lines (those "
				      "within %.3g %s as one)", t->nmarkers, ngroups,
				      gap_ns >= 1000000000 ? gap_ns / 1e9 : gap_ns >= 1000000 ?
				      gap_ns / 1e6 : gap_ns / 1e3, gap_ns >= 1000000000 ? "s" :
				      gap_ns >= 1000000 ? "ms" : "us");
}

/* The x axis (seconds since the start, or wall-clock time) and y's label. */
static void write_axes(FILE *f, const struct series *s, const struct series_req *r,
		       const struct gnuplot_opts *o, double x0, double x1)
{
	const struct timeline *t = s->t;
	char bk[32];

	if (o->wall) {
		double span = x1 - x0, step = nice_step(span / 8);
		char dstr[64], xl[128];
		time_t secs = (time_t)((t->from_ns + s->session.wall_offset_ns) / 1000000000);
		struct tm tm;

		localtime_r(&secs, &tm);
		strftime(dstr, sizeof(dstr), "%Y-%m-%d, UTC%z", &tm);
		fprintf(f, "set xtics time %.9g\n", step);
		fprintf(f, "set format x \"%s\" timedate\n", step >= 1 ? "%H:%M:%S" :
			step >= 0.01 ? "%H:%M:%.2S" : "%H:%M:%.3S");
		fputs("set xlabel ", f);
		snprintf(xl, sizeof(xl), "local time (%s)", dstr);
		gnuplot_write_string(f, xl);
		fputc('\n', f);
	} else if (o->fleet_what && o->fleet_what[0]) {
		fputs("set xlabel \"seconds since the start of each session\"\n", f);
	} else {
		fprintf(f, "set xlabel \"seconds since the start of session %lld\"\n",
			(long long)s->session.id);
	}
	fputs("set ylabel ", f);
	if (r->catalog) {
		char yl[160];

		snprintf(yl, sizeof(yl), "%s (%s)", r->catalog->name, r->catalog->unit);
		gnuplot_write_string(f, yl);
	} else if (r->metric) {
		gnuplot_write_string(f, r->metric_src);
	} else {
		char yl[64];

		snprintf(yl, sizeof(yl), "per %s", ms_text(t->bucket_ns, bk, sizeof(bk)));
		gnuplot_write_string(f, yl);
	}
	fputc('\n', f);
	fprintf(f, "set xrange [%.9f:%.9f]\n", x0, x1);
	fputs(r->metric ? "set yrange [*:*]\n" : "set yrange [0:*]\n", f);
}

/* A marker's dashed line at x, up to top (graph 0 .. 1). */
static void marker_line(FILE *f, const struct gnuplot_opts *o, double x, double top)
{
	fprintf(f, "set arrow from %.9f, graph 0 to %.9f, graph %g nohead front %s\n",
		x, x, top, o->term == GNUPLOT_DUMB ? "" : "ls 100");
}

/* A marker's label at x: rotated along its line, or on a terminal
 * (no rotated text) across, on row 0 .. DUMB_ROWS - 1 from the top. */
static void marker_label(FILE *f, const struct gnuplot_opts *o, double x, const char *label,
			 int row)
{
	fputs("set label ", f);
	gnuplot_write_string(f, label);
	if (o->term == GNUPLOT_DUMB)
		fprintf(f, " at %.9f, graph %.2f left front offset character 2,0\n", x,
			0.97 - 0.05 * row);
	else
		fprintf(f, " at %.9f, graph 0.98 rotate by 90 right front offset "
			"character -0.4,0 textcolor rgb \"#2060c0\" font \",8\"\n", x);
}

/* "NAME ARG0": a marker's own label (a USDT hit's first argument). */
static void marker_text(const struct timeline_marker *m, char *label, size_t len)
{
	size_t n = strcspn(m->args, ",");

	snprintf(label, len, "%s%s%.*s", m->name, n ? " " : "", (int)n, m->args);
}

/*
 * Few markers (MAX_OWN_MARKERS at most): dashed vertical lines with their
 * names, each its own (t0631 finds a marker's label at its line).
 */
static void write_markers(FILE *f, const struct series *s, const struct gnuplot_opts *o)
{
	const struct timeline *t = s->t;

	for (size_t i = 0; i < t->nmarkers; i++) {
		double x = xval(s, o->wall, t->markers[i].time_ns);
		char label[300];

		marker_line(f, o, x, 1);
		marker_text(&t->markers[i], label, sizeof(label));
		marker_label(f, o, x, label, 0);
	}
}

/* The width of the plot area in the terminal's units (pixels, 1/100 in,
 * characters): the output's less a generous estimate of gnuplot's
 * margins (the y axis' tics and label, the right border), so that groups
 * are, if anything, farther apart than the gap. */
static double plot_width(const struct gnuplot_opts *o)
{
	if (o->term == GNUPLOT_DUMB)
		return o->width > 24 ? o->width - 14 : 10;
	return o->width > 170 ? o->width - 120 : 50;
}

static int marker_time_cmp(const void *a, const void *b)
{
	const struct timeline_marker *x = a, *y = b;

	return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

/* The x distance under which markers are drawn as one: the gap in the
 * plot's units, and never more groups than MAX_LABELS. */
static double group_gap(const struct gnuplot_opts *o, double x0, double x1)
{
	double span = x1 > x0 ? x1 - x0 : 1e-9;
	double gap = (o->term == GNUPLOT_DUMB ? GROUP_GAP_CHARS : GROUP_GAP_PX) * span /
		     plot_width(o);

	return gap > span / MAX_LABELS ? gap : span / MAX_LABELS;
}

/* The label of the group m[0..n): its own when one; "NAME ×n" when all
 * have one name, "NAME A..B ×n" when all have a first argument too (the
 * first's and the last's); else "n markers". */
static void group_text(const struct timeline_marker *m, size_t n, char *label, size_t len)
{
	size_t i = 1, a0 = strcspn(m[0].args, ","), a1 = strcspn(m[n - 1].args, ",");
	int args = a0 > 0;

	if (n == 1) {
		marker_text(m, label, len);
		return;
	}
	for (; i < n && !strcmp(m[i].name, m[0].name); i++)
		args = args && m[i].args[0] && m[i].args[0] != ',';
	if (i < n)
		snprintf(label, len, "%zu markers", n);
	else if (args)
		snprintf(label, len, "%s %.*s..%.*s \xc3\x97%zu", m[0].name, (int)a0, m[0].args,
			 (int)a1, m[n - 1].args, n);
	else
		snprintf(label, len, "%s \xc3\x97%zu", m[0].name, n);
}

/* Characters of UTF-8 s (a terminal's columns, near enough). */
static size_t text_cols(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/*
 * Many markers: sorted by time, those within gap (group_gap) of a
 * group's first drawn as one dashed line at that first, labelled with the
 * name and the count (group_text).  Groups' lines are at least gap apart,
 * so rotated labels never overlap; on a terminal a label goes on the
 * first of DUMB_ROWS rows where it overlaps none, or is left out.
 */
static void write_marker_groups(FILE *f, const struct series *s, const struct gnuplot_opts *o,
				const struct timeline_marker *m, size_t nm, double gap,
				double x0, double x1)
{
	double cols[DUMB_ROWS], per_col = plot_width(o) / (x1 > x0 ? x1 - x0 : 1e-9);

	for (int r = 0; r < DUMB_ROWS; r++)
		cols[r] = -1e300;
	for (size_t i = 0, n; i < nm; i += n) {
		double x = xval(s, o->wall, m[i].time_ns), col = (x - x0) * per_col + 2;
		char label[300];
		int row = 0;

		for (n = 1; i + n < nm && xval(s, o->wall, m[i + n].time_ns) - x < gap; n++)
			;
		group_text(&m[i], n, label, sizeof(label));
		/* on a terminal the lines stop below the rows of labels, which
		 * they would cross */
		marker_line(f, o, x, o->term == GNUPLOT_DUMB ? 0.95 - 0.05 * DUMB_ROWS : 1);
		if (o->term == GNUPLOT_DUMB) {
			while (row < DUMB_ROWS && cols[row] > col)
				row++;
			if (row == DUMB_ROWS)
				continue;
			cols[row] = col + text_cols(label) + 1;
		}
		marker_label(f, o, x, label, row);
	}
}

/* The number of groups write_marker_groups draws. */
static size_t marker_groups(const struct series *s, const struct gnuplot_opts *o,
			    const struct timeline_marker *m, size_t nm, double gap)
{
	size_t groups = 0;

	for (size_t i = 0, n; i < nm; i += n, groups++)
		for (n = 1; i + n < nm && xval(s, o->wall, m[i + n].time_ns) -
		     xval(s, o->wall, m[i].time_ns) < gap; n++)
			;
	return groups;
}

/*
 * --expect: a solid red vertical line with its label at each expected
 * onset (after the markers, so it is drawn over their dashed lines); the
 * probe's summary is a key entry (write_keys), below the plot where it
 * hides nothing.
 */
static void write_expect(FILE *f, const struct series *s, const struct gnuplot_opts *o)
{
	int dumb = o->term == GNUPLOT_DUMB;

	if (!dumb)
		fputs("set style line 101 lc rgb \"#c02020\" dt 1 lw 2\n", f);
	for (size_t i = 0; i < o->nexpect; i++) {
		double x = xval(s, o->wall, o->expect_on[i].time_ns);

		fprintf(f, "set arrow from %.9f, graph 0 to %.9f, graph 1 nohead front %s\n",
			x, x, dumb ? "" : "ls 101");
		fputs("set label ", f);
		gnuplot_write_string(f, o->expect_on[i].label);
		if (dumb)
			fprintf(f, " at %.9f, graph 0.5 left front offset character 1,0\n", x);
		else
			fprintf(f, " at %.9f, graph 0.5 rotate by 90 center front offset "
				"character 1.2,0 textcolor rgb \"#c02020\"\n", x);
	}
}

/* An onset's label: its shift in percent ("+85%", "-40%"), or "from 0"
 * when the level before was 0. */
static void onset_text(const struct gnuplot_onset *c, char *buf, size_t len)
{
	if (isfinite(c->shift))
		snprintf(buf, len, "%+.0f%%", c->shift * 100);
	else
		snprintf(buf, len, "from 0");
}

/*
 * --onsets: per change point, in its line's colour (linetype line + 1,
 * as the plot command gives the lines), a dotted line over the plot's
 * height, the levels before and after as short segments (at most a
 * twentieth of the range each, within the segments either side), an
 * arrow from one to the other, and the shift by its head.  A comment
 * before each gives its exact time (for tests; numbers only).
 */
static void write_onsets(FILE *f, const struct series *s, const struct gnuplot_opts *o,
			 double x0, double x1)
{
	int dumb = o->term == GNUPLOT_DUMB;
	double w = (x1 - x0) / 20;

	for (size_t i = 0; i < o->nonsets; i++) {
		const struct gnuplot_onset *c = &o->onset[i];
		double x = xval(s, o->wall, c->time_ns);
		double a = MAX(xval(s, o->wall, c->from_ns), x - w);
		double b = MIN(xval(s, o->wall, c->to_ns), x + w);
		int lt = (int)c->line + 1;
		char label[32];

		fprintf(f, "# onset line %zu time_ns %lld before %.10g after %.10g\n", c->line,
			(long long)c->time_ns, c->before, c->after);
		if (!dumb)
			fprintf(f, "set arrow from %.9f, graph 0 to %.9f, graph 1 nohead back "
				"lt %d dt 3 lw 1\n", x, x, lt);
		fprintf(f, "set arrow from %.9f, first %.10g to %.9f, first %.10g nohead front "
			"lt %d lw 2.5\n", a, c->before, x, c->before, lt);
		fprintf(f, "set arrow from %.9f, first %.10g to %.9f, first %.10g nohead front "
			"lt %d lw 2.5\n", x, c->after, b, c->after, lt);
		if (c->after != c->before)
			fprintf(f, "set arrow from %.9f, first %.10g to %.9f, first %.10g head "
				"filled front lt %d lw 1.5\n", x, c->before, x, c->after, lt);
		onset_text(c, label, sizeof(label));
		fputs("set label ", f);
		gnuplot_write_string(f, label);
		fprintf(f, " at %.9f, first %.10g left front offset character 0.6,%s "
			"textcolor lt %d%s\n", x, c->after, c->after >= c->before ? "0.7" : "-0.7",
			lt, dumb ? "" : " font \",9\"");
	}
}

/* The plot command: a step line per series, then the key entries of the
 * lost and not-counting shadings and of --expect. */
static void write_plot(FILE *f, const struct series *s, const struct gnuplot_opts *o,
		       const char *dat)
{
	const struct timeline *t = s->t;

	fputs("plot ", f);
	for (size_t i = 0; i < s->n; i++) {
		fprintf(f, "%s", i ? ", \\\n     " : "");
		gnuplot_write_string(f, i ? "" : dat);
		fprintf(f, " using 1:%zu with steps lw 1.5 title ", i + 2);
		gnuplot_write_string(f, s->line[i].title);
	}
	if (t->nlost) {
		char lt[128];

		if (t->lost_total && t->throttles)
			snprintf(lt, sizeof(lt), "samples lost (%llu), sampling throttled (%llux)",
				 (unsigned long long)t->lost_total, (unsigned long long)t->throttles);
		else if (t->lost_total)
			snprintf(lt, sizeof(lt), "samples lost (%llu)",
				 (unsigned long long)t->lost_total);
		else
			snprintf(lt, sizeof(lt), "sampling throttled (%llux)",
				 (unsigned long long)t->throttles);
		fputs(", \\\n     keyentry with boxes fc rgb \"#f4c7c3\" fs solid 0.6 title ", f);
		gnuplot_write_string(f, lt);
	}
	if (t->nunsched) {
		char ut[128];

		snprintf(ut, sizeof(ut), "sampling group not counting (%.3f s)",
			 t->unsched_ns / 1e9);
		fputs(", \\\n     keyentry with boxes fc rgb \"#b0b0b0\" fs pattern 4 title ", f);
		gnuplot_write_string(f, ut);
	}
	if (o->expect) {
		fprintf(f, ", \\\n     keyentry with lines %s title ",
			o->term == GNUPLOT_DUMB ? "" : "ls 101");
		gnuplot_write_string(f, o->expect_summary);
	}
	if (o->onsets) {
		char ot[200], bk[32];

		snprintf(ot, sizeof(ot), "%zu onset%s (strobe onsets at %s buckets): the shift, "
			 "the levels before and after", o->nonsets, o->nonsets == 1 ? "" : "s",
			 ms_text(o->onsets_bucket_ns, bk, sizeof(bk)));
		fputs(", \\\n     keyentry with vectors lt black title ", f);
		gnuplot_write_string(f, ot);
	}
	fputc('\n', f);
}

int gnuplot_write_script(FILE *f, const struct series *s, const struct series_req *r,
			 const struct gnuplot_opts *o, const char *dat, const char *out)
{
	const struct timeline *t = s->t;
	double x0 = xval(s, o->wall, t->from_ns);
	double x1 = xval(s, o->wall, timeline_bucket_from(t, t->nbuckets));
	struct timeline_marker *sorted = NULL;
	double gap = 0;
	size_t ngroups = 0;
	char title[1200], sub[600];

	if (write_terminal(f, o) < 0)
		return -1;
	fputs("set output ", f);
	gnuplot_write_string(f, out);
	fputc('\n', f);

	/* title: what, which session; then the bucket and filters */
	if (t->nmarkers > MAX_OWN_MARKERS) {
		sorted = xmalloc(t->nmarkers * sizeof(*sorted));
		memcpy(sorted, t->markers, t->nmarkers * sizeof(*sorted));
		qsort(sorted, t->nmarkers, sizeof(*sorted), marker_time_cmp);
		gap = group_gap(o, x0, x1);
		ngroups = marker_groups(s, o, sorted, t->nmarkers, gap);
	}
	title_text(s, r, o, title, sizeof(title));
	subtitle_text(s, r, sorted ? MAX((int64_t)(gap * 1e9), 1) : 0, ngroups, sub,
		      sizeof(sub));
	fputs("set title ", f);
	gnuplot_write_string(f, title);
	fputs(" . \"\\n\" . ", f);
	gnuplot_write_string(f, sub);
	fputc('\n', f);

	write_axes(f, s, r, o, x0, x1);
	fputs("set grid\nset key below Left reverse\nset border 3\nset tics nomirror\n", f);
	if (o->term != GNUPLOT_DUMB)
		fputs("set style line 100 lc rgb \"#2060c0\" dt 2 lw 1\n", f);

	/* lost intervals shaded, sampling groups not counting hatched, behind
	 * everything */
	shade_spans(s, o->wall, f, t->lost, t->nlost, "fc rgb \"#f4c7c3\" fs solid 0.6");
	shade_spans(s, o->wall, f, t->unsched, t->nunsched, "fc rgb \"#b0b0b0\" fs pattern 4");
	if (sorted)
		write_marker_groups(f, s, o, sorted, t->nmarkers, gap, x0, x1);
	else
		write_markers(f, s, o);
	free(sorted);
	if (o->expect)
		write_expect(f, s, o);
	if (o->onsets)
		write_onsets(f, s, o, x0, x1);
	write_plot(f, s, o, dat);
	return ferror(f) ? -1 : 0;
}

int gnuplot_write_data(FILE *f, const struct series *s, int wall)
{
	const struct timeline *t = s->t;

	for (size_t b = 0; b <= t->nbuckets; b++) {
		size_t vb = b < t->nbuckets ? b : t->nbuckets - 1;

		fprintf(f, "%.9f", xval(s, wall, timeline_bucket_from(t, b)));
		for (size_t i = 0; i < s->n; i++) {
			double v = s->line[i].v[vb];

			if (isnan(v))
				fputs(" NaN", f);
			else
				fprintf(f, " %.10g", v);
		}
		fputc('\n', f);
	}
	return fflush(f) == EOF || ferror(f) ? -1 : 0;
}
