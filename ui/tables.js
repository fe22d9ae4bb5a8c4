/*
 * tables.js - the tables of the page of 'strobe ui' (hot spots, diff, a
 * symbol's source lines): whatever columns the API sends, in their order,
 * sortable by a click on a column, the percent as a bar, every cell text
 * (dom.js), never HTML.  Exports strobeTables.render.
 */
var strobeTables = (function () {
"use strict";

var el = strobeDom.el, clear = strobeDom.clear;

var textCols = { binary: 1, symbol: 1, line: 1, file: 1, source: 1, comm: 1, host: 1, cgroup: 1 };

/* r's rows into box; link(column, value, row) called on a click on a
   symbol or binary cell, NULL for a table without links (the diff's and
   the lines') */
function render(box, r, link) {
	clear(box);
	var rows = r.rows || [];
	if (!rows.length) { box.appendChild(el("div", "empty", "no samples in this window")); return; }
	var cols = Object.keys(rows[0]);
	var sortCol = null, sortDesc = true;
	var maxPct = 0;
	rows.forEach(function (x) { maxPct = Math.max(maxPct, Math.abs(Number(x.percent !== undefined ? x.percent : x.b_percent) || 0)); });
	var t = el("table", "grid"), thead = el("thead"), tb = el("tbody"), hr = el("tr");
	cols.forEach(function (c) {
		var th = el("th", textCols[c] ? "s" : null, c === "within_noise" ? "noise" : c);
		th.addEventListener("click", function () {
			sortDesc = sortCol === c ? !sortDesc : !textCols[c];
			sortCol = c;
			fill(rows.slice().sort(function (p, q) {
				var x = p[c], y = q[c];
				var d = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
				return sortDesc ? -d : d;
			}));
		});
		hr.appendChild(th);
	});
	thead.appendChild(hr);
	t.appendChild(thead);
	t.appendChild(tb);
	function fill(rs) {
		clear(tb);
		rs.forEach(function (x) {
			var tr = el("tr");
			cols.forEach(function (c) {
				var v = x[c], td;
				if (c === "within_noise") {
					td = el("td", "noise", Number(v) ? "~" : "");
					td.dataset.v = String(v);
				} else if (c === "percent" || c === "b_percent") {
					td = el("td", "pct");
					var bar = el("div", "barfill");
					bar.style.width = (maxPct ? Math.abs(Number(v)) / maxPct * 100 : 0) + "%";
					td.appendChild(bar);
					td.appendChild(el("span", null, v));
				} else {
					td = el("td", textCols[c] ? "s" : null, v);
					if (c === "delta_percent") td.className = Number(v) > 0 ? "grew" : Number(v) < 0 ? "shrank" : "";
					if (link && (c === "symbol" || c === "binary") && v) {
						td.className += " link";
						td.title = "add the series of this " + c + " to the timeline" +
							(c === "symbol" ? ", and show its source lines" : "");
						td.addEventListener("click", function () { link(c, String(v), x); });
					}
				}
				td.dataset.col = c;
				tr.appendChild(td);
			});
			tb.appendChild(tr);
		});
	}
	fill(rows);
	box.appendChild(t);
}

return { render: render };
})();
