#!/bin/bash
# execmaps.sh - the drain thread's cost per executable mapping: an
# exec-heavy workload (every exec maps three files executable: the
# program, ld.so, libc) under a system-wide session, and the CPU time of
# strobed's drain thread (the one at SCHED_FIFO) and of strobed in all.
# Since issue 15 the drain thread opens each such mapping's file to hold it
# for ingest (lib/capture/binhold.h); this measures what that costs.
#
# Usage (from a build tree, as root): bench/execmaps.sh [-n EXECS] [-j JOBS] [-b BUILD]
#   -n  execs in all (default 20000), of /bin/true
#   -j  parallel exec loops (default 2)
#   -b  the build tree whose strobed and strobe to run (default: this one)
# Reports: execs/s of the workload, the drain thread's CPU ns (schedstat)
# and per exec, strobed's CPU seconds, the binaries rows of the session and
# the held-file figures of 'strobe status' just before the stop.
# Nothing is asserted: this is a measurement, not a test.
set -eu
n=20000 jobs=2 build=$(cd "$(dirname "$0")/.." && pwd)
while getopts n:j:b: o; do
	case $o in
	n) n=$OPTARG ;;
	j) jobs=$OPTARG ;;
	b) build=$(cd "$OPTARG" && pwd) ;;
	*) echo "usage: $0 [-n EXECS] [-j JOBS] [-b BUILD]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "execmaps.sh: needs root (system-wide session)" >&2; exit 1; }
dir=$(mktemp -d /tmp/strobe-execmaps.XXXXXX)
export STROBE_DB=$dir/strobe.db STROBE_SOCKET=$dir/strobed.sock
"$build/daemon/strobed" --foreground 2>"$dir/strobed.log" &
spid=$!
trap 'kill $spid 2>/dev/null; wait $spid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do "$build/tools/strobe" status >/dev/null 2>&1 && break; sleep 0.05; done
"$build/tools/strobe" start --sample-event cpu-clock -F 1000 --name execmaps >/dev/null
# the drain thread: strobed's SCHED_FIFO thread (policy, field 41 of stat)
drain=
for t in /proc/$spid/task/*; do
	pol=$(sed 's/.*) //' "$t/stat" | cut -d' ' -f39)
	[ "$pol" = 1 ] && drain=${t##*/}
done
[ -n "$drain" ] || { echo "execmaps.sh: no SCHED_FIFO thread in strobed" >&2; exit 1; }
d0=$(cut -d' ' -f1 "/proc/$spid/task/$drain/schedstat")
t0=$(date +%s.%N)
per=$((n / jobs))
loops=()
for _ in $(seq "$jobs"); do
	( i=0; while [ $i -lt $per ]; do /bin/true; i=$((i + 1)); done ) &
	loops+=($!)
done
wait "${loops[@]}"
t1=$(date +%s.%N)
d1=$(cut -d' ' -f1 "/proc/$spid/task/$drain/schedstat")
"$build/tools/strobe" status >"$dir/status"
"$build/tools/strobe" stop >/dev/null
read -r ut st < <(sed 's/.*) //' "/proc/$spid/stat" | cut -d' ' -f12,13)
hz=$(getconf CLK_TCK)
rows=$(sqlite3 -readonly "$STROBE_DB" "SELECT count(*) FROM binaries")
python3 - "$n" "$t0" "$t1" "$d0" "$d1" "$ut" "$st" "$hz" "$rows" <<'PY'
import sys
n, t0, t1, d0, d1, ut, st, hz, rows = sys.argv[1:]
n = int(n); wall = float(t1) - float(t0); drain = int(d1) - int(d0)
print(f"{n} execs in {wall:.2f} s ({n / wall:.0f}/s); drain thread {drain / 1e6:.1f} ms CPU "
      f"({drain / n / 1e3:.1f} us per exec); strobed {(int(ut) + int(st)) / int(hz):.2f} s CPU "
      f"in all; {rows} binaries rows")
PY
grep -i "binaries:" "$dir/status" || echo "(no held-file limit reached)"
