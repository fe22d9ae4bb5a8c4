-- 015-counts.sql: counts saved by 'strobe count --save NAME' (issue 13).
--
-- A count session is a sessions row with backend 'count' and no samples
-- (sample_event 'none', samples 0); its counting events are its
-- session_events rows (idx, name, type, config as for a sampling session),
-- start_ns and end_ns the counting's start and end (the client's
-- CLOCK_MONOTONIC).  strobed writes it from the requests count-begin,
-- count-data and count-end (lib/base/proto.h), checking each value.
--
-- count_values: one count of one event in one interval: t_ns is the
-- interval's end, ns after the session's start_ns (each -I interval, or
-- the whole run as one); event_idx its session_events.idx; unit what the
-- count covers: '' everything counted, 'CPU3' one CPU (-A), 'S0-D0-C1' a
-- core, 'S0' a socket, 'comm-tid' a thread (--per-thread); value the
-- count over the interval, scaled for multiplexing (NULL: not counted);
-- pct_running the share of the interval the event was on the PMU (0-100).
CREATE TABLE count_values (
	session_id	INTEGER NOT NULL,
	t_ns		INTEGER NOT NULL,
	event_idx	INTEGER NOT NULL,
	unit		TEXT NOT NULL,
	value		REAL,
	pct_running	REAL,
	PRIMARY KEY (session_id, t_ns, event_idx, unit)
) WITHOUT ROWID;
