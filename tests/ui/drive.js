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
const { chromium } = require("playwright-core");
const { execFileSync } = require("child_process");
const fs = require("fs");
const os = require("os");
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
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), "strobe-ui-chromium-"));
	const ctx = await chromium.launchPersistentContext(profile, {
		executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
		headless: true,
		viewport: { width: 1280, height: 800 },
		args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync"],
	});
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

	} catch (e) {
		/* what the page said, for the log */
		let said = "";
		if (pageRef) said = await pageRef.$eval("#status", (e) => e.textContent).catch(() => "");
		console.log("FAIL: " + (e && e.message || e) + (said ? "\n  the page's status line: " + said : "") +
			(errors.length ? "\n  page errors: " + errors.join(" | ") : ""));
		process.exitCode = 1;
	} finally {
		await ctx.close();
		fs.rmSync(profile, { recursive: true, force: true });
	}
})().catch((e) => { console.log("FAIL: " + String(e && e.stack || e)); process.exit(1); });
