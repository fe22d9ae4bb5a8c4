-- 016: how a session splits the counting events' increases among threads
-- (strobe start/record --attribution, doc/DESIGN.md "Exact attribution").
-- 'exact': the counters were also read at every context switch, so each
-- thread's samples carry exactly its own increases, and the increases of a
-- thread's last run after its last sample are in sample_agg and
-- sample_time rows with samples = 0 (its tail).  NULL: 'sample', each
-- increase goes to the next sample on its CPU (sessions before schema 15).
ALTER TABLE sessions ADD COLUMN attribution TEXT;
