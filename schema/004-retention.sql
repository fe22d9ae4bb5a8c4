-- 004-retention.sql: crash safety and retention (issue 9).
--
-- sessions.state gains two values.  'interrupted': the strobed recording
-- the session died (SIGKILL, a crash, power loss); the next strobed kept
-- what was committed and rebuilt sample_agg, session_cpus and the
-- session's totals from the stored rows.  'deleting': 'strobe rm' or
-- strobed's retention (--keep, --max-size) removes the session, its rows
-- going in bounded batches; no program shows it any more.
--
-- The indexes let strobed find those sessions at start-up, delete one
-- session's rows, and tell which binaries and cache entries are still
-- referenced, without scanning whole tables.
CREATE INDEX sessions_by_state ON sessions(state);
CREATE INDEX sessions_by_kallsyms ON sessions(kallsyms_key);
CREATE INDEX sessions_by_kernel ON sessions(kernel_binary_id);
CREATE INDEX lost_by_session ON lost(session_id);
CREATE INDEX session_probes_by_session ON session_probes(session_id);
CREATE INDEX sample_agg_by_binary ON sample_agg(binary_id);
