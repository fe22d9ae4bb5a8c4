#!/bin/sh
# t0602-count-noncore: PMUs beside the core one, as far as this machine
# shows them (what it cannot, the cpumask of uncore and power/RAPL PMUs,
# their .scale and .unit, and the refusals, is tests/unit/test_eventpmu.c
# over fake sysfs trees).
#  - msr/tsc/ (a sysfs PMU without cpumask) counts on every CPU with -a:
#    -A prints one line per online CPU, each counting, no unit; it counts
#    for a command (not refused as system-wide only); and it joins
#    a strobed session as a member (record -e msr/tsc/): its counts stored.
#  - the way strobed's refusal of a cpumask event points to, 'strobe count
#    -a -I MS --save NAME -e EV' then 'strobe plot --session ID --event EV':
#    a count session of such an event (power/energy-pkg/, absent here, sent
#    as strobe count --save sends it, in Joules) is plotted per bucket,
#    each bucket the energy of its interval, fractions kept.
. "$(dirname "$0")/lib.sh"
need_root

ncpu=$(getconf _NPROCESSORS_ONLN)
msr=/sys/bus/event_source/devices/msr
if [ -r "$msr/type" ] && [ -r "$msr/events/tsc" ] && ! [ -e "$msr/cpumask" ]; then
	"$STROBE" count -a -A -x, -e msr/tsc/ -- sleep 0.1 2>"$tmp/a.csv" || fail "count -a -A msr/tsc/: $(cat "$tmp/a.csv")"
	python3 - "$tmp/a.csv" "$ncpu" <<'PY' || fail "count -a -A -e msr/tsc/: $(cat "$tmp/a.csv")"
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
assert len(rows) == int(sys.argv[2]), f"{len(rows)} lines for {sys.argv[2]} CPUs"
for cpu, val, unit, ev, *_ in rows:
    assert ev == "msr/tsc/" and unit == "" and int(val) > 0, (cpu, val, unit, ev)
assert sorted(r[0] for r in rows) == sorted(f"CPU{i}" for i in range(len(rows))), rows
PY
	"$STROBE" count -x, -e msr/tsc/ -- sleep 0.1 2>"$tmp/c.csv" || fail "count -e msr/tsc/ -- sleep: $(cat "$tmp/c.csv")"
	grep -Eq '^[1-9][0-9]*,,msr/tsc/,' "$tmp/c.csv" || fail "count -e msr/tsc/ of a command: $(cat "$tmp/c.csv")"
	ok "count -a -A -e msr/tsc/: one counting line per CPU ($ncpu); a command's count too"
	start_daemon
	"$STROBE" record -e msr/tsc/ -- "$WL/pagetouch" 20000 >/dev/null 2>"$tmp/rec.err" ||
		fail "record -e msr/tsc/: $(cat "$tmp/rec.err")"
	sid=$(sqlq "$STROBE_DB" "SELECT max(id) FROM sessions")
	"$STROBE" report --session "$sid" --by binary --format csv >"$tmp/r.csv" 2>"$tmp/r.err" ||
		fail "report of session $sid: $(cat "$tmp/r.err")"
	python3 - "$tmp/r.csv" <<'PY' || fail "report of session $sid: $(head -3 "$tmp/r.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and "msr/tsc/" in rows[0], "no msr/tsc/ column"
assert sum(float(r["msr/tsc/"]) for r in rows) > 0, "msr/tsc/ counted nothing"
PY
	ok "msr/tsc/ joins a session as a member"
	stop_daemon || fail "strobed exited badly"
else
	echo "no msr PMU with a tsc event and no cpumask here: its checks skipped"
fi

start_daemon
req() { strobed_req "$1"; }
# RAPL's type and config on a machine that has it; the name as counted
out=$(req "count-begin name=energy start_ns=1000000000 wall_offset_ns=0 ev0=23:2:0:0:power/energy-pkg/")
id=$(echo "$out" | sed -n 's/.*session=\([0-9]*\).*/\1/p')
[ -n "$id" ] || fail "count-begin: $out"
# three -I 100 intervals: 1.25, 2.5 and 0.75 Joules
out=$(req "count-data session=$id values=100000000,0,,1.25,100;200000000,0,,2.5,100;300000000,0,,0.75,100")
case $out in error*) fail "count-data: $out" ;; esac
out=$(req "count-end session=$id end_ns=1300000000")
case $out in error*) fail "count-end: $out" ;; esac
"$STROBE" plot --session "$id" --event power/energy-pkg/ --bucket 100 -o "$tmp/p.csv" 2>"$tmp/p.err" ||
	fail "plot of count session $id: $(cat "$tmp/p.err")"
python3 - "$tmp/p.csv" <<'PY' || fail "plot of the energy: $(cat "$tmp/p.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
vals = [float(r["power/energy-pkg/"]) for r in rows]
assert [round(v, 6) for v in vals] == [1.25, 2.5, 0.75], vals
PY
ok "a count session of power/energy-pkg/ plots its Joules per bucket (1.25, 2.5, 0.75)"
exit 0
