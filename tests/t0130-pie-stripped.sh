#!/bin/sh
# t0130-pie-stripped: symbols of a position-independent executable resolve
# (split603010 is PIE, loaded at a random base: work60/30/10 are named, in
# that order), and so do those of a binary stripped of .symtab and debug
# info, from .dynsym alone (stripped_hot).  perf record -a records the same
# run: the share of each process's user-mode samples that strobe names
# work60/30/10, and stripped_hot, is perf's within 4 standard deviations of
# the difference of two proportions plus 1 point (kernel samples left out:
# two per-CPU timers interfere there, t0100 says how).
. "$(dirname "$0")/lib.sh"
need_root
command -v readelf >/dev/null || skip "readelf not installed"
command -v perf >/dev/null || skip "perf (linux-perf) is not installed: nothing to compare with"

# the premises: PIE, and no .symtab but a .dynsym
readelf -h "$WL/split603010" | grep -q 'Type:[[:space:]]*DYN' ||
	fail "split603010 is not PIE: $(readelf -h "$WL/split603010" | grep Type:)"
readelf -h "$WL/stripped" >/dev/null || fail "readelf -h stripped"
readelf -S "$WL/stripped" >"$tmp/sections" || fail "readelf -S stripped"
grep -q '\.symtab' "$tmp/sections" && fail "stripped still has a .symtab"
grep -q '\.dynsym' "$tmp/sections" || fail "stripped has no .dynsym"

# each workload's pid, so that reports select it and no other engineer's
# split603010 or stripped running meanwhile (sessions are system-wide)
"$STROBE" record --sample-event cpu-clock -F 1000 --name pie \
	-- perf record -q "$(perf_bid)" -a -e cpu-clock -F 1000 -o "$tmp/perf.data" -- sh -c '"$1/split603010" 1 & echo $! >"$2/pid1"; wait $! || exit 1
		"$1/stripped" 2 & echo $! >"$2/pid2"; wait $!' sh "$WL" "$tmp" >"$tmp/record.out" 2>"$tmp/record.err" ||
	fail "record: $(cat "$tmp/record.err")"
grep -q "samples, 0 lost" "$tmp/record.err" || fail "record summary: $(cat "$tmp/record.err")"
for i in 1 2; do
	perf script -i "$tmp/perf.data" --pid "$(cat "$tmp/pid$i")" -F pid,ip,sym \
		>"$tmp/perf$i.txt" 2>"$tmp/script.err" || fail "perf script: $(cat "$tmp/script.err")"
done
# share N A PERF.TXT SYMS...: exit 1 unless strobe's A of N user-mode samples
# in SYMS is perf's share of the process's within 4 sd + 1 point
cat >"$tmp/share.py" <<'PY'
import math, sys
n, a, perff, syms = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:]
names = [(l.split() + ["?", "?"])[2] for l in open(perff)
         if int((l.split() + ["0", "0"])[1], 16) < 1 << 47]	# user mode
m, b = len(names), sum(x in syms for x in names)
p = (a + b) / (n + m)
bound = 4 * math.sqrt(p * (1 - p) * (1 / n + 1 / m)) + 0.01
print(f"{'/'.join(syms)}: strobe {a}/{n} = {100 * a / n:.2f}%, perf {b}/{m} = "
      f"{100 * b / m:.2f}%, bound {100 * bound:.2f} points")
sys.exit(0 if m > 0 and abs(a / n - b / m) <= bound else 1)
PY

# the binary by its build-id (a copy elsewhere would have the same one)
bid=$(readelf -n "$WL/split603010" | awk '/Build ID:/ { print $3 }')
[ -n "$bid" ] || fail "split603010 has no build-id"
"$STROBE" report --pid "$(cat "$tmp/pid1")" --format csv >"$tmp/pie.csv" || fail "report split603010"
python3 - "$tmp/pie.csv" "$bid" "$tmp/n1" <<'PY' || fail "PIE symbols"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tot = sum(int(r["samples"]) for r in rows)
s = {r["symbol"]: int(r["samples"]) for r in rows if r["build_id"] == sys.argv[2]}
w = [s.get(f, 0) for f in ("work60", "work30", "work10")]
print(f"split603010: {tot} samples, work60/30/10 = {w}")
assert tot >= 250, f"only {tot} samples for 1 s at 1000 Hz"
assert w[0] > 0, "work60 not named"
assert w[0] > w[1] > w[2] > 0, f"work60 > work30 > work10 does not hold: {w}"
user = sum(int(r["samples"]) for r in rows if r["binary"] != "[kernel.kallsyms]")
print(user, sum(w), file=open(sys.argv[3], "w"))
PY
python3 "$tmp/share.py" $(cat "$tmp/n1") "$tmp/perf1.txt" work60 work30 work10 ||
	fail "strobe and perf disagree on work60/30/10's share of split603010"

"$STROBE" report --pid "$(cat "$tmp/pid2")" --format csv >"$tmp/stripped.csv" || fail "report stripped"
python3 - "$tmp/stripped.csv" "$tmp/n2" <<'PY' || fail "stripped_hot from .dynsym"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tot = sum(int(r["samples"]) for r in rows)
hot = sum(int(r["samples"]) for r in rows
          if r["binary"].endswith("/stripped") and r["symbol"] == "stripped_hot")
print(f"stripped: {tot} samples, {hot} on stripped_hot ({100.0 * hot / max(tot, 1):.2f}%)")
assert tot >= 500, f"only {tot} samples for 2 s at 1000 Hz"
assert hot > 0, "stripped_hot not named"
user = sum(int(r["samples"]) for r in rows if r["binary"] != "[kernel.kallsyms]")
print(user, hot, file=open(sys.argv[2], "w"))
PY
python3 "$tmp/share.py" $(cat "$tmp/n2") "$tmp/perf2.txt" stripped_hot ||
	fail "strobe and perf disagree on stripped_hot's share of stripped"
ok "PIE and .dynsym-only symbols resolve"
