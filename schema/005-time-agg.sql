-- 005-time-agg.sql: time views from sums kept while ingesting (issue 10).
--
-- sample_time holds, per session, the samples and counter increases
-- summed per fine time bucket of sessions.time_bucket_ns (bucket k holds
-- the samples with start_ns + k * width <= time_ns < start_ns + (k+1) *
-- width), CPU, process, comm and binary, so that 'strobe plot' sums
-- coarser buckets from it instead of scanning the raw samples.  strobed
-- writes it with each commit of samples, so it always agrees with them.
-- last_row is the largest samples.rowid, min_ns and max_ns the earliest
-- and latest time_ns of the row's samples.
--
-- sessions.time_bucket_ns is that width (NULL: the session has no
-- sample_time rows, as every session recorded before this schema), and
-- sessions.late_samples counts the samples stored after a sample of a
-- later time (0: the rowid order is the time order; NULL: not counted).
CREATE TABLE sample_time (
	session_id	INTEGER NOT NULL,
	bucket		INTEGER NOT NULL,
	cpu		INTEGER NOT NULL,
	pid		INTEGER NOT NULL,
	comm_id		INTEGER NOT NULL,
	binary_id	INTEGER NOT NULL,
	samples		INTEGER NOT NULL,
	last_row	INTEGER NOT NULL,
	min_ns		INTEGER NOT NULL,
	max_ns		INTEGER NOT NULL,
	c0 INTEGER, c1 INTEGER, c2 INTEGER, c3 INTEGER,
	c4 INTEGER, c5 INTEGER, c6 INTEGER, c7 INTEGER,
	PRIMARY KEY (session_id, bucket, cpu, pid, comm_id, binary_id)
) WITHOUT ROWID;
ALTER TABLE sessions ADD COLUMN time_bucket_ns INTEGER;
ALTER TABLE sessions ADD COLUMN late_samples INTEGER;
