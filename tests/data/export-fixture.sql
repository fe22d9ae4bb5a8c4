-- export-fixture.sql: a small hand-made strobe session for the golden tests
-- of 'strobe export' (tests/t0260-export.sh, tests/golden/export.*).
-- t0260 applies schema/*.sql first, and replaces @W60@, @W30@ and @W10@
-- with the file offsets (hex) of work60, work30 and work10 + 4 in
-- tests/workloads/split603010, whose copy with build-id 5a5a... it puts in
-- the binary cache, next to tests/data/export-kallsyms (the snapshot).
--
-- Session 1 starts at CLOCK_MONOTONIC 1000 s (wall clock 1700000000 s),
-- lasts 10 ms on 2 CPUs and counts page-faults (c0) and context-switches
-- (c1).  Sample times are start + N us.  Session 2 has one sample.

INSERT INTO sessions (id, name, state, backend, owner_uid, hostname, kernel_release,
	nr_cpus, sample_event, sample_freq, start_ns, end_ns, wall_offset_ns,
	tsc_source, kernel_binary_id, kallsyms_key, samples, lost, throttled, duration_ns)
VALUES (1, 'fixture', 'done', 'perf', 0, 'fixturehost', '6.1.0-test', 2, 'cpu-clock',
	1000, 1000000000000, 1000010000000, 1699999000000000000, 'none', 1,
	'kallsyms:0123456789abcdef0123456789abcdef', 12, 3, 1, 10000000),
       (2, 'second', 'done', 'perf', 0, 'fixturehost', '6.1.0-test', 2, 'cpu-clock',
	1000, 1000020000000, 1000021000000, 1699999000000000000, 'none', 1,
	'kallsyms:0123456789abcdef0123456789abcdef', 1, 0, 0, 1000000);

INSERT INTO session_events (session_id, idx, name, type, config) VALUES
	(1, 0, 'page-faults', 1, 2),
	(1, 1, 'context-switches', 1, 3);

INSERT INTO session_cpus (session_id, cpu, samples, lost, tail_c0, tail_c1) VALUES
	(1, 0, 7, 0, 1, 0),
	(1, 1, 5, 3, 0, 2),
	(2, 0, 1, 0, NULL, NULL);

INSERT INTO binaries (id, key, path, size, cached, problem) VALUES
	(1, 'kernel:feedfacefeedfacefeedfacefeedfacefeedface', '[kernel.kallsyms]', NULL, 0, NULL),
	(2, 'buildid:5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a', '/opt/fixture/split603010', 20000, 1, NULL),
	(3, '[vdso]', '[vdso]', NULL, 0, NULL),
	(4, 'buildid:dead0000dead0000dead0000dead0000dead0000', '/opt/fixture/lib gone, "old".so', 4096, 1, NULL);

INSERT INTO comms (id, name) VALUES
	(1, 'split603010'), (2, 'we,ird "name"'), (3, 'swapper'), (4, 'split-worker'),
	(5, 'café'), (6, 'strobe');

INSERT INTO processes (session_id, pid, ppid, comm_id, start_ns, exit_ns) VALUES
	(1, 100, NULL, 1, 1000000000000, NULL),
	(1, 200, NULL, 2, 1000000000000, NULL),
	(1, 300, 100, 5, 1000006000000, 1000008000000),
	(1, 400, NULL, 6, 1000000400000, 1000000600000);

-- session_id, time_ns, tsc, cpu, pid, tid, comm_id, binary_id, offset, flags (1 user, 2 kernel), c0, c1
INSERT INTO samples (session_id, time_ns, tsc, cpu, pid, tid, comm_id, binary_id, offset, flags, c0, c1) VALUES
	(1, 1000000100000, 0, 0, 100, 100, 1, 2, @W60@, 1, 5, 0),
	(1, 1000000150000, 0, 1, 200, 200, 2, 4, 0x1234, 1, 0, 1),
	(1, 1000001100000, 0, 0, 100, 100, 1, 2, @W60@, 1, 3, 0),
	(1, 1000001150000, 0, 1, 0, 0, 3, 1, 0xffffffff81001010, 2, 0, 2),
	(1, 1000002100000, 0, 0, 100, 101, 4, 2, @W30@, 1, 0, 0),
	(1, 1000002150000, 0, 1, 100, 101, 4, 1, 0xffffffffc0001020, 2, 7, 1),
	(1, 1000003100000, 0, 0, 100, 100, 1, 3, 0xa10, 1, 0, 0),
	(1, 1000006100000, 0, 0, 100, 100, 1, 2, @W10@, 1, 2, 0),
	(1, 1000006150000, 0, 1, 300, 300, 5, NULL, NULL, 1, 1, 0),
	(1, 1000007150000, 0, 1, 200, 200, 2, 1, 0xffffffff81002005, 2, 4, 0),
	-- written after a later sample: the export must still be in time order
	(1, 1000007100000, 0, 0, 100, 100, 1, 2, 0x10, 1, 0, 0),
	(1, 1000009900000, 0, 0, 100, 100, 1, 2, @W60@, 1, 0, 3),
	(2, 1000020500000, 0, 0, 100, 100, 1, 2, @W60@, 1, NULL, NULL);

UPDATE sessions SET
	first_sample = (SELECT min(rowid) FROM samples WHERE session_id = sessions.id),
	last_sample = (SELECT max(rowid) FROM samples WHERE session_id = sessions.id);

INSERT INTO lost (session_id, cpu, time_ns, count, kind) VALUES
	(1, 1, 1000004000000, 3, 'ring'),
	(1, 0, 1000005000000, 1, 'throttle');

INSERT INTO markers (session_id, time_ns, cpu, pid, tid, kind, name, args) VALUES
	(1, 1000000500000, NULL, 400, 400, 'mark', 'phase 2: "go"', NULL),
	(1, 1000002200000, 1, 100, 101, 'usdt', 'app:request', '42,7'),
	(1, 1000009500000, NULL, 400, 400, 'mark', 'end', NULL);
