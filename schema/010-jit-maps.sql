-- 010-jit-maps.sql: JIT compilers' perf maps, copied into the session
-- (issue 11).
--
-- A process that had anonymous executable memory ([anon]: JIT code) may
-- name its functions in /tmp/perf-PID.map ("START SIZE NAME" per line,
-- hex).  At the process's exit, or when the session stops while it still
-- runs, strobed reads that file (a regular file owned by the process's
-- user or root, not through a symlink, at most 64 MiB) and keeps it here,
-- so that reports name the process's [anon] samples after /tmp is
-- cleaned.  Samples in [anon] memory have offset = the address itself, so
-- a location is named from (pid, offset).
--
-- One row per process whose map was looked for: symbols kept, lines
-- dropped (malformed, overlong names, huge sizes, past the limit), and
-- the problem when the file was refused or unreadable (NULL otherwise).
CREATE TABLE jit_maps (
	session_id INTEGER NOT NULL,
	pid INTEGER NOT NULL,
	start_ns INTEGER NOT NULL,	-- the process's (processes.start_ns), 0 if unknown
	path TEXT NOT NULL,
	symbols INTEGER NOT NULL,
	dropped INTEGER NOT NULL,
	problem TEXT
);
CREATE INDEX jit_maps_pid ON jit_maps(session_id, pid);

-- The symbols: [addr, addr + size) of process (session_id, pid, start_ns)
-- is name.  Later lines of a file win where ranges overlap (a JIT reuses
-- memory): seq is the line's rank among the kept ones.
CREATE TABLE jit_symbols (
	session_id INTEGER NOT NULL,
	pid INTEGER NOT NULL,
	start_ns INTEGER NOT NULL,
	seq INTEGER NOT NULL,
	addr INTEGER NOT NULL,
	size INTEGER NOT NULL,
	name TEXT NOT NULL
);
CREATE INDEX jit_symbols_pid ON jit_symbols(session_id, pid);
