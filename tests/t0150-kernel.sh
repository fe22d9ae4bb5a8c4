#!/bin/sh
# t0150-kernel: kernel samples are recognised and named from the session's
# kallsyms snapshot.  kernwork reads /dev/zero in a loop: >= 90% of its
# samples are kernel samples, all in [kernel.kallsyms], >= 95% of those carry
# a real symbol name, and the top kernel symbol is one of the /dev/zero read
# path functions, among the top 3 kernel symbols perf report gives for the
# same workload.
. "$(dirname "$0")/lib.sh"
need_root

"$STROBE" record --sample-event cpu-clock -F 1000 --name kern \
	-- "$WL/kernwork" 2 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
grep -q "samples, 0 lost" "$tmp/record.err" || fail "record summary: $(cat "$tmp/record.err")"

"$STROBE" report --comm kernwork --format csv >"$tmp/all.csv" || fail "report"
"$STROBE" report --kernel --comm kernwork --format csv >"$tmp/k.csv" 2>"$tmp/k.err" ||
	fail "report --kernel"
grep -q "not available" "$tmp/k.err" && fail "kernel not symbolised: $(cat "$tmp/k.err")"
python3 - "$tmp/all.csv" "$tmp/k.csv" >"$tmp/top" <<'PY' || fail "kernel samples"
import csv, re, sys
allr = list(csv.DictReader(open(sys.argv[1])))
kr = list(csv.DictReader(open(sys.argv[2])))
tot = sum(int(r["samples"]) for r in allr)
ktot = sum(int(r["samples"]) for r in kr)
bad_bin = [r["binary"] for r in kr if r["binary"] != "[kernel.kallsyms]"]
def real(s):
    return bool(s) and not s.startswith("[") and not re.fullmatch(r"(0x)?[0-9a-fA-F]+", s)
named = sum(int(r["samples"]) for r in kr if real(r["symbol"]))
print(f"kernwork: {tot} samples, {ktot} kernel ({100.0 * ktot / max(tot, 1):.2f}%), "
      f"{named} with a symbol name; top {kr[0]['symbol'] if kr else None}", file=sys.stderr)
assert tot >= 500, f"only {tot} samples for 2 s at 1000 Hz"
assert ktot >= 0.9 * tot, f"only {ktot} of {tot} samples are kernel samples"
assert not bad_bin, f"--kernel rows in binaries {set(bad_bin)}"
assert named >= 0.95 * ktot, f"only {named} of {ktot} kernel samples have a symbol name"
top = kr[0]["symbol"]
assert re.search(r"zero|clear_user|stos", top), f"top kernel symbol {top} is not on the read(/dev/zero) path"
print(top)
PY
top=$(cat "$tmp/top")

# --kernel and --user split the samples between them
"$STROBE" report --user --comm kernwork --format csv >"$tmp/u.csv" || fail "report --user"
python3 - "$tmp/all.csv" "$tmp/k.csv" "$tmp/u.csv" <<'PY' || fail "--kernel + --user != all"
import csv, sys
t = [sum(int(r["samples"]) for r in csv.DictReader(open(f))) for f in sys.argv[1:4]]
assert t[1] + t[2] == t[0], f"kernel {t[1]} + user {t[2]} != all {t[0]}"
assert not any(r["binary"] == "[kernel.kallsyms]" for r in csv.DictReader(open(sys.argv[3])))
PY

if ! command -v perf >/dev/null; then
	ok "kernel samples named: top $top (perf not installed: no comparison)"
	exit 0
fi
# --buildid-mmap: while any other session with build-ids in its mmap events
# runs (another strobed), the kernel also flags the plain mmap events of perf
# as carrying a build-id, and perf 6.1 aborts reading them.
bidmmap=
perf record -h 2>&1 | grep -q -- --buildid-mmap && bidmmap=--buildid-mmap
perf record $bidmmap -q -e cpu-clock -F 1000 -o "$tmp/perf.data" -- "$WL/kernwork" 2 2>"$tmp/perf.err" ||
	fail "perf record failed: $(cat "$tmp/perf.err")"
perf report -q -i "$tmp/perf.data" --stdio --sort sym 2>"$tmp/perf.err" >"$tmp/perf.txt" ||
	fail "perf report failed: $(cat "$tmp/perf.err")"
python3 - "$tmp/perf.txt" "$top" <<'PY' || fail "perf disagrees on the top kernel symbol"
import re, sys
ks = []
for line in open(sys.argv[1]):
    m = re.match(r"\s*([\d.]+)%\s+\[k\]\s+(\S+)", line)
    if m: ks.append(m.group(2))
print(f"perf top kernel symbols: {ks[:3]}; strobe top: {sys.argv[2]}")
assert sys.argv[2] in ks[:3], f"strobe's top {sys.argv[2]} not in perf's top 3 {ks[:3]}"
PY
ok "kernel samples named: top $top"
