-- 007-lost-intervals.sql: counter increases over lost intervals (issue 10).
--
-- When records of a CPU are lost (ring full, spool full, a strobed killed
-- with records spooled), the counters keep counting, and the next sample
-- of that CPU would carry all they counted over the gap, as if it had
-- earned it.  strobed now stores that sample with counter increases 0 and
-- the flag STROBE_SAMPLE_AFTER_LOSS (512), and adds what it carried to its
-- CPU's lost_c<i>: unattributed, like tail_c<i>, in every report's totals.
-- NULL beyond the session's number of events, and in sessions recorded
-- before this schema (which charged the gap to the next sample).
ALTER TABLE session_cpus ADD COLUMN lost_c0 INTEGER;
ALTER TABLE session_cpus ADD COLUMN lost_c1 INTEGER;
ALTER TABLE session_cpus ADD COLUMN lost_c2 INTEGER;
ALTER TABLE session_cpus ADD COLUMN lost_c3 INTEGER;
ALTER TABLE session_cpus ADD COLUMN lost_c4 INTEGER;
ALTER TABLE session_cpus ADD COLUMN lost_c5 INTEGER;
ALTER TABLE session_cpus ADD COLUMN lost_c6 INTEGER;
ALTER TABLE session_cpus ADD COLUMN lost_c7 INTEGER;
