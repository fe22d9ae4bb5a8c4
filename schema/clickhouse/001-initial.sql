-- 001-initial.sql: strobe's ClickHouse fleet schema, version 1 (doc/SCHEMA.md,
-- "ClickHouse").  Run on every server of the cluster strobe_fleet, in the
-- database strobe (the push URL's ?database=strobe), with
-- clickhouse-client --multiquery.  Needs ClickHouse 18.16 or later.
-- The Distributed tables name database strobe: with currentDatabase()
-- instead, 18.16 resolves it again when a server restarts, in database
-- default, and the tables then fail (t0801 checks a restarted shard).
-- Every fleet table is a MergeTree table NAME_local on each shard and a
-- Distributed table NAME over strobe_fleet, sharded by the host, so that
-- all rows of one host, and so each push batch, land on one shard.
-- Rows carry (host, session, batch): 'strobe push' sends each batch of a
-- session in one INSERT of one block and skips those already there.
-- Later versions add files 002-..., never edit this one.

CREATE TABLE IF NOT EXISTS schema_version (
	version		UInt32,
	applied		DateTime DEFAULT now()
) ENGINE = MergeTree ORDER BY version;
INSERT INTO schema_version (version) VALUES (1);

CREATE TABLE IF NOT EXISTS sessions_local (
	host		String,
	session		Int64,
	batch		UInt32,
	day		Date,			-- UTC day of the session's start
	content_hash	String,			-- XXH3-128 of every row pushed
	batches		UInt32,			-- batches of the session, this one included
	batch_rows	UInt32,			-- rows a batch at most: the plan of the batches
	name		String,
	state		String,
	backend		String,
	kernel_release	String,
	nr_cpus		UInt32,
	sample_event	String,
	sample_freq	Int64,
	sample_period	Int64,
	start_ns	Int64,			-- CLOCK_MONOTONIC of the host
	end_ns		Int64,
	wall_offset_ns	Int64,			-- CLOCK_REALTIME - CLOCK_MONOTONIC
	samples		Int64,
	lost		Int64,
	throttled	Int64,
	events		Array(String),		-- counting events: c0, c1, ... of samples
	pushed		DateTime DEFAULT now()
) ENGINE = MergeTree PARTITION BY toYYYYMMDD(day) ORDER BY (host, session);
CREATE TABLE IF NOT EXISTS sessions AS sessions_local
	ENGINE = Distributed(strobe_fleet, strobe, sessions_local, cityHash64(host));

CREATE TABLE IF NOT EXISTS samples_local (
	host		String,
	session		Int64,
	batch		UInt32,
	day		Date,			-- UTC day of the sample (wall clock)
	time_ns		Int64,			-- CLOCK_MONOTONIC, as in SQLite
	tsc		Int64,
	cpu		UInt32,
	pid		UInt32,
	tid		UInt32,
	comm		String,
	binary_id	Int64,			-- binaries.binary_id (0: none)
	binary_key	String,			-- its key: buildid:, xxh3:, kernel:, [anon] ...
	offset		UInt64,			-- file offset; kernel: address
	flags		UInt32,
	period		Int64,
	c0 Int64, c1 Int64, c2 Int64, c3 Int64,	-- counter increase (0: none)
	c4 Int64, c5 Int64, c6 Int64, c7 Int64
) ENGINE = MergeTree PARTITION BY toYYYYMMDD(day) ORDER BY (host, session, time_ns);
CREATE TABLE IF NOT EXISTS samples AS samples_local
	ENGINE = Distributed(strobe_fleet, strobe, samples_local, cityHash64(host));

CREATE TABLE IF NOT EXISTS markers_local (
	host		String,
	session		Int64,
	batch		UInt32,
	day		Date,
	time_ns		Int64,
	cpu		Int32,			-- -1: none (strobe mark)
	pid		UInt32,
	tid		UInt32,
	kind		String,
	name		String,
	args		String
) ENGINE = MergeTree PARTITION BY toYYYYMMDD(day) ORDER BY (host, session, time_ns);
CREATE TABLE IF NOT EXISTS markers AS markers_local
	ENGINE = Distributed(strobe_fleet, strobe, markers_local, cityHash64(host));

CREATE TABLE IF NOT EXISTS lost_local (
	host		String,
	session		Int64,
	batch		UInt32,
	day		Date,
	time_ns		Int64,
	cpu		UInt32,
	count		Int64,
	kind		String
) ENGINE = MergeTree PARTITION BY toYYYYMMDD(day) ORDER BY (host, session, time_ns);
CREATE TABLE IF NOT EXISTS lost AS lost_local
	ENGINE = Distributed(strobe_fleet, strobe, lost_local, cityHash64(host));

CREATE TABLE IF NOT EXISTS processes_local (
	host		String,
	session		Int64,
	batch		UInt32,
	day		Date,			-- UTC day of the session's start
	pid		UInt32,
	ppid		Int64,			-- -1: unknown
	comm		String,
	start_ns	Int64,			-- -1: unknown
	exit_ns		Int64			-- -1: unknown
) ENGINE = MergeTree PARTITION BY toYYYYMMDD(day) ORDER BY (host, session, start_ns, pid);
CREATE TABLE IF NOT EXISTS processes AS processes_local
	ENGINE = Distributed(strobe_fleet, strobe, processes_local, cityHash64(host));

-- The binaries a session sampled, as that host knows them: its id in the
-- host's database (samples.binary_id), key, path and display name.
CREATE TABLE IF NOT EXISTS binaries_local (
	host		String,
	session		Int64,
	batch		UInt32,
	day		Date,			-- UTC day of the session's start
	binary_id	Int64,
	key		String,
	path		String,
	name		String,			-- as reports show it: path, [kernel.kallsyms] ...
	problem		String			-- why it cannot be symbolised, or ''
) ENGINE = MergeTree PARTITION BY toYYYYMMDD(day) ORDER BY (host, session, binary_id);
CREATE TABLE IF NOT EXISTS binaries AS binaries_local
	ENGINE = Distributed(strobe_fleet, strobe, binaries_local, cityHash64(host));

-- Symbols of the fleet, by binary key: what each sampled (key, offset)
-- is named, resolved on the host that pushed it from its copy of the
-- binary (the key names the contents, so not the path: that is the
-- host's, in binaries).  The same key holds the same bytes everywhere, so hosts push
-- the same rows; ReplacingMergeTree folds them in the background and
-- readers take any(symbol) per (binary_key, offset).  Sharded by the key,
-- not the host.
CREATE TABLE IF NOT EXISTS symbols_local (
	binary_key	String,			-- as samples.binary_key
	offset		UInt64,
	symbol		String			-- [unknown], [binary unavailable] as in reports
) ENGINE = ReplacingMergeTree ORDER BY (binary_key, offset);
CREATE TABLE IF NOT EXISTS symbols AS symbols_local
	ENGINE = Distributed(strobe_fleet, strobe, symbols_local, cityHash64(binary_key));
