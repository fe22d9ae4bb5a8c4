-- 001-initial.sql: strobe database schema, version 1.
-- Applied once to an empty database by db_open(); doc/SCHEMA.md describes
-- every table and column.  Later versions add files 002-..., never edit this.

CREATE TABLE sessions (
	id		INTEGER PRIMARY KEY,
	name		TEXT,
	state		TEXT NOT NULL,		-- running | done | aborted
	backend		TEXT NOT NULL,		-- perf | driver
	owner_uid	INTEGER NOT NULL,	-- uid of the client that started it
	hostname	TEXT,
	kernel_release	TEXT,
	nr_cpus		INTEGER NOT NULL,
	sample_event	TEXT NOT NULL,
	sample_freq	INTEGER,		-- Hz, when sampling by frequency
	sample_period	INTEGER,		-- events, when sampling by period
	start_ns	INTEGER NOT NULL,	-- CLOCK_MONOTONIC at start
	end_ns		INTEGER,		-- CLOCK_MONOTONIC at stop
	wall_offset_ns	INTEGER NOT NULL,	-- CLOCK_REALTIME - CLOCK_MONOTONIC at start
	tsc_mult	INTEGER,		-- TSC to ns: ns = ref_ns + ((tsc - ref) * mult >> shift)
	tsc_shift	INTEGER,
	tsc_ref		INTEGER,
	tsc_ref_ns	INTEGER,
	tsc_source	TEXT,			-- perf-mmap | calibrated | exact | none
	kernel_binary_id INTEGER,		-- binaries.id of the running kernel
	kallsyms_key	TEXT,			-- cache entry holding /proc/kallsyms at start
	first_sample	INTEGER,		-- samples.rowid range of this session
	last_sample	INTEGER,
	samples		INTEGER NOT NULL DEFAULT 0,
	lost		INTEGER NOT NULL DEFAULT 0,
	throttled	INTEGER NOT NULL DEFAULT 0,
	duration_ns	INTEGER
);

-- Counting events of a session; idx is the column c<idx> of samples.
CREATE TABLE session_events (
	session_id	INTEGER NOT NULL,
	idx		INTEGER NOT NULL,
	name		TEXT NOT NULL,		-- as given with -e
	type		INTEGER NOT NULL,	-- perf_event_attr.type
	config		INTEGER NOT NULL,
	config1		INTEGER NOT NULL DEFAULT 0,
	config2		INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (session_id, idx)
) WITHOUT ROWID;

-- Per-CPU totals; tail_c<i> is the counter increase after the CPU's last
-- sample, which no sample carries (shown as unattributed in reports).
CREATE TABLE session_cpus (
	session_id	INTEGER NOT NULL,
	cpu		INTEGER NOT NULL,
	samples		INTEGER NOT NULL,
	lost		INTEGER NOT NULL,
	tail_c0 INTEGER, tail_c1 INTEGER, tail_c2 INTEGER, tail_c3 INTEGER,
	tail_c4 INTEGER, tail_c5 INTEGER, tail_c6 INTEGER, tail_c7 INTEGER,
	PRIMARY KEY (session_id, cpu)
) WITHOUT ROWID;

-- Every binary ever sampled, by content and path: key is 'buildid:<hex>' or
-- 'xxh3:<hex>' for files, 'kernel:<build-id hex>' for the kernel, or one
-- of '[vdso]', '[anon]', '[unknown]', '[stack]', '[heap]' for memory with no file.
-- The same contents at two paths (a copy) are two rows with one key and
-- one cache entry.
CREATE TABLE binaries (
	id		INTEGER PRIMARY KEY,
	key		TEXT NOT NULL,
	path		TEXT NOT NULL,		-- path it was mapped from
	size		INTEGER,
	cached		INTEGER NOT NULL DEFAULT 0,	-- 1: copy in the cache under key
	problem		TEXT,			-- why it cannot be symbolised, or NULL
	UNIQUE (key, path)
);

CREATE TABLE comms (
	id		INTEGER PRIMARY KEY,
	name		TEXT NOT NULL UNIQUE
);

-- Raw timestamped samples.  No index: a session's rows are the rowid range
-- sessions.first_sample..last_sample, written in time order.
CREATE TABLE samples (
	session_id	INTEGER NOT NULL,
	time_ns		INTEGER NOT NULL,	-- CLOCK_MONOTONIC
	tsc		INTEGER,
	cpu		INTEGER NOT NULL,
	pid		INTEGER NOT NULL,
	tid		INTEGER NOT NULL,
	comm_id		INTEGER,
	binary_id	INTEGER,
	offset		INTEGER,		-- file offset in the binary; kernel: address
	flags		INTEGER NOT NULL,	-- STROBE_SAMPLE_* of kernel/uapi/strobe.h
	c0 INTEGER, c1 INTEGER, c2 INTEGER, c3 INTEGER,	-- counter increase
	c4 INTEGER, c5 INTEGER, c6 INTEGER, c7 INTEGER	-- attributed to the sample
);

-- Per-session histogram kept while ingesting, so that reports need not
-- scan samples: one row per (binary, offset, pid, comm, mode).
CREATE TABLE sample_agg (
	session_id	INTEGER NOT NULL,
	binary_id	INTEGER NOT NULL,
	offset		INTEGER NOT NULL,
	pid		INTEGER NOT NULL,
	comm_id		INTEGER NOT NULL,
	flags		INTEGER NOT NULL,
	samples		INTEGER NOT NULL,
	c0 INTEGER, c1 INTEGER, c2 INTEGER, c3 INTEGER,
	c4 INTEGER, c5 INTEGER, c6 INTEGER, c7 INTEGER,
	PRIMARY KEY (session_id, binary_id, offset, pid, comm_id, flags)
) WITHOUT ROWID;

-- Lost records as the kernel reported them.
CREATE TABLE lost (
	session_id	INTEGER NOT NULL,
	cpu		INTEGER NOT NULL,
	time_ns		INTEGER NOT NULL,
	count		INTEGER NOT NULL,
	kind		TEXT NOT NULL		-- ring (buffer full) | samples | throttle
);

-- Processes seen during a session (from side-band and /proc at start).
CREATE TABLE processes (
	session_id	INTEGER NOT NULL,
	pid		INTEGER NOT NULL,
	ppid		INTEGER,
	comm_id		INTEGER,
	start_ns	INTEGER,
	exit_ns		INTEGER,
	PRIMARY KEY (session_id, pid, start_ns)
) WITHOUT ROWID;
