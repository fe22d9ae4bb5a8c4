#!/bin/sh
# t0190-hardware: hardware events where the machine has a PMU. The default
# sampling event is cycles; instructions and cycles counted in the group give
# an IPC column that agrees with perf stat on the same workload. Without a
# hardware PMU the default must be cpu-clock, and the rest is skipped.
. "$(dirname "$0")/lib.sh"
need_root

if ! perf stat -e cycles -x, true 2>&1 | grep -q '^[0-9]'; then
	"$STROBE" record -F 500 -- true 2>"$tmp/rec.err" || fail "record: $(cat "$tmp/rec.err")"
	"$STROBE" sessions --format csv | grep -q cpu-clock || fail "default sampler is not cpu-clock without a PMU"
	skip "no hardware PMU on this machine (perf stat -e cycles fails): hardware events untested here"
fi

"$STROBE" record -F 1000 -e instructions,cycles -- "$WL/split603010" 2 2>"$tmp/rec.err" ||
	fail "record: $(cat "$tmp/rec.err")"
"$STROBE" sessions --format csv >"$tmp/s.csv"
grep -q ',cycles,' "$tmp/s.csv" || fail "default sampler is not cycles with a PMU: $(cat "$tmp/s.csv")"
"$STROBE" report --comm split603010 --format csv >"$tmp/r.csv" || fail report
head -n 1 "$tmp/r.csv" | grep -q 'instructions,cycles,ipc' || fail "no ipc column: $(head -n 1 "$tmp/r.csv")"
perf stat -x, -e instructions,cycles "$WL/split603010" 2 2>"$tmp/perf.csv" >/dev/null
python3 - "$tmp/r.csv" "$tmp/perf.csv" <<'PY' || fail "IPC disagrees with perf stat"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["symbol"] == "work60"]
assert rows, "no work60 row"
ipc = float(rows[0]["ipc"])
ins = cyc = None
for line in open(sys.argv[2]):
    f = line.split(",")
    if len(f) > 2 and f[2].startswith("instructions"): ins = float(f[0])
    if len(f) > 2 and f[2].startswith("cycles"): cyc = float(f[0])
pipc = ins / cyc
print(f"work60 IPC strobe {ipc:.3f}, whole-program IPC perf stat {pipc:.3f}")
assert 0.05 < ipc < 8
assert abs(ipc - pipc) <= 0.25 * pipc
PY
ok "cycles sampling and IPC"
