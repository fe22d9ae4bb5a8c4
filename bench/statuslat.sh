#!/bin/bash
# statuslat.sh - how long 'strobe status' and 'strobe mark' take while
# ingest is behind: a session at RATE Hz per CPU with every CPU saturated,
# status and mark asked every second, for two builds side by side.
#
# Usage: bench/statuslat.sh [-r RATE] [-n POLLS] [-b BUILD]...
#   -r  sampling rate per CPU in Hz (default 20000)
#   -n  status/mark pairs per build (default 8)
#   -b  a build tree (its daemon/strobed and tools/strobe); give it again
#       for more; default: this tree.  Builds alternate, one session each.
#
# Prints per build: the median and largest status and mark times, and the
# ingest lag the status showed at its largest.  Nothing is asserted.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
rate=20000 polls=8 builds=
while getopts r:n:b:h o; do
	case $o in
	r) rate=$OPTARG ;;
	n) polls=$OPTARG ;;
	b) builds="$builds $OPTARG" ;;
	h) sed -n '6,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) sed -n '6,10s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
builds=${builds:-$top}
[ "$(id -u)" = 0 ] || { echo "statuslat.sh: run as root (system-wide sampling)" >&2; exit 1; }
SPIN=$top/bench/spin
[ -x "$SPIN" ] || { echo "statuslat.sh: $SPIN missing: build first (make -j2)" >&2; exit 1; }

MAXRATE=/proc/sys/kernel/perf_event_max_sample_rate
old_rate=$(cat $MAXRATE)
tmp=$(mktemp -d /tmp/strobe-statuslat.XXXXXX) dpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	pkill -P $$ -x spin 2>/dev/null
	echo "$old_rate" > $MAXRATE
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ "$old_rate" -lt "$rate" ] && echo "$rate" > $MAXRATE

secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

echo "# strobe status/mark latency behind an ingest backlog, $(date -u '+%Y-%m-%d %H:%M UTC')," \
     "$(nproc) CPUs, ${rate} Hz per CPU, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-28s %9s %9s %9s %9s %12s\n" build status_med status_max mark_med mark_max lag_at_max
for b in $builds; do
	export STROBE_DB=$tmp/s.db STROBE_SOCKET=$tmp/s.sock
	rm -rf "$tmp"/s.db*
	"$b/daemon/strobed" --foreground --db "$STROBE_DB" --socket "$STROBE_SOCKET" \
		2>"$tmp/log" &
	dpid=$!
	for i in $(seq 50); do "$b/tools/strobe" status >/dev/null 2>&1 && break; sleep 0.1; done
	"$b/tools/strobe" start -F "$rate" -e page-faults,context-switches >/dev/null ||
		{ echo "start failed: $(cat "$tmp/log")" >&2; exit 1; }
	spins=
	for i in $(seq "$(nproc)"); do "$SPIN" 100000 & spins="$spins $!"; done
	sleep 2
	: >"$tmp/st" ; : >"$tmp/mk"
	for i in $(seq "$polls"); do
		t0=$(date +%s.%N)
		lag=$("$b/tools/strobe" status | sed -n 's/^ingest: \([0-9]*\) records behind.*/\1/p')
		t1=$(date +%s.%N)
		"$b/tools/strobe" mark "poll $i" >/dev/null
		t2=$(date +%s.%N)
		echo "$(secs "$t0" "$t1") ${lag:-0}" >>"$tmp/st"
		secs "$t1" "$t2" >>"$tmp/mk"; echo >>"$tmp/mk"
		sleep 1
	done
	kill $spins 2>/dev/null; wait $spins 2>/dev/null
	"$b/tools/strobe" stop >/dev/null
	kill "$dpid"; wait "$dpid" 2>/dev/null; dpid=
	sort -n "$tmp/st" | awk -v n="$polls" '{ v[NR] = $1; l[NR] = $2 }
		END { printf "%s %s %s ", v[int((n + 1) / 2)], v[n], l[n] }' >"$tmp/st.sum"
	sort -n "$tmp/mk" | awk -v n="$polls" 'NF { v[++k] = $1 }
		END { printf "%s %s", v[int((k + 1) / 2)], v[k] }' >"$tmp/mk.sum"
	read -r sm sx lg <"$tmp/st.sum"
	read -r mm mx <"$tmp/mk.sum"
	printf "%-28s %9s %9s %9s %9s %12s\n" "$(basename "$b")" "$sm" "$sx" "$mm" "$mx" "$lg"
done
