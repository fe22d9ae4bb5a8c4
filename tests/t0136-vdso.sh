#!/bin/sh
# t0136-vdso: samples in the vDSO are named from the kernel's vDSO image
# (strobed's own, copied into the cache by its build-id): vdsoloop calls
# clock_gettime in a tight loop, and most of its user-mode samples are in
# binary [vdso] with a symbol of the image, not [unknown].  perf names the
# same image; where perf is installed, its top [vdso] symbol must be one
# strobe names too.
. "$(dirname "$0")/lib.sh"
need_root
"$STROBE" record --sample-event cpu-clock -F 1000 --name vdso \
	-- sh -c '"$1/vdsoloop" 1.5 >/dev/null & echo $! >"$2/pid"; wait $!' sh "$WL" "$tmp" \
	>"$tmp/record.out" 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
pid=$(cat "$tmp/pid")
"$STROBE" report --pid "$pid" --by symbol --format csv >"$tmp/report.csv" 2>"$tmp/report.err" ||
	fail "report: $(cat "$tmp/report.err")"
python3 - "$tmp/report.csv" "$tmp/syms" <<'PY' || fail "vDSO not named: $(cat "$tmp/report.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
user = [r for r in rows if r["binary"] != "[kernel.kallsyms]"]
tot = sum(int(r["samples"]) for r in user)
vd = [r for r in user if r["binary"] == "[vdso]"]
named = sum(int(r["samples"]) for r in vd if r["symbol"] not in ("[unknown]", "[binary unavailable]"))
unk = sum(int(r["samples"]) for r in vd if r["symbol"] in ("[unknown]", "[binary unavailable]"))
print(f"vdsoloop: {tot} user-mode samples, {named} named in [vdso], {unk} not: "
      + ", ".join(f"{r['symbol']} {r['samples']}" for r in vd))
assert tot >= 500, f"only {tot} user samples for 1.5 s at 1000 Hz"
assert named >= 0.5 * tot, "less than half of them named in [vdso]"
assert unk <= 0.02 * tot, "[vdso] samples left [unknown]"
assert any("clock_gettime" in r["symbol"] or "vread" in r["symbol"] or "do_hres" in r["symbol"]
           for r in vd), "no clock_gettime in [vdso]"
open(sys.argv[2], "w").write("\n".join(r["symbol"] for r in vd) + "\n")
PY
# perf names the same image: its top [vdso] symbol is one strobe names
if command -v perf >/dev/null; then
	perf record -q "$(perf_bid)" -o "$tmp/perf.data" -e cpu-clock -F 1000 -- "$WL/vdsoloop" 0.5 \
		>/dev/null 2>"$tmp/perf.err" || fail "perf record: $(cat "$tmp/perf.err")"
	top=$(perf report -i "$tmp/perf.data" --stdio --sort dso,sym 2>/dev/null |
		awk '$2 == "[vdso]" { print $4; exit }')
	[ -n "$top" ] || fail "perf named nothing in [vdso]"
	grep -qxF "$top" "$tmp/syms" || fail "perf's top [vdso] symbol $top is not strobe's: $(cat "$tmp/syms")"
	echo "perf's top [vdso] symbol: $top"
fi
ok "[vdso] named from the kernel's image"
