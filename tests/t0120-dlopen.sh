#!/bin/sh
# t0120-dlopen: a library mapped only after the session started (dlopener
# spins 1 s in its own before_dlopen, then dlopens libhot.so and spins 2 s
# in hot_in_lib) is still named: of dlopener's samples (its pid), >= 80%
# are before_dlopen or hot_in_lib in .../libhot.so, >= 99% of the
# libhot.so samples are hot_in_lib; the spin (from its start, as dlopener
# prints it, to 0.1 s before the dlopen returned) has >= 80% of its samples
# in before_dlopen and none in libhot.so, the time from 0.2 s after the
# dlopen has libhot.so's hot_in_lib and no before_dlopen; and every
# before_dlopen sample is earlier than every libhot.so sample.  The windows
# are placed by dlopener's own clock readings (CLOCK_MONOTONIC, strobe's
# time_ns), not by the session's start: on a loaded machine the program may
# start a good part of a second after the session.
. "$(dirname "$0")/lib.sh"
need_root

"$STROBE" record --sample-event cpu-clock -F 1000 --name dlopen \
	-- sh -c "echo \$\$ >\"$tmp/pid\"; exec \"$WL/dlopener\" \"$WL/libhot.so\" 1 2 >\"$tmp/times\"" 2>"$tmp/record.err" ||
	fail "record: $(cat "$tmp/record.err")"
grep -q "samples, 0 lost" "$tmp/record.err" || fail "record summary: $(cat "$tmp/record.err")"

pid=$(cat "$tmp/pid")
# spin_start_ns=S dlopen_ns=D, and the session's start, all CLOCK_MONOTONIC
times=$(cat "$tmp/times")
case $times in
spin_start_ns=*' 'dlopen_ns=*) ;;
*) fail "dlopener printed '$times', not its spin start and dlopen times" ;;
esac
spin_ns=${times#spin_start_ns=}; spin_ns=${spin_ns%% *}
open_ns=${times#* dlopen_ns=}
s0=$(sqlq "$STROBE_DB" "SELECT start_ns FROM sessions WHERE name='dlopen' ORDER BY id DESC LIMIT 1")
[ -n "$s0" ] || fail "no session 'dlopen'"
early_from=$(( (spin_ns - s0) / 1000000 ))
early_to=$(( (open_ns - s0) / 1000000 - 100 ))
late_from=$(( (open_ns - s0) / 1000000 + 200 ))
[ "$early_from" -ge 0 ] && [ "$early_to" -gt "$early_from" ] ||
	fail "spin from ${early_from} ms to dlopen $((early_to + 100)) ms after the session start: not a spin"
echo "# spin from ${early_from} ms, dlopen at $((early_to + 100)) ms after the session start"

# by pid: others may run a dlopener at the same time
"$STROBE" report --pid "$pid" --limit 0 --format csv >"$tmp/r.csv" || fail "report csv"
"$STROBE" report --pid "$pid" --from ${early_from}ms --to ${early_to}ms --limit 0 --format csv >"$tmp/early.csv" ||
	fail "report --from ${early_from}ms --to ${early_to}ms"
"$STROBE" report --pid "$pid" --from ${late_from}ms --limit 0 --format csv >"$tmp/late.csv" || fail "report --from ${late_from}ms"
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
print(f"the spin: {tot} samples, {pre} in before_dlopen, {lib} in libhot.so")
assert lib == 0, f"{lib} samples in libhot.so before it was loaded"
assert pre >= 0.8 * tot and pre > 0, f"before_dlopen has {pre} of the spin's {tot} samples, not >= 80%"
tot, pre, hot, lib, _ = load(sys.argv[3])
print(f"from 0.2 s after the dlopen: {tot} samples, {pre} in before_dlopen, {hot} in hot_in_lib")
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
