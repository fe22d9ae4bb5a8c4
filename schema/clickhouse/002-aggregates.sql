-- 002-aggregates.sql: strobe's ClickHouse fleet schema, version 2 (doc/SCHEMA.md,
-- "ClickHouse").  Applied after 001-initial.sql, the same way (every server
-- of strobe_fleet, database strobe, clickhouse-client --multiquery).
-- Needs ClickHouse 18.16 or later.
-- Aggregating tables: the samples of a session summed per location and per
-- time bucket, so that fleet reports read thousands of rows where the
-- samples table holds millions.  'strobe push' computes them from the
-- session's samples and sends them as numbered batches of the session,
-- like every other table (whole or nothing, found again by the "which
-- batches are there" query, covered by the content hash).  They are not
-- materialized views: a view's part can be written by an INSERT that then
-- fails, and the resumed push would count those samples twice.
-- Sharded by cityHash64(host) like samples.  batch is the last column of
-- the sorting key, so SummingMergeTree folds rows of one batch only: the
-- batches of a session stay visible for a resumed push, and merging them
-- never changes a sum.

CREATE TABLE IF NOT EXISTS schema_version (
	version		UInt32,
	applied		DateTime DEFAULT now()
) ENGINE = MergeTree ORDER BY version;
INSERT INTO schema_version (version) VALUES (2);

-- Samples per location: sum(n) is count() of samples, sum(period) and
-- sum(cK) the sums of samples' columns, for the same (host, session,
-- binary_id, binary_key, offset, pid, comm, flags) and UTC day.
CREATE TABLE IF NOT EXISTS samples_by_loc_local (
	host		String,
	session		Int64,
	batch		UInt32,
	day		Date,			-- UTC day of the samples (wall clock)
	binary_id	Int64,
	binary_key	String,
	offset		UInt64,
	pid		UInt32,
	comm		String,
	flags		UInt32,
	n		UInt64,			-- samples
	period		Int64,			-- sum of their periods
	c0 Int64, c1 Int64, c2 Int64, c3 Int64,	-- sums of their counter increases
	c4 Int64, c5 Int64, c6 Int64, c7 Int64
) ENGINE = SummingMergeTree((n, period, c0, c1, c2, c3, c4, c5, c6, c7))
	PARTITION BY toYYYYMMDD(day)
	ORDER BY (host, session, binary_id, binary_key, offset, pid, comm, flags, batch);
CREATE TABLE IF NOT EXISTS samples_by_loc AS samples_by_loc_local
	ENGINE = Distributed(strobe_fleet, strobe, samples_by_loc_local, cityHash64(host));

-- Samples per 100 ms since the session's start: bucket_ns is time_ns -
-- start_ns (the session's, in CLOCK_MONOTONIC of the host, as
-- samples.time_ns) rounded down to a multiple of 100,000,000, per CPU,
-- pid and binary, for timelines: a plot's buckets of a multiple of 100 ms
-- from the start are sums of them, as locally of sample_time's.
CREATE TABLE IF NOT EXISTS samples_by_time_local (
	host		String,
	session		Int64,
	batch		UInt32,
	day		Date,			-- UTC day of the samples (wall clock)
	bucket_ns	Int64,
	cpu		UInt32,
	pid		UInt32,
	binary_id	Int64,
	n		UInt64,
	period		Int64,
	c0 Int64, c1 Int64, c2 Int64, c3 Int64,
	c4 Int64, c5 Int64, c6 Int64, c7 Int64
) ENGINE = SummingMergeTree((n, period, c0, c1, c2, c3, c4, c5, c6, c7))
	PARTITION BY toYYYYMMDD(day)
	ORDER BY (host, session, bucket_ns, cpu, pid, binary_id, batch);
CREATE TABLE IF NOT EXISTS samples_by_time AS samples_by_time_local
	ENGINE = Distributed(strobe_fleet, strobe, samples_by_time_local, cityHash64(host));

-- Sessions pushed before this version (schema 1) have samples but no
-- aggregate rows: sum them here, on each shard from its own samples, as
-- batch 4294967295 (no push makes that number).  Sessions that have
-- aggregate rows already are left out, so applying this file again adds
-- nothing.  Such a session is complete for the reports; pushing it again
-- is refused as other content (its hash did not cover these rows).
INSERT INTO samples_by_loc_local SELECT host, session, 4294967295, day, binary_id,
	binary_key, offset, pid, comm, flags, count(), sum(period), sum(c0), sum(c1),
	sum(c2), sum(c3), sum(c4), sum(c5), sum(c6), sum(c7)
FROM samples_local WHERE (host, session) NOT IN (SELECT host, session FROM samples_by_loc_local)
GROUP BY host, session, day, binary_id, binary_key, offset, pid, comm, flags;
INSERT INTO samples_by_time_local SELECT host, session, 4294967295, day,
	intDiv(time_ns - s_start, 100000000) * 100000000
	  - if((time_ns - s_start) % 100000000 < 0, 100000000, 0) AS b,
	cpu, pid, binary_id, count(), sum(period), sum(c0), sum(c1), sum(c2), sum(c3), sum(c4),
	sum(c5), sum(c6), sum(c7)
FROM samples_local ANY INNER JOIN (SELECT host, session, start_ns AS s_start
	FROM sessions_local WHERE batch = 0) USING (host, session)
WHERE (host, session) NOT IN (SELECT host, session FROM samples_by_time_local)
GROUP BY host, session, day, b, cpu, pid, binary_id;
