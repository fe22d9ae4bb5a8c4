#!/bin/bash
# threadcpu.sh - strobed's CPU time per thread over one saturated session:
# where the daemon's own cost goes (main, binary holder, drain, ingest).
#
# Usage: bench/threadcpu.sh [-n SPIN_ROUNDS] [-F HZ] [-e EVENTS] [-- STROBED-OPTIONS...]
#   -n  million rounds of bench/spin per CPU (default 700: ~1.3 s unprofiled here)
#   -F  cpu-clock rate per CPU (default 50000)
#   -e  counting events (default page-faults,context-switches,cpu-migrations,minor-faults)
# A private strobed samples cpu-clock at HZ with the events while one
# bench/spin per CPU runs; when the last spin ends, each strobed thread's
# utime and stime (/proc/PID/task/TID/stat) and run time (schedstat, ns on
# CPU) are printed, with the workload's wall time, then the stop line.
# perf_cpu_time_max_percent is 0 for the run (put back after), so that the
# kernel does not lower the rate.  Nothing is asserted.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
n=700 hz=50000 events=page-faults,context-switches,cpu-migrations,minor-faults
while getopts n:F:e:h o; do
	case $o in
	n) n=$OPTARG ;;
	F) hz=$OPTARG ;;
	e) events=$OPTARG ;;
	h) sed -n '4,7s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) sed -n '4,7s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "$(id -u)" = 0 ] || { echo "threadcpu.sh: run as root" >&2; exit 1; }
tmp=$(mktemp -d /tmp/strobe-threadcpu.XXXXXX)
PCT=/proc/sys/kernel/perf_cpu_time_max_percent RATE=/proc/sys/kernel/perf_event_max_sample_rate
old_pct=$(cat $PCT) old_rate=$(cat $RATE) dp=
cleanup() {
	[ -n "$dp" ] && kill "$dp" 2>/dev/null && wait "$dp" 2>/dev/null
	echo "$old_pct" > $PCT; echo "$old_rate" > $RATE
	rm -rf "$tmp"
}
trap cleanup EXIT
[ "$old_rate" -lt "$hz" ] && echo "$hz" > $RATE
echo 0 > $PCT
export STROBE_DB=$tmp/s.db STROBE_SOCKET=$tmp/s.sock
"$top/daemon/strobed" --foreground --db "$STROBE_DB" --socket "$STROBE_SOCKET" "$@" 2>"$tmp/log" &
dp=$!
for i in $(seq 50); do "$top/tools/strobe" status >/dev/null 2>&1 && break; sleep 0.1; done
sync; echo 3 > /proc/sys/vm/drop_caches
"$top/tools/strobe" start --sample-event cpu-clock -F "$hz" -e "$events" >/dev/null || exit 1
t0=$(date +%s.%N) pids=
for i in $(seq "$(nproc)"); do "$top/bench/spin" "$n" & pids="$pids $!"; done
wait $pids
t1=$(date +%s.%N)
echo "# strobed ${*:-(defaults)}, -F $hz, $(nproc) x spin $n, $(date -u '+%Y-%m-%d %H:%M UTC')"
for t in /proc/$dp/task/*; do
	awk -v hz="$(getconf CLK_TCK)" -v tid="$(basename "$t")" -v run="$(cut -d' ' -f1 "$t/schedstat")" \
	    '{ printf "thread %-8s utime %6.2f  stime %6.2f  on-CPU %6.2f s\n", tid, $14 / hz, $15 / hz, run / 1e9 }' "$t/stat"
done
echo "workload wall $(echo "$t1 - $t0" | bc) s"
"$top/tools/strobe" stop
