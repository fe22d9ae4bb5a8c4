/*
 * chromium.js - starts Debian's chromium headless (playwright-core) the
 * one way tests/ui's scripts use it: drive.js (t0952) and paint.js
 * (bench/ui.sh).
 *
 * launch(prefix): { ctx, profile }: a persistent context ctx in a fresh
 * profile directory profile, os.tmpdir()/PREFIXxxxxxx (the caller removes
 * it), 1280x800, CHROMIUM (default /usr/bin/chromium), without the
 * sandbox, the GPU and chromium's own network traffic.
 *
 * reportFail(e, page, errors): a driver's failure e as one "FAIL: ..." line
 * with what page's status line said and the page's script errors, exit
 * status 1; closeBrowser(ctx, profile): the context closed, its profile removed
 * (drive.js, phases.js, where.js end so).
 */
"use strict";
const { chromium } = require("playwright-core");
const fs = require("fs");
const os = require("os");
const path = require("path");

async function launch(prefix) {
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
	const ctx = await chromium.launchPersistentContext(profile, {
		executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
		headless: true,
		viewport: { width: 1280, height: 800 },
		args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync"],
	});
	return { ctx, profile };
}

async function reportFail(e, page, errors) {
	let said = "";
	if (page) said = await page.$eval("#status", (x) => x.textContent).catch(() => "");
	console.log("FAIL: " + (e && e.message || e) + (said ? "\n  the page's status line: " + said : "") +
		(errors.length ? "\n  page errors: " + errors.join(" | ") : ""));
	process.exitCode = 1;
}

async function closeBrowser(ctx, profile) {
	await ctx.close();
	fs.rmSync(profile, { recursive: true, force: true });
}

module.exports = { launch, reportFail, closeBrowser };
