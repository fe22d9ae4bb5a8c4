/*
 * phases.js - the browser half of tests/t0968-ui-onsets.sh: the page of
 * 'strobe ui' with its onsets shown (#on=1), in Debian's chromium
 * (headless, through playwright-core), against the command line:
 *  - the page's /api/onsets request and reply: strobe onsets --format
 *    json of the same series, byte for byte; as many onsets drawn as it
 *    has (#plot's data-onsets), and the canvas differs without them;
 *  - /api/phases: strobe phases --format json, byte for byte; the strip
 *    has a band per phase, each at that phase's window;
 *  - hovering a band tells its phase; clicking band K makes window A that
 *    phase's window (the URL too), and the hot-spot table is then strobe
 *    report --from --to of it, cell by cell; shift-clicking makes A the
 *    phase before and B this one, and the diff table appears;
 *  - a reload keeps the strip; unticking "onsets" removes it (on=0).
 *
 * usage: node phases.js URL
 * environment: STROBE (the strobe binary), STROBE_SESSION (the session
 *   id), START_NS (its start, CLOCK_MONOTONIC, from the database), SHOTS (a directory for ui-onsets.png, optional), CHROMIUM.
 * Prints "ok: ..." lines; exits 1 with "FAIL: ..." on the first failure.
 */
"use strict";
const { launch, reportFail, closeBrowser } = require("./chromium");
const { execFileSync } = require("child_process");
const path = require("path");

const url = process.argv[2];
const strobe = process.env.STROBE;
const sid = process.env.STROBE_SESSION;
const shots = process.env.SHOTS || "";
const errors = [];
let pageRef = null;

function fail(msg) { throw new Error(msg); }
function ok(msg) { console.log("ok: " + msg); }
function run(args) { return execFileSync(strobe, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }); }

/* strobe report of [a, b) as the page's table shows it (report's --to is
   inclusive, whole ns: --to b-1; a null cell shows empty) */
function reportRows(a, b, metrics) {
	const args = ["report", "--session", sid, "--from", a + "ns", "--to", (BigInt(b) - 1n) + "ns",
		"--by", "symbol", "--limit", "100", "--format", "json"];
	if (metrics) args.push("-M", metrics);
	return JSON.parse(run(args)).rows.map((r) => Object.keys(r).map((k) => r[k] === null ? "" : String(r[k])));
}

async function tableRows(page, pane) {
	return page.$$eval(pane + " table tbody tr", (trs) => trs.map((tr) =>
		Array.from(tr.children).map((td) => td.dataset.col === "within_noise" ? td.dataset.v :
			(td.querySelector("span") || td).textContent)));
}

/* the page and its strip loaded */
async function settled(page) {
	await page.waitForFunction(() => !document.body.dataset.busy && !document.getElementById("phases").dataset.busy,
		null, { timeout: 60000 });
}

async function win(page, w) {
	return page.$eval("#sel", (e, w) => [e.dataset[w + "From"], e.dataset[w + "To"]], w);
}

async function canvasData(page) {
	return page.$eval("#plot canvas", (c) => Array.from(c.getContext("2d").getImageData(0, 0, c.width, c.height).data));
}

(async () => {
	const { ctx, profile } = await launch("strobe-ui-onsets-");
	let dialogs = 0;
	try {
		const page = ctx.pages()[0] || await ctx.newPage();
		pageRef = page;
		page.on("dialog", (d) => { dialogs++; d.dismiss().catch(() => {}); });
		page.on("pageerror", (e) => errors.push(String(e)));
		page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
		/* the API's replies as the page got them */
		const replies = {};
		page.on("response", (r) => {
			const m = /\/api\/(onsets|phases)\?/.exec(r.url());
			if (m) replies[m[1]] = { url: r.url(), body: r.text() };
		});
		await page.goto(url + "#s=" + sid + "&on=1");
		await page.waitForSelector("#plot canvas", { timeout: 30000 });
		await page.waitForSelector("#phases .band", { timeout: 60000 });
		await settled(page);
		const status = await page.$eval("#status", (e) => e.textContent);
		if (status) fail("the page says: " + status);

		/* /api/onsets: strobe onsets of the same series */
		if (!replies.onsets || !replies.phases) fail("the page asked for no onsets or no phases");
		const oq = new URL(replies.onsets.url).searchParams;
		const keys = Array.from(oq.keys()).sort().join(",");
		if (keys !== "event,session,top" || oq.get("event") !== "samples" || oq.get("session") !== sid)
			fail("the page's onsets request is not of the series shown: " + replies.onsets.url);
		const onJson = run(["onsets", "--session", sid, "--event", "samples", "--top", oq.get("top"), "--format", "json"]);
		const onBody = await replies.onsets.body;
		if (onBody !== onJson)
			fail("/api/onsets differs from strobe onsets --format json:\n page: " + onBody.slice(0, 300) +
				"\n cli:  " + onJson.slice(0, 300));
		const on = JSON.parse(onJson).rows;
		const drawn = Number(await page.$eval("#plot", (e) => e.dataset.onsets));
		if (drawn !== on.length) fail(drawn + " onsets drawn, strobe onsets has " + on.length);
		ok("/api/onsets = strobe onsets --session " + sid + " --event samples --top " + oq.get("top") +
			" --format json (" + on.length + " onsets, all drawn)");

		/* /api/phases: strobe phases; a band each, at its window */
		const pq = new URL(replies.phases.url).searchParams;
		const phJson = run(["phases", "--session", sid, "--event", "samples", "--by", pq.get("by"),
			"--top", pq.get("top"), "--format", "json"]);
		const phBody = await replies.phases.body;
		if (phBody !== phJson)
			fail("/api/phases differs from strobe phases --format json:\n page: " + phBody.slice(0, 300) +
				"\n cli:  " + phJson.slice(0, 300));
		const ph = JSON.parse(phJson).rows;
		const start = BigInt(process.env.START_NS);
		const want = ph.map((p) => [String(p.phase), String(BigInt(p.from_ns) - start), String(BigInt(p.to_ns) - start)]);
		const bands = await page.$$eval("#phases .band", (bs) => bs.map((b) => [b.textContent, b.dataset.from, b.dataset.to]));
		if (JSON.stringify(bands) !== JSON.stringify(want))
			fail("the strip's bands are not strobe phases':\n page: " + JSON.stringify(bands) + "\n cli:  " + JSON.stringify(want));
		if (ph.length < 2) fail("only " + ph.length + " phase: the workload's changes were not found");
		ok("/api/phases = strobe phases --format json; the strip has its " + ph.length + " phases as bands");
		if (shots) await page.screenshot({ path: path.join(shots, "ui-onsets.png") });

		/* hover: the phase's text */
		const k = 1;
		const band = page.locator("#phases .band").nth(k);
		await band.hover();
		const tip = await page.$eval("#tip", (e) => e.hidden ? "" : e.textContent);
		if (tip.indexOf("phase " + k + ":") !== 0 || tip.indexOf("levels: " + ph[k].levels) < 0)
			fail("hovering band " + k + " tells '" + tip + "'");
		ok("hover: " + tip.split("\n")[0]);

		/* click: window A is the phase, the table is strobe report of it */
		await band.click();
		await settled(page);
		const [af, at] = await win(page, "a");
		if (af !== want[k][1] || at !== want[k][2])
			fail("clicking phase " + k + " selected A = [" + af + ", " + at + "), not [" + want[k][1] + ", " + want[k][2] + ")");
		const h = new URLSearchParams((await page.evaluate(() => location.hash)).slice(1));
		if (h.get("a") !== af + "-" + at || h.get("on") !== "1") fail("the URL does not hold A and on=1: " + h.toString());
		const rows = await tableRows(page, "#table");
		const metrics = await page.$eval("#table", (e) => e.dataset.metrics || "");
		const rep = reportRows(af, at, metrics);
		if (!rows.length) fail("no hot spots in phase " + k);
		if (JSON.stringify(rows) !== JSON.stringify(rep))
			fail("the table of phase " + k + " is not strobe report --from " + af + "ns --to " + (BigInt(at) - 1n) + "ns:\n page:   " +
				JSON.stringify(rows.slice(0, 4)) + "\n report: " + JSON.stringify(rep.slice(0, 4)));
		ok("click on phase " + k + ": A = its window, hot spots = strobe report of it (" + rows.length + " rows)");

		/* shift-click: A = the phase before, B = this one, their diff */
		await page.keyboard.down("Shift");
		await band.click();
		await page.keyboard.up("Shift");
		await settled(page);
		const [a2f, a2t] = await win(page, "a"), [b2f, b2t] = await win(page, "b");
		if (a2f !== want[k - 1][1] || a2t !== want[k - 1][2] || b2f !== want[k][1] || b2t !== want[k][2])
			fail("shift-click on phase " + k + ": A = [" + a2f + ", " + a2t + "), B = [" + b2f + ", " + b2t + ")");
		await page.waitForSelector("#diff.on table tbody tr", { timeout: 15000 });
		ok("shift-click on phase " + k + ": A = phase " + (k - 1) + ", B = phase " + k + ", their diff shown");

		/* a reload keeps the strip; unticking removes it and the lines */
		await page.reload();
		await page.waitForSelector("#phases .band", { timeout: 60000 });
		await settled(page);
		const n2 = await page.$$eval("#phases .band", (bs) => bs.length);
		if (n2 !== ph.length) fail("after a reload the strip has " + n2 + " bands");
		const withOn = await canvasData(page);
		await page.click("#onsets");
		await page.waitForTimeout(300);
		const hidden = await page.$eval("#phases", (e) => e.hidden && !e.firstChild);
		const off = new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).get("on");
		const n3 = Number(await page.$eval("#plot", (e) => e.dataset.onsets));
		const withOff = await canvasData(page);
		let diff = 0;
		for (let i = 0; i < withOn.length; i++) if (withOn[i] !== withOff[i]) diff++;
		if (!hidden || off !== "0" || n3 !== 0) fail("unticking onsets left the strip (" + hidden + "), on=" + off + ", " + n3 + " drawn");
		if (on.length && !diff) fail("the canvas is the same with and without the onsets");
		ok("reload keeps the strip; unticked: no strip, on=0, the onsets' lines gone (" + diff + " bytes of the canvas)");

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
