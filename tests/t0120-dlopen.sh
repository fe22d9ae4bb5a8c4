#!/bin/sh
# t0120-dlopen: a library mapped only after the session started (dlopener
# spins 1 s in its own before_dlopen, then dlopens libhot.so and spins 2 s
# in hot_in_lib) is still named: of dlopener's samples (its pid), >= 80%
# are before_dlopen or hot_in_lib in .../libhot.so, >= 99% of the
# libhot.so samples are hot_in_lib; the first 0.9 s (busy: before_dlopen) have >= 80% of
# their samples in before_dlopen and none in libhot.so, the time from 1.2 s
# has libhot.so's hot_in_lib and no before_dlopen; and every before_dlopen
# sample is earlier than every libhot.so sample.
. "$(dirname "$0")/lib.sh"
need_root

"$STROBE" record --sample-event cpu-clock -F 1000 --name dlopen \
	-- sh -c "echo \$\$ >\"$tmp/pid\"; exec \"$WL/dlopener\" \"$WL/libhot.so\" 1 2" 2>"$tmp/record.err" ||
	fail "record: $(cat "$tmp/record.err")"
grep -q "samples, 0 lost" "$tmp/record.err" || fail "record summary: $(cat "$tmp/record.err")"

pid=$(cat "$tmp/pid")

# by pid: others may run a dlopener at the same time
"$STROBE" report --pid "$pid" --limit 0 --format csv >"$tmp/r.csv" || fail "report csv"
"$STROBE" report --pid "$pid" --to 0.9s --limit 0 --format csv >"$tmp/early.csv" || fail "report --to 0.9s"
"$STROBE" report --pid "$pid" --from 1.2s --limit 0 --format csv >"$tmp/late.csv" || fail "report --from 1.2s"
"$STROBE" export --pid "$pid" --format csv -o "$tmp/x.csv" || fail "export"
python3 - "$tmp/r.csv" "$tmp/early.csv" "$tmp/late.csv" "$tmp/x.csv" <<'PY' || fail "before_dlopen, then hot_in_lib in libhot.so"
import csv, sys
def load(f):
    rows = list(csv.DictReader(open(f)))
    tot = sum(int(r["samples"]) for r in rows)
    sym = lambda b, s: sum(int(r["samples"]) for r in rows if r["binary"].endswith(b) and r["symbol"] == s)
    lib = sum(int(r["samples"]) for r in rows if r["binary"].endswith("/libhot.so"))
    other = {r["symbol"]: r["samples"] for r in rows if r["binary"].endswith("/libhot.so") and r["symbol"] != "hot_in_lib"}
    return tot, sym("/dlopener", "before_dlopen"), sym("/libhot.so", "hot_in_lib"), lib, other
tot, pre, hot, lib, other = load(sys.argv[1])
print(f"dlopener: {tot} samples, {pre} in before_dlopen, {hot} in hot_in_lib, {lib} in libhot.so; others there: {other}")
assert pre > 0 and hot > 0, "no samples in before_dlopen or hot_in_lib"
assert pre + hot >= 0.8 * tot, f"before_dlopen + hot_in_lib have {pre + hot} of {tot} samples, not >= 80%"
# the rest of libhot.so (its PLT stub for clock_gettime, its constructors)
# runs a few instructions per ~30 us spin round: a sample there is rare, not 1%
assert lib - hot <= 0.01 * hot, f"{lib - hot} libhot.so samples not named hot_in_lib: {other}"
tot, pre, hot, lib, _ = load(sys.argv[2])
print(f"first 0.9 s: {tot} samples, {pre} in before_dlopen, {lib} in libhot.so")
assert lib == 0, f"{lib} samples in libhot.so before it was loaded"
assert pre >= 0.8 * tot and pre > 0, f"before_dlopen has {pre} of the first 0.9 s's {tot} samples, not >= 80%"
tot, pre, hot, lib, _ = load(sys.argv[3])
print(f"from 1.2 s: {tot} samples, {pre} in before_dlopen, {hot} in hot_in_lib")
assert hot >= 0.8 * tot and hot > 0, f"hot_in_lib has {hot} of the late {tot} samples, not >= 80%"
assert pre == 0, f"{pre} before_dlopen samples after the dlopen"
x = list(csv.DictReader(open(sys.argv[4])))
tpre = [int(r["time_ns"]) for r in x if r["symbol"] == "before_dlopen"]
tlib = [int(r["time_ns"]) for r in x if r["binary"].endswith("/libhot.so")]
assert tpre and tlib, "export lacks before_dlopen or libhot.so samples"
print(f"last before_dlopen sample {(min(tlib) - max(tpre)) / 1e6:.3f} ms before the first libhot.so sample")
assert max(tpre) < min(tlib), "a before_dlopen sample is later than a libhot.so sample"
PY
ok "late-loaded library named (before_dlopen, then hot_in_lib)"
