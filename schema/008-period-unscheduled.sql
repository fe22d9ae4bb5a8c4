-- 008-period-unscheduled.sql: right numbers under load (issue 10).
--
-- samples.period (a column of the samples table since this schema: the
-- sample_blocks version 2 column SB_PERIOD) is the sampling event's period
-- that ended at the sample: how many of its events the sample stands for.
-- sample_agg.period sums it per histogram row; NULL when a sample's period
-- is unknown (every session recorded before this schema).  Reports weigh
-- samples by it when it varies, as perf report does.
ALTER TABLE sample_agg ADD COLUMN period INTEGER;

-- Where a CPU's sampling group was enabled but not counting: the kernel
-- multiplexed it with other events (kind 'multiplexed', running_ns <
-- enabled_ns), or could not schedule it at all and put it in error state
-- (kind 'unschedulable': a pinned group whose counters other pinned events
-- hold).  No sample and no counter increase exists for that time, so a
-- report or plot of it says so.  start_ns..end_ns is the interval it was
-- seen in: between two samples of the CPU (from time enabled and running
-- read with each sample), or from the CPU's last sample to the session's
-- end.
CREATE TABLE unscheduled (
	session_id	INTEGER NOT NULL,
	cpu		INTEGER NOT NULL,
	start_ns	INTEGER NOT NULL,
	end_ns		INTEGER NOT NULL,
	enabled_ns	INTEGER NOT NULL,	-- group time enabled in the interval
	running_ns	INTEGER NOT NULL,	-- of which it was counting
	kind		TEXT NOT NULL		-- multiplexed | unschedulable
);
CREATE INDEX unscheduled_by_session ON unscheduled(session_id, cpu, start_ns);
