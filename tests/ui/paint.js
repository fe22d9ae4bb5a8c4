/*
 * paint.js - the first paint of 'strobe ui' in Debian's chromium, for
 * bench/ui.sh (issue 32): loads URL in headless chromium (playwright-core)
 * and times, in the page's own clock (performance.now(), 0 at the
 * navigation's start), the moment the timeline canvas has ink and the
 * hot-spot table has rows.
 *
 * usage: node paint.js URL [RUNS]   (default 3; each run a fresh page)
 * environment: CHROMIUM (default /usr/bin/chromium).
 * Prints one line per run:
 *     paint N: first paint 0.812 s (canvas 0.640 s, table 0.812 s, all views
 *     0.950 s, responseEnd 0.004 s)
 * (all views: the flame graph and call tree too, when the page's data-busy
 * is gone).
 * Nothing is asserted: a measurement, not a test (its targets live in
 * doc/PERFORMANCE.md).
 */
"use strict";
const { launch } = require("./chromium");
const fs = require("fs");

const url = process.argv[2];
const runs = Number(process.argv[3] || 3);
if (!url) {
	console.error("usage: node paint.js URL [RUNS]");
	process.exit(2);
}

/* runs in the page: polls each animation frame until the canvas is inked,
   the table filled and every view loaded (the page's data-busy gone),
   noting when each first became true, then sets window.__paint */
function watch() {
	{
		let canvas = 0, table = 0;
		function inked() {
			const c = document.querySelector("#plot canvas");
			if (!c || !c.width) return false;
			const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
			let n = 0;
			for (let i = 3; i < d.length && n < 1000; i += 4) if (d[i] > 0) n++;
			return n >= 1000;
		}
		function tick() {
			const now = performance.now();
			if (!canvas && inked()) canvas = now;
			if (!table && document.querySelector("#table table tbody tr")) table = now;
			if (canvas && table && document.body && !document.body.dataset.busy) {
				const nav = performance.getEntriesByType("navigation")[0];
				window.__paint = { canvas, table, views: now,
					responseEnd: nav ? nav.responseEnd : 0 };
				return;
			}
			requestAnimationFrame(tick);
		}
		requestAnimationFrame(tick);
	}
}

(async () => {
	const { ctx, profile } = await launch("strobe-ui-paint-");
	try {
		for (let i = 1; i <= runs; i++) {
			const page = await ctx.newPage();
			/* the watcher starts with the page's first script, before app.js */
			await page.addInitScript("(" + watch.toString() + ")();");
			await page.goto(url, { waitUntil: "commit" });
			const r = await page.waitForFunction(() => window.__paint, null, { timeout: 120000 })
				.then((h) => h.jsonValue());
			const f = (ms) => (ms / 1000).toFixed(3) + " s";
			console.log("paint " + i + ": first paint " + f(Math.max(r.canvas, r.table)) +
				" (canvas " + f(r.canvas) + ", table " + f(r.table) +
				", all views " + f(r.views) +
				", responseEnd " + f(r.responseEnd) + ")");
			await page.close();
		}
	} finally {
		await ctx.close();
		fs.rmSync(profile, { recursive: true, force: true });
	}
})().catch((e) => { console.error("paint.js: " + e.message); process.exit(1); });
