-- 002-markers.sql: markers, the moments named inside a session: each hit of
-- a USDT probe asked for with 'strobe start --marker PATH:PROVIDER:NAME'
-- (recorded through a uprobe perf event, on the samples' clock), and each
-- 'strobe mark TEXT'.  Plots draw them, exports carry them, and
-- 'strobe report --markers' lists them.
CREATE TABLE markers (
	session_id	INTEGER NOT NULL,
	time_ns		INTEGER NOT NULL,	-- CLOCK_MONOTONIC, as samples.time_ns
	cpu		INTEGER,		-- NULL for strobe mark
	pid		INTEGER,		-- the process that hit the probe / ran strobe mark
	tid		INTEGER,
	kind		TEXT NOT NULL,		-- usdt | mark
	name		TEXT NOT NULL,		-- usdt: PROVIDER:NAME; mark: the text
	args		TEXT			-- usdt: the probe's arguments, "a0,a1,..." in decimal; NULL if none
);
CREATE INDEX markers_by_time ON markers(session_id, time_ns);

-- The USDT probes a session was started with, resolved to a file offset:
-- one row per probe site (a probe can sit at several places in a binary).
CREATE TABLE session_probes (
	session_id	INTEGER NOT NULL,
	spec		TEXT NOT NULL,		-- PATH:PROVIDER:NAME as given, PATH made absolute
	binary_key	TEXT,			-- binaries.key of PATH at session start
	offset		INTEGER NOT NULL,	-- file offset of the probe site
	semaphore	INTEGER,		-- file offset of the probe's semaphore; NULL: none
	nargs		INTEGER NOT NULL,
	arg_spec	TEXT			-- the note's argument string, e.g. "-4@%edi 8@%rsi"
);
