#!/bin/sh
# t0100-report: a system-wide session over the 60/30/10 workload, reported by
# symbol with the shares within 3 points of the known split, in text, CSV and
# JSON.  perf record -a records the same run: the three functions' share of
# the process's user-mode samples and each one's share of the three agree
# with its within 4 standard deviations of the difference of two
# proportions plus 1 point.  Kernel samples are left out of the shares: two
# per-CPU timers of one period interfere there (the one that fires second
# can find the CPU leaving the other's interrupt, at the irq-enable of its
# exit path, and which one it is stays fixed by their phase for a whole
# run: 8 points of the process moved so in one loaded run).
. "$(dirname "$0")/lib.sh"
need_root

# The session is system-wide: the workload's own pid selects its samples.
# perf record -a records the same run with the same per-CPU 1 ms timer.
command -v perf >/dev/null || skip "perf (linux-perf) is not installed: nothing to compare with"
"$STROBE" record --sample-event cpu-clock -F 1000 -e page-faults,context-switches --name split \
	-- perf record -q "$(perf_bid)" -a -e cpu-clock -F 1000 -o "$tmp/perf.data" \
	-- sh -c 'echo $$ >"$1"; exec "$2" 3' sh "$tmp/pid" "$WL/split603010" \
	>"$tmp/record.out" 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
pid=$(cat "$tmp/pid")
grep -q "samples, 0 lost" "$tmp/record.err" || fail "record summary: $(cat "$tmp/record.err")"
perf script -i "$tmp/perf.data" --pid "$pid" -F pid,ip,sym >"$tmp/perf.txt" 2>"$tmp/script.err" ||
	fail "perf script: $(cat "$tmp/script.err")"

"$STROBE" report --pid "$pid" --format csv >"$tmp/r.csv" || fail "report csv"
head -n 1 "$tmp/r.csv" | grep -q '^binary,build_id,symbol,samples,percent,page-faults,context-switches' ||
	fail "CSV header: $(head -n 1 "$tmp/r.csv")"

python3 - "$tmp/r.csv" "$tmp/perf.txt" <<'PY' || fail "60/30/10 split"
import collections, csv, math, sys
fs = ("work60", "work30", "work10")
rows = list(csv.DictReader(open(sys.argv[1])))
s = {r["symbol"]: int(r["samples"]) for r in rows if r["binary"].endswith("/split603010")}
tot = sum(s.get(f, 0) for f in fs)
allw = sum(int(r["samples"]) for r in rows if r["binary"] != "[kernel.kallsyms]")
# perf script -F pid,ip,sym: "PID IP SYM", this pid only; user mode only
perf = collections.Counter((l.split() + ["?", "?"])[2] for l in open(sys.argv[2])
                           if int((l.split() + ["0", "0"])[1], 16) < 1 << 47)
ptot, pall = sum(perf[f] for f in fs), sum(perf.values())
assert tot > 1000 and ptot > 1000, f"too few samples in the three functions: strobe {tot}, perf {ptot}"
def bound(a, n, b, m):
    """4 sd of the difference of two proportions a/n and b/m, plus 1 point"""
    p = (a + b) / (n + m)
    return 4 * math.sqrt(p * (1 - p) * (1 / n + 1 / m)) + 0.01
# the three functions' share of the process's user-mode samples (the
# rest: startup in ld.so and libc) is perf's in the same run
ok = abs(tot / allw - ptot / pall) <= bound(tot, allw, ptot, pall)
print(f"work60/30/10: strobe {tot}/{allw}, perf {ptot}/{pall} of the process's user-mode samples")
assert ok, f"strobe has {100 * tot / allw:.2f}% of the process in work60/30/10, perf {100 * ptot / pall:.2f}%"
for f, want in (("work60", 60), ("work30", 30), ("work10", 10)):
    got, pgot = s.get(f, 0) / tot, perf[f] / ptot
    print(f"{f}: strobe {100 * got:.2f}%, perf {100 * pgot:.2f}% (want {want} ± 3)")
    assert abs(100 * got - want) <= 3, f"{f} is {100 * got:.2f}%, not {want}±3"
    assert abs(got - pgot) <= bound(s.get(f, 0), tot, perf[f], ptot), \
        f"{f}: strobe {100 * got:.2f}%, perf {100 * pgot:.2f}%"
PY

# text and JSON carry the same numbers
"$STROBE" report --pid "$pid" --limit 3 >"$tmp/r.txt" || fail "report text"
grep -q "work60" "$tmp/r.txt" || fail "text report lacks work60"
"$STROBE" report --pid "$pid" --format json >"$tmp/r.json" || fail "report json"
python3 - "$tmp/r.json" "$tmp/r.csv" <<'PY' || fail "JSON and CSV disagree"
import csv, json, sys
j = json.load(open(sys.argv[1]))
c = list(csv.DictReader(open(sys.argv[2])))
assert len(j["rows"]) == len(c)
for a, b in zip(j["rows"], c):
    assert a["symbol"] == b["symbol"] and a["samples"] == int(b["samples"])
PY

ok "60/30/10 within 3 points"
