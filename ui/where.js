/*
 * where.js - the metric condition of strobe ui's page (issue 33): the
 * "where" bar under the header (a condition EXPR OP NUMBER as the
 * commands' --where takes it, "per sample" for --where-sample, a bucket
 * in ms for --where-bucket, "invert" for --invert, and the "where vs
 * rest" button), its part of the URL's hash (w, wi, ws, wb, wd), the
 * API parameters it adds to the window's views (where, invert,
 * where_sample, where_bucket: the server evaluates the condition, this
 * file never does), the note of what was kept (the report's meta.where,
 * or the API's one-line refusal), and the timeline's shade of the
 * condition: /api/series of "samples" over the views' window with the
 * condition, so a bucket of that series is shaded when the condition
 * kept samples in it (per bucket: every such bucket alike; per sample:
 * darker the more samples it kept).  Text from the user or the data goes
 * in as text only (dom.js).  Exports strobeWhere.
 */
var strobeWhere = (function () {
"use strict";

var $ = strobeDom.$, el = strobeDom.el, clear = strobeDom.clear;

/* c: the condition, i: invert, s: per sample, b: the bucket in ms as
   typed, d: the diff view shows where vs rest */
var w = { c: "", i: 0, s: 0, b: "", d: 0 }, fleet = false;
var shade = null;	/* [[from_ns, to_ns, weight 0..1]], since the session start */

function read(p) {
	w.c = (p.get("w") || "").trim();
	w.i = p.get("wi") === "1" ? 1 : 0;
	w.s = p.get("ws") === "1" ? 1 : 0;
	w.b = p.get("wb") || "";
	w.d = w.c && p.get("wd") === "1" ? 1 : 0;
}

function write(p) {
	if (!w.c) return;
	p.set("w", w.c);
	if (w.i) p.set("wi", "1");
	if (w.s) p.set("ws", "1");
	if (w.b) p.set("wb", w.b);
	if (w.d) p.set("wd", "1");
}

function on() { return !!w.c && !fleet; }
function rest() { return !!(on() && w.d); }
function setRest(v) { w.d = w.c && v ? 1 : 0; }

/* the bucket field in ns: null (the default), or NaN when it is no
   positive number of ms */
function bucketNs() {
	if (!w.b || w.s) return null;
	var ms = Number(w.b);
	return isFinite(ms) && ms > 0 ? Math.round(ms * 1e6) : NaN;
}

/* the API's parameters of the condition ({} without one); invert as
   given, or its opposite with flip (the other side, for where vs rest) */
function params(flip) {
	if (!on()) return {};
	var inv = flip ? !w.i : !!w.i, b = bucketNs();
	return { where: w.c, invert: inv ? 1 : null, where_sample: w.s ? 1 : null,
		where_bucket: b === null || isNaN(b) ? null : b };
}

/* a problem of the controls themselves, before any request: a message or "" */
function problem() {
	return on() && isNaN(bucketNs()) ? "bad bucket '" + w.b + "': give a number of ms, e.g. 40, or leave it empty" : "";
}

/* the note under the bar: what was kept (ok) or what is wrong (bad) */
function note(text, bad) {
	var n = $("wnote");
	n.textContent = text || "";
	n.classList.toggle("bad", !!bad);
	if (bad) n.dataset.bad = "1"; else delete n.dataset.bad;
}

/* a fleet's session (strobe ui --source): the API serves no condition,
   the bar is disabled and says so */
function setFleet(v) {
	fleet = !!v;
	["where", "wsample", "wbucket", "winvert", "wrest"].forEach(function (id) { $(id).disabled = fleet; });
	if (fleet) note("where: not served for the fleet's sessions (open a local database)", false);
}

/* a view's request refused with its condition set (400: the condition
   is bad for the session; 422: it cannot be evaluated there, e.g. no
   samples in the window): the
   API's line in the note and, by clearIt(text), in the view emptied; any
   other failure is thrown on (to the status line) */
function refused(e, clearIt) {
	if (!on() || !e || (e.status !== 400 && e.status !== 422)) throw e;
	var m = String(e.message || e).replace(/^[a-z]+: /, "");	/* not which request: all say it */
	note(m, true);
	clearIt("the condition is refused: " + m);
}

/* the controls from w */
function fill() {
	$("where").value = w.c;
	$("winvert").checked = !!w.i;
	$("wsample").checked = !!w.s;
	$("wbucket").value = w.b;
	$("wbucket").disabled = !!w.s || fleet;
	$("wrest").classList.toggle("on", !!w.d);
	if (!w.c && !fleet) { note(""); shade = null; }
}

/* the metrics file's names the session's counters cover, offered as the
   condition's start */
function setMetrics(ms) {
	var dl = $("wmetrics");
	clear(dl);
	(ms || []).forEach(function (m) { var o = el("option"); o.value = m; dl.appendChild(o); });
}

/* the controls' events: changed(what) after w changed, what "cond" (the
   views to ask again) or "rest" (the where-vs-rest diff asked for) */
function wire(changed) {
	var f = $("where");
	function commit() {
		var v = f.value.trim();
		if (v === w.c) return;
		w.c = v;
		if (!v) w.d = 0;
		fill();
		changed("cond");
	}
	f.addEventListener("change", commit);
	f.addEventListener("keydown", function (e) { if (e.key === "Enter") commit(); });
	$("winvert").addEventListener("change", function () { w.i = this.checked ? 1 : 0; if (w.c) changed("cond"); });
	$("wsample").addEventListener("change", function () {
		w.s = this.checked ? 1 : 0;
		$("wbucket").disabled = !!w.s;
		if (w.c) changed("cond");
	});
	$("wbucket").addEventListener("change", function () { w.b = this.value.trim(); if (w.c) changed("cond"); });
	$("wrest").addEventListener("click", function () {
		commit();
		if (!w.c) { note("type a condition first, e.g. page-faults > 200, and press Enter", true); return; }
		w.d = 1;
		fill();
		changed("rest");
	});
}

/*
 * The shade of window [from, to) (ns since the session start): api (the
 * page's) asks /api/series of samples there with the condition, in at
 * most `buckets` buckets.  Resolves with the spans kept (also in
 * #plot's data-where, for the browser test); never rejects: a refusal
 * clears the shade and resolves with null.
 */
function loadShade(api, session, from, to, buckets) {
	shade = null;
	delete $("plot").dataset.where;
	if (!on()) return Promise.resolve(null);
	var p = Object.assign({ session: session, event: "samples", from: from, to: to,
		buckets: Math.max(1, Math.min(10000, Math.round(buckets))) }, params(false));
	return api("series", p).then(function (r) {
		var s = (r.series || [])[0], out = [], max = 0;
		if (!s) { shade = []; return shade; }
		s.values.forEach(function (v) { if (v > max) max = v; });
		r.times.forEach(function (t, i) {
			var v = s.values[i] || 0;
			if (v <= 0) return;
			var f = Math.max(t, r.from_ns), e = Math.min(t + r.bucket_ns, r.to_ns);
			var wt = w.s ? v / max : 1, last = out[out.length - 1];
			if (last && last[1] === f && last[2] === wt) last[1] = e;
			else out.push([f, e, wt]);
		});
		shade = out;
		$("plot").dataset.where = JSON.stringify(out.map(function (x) { return [x[0], x[1]]; }));
		return shade;
	}).catch(function () { shade = null; return null; });
}

/* the shade on uPlot u's canvas (a draw hook): green, full height */
function drawShade(u) {
	if (!shade || !on()) return;
	var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
	var l = u.bbox.left, r = l + u.bbox.width;
	ctx.save();
	shade.forEach(function (x) {
		var x0 = Math.max(l, u.valToPos(x[0] / 1e9, "x", true));
		var x1 = Math.min(r, u.valToPos(x[1] / 1e9, "x", true));
		if (x1 <= x0) { if (x0 >= r || x1 <= l) return; x1 = x0 + 1; }
		ctx.fillStyle = "rgba(46,160,67," + (0.08 + 0.22 * x[2]).toFixed(3) + ")";
		ctx.fillRect(x0, top, x1 - x0, h);
	});
	ctx.restore();
}

/* the shade's legend entry: [key, swatch class, text], or null */
function legend() {
	if (!on() || !shade) return null;
	return ["where", "sw-where", (w.i ? "where not " : "where ") + w.c +
		(w.s ? " (per sample: darker, more samples kept)" : "") + ": " + shade.length + " spans kept"];
}

/* the diff pane's head in where-vs-rest mode, from the diff's meta */
function restHead(meta, over) {
	meta = meta || {};
	return "where vs rest over " + over + ": A = " + (meta.a_where || "?") + " (" + (meta.a_samples || 0) +
		" samples), B = " + (meta.b_where || "?") + " (" + (meta.b_samples || 0) + " samples)";
}

return { read: read, write: write, on: on, rest: rest, setRest: setRest, params: params,
	problem: problem, note: note, refused: refused, setFleet: setFleet, fill: fill, setMetrics: setMetrics, wire: wire,
	loadShade: loadShade, drawShade: drawShade, legend: legend, restHead: restHead };
})();
