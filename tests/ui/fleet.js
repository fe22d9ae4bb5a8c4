/*
 * fleet.js - the browser half of tests/t0953-ui-fleet-browser.sh: over a
 * 'strobe ui --source URL' whose fleet holds session 1 of two hosts, picks
 * each host's session in the page's list and checks that the page then
 * shows that host's session: its host in the header and the URL, and,
 * for a window brushed with the mouse, the hot-spot table of
 * 'strobe report --source URL --host HOST' of that window; the where bar
 * (a metric condition, which the fleet does not serve) is disabled.
 *
 * usage: node fleet.js URL
 * environment: STROBE (the strobe binary), SOURCE (the fleet's URL),
 *   HOSTS (the two host names, space-separated), CHROMIUM (default
 *   /usr/bin/chromium).
 * Prints "ok: ..." lines; exits 1 with "FAIL: ..." on the first failure.
 */
"use strict";
const { execFileSync } = require("child_process");
const fs = require("fs");
const { launch } = require("./chromium");

const url = process.argv[2];
const strobe = process.env.STROBE;
const source = process.env.SOURCE;
const hosts = (process.env.HOSTS || "").split(" ").filter(Boolean);
const errors = [];
function fail(msg) { throw new Error(msg); }
function ok(msg) { console.log("ok: " + msg); }

/* host's session 1 in the window [a, b), as strobe report computes it
   (its --to is inclusive: b-1) */
function reportRows(host, a, b, metrics) {
	const args = ["report", "--source", source, "--host", host, "--session", "1",
		"--from", a + "ns", "--to", (BigInt(b) - 1n) + "ns",
		"--by", "symbol", "--limit", "100", "--format", "json"];
	if (metrics) args.push("-M", metrics);
	const out = execFileSync(strobe, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
	return JSON.parse(out).rows.map((r) => Object.keys(r).map((k) => r[k] === null ? "" : String(r[k])));
}

async function settled(page) {
	await page.waitForFunction(() => !document.body.dataset.busy, null, { timeout: 30000 });
}

async function tableRows(page) {
	return page.$$eval("#table table tbody tr", (trs) => trs.map((tr) =>
		Array.from(tr.children).map((td) => (td.querySelector("span") || td).textContent)));
}

/* a window brushed with real mouse events, from f0 to f1 of the plot */
async function brush(page, f0, f1) {
	const box = await page.locator("#plot .u-over").boundingBox();
	if (!box) fail("no plot area");
	const y = box.y + box.height / 2;
	await page.mouse.move(box.x + box.width * f0, y);
	await page.mouse.down();
	for (let i = 1; i <= 10; i++)
		await page.mouse.move(box.x + box.width * (f0 + (f1 - f0) * i / 10), y);
	await page.mouse.up();
	await settled(page);
	return page.$eval("#sel", (e) => [e.dataset.aFrom, e.dataset.aTo]);
}

(async () => {
	if (hosts.length !== 2) fail("HOSTS must name two hosts");
	const { ctx, profile } = await launch("strobe-ui-chromium-");
	try {
		const page = ctx.pages()[0] || await ctx.newPage();
		page.on("pageerror", (e) => errors.push(String(e)));
		page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
		await page.goto(url);
		await page.waitForSelector("#plot canvas", { timeout: 30000 });
		await settled(page);

		/* one entry per host, both of id 1 */
		const labels = await page.$$eval("#session option", (os) => os.map((o) => o.textContent));
		for (const h of hosts)
			if (!labels.some((l) => l.startsWith(h + ":1 ")))
				fail("no entry " + h + ":1 in the session list: " + JSON.stringify(labels));
		if (labels.length !== 2) fail("the list has " + labels.length + " entries, not 2");
		ok("the session list has " + hosts.map((h) => h + ":1").join(" and "));

		const tables = {};
		for (const h of hosts) {
			await page.selectOption("#session", JSON.stringify([h, "1"]));
			/* the header names the session once it has loaded */
			try {
				await page.waitForFunction((h) => document.getElementById("info").textContent.startsWith(h + " · "),
					h, { timeout: 30000 });
			} catch (e) {
				fail("after picking " + h + ", the header says: " + await page.$eval("#info", (e) => e.textContent));
			}
			await page.waitForSelector("#plot canvas", { timeout: 30000 });
			await settled(page);
			const [af, at] = await brush(page, 0.2, 0.7);
			if (!af || !(Number(at) > Number(af))) fail("the drag on " + h + "'s timeline selected no window");
			const hash = new URLSearchParams((await page.evaluate(() => location.hash)).slice(1));
			if (hash.get("h") !== h || hash.get("s") !== "1")
				fail("the URL names session " + hash.get("s") + " of " + hash.get("h") + ", not 1 of " + h);
			const rows = await tableRows(page);
			if (!rows.length) fail("no rows in " + h + "'s hot-spot table");
			const metrics = await page.$eval("#table", (e) => e.dataset.metrics || "");
			const want = reportRows(h, af, at, metrics);
			if (JSON.stringify(rows) !== JSON.stringify(want))
				fail(h + "'s table differs from strobe report --source --host " + h + ":\n page:   " +
					JSON.stringify(rows.slice(0, 4)) + "\n report: " + JSON.stringify(want.slice(0, 4)));
			tables[h] = JSON.stringify(rows);
			ok(h + ": header, URL and the brushed window's table = strobe report --source --host " + h +
				" (" + rows.length + " rows)");
		}
		if (tables[hosts[0]] === tables[hosts[1]]) fail("both hosts show the same table");

		/* a reload keeps the second host's session */
		await page.reload();
		await page.waitForSelector("#plot canvas", { timeout: 30000 });
		await settled(page);
		const info = await page.$eval("#info", (e) => e.textContent);
		if (!info.startsWith(hosts[1] + " · ")) fail("after a reload the header says: " + info);
		if (JSON.stringify(await tableRows(page)) !== tables[hosts[1]]) fail("the reload shows other rows");
		ok("reload: still " + hosts[1] + "'s session and window");
		/* the where bar: the API serves no condition for the fleet */
		const wb = await page.evaluate(() => [document.getElementById("where").disabled, document.getElementById("wnote").textContent]);
		if (!wb[0] || wb[1].indexOf("not served for the fleet") < 0) fail("the where bar on the fleet: " + JSON.stringify(wb));
		ok("the where bar is disabled on the fleet: " + wb[1]);
		if (errors.length) fail("errors in the page: " + errors.join(" | "));
		ok("no script error");
	} finally {
		await ctx.close();
		fs.rmSync(profile, { recursive: true, force: true });
	}
})().catch((e) => {
	console.log("FAIL: " + (e && e.message ? e.message : String(e)));
	process.exit(1);
});
