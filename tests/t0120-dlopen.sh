#!/bin/sh
# t0120-dlopen: a library mapped only after the session started (dlopener
# sleeps 1 s, then dlopens libhot.so and spins 2 s in hot_in_lib) is still
# named: >= 80% of dlopener's samples are hot_in_lib in .../libhot.so, about
# 2 s worth of them, and none fall in the library before it was loaded.
. "$(dirname "$0")/lib.sh"
need_root

"$STROBE" record --sample-event cpu-clock -F 1000 --name dlopen \
	-- sh -c "echo \$\$ >\"$tmp/pid\"; exec \"$WL/dlopener\" \"$WL/libhot.so\" 1 2" 2>"$tmp/record.err" ||
	fail "record: $(cat "$tmp/record.err")"
grep -q "samples, 0 lost" "$tmp/record.err" || fail "record summary: $(cat "$tmp/record.err")"

"$STROBE" report --comm dlopener --format csv >"$tmp/r.csv" || fail "report csv"
python3 - "$tmp/r.csv" <<'PY' || fail "hot_in_lib in libhot.so"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tot = sum(int(r["samples"]) for r in rows)
hot = sum(int(r["samples"]) for r in rows
          if r["binary"].endswith("/libhot.so") and r["symbol"] == "hot_in_lib")
lib = sum(int(r["samples"]) for r in rows if r["binary"].endswith("/libhot.so"))
print(f"dlopener: {tot} samples, {hot} in hot_in_lib ({100.0 * hot / max(tot, 1):.2f}%), {lib} in libhot.so")
assert tot > 0, "no samples for comm dlopener"
assert hot >= 500, f"only {hot} samples in hot_in_lib, want up to 2000 (2 s at 1000 Hz)"
assert hot >= 0.8 * tot, f"hot_in_lib has {hot} of {tot} samples, not >= 80%"
assert lib == hot, f"{lib - hot} libhot.so samples not named hot_in_lib"
PY

# before the dlopen (the first second) the library has no samples at all
# (by pid: others may run a dlopener at the same time)
pid=$(cat "$tmp/pid")
"$STROBE" report --pid "$pid" --to 0.9s --by binary --format csv >"$tmp/early.csv" ||
	fail "report --to 0.9s"
if grep -q 'libhot\.so' "$tmp/early.csv"; then
	fail "samples in libhot.so before it was loaded: $(cat "$tmp/early.csv")"
fi
"$STROBE" report --pid "$pid" --from 1.2s --by binary --format csv >"$tmp/late.csv" ||
	fail "report --from 1.2s"
grep -q 'libhot\.so' "$tmp/late.csv" || fail "no libhot.so samples after the dlopen: $(cat "$tmp/late.csv")"
ok "late-loaded library named (hot_in_lib)"
