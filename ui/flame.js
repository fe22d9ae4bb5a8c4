/*
 * flame.js - the page's call stacks: folded stacks (as /api/flame and
 * 'strobe export --format folded' write them) made a tree, the flame graph
 * (plain or differential) drawn on a canvas, and the call tree with a
 * function's callers and callees.  Names go onto the canvas with fillText
 * and into the page with textContent, never as HTML.  Exports strobeFlame.
 */
var strobeFlame = (function () {
"use strict";

var el = strobeDom.el, clear = strobeDom.clear;

/* ---- folded stacks -> a tree (root first) */

function buildTree(text) {
	var root = { name: "all", v: 0, self: 0, kids: new Map(), parent: null, depth: 0 };
	text.split("\n").forEach(function (line) {
		if (!line) return;
		var sp = line.lastIndexOf(" ");
		if (sp < 0) return;
		var n = Number(line.slice(sp + 1));
		if (!(n > 0)) return;
		var fr = line.slice(0, sp).split(";"), node = root;
		root.v += n;
		fr.forEach(function (f) {
			var k = node.kids.get(f);
			if (!k) { k = { name: f, v: 0, self: 0, kids: new Map(), parent: node, depth: node.depth + 1 }; node.kids.set(f, k); }
			k.v += n;
			node = k;
		});
		node.self += n;
	});
	return root;
}

/* /api/flame?color_by= (flamemetric.h): the tree of its folded text, each
   node given its metric value (m, null: undefined) and colour (mc) by the
   reply's nodes (parents first, -1 the root), the root the scale (metric) */
function metricTree(r) {
	var root = buildTree(r.folded || ""), map = [];
	(r.nodes || []).forEach(function (nd, i) {
		var n = nd[0] < 0 ? root : map[nd[0]] ? map[nd[0]].kids.get(nd[1]) : null;
		map[i] = n || null;
		if (n) { n.m = nd[2]; n.mc = nd[3]; }
	});
	root.metric = { name: r.metric, expr: r.expr, unit: r.unit, lo: r.lo, hi: r.hi, min: r.min,
		max: r.max, loPct: r.lo_pct, hiPct: r.hi_pct, ramp: r.ramp || [], undef: r.undefined };
	return root;
}

function fmtM(v) { return v === null || v === undefined ? "undefined" : String(Number(v.toPrecision(6))); }

/* the legend of a metric's colours into box (text and swatches, no HTML) */
function renderLegend(box, mt) {
	clear(box);
	box.hidden = !mt;
	if (!mt) return;
	box.appendChild(el("span", "ltitle", "colour: " + mt.name + (mt.expr !== mt.name ? " = " + mt.expr : "") +
		(mt.unit ? " (" + mt.unit + ")" : "") + ", over the samples under each frame"));
	box.appendChild(el("span", "llo", (mt.lo > mt.min ? "≤ " : "") + fmtM(mt.lo)));
	mt.ramp.forEach(function (c) {
		var sw = el("span", "swatch");
		sw.style.background = c;
		box.appendChild(sw);
	});
	box.appendChild(el("span", "lhi", (mt.hi < mt.max ? "≥ " : "") + fmtM(mt.hi)));
	var u = el("span", "swatch");
	u.style.background = mt.undef;
	box.appendChild(u);
	box.appendChild(el("span", "lund", "undefined (0/0)"));
	box.appendChild(el("span", "lnote", "frames' min " + fmtM(mt.min) + ", max " + fmtM(mt.max) +
		"; scale: width-weighted " + mt.loPct + "th to " + mt.hiPct + "th percentile"));
}

function pathOf(n) { var p = []; for (; n && n.parent; n = n.parent) p.unshift(n.name); return p; }

function lookup(root, path) {
	var n = root;
	for (var i = 0; n && i < path.length; i++) n = n.kids.get(path[i]);
	return n || null;
}

/* ---- flame graphs: a small canvas renderer of our own (d3-flame-graph
   needs all of d3, and drawing only the frames wide enough to see, with
   canvas fillText for the names, is a few dozen lines) */

/* pane: the element holding the canvas; diff: a differential graph (set()
   with a base); empty(): the line to show when there is nothing to draw;
   query(): the search string, whose frames are drawn highlighted */
function Flame(pane, diff, empty, query) {
	this.pane = pane; this.diff = diff; this.canvas = pane.querySelector("canvas");
	this.empty = empty; this.query = query;
	this.root = null; this.base = null; this.zoom = null; this.boxes = [];
	/* a metric's legend, above the canvas */
	this.legend = el("div", "flegend");
	this.legend.hidden = true;
	pane.insertBefore(this.legend, this.canvas);
	var self = this;
	this.canvas.addEventListener("click", function (e) {
		var b = self.hit(e);
		if (b) { self.zoom = b.node.parent ? b.node : null; self.draw(); }
	});
	this.canvas.addEventListener("mousemove", function (e) {
		var b = self.hit(e);
		self.canvas.title = b ? b.label : "";
	});
}

Flame.prototype.set = function (root, base) {
	var zp = this.zoom ? pathOf(this.zoom) : null;
	this.root = root; this.base = base;
	this.zoom = zp && root ? lookup(root, zp) : null;
	if (this.pane.classList.contains("on")) this.draw();
	else this.dirty = true;
};

Flame.prototype.hit = function (e) {
	var r = this.canvas.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
	for (var i = 0; i < this.boxes.length; i++) {
		var b = this.boxes[i];
		if (x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + 17) return b;
	}
	return null;
};

function hashColor(s) {
	var h = 0;
	for (var i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
	var r = 205 + (Math.abs(h) % 50), g = 80 + (Math.abs(h >> 8) % 120), b = 40 + (Math.abs(h >> 16) % 50);
	return "rgb(" + r + "," + g + "," + b + ")";
}

Flame.prototype.draw = function () {
	this.dirty = false;
	var c = this.canvas, ctx = c.getContext("2d"), dpr = window.devicePixelRatio || 1;
	var W = Math.max(300, this.pane.clientWidth || 1000), H = 17;
	this.boxes = [];
	var root = this.root;
	renderLegend(this.legend, root && root.v && !this.diff ? root.metric : null);
	if (!root || !root.v) {
		c.width = W * dpr; c.height = 30 * dpr; c.style.height = "30px";
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.clearRect(0, 0, W, 30);
		ctx.fillStyle = "#777"; ctx.font = "12px system-ui, sans-serif";
		ctx.fillText(this.empty(), 8, 18);
		return;
	}
	var zoom = this.zoom || root, base = this.base, q = this.query();
	var out = [], self = this, hidden = 0;
	/* ancestors of the zoomed frame at full width, then its subtree */
	var anc = [];
	for (var n = zoom; n; n = n.parent) anc.unshift(n);
	anc.forEach(function (n, d) { out.push({ node: n, x: 0, w: W, d: d }); });
	function walk(n, x, d) {
		var kids = Array.from(n.kids.values()).sort(function (p, q2) { return p.name < q2.name ? -1 : p.name > q2.name ? 1 : 0; });
		kids.forEach(function (k) {
			var w = k.v / zoom.v * W;
			if (w < 1) { hidden++; return; }	/* too thin to see or click */
			out.push({ node: k, x: x, w: w, d: d });
			walk(k, x, d + 1);
			x += w;
		});
	}
	walk(zoom, 0, anc.length);
	var depth = 0;
	out.forEach(function (b) { depth = Math.max(depth, b.d); });
	var Ht = (depth + 1) * (H + 1) + 20;
	c.width = W * dpr; c.height = Ht * dpr; c.style.height = Ht + "px";
	ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
	ctx.clearRect(0, 0, W, Ht);
	ctx.font = "11px system-ui, sans-serif";
	ctx.textBaseline = "middle";
	var totA = base ? base.v : 0;
	out.forEach(function (b) {
		var y = b.d * (H + 1), n = b.node, color, label;
		var pct = (n.v / root.v * 100).toFixed(2);
		if (self.diff && base) {
			var bn = lookup(base, pathOf(n)), sa = bn ? bn.v / totA : 0, sb = n.v / root.v;
			var dlt = sb - sa, k = Math.min(1, Math.abs(dlt) * 10);
			var lo = Math.round(255 - 155 * k);
			color = dlt > 0 ? "rgb(255," + lo + "," + lo + ")" : dlt < 0 ? "rgb(" + lo + "," + lo + ",255)" : "#eee";
			label = n.name + " — B " + (sb * 100).toFixed(2) + "%, A " + (sa * 100).toFixed(2) + "%, change " +
				(dlt >= 0 ? "+" : "") + (dlt * 100).toFixed(2) + " points";
		} else if (root.metric) {
			color = n.mc || root.metric.undef;
			label = n.name + " — " + n.v + " (" + pct + "%), self " + n.self + " · " +
				root.metric.name + " = " + fmtM(n.m);
		} else {
			color = n.parent ? hashColor(n.name) : "#ccc";
			label = n.name + " — " + n.v + " (" + pct + "%), self " + n.self;
		}
		if (q && n.name.indexOf(q) >= 0) color = "#e040fb";
		ctx.fillStyle = color;
		ctx.fillRect(b.x, y, Math.max(0.5, b.w - 1), H);
		if (b.w > 30) {
			ctx.fillStyle = "#000";
			ctx.save();
			ctx.beginPath(); ctx.rect(b.x, y, b.w - 3, H); ctx.clip();
			ctx.fillText(n.name, b.x + 3, y + H / 2);
			ctx.restore();
		}
		self.boxes.push({ x: b.x, y: y, w: b.w, node: n, label: label });
	});
	ctx.fillStyle = "#777";
	ctx.fillText((hidden ? hidden + " frames narrower than a pixel not drawn · " : "") +
		"click a frame to zoom, Escape to reset", 4, Ht - 9);
};

/* the samples whose stack has a frame matching q (each stack once) */
function matchCount(root, q) {
	var hit = 0;
	(function walk(n) {
		n.kids.forEach(function (k) {
			if (k.name.indexOf(q) >= 0) hit += k.v;
			else walk(k);
		});
	})(root);
	return hit;
}

/* ---- the call tree: top-down, expanded on click; a clicked function's
   callers (bottom-up) and callees (merged over all its calls) below it */

function newNode(name) { return { name: name, v: 0, self: 0, kids: new Map() }; }

function mergeKids(dst, src) {
	src.kids.forEach(function (k) {
		var d = dst.kids.get(k.name);
		if (!d) { d = newNode(k.name); dst.kids.set(k.name, d); }
		d.v += k.v; d.self += k.self;
		mergeKids(d, k);
	});
}

/* the outermost call of fname on each stack counts once (recursion) */
function focusTrees(root, fname) {
	var callers = newNode(fname), callees = newNode(fname);
	(function walk(n, inside) {
		n.kids.forEach(function (k) {
			var hit = !inside && k.name === fname;
			if (hit) {
				callers.v += k.v; callers.self += k.self;
				callees.v += k.v; callees.self += k.self;
				mergeKids(callees, k);
				var cur = callers;
				for (var p = n; p && p.parent; p = p.parent) {
					var c = cur.kids.get(p.name);
					if (!c) { c = newNode(p.name); cur.kids.set(p.name, c); }
					c.v += k.v;
					cur = c;
				}
			}
			walk(k, inside || hit);
		});
	})(root, false);
	return { callers: callers, callees: callees };
}

function treeRow(n, total, parentEl, depth, onPick) {
	var d = el("div", "tnode");
	d.appendChild(el("span", "n", n.v + " " + (n.v / total * 100).toFixed(1) + "%  " + n.self));
	var lab = el("span");
	d.appendChild(lab);
	parentEl.appendChild(d);
	var kidsBox = el("div");
	parentEl.appendChild(kidsBox);
	var expanded = false;
	function label() {
		lab.textContent = "\u00a0".repeat(depth * 2) + (n.kids.size ? (expanded ? "▾ " : "▸ ") : "  ") + n.name;
	}
	label();
	d.addEventListener("click", function () {
		expanded = !expanded;
		clear(kidsBox);
		label();
		if (expanded) Array.from(n.kids.values()).sort(function (p, q) { return q.v - p.v; })
			.forEach(function (k) { treeRow(k, total, kidsBox, depth + 1, onPick); });
		if (onPick) onPick(n, d);
	});
	return d;
}

/* the call tree of root into box; empty: the line when root has no stacks */
function renderCallTree(box, root, empty) {
	clear(box);
	if (!root || !root.v) {
		box.appendChild(el("div", "empty", empty));
		return;
	}
	var head = el("div", "tnode");
	head.appendChild(el("span", "n", "total   self"));
	head.appendChild(document.createTextNode("function (click: expand, and its callers and callees below)"));
	box.appendChild(head);
	var top = el("div"), focus = el("div"), picked = null;
	box.appendChild(top);
	box.appendChild(focus);
	function pick(n, d) {
		if (!n.parent) return;
		if (picked) picked.classList.remove("selected");
		picked = d; d.classList.add("selected");
		clear(focus);
		var f = focusTrees(root, n.name);
		focus.appendChild(el("h4", null, "callers of " + n.name));
		treeRow(f.callers, root.v, focus, 0, null).click();
		focus.appendChild(el("h4", null, "callees of " + n.name));
		treeRow(f.callees, root.v, focus, 0, null).click();
	}
	treeRow(root, root.v, top, 0, pick).click();
}

return { buildTree: buildTree, metricTree: metricTree, Flame: Flame, matchCount: matchCount, renderCallTree: renderCallTree };
})();
