#!/bin/sh
# t0185-tracepoint: a tracepoint as a counting event. A loop that sleeps 300
# times switches out at least 300 times; sched:sched_switch counted by strobe
# for it is >= 300 and agrees with the context-switches software event.
. "$(dirname "$0")/lib.sh"
need_root

"$STROBE" record --sample-event cpu-clock -F 1000 -e sched:sched_switch,context-switches -- \
	sh -c 'i=0; while [ $i -lt 300 ]; do sleep 0.002; i=$((i+1)); done' 2>"$tmp/rec.err" ||
	fail "record: $(cat "$tmp/rec.err")"
"$STROBE" report --by binary --format json >"$tmp/r.json" || fail report
"$STROBE" report >"$tmp/r.txt"
python3 - "$tmp/r.txt" <<'PY' || fail "tracepoint counts"
import re, sys
txt = open(sys.argv[1]).read()
def total(ev):
    m = re.search(r"# %s: (\d+) attributed, (\d+) unattributed" % re.escape(ev), txt)
    return int(m.group(1)) + int(m.group(2))
sw, cs = total("sched:sched_switch"), total("context-switches")
print(f"sched:sched_switch {sw}, context-switches {cs}")
assert sw >= 300, sw
assert abs(sw - cs) <= 0.3 * cs
PY
ok "sched:sched_switch counted"
