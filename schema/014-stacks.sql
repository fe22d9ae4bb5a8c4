-- 014-stacks.sql: call stacks (issue 12: strobe record -g).
--
-- stacks: the distinct call stacks of a session, each stored once.  id is
-- the stack's number in its session (1, 2, ...), what samples.stack_id
-- (sample_blocks column SB_STACK, NULL: the sample has no stack) refers
-- to.  hash is a 64-bit hash of frames (XXH3-64, as a signed integer),
-- the key strobed finds a stack by.  frames holds nr frames, leaf first,
-- 16 bytes each: the little-endian int64 binary_id (binaries.id) and the
-- little-endian int64 offset, as a sample's own (binary_id, offset): a
-- file offset in the binary, a kernel address for [kernel.kallsyms], the
-- address itself for [unknown].  Frame 0 is the sampled location; every
-- other is a return address less one (inside the call instruction, so
-- that a call ending its function names that function).  flags: bit 0
-- (1) the stack is incomplete: unwinding stopped before the outermost
-- frame (why: unwind_errors), or the kernel cut it at its maximum depth;
-- bit 1 (2) kernel frames were captured; bit 2 (4) user frames were.
--
-- stack_agg: per session, the samples and counter increases of each
-- (stack, process, comm), kept while ingesting as sample_agg is, so that
-- inclusive reports and flame graphs cost the number of distinct stacks,
-- not of samples.  period sums the samples' periods (NULL when one was
-- unknown).
--
-- unwind_errors: samples whose user stack could not be unwound to its
-- outermost frame (--call-graph dwarf), counted per binary (the one the
-- unwinder stopped in; NULL: no binary, an address in no mapping) and
-- reason ('no CFI', 'no mapping', 'outside the stack copy', 'no
-- registers', 'binary unreadable', 'depth limit', ...).
--
-- raw_stacks: with --keep-stacks, each sample's user registers and stack
-- copy as captured (struct strobe_ustack of kernel/uapi/strobe.h, from
-- abi on), by the sample's rowid.
--
-- sessions.call_graph: 'fp' or 'dwarf,BYTES'; NULL: no stacks recorded.
CREATE TABLE stacks (
	session_id	INTEGER NOT NULL,
	id		INTEGER NOT NULL,
	hash		INTEGER NOT NULL,
	nr		INTEGER NOT NULL,
	flags		INTEGER NOT NULL,
	frames		BLOB NOT NULL,
	PRIMARY KEY (session_id, id)
) WITHOUT ROWID;
CREATE TABLE stack_agg (
	session_id	INTEGER NOT NULL,
	stack_id	INTEGER NOT NULL,
	pid		INTEGER NOT NULL,
	comm_id		INTEGER NOT NULL,
	start_ns	INTEGER NOT NULL DEFAULT 0,
	samples		INTEGER NOT NULL,
	period		INTEGER,
	c0 INTEGER, c1 INTEGER, c2 INTEGER, c3 INTEGER,
	c4 INTEGER, c5 INTEGER, c6 INTEGER, c7 INTEGER,
	PRIMARY KEY (session_id, stack_id, pid, comm_id, start_ns)
) WITHOUT ROWID;
CREATE TABLE unwind_errors (
	session_id	INTEGER NOT NULL,
	binary_id	INTEGER,
	reason		TEXT NOT NULL,
	count		INTEGER NOT NULL
);
CREATE INDEX unwind_errors_by_session ON unwind_errors(session_id);
CREATE TABLE raw_stacks (
	session_id	INTEGER NOT NULL,
	sample_row	INTEGER NOT NULL,
	ustack		BLOB NOT NULL,
	PRIMARY KEY (session_id, sample_row)
) WITHOUT ROWID;
ALTER TABLE sessions ADD COLUMN call_graph TEXT;
