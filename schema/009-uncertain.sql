-- 009-uncertain.sql: processes whose maps may be wrong, records out of
-- time order (issue 11).
--
-- A PERF_RECORD_LOST counts records of every kind that did not fit in a
-- CPU's ring: mmap, exec, fork and exit records may be among them, and
-- nothing says whose.  From then on the maps strobed keeps of every
-- process alive at that moment may lack a mapping, or still hold those of
-- a process that exited (its pid reused), so a user sample of theirs may
-- be named from the wrong binary.  processes.uncertain_ns is the time of
-- the first such loss while the process lived (for a child forked from
-- such a process with a copy of its maps, the fork): NULL when its maps
-- are complete, and in sessions recorded before this schema.
ALTER TABLE processes ADD COLUMN uncertain_ns INTEGER;

-- Records the time-ordered merge of the CPUs' rings handed out after a
-- younger one: written to their ring more than the merge horizon (5 ms)
-- late, they could not be put in order.  A late sample was resolved with
-- the maps of its delivery; a late side-band record of a process marks it
-- uncertain from the record's time (above).  NULL: not counted (sessions
-- recorded before this schema).
ALTER TABLE sessions ADD COLUMN late_records INTEGER;
ALTER TABLE sessions ADD COLUMN late_max_ns INTEGER;
