#!/bin/bash
# attribution.sh - what --attribution exact costs (issue 13): a workload
# that switches context as fast as it can, under strobe with
# --attribution sample, with --attribution exact, under perf record with
# the same events, and alone, side by side in one run.
#
# Usage: bench/attribution.sh [-l LOOPS] [-r ROUNDS] [-F HZ]
#   -l  round trips of the workload (default 200000)
#   -r  rounds, the modes alternated within each (default 3)
#   -F  sampling rate of cpu-clock, per CPU (default 1000)
#
# Workload: 'taskset -c 0 perf bench sched pipe -l LOOPS': two processes
# passing a token through pipes on one CPU, two context switches per round
# trip and no idle time (spread over two CPUs, the round trip is mostly
# wakeup latency out of idle, which any sampling shortens: the profiled
# runs came out faster than the bare one); it prints its own time per round
# trip (usecs/op), the figure compared.
# Modes (each with counting events page-faults,context-switches):
#   bare    the workload alone
#   sample  strobe record --sample-event cpu-clock -F HZ -e EVS -- workload
#   exact   the same with --attribution exact (a group read at every switch)
#   perf    perf record -a -e '{cpu-clock,EVS}:S' -F HZ --buildid-mmap
#           (perf reading the group at every sample, as strobe's sample mode)
# Printed: per mode, the median usecs/op, its ratio to bare, and for
# strobe the session's samples and switch reads (strobed's log line).
# Nothing is asserted: this measures, it does not pass or fail.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
STROBE=${STROBE:-$top/tools/strobe}
loops=200000 rounds=3 hz=1000
while getopts l:r:F: o; do
	case $o in
	l) loops=$OPTARG ;;
	r) rounds=$OPTARG ;;
	F) hz=$OPTARG ;;
	*) sed -n 's/^# \{0,1\}//p' "$0" | sed -n '/^Usage/,/^  -F/p'; exit 2 ;;
	esac
done
command -v perf >/dev/null || { echo "attribution.sh: perf (linux-perf) is needed" >&2; exit 1; }
tmp=$(mktemp -d /tmp/strobe-attr.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export STROBE_DB=$tmp/strobe.db STROBE_SOCKET=$tmp/strobed.sock
evs=page-faults,context-switches
bid=--buildid-mmap
perf record --buildid-mmap -q -o /dev/null true 2>/dev/null || bid=-B

usecs() { awk '/usecs\/op/ { print $1; exit }' "$1"; }
for r in $(seq "$rounds"); do
	for m in bare sample exact perf; do
		out=$tmp/$m.$r.out
		case $m in
		bare) taskset -c 0 perf bench sched pipe -l "$loops" >"$out" 2>&1 ;;
		sample|exact)
			"$STROBE" record --sample-event cpu-clock -F "$hz" -e "$evs" \
				--attribution "$m" --name "$m" -- \
				taskset -c 0 perf bench sched pipe -l "$loops" >"$out" 2>"$tmp/$m.$r.err" ||
				{ cat "$tmp/$m.$r.err" >&2; exit 1; } ;;
		perf) perf record -q $bid -a -F "$hz" -e "{cpu-clock,$evs}:S" -o "$tmp/perf.data" -- \
				taskset -c 0 perf bench sched pipe -l "$loops" >"$out" 2>&1 ;;
		esac
		echo "round $r $m: $(usecs "$out") usecs/op" \
			"$( [ -f "$tmp/$m.$r.err" ] && grep -o '[0-9]* samples, [0-9]* lost' "$tmp/$m.$r.err")"
	done
done
python3 - "$tmp" "$rounds" <<'PY'
import statistics, sys, re, os
d, rounds = sys.argv[1], int(sys.argv[2])
med = {}
for m in ("bare", "sample", "exact", "perf"):
    v = []
    for r in range(1, rounds + 1):
        for line in open(f"{d}/{m}.{r}.out"):
            x = re.match(r"\s*([0-9.]+) usecs/op", line)
            if x:
                v.append(float(x.group(1)))
    med[m] = statistics.median(v)
for m in ("bare", "sample", "exact", "perf"):
    print(f"{m:<7} {med[m]:8.3f} usecs/op  x{med[m] / med['bare']:.3f} of bare"
          + (f"  x{med[m] / med['perf']:.3f} of perf" if m != "bare" else ""))
PY
"$STROBE" sessions | tail -n 2
