-- 011-process-start.sql: the aggregates keyed by process, not by pid
-- (issue 11: pid reuse).
--
-- A pid can be two processes in one session (the first exits, the kernel
-- hands its pid to a new one).  sample_agg and sample_time gain start_ns,
-- the process's start (processes.start_ns) as strobed knew it at the
-- sample, in their primary keys, so that reports and plots keep such
-- processes apart.  0: unknown (a pid strobed had no process for, or a
-- row written before this schema that could not be matched).
--
-- Rows written before: a pid that was one process in its session gets that
-- process's start.  A reused pid: a sample_time row whose samples (min_ns
-- .. max_ns) all fall in the life of one of its processes (no other start
-- in between) gets that one's; sample_agg rows (no time) and rows spanning
-- a reuse get 0.  A primary key cannot be changed in place: both tables
-- are rebuilt (they hold sums, not samples: small next to sample_blocks).
-- start_ns follows the old key's columns and ends the new key: SQLite
-- 3.40's quick_check wrongly reports NULLs in a WITHOUT ROWID table whose
-- key is not its first columns in table order.  Write these tables with
-- named columns.
CREATE TABLE sample_agg_011 (
	session_id	INTEGER NOT NULL,
	binary_id	INTEGER NOT NULL,
	offset		INTEGER NOT NULL,
	pid		INTEGER NOT NULL,
	comm_id		INTEGER NOT NULL,
	flags		INTEGER NOT NULL,
	start_ns	INTEGER NOT NULL DEFAULT 0,
	samples		INTEGER NOT NULL,
	c0 INTEGER, c1 INTEGER, c2 INTEGER, c3 INTEGER,
	c4 INTEGER, c5 INTEGER, c6 INTEGER, c7 INTEGER,
	period		INTEGER,
	PRIMARY KEY (session_id, binary_id, offset, pid, comm_id, flags, start_ns)
) WITHOUT ROWID;
INSERT INTO sample_agg_011 (session_id, binary_id, offset, pid, comm_id, flags, samples,
			    c0, c1, c2, c3, c4, c5, c6, c7, period, start_ns)
SELECT a.session_id, a.binary_id, a.offset, a.pid, a.comm_id, a.flags, a.samples,
       a.c0, a.c1, a.c2, a.c3, a.c4, a.c5, a.c6, a.c7, a.period,
       coalesce((SELECT CASE WHEN count(*) = 1 THEN max(p.start_ns) END FROM processes AS p
		 WHERE p.session_id = a.session_id AND p.pid = a.pid), 0)
FROM sample_agg AS a;
DROP TABLE sample_agg;
ALTER TABLE sample_agg_011 RENAME TO sample_agg;
CREATE INDEX sample_agg_by_binary ON sample_agg(binary_id);

CREATE TABLE sample_time_011 (
	session_id	INTEGER NOT NULL,
	bucket		INTEGER NOT NULL,
	cpu		INTEGER NOT NULL,
	pid		INTEGER NOT NULL,
	comm_id		INTEGER NOT NULL,
	binary_id	INTEGER NOT NULL,
	start_ns	INTEGER NOT NULL DEFAULT 0,
	samples		INTEGER NOT NULL,
	last_row	INTEGER NOT NULL,
	min_ns		INTEGER NOT NULL,
	max_ns		INTEGER NOT NULL,
	c0 INTEGER, c1 INTEGER, c2 INTEGER, c3 INTEGER,
	c4 INTEGER, c5 INTEGER, c6 INTEGER, c7 INTEGER,
	PRIMARY KEY (session_id, bucket, cpu, pid, comm_id, binary_id, start_ns)
) WITHOUT ROWID;
INSERT INTO sample_time_011 (session_id, bucket, cpu, pid, comm_id, binary_id, samples,
			     last_row, min_ns, max_ns, c0, c1, c2, c3, c4, c5, c6, c7,
			     start_ns)
SELECT t.session_id, t.bucket, t.cpu, t.pid, t.comm_id, t.binary_id, t.samples,
       t.last_row, t.min_ns, t.max_ns, t.c0, t.c1, t.c2, t.c3, t.c4, t.c5, t.c6, t.c7,
       coalesce((SELECT CASE
			WHEN count(*) = 1 THEN max(p.start_ns)
			WHEN count(*) FILTER (WHERE p.start_ns > t.min_ns
					      AND p.start_ns <= t.max_ns) = 0
			THEN max(p.start_ns) FILTER (WHERE p.start_ns <= t.min_ns)
			END
		 FROM processes AS p WHERE p.session_id = t.session_id AND p.pid = t.pid), 0)
FROM sample_time AS t;
DROP TABLE sample_time;
ALTER TABLE sample_time_011 RENAME TO sample_time;
