/*
 * drive.js - the browser half of tests/t0952-ui-browser.sh: drives Debian's
 * chromium (headless, through playwright-core) over a running 'strobe ui'
 * and checks the page against the command line.
 *
 * usage: node drive.js URL
 * environment: STROBE (the strobe binary, for 'strobe report' of the
 *   window the page shows), STROBE_SESSION (the session id), SHOTS (a
 *   directory for the screenshots ui-*.png, optional), HOSTILE (a name that
 *   must show as text), CHROMIUM (default /usr/bin/chromium).
 * Prints "ok: ..." lines; exits 1 with "FAIL: ..." on the first failure.
 */
"use strict";
const { launch, reportFail, closeBrowser } = require("./chromium");
const { execFileSync } = require("child_process");
const path = require("path");
const http = require("http");

const url = process.argv[2];
const strobe = process.env.STROBE;
const sid = process.env.STROBE_SESSION;
const shots = process.env.SHOTS || "";
const hostile = process.env.HOSTILE || "<img src=x onerror=alert(1)>";

let pageRef = null;
const errors = [];
function fail(msg) { throw new Error(msg); }
function ok(msg) { console.log("ok: " + msg); }

/* the window's hot spots as 'strobe report' computes them: the page's
   windows are [a, b) as the API's, report's --to is inclusive (whole ns:
   report_opts_window), so --to b-1 is the same window, to the metrics'
   durations */
function reportRows(a, b, metrics) {
	const args = ["report", "--session", sid, "--from", a + "ns", "--to", (BigInt(b) - 1n) + "ns",
		"--by", "symbol", "--limit", "100", "--format", "json"];
	if (metrics) args.push("-M", metrics);
	const out = execFileSync(strobe, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
	/* the page shows a null cell empty */
	return JSON.parse(out).rows.map((r) => Object.keys(r).map((k) => r[k] === null ? "" : String(r[k])));
}

/* the rows of a table pane as text, cell by cell */
async function tableRows(page, pane) {
	return page.$$eval(pane + " table tbody tr", (trs) => trs.map((tr) =>
		Array.from(tr.children).map((td) => td.dataset.col === "within_noise" ? td.dataset.v :
			(td.querySelector("span") || td).textContent)));
}

async function settled(page) {
	await page.waitForFunction(() => !document.body.dataset.busy, null, { timeout: 30000 });
}

async function drag(page, f0, f1, shift) {
	const box = await page.locator("#plot .u-over").boundingBox();
	if (!box) fail("no plot area");
	const y = box.y + box.height / 2;
	if (shift) await page.keyboard.down("Shift");
	await page.mouse.move(box.x + box.width * f0, y);
	await page.mouse.down();
	for (let i = 1; i <= 10; i++)
		await page.mouse.move(box.x + box.width * (f0 + (f1 - f0) * i / 10), y);
	await page.mouse.up();
	if (shift) await page.keyboard.up("Shift");
	await settled(page);
}

async function win(page, w) {
	return page.$eval("#sel", (e, w) => [e.dataset[w + "From"], e.dataset[w + "To"]], w);
}

function noToken(u) {
	return new Promise((resolve, reject) => {
		const p = new URL(u);
		http.get({ host: p.hostname, port: p.port, path: "/api/sessions" }, (r) => {
			r.resume(); resolve(r.statusCode);
		}).on("error", reject);
	});
}

(async () => {
	const { ctx, profile } = await launch("strobe-ui-chromium-");
	let dialogs = 0;
	try {
		const page = ctx.pages()[0] || await ctx.newPage();
		pageRef = page;
		page.on("dialog", (d) => { dialogs++; d.dismiss().catch(() => {}); });
		page.on("pageerror", (e) => errors.push(String(e)));
		page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
		await page.goto(url);
		await page.waitForSelector("#plot canvas", { timeout: 30000 });
		await settled(page);
		const status = await page.$eval("#status", (e) => e.textContent);
		if (status) fail("the page says: " + status);

		/* the timeline is drawn: pixels that are not blank */
		const inked = await page.$eval("#plot canvas", (c) => {
			const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
			let n = 0;
			for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
			return n;
		});
		if (inked < 1000) fail("the timeline canvas is blank (" + inked + " pixels drawn)");
		ok("timeline drawn (" + inked + " pixels)");
		if (shots) await page.screenshot({ path: path.join(shots, "ui-timeline.png") });

		/* brush window A with real mouse events */
		await drag(page, 0.25, 0.6, false);
		const [af, at] = await win(page, "a");
		if (!af || !at || !(Number(at) > Number(af))) fail("the drag selected no window: '" + af + "' '" + at + "'");
		const h = new URLSearchParams((await page.evaluate(() => location.hash)).slice(1));
		if (h.get("a") !== af + "-" + at) fail("the URL does not hold window A: " + h.get("a"));
		ok("drag selected A = [" + af + ", " + at + ") ns");

		const rows = await tableRows(page, "#table");
		if (!rows.length) fail("no rows in the hot-spot table for A");
		const metrics = await page.$eval("#table", (e) => e.dataset.metrics || "");
		const want = reportRows(af, at, metrics);
		if (JSON.stringify(rows) !== JSON.stringify(want))
			fail("table rows differ from strobe report --from " + af + "ns --to " + (BigInt(at) - 1n) + "ns:\n page:   " +
				JSON.stringify(rows.slice(0, 5)) + "\n report: " + JSON.stringify(want.slice(0, 5)));
		ok("hot-spot table = strobe report for A (" + rows.length + " rows" +
			(metrics ? ", -M " + metrics : "") + ")");
		if (shots) await page.screenshot({ path: path.join(shots, "ui-hotspots.png") });

		/* the hostile name is text, and nothing ran */
		const body = await page.evaluate(() => document.body.innerText);
		if (body.indexOf(hostile) < 0) fail("the name " + hostile + " does not show as text");
		const imgs = await page.evaluate(() => document.querySelectorAll("img").length);
		if (imgs) fail(imgs + " img elements in the page: a name became HTML");
		ok("a process named " + hostile + " shows as text");

		await page.click("#tabs button[data-tab=flame]");
		await page.waitForTimeout(200);
		const fl = await page.$eval("#flame canvas", (c) => c.height);
		if (fl < 40) fail("flame graph not drawn (canvas " + fl + " px high)");
		ok("flame graph drawn");
		if (shots) await page.screenshot({ path: path.join(shots, "ui-flame.png") });

		/* colour by a metric (the session counts page-faults): the frames
		   drawn in the colours of /api/flame?color_by= (strobe flamegraph
		   --color-by's, t0966), and its legend */
		const cwant = '"page-faults" / samples';
		const fopts = await page.$$eval("#fcol option", (os) => os.map((o) => o.value));
		if (fopts.indexOf(cwant) < 0) fail("'colour by' offers no page-faults per sample: " + JSON.stringify(fopts));
		await page.selectOption("#fcol", cwant);
		await settled(page);
		await page.waitForTimeout(200);
		const fr = await page.evaluate(async (q) => (await fetch("api/flame?" + q)).json(),
			new URLSearchParams({ session: sid, from: af, to: at, color_by: cwant }).toString());
		const lg = await page.$eval("#flame .flegend", (e) => e.hidden ? "" : e.textContent);
		const fmt6 = (v) => String(Number(v.toPrecision(6)));
		if (lg.indexOf("colour: " + cwant) < 0 || lg.indexOf(fmt6(fr.lo)) < 0 || lg.indexOf(fmt6(fr.hi)) < 0)
			fail("the flame legend says '" + lg + "', not the metric and its scale " + fr.lo + " to " + fr.hi);
		/* the root frame's pixel, away from its label */
		const px = await page.evaluate(() => {
			const c = document.querySelector("#flame canvas"), dpr = window.devicePixelRatio || 1;
			const d = c.getContext("2d").getImageData(Math.floor(c.width * 0.6), Math.floor(2 * dpr), 1, 1).data;
			return "rgb(" + d[0] + "," + d[1] + "," + d[2] + ")";
		});
		if (px !== fr.nodes[0][3]) fail("the root frame is drawn " + px + ", its colour by the metric is " + fr.nodes[0][3]);
		/* the row above (the commands): its pixels a frame's colour by
		   the metric, or the background, but where two frames blend at a
		   fractional edge (a tenth at most) */
		const row = await page.evaluate(() => {
			const c = document.querySelector("#flame canvas"), dpr = window.devicePixelRatio || 1;
			const d = c.getContext("2d").getImageData(0, Math.floor(20 * dpr), c.width, 1).data, out = [];
			for (let i = 0; i < c.width; i += 7)
				out.push(d[i * 4 + 3] ? "rgb(" + d[i * 4] + "," + d[i * 4 + 1] + "," + d[i * 4 + 2] + ")" : "");
			return out;
		});
		const cols = new Set(fr.nodes.map((n) => n[3]).concat([""]));
		const odd = row.filter((c) => !cols.has(c));
		const drawn = row.filter((c) => c).length;
		if (!drawn || odd.length > drawn / 10) fail("the commands' row has colours no frame has by the metric: " + odd.slice(0, 5).join(" "));
		ok("flame coloured by " + cwant + ": root " + px + " = the API's, legend " + fmt6(fr.lo) + " to " + fmt6(fr.hi));
		if (shots) await page.screenshot({ path: path.join(shots, "ui-flame-metric.png") });
		await page.selectOption("#fcol", "");
		await settled(page);
		await page.click("#tabs button[data-tab=tree]");
		if (shots) await page.screenshot({ path: path.join(shots, "ui-calltree.png") });
		await page.click("#tabs button[data-tab=table]");

		/* shift-drag: window B and the diff */
		await drag(page, 0.65, 0.95, true);
		const [bf, bt] = await win(page, "b");
		if (!bf || !(Number(bt) > Number(bf))) fail("the shift-drag selected no window B");
		const [af2, at2] = await win(page, "a");
		if (af2 !== af || at2 !== at) fail("the shift-drag moved window A");
		await page.waitForSelector("#diff table tbody tr", { timeout: 10000 });
		const drows = await tableRows(page, "#diff");
		ok("shift-drag selected B = [" + bf + ", " + bt + ") ns; diff table of " + drows.length + " rows");
		if (shots) await page.screenshot({ path: path.join(shots, "ui-diff.png") });
		await page.click("#tabs button[data-tab=dflame]");
		await page.waitForTimeout(200);
		if (shots) await page.screenshot({ path: path.join(shots, "ui-diff-flame.png") });
		await page.click("#tabs button[data-tab=table]");

		/* a reload of the URL: the same windows and rows */
		const before = page.url();
		await page.reload();
		await page.waitForSelector("#plot canvas", { timeout: 30000 });
		await settled(page);
		if (page.url() !== before) fail("the reload changed the URL");
		const [ra, rb] = await win(page, "a");
		const [rbf, rbt] = await win(page, "b");
		if (ra !== af || rb !== at || rbf !== bf || rbt !== bt) fail("the reload lost the windows");
		const rows2 = await tableRows(page, "#table");
		if (JSON.stringify(rows2) !== JSON.stringify(rows)) fail("the reload shows other rows");
		ok("reload: same windows A and B, same rows");

		/* Escape clears the windows, in the URL too */
		await page.keyboard.press("Escape");
		await settled(page);
		const [ea] = await win(page, "a");
		const eh = new URLSearchParams((await page.evaluate(() => location.hash)).slice(1));
		if (ea || eh.get("a") || eh.get("b")) fail("Escape left a window: " + ea + " " + eh.toString());
		ok("Escape clears the selection");

		/* checked before the refused fetch below, which logs its 403 */
		if (dialogs) fail(dialogs + " dialog(s) opened: a name ran as script");
		if (errors.length) fail("errors in the page: " + errors.join(" | "));
		ok("no dialog, no script error");

		/* a request without the token: 403, from the page (no cookie
		   either) and from outside */
		const st = await page.evaluate(() => fetch("api/sessions", { credentials: "omit" }).then((r) => r.status));
		if (st !== 403) fail("a fetch without the token got " + st + ", not 403");
		const st2 = await noToken(url);
		if (st2 !== 403) fail("a request without the token got " + st2 + ", not 403");
		ok("no token: 403");

		/* ---- the second round (issue 32): after the checks above, as
		   these log 404s (a server without /api/lines) as console errors */

		/* a drag asks for no window views before the mouse-up, and for one
		   table after it */
		const reqs = [];
		page.on("request", (r) => { if (r.url().indexOf("/api/") >= 0) reqs.push(r.url()); });
		{
			const box = await page.locator("#plot .u-over").boundingBox();
			const y = box.y + box.height / 2;
			await page.mouse.move(box.x + box.width * 0.2, y);
			await page.mouse.down();
			reqs.length = 0;
			for (let i = 1; i <= 20; i++)
				await page.mouse.move(box.x + box.width * (0.2 + 0.5 * i / 20), y);
			await page.waitForTimeout(300);
			const during = reqs.filter((u) => /\/api\/(report|flame|diff|lines|series)\?/.test(u));
			if (during.length) fail("a drag sent " + during.length + " request(s) before the mouse-up: " + during[0]);
			await page.mouse.up();
			await settled(page);
			const after = reqs.filter((u) => /\/api\/report\?/.test(u)).length;
			if (after !== 1) fail("the mouse-up sent " + after + " /api/report requests, not 1");
			ok("drag: no request while dragging, one table after the mouse-up");
		}

		/* the timeline never gets more points than the plot has pixels */
		{
			const got = [];
			const onResp = (r) => {
				if (/\/api\/series\?/.test(r.url())) got.push(r.json().then((j) => [r.url(), j.times.length]));
			};
			page.on("response", onResp);
			await page.click("#zoomsel");
			await page.waitForTimeout(1500);
			page.off("response", onResp);
			const sizes = await Promise.all(got);
			if (!sizes.length) fail("zoom to A asked for no series");
			const w = await page.$eval("#plot .u-over", (e) => e.clientWidth);
			sizes.forEach(([u, n]) => {
				const b = Number(new URL(u).searchParams.get("buckets"));
				if (!(b <= w) || n > w) fail("a series of " + n + " points (buckets=" + b + ") for a plot " + w + " px wide");
			});
			ok("series: at most one point per pixel (" + sizes.map((x) => x[1]).join(", ") + " points, " + w + " px)");
			await page.click("#reset");
			await settled(page);
			await drag(page, 0.2, 0.7, false);
		}
		const [la, lb] = await win(page, "a");
		if (!la) fail("no window A for the lines view");

		/* the shades' legend: lost and throttled apart */
		{
			const sh = await page.$$eval("#shades [data-shade]", (es) => es.map((e) =>
				[e.dataset.shade, e.textContent, getComputedStyle(e.querySelector("i")).backgroundImage,
					getComputedStyle(e.querySelector("i")).backgroundColor]));
			const thr = sh.find((x) => x[0] === "throttled"), lost = sh.find((x) => x[0] === "lost");
			if (!thr || !lost) fail("the legend has no lost or no throttled entry: " + JSON.stringify(sh));
			if (!/throttled/.test(thr[1]) || thr[2] === "none" || JSON.stringify(thr.slice(2)) === JSON.stringify(lost.slice(2)))
				fail("the throttled entry does not read apart from the lost one: " + JSON.stringify(sh));
			ok("legend: lost (" + lost[1] + ") and hatched throttled (" + thr[1] + ")");
		}
		/* a local database: no by=host */
		if (!(await page.$eval("#byhost", (o) => o.hidden && o.disabled))) fail("by=host offered without --source");
		ok("by host not offered on a local database");

		/* clicking a symbol: its series on a right-hand axis, and its
		   source lines (when the server serves /api/lines) */
		/* the top symbol that has a name ([unknown] has no lines: the
		   system-wide session may hold other processes' unnamed code) */
		const cell = page.locator("#table td.link[data-col=symbol]").filter({ hasNotText: /^\[unknown\]$/ }).first();
		const sym = await cell.textContent();
		const bin = await cell.evaluate((td) => (td.parentNode.querySelector("td[data-col=binary]") || {}).textContent || "");
		await cell.click();
		await page.waitForFunction((s) => (document.getElementById("plot").dataset.raxes || "").indexOf(s) >= 0,
			sym.slice(0, 30), { timeout: 15000 }).catch(() => {});
		const rax = await page.$eval("#plot", (e) => JSON.parse(e.dataset.raxes || "[]"));
		if (rax.length !== 1 || rax[0].indexOf(sym.slice(0, 30)) < 0)
			fail("the added series of " + sym + " has no right-hand axis: " + JSON.stringify(rax));
		const rink = await page.evaluate(() => {
			const c = document.querySelector("#plot canvas"), o = document.querySelector("#plot .u-over");
			const k = c.width / c.clientWidth, x0 = Math.ceil((o.offsetLeft + o.offsetWidth) * k) + 2;
			if (x0 >= c.width) return 0;
			const d = c.getContext("2d").getImageData(x0, 0, c.width - x0, c.height).data;
			let n = 0;
			for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
			return n;
		});
		if (rink < 50) fail("the right-hand axis is not drawn (" + rink + " pixels right of the plot)");
		ok("added series of " + sym + " on a right-hand axis '" + rax[0] + "' (" + rink + " pixels)");
		const xs = await page.$eval("#plot", (e) => JSON.parse(e.dataset.xsums || "[]"));
		if (xs.length !== 1 || !(xs[0] > 0)) fail("the added series of " + sym + ", the top symbol of A, is empty: " + JSON.stringify(xs));
		ok("the added series of " + sym + " counts " + xs[0] + " samples");

		await page.waitForFunction(() => {
			const l = document.getElementById("lines");
			return l.classList.contains("on") && !l.dataset.busy && l.firstChild;
		}, null, { timeout: 15000 });
		const probe = await page.evaluate(() => fetch("api/lines?session=0", {
			headers: { "X-Strobe-Token": new URLSearchParams(location.search).get("token") } })
			.then((r) => r.text().then((t) => [r.status, t])));
		const served = !(probe[0] === 404 && /no such page/.test(probe[1]));
		const lmsg = await page.$eval("#lines", (e) => e.querySelector(".empty") ? e.querySelector(".empty").textContent : "");
		if (!served) {
			if (!/^source lines: .*\/api\/lines/.test(lmsg) || /\n/.test(lmsg))
				fail("without /api/lines the lines view says '" + lmsg + "', not one line naming it");
			ok("the lines view says, in one line: " + lmsg);
			console.log("skip: /api/lines not served");
		} else {
			const lrows = await tableRows(page, "#lines");
			const out = execFileSync(strobe, ["report", "--session", sid, "--by", "line", "--binary", bin,
				"--symbol", sym, "--from", la + "ns", "--to", (BigInt(lb) - 1n) + "ns", "--format", "json"],
				{ encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
			const lwant = JSON.parse(out).rows.map((r) => Object.keys(r).map((k) => r[k] === null ? "" : String(r[k])));
			if (!lrows.length && !lwant.length) fail("no source lines of " + sym + " in A: " + lmsg);
			if (JSON.stringify(lrows) !== JSON.stringify(lwant))
				fail("the lines of " + sym + " differ from strobe report --by line:\n page:   " +
					JSON.stringify(lrows.slice(0, 5)) + "\n report: " + JSON.stringify(lwant.slice(0, 5)));
			ok("source lines of " + sym + " = strobe report --by line --binary --symbol (" + lrows.length + " rows)");
		}
		const lh = new URLSearchParams((await page.evaluate(() => location.hash)).slice(1));
		if (lh.get("ls") !== sym || lh.get("tab") !== "lines") fail("the URL does not hold the lines view: " + lh.toString());
		if (shots) await page.screenshot({ path: path.join(shots, "ui-lines.png") });

		/* the flame graph's search: the share of the stacks with the symbol */
		await page.click("#tabs button[data-tab=flame]");
		await page.fill("#search", sym);
		const mt = await page.$eval("#match", (e) => e.textContent);
		const mm = /^matches (\d+) of (\d+) /.exec(mt);
		if (!mm || !(Number(mm[1]) > 0) || Number(mm[1]) > Number(mm[2])) fail("the search for " + sym + " says '" + mt + "'");
		ok("flame search: " + sym + " " + mt);
		await page.fill("#search", "");
		if (dialogs) fail(dialogs + " dialog(s) opened in the second round: a name ran as script");
		if (await page.evaluate(() => document.querySelectorAll("img").length)) fail("an img element: a name became HTML");
		ok("second round: no dialog, no img");

	} catch (e) {
		await reportFail(e, pageRef, errors);
	} finally {
		await closeBrowser(ctx, profile);
	}
})().catch((e) => { console.log("FAIL: " + String(e && e.stack || e)); process.exit(1); });
