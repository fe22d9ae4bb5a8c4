/*
 * phases.js - the change points and phases of the timeline (strobe ui's
 * "onsets" box): the onsets of /api/onsets (strobe onsets --format json)
 * as dashed vertical lines on the plot in their series' colours, each
 * labelled with its shift, and the phases of /api/phases (strobe phases
 * --format json) as a strip of bands under the timeline, one per phase
 * with its number; hovering a band tells its window, levels, hot spots
 * and growth, clicking it makes it window A, shift-clicking makes the
 * phase before it A and it B (their diff).  Their times are
 * CLOCK_MONOTONIC: start is the session's start_ns (/api/session).
 * Names from the data go in as text only (dom.js).  Exports strobePhases.
 */
var strobePhases = (function () {
"use strict";

var el = strobeDom.el, clear = strobeDom.clear;
var bands = ["#e3f2fd", "#fff3e0", "#e8f5e9", "#f3e5f5", "#fffde7", "#e0f7fa"];

function shiftText(s) {
	return s === null || s === undefined ? "from 0" : (s >= 0 ? "+" : "") + Math.round(s * 100) + "%";
}

function fmtT(ns) {
	var a = Math.abs(ns);
	if (a >= 1e9) return (ns / 1e9).toFixed(3) + " s";
	if (a >= 1e6) return (ns / 1e6).toFixed(2) + " ms";
	return (ns / 1e3).toFixed(1) + " µs";
}

/* The onsets on uPlot u's canvas (a draw hook: canvas pixels), each in
   colorOf(its series' title), its shift on the first of three rows of
   labels where it overlaps no other (else left out: hover the strip);
   how many are within the plot's range. */
function drawOnsets(u, rows, start, colorOf) {
	var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
	var left = u.bbox.left, right = left + u.bbox.width, px = window.devicePixelRatio || 1;
	var n = 0, ends = [-1e9, -1e9, -1e9];
	ctx.save();
	ctx.font = Math.round(10 * px) + "px system-ui, sans-serif";
	ctx.textBaseline = "top";
	(rows || []).slice().sort(function (a, b) { return a.time_ns - b.time_ns; }).forEach(function (o) {
		var x = Math.round(u.valToPos((o.time_ns - start) / 1e9, "x", true));
		if (x < left || x > right) return;
		n++;
		var c = colorOf(o.series), t = shiftText(o.shift), tw = ctx.measureText(t).width;
		ctx.strokeStyle = c;
		ctx.fillStyle = c;
		ctx.lineWidth = 1.5 * px;
		ctx.setLineDash([5 * px, 3 * px]);
		ctx.beginPath();
		ctx.moveTo(x, top);
		ctx.lineTo(x, top + h);
		ctx.stroke();
		for (var r = 0; r < ends.length; r++) {
			if (x + 3 * px < ends[r]) continue;
			ctx.fillText(t, x + 3 * px, top + (2 + 12 * r) * px);
			ends[r] = x + 3 * px + tw + 4 * px;
			break;
		}
	});
	ctx.restore();
	return n;
}

/* The tooltip's text of phase row p. */
function phaseText(p, start) {
	var lines = ["phase " + p.phase + ": " + fmtT(p.from_ns - start) + " – " + fmtT(p.to_ns - start) +
		" (" + fmtT(p.to_ns - p.from_ns) + "), " + p.samples + " samples",
		"levels: " + (p.levels || "")];
	(p.top || "").split("; ").forEach(function (t, i) { if (t) lines.push((i ? "     " : "top: ") + t); });
	if (p.grew) lines.push("grew most: " + p.grew + " +" + Number(p.grew_delta_percent).toFixed(1) + " points");
	if (p.shrank) lines.push("shrank most: " + p.shrank + " " + Number(p.shrank_delta_percent).toFixed(1) + " points");
	lines.push("click: window A = this phase" + (p.phase > 0 ? "; shift-click: A = phase " + (p.phase - 1) + ", B = this one" : ""));
	return lines.join("\n");
}

/*
 * The strip in box under uPlot u: a band per phase row, placed by its
 * window (relative to start).  Hovering a band shows its phaseText() in
 * tip (an absolutely placed element of box's offset parent); clicking it
 * calls select(the row's index, shift held).
 */
function renderStrip(box, u, rows, start, tip, select) {
	clear(box);
	if (!u || !rows) return;
	var off = u.over.offsetLeft, w = u.over.clientWidth;
	box.style.paddingLeft = "0";
	rows.forEach(function (p, i) {
		var x0 = u.valToPos((p.from_ns - start) / 1e9, "x"), x1 = u.valToPos((p.to_ns - start) / 1e9, "x");
		x0 = Math.max(0, x0); x1 = Math.min(w, x1);
		if (x1 <= x0) return;
		var b = el("div", "band", String(p.phase));
		b.style.left = (off + x0) + "px";
		b.style.width = Math.max(1, x1 - x0 - 1) + "px";
		b.style.background = bands[i % bands.length];
		b.dataset.phase = String(p.phase);
		b.dataset.from = String(p.from_ns - start);
		b.dataset.to = String(p.to_ns - start);
		b.addEventListener("click", function (e) { select(i, e.shiftKey); });
		b.addEventListener("mousemove", function (e) {
			var x = e.clientX - box.getBoundingClientRect().left;
			tip.textContent = phaseText(p, start);
			tip.hidden = false;
			tip.style.left = Math.max(0, Math.min(x + 20, box.clientWidth - 480)) + "px";
			tip.style.top = (box.offsetTop + 24) + "px";
		});
		b.addEventListener("mouseleave", function () { tip.hidden = true; });
		box.appendChild(b);
	});
	if (!box.firstChild) box.appendChild(el("div", "empty", "no phase in this range"));
}

return { drawOnsets: drawOnsets, renderStrip: renderStrip, shiftText: shiftText };
})();
