#!/bin/sh
# t0130-pie-stripped: symbols of a position-independent executable resolve
# (split603010 is PIE, loaded at a random base: work60/30/10 are named, in
# that order, with >= 90% of its samples), and so do those of a binary
# stripped of .symtab and debug info, from .dynsym alone (stripped: >= 90%
# of its samples on stripped_hot).
. "$(dirname "$0")/lib.sh"
need_root
command -v readelf >/dev/null || skip "readelf not installed"

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
	-- sh -c '"$1/split603010" 1 & echo $! >"$2/pid1"; wait $! || exit 1
		"$1/stripped" 2 & echo $! >"$2/pid2"; wait $!' sh "$WL" "$tmp" 2>"$tmp/record.err" ||
	fail "record: $(cat "$tmp/record.err")"
grep -q "samples, 0 lost" "$tmp/record.err" || fail "record summary: $(cat "$tmp/record.err")"

# the binary by its build-id (a copy elsewhere would have the same one)
bid=$(readelf -n "$WL/split603010" | awk '/Build ID:/ { print $3 }')
[ -n "$bid" ] || fail "split603010 has no build-id"
"$STROBE" report --pid "$(cat "$tmp/pid1")" --format csv >"$tmp/pie.csv" || fail "report split603010"
python3 - "$tmp/pie.csv" "$bid" <<'PY' || fail "PIE symbols"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tot = sum(int(r["samples"]) for r in rows)
s = {r["symbol"]: int(r["samples"]) for r in rows if r["build_id"] == sys.argv[2]}
w = [s.get(f, 0) for f in ("work60", "work30", "work10")]
print(f"split603010: {tot} samples, work60/30/10 = {w}")
assert tot >= 250, f"only {tot} samples for 1 s at 1000 Hz"
assert w[0] > 0, "work60 not named"
assert sum(w) >= 0.9 * tot, f"only {sum(w)} of {tot} samples in work60/30/10"
assert w[0] > w[1] > w[2] > 0, f"work60 > work30 > work10 does not hold: {w}"
PY

"$STROBE" report --pid "$(cat "$tmp/pid2")" --format csv >"$tmp/stripped.csv" || fail "report stripped"
python3 - "$tmp/stripped.csv" <<'PY' || fail "stripped_hot from .dynsym"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tot = sum(int(r["samples"]) for r in rows)
hot = sum(int(r["samples"]) for r in rows
          if r["binary"].endswith("/stripped") and r["symbol"] == "stripped_hot")
print(f"stripped: {tot} samples, {hot} on stripped_hot ({100.0 * hot / max(tot, 1):.2f}%)")
assert tot >= 500, f"only {tot} samples for 2 s at 1000 Hz"
assert hot >= 0.9 * tot, f"stripped_hot has {hot} of {tot} samples, not >= 90%"
PY
ok "PIE and .dynsym-only symbols resolve"
