#!/bin/bash
# lossless.sh - strobe against perf record under load, side by side in one
# run: lost samples, the workload's wall time, the profiler's own CPU time
# and bytes on disk per sample, at several sampling rates.
#
# Usage: bench/lossless.sh [-d SECONDS] [-r RATES] [-n ROUNDS] [-e EVENTS] [-t SECONDS] [-m PAGES]
#                          [-s STROBED-OPTIONS] [-g MODE] [-P]
#   -d  seconds of work per CPU, unprofiled (default 10)
#   -r  comma-separated rates per CPU in Hz (default 1000,10000,20000,50000)
#   -n  rounds per rate, the two tools alternating (default 1)
#   -e  counting events (default page-faults,context-switches,cpu-migrations,minor-faults)
#   -t  stop 'perf report' after SECONDS (its CPU then shows as '>N')
#   -m  ring pages per CPU for both tools (default: each tool's own default)
#   -s  options for strobed (e.g. '--ingest-nice idle')
#   -g  call stacks for both tools: --call-graph MODE (fp, dwarf[,BYTES])
#   -P  strobe only, no perf runs
#
# Workload: one bench/spin per CPU, each a fixed amount of work calibrated
# to SECONDS unprofiled, so that whatever a profiler takes from the CPUs
# shows as a longer wall time.  Both tools sample cpu-clock at the rate on
# every CPU with the counting events read at each sample:
#   strobe  a private strobed (database in a temporary directory, default
#           spool); 'strobe start -F HZ -e EVENTS', the workload, 'strobe
#           stop' (which waits until ingest has stored everything)
#   perf    perf record -a --buildid-mmap -F HZ -e '{cpu-clock,EVENTS}:S'
#           started before the workload and stopped (SIGINT) after it
# kernel.perf_event_max_sample_rate is raised to the highest rate and
# perf_cpu_time_max_percent set to 0 for the run (both put back after), so
# that the kernel neither refuses nor slows the rates asked for.
# Reported per run: samples, lost (strobe: its stop line; perf:
# PERF_RECORD_LOST and LOST_SAMPLES in 'perf report -D'), the workload's
# wall time, the profiler's CPU time while capturing and in total (perf:
# plus 'perf report --sort sym' on its file, the step that makes its
# samples readable; strobe: its stop, start to end), and bytes per sample
# (strobe: the growth of the database, WAL and binary cache; perf: perf.data).
# Nothing is asserted: this measures, it does not pass or fail.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
STROBE=${STROBE:-$top/tools/strobe}
STROBED=${STROBED:-$top/daemon/strobed}
SPIN=$top/bench/spin
secs=10 rates=1000,10000,20000,50000 rounds=1 rep_max=0
events=page-faults,context-switches,cpu-migrations,minor-faults pages= dopts= noperf= cg=

usage() { sed -n '6,16s/^# \{0,1\}//p' "$0"; }
while getopts d:r:n:e:t:m:s:g:Ph o; do
	case $o in
	d) secs=$OPTARG ;;
	r) rates=$OPTARG ;;
	n) rounds=$OPTARG ;;
	e) events=$OPTARG ;;
	t) rep_max=$OPTARG ;;
	m) pages=$OPTARG ;;
	s) dopts=$OPTARG ;;
	g) cg=$OPTARG ;;
	P) noperf=1 ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
for f in "$STROBE" "$STROBED" "$SPIN"; do
	[ -x "$f" ] || { echo "lossless.sh: $f missing: build first (make -j2)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "lossless.sh: run as root (system-wide sampling)" >&2; exit 1; }
command -v perf >/dev/null || { echo "lossless.sh: perf (linux-perf) is not installed" >&2; exit 1; }

MAXRATE=/proc/sys/kernel/perf_event_max_sample_rate
MAXPCT=/proc/sys/kernel/perf_cpu_time_max_percent
tmp=$(mktemp -d /tmp/strobe-lossless.XXXXXX)
old_rate=$(cat $MAXRATE) old_pct=$(cat $MAXPCT) dpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	# the percentage first: the kernel refuses a rate while it is 0
	echo "$old_pct" > $MAXPCT
	# the kernel refuses any write of the rate while the percentage is
	# 0 or 100: write it only if it changed
	[ "$(cat $MAXRATE)" = "$old_rate" ] || echo "$old_rate" > $MAXRATE
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
max=$(echo "$rates" | tr , '\n' | sort -n | tail -1)
[ "$old_rate" -lt "$max" ] && echo "$max" > $MAXRATE
echo 0 > $MAXPCT
ncpu=$(nproc) tck=$(getconf CLK_TCK)
export STROBE_DB=$tmp/strobe.db STROBE_SOCKET=$tmp/strobed.sock

# calibrate: million rounds for SECONDS on one CPU, the machine as it is now
t0=$(date +%s.%N); "$SPIN" 200; t1=$(date +%s.%N)
n=$(awk -v a="$t0" -v b="$t1" -v s="$secs" 'BEGIN { printf "%d", 200 * s / (b - a) }')

workload() {
	local i=0 pids=
	while [ $i -lt "$ncpu" ]; do "$SPIN" "$n" & pids="$pids $!"; i=$((i + 1)); done
	wait $pids
}

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
dusize() { du -sb "$@" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }

# shellcheck disable=SC2086
"$STROBED" --foreground --db "$STROBE_DB" --socket "$STROBE_SOCKET" $dopts 2>"$tmp/strobed.log" &
dpid=$!
for i in $(seq 50); do "$STROBE" status >/dev/null 2>&1 && break; sleep 0.1; done

echo "# strobe vs perf under load, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $ncpu CPUs," \
     "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# workload: $ncpu x spin $n ($secs s each unprofiled); cpu-clock + $events${pages:+; rings of $pages pages}${dopts:+; strobed $dopts}${cg:+; --call-graph $cg}"
printf "%-6s %6s %6s %9s %9s %7s %9s %9s %7s\n" tool rate round samples lost wall_s cap_cpu_s tot_cpu_s B/sample

run_strobe() {	# rate round
	local c0 c1 t0 t1 t2 t3 b0 b1 line s l
	b0=$(dusize "$STROBE_DB" "$STROBE_DB-wal" "$STROBE_DB.cache")
	c0=$(ticks "$dpid")
	t0=$(date +%s.%N)
	"$STROBE" start --sample-event cpu-clock -F "$1" -e "$events" ${pages:+-m "$pages"} \
		${cg:+--call-graph "$cg"} >/dev/null 2>"$tmp/err" ||
		{ echo "strobe start: $(cat "$tmp/err")" >&2; return; }
	t1=$(date +%s.%N)
	workload
	t2=$(date +%s.%N)
	c1=$(ticks "$dpid")
	line=$("$STROBE" stop 2>&1)
	t3=$(date +%s.%N)
	c2=$(ticks "$dpid")
	b1=$(dusize "$STROBE_DB" "$STROBE_DB-wal" "$STROBE_DB.cache")
	s=$(echo "$line" | sed -n 's/.*: \([0-9]*\) samples.*/\1/p')
	l=$(echo "$line" | sed -n 's/.* \([0-9]*\) lost.*/\1/p')
	awk -v r="$1" -v k="$2" -v s="$s" -v l="$l" -v w="$(echo "$t2 - $t1" | bc)" \
	    -v cap="$(( c1 - c0 ))" -v tot="$(( c2 - c0 ))" -v tck="$tck" -v b="$(( b1 - b0 ))" \
	    'BEGIN { printf "%-6s %6d %6d %9d %9d %7.2f %9.2f %9.2f %7.0f\n", "strobe", r, k, s, l, w,
		     cap / tck, tot / tck, s ? b / s : 0 }'
}

run_perf() {	# rate round
	local f=$tmp/perf.data t1 t2 s l cap rep
	rm -f "$f"
	/usr/bin/time -f "%U %S" -o "$tmp/perf.time" perf record -q --buildid-mmap -a ${pages:+-m "$pages"} ${cg:+--call-graph "$cg"} \
		-F "$1" -e "{cpu-clock,$events}:S" -o "$f" >/dev/null 2>"$tmp/perf.err" &
	local ppid=$!
	sleep 0.5
	t1=$(date +%s.%N)
	workload
	t2=$(date +%s.%N)
	kill -INT "$(pgrep -P "$ppid" -x perf)" 2>/dev/null
	wait "$ppid"
	# the last line: a first one says perf ended on SIGINT
	cap=$(tail -n 1 "$tmp/perf.time" | awk '{ print $1 + $2 }')
	# time counts the children it waited for: timeout's perf report
	/usr/bin/time -f "%U %S" -o "$tmp/rep.time" timeout -k 5 -s INT "$rep_max" \
		perf report -q -i "$f" --sort sym >/dev/null 2>&1
	rep_rc=$?
	rep=$(tail -n 1 "$tmp/rep.time" | awk '{ print $1 + $2 }')
	# counted as the dump streams by: written to a file, it was ~1.5 kB a
	# sample (9 GB at 50 kHz), and the page cache it filled slowed the
	# next run down by whoever ran next
	read -r s l < <(perf report -D -i "$f" 2>/dev/null |
		awk '/PERF_RECORD_SAMPLE\(IP/ { s++ }
		     /PERF_RECORD_LOST: / { sub(/.*lost:/, ""); n += $1 }
		     /PERF_RECORD_LOST_SAMPLES: / { sub(/.*lost samples :/, ""); n += $1 }
		     END { print s + 0, n + 0 }')
	# the group's leader samples; the members' are in the same records
	awk -v r="$1" -v k="$2" -v s="$s" -v l="$l" -v w="$(echo "$t2 - $t1" | bc)" \
	    -v cap="$cap" -v rep="$rep" -v b="$(stat -c %s "$f")" -v cut=$((rep_rc == 124 || rep_rc == 137)) \
	    'BEGIN { printf "%-6s %6d %6d %9d %9d %7.2f %9.2f %s%8.2f %7.0f\n", "perf", r, k, s, l, w,
		     cap, cut ? ">" : " ", cap + rep, s ? b / s : 0 }'
}

# before each run: the page cache of the one before written back and
# dropped, so that no run pays for another's files
settle() { sync; echo 3 > /proc/sys/vm/drop_caches; sleep 1; }

for r in ${rates//,/ }; do
	for k in $(seq "$rounds"); do
		if [ -n "$noperf" ]; then
			settle; run_strobe "$r" "$k"
		elif [ $((k % 2)) = 1 ]; then
			settle; run_strobe "$r" "$k"; settle; run_perf "$r" "$k"
		else
			settle; run_perf "$r" "$k"; settle; run_strobe "$r" "$k"
		fi
	done
done
echo "# kernel.perf_event_max_sample_rate: $(cat $MAXRATE) at the end (was $old_rate)"
