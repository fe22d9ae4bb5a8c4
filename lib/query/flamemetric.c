/*
 * flamemetric.c - a flame graph's frames coloured by a metric (see
 * flamemetric.h): the metric parsed and bound as plot's (series.h), its
 * value per frame from the tree's sums, the colour scale, the SVG legend
 * and the explorer's JSON.
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "expr.h"
#include "flamemetric.h"
#include "metrics.h"

int flame_metric_parse(struct flame_metric *m, const char *arg, const char *opt,
		       struct error *e)
{
	memset(m, 0, sizeof(*m));
	if (series_metric_parse_as(&m->req, arg, opt, &m->text, e) < 0)
		return -1;
	/* printable UTF-8 for every place they go (SVG, JSON, a terminal) */
	flame_sanitize(m->req.metric_src, m->name, sizeof(m->name));
	flame_sanitize(m->text ? m->text : arg, m->expr, sizeof(m->expr));
	m->unit = m->req.catalog ? m->req.catalog->unit : NULL;
	return 0;
}

int flame_metric_bind(struct flame_metric *m, const struct db_session *s, double seconds,
		      const char *opt, struct error *e)
{
	struct error be = { "" };
	int ret = series_metric_bind(s, &m->req, &be);

	m->seconds = seconds;
	if (ret < 0) {
		series_metric_said(s, ret, opt, be.msg, e);
		return -1;
	}
	return 0;
}

void flame_metric_values(struct flame_metric *m, const struct flame_tree *t)
{
	/* the timeline's layout (series_metric_bind): samples, the events,
	 * seconds */
	double vars[2 + STROBE_MAX_COUNTERS];

	free(m->v);
	m->nr_v = t->nr_nodes;
	m->v = xcalloc(m->nr_v ? m->nr_v : 1, sizeof(*m->v));
	for (size_t n = 0; n < t->nr_nodes; n++) {
		const uint64_t *sum = t->sums + n * (size_t)t->nsums;
		double v;

		if (!t->nsums) {
			m->v[n] = NAN;
			continue;
		}
		memset(vars, 0, sizeof(vars));
		for (int i = 0; i < t->nsums; i++)
			vars[i] = (double)sum[i];
		vars[t->nsums] = m->seconds;
		v = expr_eval(m->req.metric, vars);
		m->v[n] = isfinite(v) ? v : NAN;
	}
}

struct wv {
	double v, w;
};

static int wv_cmp(const void *a, const void *b)
{
	double x = ((const struct wv *)a)->v, y = ((const struct wv *)b)->v;

	return x < y ? -1 : x > y;
}

/* The smallest value whose cumulative weight reaches pct of the total. */
static double weighted_pct(const struct wv *s, size_t n, double total, double pct)
{
	double want = total * pct / 100.0, cum = 0;

	for (size_t i = 0; i < n; i++) {
		cum += s[i].w;
		if (cum >= want)
			return s[i].v;
	}
	return n ? s[n - 1].v : NAN;
}

void flame_metric_scale(struct flame_metric *m, const struct flame_tree *t, double px_per_unit,
			double min_px)
{
	struct wv *s = xmalloc((t->nr_nodes ? t->nr_nodes : 1) * sizeof(*s));
	size_t n = 0;
	double total = 0;

	m->nr_frames = m->nr_undefined = 0;
	m->lo = m->hi = m->min = m->max = NAN;
	for (size_t i = 0; i < t->nr_nodes && i < m->nr_v; i++) {
		const struct flame_node *nd = &t->nodes[i];

		if (!nd->value || nd->value * px_per_unit < min_px)
			continue;
		m->nr_frames++;
		if (isnan(m->v[i])) {
			m->nr_undefined++;
			continue;
		}
		s[n].v = m->v[i];
		s[n++].w = (double)nd->value;
		total += (double)nd->value;
	}
	if (n) {
		qsort(s, n, sizeof(*s), wv_cmp);
		m->min = s[0].v;
		m->max = s[n - 1].v;
		m->lo = weighted_pct(s, n, total, FLAME_METRIC_LO_PCT);
		m->hi = weighted_pct(s, n, total, FLAME_METRIC_HI_PCT);
		if (!(m->hi > m->lo)) {
			m->lo = m->min;
			m->hi = m->max;
		}
	}
	free(s);
}

/* The scale's colours at 0, 1/2 and 1: pale yellow, orange, red; every
 * channel falls as the value grows, so darker is higher. */
static const int stops[3][3] = { { 255, 245, 190 }, { 250, 160, 80 }, { 205, 30, 30 } };
#define UNDEF_RGB	"rgb(190,190,190)"

static void ramp(double x, char *buf, size_t len)
{
	int k = x < 0.5 ? 0 : 1;
	double f = x < 0.5 ? x * 2 : (x - 0.5) * 2;
	int c[3];

	for (int i = 0; i < 3; i++)
		c[i] = (int)lround(stops[k][i] + (stops[k + 1][i] - stops[k][i]) * f);
	snprintf(buf, len, "rgb(%d,%d,%d)", c[0], c[1], c[2]);
}

void flame_metric_colour(const struct flame_metric *m, uint32_t n, char *buf, size_t len)
{
	double v = n < m->nr_v ? m->v[n] : NAN, x;

	if (isnan(v) || isnan(m->lo)) {
		snprintf(buf, len, UNDEF_RGB);
		return;
	}
	if (!(m->hi > m->lo))
		x = 0.5;
	else
		x = v <= m->lo ? 0 : v >= m->hi ? 1 : (v - m->lo) / (m->hi - m->lo);
	ramp(x, buf, len);
}

char *flame_metric_format(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "undefined");
	else
		snprintf(buf, len, "%.6g", v);
	return buf;
}

#define SWATCHES	10
#define SWATCH_W	24

void flame_metric_legend_svg(const struct flame_metric *m, FILE *f, int width, int y)
{
	int bar = SWATCHES * SWATCH_W, x0 = (width - bar) / 2, ty = y + 14, by = y + 20;
	char a[64], b[64];

	fputs("<g id=\"legend\">\n", f);
	fprintf(f, "<text id=\"legend-title\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">colour: ",
		width / 2, ty);
	flame_xml_write(f, m->name);
	if (strcmp(m->name, m->expr)) {
		fputs(" = ", f);
		flame_xml_write(f, m->expr);
	}
	if (m->unit && *m->unit) {
		fputs(" (", f);
		flame_xml_write(f, m->unit);
		fputc(')', f);
	}
	fprintf(f, ", over the samples under each frame; frames' min %s, max %s; scale: "
		"width-weighted %dth to %dth percentile</text>\n",
		flame_metric_format(m->min, a, sizeof(a)), flame_metric_format(m->max, b, sizeof(b)),
		FLAME_METRIC_LO_PCT, FLAME_METRIC_HI_PCT);
	fprintf(f, "<text id=\"legend-lo\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%s%s</text>\n",
		x0 - 4, by + 11, m->lo > m->min ? "\xe2\x89\xa4 " : "",
		flame_metric_format(m->lo, a, sizeof(a)));
	for (int i = 0; i < SWATCHES; i++) {
		char c[48];

		ramp((i + 0.5) / SWATCHES, c, sizeof(c));
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"14\" fill=\"%s\"/>\n",
			x0 + i * SWATCH_W, by, SWATCH_W, c);
	}
	fprintf(f, "<text id=\"legend-hi\" x=\"%d\" y=\"%d\">%s%s</text>\n", x0 + bar + 4, by + 11,
		m->hi < m->max ? "\xe2\x89\xa5 " : "", flame_metric_format(m->hi, a, sizeof(a)));
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"14\" fill=\"" UNDEF_RGB "\"/>\n",
		x0 + bar + 110, by, SWATCH_W);
	fprintf(f, "<text id=\"legend-undef\" x=\"%d\" y=\"%d\">undefined (0/0): %zu of %zu "
		"frames</text>\n", x0 + bar + 114 + SWATCH_W, by + 11, m->nr_undefined,
		m->nr_frames);
	fputs("</g>\n", f);
}

static void json_num(FILE *f, double v)
{
	if (isnan(v))
		fputs("null", f);
	else
		fprintf(f, "%.17g", v);
}

int flame_metric_write_json(const struct flame_metric *m, const struct flame_tree *t, FILE *f,
			    struct error *e)
{
	int32_t *idx = xmalloc((t->nr_nodes ? t->nr_nodes : 1) * sizeof(*idx));
	char *folded = NULL;
	size_t flen = 0, k = 0;
	FILE *ff = open_memstream(&folded, &flen);
	int ret = 0;

	if (!ff) {
		free(idx);
		return error_set(e, "out of memory");
	}
	if (flame_write_folded(t, ff, e) < 0)
		ret = -1;
	if (fclose(ff) == EOF && !ret)
		ret = error_set(e, "writing the folded stacks failed");
	if (ret) {
		free(folded);
		free(idx);
		return -1;
	}
	fputs("{\"metric\":", f);
	json_write_string(f, m->name);
	fputs(",\"expr\":", f);
	json_write_string(f, m->expr);
	fputs(",\"unit\":", f);
	if (m->unit)
		json_write_string(f, m->unit);
	else
		fputs("null", f);
	fputs(",\"lo\":", f);
	json_num(f, m->lo);
	fputs(",\"hi\":", f);
	json_num(f, m->hi);
	fputs(",\"min\":", f);
	json_num(f, m->min);
	fputs(",\"max\":", f);
	json_num(f, m->max);
	fprintf(f, ",\"lo_pct\":%d,\"hi_pct\":%d,\"undefined\":\"" UNDEF_RGB "\",\"ramp\":[",
		FLAME_METRIC_LO_PCT, FLAME_METRIC_HI_PCT);
	for (int i = 0; i < SWATCHES; i++) {
		char c[48];

		ramp((i + 0.5) / SWATCHES, c, sizeof(c));
		fprintf(f, "%s\"%s\"", i ? "," : "", c);
	}
	fputs("],\"nodes\":[", f);
	/* nodes are made after their parents (flame.c: node_child) */
	for (size_t i = 0; i < t->nr_nodes; i++) {
		const struct flame_node *nd = &t->nodes[i];
		char c[48];

		idx[i] = -1;
		if (!nd->value || (i && idx[nd->parent] < 0))
			continue;
		idx[i] = (int32_t)k;
		fprintf(f, "%s[%d,", k++ ? "," : "", i ? idx[nd->parent] : -1);
		json_write_string(f, t->names[nd->name]);
		fputc(',', f);
		json_num(f, i < m->nr_v ? m->v[i] : NAN);
		flame_metric_colour(m, (uint32_t)i, c, sizeof(c));
		fprintf(f, ",\"%s\"]", c);
	}
	fputs("],\"folded\":", f);
	json_write_string(f, folded ? folded : "");
	fputs("}\n", f);
	free(folded);
	free(idx);
	return 0;
}

void flame_metric_free(struct flame_metric *m)
{
	if (!m)
		return;
	expr_free(m->req.metric);
	free(m->text);
	free(m->v);
	m->req.metric = NULL;
	m->text = NULL;
	m->v = NULL;
}
