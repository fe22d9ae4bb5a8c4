#!/bin/bash
# overhead.sh - what system-wide sampling costs a CPU-bound workload:
# strobe record vs perf record vs nothing, side by side in one run.
#
# Usage: bench/overhead.sh [-d SECONDS] [-r ROUNDS] [-j JOBS] [-F HIGH_HZ] [-L] [-c CONFIGS]
#   -d  seconds per run (default 4)          -r  rounds (default 3)
#   -j  workload instances in parallel (default: the number of CPUs, so
#       that the profiler has to take CPU from the workload rather than
#       from an idle CPU)
#   -F  the high rate (default 20000 Hz per CPU)
#   -L  if kernel.perf_event_max_sample_rate is below HIGH_HZ, raise it to
#       HIGH_HZ for the high-rate runs and put the old value back afterwards
#       (off by default: without it the high-rate runs use the kernel's limit)
#   -c  comma-separated configurations to run (default 1k,high,cycles)
#
# Workload: tests/workloads/split603010 SECONDS, JOBS instances at once,
# each under 'perf stat -e task-clock,instructions:u' (counting only, the
# same in all three modes).  split603010 stops after SECONDS of wall time,
# so its wall time is fixed by construction: the slowdown is measured as
# work done, i.e. user-mode instructions retired by the workload:
#   per wall second (summed over instances): everything the profiler costs
#     the workload, including CPU time its own process takes from it, but
#     also whatever else runs on the machine at the time;
#   per CPU second of the workload (task-clock): the cost inside the
#     workload's own time (sampling interrupts, cache and TLB disturbance),
#     insensitive to other load taking CPUs away;
#   per CPU second of workload + profiler (task-clock plus the profiler's
#     own CPU time, start and stop included): the whole CPU cost of
#     profiling, also insensitive to other load.
# slowdown = bare rate / rate (1.000 = no cost).
#
# Modes, alternated within each round (order rotated every round):
#   bare    the workload alone
#   strobe  strobe record --sample-event EV -F HZ -- workload
#           (private strobed: STROBE_DB/STROBE_SOCKET in a temporary dir;
#           the database is kept across runs so binaries are cached once)
#   perf    perf record --buildid-mmap -a -F HZ -e EV -o TMP/perf.data -- workload
#           (--buildid-mmap: build-ids in the mmap2 records, as strobed asks
#           for them, instead of perf's default pass over the data after
#           the workload; that default pass aborts here ("assertion failed
#           at util/build-id.c:1010", "stack smashing detected") whenever
#           any strobed runs on the machine: see doc/DESIGN.md, Known
#           interactions)
# Configurations: 1k = cpu-clock at 1 kHz, high = cpu-clock at HIGH_HZ,
# cycles = cycles at 1 kHz (the hardware-event default of both tools),
# run only when 'perf stat -e cycles true' works.
#
# Per run: the workload's wall time and CPU time (task-clock), its rate
# (G user instructions per wall second), the profiler's extra CPU time
# (user+sys of the whole tree minus the workload's task-clock; includes
# startup and teardown), samples, lost samples and throttle events.
# Lost: strobe from its stop line; perf from PERF_RECORD_LOST and
# PERF_RECORD_LOST_SAMPLES in 'perf report -D'.
# Nothing is asserted: this measures, it does not pass or fail.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
STROBE=${STROBE:-$top/tools/strobe}
WL=$top/tests/workloads/split603010
secs=4 rounds=3 jobs=$(nproc) high=20000 raise=0 configs=1k,high,cycles

usage() { sed -n '5,14s/^# \{0,1\}//p' "$0"; }
while getopts d:r:j:F:Lc:h o; do
	case $o in
	d) secs=$OPTARG ;;
	r) rounds=$OPTARG ;;
	j) jobs=$OPTARG ;;
	F) high=$OPTARG ;;
	L) raise=1 ;;
	c) configs=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
for c in ${configs//,/ }; do
	case $c in
	1k|high|cycles) ;;
	*) echo "overhead.sh: unknown configuration '$c' (1k, high, cycles)" >&2; exit 2 ;;
	esac
done
for f in "$STROBE" "$WL"; do
	[ -x "$f" ] || { echo "overhead.sh: $f missing: build first (make -j2)" >&2; exit 1; }
done
command -v perf >/dev/null || { echo "overhead.sh: perf not found" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "overhead.sh: run as root (system-wide sampling)" >&2; exit 1; }

MAXRATE=/proc/sys/kernel/perf_event_max_sample_rate
tmp=$(mktemp -d /tmp/strobe-overhead.XXXXXX)
restore_rate=
cleanup() {
	if [ -n "$restore_rate" ]; then
		echo "$restore_rate" > $MAXRATE
		echo "# restored $MAXRATE to $restore_rate (now $(cat $MAXRATE))"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export STROBE_DB=$tmp/strobe.db STROBE_SOCKET=$tmp/strobed.sock

# The workload: JOBS instances, each under perf stat; wall time around all.
cat > "$tmp/wl.sh" <<EOF
#!/bin/sh
out=\$1 i=0
s=\$(date +%s.%N)
while [ \$i -lt $jobs ]; do
	perf stat -x, -o \$out.stat\$i -e task-clock,instructions:u -- "$WL" $secs &
	i=\$((i + 1))
done
wait
echo "\$s \$(date +%s.%N)" > \$out.wall
EOF

results=$tmp/results	# config mode round wall cpu ginsn rate_wall rate_cpu extra_cpu samples lost throttled rate_tot note
: > "$results"; : > "$tmp/rates"

# run CONFIG MODE ROUND EVENT HZ
run() {
	local cfg=$1 mode=$2 round=$3 ev=$4 hz=$5 r=$tmp/run rc=0
	local samples=- lost=- thr=- note=
	rm -f "$r".*
	case $mode in
	bare)
		/usr/bin/time -f "%e %U %S" -o "$r.time" sh "$tmp/wl.sh" "$r" ;;
	strobe)
		/usr/bin/time -f "%e %U %S" -o "$r.time" \
			"$STROBE" record --sample-event "$ev" -F "$hz" -- sh "$tmp/wl.sh" "$r" \
			2> "$r.err" || rc=$?
		# "strobe record: session N: S samples, L lost, T s[, throttled X times ...]"
		local line
		line=$(grep 'strobe record: session' "$r.err" | tail -1)
		samples=$(echo "$line" | sed -n 's/.*: \([0-9]*\) samples.*/\1/p')
		lost=$(echo "$line" | sed -n 's/.* \([0-9]*\) lost.*/\1/p')
		thr=$(echo "$line" | sed -n 's/.*throttled \([0-9]*\) times.*/\1/p')
		[ -n "$line" ] && thr=${thr:-0}
		[ -n "$samples" ] || { samples=- lost=- thr=-; note="strobe failed: $(tail -1 "$r.err")"; } ;;
	perf)
		/usr/bin/time -f "%e %U %S" -o "$r.time" \
			perf record --buildid-mmap -a -F "$hz" -e "$ev" -o "$tmp/perf.data" -- sh "$tmp/wl.sh" "$r" \
			2> "$r.err" || rc=$?
		if [ $rc = 0 ] && [ -s "$tmp/perf.data" ]; then
			perf report --stats -i "$tmp/perf.data" > "$r.stats" 2>/dev/null
			samples=$(awk '/SAMPLE events:/ { print $3; exit }' "$r.stats")
			thr=$(awk '/ THROTTLE events:/ { print $3; exit }' "$r.stats")
			thr=${thr:-0}
			lost=$(perf report -D -i "$tmp/perf.data" 2>/dev/null |
			       awk '/PERF_RECORD_LOST: / { sub(/.*lost:/, ""); n += $1 }
				    /PERF_RECORD_LOST_SAMPLES: / { sub(/.*lost samples :/, ""); n += $1 }
				    END { print n + 0 }')
			[ -n "$samples" ] || { samples=- lost=- thr=-; note="perf report failed on the data"; }
		fi
		grep -q 'throttling from' "$r.err" &&
			note="perf lowered -F: $(grep -o 'throttling from [0-9]* Hz to [0-9]* Hz' "$r.err")"
		[ $rc = 0 ] || note="$note perf exit status $rc" ;;
	esac
	rm -f "$tmp/perf.data"
	if [ ! -s "$r.wall" ]; then
		echo "$cfg $mode $round - - - - - - - - - - workload did not run: $(tail -1 "$r.err" 2>/dev/null)" >> "$results"
		echo "  $cfg $mode round $round: the workload did not run: $(tail -1 "$r.err" 2>/dev/null)"
		return
	fi
	# task-clock (msec) and instructions:u, summed over instances; the 5th
	# field of perf stat -x is the percentage of time the counter ran
	local stat
	stat=$(cat "$r".stat* | awk -F, '
		$3 == "task-clock" { ms += $1 }
		$3 == "instructions:u" { ins += $1; if ($5 + 0 < 99.9) mux = 1 }
		END { printf "%.3f %.0f %d", ms / 1000, ins, mux }')
	set -- $stat
	local cpu=$1 ins=$2 mux=$3
	[ "$mux" = 1 ] && note="$note instructions:u multiplexed (scaled)"
	read -r t0 t1 < "$r.wall"
	read -r tw tu ts <<< "$(tail -1 "$r.time")"
	awk -v c="$cfg" -v m="$mode" -v rd="$round" -v t0="$t0" -v t1="$t1" -v cpu="$cpu" \
	    -v ins="$ins" -v tu="$tu" -v ts="$ts" -v tw="$tw" -v s="$samples" -v l="$lost" \
	    -v th="$thr" -v n="$note" 'BEGIN {
		w = t1 - t0
		x = tu + ts - cpu
		if (m == "bare" || x < 0) x = 0	# bare: only sh and perf stat, within rounding
		printf "%s %s %d %.3f %.3f %.3f %.4f %.4f %.3f %s %s %s %.4f %s\n", c, m, rd, w, cpu,
		       ins / 1e9, ins / 1e9 / w, (cpu > 0 ? ins / 1e9 / cpu : 0), x, s, l, th,
		       (cpu + x > 0 ? ins / 1e9 / (cpu + x) : 0), n
	}' >> "$results"
	tail -1 "$results" | awk '{ printf "  %-15s %-6s round %d  wall %6.3f s  cpu %6.3f s  G insn/s: %6.3f per wall-s %6.3f per cpu-s %6.3f per total cpu-s  profiler cpu %6.3f s  samples %-7s lost %-5s throttled %-4s", $1, $2, $3, $4, $5, $7, $8, $13, $9, $10, $11, $12; for (i = 14; i <= NF; i++) printf " %s", $i; printf "\n" }'
}

# Can a run at HZ start?  The kernel lowers perf_event_max_sample_rate
# when its sampling interrupts take too long; then strobe refuses -F above
# it and perf silently samples slower, so the modes would not compare.
# With -L the limit is put back up to HZ before the run (the old value is
# restored at the end); without -L such a run is skipped.
rate_ok() {
	local hz=$1 cur
	cur=$(cat $MAXRATE)
	[ "$cur" -ge "$hz" ] && return 0
	[ $raise = 1 ] || return 1
	[ -n "$restore_rate" ] || restore_rate=$cur
	echo "$hz" > $MAXRATE
	echo "  (raised $MAXRATE from $cur to $hz: -L)"
	return 0
}

# config NAME EVENT HZ
config() {
	local name=$1 ev=$2 hz=$3 before after mode
	local modes=(bare strobe perf)
	before=$(cat $MAXRATE)
	echo "## $name: --sample-event/-e $ev -F $hz, $jobs x split603010 $secs (perf_event_max_sample_rate $before)"
	for ((i = 1; i <= rounds; i++)); do
		for ((k = 0; k < 3; k++)); do
			mode=${modes[(k + i - 1) % 3]}
			if [ $mode != bare ] && ! rate_ok "$hz"; then
				echo "$name $mode $i - - - - - - - - - - skipped: perf_event_max_sample_rate $(cat $MAXRATE) < $hz" >> "$results"
				echo "  $name $mode round $i: skipped: the kernel lowered perf_event_max_sample_rate to $(cat $MAXRATE) < $hz (-L puts it back)"
				continue
			fi
			run "$name" "$mode" "$i" "$ev" "$hz"
		done
	done
	after=$(cat $MAXRATE)
	echo "$name $before $after $hz" >> "$tmp/rates"
	[ "$after" = "$before" ] ||
		echo "  (perf_event_max_sample_rate was $before before these runs and is $after after them)"
	if [ -n "$restore_rate" ]; then
		echo "$restore_rate" > $MAXRATE
		echo "  (restored $MAXRATE to $restore_rate)"
		restore_rate=
	fi
}

echo "# strobe overhead benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(nproc) CPUs,"\
     "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "# $rounds rounds x 3 modes, $jobs x split603010 $secs s per run, load average $(cut -d' ' -f1-3 /proc/loadavg)"

for c in ${configs//,/ }; do
	case $c in
	1k)
		config cpu-clock-1k cpu-clock 1000 ;;
	high)
		max=$(cat $MAXRATE) hz=$high
		if [ "$max" -lt "$high" ] && [ $raise = 0 ]; then
			hz=$max
			echo "# $MAXRATE is $max < $high: the high-rate runs use $max Hz (-L raises the limit to $high)"
		fi
		config "cpu-clock-${hz}" cpu-clock "$hz" ;;
	cycles)
		if perf stat -e cycles true >/dev/null 2>&1; then
			config cycles-1k cycles 1000
		else
			echo "## cycles-1k: skipped: 'perf stat -e cycles true' fails (no hardware PMU)"
		fi ;;
	esac
done

echo
echo "# summary: medians over $rounds rounds.  wall_s, cpu_s: the workload's wall and CPU time"
echo "# (all instances); prof_cpu: the profiler's own CPU s per run, start and stop included."
echo "# Work rate = G user instructions of the workload per wall second (w), per workload CPU"
echo "# second (c), per CPU second of workload + profiler (t).  slow_x = bare rate / rate"
echo "# (1.000 = no cost) from the medians; pair_x = median over rounds of that round's"
echo "# bare rate / rate.  samples: median per run; lost, throttled: totals over all rounds."
awk '
function median(list,    n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	if (!n) return 0
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function paired(cf, m, col,    i, l, b, x) {
	l = ""
	for (i = 1; i <= maxr; i++) {
		b = v[cf SUBSEP "bare" SUBSEP i SUBSEP col]; x = v[cf SUBSEP m SUBSEP i SUBSEP col]
		if (b > 0 && x > 0) l = l " " b / x
	}
	return median(l)
}
function ratio(a, b) { return b > 0 ? a / b : 0 }
$4 != "-" {
	k = $1 SUBSEP $2
	if (!($1 in seen)) { seen[$1] = 1; order[++ncfg] = $1 }
	wall[k] = wall[k] " " $4; cpu[k] = cpu[k] " " $5; extra[k] = extra[k] " " $9
	rate[k, "w"] = rate[k, "w"] " " $7; rate[k, "c"] = rate[k, "c"] " " $8
	rate[k, "t"] = rate[k, "t"] " " $13
	if ($10 != "-") { smp[k] = smp[k] " " $10; lost[k] += $11; thr[k] += $12 }
	v[$1 SUBSEP $2 SUBSEP $3 SUBSEP "w"] = $7; v[$1 SUBSEP $2 SUBSEP $3 SUBSEP "c"] = $8
	v[$1 SUBSEP $2 SUBSEP $3 SUBSEP "t"] = $13
	runs[k]++
	if ($3 > maxr) maxr = $3
}
END {
	printf "%-15s %-6s %4s %6s %6s %8s %6s %6s %6s %6s %6s %6s %6s %6s %6s %7s %5s %5s\n", "config", "mode",
	       "runs", "wall_s", "cpu_s", "prof_cpu", "G/w", "G/c", "G/t", "slow_w", "slow_c", "slow_t",
	       "pair_w", "pair_c", "pair_t", "samples", "lost", "thrtl"
	for (c = 1; c <= ncfg; c++) {
		cf = order[c]
		for (x = 1; x <= 3; x++) { col = substr("wct", x, 1); b[col] = median(rate[cf SUBSEP "bare", col]) }
		for (mi = 1; mi <= 3; mi++) {
			m = mi == 1 ? "bare" : mi == 2 ? "strobe" : "perf"
			k = cf SUBSEP m
			if (!(k in runs)) continue
			for (x = 1; x <= 3; x++) {
				col = substr("wct", x, 1); md[col] = median(rate[k, col])
				sl[m, col] = ratio(b[col], md[col])
			}
			printf "%-15s %-6s %4d %6.3f %6.3f %8.3f %6.3f %6.3f %6.3f %6.4f %6.4f %6.4f %6.4f %6.4f %6.4f %7s %5s %5s\n",
			       cf, m, runs[k], median(wall[k]), median(cpu[k]), median(extra[k]),
			       md["w"], md["c"], md["t"], sl[m, "w"], sl[m, "c"], sl[m, "t"],
			       paired(cf, m, "w"), paired(cf, m, "c"), paired(cf, m, "t"),
			       m == "bare" ? "-" : median(smp[k]), m == "bare" ? "-" : lost[k] + 0,
			       m == "bare" ? "-" : thr[k] + 0
		}
		if (((cf SUBSEP "strobe") in runs) && ((cf SUBSEP "perf") in runs))
			printf "%-15s cost (slow_x - 1): per wall-s strobe %+.2f%% perf %+.2f%%; per cpu-s strobe %+.2f%% perf %+.2f%%; per total cpu-s strobe %+.2f%% perf %+.2f%%\n",
			       cf, (sl["strobe", "w"] - 1) * 100, (sl["perf", "w"] - 1) * 100,
			       (sl["strobe", "c"] - 1) * 100, (sl["perf", "c"] - 1) * 100,
			       (sl["strobe", "t"] - 1) * 100, (sl["perf", "t"] - 1) * 100
	}
}' "$tmp/results"
awk '{ printf "# %s: perf_event_max_sample_rate %s before, %s after the runs\n", $1, $2, $3 }' "$tmp/rates"
echo "# strobe sessions recorded:"
"$STROBE" sessions --db "$STROBE_DB" | sed 's/^/#   /'
