#!/bin/bash
# ingest-live.sh - strobed's sustained ingest with the real kernel, at the
# highest sampling rate the kernel allows.
#
# Usage: bench/ingest-live.sh [-d SECONDS] [-j JOBS] [-F HZ [-L]]
#   -d  seconds of workload (default 10)
#   -j  CPU-bound workload instances (default: the number of CPUs)
#   -F  sampling rate per CPU (default: kernel.perf_event_max_sample_rate
#       as read at the start; the kernel lowers that limit by itself when
#       its sampling interrupts take too long, so it is read again after)
#   -L  if the limit is below HZ, raise it to HZ for the run and put the
#       old value back afterwards (off by default)
#
# Runs JOBS x tests/workloads/split603010 SECONDS under
#   strobe record --sample-event cpu-clock -F HZ
# with a private strobed (STROBE_DB and STROBE_SOCKET in a temporary
# directory), and reports: samples stored, samples/s ingested, lost and
# throttle counts (from the stop line), the strobed CPU time while the
# workload ran (from /proc/PID/stat of the private strobed, read by the
# workload wrapper just before and after the workload) and in total
# (start, capture and stop: the user+sys of the whole 'strobe record'
# tree, as /usr/bin/time sees it, minus the workload instances' own), and
# the time of a 'strobe report --by symbol' of the session.
# Nothing is asserted: this measures, it does not pass or fail.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
STROBE=${STROBE:-$top/tools/strobe}
WL=$top/tests/workloads/split603010
MAXRATE=/proc/sys/kernel/perf_event_max_sample_rate
secs=10 jobs=$(nproc) hz= raise=0

while getopts d:j:F:Lh o; do
	case $o in
	d) secs=$OPTARG ;;
	j) jobs=$OPTARG ;;
	F) hz=$OPTARG ;;
	L) raise=1 ;;
	h) sed -n '5,12s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) sed -n '5,12s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
for f in "$STROBE" "$WL"; do
	[ -x "$f" ] || { echo "ingest-live.sh: $f missing: build first (make -j2)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "ingest-live.sh: run as root (system-wide sampling)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/strobe-ingest-live.XXXXXX)
restore_rate=
cleanup() {
	if [ -n "$restore_rate" ]; then
		echo "$restore_rate" > $MAXRATE
		echo "# restored $MAXRATE to $restore_rate"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export STROBE_DB=$tmp/strobe.db STROBE_SOCKET=$tmp/strobed.sock
tck=$(getconf CLK_TCK)

before=$(cat $MAXRATE)
[ -n "$hz" ] || hz=$before
if [ "$before" -lt "$hz" ] && [ $raise = 1 ]; then
	restore_rate=$before
	echo "$hz" > $MAXRATE
	echo "# raised $MAXRATE from $before to $hz for this run (-L)"
fi

# Inside 'strobe record': its parent is strobe record, whose child
# strobed is the private daemon.
cat > "$tmp/wl.sh" <<EOF
#!/bin/sh
d=\$(pgrep -P \$PPID -x strobed | head -1)
cpu() { [ -n "\$d" ] && awk '{ print \$14 + \$15 }' /proc/\$d/stat 2>/dev/null || echo -; }
c0=\$(cpu)
i=0
while [ \$i -lt $jobs ]; do
	/usr/bin/time -f "%U %S" -o "$tmp/wl.time\$i" "$WL" $secs &
	i=\$((i + 1))
done
wait
echo "\$c0 \$(cpu)" > "$tmp/strobed.ticks"
EOF

echo "# strobe live ingest, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(nproc) CPUs," \
     "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $jobs x split603010 $secs under strobe record --sample-event cpu-clock -F $hz"
/usr/bin/time -f "%e %U %S" -o "$tmp/rec.time" \
	"$STROBE" record --sample-event cpu-clock -F "$hz" --name ingest-live -- sh "$tmp/wl.sh" \
	2> "$tmp/rec.err"
rc=$?
after=$(cat $MAXRATE)	# before it is restored
line=$(grep 'strobe record: session' "$tmp/rec.err" | tail -1)
if [ $rc != 0 ] || [ -z "$line" ]; then
	echo "ingest-live.sh: strobe record failed (status $rc):" >&2
	cat "$tmp/rec.err" >&2
	exit 1
fi
samples=$(echo "$line" | sed -n 's/.*: \([0-9]*\) samples.*/\1/p')
lost=$(echo "$line" | sed -n 's/.* \([0-9]*\) lost.*/\1/p')
dur=$(echo "$line" | sed -n 's/.* lost, \([0-9.]*\) s.*/\1/p')
thr=$(echo "$line" | sed -n 's/.*throttled \([0-9]*\) times.*/\1/p')
read -r c0 c1 < "$tmp/strobed.ticks"
wlcpu=$(cat "$tmp"/wl.time* | awk '{ s += $1 + $2 } END { printf "%.2f", s }')
read -r rw ru rs <<< "$(tail -1 "$tmp/rec.time")"

t0=$(date +%s.%N)
"$STROBE" report --db "$STROBE_DB" --by symbol > "$tmp/report.txt" 2>&1
t1=$(date +%s.%N)

awk -v hz="$hz" -v jobs="$jobs" -v before="$before" -v after="$after" -v s="$samples" \
    -v l="$lost" -v d="$dur" -v th="${thr:-0}" -v c0="$c0" -v c1="$c1" -v tck="$tck" \
    -v secs="$secs" -v wl="$wlcpu" -v rw="$rw" -v ru="$ru" -v rs="$rs" -v r0="$t0" -v r1="$t1" '
BEGIN {
	printf "perf_event_max_sample_rate: %d before, %d after\n", before, after
	printf "requested: %d Hz per CPU (%d Hz on %d busy CPUs)\n", hz, hz * jobs, jobs
	printf "samples: %d in %.3f s session\n", s, d
	printf "ingested: %.0f samples/s (%.0f per CPU)\n", s / d, s / d / jobs
	printf "lost: %d\n", l
	printf "throttled: %d\n", th
	if (c0 != "-" && c1 != "-") {
		cap = (c1 - c0) / tck
		printf "strobed cpu while the workload ran: %.2f s of %.1f s (%.1f%% of one CPU), %.2f us per sample\n",
		       cap, secs, cap / secs * 100, (s > 0 ? cap / s * 1e6 : 0)
	} else {
		print "strobed cpu while the workload ran: unknown (private strobed not found)"
	}
	tot = ru + rs - wl
	printf "strobed + strobe cpu in total (start, capture, stop): %.2f s (record took %.2f s wall)\n", tot, rw
	printf "workload cpu: %.2f s\n", wl
	printf "report --by symbol: %.3f s\n", r1 - r0
}'
echo "# strobe sessions:"
"$STROBE" sessions --db "$STROBE_DB" | sed 's/^/#   /'
echo "# report (first lines):"
head -12 "$tmp/report.txt" | cut -c1-150 | sed 's/^/#   /'
