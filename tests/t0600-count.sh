#!/bin/sh
# t0600-count: strobe count against known answers and perf stat.
#   - page-faults of pagetouch N: at least N, and within 2% of perf stat's
#     count of the same workload (or of N when perf is missing)
#   - -I intervals: more than one, times increasing, summing to a whole
#     run's count within 2% (the exec's faults vary by a few)
#   - -p --per-thread and -t on twothreads NA NB: each thread's own count
#   - -x fields in perf stat's order; --json keys; -r 3's stddev field
#   - the command's output untouched, its exit status passed on
#   - bad input: one line, exit 2
. "${STROBE_TOP:-$(dirname "$0")/..}/tests/lib.sh"

N=20000
NA=3000
NB=7000

# field FILE EVENT COL: column COL (1-based) of the -x, line of EVENT
field() {
	awk -F, -v ev="$2" -v c="$3" '$3 == ev { print $c; exit }' "$1"
}

# within A B PCT MIN: |A - B| <= max(B * PCT / 100, MIN)
within() {
	awk -v a="$1" -v b="$2" -v p="$3" -v m="$4" \
		'BEGIN { d = a - b; if (d < 0) d = -d; t = b * p / 100; if (t < m) t = m; exit !(d <= t) }'
}

# --- page-faults vs perf stat and the known answer ---
"$STROBE" count -x, -e page-faults -o "$tmp/pf.csv" -- "$WL/pagetouch" $N ||
	fail "strobe count -- pagetouch failed"
ours=$(field "$tmp/pf.csv" page-faults 1)
[ -n "$ours" ] || { cat "$tmp/pf.csv"; fail "no page-faults line"; }
[ "$ours" -ge $N ] || fail "page-faults $ours < the $N pagetouch takes"
if command -v perf >/dev/null 2>&1 &&
   perf stat -x, -e page-faults -o "$tmp/perf.csv" -- "$WL/pagetouch" $N 2>/dev/null; then
	theirs=$(awk -F, '$3 == "page-faults" { print $1 }' "$tmp/perf.csv")
	within "$ours" "$theirs" 2 0 || fail "page-faults: strobe $ours, perf stat $theirs (> 2% apart)"
	ok "page-faults: strobe $ours, perf stat $theirs"
else
	within "$ours" $N 2 0 || fail "page-faults: strobe $ours, known answer $N (> 2% apart)"
	ok "page-faults: $ours for $N pages (perf stat unavailable: known answer only)"
fi

# --- the command's stdout untouched, exit status passed on, text to stderr ---
out=$("$STROBE" count -e page-faults -- echo hello 2>"$tmp/err.txt")
[ "$out" = hello ] || fail "the command's output changed: '$out'"
grep -q "Performance counter stats for 'echo hello'" "$tmp/err.txt" ||
	{ cat "$tmp/err.txt"; fail "no text heading on stderr"; }
grep -q "page-faults" "$tmp/err.txt" || fail "no page-faults line on stderr"
"$STROBE" count -e page-faults -- sh -c 'exit 7' 2>/dev/null
rc=$?
[ $rc = 7 ] || fail "exit status $rc, the command's was 7"
ok "stdout untouched, counts on stderr, exit status passed on"

# --- the default events: perf stat's, the hardware ones only with a PMU ---
"$STROBE" count -x, -o "$tmp/def.csv" -- true || fail "count without -e failed"
for ev in task-clock context-switches cpu-migrations page-faults; do
	grep -q ",$ev," "$tmp/def.csv" || { cat "$tmp/def.csv"; fail "default events lack $ev"; }
done
if "$STROBE" count -x, -e cycles -o "$tmp/hw.csv" -- true && ! grep -q '<not supported>' "$tmp/hw.csv"; then
	for ev in cycles instructions branches branch-misses; do
		grep -q ",$ev," "$tmp/def.csv" || { cat "$tmp/def.csv"; fail "default events lack $ev"; }
	done
	ins=$(awk -F, '$3 == "instructions" { print $7 }' "$tmp/def.csv")
	[ "$ins" = "insn per cycle" ] || fail "instructions' metric unit is '$ins'"
	ok "default events: perf stat's, with the hardware PMU's"
else
	grep -q ',cycles,' "$tmp/def.csv" && fail "default events name cycles without a hardware PMU"
	echo "SKIP-part: no hardware PMU here: the default hardware events and their metrics are not run (tests/unit/test_count checks the metrics)"
	ok "default events: perf stat's software ones (no hardware PMU)"
fi

# --- -x fields in perf stat's order ---
"$STROBE" count -x';' -e page-faults,task-clock -o "$tmp/x.csv" -- "$WL/pagetouch" 1000 ||
	fail "count -x failed"
python3 - "$tmp/x.csv" <<'PY' || fail "-x fields"
import sys
lines = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
rows = {}
for l in lines:
    f = l.split(";")
    assert len(f) == 7, f"want 7 fields (value;unit;event;run;pct;metric;unit): {l!r}"
    rows[f[2]] = f
pf, tc = rows["page-faults"], rows["task-clock"]
assert int(pf[0]) >= 1000, pf
assert pf[1] == "", pf
assert tc[1] == "msec" and float(tc[0]) > 0, tc
for r in (pf, tc):
    assert int(r[3]) > 0, f"run time {r}"
    assert 0 < float(r[4]) <= 100, f"percent running {r}"
    assert float(r[5]) >= 0, f"metric value {r}"
assert pf[6].endswith("/sec"), pf
assert tc[6] == "CPUs utilized", tc
# run time of page-faults equals task-clock's (both run whenever the task does)
assert abs(float(tc[0]) * 1e6 - int(tc[3])) < 0.01e6, tc
PY
ok "-x: value, unit, event, run time, % running, metric, metric unit"

# --- --json ---
"$STROBE" count -j -e page-faults -o "$tmp/j.json" -- "$WL/pagetouch" 1000 || fail "count -j failed"
python3 - "$tmp/j.json" <<'PY' || fail "--json keys"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(objs) == 1, objs
o = objs[0]
assert list(o) == ["counter-value", "unit", "event", "event-runtime", "pcnt-running",
                   "metric-value", "metric-unit"], list(o)
assert o["event"] == "page-faults" and float(o["counter-value"]) >= 1000, o
PY
ok "--json: perf stat -j's keys"

# --- -r 3: the stddev field ---
"$STROBE" count -r 3 -x, -e page-faults -o "$tmp/r.csv" -- "$WL/pagetouch" 1000 || fail "-r 3 failed"
sd=$(field "$tmp/r.csv" page-faults 4)
case $sd in
*%) ;;
*) cat "$tmp/r.csv"; fail "-r 3: no stddev field (got '$sd')" ;;
esac
awk -v s="${sd%\%}" 'BEGIN { exit !(s >= 0 && s < 10) }' || fail "-r 3: stddev $sd"
"$STROBE" count -r 3 -e page-faults -- "$WL/pagetouch" 1000 2>"$tmp/r.txt" || fail "-r 3 text"
grep -q "(3 runs)" "$tmp/r.txt" && grep -q "( +- *[0-9.]*% )" "$tmp/r.txt" ||
	{ cat "$tmp/r.txt"; fail "-r 3: text lacks (3 runs) or +- x%"; }
ok "-r 3: mean with stddev $sd"

# --- -I: intervals sum to the run's count ---
"$STROBE" count -x, -I 50 -e page-faults -o "$tmp/i.csv" -- "$WL/pagetouch" $N --phases \
	>/dev/null || fail "-I run failed"
python3 - "$tmp/i.csv" "$ours" <<'PY' || fail "-I intervals"
import sys
rows = [l.strip().split(",") for l in open(sys.argv[1]) if l.strip()]
whole = int(sys.argv[2])
assert len(rows) >= 3, f"only {len(rows)} intervals for a 600 ms run"
times = [float(r[0]) for r in rows]
assert times == sorted(times) and len(set(times)) == len(times), times
assert all(r[3] == "page-faults" for r in rows), rows
total = sum(int(r[1]) for r in rows if not r[1].startswith("<"))
assert abs(total - whole) <= max(0.02 * whole, 5), f"intervals sum to {total}, a whole run {whole}"
print(f"{len(rows)} intervals sum to {total}")
PY
ok "-I 50: intervals sum to the whole run's count"

# --- -p --per-thread, -p, -t on two threads ---
# start_tt: twothreads NA NB in the background, waiting; sets tt_pid, tid_a, tid_b
start_tt() {
	rm -f "$tmp/tt.out"
	"$WL/twothreads" $NA $NB >"$tmp/tt.out" &
	tt_pid=$!
	i=0
	until grep -q ready "$tmp/tt.out" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 400 ] && fail "twothreads did not start"
		sleep 0.05
	done
	set -- $(cat "$tmp/tt.out")
	tid_a=$3 tid_b=$4
}
# go_when_counting PID NFDS: once strobe count PID holds NFDS perf events, start the faults
go_when_counting() {
	i=0
	while [ "$(ls -l /proc/$1/fd 2>/dev/null | grep -c perf_event)" -lt "$2" ]; do
		i=$((i + 1))
		[ $i -gt 400 ] && { kill $tt_pid; fail "strobe count did not open its events"; }
		kill -0 "$1" 2>/dev/null || { kill $tt_pid; fail "strobe count exited early"; }
		sleep 0.05
	done
	kill -USR1 $tt_pid
	wait $tt_pid || fail "twothreads failed"
	wait "$1" || fail "strobe count -p/-t failed"
}

start_tt
"$STROBE" count -p $tt_pid --per-thread -x, -e page-faults -o "$tmp/pt.csv" &
go_when_counting $! 3
a=$(awk -F, -v t="tt-a-$tid_a" '$1 == t { print $2 }' "$tmp/pt.csv")
b=$(awk -F, -v t="tt-b-$tid_b" '$1 == t { print $2 }' "$tmp/pt.csv")
[ -n "$a" ] && [ -n "$b" ] || { cat "$tmp/pt.csv"; fail "--per-thread: no line for tt-a or tt-b"; }
within "$a" $NA 2 0 && [ "$a" -ge $NA ] || { cat "$tmp/pt.csv"; fail "tt-a counted $a, it takes $NA"; }
within "$b" $NB 2 0 && [ "$b" -ge $NB ] || { cat "$tmp/pt.csv"; fail "tt-b counted $b, it takes $NB"; }
ok "-p --per-thread: tt-a $a (takes $NA), tt-b $b (takes $NB)"

start_tt
"$STROBE" count -p $tt_pid -x, -e page-faults -o "$tmp/p.csv" &
go_when_counting $! 3
all=$(field "$tmp/p.csv" page-faults 1)
within "$all" $((NA + NB)) 2 0 && [ "$all" -ge $((NA + NB)) ] ||
	{ cat "$tmp/p.csv"; fail "-p counted $all, the threads take $((NA + NB))"; }
ok "-p: $all for the process (threads take $((NA + NB)))"

start_tt
"$STROBE" count -t $tid_b -x, -e page-faults -o "$tmp/t.csv" &
go_when_counting $! 1
b=$(field "$tmp/t.csv" page-faults 1)
within "$b" $NB 2 0 && [ "$b" -ge $NB ] || { cat "$tmp/t.csv"; fail "-t tt-b counted $b, it takes $NB"; }
ok "-t: tt-b alone $b (takes $NB)"

# --- --per-thread of a command: each thread's own count as it exits ---
rm -f "$tmp/tt.out"
"$STROBE" count --per-thread -x, -e page-faults,task-clock -o "$tmp/ct.csv" -- \
	"$WL/twothreads" $NA $NB >"$tmp/tt.out" &
sp=$!
i=0
until grep -q ready "$tmp/tt.out" 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 400 ] && fail "twothreads under strobe count did not start"
	sleep 0.05
done
set -- $(cat "$tmp/tt.out")
kill -USR1 "$2"
wait $sp || fail "strobe count --per-thread -- twothreads failed"
a=$(awk -F, -v t="tt-a-$3" '$1 == t && $4 == "page-faults" { print $2 }' "$tmp/ct.csv")
b=$(awk -F, -v t="tt-b-$4" '$1 == t && $4 == "page-faults" { print $2 }' "$tmp/ct.csv")
m=$(awk -F, -v t="twothreads-$2" '$1 == t && $4 == "page-faults" { print $2 }' "$tmp/ct.csv")
[ -n "$a" ] && [ -n "$b" ] && [ -n "$m" ] ||
	{ cat "$tmp/ct.csv"; fail "--per-thread -- CMD: no line for the main thread, tt-a or tt-b"; }
within "$a" $NA 2 0 && [ "$a" -ge $NA ] || { cat "$tmp/ct.csv"; fail "-- CMD: tt-a counted $a, it takes $NA"; }
within "$b" $NB 2 0 && [ "$b" -ge $NB ] || { cat "$tmp/ct.csv"; fail "-- CMD: tt-b counted $b, it takes $NB"; }
[ "$m" -lt $NA ] || { cat "$tmp/ct.csv"; fail "-- CMD: the main thread counted $m (it touches none of the pages)"; }
ok "--per-thread -- CMD: main $m, tt-a $a (takes $NA), tt-b $b (takes $NB)"

# --- -M: a catalogue metric in the metric column ---
"$STROBE" count -x, -M page-faults-per-sec -o "$tmp/m.csv" -- "$WL/pagetouch" 1000 ||
	fail "-M page-faults-per-sec failed"
mu=$(field "$tmp/m.csv" page-faults 7)
mv=$(field "$tmp/m.csv" page-faults 6)
[ "$mu" = "/s page-faults-per-sec" ] || { cat "$tmp/m.csv"; fail "-M: metric unit '$mu'"; }
awk -v v="$mv" 'BEGIN { exit !(v > 0) }' || fail "-M: metric value '$mv'"
ok "-M page-faults-per-sec: $mv $mu"

# --- system wide: -a, -A, --per-socket (root, or a permissive paranoid level) ---
para=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$(id -u)" = 0 ] || [ "$para" -le 0 ]; then
	ncpu=$(awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-"); c += (n == 2) ? r[2] - r[1] + 1 : 1 } } END { print c }' /sys/devices/system/cpu/online)
	"$STROBE" count -a -A -x, -e page-faults -o "$tmp/a.csv" -- "$WL/pagetouch" $N ||
		fail "-a -A failed"
	lines=$(grep -c ',page-faults,' "$tmp/a.csv")
	[ "$lines" = "$ncpu" ] || { cat "$tmp/a.csv"; fail "-A: $lines lines for $ncpu CPUs"; }
	sum=$(awk -F, '{ s += $2 } END { print s }' "$tmp/a.csv")
	[ "$sum" -ge $N ] || fail "-a -A: CPUs sum to $sum < the $N pagetouch takes"
	"$STROBE" count -a --per-socket -x, -e page-faults -o "$tmp/s.csv" -- sleep 0.1 ||
		fail "--per-socket failed"
	nsock=$(cat /sys/devices/system/cpu/cpu*/topology/physical_package_id | sort -u | wc -l)
	[ "$(grep -c ',page-faults,' "$tmp/s.csv")" = "$nsock" ] ||
		{ cat "$tmp/s.csv"; fail "--per-socket: not one line per socket ($nsock)"; }
	cpus=$(awk -F, '{ s += $2 } END { print s }' "$tmp/s.csv")
	[ "$cpus" = "$ncpu" ] || fail "--per-socket: the sockets' CPU counts sum to $cpus, not $ncpu"
	ok "-a -A: $lines CPUs summing to $sum; --per-socket: $nsock socket(s)"
else
	echo "SKIP-part: -a needs root or perf_event_paranoid <= 0 (it is $para)"
fi
# without the right: one line naming what it needs
if [ "$(id -u)" = 0 ] && [ "$para" -gt 0 ] && command -v setpriv >/dev/null 2>&1; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$STROBE" count -a -e page-faults \
		-- true 2>"$tmp/np.err"
	rc=$?
	[ $rc = 1 ] && [ "$(wc -l <"$tmp/np.err")" = 1 ] &&
		grep -q "kernel.perf_event_paranoid" "$tmp/np.err" && grep -q CAP_PERFMON "$tmp/np.err" ||
		{ cat "$tmp/np.err"; fail "-a without the right: rc $rc"; }
	ok "-a unprivileged: $(cat "$tmp/np.err")"
fi

# --- bad input: one line naming the problem, exit 2 ---
bad() {
	want=$1
	shift
	"$STROBE" count "$@" >"$tmp/bad.out" 2>"$tmp/bad.err"
	rc=$?
	[ $rc = 2 ] || { cat "$tmp/bad.err"; fail "count $*: exit $rc, want 2"; }
	[ "$(wc -l <"$tmp/bad.err")" = 1 ] || { cat "$tmp/bad.err"; fail "count $*: not one line"; }
	grep -q -- "$want" "$tmp/bad.err" || { cat "$tmp/bad.err"; fail "count $*: no '$want'"; }
}
bad "unknown event 'no-such-event'" -e no-such-event -- true
bad "unknown metric 'NoSuchMetric'" -M NoSuchMetric -- true
bad "no process 999999999" -p 999999999
bad "-I below 10 ms" -I 5 -- true
bad "-x and --json" -x, --json -- true
bad "nothing to count" -e page-faults
bad "--per-thread goes with" -a --per-thread -- true
bad "--per-thread with a command does not go with -I" --per-thread -I 100 -- true
if "$STROBE" list --metrics --format csv 2>/dev/null | grep -q '^IPC,.*,no,'; then
	bad "metric 'IPC': needs" -M IPC -- true
	ok "bad input: one line each, exit 2 (and IPC without a hardware PMU)"
else
	ok "bad input: one line each, exit 2 (IPC computable here: its refusal not tested)"
fi
exit 0
