/*
 * flamemetric.h - a flame graph's frames coloured by a metric: 'strobe
 * flamegraph --color-by EXPR' and the explorer's /api/flame?color_by=.
 *
 * The metric is what 'strobe plot --metric' takes (series.h:
 * series_metric_parse_as): a name of the metrics file (metrics.h, "IPC"),
 * else an expression (expr.h) over the session's event names, "samples"
 * (or the sampling event's name) and "seconds".  A frame's value is the
 * metric evaluated on the sums of the samples under it (the flame tree's
 * inclusive sums, flame.h: flame_tree_build_sums): its samples, each
 * counting event's increases, and as "seconds" the length of the range
 * the graph covers (the session, or --from/--to), as report -M's metrics
 * of a function are.  A frame where the metric is undefined (a division by
 * zero: no cycles under it for IPC) is NaN, drawn grey.
 *
 * The colour scale is sequential, pale yellow (low) through orange to red
 * (high), linear in the value between lo and hi: the 5th and 95th
 * percentiles of the frames' values, each frame weighted by its width (so
 * that a few narrow frames of a handful of samples cannot stretch the
 * scale the wide ones are read on); values beyond are drawn as the ends.
 * When those percentiles are equal the scale is the frames' min to max,
 * and when those are equal too every frame is the middle colour.
 */
#ifndef STROBE_FLAMEMETRIC_H
#define STROBE_FLAMEMETRIC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "db.h"
#include "flame.h"
#include "series.h"
#include "util.h"

#define FLAME_METRIC_LO_PCT	5	/* the scale's ends: weighted percentiles */
#define FLAME_METRIC_HI_PCT	95

struct flame_metric {
	struct series_req req;	/* req.metric: the parsed expression */
	char *text;		/* a catalogue metric's expression with its scale */
	char name[512];		/* "IPC", or the expression as given */
	char expr[512];		/* the expression evaluated ("instructions / cycles") */
	const char *unit;	/* a catalogue metric's unit, else NULL */
	double seconds;		/* "seconds": the length of the range covered */
	double *v;		/* per tree node: the value, NaN undefined */
	size_t nr_v;
	/* flame_metric_scale(): over the frames it was given */
	double lo, hi;		/* the colour scale's ends */
	double min, max;	/* the frames' smallest and largest value */
	size_t nr_frames, nr_undefined;
};

/*
 * Parse arg (a metrics file name or an expression) into m; opt names the
 * option in messages ("--color-by", "color_by").  0, or -1 with e saying
 * "bad --color-by 'ARG': column N: ...".
 */
int flame_metric_parse(struct flame_metric *m, const char *arg, const char *opt,
		       struct error *e);

/*
 * Bind m's names to session s's events; seconds: the range's length
 * (report.h: report_metric_seconds).  0, or -1 with e saying in one line
 * which name the session lacks and which events it has.
 */
int flame_metric_bind(struct flame_metric *m, const struct db_session *s, double seconds,
		      const char *opt, struct error *e);

/* Each node's value from t's sums (t built by flame_tree_build_sums()). */
void flame_metric_values(struct flame_metric *m, const struct flame_tree *t);

/*
 * The scale (lo, hi, min, max, nr_frames, nr_undefined) over t's frames
 * of non-zero width whose value * px_per_unit is at least min_px (the ones
 * an SVG draws; 1, 1: all), the root included.
 */
void flame_metric_scale(struct flame_metric *m, const struct flame_tree *t, double px_per_unit,
			double min_px);

/* The fill of node n, "rgb(R,G,B)", by the scale. */
void flame_metric_colour(const struct flame_metric *m, uint32_t n, char *buf, size_t len);

/* A value as the graph's titles and legend write it: "%.6g", "undefined". */
char *flame_metric_format(double v, char *buf, size_t len);

/* The SVG legend, LEGEND_H pixels from y, width wide (escaped here). */
#define FLAME_METRIC_LEGEND_H	36
void flame_metric_legend_svg(const struct flame_metric *m, FILE *f, int width, int y);

/*
 * For the explorer: a JSON object {"metric": name, "expr": expression,
 * "unit": unit or null, "lo", "hi", "min", "max" (null when no frame has
 * a value), "lo_pct", "hi_pct", "undefined": the colour of no value,
 * "ramp": the scale's colours from lo to hi (a legend's swatches),
 * "nodes": [[parent, "name", value, "rgb(R,G,B)"], ...], "folded": ...}
 * with the tree's nodes of non-zero width, parents first (parent an index
 * in nodes, -1 for the root "all"), value null when undefined, the colour
 * flame_metric_colour()'s (the page draws what the SVG would); "folded":
 * t's folded stacks (flame_write_folded), the reply without color_by.
 * The scale is the caller's flame_metric_scale().  0, or -1 with e set.
 */
int flame_metric_write_json(const struct flame_metric *m, const struct flame_tree *t, FILE *f,
			    struct error *e);

void flame_metric_free(struct flame_metric *m);

#endif
