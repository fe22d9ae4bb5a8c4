#!/bin/sh
# startup.sh - strobed's start-up time against the size of its database.
#
# Usage (as root, from a build tree):
#     bench/startup.sh [SESSIONS [SAMPLES [RUNS]]]      (default 400 2500 5)
#
# Makes a small database (one real session of 'strobe record') and a large
# one: a copy of it plus SESSIONS synthetic finished sessions of SAMPLES
# samples each, with their histograms, inserted with sqlite3.  Then, for
# each database, one untimed start (sqlite3 wrote the file, so strobed
# checks it whole once: that start is shown as "first") and RUNS times,
# alternating between the two:
#   start    strobed --foreground until it answers a ping on its socket;
#   restart  a session runs ~1 s, strobed gets SIGKILL, and a new strobed
#            is started until it answers (it marks the session interrupted
#            and rebuilds its aggregates: the same work on both databases).
# and "scan": sqlite3 reading each file whole (PRAGMA quick_check), what a
# start-up that reads the file would pay.  Prints, for each measure, the
# median of the runs in ms, small and large, their ratio, and the fastest
# run of each (what the work costs when nothing else takes the CPU):
#     size    small_bytes=... large_bytes=...
#     first   small_ms=... large_ms=... ratio=... small_min_ms=... large_min_ms=...
#     start   small_ms=... large_ms=... ratio=... small_min_ms=... large_min_ms=...
#     restart small_ms=... large_ms=... ratio=... small_min_ms=... large_min_ms=...
#     scan    small_ms=... large_ms=... ratio=... small_min_ms=... large_min_ms=...
# tests/t0445-startup.sh runs it and checks the fastest runs against the
# scan's (a loaded machine's medians wander by more than the difference).
#
# Environment: STROBE_BUILD (default: the current directory), BENCH_DIR
# (default: a new directory in /tmp, removed afterwards).
set -eu
sessions=${1:-400}
samples=${2:-2500}
runs=${3:-5}
build=${STROBE_BUILD:-$(pwd)}
[ -x "$build/daemon/strobed" ] || { echo "startup.sh: no $build/daemon/strobed: set STROBE_BUILD" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "startup.sh: sqlite3 is not installed" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "startup.sh: strobed needs root" >&2; exit 2; }
if [ -n "${BENCH_DIR:-}" ]; then
	dir=$BENCH_DIR
	mkdir -p "$dir"
else
	dir=$(mktemp -d /tmp/strobe-startup.XXXXXX)
	trap 'rm -rf "$dir"' EXIT
fi

# the small database: one real session
STROBE_DB=$dir/small.db STROBE_SOCKET=$dir/record.sock \
	"$build/tools/strobe" record --sample-event cpu-clock -F 200 -- sleep 0.3 >/dev/null 2>"$dir/record.err" ||
	{ cat "$dir/record.err" >&2; exit 1; }

# the large one: the same, plus the synthetic sessions
cp "$dir/small.db" "$dir/large.db"
n=$((sessions * samples))
sqlite3 -cmd ".load $build/lib/strobe_samples" "$dir/large.db" >/dev/null <<EOF
PRAGMA journal_mode=WAL;
BEGIN;
WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i + 1 < $n)
INSERT INTO samples(session_id,time_ns,tsc,cpu,pid,tid,comm_id,binary_id,offset,flags,c0)
SELECT 1000 + i / $samples, 1000000000 + i * 500000, 0, i % 2, 100 + (i / $samples) % 50,
       100 + (i / $samples) % 50, 1, 1, (i * 7919) % 65536, 1, i % 3 FROM r;
INSERT INTO sessions(id,name,state,backend,owner_uid,nr_cpus,sample_event,sample_freq,start_ns,
		     end_ns,wall_offset_ns,first_sample,last_sample,samples,duration_ns)
SELECT session_id, 'synthetic', 'done', 'perf', 0, 2, 'cpu-clock', 1000, min(time_ns), max(time_ns),
       0, min(rowid), max(rowid), count(*), max(time_ns) - min(time_ns)
FROM samples WHERE session_id >= 1000 GROUP BY session_id;
INSERT INTO sample_agg(session_id,binary_id,offset,pid,comm_id,flags,samples,c0)
SELECT session_id, binary_id, offset, pid, comm_id, flags, count(*), sum(c0)
FROM samples WHERE session_id >= 1000 GROUP BY 1, 2, 3, 4, 5, 6;
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
EOF

python3 - "$build/daemon/strobed" "$dir" "$runs" <<'PY'
import os, signal, socket, statistics, subprocess, sys, time

strobed, d, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])

def call(sock, line):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(sock)
    s.sendall(line.encode() + b"\n")
    r = s.makefile().readline()
    s.close()
    return r

def start(name):
    """Start strobed on NAME.db; ms until it answers a ping."""
    sock = f"{d}/{name}.sock"
    t0 = time.monotonic()
    p = subprocess.Popen([strobed, "--foreground", "--db", f"{d}/{name}.db", "--socket", sock],
                         stderr=open(f"{d}/{name}.log", "a"))
    while True:
        try:
            if call(sock, "ping").startswith("ok"):
                return p, (time.monotonic() - t0) * 1e3
        except OSError:
            pass
        if p.poll() is not None:
            sys.exit(f"startup.sh: strobed on {name}.db exited: see {d}/{name}.log")
        time.sleep(0.0005)

def stop(p):
    p.terminate()
    p.wait()

def restart(name):
    p, _ = start(name)
    r = call(f"{d}/{name}.sock", "start sample_event=cpu-clock freq=1000")
    if not r.startswith("ok"):
        sys.exit(f"startup.sh: session on {name}.db: {r.strip()}")
    time.sleep(1)
    p.kill()
    p.wait()
    p, ms = start(name)
    stop(p)
    return ms

def scan(name):
    t0 = time.monotonic()
    subprocess.run(["sqlite3", "-readonly", f"{d}/{name}.db", "PRAGMA quick_check"],
                   check=True, stdout=subprocess.DEVNULL)
    return (time.monotonic() - t0) * 1e3

res = {k: {"small": [], "large": []} for k in ("first", "start", "restart", "scan")}
for name in ("small", "large"):
    p, ms = start(name)
    res["first"][name].append(ms)
    stop(p)
for _ in range(runs):
    for name in ("small", "large"):
        p, ms = start(name)
        res["start"][name].append(ms)
        stop(p)
        res["restart"][name].append(restart(name))
        res["scan"][name].append(scan(name))
print(f"size    small_bytes={os.path.getsize(d + '/small.db')} large_bytes={os.path.getsize(d + '/large.db')}")
for k in ("first", "start", "restart", "scan"):
    s, l = statistics.median(res[k]["small"]), statistics.median(res[k]["large"])
    print(f"{k:<7} small_ms={s:.1f} large_ms={l:.1f} ratio={l / s:.2f} "
          f"small_min_ms={min(res[k]['small']):.1f} large_min_ms={min(res[k]['large']):.1f}")
PY
