#!/bin/sh
# t0612-metrics-hardware: catalogue metrics over hardware events, where the
# machine has a PMU (perf stat counts cycles).  'strobe list --metrics'
# says IPC, CPI and branch-miss-rate are computable; a session of
# split603010 counting instructions, cycles, branches and branch-misses:
# report -M IPC,CPI,branch-miss-rate gives, row by row, instructions/cycles,
# cycles/instructions and 100*branch-misses/branches of the row's own
# columns (empty where the denominator is 0); plot --metric IPC is, bucket
# by bucket, the instructions plot over the cycles plot.  Without a PMU the
# whole test is skipped, saying so (t0610 checks the no-PMU messages).
. "$(dirname "$0")/lib.sh"
need_root
command -v perf >/dev/null || skip "perf (linux-perf) is not installed: cannot tell whether this machine has a hardware PMU"
perf stat -x, -e cycles true 2>&1 | grep -q '<not supported>' &&
	skip "no hardware PMU (perf stat: cycles <not supported>): IPC, CPI and branch-miss-rate cannot be counted here"

"$STROBE" list --metrics --format csv >"$tmp/list.csv" || fail "list --metrics"
for m in IPC CPI branch-miss-rate; do
	[ "$(csv_get "$tmp/list.csv" name $m computable)" = yes ] ||
		fail "list --metrics: $m not computable: $(csv_get "$tmp/list.csv" name $m why_not)"
done
ok "list --metrics: IPC, CPI and branch-miss-rate computable"

"$STROBE" record --sample-event cpu-clock -F 500 -e instructions,cycles,branches,branch-misses \
	--name hw -- "$WL/split603010" 1 >"$tmp/record.out" 2>"$tmp/record.err" ||
	fail "record: $(cat "$tmp/record.err")"
"$STROBE" report --format csv --limit 0 -M IPC,CPI,branch-miss-rate >"$tmp/r.csv" 2>"$tmp/r.err" ||
	fail "report -M: $(cat "$tmp/r.err")"
python3 - "$tmp/r.csv" <<'PY' || fail "report -M IPC,CPI,branch-miss-rate"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and list(rows[0].keys())[-3:] == ["IPC", "CPI", "branch-miss-rate"], rows[:1]
def check(col, num, den, scale):
    n = 0
    for r in rows:
        a, b = int(r[num]), int(r[den])
        if b == 0:
            assert r[col] == "", (col, r)
            continue
        want = scale * a / b
        assert abs(float(r[col]) - want) <= 1e-9 * max(abs(want), 1), (col, r, want)
        n += 1
    assert n, f"no row with {den}"
    return n
n = check("IPC", "instructions", "cycles", 1)
check("CPI", "cycles", "instructions", 1)
check("branch-miss-rate", "branch-misses", "branches", 100)
print(f"{n} rows: IPC, CPI and branch-miss-rate of their own counts")
PY
"$STROBE" plot --metric IPC --bucket 50 --data "$tmp/m.csv" || fail "plot --metric IPC"
"$STROBE" plot --event instructions,cycles --bucket 50 --data "$tmp/e.csv" || fail "plot --event"
python3 - "$tmp/m.csv" "$tmp/e.csv" <<'PY' || fail "plot --metric IPC values"
import csv, sys
m = list(csv.DictReader(open(sys.argv[1])))
e = list(csv.DictReader(open(sys.argv[2])))
assert len(m) == len(e) and list(m[0].keys())[-1] == "IPC"
n = 0
for a, b in zip(m, e):
    c = float(b["cycles"])
    if c == 0:
        assert a["IPC"] == "", (a, b)
        continue
    want = float(b["instructions"]) / c
    assert abs(float(a["IPC"]) - want) <= 1e-8 * max(want, 1), (a, b)
    n += 1
assert n > 3, "too few buckets with cycles"
PY
ok "report -M and plot --metric over hardware events"
