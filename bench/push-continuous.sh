#!/bin/sh
# push-continuous.sh - what always-on profiling with strobed --push costs a
# CPU-bound workload: no profiling against strobed at 99 Hz without push
# and with --push --push-interval 10 into two local ClickHouse shards
# (tests/clickhouse.sh), side by side, modes alternated and rotated.
#
# Usage: bench/push-continuous.sh [-r ROUNDS] [-n MILLION_ROUNDS] [-j JOBS] [-i S]
#   -r  rounds (default 3)
#   -n  work per instance: bench/spin N (default 1500, about 4 s here)
#   -j  instances at once (default: the number of CPUs)
#   -i  --push-interval (default 10; 1 cuts the running session into
#       intervals of a second, pushed while it runs)
#
# Per run: the workload's wall time (fixed work, so a slower run is the
# cost), strobed's CPU time during the run from /proc/PID/stat (utime +
# stime, start of the session to the end of its push: 'strobe status'
# says 0 pending), and the samples.  Prints ratios to the bare runs'
# median.  Runs as root (strobed); measures, never passes or fails.
set -u
bdir=$(cd "$(dirname "$0")" && pwd)
export STROBE_TOP=${STROBE_TOP:-$(cd "$bdir/.." && pwd)}
export STROBE_BUILD=${STROBE_BUILD:-$STROBE_TOP}
rounds=3 work=1500 jobs=$(nproc) ival=10
while getopts r:n:j:i: o; do
	case $o in
	r) rounds=$OPTARG ;;
	n) work=$OPTARG ;;
	j) jobs=$OPTARG ;;
	i) ival=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-n MILLION_ROUNDS] [-j JOBS] [-i S]" >&2; exit 2 ;;
	esac
done
. "$STROBE_TOP/tests/lib.sh"
need_root
. "$STROBE_TOP/tests/clickhouse.sh"
SPIN=$STROBE_BUILD/bench/spin
[ -x "$SPIN" ] || { echo "build bench/spin first (make)" >&2; exit 1; }
ch_fleet
unset STROBE_CLICKHOUSE_PASSWORD
pw=$tmp/pw
(umask 077; echo "$CH_PASSWORD" >"$pw")

# two strobeds, one pushing; STROBE_SOCKET picks one for each mode
start_one() {	# NAME ARGS...
	n=$1; shift
	"$STROBED" --foreground --db "$tmp/$n.db" --socket "$tmp/$n.sock" "$@" 2>"$tmp/$n.log" &
	echo $! >"$tmp/$n.pid"
	i=0
	until STROBE_SOCKET=$tmp/$n.sock "$STROBE" status >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -gt 200 ] && { cat "$tmp/$n.log"; exit 1; }; sleep 0.05
	done
}
start_one plain
start_one push --push "$url" --push-interval "$ival" --push-password-file "$pw"
trap 'for n in plain push; do kill $(cat "$tmp/$n.pid") 2>/dev/null; done; ch_cleanup' EXIT

cpu_of() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }	# clock ticks
tck=$(getconf CLK_TCK)
workload() {
	t0=$(date +%s.%N)
	i=0
	while [ $i -lt "$jobs" ]; do "$SPIN" "$work" & i=$((i + 1)); done
	wait
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }'
}
run() {	# MODE: prints "MODE WALL CPU SAMPLES"
	case $1 in
	bare) echo "bare $(workload) 0 0"; return ;;
	esac
	export STROBE_SOCKET=$tmp/$1.sock
	p=$(cat "$tmp/$1.pid")
	c0=$(cpu_of "$p")
	"$STROBE" start --sample-event cpu-clock -F 99 >"$tmp/id" 2>/dev/null || { echo "start failed" >&2; exit 1; }
	w=$(workload)
	"$STROBE" stop >"$tmp/stop" 2>&1
	if [ "$1" = push ]; then
		i=0
		until "$STROBE" status | grep -q "last pushed session $(cat "$tmp/id"), 0 pending"; do
			i=$((i + 1)); [ $i -gt 600 ] && { echo "push did not finish" >&2; break; }; sleep 0.05
		done
	fi
	c1=$(cpu_of "$p")
	s=$(sed -n 's/^session [0-9]*: \([0-9]*\) samples.*/\1/p' "$tmp/stop")
	echo "$1 $w $(awk -v a="$c0" -v b="$c1" -v t="$tck" 'BEGIN { printf "%.3f", (b - a) / t }') $s"
	unset STROBE_SOCKET
}

echo "# $(date -u '+%F %T') UTC, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $jobs x spin $work, 99 Hz cpu-clock"
modes="bare plain push"
r=0
while [ $r -lt "$rounds" ]; do
	for m in $modes; do run "$m"; done
	modes="$(echo $modes | cut -d' ' -f2-) $(echo $modes | cut -d' ' -f1)"
	r=$((r + 1))
done | tee "$tmp/runs"
awk -v ival="$ival" '
function median(a, n,   i, j, t) {
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ n[$1]++; w[$1, n[$1]] = $2; c[$1, n[$1]] = $3; s[$1, n[$1]] = $4 }
END {
	for (i = 1; i <= n["bare"]; i++) bw[i] = w["bare", i]
	b = median(bw, n["bare"])
	printf "bare: median wall %.3f s\n", b
	split("plain push", ms, " ")
	for (k = 1; k <= 2; k++) {
		m = ms[k]
		for (i = 1; i <= n[m]; i++) { mw[i] = w[m, i]; mc[i] = c[m, i]; msm[i] = s[m, i] }
		printf "%s: median wall %.3f s (x %.3f of bare), strobed CPU median %.3f s (%.2f %% of the wall time), samples median %d\n",
			m == "plain" ? "strobed 99 Hz, no push" : "strobed 99 Hz, --push --push-interval " ival,
			median(mw, n[m]), median(mw, n[m]) / b, median(mc, n[m]), 100 * median(mc, n[m]) / median(mw, n[m]), median(msm, n[m])
	}
}' "$tmp/runs"
