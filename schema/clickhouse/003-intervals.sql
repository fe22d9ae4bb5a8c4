-- 003-intervals.sql: strobe's ClickHouse fleet schema, version 3 (doc/SCHEMA.md,
-- "ClickHouse", and doc/FLEET.md, "Pushing from strobed").  Apply after the
-- files before it, on every server of strobe_fleet, in database strobe.
-- Needs ClickHouse 18.16 or later.
--
-- strobed --push cuts a running session into intervals: interval k of
-- (host, session) holds the session's SQLite sample rows with rowids
-- first_row..last_row (all that was committed when it was cut) as the
-- batches first_batch .. first_batch + batches - 1 of the session's
-- numbering.  Intervals are numbered 1, 2, ... and their rowid and batch
-- ranges follow each other without gap.  The row is inserted before its
-- batches (it is the plan they follow), so a push killed anywhere resumes
-- from here: by the next strobed, or by 'strobe push' once the session
-- has stopped, whose last part (the samples after the last interval,
-- processes, markers, lost records, binaries) and batch 0 follow the
-- intervals' batches.  While the session runs, its newest interval row
-- is its session row for the fleet reports (state 'running').

INSERT INTO schema_version (version) VALUES (3);

CREATE TABLE IF NOT EXISTS intervals_local (
	host		String,
	session		Int64,
	interval_no	UInt32,			-- 1, 2, ... ("interval" is a keyword)
	day		Date,			-- UTC day of the session's start
	first_row	Int64,			-- SQLite samples rowids, inclusive
	last_row	Int64,
	first_batch	UInt32,			-- its batches: first_batch ..
	batches		UInt32,			-- .. first_batch + batches - 1
	batch_rows	UInt32,			-- rows a batch at most (the session's plan)
	samples		UInt64,			-- sample rows of this interval
	samples_total	UInt64,			-- of intervals 1..interval
	content_hash	String,			-- XXH3-128 of its sample batches
	-- the session as it was when the interval was cut (for reports of a
	-- running session: batch 0 of sessions replaces it once stopped)
	name		String,
	backend		String,
	kernel_release	String,
	nr_cpus		UInt32,
	sample_event	String,
	sample_freq	Int64,
	sample_period	Int64,
	start_ns	Int64,
	wall_offset_ns	Int64,
	events		Array(String),
	pushed		DateTime DEFAULT now()
) ENGINE = MergeTree PARTITION BY toYYYYMMDD(day) ORDER BY (host, session, interval_no);
CREATE TABLE IF NOT EXISTS intervals AS intervals_local
	ENGINE = Distributed(strobe_fleet, strobe, intervals_local, cityHash64(host));
