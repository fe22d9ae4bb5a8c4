/*
 * app.js - the page of 'strobe ui': the session list, the timeline (uPlot),
 * and the views that one time selection drives (hot spots, flame graph,
 * call tree, diff, differential flame graph, a symbol's source lines), all
 * from the server's /api/.  The flame graphs and the call tree are drawn
 * by flame.js, the onsets and the phase strip by phases.js, the metric
 * condition (where) by where.js, the tables by tables.js, the DOM helpers
 * are dom.js's.
 *
 * Every string that comes from the data (comm, paths, symbols, marker
 * names, cgroups, error bodies) goes into the page through textContent /
 * createTextNode or onto a canvas with fillText: never innerHTML.  The
 * whole view lives in location.hash (replaceState), so a URL reloads it.
 */
(function () {
"use strict";

var token = new URLSearchParams(location.search).get("token") || "";
var $ = strobeDom.$, el = strobeDom.el, clear = strobeDom.clear;
var buildTree = strobeFlame.buildTree;
function renderCallTree() { strobeFlame.renderCallTree($("tree"), folded.a, noStacks()); }

/* ---- state and the URL */

var st = { s: null, h: null, ev: "samples", by: "none", stk: 1, z: null, a: null, b: null,
	tab: "table", rby: "symbol", fev: "samples", fcol: "", x: [], lb: null, ls: null, on: 0 };

function parseWin(v) {
	var m = /^(\d+)-(\d+)$/.exec(v || "");
	if (!m) return null;
	var f = Number(m[1]), t = Number(m[2]);
	return t > f ? [f, t] : null;
}

function hashRead() {
	var p = new URLSearchParams(location.hash.slice(1));
	var q = new URLSearchParams(location.search);
	if (q.get("session")) st.s = q.get("session");	/* strobe ui --session */
	if (p.get("s")) { st.s = p.get("s"); st.h = p.get("h"); }	/* h: the fleet's host */
	if (p.get("ev")) st.ev = p.get("ev");
	if (p.get("by")) st.by = p.get("by");
	if (p.get("stk")) st.stk = p.get("stk") === "1" ? 1 : 0;
	st.on = p.get("on") === "1" ? 1 : 0;	/* onsets and phases shown */
	if (p.get("tab")) st.tab = p.get("tab");
	if (p.get("rby")) st.rby = p.get("rby");
	if (p.get("fev")) st.fev = p.get("fev");
	st.fcol = p.get("fcol") || "";	/* the flame graph's colour: a metric, "" none */
	st.z = parseWin(p.get("z"));
	st.a = parseWin(p.get("a"));
	st.b = parseWin(p.get("b"));
	st.x = p.getAll("x");
	st.lb = p.get("lb"); st.ls = p.get("ls");	/* the lines view's binary, symbol */
	strobeWhere.read(p);	/* the condition: w, wi, ws, wb, wd */
}

function hashWrite() {
	var p = new URLSearchParams();
	if (st.s !== null) p.set("s", st.s);
	if (st.h !== null) p.set("h", st.h);
	p.set("ev", st.ev);
	p.set("by", st.by);
	p.set("stk", String(st.stk));
	p.set("on", String(st.on));
	if (st.z) p.set("z", st.z.join("-"));
	if (st.a) p.set("a", st.a.join("-"));
	if (st.b) p.set("b", st.b.join("-"));
	p.set("tab", st.tab);
	p.set("rby", st.rby);
	p.set("fev", st.fev);
	if (st.fcol) p.set("fcol", st.fcol);
	st.x.forEach(function (x) { p.append("x", x); });
	if (st.ls !== null) { p.set("lb", st.lb || ""); p.set("ls", st.ls); }
	strobeWhere.write(p);
	history.replaceState(null, "", location.pathname + location.search + "#" + p.toString());
	var sel = $("sel");
	sel.dataset.aFrom = st.a ? st.a[0] : "";
	sel.dataset.aTo = st.a ? st.a[1] : "";
	sel.dataset.bFrom = st.b ? st.b[0] : "";
	sel.dataset.bTo = st.b ? st.b[1] : "";
	sel.textContent = (st.a ? "A: " + fmtT(st.a[0]) + " – " + fmtT(st.a[1]) +
		" (" + fmtT(st.a[1] - st.a[0]) + ")" : "drag on the timeline to select window A") +
		(st.b ? "   B: " + fmtT(st.b[0]) + " – " + fmtT(st.b[1]) : st.a ? "   shift-drag for window B" : "");
}

/* ---- the API */

/* the status line: one message per part of the page (the timeline, the
   window's views, the rest), so that one's success does not hide the
   other's error */
var said = {};
function status(msg, part) {
	said[part || "page"] = msg || "";
	$("status").textContent = Object.keys(said).map(function (k) { return said[k]; })
		.filter(function (m) { return m; }).join(" · ");
}

function api(path, params, text) {
	var q = new URLSearchParams();
	/* a fleet session is its host's: ids repeat across hosts */
	if (params.session !== undefined && st.h !== null) q.set("host", st.h);
	Object.keys(params).forEach(function (k) {
		var v = params[k];
		if (v === null || v === undefined) return;
		if (Array.isArray(v)) v.forEach(function (x) { q.append(k, x); });
		else q.set(k, String(v));
	});
	return fetch("api/" + path + "?" + q.toString(), { headers: { "X-Strobe-Token": token } })
		.then(function (r) {
			return r.text().then(function (body) {
				if (!r.ok) {
					var e = new Error(path + ": " + (body.split("\n")[0] || ("HTTP " + r.status)));
					e.status = r.status;
					throw e;
				}
				return text ? body : JSON.parse(body);
			});
		});
}

function fail(e, part) { status(String(e && e.message || e), part); }

/* ---- formatting */

function fmtT(ns) {
	var a = Math.abs(ns);
	if (a >= 1e9) return (ns / 1e9).toFixed(3) + " s";
	if (a >= 1e6) return (ns / 1e6).toFixed(2) + " ms";
	if (a >= 1e3) return (ns / 1e3).toFixed(1) + " µs";
	return ns + " ns";
}


var palette = ["#e6550d", "#3182bd", "#31a354", "#756bb1", "#636363", "#fd8d3c",
	"#6baed6", "#74c476", "#9e9ac8", "#969696", "#e6ab02", "#a6761d", "#d62728", "#17becf"];

/* ---- sessions */

var sessions = [], sess = null;

function loadSessions() {
	return api("sessions", {}).then(function (r) {
		sessions = r.sessions || [];
		var s = $("session");
		clear(s);
		/* the fleet's (strobe ui --source URL): each session of a host;
		   the series can then be split by host */
		var fleet = sessions.some(function (x) { return x.host; });
		$("byhost").hidden = $("byhost").disabled = !fleet;
		if (!fleet && st.by === "host") st.by = "none";
		sessions.forEach(function (x) {
			var o = el("option", null, (x.host ? x.host + ":" + x.id : "#" + x.id) + " " + (x.name || "") + " — " +
				fmtT(x.duration_ns || 0) + ", " + x.samples + " samples, " +
				x.lost + " lost [" + (x.events || []).join(", ") + "]");
			o.value = JSON.stringify([x.host || null, String(x.id)]);
			s.appendChild(o);
		});
		if (!sessions.length) { status("no sessions in this database: record one with 'strobe record'"); delete document.body.dataset.busy; return; }
		/* a host only with a fleet's session: the first of that id else */
		var cur = sessions.filter(function (x) { return String(x.id) === st.s; });
		if (st.h !== null && cur.some(function (x) { return x.host === st.h; }))
			cur = cur.filter(function (x) { return x.host === st.h; });
		if (!cur.length) cur = [sessions[0]];
		st.s = String(cur[0].id);
		st.h = cur[0].host || null;
		s.value = JSON.stringify([st.h, st.s]);
		return loadSession();
	});
}

function loadSession() {
	return api("session", { session: st.s }).then(function (r) {
		sess = r;
		var evs = ["samples"].concat(r.events || []);
		var ev = $("event"), fev = $("fev");
		clear(ev); clear(fev);
		evs.forEach(function (e) {
			var o = el("option", null, e); o.value = "ev:" + e; ev.appendChild(o);
			var f = el("option", null, e); f.value = e; fev.appendChild(f);
		});
		(r.metrics || []).forEach(function (m) {
			var o = el("option", null, "metric " + m); o.value = "m:" + m; ev.appendChild(o);
		});
		var want = st.ev.indexOf(":") > 0 ? st.ev : "ev:" + st.ev;
		if (!Array.prototype.some.call(ev.options, function (o) { return o.value === want; })) want = "ev:samples";
		st.ev = want.slice(0, 3) === "ev:" ? want.slice(3) : want;
		ev.value = want;
		if (evs.indexOf(st.fev) < 0) st.fev = "samples";
		fev.value = st.fev;
		fillColourBy(r);
		strobeWhere.setMetrics(r.metrics);
		strobeWhere.setFleet(st.h !== null);
		strobeWhere.fill();
		$("by").value = st.by;
		$("stacked").checked = !!st.stk;
		$("onsets").checked = !!st.on;
		$("rby").value = st.rby;
		$("info").textContent = (r.host ? r.host + " · " : "") + r.nr_cpus + " cpus · " +
			fmtT(r.duration_ns) + " · " + r.samples + " samples · " + r.lost + " lost · " +
			r.throttled + " throttled · " + r.markers + " markers" +
			(r.has_stacks ? "" : " · no call stacks (record with -g)");
		hashWrite();
		return loadSeries().then(loadViews);
	});
}

/* ---- the timeline */

var plot = null, series = null, pendingShift = false, seriesSeq = 0;

function seriesParams(extra) {
	/* by=none is the API's default: not sent (the server of 97ddee5
	   answers "by=none" with a 400) */
	var ev = st.ev, p = { session: st.s, by: st.by === "none" ? null : st.by, top: 10 };
	if (ev.slice(0, 2) === "m:") p.metric = ev.slice(2);
	else p.event = ev;
	var z = st.z || [0, sess.duration_ns || 1];
	p.from = z[0]; p.to = z[1];
	/* never more points than the plot area has pixels: the box less the
	   left axis and its label (~120 px) and a right axis (60) for each
	   series added from the table */
	p.buckets = Math.max(16, Math.min(4000, Math.floor($("plot").clientWidth || 1000) - 120 - 60 * st.x.length));
	if (extra) Object.keys(extra).forEach(function (k) { p[k] = extra[k]; });
	return p;
}

function loadSeries() {
	var seq = ++seriesSeq;
	var extras = st.x.map(function (x) {
		var i = x.indexOf(":"), by = x.slice(0, i), name = x.slice(i + 1);
		return api("series", seriesParams({ by: by, top: 64 })).then(function (r) {
			/* the series' titles: a symbol as "NAME (BINARY)" (one per
			   binary that has it: summed), a binary by its base name */
			var base = name.slice(name.lastIndexOf("/") + 1);
			var hits = (r.series || []).filter(function (s) {
				return by === "symbol" ? s.title === name || s.title.indexOf(name + " (") === 0 :
					s.title === name || s.title === base;
			});
			var values = r.times.map(function (t, j) {
				var v = null;
				hits.forEach(function (s) { if (s.values[j] != null) v = (v || 0) + s.values[j]; });
				return hits.length ? v : 0;
			});
			return { title: by + " " + name, values: values };
		});
	});
	return Promise.all([api("series", seriesParams())].concat(extras)).then(function (rs) {
		if (seq !== seriesSeq) return;
		var r = rs[0];
		r.extra = rs.slice(1);
		series = r;
		drawPlot();
		status("", "series");
		loadOnsets();
	}).catch(function (e) { fail(e, "series"); });
}

function plotData() {
	var xs = series.times.map(function (t) { return t / 1e9; });
	var ss = series.series || [];
	var data = [xs], opts = [{}];
	var stack = st.stk && ss.length > 1;
	var acc = xs.map(function () { return 0; });
	var lay = ss.map(function (s) {
		var v = s.values.map(function (y, i) {
			if (!stack) return y;
			acc[i] += y || 0;
			return acc[i];
		});
		return { title: s.title, v: v };
	});
	/* stacked: draw the tallest first so each lower band paints over it */
	if (stack) lay.reverse();
	lay.forEach(function (s, i) {
		var k = stack ? lay.length - 1 - i : i, c = palette[k % palette.length];
		data.push(s.v);
		opts.push({ label: s.title, stroke: c, fill: stack ? c + "cc" : lay.length === 1 ? c + "33" : undefined, width: 1,
			points: { show: false }, spanGaps: false });
	});
	/* a series added from the table: on its own y-scale (its counts are
	   far below the total's), read on its own right-hand axis */
	var unit = st.ev.slice(0, 2) === "m:" ? st.ev.slice(2) : st.ev, axes = [];
	(series.extra || []).forEach(function (s, i) {
		var c = extraColors[i % extraColors.length], sc = "x" + i;
		var name = s.title.length > 40 ? s.title.slice(0, 39) + "…" : s.title;
		data.push(s.values);
		opts.push({ label: s.title, stroke: c, dash: [4, 2], width: 2, points: { show: false }, scale: sc });
		scales[sc] = { range: function (u, mn, mx) { return [0, Math.max(1, mx)]; } };
		axes.push({ scale: sc, side: 1, label: unit + " of " + name, stroke: c, size: 60,
			grid: { show: false }, values: function (u, v) { return v.map(function (x) { return x == null ? "" : String(x); }); } });
	});
	return { data: data, opts: opts, axes: axes };
}

var extraColors = ["#000", "#00838f", "#ad1457", "#558b2f"];
var scales = {};

/* the throttled spans' shade: hatched, so that it reads apart from the
   lost spans' plain red */
var hatch = null;
function hatchPattern(ctx) {
	if (hatch) return hatch;
	var c = document.createElement("canvas");
	c.width = c.height = 8;
	var g = c.getContext("2d");
	g.strokeStyle = "rgba(230,120,0,0.55)";
	g.lineWidth = 2;
	g.beginPath(); g.moveTo(0, 8); g.lineTo(8, 0); g.moveTo(-2, 2); g.lineTo(2, -2); g.moveTo(6, 10); g.lineTo(10, 6); g.stroke();
	hatch = ctx.createPattern(c, "repeat");
	return hatch;
}

/* the legend of the shades under the plot: what each colour means and
   how many spans of it the range has */
function shadeLegend() {
	var box = $("shades");
	clear(box);
	[["lost", "sw-lost", (series.lost || []).length + " lost spans (samples the kernel dropped)"],
	 ["throttled", "sw-thr", (series.throttled || []).length + " throttled spans (the kernel slowed the sampling)"],
	 ["A", "sw-a", "window A"], ["B", "sw-b", "window B"], strobeWhere.legend()].forEach(function (x) {
		if (!x) return;
		var it = el("span", "shade");
		it.dataset.shade = x[0];
		it.appendChild(el("i", x[1]));
		it.appendChild(document.createTextNode(x[2]));
		box.appendChild(it);
	});
}

function drawShades(u) {
	var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
	function span(f, t, color) {
		var x0 = u.valToPos(f / 1e9, "x", true), x1 = u.valToPos(t / 1e9, "x", true);
		x0 = Math.max(x0, u.bbox.left); x1 = Math.min(x1, u.bbox.left + u.bbox.width);
		if (x1 <= x0) x1 = x0 + 1;
		ctx.fillStyle = color;
		ctx.fillRect(x0, top, x1 - x0, h);
	}
	ctx.save();
	(series.lost || []).forEach(function (l) { span(l.from_ns, l.to_ns, "rgba(220,0,0,0.15)"); });
	(series.throttled || []).forEach(function (l) { span(l.from_ns, l.to_ns, hatchPattern(ctx)); });
	if (st.a) span(st.a[0], st.a[1], "rgba(33,150,243,0.18)");
	if (st.b) span(st.b[0], st.b[1], "rgba(156,39,176,0.18)");
	ctx.restore();
	strobeWhere.drawShade(u);
}

function drawPlot() {
	var box = $("plot");
	$("timeline").insertBefore($("markers"), $("tip"));	/* out of the old plot */
	$("timeline").insertBefore($("phases"), $("tip"));
	if (plot) { plot.destroy(); plot = null; }
	clear(box);
	scales = {};
	var pd = plotData();
	var z = st.z || [0, sess.duration_ns || 1];
	var ylabel = st.ev.slice(0, 2) === "m:" ? st.ev.slice(2) : st.ev;
	var opts = {
		width: Math.max(300, box.clientWidth || 1000),
		height: 240,
		scales: { y: { range: function (u, mn, mx) { return [Math.min(0, mn), mx > 0 ? mx * 1.05 : 1]; } },
			x: { time: false, range: function () { return [z[0] / 1e9, z[1] / 1e9]; } },
		},
		axes: [{ values: function (u, v) { return v.map(function (s) { return s + " s"; }); } },
			{ label: ylabel, size: 60 }].concat(pd.axes),
		series: pd.opts,
		legend: { show: true, live: false },
		cursor: { drag: { x: true, y: false, setScale: false }, points: { show: false } },
		hooks: {
			draw: [drawShades, drawMarkers, drawOnsets],
			setSelect: [function (u) {
				if (u.select.width < 2) return;
				var f = Math.max(0, Math.round(u.posToVal(u.select.left, "x") * 1e9));
				var t = Math.round(u.posToVal(u.select.left + u.select.width, "x") * 1e9);
				if (t <= f) return;
				if (pendingShift || $("selb").checked) {
					st.b = [f, t];
					strobeWhere.setRest(0);	/* the diff is A→B again */
					if (st.tab !== "dflame") showTab("diff");
				}
				else st.a = [f, t];
				u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
				hashWrite();
				u.redraw(false);
				loadViews();
			}]
		}
	};
	Object.keys(scales).forEach(function (k) { opts.scales[k] = scales[k]; });
	plot = new uPlot(opts, pd.data, box);
	/* the right-hand axes' labels, as uPlot took them (the browser test
	   reads them) */
	box.dataset.xsums = JSON.stringify((series.extra || []).map(function (x) {
		return x.values.reduce(function (t, v) { return t + (v || 0); }, 0);
	}));
	box.dataset.raxes = JSON.stringify(plot.axes.filter(function (a) { return a.side === 1; })
		.map(function (a) { return a.label; }));
	shadeLegend();
	/* the marker lane sits right under the plot, above the legend */
	plot.root.insertBefore($("markers"), plot.root.querySelector(".u-legend"));
	plot.root.insertBefore($("phases"), plot.root.querySelector(".u-legend"));
	plot.over.addEventListener("mousedown", function (e) { pendingShift = e.shiftKey; }, true);
	plot.over.addEventListener("wheel", wheelZoom, { passive: false });
	drawMarkers(plot);
	drawStrip();
}

/* the wheel zooms the timeline around the pointer; the series are asked
   again for the new range (more detail: the buckets follow the range) */
var wheelTimer = null;
function wheelZoom(e) {
	e.preventDefault();
	var u = plot, len = sess.duration_ns || 1;
	var z = st.z || [0, len], at = u.posToVal(e.offsetX, "x") * 1e9;
	var k = e.deltaY < 0 ? 0.8 : 1.25;
	var f = Math.round(at - (at - z[0]) * k), t = Math.round(at + (z[1] - at) * k);
	f = Math.max(0, f); t = Math.min(len, t);
	if (t - f < 1000) return;
	st.z = f <= 0 && t >= len ? null : [f, t];
	hashWrite();
	clearTimeout(wheelTimer);
	wheelTimer = setTimeout(loadSeries, 120);
}

/* markers: clustered by pixel so that a thousand stay readable; the names
   of a cluster on hover, as text */
var clusters = [];

function drawMarkers(u) {
	var c = $("markers"), ctx = c.getContext("2d");
	var w = $("plot").clientWidth || 1, dpr = window.devicePixelRatio || 1;
	c.width = w * dpr; c.height = 18 * dpr;
	ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
	ctx.clearRect(0, 0, w, 18);
	clusters = [];
	if (!u || !series) return;
	var off = u.over.offsetLeft, ow = u.over.clientWidth || u.bbox.width / dpr;
	var ms = (series.markers || []).slice().sort(function (a, b) { return a.time_ns - b.time_ns; });
	ctx.font = "10px system-ui, sans-serif";
	/* a tick closer than 8 px to the last cluster (or to its count's
	   label) joins it */
	ms.forEach(function (m) {
		var x = off + u.valToPos(m.time_ns / 1e9, "x");
		if (x < off - 1 || x > off + ow + 1) return;
		var last = clusters[clusters.length - 1];
		var room = last ? 8 + (last.items.length > 1 ? ctx.measureText(String(last.items.length + 1)).width + 4 : 0) : 0;
		if (last && x - last.x < room) { last.items.push(m); last.x1 = x; }
		else clusters.push({ x: x, x1: x, items: [m] });
	});
	ctx.textBaseline = "middle";
	clusters.forEach(function (k) {
		ctx.fillStyle = k.items.length > 1 ? "#6a1b9a" : "#333";
		ctx.fillRect(Math.round(k.x), 1, 2, 16);
		if (k.items.length > 1) ctx.fillText(String(k.items.length), k.x + 3, 9);
	});
}

function markerHover(e) {
	var c = $("markers"), tip = $("tip");
	var x = e.clientX - c.getBoundingClientRect().left, best = null;
	clusters.forEach(function (k) {
		var d = x < k.x ? k.x - x : x > k.x1 + 20 ? x - k.x1 - 20 : 0;
		if (d <= 4 && (!best || d < best.d)) { best = k; best.d = d; }
	});
	if (!best) { tip.hidden = true; return; }
	var lines = best.items.slice(0, 40).map(function (m) { return fmtT(m.time_ns) + "  " + m.name; });
	if (best.items.length > 40) lines.push("… and " + (best.items.length - 40) + " more");
	if (best.items.length > 1) lines.unshift(best.items.length + " markers:");
	tip.textContent = lines.join("\n");
	tip.hidden = false;
	tip.style.left = Math.min(x + 20, c.clientWidth - 300) + "px";
	tip.style.top = (c.offsetTop + 20) + "px";
}

/* ---- onsets and phases (phases.js draws them): those of the series
   shown (its event or metric, by and top; the zoom's range, else the
   whole session, as strobe onsets without --from/--to), asked again only
   when these change */

var onsets = null, phases = null, onsetsKey = null, onsetsSeq = 0;

function onsetsParams() {
	var p = { session: st.s, by: st.by === "none" ? null : st.by, top: 10 };
	if (st.ev.slice(0, 2) === "m:") p.metric = st.ev.slice(2);
	else p.event = st.ev;
	if (st.z) { p.from = st.z[0]; p.to = st.z[1]; }
	return p;
}

/* never rejects; #phases' data-busy is set while it loads (the browser
   test waits on it) */
function loadOnsets() {
	var box = $("phases"), seq = ++onsetsSeq;
	if (!st.on || !sess || st.h !== null) {
		onsets = phases = null; onsetsKey = null;
		box.hidden = true;
		clear(box);
		delete box.dataset.busy;
		if (plot) plot.redraw(false);
		if (st.on && st.h !== null) status("onsets and phases: not served for the fleet", "onsets");
		return Promise.resolve();
	}
	box.hidden = false;
	var op = onsetsParams(), pp = Object.assign({}, op, { by: st.rby, top: 3 });
	var key = JSON.stringify([op, pp]);
	if (key === onsetsKey) { drawStrip(); return Promise.resolve(); }
	box.dataset.busy = "1";
	return api("onsets", op).then(function (r) {
		if (seq !== onsetsSeq) return null;
		onsets = r.rows || [];
		if (plot) plot.redraw(false);
		return api("phases", pp);
	}).then(function (r) {
		if (seq !== onsetsSeq || !r) return;
		phases = r.rows || [];
		onsetsKey = key;
		drawStrip();
		status("", "onsets");
	}).catch(function (e) {
		if (seq === onsetsSeq) fail(e, "onsets");
	}).then(function () { if (seq === onsetsSeq) delete box.dataset.busy; });
}

/* a series' colour in the plot (plotData's) */
function colorOf(title) {
	var i = (series && series.series || []).map(function (x) { return x.title; }).indexOf(title);
	return i < 0 ? "#333" : palette[i % palette.length];
}

/* #plot's data-onsets: how many are drawn (the browser test reads it) */
function drawOnsets(u) {
	var n = st.on && onsets && series && sess ? strobePhases.drawOnsets(u, onsets, sess.start_ns || 0, colorOf) : 0;
	$("plot").dataset.onsets = String(n);
}

function drawStrip() {
	var box = $("phases");
	if (!st.on || !plot || !phases) { clear(box); return; }
	strobePhases.renderStrip(box, plot, phases, sess.start_ns || 0, $("tip"), selectPhase);
}

/* a phase as window A; shift: the one before as A and it as B, their diff */
function selectPhase(i, shift) {
	var s = sess.start_ns || 0;
	function w(p) { return [Math.max(0, p.from_ns - s), p.to_ns - s]; }
	if (shift && i > 0) {
		st.a = w(phases[i - 1]);
		st.b = w(phases[i]);
		strobeWhere.setRest(0);
		if (st.tab !== "dflame") showTab("diff");
	} else {
		st.a = w(phases[i]);
	}
	hashWrite();
	if (plot) plot.redraw(false);
	loadViews();
}

/* ---- the window's views */

var folded = { a: null, b: null }, viewSeq = 0;

function winParams(w) { return { from: w[0], to: w[1] }; }

var whereRefused = strobeWhere.refused;

function emptyPane(id) {
	return function (m) { clear($(id)); $(id).appendChild(el("div", "empty", m)); };
}

function loadViews() {
	var seq = ++viewSeq;
	if (!sess) return;
	document.body.dataset.busy = "1";
	var a = st.a || [0, sess.duration_ns || 1];
	var ps = [];
	/* the metric condition (where.js): added to each request below but
	   the source lines' (/api/lines takes none); where vs rest: the diff
	   of window A where it fails (A) and holds (B) */
	var wp = strobeWhere.params(false), rest = strobeWhere.rest(), bad = strobeWhere.problem();
	if (bad) {
		strobeWhere.note(bad, true);
		wp = {}; rest = false;
	} else if (!strobeWhere.on() && st.h === null) strobeWhere.note("");
	/* the table shows every metric the session's counters cover (report's
	   -M, 16 at most) */
	var ms = (sess.metrics || []).slice(0, 16);
	$("table").dataset.metrics = ms.join(",");
	ps.push(api("report", Object.assign({ session: st.s, by: st.rby, limit: 100, metric: ms }, winParams(a), wp))
		.then(function (r) {
			if (seq !== viewSeq) return;
			renderTable($("table"), r, false);
			if (wp.where) strobeWhere.note((r.meta && r.meta.where) || "", false);
		}).catch(function (e) { if (seq === viewSeq) whereRefused(e, emptyPane("table")); }));
	if (wp.where) {
		var z = st.z || [0, sess.duration_ns || 1];
		ps.push(strobeWhere.loadShade(api, st.s, a[0], a[1],
			seriesParams().buckets * (a[1] - a[0]) / Math.max(1, z[1] - z[0])).then(function () {
			if (seq !== viewSeq) return;
			if (series) shadeLegend();
			if (plot) plot.redraw(false);
		}));
	} else {
		strobeWhere.loadShade(api);
		if (series) shadeLegend();
		if (plot) plot.redraw(false);
	}
	if (sess.has_stacks) {
		var fp = { session: st.s, event: st.fev === "samples" ? null : st.fev };
		/* colour by a metric: a JSON reply, the same folded text and each
		   frame's value and colour (strobe flamegraph --color-by's) */
		ps.push(api("flame", Object.assign({ color_by: st.fcol || null }, fp, winParams(a), wp), !st.fcol).then(function (t) {
			if (seq !== viewSeq) return;
			folded.a = st.fcol ? strobeFlame.metricTree(t) : buildTree(t);
			flameA.set(folded.a, null);
			renderCallTree();
			/* the differential flame graph: B against A, or where vs
			   rest: window A where the condition holds (the flame above)
			   against where it fails */
			if (rest) return api("flame", Object.assign({}, fp, winParams(a), strobeWhere.params(true)), true).then(function (tr) {
				if (seq !== viewSeq) return;
				folded.b = buildTree(tr);
				flameD.set(folded.a, folded.b);
			});
			if (st.b) return api("flame", Object.assign({}, fp, winParams(st.b), wp), true).then(function (tb) {
				if (seq !== viewSeq) return;
				folded.b = buildTree(tb);
				flameD.set(folded.b, folded.a);
			});
			folded.b = null;
			flameD.set(null, null);
		}).catch(function (e) {
			if (seq !== viewSeq) return;
			whereRefused(e, function (m) {
				folded.a = folded.b = null;
				flameA.set(null, null); flameD.set(null, null);
				renderCallTree();
			});
		}));
	} else {
		[$("flame"), $("tree")].forEach(function (p) { p.dataset.empty = "1"; });
		folded.a = folded.b = null;
		flameA.set(null, null); flameD.set(null, null);
		renderCallTree();
	}
	ps.push(loadLines(a));
	if (rest) {
		ps.push(api("diff", Object.assign({ session: st.s, by: st.rby === "line" ? "symbol" : st.rby, limit: 100 },
			winParams(a), wp)).then(function (r) {
			if (seq !== viewSeq) return;
			var box = $("diff"), t = el("div");
			clear(box);
			box.appendChild(el("div", "lhead", strobeWhere.restHead(r.meta, st.a ? "window A" : "the whole session")));
			box.appendChild(t);
			renderTable(t, r, true);
		}).catch(function (e) { if (seq === viewSeq) whereRefused(e, emptyPane("diff")); }));
	} else if (st.b) {
		ps.push(api("diff", Object.assign({ session: st.s, a_from: a[0], a_to: a[1], b_from: st.b[0], b_to: st.b[1],
			by: st.rby === "line" ? "symbol" : st.rby, limit: 100 }, wp))
			.then(function (r) { if (seq === viewSeq) renderTable($("diff"), r, true); })
			.catch(function (e) { if (seq === viewSeq) whereRefused(e, emptyPane("diff")); }));
	} else {
		clear($("diff"));
		$("diff").appendChild(el("div", "empty", "shift-drag on the timeline (or tick 'select B' and drag) to set window B" +
			(strobeWhere.on() ? ", or press 'where vs rest'" : "")));
	}
	/* data-busy: set while this window's views load (the browser test
	   waits on it) */
	function done() { if (seq === viewSeq) delete document.body.dataset.busy; }
	return Promise.all(ps).then(function () { if (seq === viewSeq) status("", "views"); done(); })
		.catch(function (e) { fail(e, "views"); done(); });
}

/* ---- the source-line view: one symbol's lines in window A, as strobe
   report --by line --binary B --symbol S computes them */

var linesSeq = 0;

function openLines(binary, symbol) {
	st.lb = binary; st.ls = symbol;
	showTab("lines");
	loadLines(st.a || [0, sess.duration_ns || 1]);
}

/* never rejects: what goes wrong shows in the pane, in one line (a 404
   from a server without /api/lines too); the pane's data-busy is set
   while it loads (the browser test waits on it) */
function loadLines(w) {
	var box = $("lines"), seq = ++linesSeq;
	function done() { if (seq === linesSeq) delete box.dataset.busy; }
	if (st.ls === null) {
		done();
		clear(box);
		box.appendChild(el("div", "empty", "click a symbol in the hot-spot table to see its source lines"));
		return Promise.resolve();
	}
	if (st.ls === "[unknown]") {
		done();
		clear(box);
		box.appendChild(el("div", "empty", "source lines: [unknown] is code with no symbol, so no lines: pick a named symbol"));
		return Promise.resolve();
	}
	var p = { session: st.s, binary: st.lb || null, symbol: st.ls };
	box.dataset.busy = "1";
	return api("lines", Object.assign(p, winParams(w))).then(function (r) {
		if (seq !== linesSeq) return;
		clear(box);
		box.appendChild(el("div", "lhead", "source lines of " + st.ls + (st.lb ? " in " + st.lb : "") +
			", window " + (st.a ? "A" : "the whole session") +
			(strobeWhere.on() ? ", all its samples (the source lines take no where condition)" : "")));
		var t = el("div");
		box.appendChild(t);
		renderTable(t, r, true);
	}).catch(function (e) {
		if (seq !== linesSeq) return;
		clear(box);
		var m = String(e && e.message || e);
		box.appendChild(el("div", "empty", e && e.status === 404 && /no such page/.test(m) ?
			"source lines: this strobe ui does not serve them (/api/lines): run a newer strobe" :
			"source lines: " + m));
	}).then(done);
}

/* tables.js draws the tables; a click on a symbol or binary adds its
   series to the timeline (a symbol also opens its source lines) */
function renderTable(box, r, plain) {
	strobeTables.render(box, r, plain ? null : function (c, v, x) {
		addSeries(c, v);
		if (c === "symbol") openLines(x.binary ? String(x.binary) : null, v);
	});
}

/* the API's series cannot filter by one symbol: ask by=symbol (or binary)
   with the largest top it serves (64) and keep the one series of that
   name (a flat line at 0 when it is not among them) */
function addSeries(by, name) {
	var key = by + ":" + name;
	if (st.x.indexOf(key) < 0) st.x.push(key);
	if (st.x.length > 4) st.x.shift();
	hashWrite();
	loadSeries();
}

/* ---- the flame graphs and the search (flame.js draws them) */

/* the colour-by choices: none, the metrics file's metrics the session's
   events cover, and each counting event per sample */
function fillColourBy(r) {
	var fc = $("fcol"), vals = [""];
	clear(fc);
	fc.appendChild(el("option", null, "name (no metric)"));
	fc.options[0].value = "";
	(r.metrics || []).forEach(function (m) {
		var o = el("option", null, m); o.value = m; fc.appendChild(o); vals.push(m);
	});
	(r.events || []).forEach(function (e) {
		if (e.indexOf('"') >= 0) return;
		var x = '"' + e + '" / samples', o = el("option", null, e + " per sample");
		o.value = x; fc.appendChild(o); vals.push(x);
	});
	if (vals.indexOf(st.fcol) < 0) st.fcol = "";
	fc.value = st.fcol;
}

function noStacks() {
	return sess && !sess.has_stacks ? "this session has no call stacks: record with -g" : "no stacks in this window";
}

function searchQuery() { return $("search").value; }

var flameA = new strobeFlame.Flame($("flame"), false, noStacks, searchQuery);
var flameD = new strobeFlame.Flame($("dflame"), true, function () {
	return st.b ? "no stacks in window B" : "select windows A and B (shift-drag) for a differential flame graph";
}, searchQuery);

/* the share of the samples whose stack has a frame matching the search */
function updateMatch() {
	var q = searchQuery(), m = $("match");
	if (!q || !folded.a) { m.textContent = ""; return; }
	var hit = strobeFlame.matchCount(folded.a, q);
	m.textContent = "matches " + hit + " of " + folded.a.v + " (" + (folded.a.v ? (hit / folded.a.v * 100).toFixed(2) : "0") + "%)";
}

/* ---- tabs, controls, keys */

function showTab(t) {
	st.tab = t;
	Array.prototype.forEach.call(document.querySelectorAll("#tabs button"), function (b) {
		b.classList.toggle("on", b.dataset.tab === t);
	});
	Array.prototype.forEach.call(document.querySelectorAll(".pane"), function (p) {
		p.classList.toggle("on", p.id === t);
	});
	if (t === "flame" && flameA.dirty) flameA.draw();
	if (t === "dflame" && flameD.dirty) flameD.draw();
	hashWrite();
}

/* Escape: the windows and the zoom; the reset button also the series
   added from the table */
function resetAll(e) {
	var reload = st.z !== null || (e && e.type === "click" && st.x.length);
	if (e && e.type === "click") { st.x = []; st.lb = st.ls = null; }
	st.a = st.b = st.z = null;
	flameA.zoom = flameD.zoom = null;
	$("search").value = "";
	$("selb").checked = false;
	hashWrite();
	if (reload) loadSeries(); else if (plot) plot.redraw(false);
	loadViews();
}

function wire() {
	$("session").addEventListener("change", function () {
		var v = JSON.parse(this.value);
		/* busy from now until the new session's views are in (not only
		   while they load): its series loads first; ++viewSeq keeps a
		   view still loading for the old one from clearing it */
		document.body.dataset.busy = "1";
		++viewSeq;
		st.h = v[0]; st.s = v[1]; st.a = st.b = st.z = null; st.x = []; st.lb = st.ls = null;
		loadSession().catch(function (e) { fail(e); delete document.body.dataset.busy; });
	});
	$("event").addEventListener("change", function () {
		var v = this.value;
		st.ev = v.slice(0, 3) === "ev:" ? v.slice(3) : v;
		hashWrite(); loadSeries();
	});
	$("by").addEventListener("change", function () { st.by = this.value; hashWrite(); loadSeries(); });
	$("stacked").addEventListener("change", function () { st.stk = this.checked ? 1 : 0; hashWrite(); drawPlot(); });
	$("onsets").addEventListener("change", function () { st.on = this.checked ? 1 : 0; hashWrite(); loadOnsets(); });
	$("rby").addEventListener("change", function () { st.rby = this.value; hashWrite(); loadViews(); loadOnsets(); });
	$("fev").addEventListener("change", function () { st.fev = this.value; hashWrite(); loadViews(); });
	$("fcol").addEventListener("change", function () { st.fcol = this.value; hashWrite(); loadViews(); });
	$("zoomsel").addEventListener("click", function () {
		if (!st.a) { status("select window A first: drag on the timeline"); return; }
		st.z = st.a.slice(); hashWrite(); loadSeries();
	});
	$("reset").addEventListener("click", resetAll);
	strobeWhere.wire(function (what) {
		if (what === "rest") { st.b = null; if (st.tab !== "dflame") showTab("diff"); }
		hashWrite();
		loadViews();
	});
	$("search").addEventListener("input", function () {
		updateMatch();
		if (st.tab === "flame") flameA.draw(); else flameA.dirty = true;
		if (st.tab === "dflame") flameD.draw(); else flameD.dirty = true;
	});
	Array.prototype.forEach.call(document.querySelectorAll("#tabs button"), function (b) {
		b.addEventListener("click", function () { showTab(b.dataset.tab); });
	});
	$("markers").addEventListener("mousemove", markerHover);
	$("markers").addEventListener("mouseleave", function () { $("tip").hidden = true; });
	document.addEventListener("keydown", function (e) {
		if (e.key !== "Escape") return;
		if (st.tab === "flame" && flameA.zoom) { flameA.zoom = null; flameA.draw(); return; }
		if (st.tab === "dflame" && flameD.zoom) { flameD.zoom = null; flameD.draw(); return; }
		resetAll();
	});
	var rt = null;
	window.addEventListener("resize", function () {
		clearTimeout(rt);
		rt = setTimeout(function () { if (series) loadSeries(); flameA.dirty = flameD.dirty = true; showTab(st.tab); }, 200);
	});
}

hashRead();
wire();
showTab(["table", "flame", "tree", "diff", "dflame", "lines"].indexOf(st.tab) >= 0 ? st.tab : "table");
loadSessions().catch(function (e) { fail(e); delete document.body.dataset.busy; });
})();
