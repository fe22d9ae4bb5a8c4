/*
 * where.js - the browser half of tests/t0969-ui-where.sh: the where bar
 * of 'strobe ui' (a metric condition, issue 33) in Debian's chromium
 * (headless, through playwright-core), with real mouse and keyboard
 * events, against the command line:
 *  - window A dragged on the timeline, the bucket (40 ms) and a
 *    condition typed (one that keeps between a fifth and four fifths of
 *    the window's buckets, picked with strobe report --where): the
 *    hot-spot table is strobe report --where of A cell by cell, the
 *    where note report's meta.where; the flame graph's /api/flame reply
 *    is strobe export --format folded --where's, byte for byte;
 *  - the timeline's shade (#plot's data-where): every sample strobe
 *    export --format csv --where keeps lies in a span, every span holds
 *    one;
 *  - "invert" clicked: the table is strobe report --where --invert's;
 *  - "where vs rest": the diff table is strobe diff ID --where's (with
 *    --invert, then without once "invert" is clicked again);
 *  - a reload restores the bar, the diff and the table (the URL's hash);
 *  - a bad condition: its one line of text in the note, the table
 *    emptied, the status line clear; the good one typed again works;
 *  - a condition holding <img src=x onerror=alert(1)>: shown as text,
 *    no img element, no dialog, also after a reload.
 *
 * usage: node where.js URL
 * environment: STROBE (the strobe binary), STROBE_SESSION (the session
 *   id), START_NS (its start, CLOCK_MONOTONIC, from the database), SHOTS
 *   (a directory for ui-where.png, optional), CHROMIUM.
 * Prints "ok: ..." lines; exits 1 with "FAIL: ..." on the first failure.
 */
"use strict";
const { launch, reportFail, closeBrowser } = require("./chromium");
const { execFileSync } = require("child_process");
const path = require("path");

const url = process.argv[2];
const strobe = process.env.STROBE;
const sid = process.env.STROBE_SESSION;
const start = BigInt(process.env.START_NS);
const shots = process.env.SHOTS || "";
const errors = [];
let pageRef = null;

function fail(msg) { throw new Error(msg); }
function ok(msg) { console.log("ok: " + msg); }
function run(args) { return execFileSync(strobe, args, { encoding: "utf8", maxBuffer: 1 << 28, stdio: ["ignore", "pipe", "pipe"] }); }

/* a window [a, b) as the commands take it (--to is inclusive, whole ns) */
function winArgs(a, b) { return ["--from", a + "ns", "--to", (BigInt(b) - 1n) + "ns"]; }

function cells(rows) { return rows.map((r) => Object.keys(r).map((k) => r[k] === null ? "" : String(r[k]))); }

/* strobe report --where of [a, b) as the page's table asks it */
function report(a, b, metrics, where) {
	const args = ["report", "--session", sid, ...winArgs(a, b), "--by", "symbol", "--limit", "100",
		"--format", "json", ...where];
	if (metrics) args.push("-M", metrics);
	return JSON.parse(run(args));
}

async function tableRows(page, pane) {
	return page.$$eval(pane + " table tbody tr", (trs) => trs.map((tr) =>
		Array.from(tr.children).map((td) => td.dataset.col === "within_noise" ? td.dataset.v :
			(td.querySelector("span") || td).textContent)));
}

async function settled(page) {
	await page.waitForTimeout(100);
	await page.waitForFunction(() => !document.body.dataset.busy, null, { timeout: 60000 });
}

async function drag(page, f0, f1) {
	const box = await page.locator("#plot .u-over").boundingBox();
	if (!box) fail("no plot area");
	const y = box.y + box.height / 2;
	await page.mouse.move(box.x + box.width * f0, y);
	await page.mouse.down();
	for (let i = 1; i <= 10; i++)
		await page.mouse.move(box.x + box.width * (f0 + (f1 - f0) * i / 10), y);
	await page.mouse.up();
	await settled(page);
}

/* the condition field emptied and TEXT typed, then Enter */
async function typeWhere(page, text) {
	await page.click("#where", { clickCount: 3 });
	await page.keyboard.press("Control+A");
	await page.keyboard.press("Backspace");
	await page.keyboard.type(text);
	await page.keyboard.press("Enter");
	await settled(page);
}

function same(what, page, cli) {
	if (JSON.stringify(page) !== JSON.stringify(cli))
		fail(what + ":\n page: " + JSON.stringify(page.slice(0, 3)) + "\n cli:  " + JSON.stringify(cli.slice(0, 3)) +
			"\n (" + page.length + " and " + cli.length + " rows)");
}

async function note(page) {
	return page.$eval("#wnote", (e) => ({ text: e.textContent, bad: e.dataset.bad === "1" }));
}

(async () => {
	const { ctx, profile } = await launch("strobe-ui-where-");
	let dialogs = 0;
	try {
		const page = ctx.pages()[0] || await ctx.newPage();
		pageRef = page;
		page.on("dialog", (d) => { dialogs++; d.dismiss().catch(() => {}); });
		page.on("pageerror", (e) => errors.push(String(e)));
		/* a refused condition's 400 is logged by chromium as a failed
		   resource: expected; any other console error is not */
		page.on("console", (m) => {
			if (m.type() === "error" && !/status of 400/.test(m.text())) errors.push(m.text());
		});
		const replies = {};
		page.on("response", (r) => {
			const m = /\/api\/(flame|series|report|diff)\?/.exec(r.url());
			if (m) replies[m[1]] = { url: r.url(), body: r.text() };
		});
		await page.goto(url + "#s=" + sid);
		await page.waitForSelector("#plot canvas", { timeout: 30000 });
		await settled(page);

		/* window A, brushed with the mouse */
		await drag(page, 0.1, 0.9);
		const [af, at] = await page.$eval("#sel", (e) => [e.dataset.aFrom, e.dataset.aTo]);
		if (!af || !(Number(at) > Number(af))) fail("the drag selected no window A");
		const metrics = await page.$eval("#table", (e) => e.dataset.metrics || "");

		/* a condition that splits A: kept between 1/5 and 4/5 of its buckets */
		let cond = null, kept = null;
		for (const x of [50, 100, 200, 300, 400, 600, 800, 1200, 1600, 2400]) {
			const c = "1000 * context-switches / samples >= " + x;
			const m = /: (\d+) of (\d+) buckets kept/.exec(report(af, at, "", ["--where", c, "--where-bucket", "40"]).meta.where || "");
			if (m && Number(m[1]) >= Number(m[2]) / 5 && Number(m[1]) <= Number(m[2]) * 4 / 5) { cond = c; kept = m[0]; break; }
		}
		if (!cond) fail("no condition keeps a fifth to four fifths of window A's 40 ms buckets");
		const W = ["--where", cond, "--where-bucket", "40"];

		/* the bucket, then the condition, typed */
		await page.click("#wbucket");
		await page.keyboard.type("40");
		await typeWhere(page, cond);
		const rep = report(af, at, metrics, W);
		same("the table with the condition is not strobe report --where '" + cond + "' --where-bucket 40",
			await tableRows(page, "#table"), cells(rep.rows));
		let n = await note(page);
		if (n.bad || n.text !== rep.meta.where) fail("the note says '" + n.text + "', report '" + rep.meta.where + "'");
		ok("table with where '" + cond + "' (bucket 40 ms) = strobe report --where of A (" + rep.rows.length + " rows); note: " + kept);

		/* the flame graph's request and reply */
		const fq = new URL(replies.flame.url).searchParams;
		if (fq.get("where") !== cond || fq.get("where_bucket") !== "40000000" || fq.get("from") !== af || fq.get("to") !== at)
			fail("the flame graph's request is not of the condition and A: " + replies.flame.url);
		const folded = run(["export", "--session", sid, "--format", "folded", ...winArgs(af, at), ...W]);
		if (await replies.flame.body !== folded) fail("/api/flame's reply is not strobe export --format folded --where's");
		ok("flame graph: /api/flame with where= = strobe export --format folded --where (" + folded.split("\n").length + " stacks)");

		/* the shade: the kept samples, and only spans that hold some */
		const spans = JSON.parse(await page.$eval("#plot", (e) => e.dataset.where || "null"));
		if (!spans || !spans.length) fail("no shade on the timeline");
		const csv = run(["export", "--session", sid, "--format", "csv", ...winArgs(af, at), ...W]).trim().split("\n");
		const col = csv[0].split(",").indexOf("time_ns");
		const times = csv.slice(1).map((l) => Number(BigInt(l.split(",")[col]) - start));
		if (!times.length) fail("strobe export --where kept no sample");
		const hit = spans.map(() => 0);
		for (const t of times) {
			const i = spans.findIndex((s) => t >= s[0] && t < s[1]);
			if (i < 0) fail("the kept sample at " + t + " ns is in no shaded span");
			hit[i]++;
		}
		const empty = hit.indexOf(0);
		if (empty >= 0) fail("the shaded span " + JSON.stringify(spans[empty]) + " holds no kept sample");
		const shaded = spans.reduce((t, s) => t + s[1] - s[0], 0);
		if (shaded >= Number(at) - Number(af)) fail("the whole window is shaded");
		ok("shade: " + spans.length + " spans (" + (shaded / 1e9).toFixed(3) + " s of A) hold the " + times.length +
			" samples strobe export --where keeps, each span some");
		if (shots) await page.screenshot({ path: path.join(shots, "ui-where.png") });

		/* invert */
		await page.click("#winvert");
		await settled(page);
		const inv = report(af, at, metrics, [...W, "--invert"]);
		same("the table inverted is not strobe report --where --invert", await tableRows(page, "#table"), cells(inv.rows));
		n = await note(page);
		if (n.text !== inv.meta.where) fail("inverted, the note says '" + n.text + "', report '" + inv.meta.where + "'");
		ok("invert: table = strobe report --where --invert (" + inv.rows.length + " rows)");

		/* where vs rest: strobe diff ID --where, inverted and not */
		const diffCli = (more) => cells(JSON.parse(run(["diff", ...winArgs(af, at), ...W, ...more, "--by", "symbol",
			"--limit", "100", "--format", "json", sid])).rows);
		await page.click("#wrest");
		await settled(page);
		if (!await page.$eval("#diff", (e) => e.classList.contains("on"))) fail("'where vs rest' did not show the diff");
		same("where vs rest (inverted) is not strobe diff --where --invert", await tableRows(page, "#diff"), diffCli(["--invert"]));
		await page.click("#winvert");
		await settled(page);
		const drows = await tableRows(page, "#diff");
		same("where vs rest is not strobe diff ID --where", drows, diffCli([]));
		const head = await page.$eval("#diff .lhead", (e) => e.textContent);
		if (head.indexOf("A = --where '" + cond + "' --invert") < 0) fail("the diff's head says: " + head);
		ok("where vs rest: diff table = strobe diff " + sid + " --where (and with --invert) (" + drows.length + " rows)");

		/* a reload restores the bar and the view */
		const hash = await page.evaluate(() => location.hash);
		const trows = await tableRows(page, "#table");
		await page.reload();
		await page.waitForSelector("#plot canvas", { timeout: 30000 });
		await settled(page);
		const bar = await page.evaluate(() => [document.getElementById("where").value, document.getElementById("wbucket").value,
			document.getElementById("winvert").checked, document.getElementById("wrest").classList.contains("on"), location.hash]);
		if (bar[0] !== cond || bar[1] !== "40" || bar[2] || !bar[3] || bar[4] !== hash)
			fail("after a reload the bar is " + JSON.stringify(bar) + " (the hash was " + hash + ")");
		same("after a reload, the diff", await tableRows(page, "#diff"), drows);
		same("after a reload, the table", await tableRows(page, "#table"), trows);
		ok("reload: the condition, bucket, where vs rest and the tables restored from " + hash.slice(0, 80) + "…");

		/* a bad condition: one line, the page keeps working */
		await page.click('#tabs button[data-tab="table"]');
		await typeWhere(page, "nosuch > 1");
		n = await note(page);
		if (!n.bad || n.text.indexOf("\n") >= 0 || n.text.indexOf("unknown name 'nosuch'") < 0)
			fail("a bad condition's note: " + JSON.stringify(n));
		if (await page.$$eval("#table table", (t) => t.length)) fail("the table stays with a bad condition");
		const st = await page.$eval("#status", (e) => e.textContent);
		if (st) fail("a bad condition left the status line saying " + st);
		ok("bad condition: one line in the note: " + n.text);
		await typeWhere(page, cond);
		same("the good condition again", await tableRows(page, "#table"), cells(report(af, at, metrics, W).rows));
		if ((await note(page)).bad) fail("the note stays bad");
		ok("the good condition typed again: table = strobe report --where again");

		/* markup in the condition stays text */
		const evil = "<img src=x onerror=alert(1)> > 1";
		await typeWhere(page, evil);
		n = await note(page);
		if (!n.bad || n.text.indexOf("<img src=x onerror=alert(1)>") < 0) fail("the markup's note: " + JSON.stringify(n));
		await page.reload();
		await page.waitForSelector("#plot canvas", { timeout: 30000 });
		await settled(page);
		if (await page.$eval("#where", (e) => e.value) !== evil) fail("the markup's condition did not come back from the URL");
		if ((await note(page)).text.indexOf("<img src=x onerror=alert(1)>") < 0) fail("after a reload the markup is not text");
		ok("<img src=x onerror=alert(1)> in the condition: shown as text, before and after a reload");

		if (dialogs) fail(dialogs + " dialog(s) opened");
		if (await page.evaluate(() => document.querySelectorAll("img").length)) fail("an img element: data became HTML");
		if (errors.length) fail("errors in the page: " + errors.join(" | "));
		ok("no dialog, no img, no script error");
	} catch (e) {
		await reportFail(e, pageRef, errors);
	} finally {
		await closeBrowser(ctx, profile);
	}
})().catch((e) => { console.log("FAIL: " + String(e && e.stack || e)); process.exit(1); });
