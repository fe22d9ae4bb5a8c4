# Hardware events end to end, where the guest has a PMU (arm64: QEMU's
# PMUv3, cycles and, under -icount, instructions; under -icount shift=0
# both count 1 per ns of virtual time, so IPC is 1 by construction and
# the checks below compare strobe with perf, not with a known IPC):
# - strobe list shows the PMU's events (its sysfs events, cycles and
#   instructions);
# - strobe record -e cycles,instructions sampling cycles with a period,
#   with each backend, while perf record samples the same run: the known
#   split of split603010 within 3 points of the truth and of perf's; each
#   symbol's ipc equal to its instructions/cycles, and the workload's
#   equal to perf stat's within 2%; cycles per sample equal to the period
#   (the group read at each overflow);
# - the driver and the perf backend agree (shares, the workload's cycles);
# - frequency mode (-F): each sample weighs its period: the workload's
#   summed periods equal perf's event count of the same run within 5%,
#   and its shares perf report's;
# - a group of more events than the PMU has counters is refused with one
#   line naming how many fit, and perf stat agrees on that number;
# - strobe count (plain and -x, -I, -a -A, --per-thread, and multiplexed:
#   more events than counters, scaled) against perf stat.
# Skipped where the guest has no hardware PMU (the x86_64 TCG guest).
if [ ! -x /usr/sbin/strobed ]; then
	echo "SKIP strobed-hw: strobed is not packed into this guest"
	exit 0
fi
if ! command -v perf >/dev/null; then
	echo "SKIP strobed-hw: no perf to compare with in this guest (Debian's arm64 perf is packed into the arm64 guest only)"
	exit 0
fi
if ! perf stat -e cycles true >/dev/null 2>&1; then
	echo "SKIP strobed-hw: no hardware PMU in this guest (perf stat -e cycles fails)"
	exit 0
fi
W=/usr/libexec/strobe
SPLIT=$W/split603010
# Under TCG an interrupt takes emulated time, and the kernel lowers
# perf_event_max_sample_rate when its handlers seem slow, down to less
# than these runs ask for (it would then throttle the samplers, and
# refuse -F 400): a rate high enough, then that watch off (the kernel
# takes no rate while it is off), both set back at the end.
rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
pct=$(cat /proc/sys/kernel/perf_cpu_time_max_percent)
echo 10000 >/proc/sys/kernel/perf_event_max_sample_rate
echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
PERIOD=2000000
fails=0
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
pass() { echo "PASS $1"; }
# within A B TOL: |A - B| <= TOL * |B| (TOL a fraction)
within() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(a != "" && b != "" && d <= t * m) }'; }
# near A B PTS: |A - B| <= PTS (points)
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d <= t) }'; }

start_strobed() {	# BACKEND
	export STROBE_DB=/tmp/db/hw$1.db STROBE_SOCKET=/tmp/hw$1.sock
	strobed --foreground --backend "$1" 2>/tmp/hw$1.log &
	spid=$!
	i=0
	while [ ! -S $STROBE_SOCKET ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
}
stop_strobed() { kill $spid; wait $spid; }

# shares FILE: "work60 work30 work10" percentages of the three, from a
# strobe report CSV (column 5: percent) or "perf report --stdio" lines
shares_csv() {
	awk -F, '$1 ~ /split603010$/ && ($3 == "work60" || $3 == "work30" || $3 == "work10") { v[$3] = $5 + 0; t += $5 }
		END { if (t > 0) printf "%.2f %.2f %.2f\n", 100 * v["work60"] / t, 100 * v["work30"] / t, 100 * v["work10"] / t }' "$1"
}
shares_perf() {
	awk '$NF == "work60" || $NF == "work30" || $NF == "work10" { p = $1; sub("%", "", p); v[$NF] = p + 0; t += p }
		END { if (t > 0) printf "%.2f %.2f %.2f\n", 100 * v["work60"] / t, 100 * v["work30"] / t, 100 * v["work10"] / t }' "$1"
}
# shares_ok NAME "A B C" "X Y Z" PTS: each of the three within PTS points
shares_ok() {
	set -- "$1" $2 $3 "$4"
	[ $# = 8 ] || return 1
	near "$2" "$5" "$8" && near "$3" "$6" "$8" && near "$4" "$7" "$8"
}

# --- strobe list ----------------------------------------------------------------
strobe list >/tmp/hw.list 2>&1
ok=1
for pmu in /sys/bus/event_source/devices/*; do
	[ -d "$pmu/events" ] || continue
	for ev in "$pmu"/events/*; do
		case $ev in *.scale|*.unit|*.per-pkg|*.snapshot) continue ;; esac
		n="$(basename "$pmu")/$(basename "$ev")/"
		grep -qF "$n" /tmp/hw.list || { ok=0; echo "# strobe list lacks $n"; }
	done
done
for n in cycles instructions; do
	sed -n '/^Hardware events:/,/^$/p' /tmp/hw.list | grep -qw "$n" || { ok=0; echo "# strobe list lacks $n"; }
done
[ $ok = 1 ] && pass hw-list || fail hw-list "see the lines above"

# perf stat's IPC of the workload alone, the reference
perf stat -x, -e cycles,instructions $SPLIT 2>/tmp/hw.pstat >/dev/null
pc=$(awk -F, '$3 == "cycles" { print $1 }' /tmp/hw.pstat)
pi=$(awk -F, '$3 == "instructions" { print $1 }' /tmp/hw.pstat)
pcyc=$pc
pipc=$(awk -v c="$pc" -v i="$pi" 'BEGIN { if (c > 0) printf "%.4f", i / c }')
echo "# perf stat: $pc cycles, $pi instructions, IPC $pipc"

# --- record with a period, each backend, perf record beside ----------------------
for b in perf driver; do
	start_strobed $b
	strobe record -e cycles,instructions --sample-event cycles -c $PERIOD \
		-- perf record -q -e cycles -c $PERIOD -o /tmp/hw.$b.data -- $SPLIT \
		>/tmp/hw.$b.rec 2>&1 || fail "$b-hw-record" "$(cat /tmp/hw.$b.rec /tmp/hw$b.log)"
	strobe report --comm split603010 --format csv >/tmp/hw.$b.csv 2>/tmp/hw.$b.err ||
		fail "$b-hw-report" "$(cat /tmp/hw.$b.err)"
	stop_strobed
	perf report -i /tmp/hw.$b.data --stdio --sort sym 2>/dev/null >/tmp/hw.$b.perf
	s=$(shares_csv /tmp/hw.$b.csv)
	p=$(shares_perf /tmp/hw.$b.perf)
	echo "# $b: work60/30/10 strobe ${s:-none}, perf record ${p:-none} (want 60 30 10)"
	shares_ok x "$s" "60 30 10" 3 && pass "$b-hw-split" || fail "$b-hw-split" "strobe ${s:-none}, not 60 30 10 within 3 points"
	shares_ok x "$s" "$p" 3 && pass "$b-hw-split-vs-perf" || fail "$b-hw-split-vs-perf" "strobe ${s:-none}, perf ${p:-none}"
	# columns: binary,build_id,symbol,samples,percent,cycles,instructions,ipc
	head -n 1 /tmp/hw.$b.csv | grep -q '^binary,build_id,symbol,samples,percent,cycles,instructions,ipc$' ||
		fail "$b-hw-columns" "$(head -n 1 /tmp/hw.$b.csv)"
	awk -F, -v pipc="$pipc" -v per=$PERIOD '
		$1 ~ /split603010$/ && ($3 == "work60" || $3 == "work30" || $3 == "work10") {
			n++; s += $4; c += $6; i += $7
			if ($6 <= 0 || ($8 - $7 / $6) > 0.006 || ($7 / $6 - $8) > 0.006) { print "# " $3 ": ipc " $8 " is not " $7 "/" $6; bad = 1 }
		}
		END {
			printf "# the three: %d samples, %.0f cycles (%.0f per sample, period %d), IPC %.4f (perf stat %s)\n", s, c, s ? c / s : 0, per, c ? i / c : 0, pipc
			if (n != 3 || bad) exit 1
			r = i / c / pipc; if (r < 0.98 || r > 1.02) exit 2
			r = c / s / per; if (r < 0.95 || r > 1.05) exit 3
		}' /tmp/hw.$b.csv
	case $? in
	0) pass "$b-hw-ipc"; pass "$b-hw-cycles-per-sample" ;;
	1) fail "$b-hw-ipc" "a symbol's ipc is not its instructions/cycles (see above)" ;;
	2) fail "$b-hw-ipc" "the workload's IPC is not perf stat's within 2%" ;;
	3) pass "$b-hw-ipc"; fail "$b-hw-cycles-per-sample" "cycles per sample are not the period within 5%" ;;
	esac
	eval "split_$b=\"\$s\""
	eval "cyc_$b=\$(awk -F, '\$1 ~ /split603010\$/ && \$3 ~ /^work(60|30|10)\$/ { c += \$6 } END { print c + 0 }' /tmp/hw.$b.csv)"
done
echo "# the workload's cycles in work60/30/10: perf backend $cyc_perf, driver $cyc_driver"
shares_ok x "$split_driver" "$split_perf" 3 && within "$cyc_driver" "$cyc_perf" 0.03 &&
	pass hw-driver-vs-perf || fail hw-driver-vs-perf "shares driver $split_driver, perf $split_perf; cycles $cyc_driver, $cyc_perf"

# --- frequency mode ------------------------------------------------------------------
start_strobed perf
strobe record -e instructions --sample-event cycles -F 400 \
	-- perf record -q -e cycles -F 400 -o /tmp/hw.freq.data -- $SPLIT >/tmp/hw.freq.rec 2>&1 ||
	fail "hw-freq-record" "$(cat /tmp/hw.freq.rec)"
strobe report --comm split603010 >/tmp/hw.freq.txt 2>&1
strobe report --comm split603010 --format csv >/tmp/hw.freq.csv 2>&1
stop_strobed
perf report -i /tmp/hw.freq.data --stdio --sort sym 2>/dev/null >/tmp/hw.freq.perf
# strobe: "# percent: of cycles's count, N (each sample weighs its period...)"
sw=$(sed -n "s/^# percent: of cycles's count, \([0-9]*\).*/\1/p" /tmp/hw.freq.txt)
pw=$(sed -n 's/^# Event count (approx.): \([0-9]*\).*/\1/p' /tmp/hw.freq.perf)
echo "# -F 400: the workload's summed periods: strobe ${sw:-none}, perf record ${pw:-none}"
within "$sw" "$pw" 0.05 && pass hw-freq-period-weight ||
	fail hw-freq-period-weight "strobe's summed periods ${sw:-none} are not perf's ${pw:-none} within 5%"
s=$(shares_csv /tmp/hw.freq.csv)
p=$(shares_perf /tmp/hw.freq.perf)
echo "# -F 400: work60/30/10 strobe ${s:-none}, perf report ${p:-none}"
shares_ok x "$s" "$p" 4 && pass hw-freq-split-vs-perf || fail hw-freq-split-vs-perf "strobe ${s:-none}, perf ${p:-none}"

# --- a group larger than the PMU -------------------------------------------------
# How many events of one group {cycles,instructions,...} perf stat counts
# on CPU 0, then strobe record with one more: cycles sampling, the rest
# instructions (one cycle counter, the others general counters, in both).
evs=cycles
fit=1
while [ $fit -lt 32 ]; do
	perf stat -C 0 -x, -e "{$evs,instructions}" sleep 0.05 2>&1 | grep -q 'not counted\|not supported' && break
	evs="$evs,instructions"
	fit=$((fit + 1))
done
echo "# perf stat counts at most $fit events of one group {cycles,instructions,...} on CPU 0"
more=$(echo "$evs" | sed 's/^cycles,*//')
for b in perf driver; do
	start_strobed $b
	strobe record -e "${more:+$more,}instructions" --sample-event cycles -c $PERIOD -- true \
		>/tmp/hw.big 2>&1 && fail $b-hw-group-too-big "strobe record took a group of $((fit + 1)): $(cat /tmp/hw.big)"
	stop_strobed
	echo "# $b: $(cat /tmp/hw.big)"
	n=$(sed -n 's/.*its PMU counts at most \([0-9]*\) of the group.s \([0-9]*\) events.*/\1 \2/p' /tmp/hw.big)
	[ "$n" = "$fit $((fit + 1))" ] && [ "$(wc -l </tmp/hw.big)" = 1 ] && pass $b-hw-group-too-big ||
		fail $b-hw-group-too-big "want one line saying at most $fit of $((fit + 1)) events, got: $(cat /tmp/hw.big)"
done

# --- strobe count against perf stat ----------------------------------------------
strobe count -x, -e cycles,instructions -- $SPLIT 2>/tmp/hw.scount >/dev/null ||
	fail hw-count "$(cat /tmp/hw.scount)"
ok=1
for ev in cycles instructions; do
	a=$(awk -F, -v e=$ev '$3 == e { print $1 }' /tmp/hw.scount)
	b=$(awk -F, -v e=$ev '$3 == e { print $1 }' /tmp/hw.pstat)
	echo "# count $ev: strobe ${a:-none}, perf stat ${b:-none}"
	within "$a" "$b" 0.02 || ok=0
	# perf's -x layout: value,unit,event,run time,percent running,...
	[ "$(awk -F, -v e=$ev '$3 == e { print NF, $5 }' /tmp/hw.scount)" = "$(awk -F, -v e=$ev '$3 == e { print NF, $5 }' /tmp/hw.pstat)" ] ||
		{ ok=0; echo "# -x fields of $ev differ: $(grep ",$ev," /tmp/hw.scount) / $(grep ",$ev," /tmp/hw.pstat)"; }
done
[ $ok = 1 ] && pass hw-count-vs-perf-stat || fail hw-count-vs-perf-stat "see the lines above"

strobe count -I 1000 -x, -e cycles -- $SPLIT 2>/tmp/hw.icount >/dev/null
# -I -x: time,value,unit,event,...
a=$(awk -F, '$4 == "cycles" { s += $2; n++ } END { if (n >= 3) print s }' /tmp/hw.icount)
b=$(awk -F, '$3 == "cycles" { print $1 }' /tmp/hw.pstat)
echo "# count -I 1000: cycles summed over $(grep -c ',cycles,' /tmp/hw.icount) intervals ${a:-none}, perf stat ${b:-none}"
within "$a" "$b" 0.02 && pass hw-count-interval || fail hw-count-interval "${a:-no intervals}, perf stat ${b:-none}"

strobe count -a -A -x, -e cycles -- sleep 1 2>/tmp/hw.acount >/dev/null
perf stat -a -A -x, -e cycles -- sleep 1 2>/tmp/hw.apstat >/dev/null
ok=1
for c in $(awk -F, '$4 == "cycles" { print $1 }' /tmp/hw.apstat); do
	a=$(awk -F, -v c=$c '$1 == c && $4 == "cycles" { print $2 }' /tmp/hw.acount)
	b=$(awk -F, -v c=$c '$1 == c && $4 == "cycles" { print $2 }' /tmp/hw.apstat)
	echo "# count -a -A $c: strobe ${a:-none}, perf stat ${b:-none}"
	within "$a" "$b" 0.02 || ok=0
done
[ -n "$c" ] && [ $ok = 1 ] && pass hw-count-per-cpu || fail hw-count-per-cpu "see the lines above"

strobe count --per-thread -x, -e cycles -- $SPLIT 2>/tmp/hw.tcount >/dev/null
a=$(awk -F, '$1 ~ /^split603010-[0-9]+$/ && $4 == "cycles" { print $2 }' /tmp/hw.tcount)
echo "# count --per-thread: $(grep ',cycles' /tmp/hw.tcount | head -n 2 | tr '\n' ' ')"
within "$a" "$pcyc" 0.02 && pass hw-count-per-thread || fail hw-count-per-thread "the thread's ${a:-none}, perf stat's ${pcyc:-none}"

# multiplexed: five times cycles,instructions, more than the PMU's counters
evs=cycles,instructions,cycles,instructions,cycles,instructions,cycles,instructions,cycles,instructions
strobe count -x, -e $evs -- $SPLIT 2>/tmp/hw.mcount >/dev/null
perf stat -x, -e $evs -- $SPLIT 2>/tmp/hw.mpstat >/dev/null
ok=1
for ev in cycles instructions; do
	a=$(awk -F, -v e=$ev '$3 == e { s += $1; n++; if ($5 >= 100) full++ } END { if (n == 5 && !full) print s / n }' /tmp/hw.mcount)
	b=$(awk -F, -v e=$ev '$3 == e { s += $1; n++; if ($5 >= 100) full++ } END { if (n == 5 && !full) print s / n }' /tmp/hw.mpstat)
	echo "# multiplexed $ev, mean of 5 scaled: strobe ${a:-none}, perf stat ${b:-none} ($(awk -F, -v e=$ev '$3 == e { printf "%s%% ", $5 }' /tmp/hw.mcount)running)"
	within "$a" "$b" 0.02 || ok=0
done
[ $ok = 1 ] && pass hw-count-multiplexed || fail hw-count-multiplexed "see the lines above (none: not 5 values each, or one ran 100%)"

echo "$pct" >/proc/sys/kernel/perf_cpu_time_max_percent
echo "$rate" >/proc/sys/kernel/perf_event_max_sample_rate ||
	echo "# perf_event_max_sample_rate not set back to $rate"
[ $fails = 0 ]
