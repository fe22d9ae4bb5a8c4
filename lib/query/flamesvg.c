/*
 * flamesvg.c - a flame tree (flame.h) as an interactive SVG flame graph.
 *
 * The SVG carries no data in its script: every name is XML-escaped text
 * in the document (a <title> per frame), and the script reads the names
 * back from the DOM, so that no name can end the script or a JavaScript
 * string.  Widths are laid out here; the script only rescales them when
 * zooming and colours the frames a search matches.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "flame.h"
#include "flamemetric.h"

#define FRAME_H		16	/* pixels per level */
#define FONT_SIZE	12
#define XPAD		10
#define TOP_H		60	/* title, subtitle, buttons */
#define BOTTOM_H	30	/* details line */
/* Narrower frames are not drawn: a box under one pixel shows as no box
 * and cannot be pointed at, yet would make the image as tall as the
 * deepest single sample (the root pushed below the first screen).  The
 * image says how many were left out; export --format folded has them. */
#define MIN_W		1.0
#define NOTE_H		16	/* the line saying what was left out */

/* ---- SVG ---- */

void flame_xml_write(FILE *f, const char *s)
{
	size_t len = strlen(s) + 1;
	char *buf = xmalloc(len);

	flame_sanitize_text(s, buf, len);
	for (const char *p = buf; *p; p++) {
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default: fputc(*p, f);
		}
	}
	free(buf);
}

/* The colour's hash starts from the seed flame graphs have always used
 * (FNV's offset basis less its last digit), so a name keeps its colour
 * across versions of strobe. */
static uint32_t name_hash32(const char *s)
{
	uint64_t h = hash_string(1469598103934665603ULL, s);

	return (uint32_t)(h ^ h >> 32);
}

/* FlameGraph's warm palette, the same colour for the same name. */
static void node_colour(const struct flame_tree *t, const struct flame_node *nd,
			double max_delta, char *buf, size_t len)
{
	const char *name = t->names[nd->name];
	uint32_t h = name_hash32(name);
	double v1 = (h & 0xff) / 255.0, v2 = (h >> 8 & 0xff) / 255.0;
	size_t nl = strlen(name);

	if (t->diff) {
		double a = t->nodes[0].value ? (double)nd->value / t->nodes[0].value : 0;
		double b = t->base_total ? (double)nd->base / t->base_total : 0;
		double r = max_delta > 0 ? (a - b) / max_delta : 0;
		int c = (int)(255 - 200 * (r < 0 ? -r : r));

		if (r > 0)
			snprintf(buf, len, "rgb(255,%d,%d)", c, c);
		else
			snprintf(buf, len, "rgb(%d,%d,255)", c, c);
		return;
	}
	if (nd->depth <= 1)		/* all, and the commands */
		snprintf(buf, len, "rgb(%d,%d,%d)", 190 + (int)(30 * v1), 190 + (int)(30 * v1),
			 200 + (int)(30 * v2));
	else if (nl > 4 && !strcmp(name + nl - 4, "_[k]"))
		snprintf(buf, len, "rgb(%d,%d,%d)", 230 + (int)(25 * v1), 130 + (int)(60 * v2),
			 30 + (int)(30 * v1));
	else if (!strncmp(name, "[unknown]", 9))
		snprintf(buf, len, "rgb(%d,%d,%d)", 170 + (int)(30 * v1), 170 + (int)(30 * v1),
			 170 + (int)(30 * v1));
	else
		snprintf(buf, len, "rgb(%d,%d,%d)", 205 + (int)(50 * v1), (int)(230 * v2),
			 (int)(55 * v1));
}

static const char svg_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"\"use strict\";\n"
	"var frames = [], zoomed = null, searching = false, W, XP;\n"
	"function $(id) { return document.getElementById(id); }\n"
	"function nameOf(fr) {\n"
	"  var t = fr.g.getElementsByTagName('title')[0].textContent.split('\\n')[0];\n"
	"  var i = t.lastIndexOf(' (');\n"
	"  return i < 0 ? t : t.substring(0, i);\n"
	"}\n"
	"function label(fr, w) {\n"
	"  var cw = " "7.1" ", n = Math.floor((w - 6) / cw), s = fr.name;\n"
	"  if (n < 3) return '';\n"
	"  return s.length <= n ? s : s.substring(0, n - 2) + '..';\n"
	"}\n"
	"function place(fr, x, w) {\n"
	"  fr.rect.setAttribute('x', x.toFixed(1));\n"
	"  fr.rect.setAttribute('width', w.toFixed(1));\n"
	"  fr.text.setAttribute('x', (x + 3).toFixed(1));\n"
	"  fr.text.textContent = label(fr, w);\n"
	"}\n"
	"function zoom(fr) {\n"
	"  var s = (W - 2 * XP) / fr.w;\n"
	"  zoomed = fr;\n"
	"  $('unzoom').style.opacity = 1;\n"
	"  frames.forEach(function (o) {\n"
	"    var g = o.g;\n"
	"    if (o.y > fr.y && o.x <= fr.x + 1e-6 && o.x + o.w >= fr.x + fr.w - 1e-6) {\n"
	"      g.style.display = ''; g.style.opacity = 0.6; place(o, XP, W - 2 * XP);\n"
	"    } else if (o.y <= fr.y && o.x >= fr.x - 1e-6 && o.x + o.w <= fr.x + fr.w + 1e-6) {\n"
	"      g.style.display = ''; g.style.opacity = 1;\n"
	"      place(o, XP + (o.x - fr.x) * s, o.w * s);\n"
	"    } else {\n"
	"      g.style.display = 'none';\n"
	"    }\n"
	"  });\n"
	"}\n"
	"function unzoom() {\n"
	"  zoomed = null;\n"
	"  $('unzoom').style.opacity = 0;\n"
	"  frames.forEach(function (o) {\n"
	"    o.g.style.display = ''; o.g.style.opacity = 1; place(o, o.x, o.w);\n"
	"  });\n"
	"}\n"
	"function unsearch() {\n"
	"  searching = false;\n"
	"  frames.forEach(function (o) { o.rect.setAttribute('fill', o.fill); });\n"
	"  $('matched').textContent = '';\n"
	"  $('search').textContent = 'Search';\n"
	"}\n"
	"function search() {\n"
	"  if (searching) { unsearch(); return; }\n"
	"  var term = prompt('Search for (a regular expression):', '');\n"
	"  if (term === null || term === '') return;\n"
	"  var re;\n"
	"  try { re = new RegExp(term); } catch (e) { alert('bad expression: ' + e.message); return; }\n"
	"  var spans = [];\n"
	"  frames.forEach(function (o) {\n"
	"    if (o.y < frames[0].y && re.test(o.name)) {\n"
	"      o.rect.setAttribute('fill', 'rgb(230,0,230)');\n"
	"      spans.push([o.x, o.x + o.w]);\n"
	"    }\n"
	"  });\n"
	"  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
	"  var covered = 0, end = -1;\n"
	"  spans.forEach(function (s) {\n"
	"    if (s[0] >= end) { covered += s[1] - s[0]; end = s[1]; }\n"
	"    else if (s[1] > end) { covered += s[1] - end; end = s[1]; }\n"
	"  });\n"
	"  searching = true;\n"
	"  $('search').textContent = 'Reset Search';\n"
	"  $('matched').textContent = 'Matched: ' +\n"
	"    (100 * covered / frames[0].w).toFixed(2) + '%';\n"
	"}\n"
	"function init() {\n"
	"  var svg = document.documentElement;\n"
	"  W = parseFloat(svg.getAttribute('width'));\n"
	"  XP = " "10" ";\n"
	"  var gs = document.querySelectorAll('g.f');\n"
	"  for (var i = 0; i < gs.length; i++) {\n"
	"    var g = gs[i], r = g.getElementsByTagName('rect')[0];\n"
	"    var fr = { g: g, rect: r, text: g.getElementsByTagName('text')[0],\n"
	"               x: parseFloat(r.getAttribute('x')), w: parseFloat(r.getAttribute('width')),\n"
	"               y: parseFloat(r.getAttribute('y')), fill: r.getAttribute('fill') };\n"
	"    fr.name = nameOf(fr);\n"
	"    frames.push(fr);\n"
	"    (function (fr) {\n"
	"      g.addEventListener('click', function () { zoom(fr); });\n"
	"      g.addEventListener('mouseover', function () {\n"
	"        $('details').textContent = fr.g.getElementsByTagName('title')[0].textContent;\n"
	"      });\n"
	"      g.addEventListener('mouseout', function () { $('details').textContent = ' '; });\n"
	"    })(fr);\n"
	"  }\n"
	"  $('unzoom').addEventListener('click', unzoom);\n"
	"  $('search').addEventListener('click', search);\n"
	"  window.addEventListener('keydown', function (ev) {\n"
	"    if ((ev.ctrlKey || ev.metaKey) && ev.key === 'f') { ev.preventDefault(); search(); }\n"
	"    else if (ev.key === 'Escape') { unzoom(); if (searching) unsearch(); }\n"
	"  });\n"
	"}\n"
	"window.addEventListener('load', init);\n"
	"]]></script>\n";

struct kid {
	const char *name;
	uint32_t node;
};

static int kid_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kid *)a)->name, ((const struct kid *)b)->name);
}

static void write_frame(const struct flame_tree *t, const struct flame_svg_opts *o,
			const struct flame_node *nd, double x, double w, double y,
			double max_delta, FILE *f)
{
	const char *name = t->names[nd->name];
	uint64_t total = t->nodes[0].value;
	char colour[48];
	int maxc = (int)((w - 6) / 7.1);

	if (o->metric)
		flame_metric_colour(o->metric, (uint32_t)(nd - t->nodes), colour, sizeof(colour));
	else
		node_colour(t, nd, max_delta, colour, sizeof(colour));
	fputs("<g class=\"f\"><title>", f);
	flame_xml_write(f, name);
	fprintf(f, " (%" PRIu64 " ", nd->value);
	flame_xml_write(f, o->unit ? o->unit : "samples");
	fprintf(f, ", %.2f%%", total ? 100.0 * nd->value / total : 0.0);
	if (t->diff) {
		double a = total ? 100.0 * nd->value / total : 0;
		double b = t->base_total ? 100.0 * nd->base / t->base_total : 0;

		fprintf(f, "; %.2f%% in ", b);
		flame_xml_write(f, o->base_name ? o->base_name : "the baseline");
		fprintf(f, ", %+.2f", a - b);
	}
	fputc(')', f);
	if (o->metric) {
		/* on a line of its own: the script's nameOf() reads the
		 * name before the last " (" of the first line */
		char v[64];

		fputs("&#10;", f);
		flame_xml_write(f, o->metric->name);
		fprintf(f, " = %s", flame_metric_format(o->metric->v[nd - t->nodes], v,
							  sizeof(v)));
	}
	fprintf(f, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
		"fill=\"%s\" rx=\"2\"/><text x=\"%.1f\" y=\"%.1f\">", x, y, w, FRAME_H - 1,
		colour, x + 3, y + FRAME_H - 4.5);
	if (maxc >= 3) {
		size_t nl = strlen(name);

		if ((int)nl <= maxc) {
			flame_xml_write(f, name);
		} else {
			/* cut on a character boundary */
			size_t cut = (size_t)maxc - 2;
			char *s = xstrdup(name);

			while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
				cut--;
			s[cut] = 0;
			flame_xml_write(f, s);
			fputs("..", f);
			free(s);
		}
	}
	fputs("</text></g>\n", f);
}

/* What the SVG draws at scale (pixels per unit): the depth of the deepest
 * frame at least MIN_W wide, and the frames left out as narrower (*nr_out)
 * with the value of the stacks through them (*value_out, of the root's).
 * A frame is never wider than its parent, so the drawn frames are those
 * at least MIN_W wide. */
static uint32_t svg_layout(const struct flame_tree *t, double scale, size_t *nr_out,
			   uint64_t *value_out)
{
	uint32_t depth = 0;

	*nr_out = 0;
	*value_out = 0;
	for (size_t i = 0; i < t->nr_nodes; i++) {
		const struct flame_node *nd = &t->nodes[i];

		if (!nd->value)
			continue;
		if (nd->value * scale >= MIN_W) {
			if (nd->depth > depth)
				depth = nd->depth;
			continue;
		}
		(*nr_out)++;
		if (i && t->nodes[nd->parent].value * scale >= MIN_W)
			*value_out += nd->value;
	}
	return depth;
}

/* The document's head: the size, style, script, background, the title
 * lines, the buttons, the details and matched lines; and when frames were
 * left out, a line below the subtitle saying how many. */
static void svg_head(const struct flame_tree *t, const struct flame_svg_opts *o, int width,
		     int height, size_t nr_out, uint64_t value_out, FILE *f)
{
	uint64_t total = t->nodes[0].value;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n", width, height, width, height);
	fputs("<!-- strobe flamegraph: click a frame to zoom, Ctrl-F or Search to "
	      "search, Escape to reset -->\n", f);
	fprintf(f, "<style type=\"text/css\">\n"
		"text { font-family: monospace; font-size: %dpx; fill: rgb(0,0,0); }\n"
		"g.f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; cursor: pointer; }\n"
		"g.f text { pointer-events: none; }\n"
		"#title { font-size: 17px; }\n"
		".button { cursor: pointer; fill: rgb(0,0,180); }\n"
		"</style>\n", FONT_SIZE);
	fputs(svg_script, f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"rgb(250,250,245)\"/>\n",
		width, height);
	fprintf(f, "<text id=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\">", width / 2);
	flame_xml_write(f, o->title ? o->title : "Flame Graph");
	fputs("</text>\n", f);
	fprintf(f, "<text id=\"subtitle\" x=\"%d\" y=\"40\" text-anchor=\"middle\">", width / 2);
	flame_xml_write(f, o->subtitle ? o->subtitle : "");
	fputs("</text>\n", f);
	if (nr_out) {
		fprintf(f, "<text id=\"omitted\" x=\"%d\" y=\"56\" text-anchor=\"middle\">"
			"%zu frame%s narrower than %.0f px left out (%.2f%% of ", width / 2, nr_out,
			nr_out == 1 ? "" : "s", MIN_W,
			total ? 100.0 * value_out / total : 0.0);
		flame_xml_write(f, o->unit ? o->unit : "samples");
		fputs("; all in strobe export --format folded)</text>\n", f);
	}
	if (o->metric)
		flame_metric_legend_svg(o->metric, f, width, 44 + (nr_out ? NOTE_H : 0));
	fprintf(f, "<text id=\"unzoom\" class=\"button\" x=\"%d\" y=\"22\" "
		"style=\"opacity:0\">Reset Zoom</text>\n", XPAD);
	fprintf(f, "<text id=\"search\" class=\"button\" x=\"%d\" y=\"22\" "
		"text-anchor=\"end\">Search</text>\n", width - XPAD);
	fprintf(f, "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"> </text>\n",
		width - XPAD, height - 10);
	fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", XPAD, height - 10);
}

/*
 * The image is as tall as the frames drawn (svg_layout): the root on the
 * first screen however deep the stacks too narrow to draw.  Search's
 * percentages stay of all of the root's samples (the root is always drawn).
 */
int flame_write_svg(const struct flame_tree *t, const struct flame_svg_opts *o, FILE *f,
		    struct error *e)
{
	int width = o->width > 0 ? o->width : 1200;
	uint64_t total = t->nodes[0].value;
	double scale = total ? (width - 2.0 * XPAD) / total : 0;
	size_t nr_out;
	uint64_t value_out;
	uint32_t depth = svg_layout(t, scale, &nr_out, &value_out);
	int height = TOP_H + (nr_out ? NOTE_H : 0) + (o->metric ? FLAME_METRIC_LEGEND_H : 0) +
		     (int)(depth + 1) * FRAME_H + BOTTOM_H;
	double max_delta = 0;
	struct { uint32_t node; double x; } *todo;
	size_t nr_todo = 0;
	struct kid *kids = NULL;
	size_t cap_kids = 0;

	if (t->diff) {
		for (size_t i = 1; i < t->nr_nodes; i++) {
			double a = total ? (double)t->nodes[i].value / total : 0;
			double b = t->base_total ? (double)t->nodes[i].base / t->base_total : 0;
			double d = a > b ? a - b : b - a;

			if (t->nodes[i].value && d > max_delta)
				max_delta = d;
		}
	}
	if (o->metric)		/* over the frames drawn */
		flame_metric_scale(o->metric, t, scale, MIN_W);
	svg_head(t, o, width, height, nr_out, value_out, f);

	/* depth first from the root, children by name, so that x grows */
	todo = xmalloc(t->nr_nodes * sizeof(*todo));
	todo[nr_todo].node = 0;
	todo[nr_todo++].x = XPAD;
	while (nr_todo) {
		uint32_t n = todo[--nr_todo].node;
		double x = todo[nr_todo].x;
		const struct flame_node *nd = &t->nodes[n];
		double w = nd->value * scale;
		double y = height - BOTTOM_H - (nd->depth + 1.0) * FRAME_H;
		size_t nk = 0;

		if (w < MIN_W || !nd->value)
			continue;
		write_frame(t, o, nd, x, w, y, max_delta, f);
		for (uint32_t c = nd->child; c; c = t->nodes[c].next) {
			ARRAY_GROW(kids, cap_kids, nk + 1);
			kids[nk].name = t->names[t->nodes[c].name];
			kids[nk++].node = c;
		}
		if (nk > 1)
			qsort(kids, nk, sizeof(*kids), kid_cmp);
		/* pushed last first, so the first by name comes out first */
		{
			double cx = x;
			size_t first = nr_todo;

			for (size_t k = 0; k < nk; k++) {
				todo[nr_todo].node = kids[k].node;
				todo[nr_todo++].x = cx;
				cx += t->nodes[kids[k].node].value * scale;
			}
			for (size_t a = first, b = nr_todo; a + 1 < b; a++, b--) {
				__typeof__(*todo) tmp = todo[a];

				todo[a] = todo[b - 1];
				todo[b - 1] = tmp;
			}
		}
	}
	free(kids);
	free(todo);
	fputs("</svg>\n", f);
	if (ferror(f))
		return error_set(e, "writing the flame graph failed");
	return 0;
}
