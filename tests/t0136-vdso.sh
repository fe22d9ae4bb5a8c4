#!/bin/sh
# t0136-vdso: samples in the vDSO are named from the kernel's vDSO image
# (strobed's own, copied into the cache by its build-id): vdsoloop calls
# clock_gettime in a tight loop, so most of its user-mode samples are in
# binary [vdso].  Exact, whatever the clock source: the image this kernel
# maps (read from the test's own process) gives its symbols' ranges, and
# every [vdso] sample is named if and only if its offset lies in one of
# them, with that symbol's name (with kvm-clock the vDSO runs mostly in
# static pvclock code its symbol table does not cover: [unknown] there, as
# perf says 0x...).  perf names the same image: where perf is installed,
# its top named [vdso] symbol must be one strobe names too.
. "$(dirname "$0")/lib.sh"
need_root
"$STROBE" record --sample-event cpu-clock -F 1000 --name vdso \
	-- sh -c '"$1/vdsoloop" 1.5 >/dev/null & echo $! >"$2/pid"; wait $!' sh "$WL" "$tmp" \
	>"$tmp/record.out" 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
pid=$(cat "$tmp/pid")
"$STROBE" export --pid "$pid" --format csv -o "$tmp/samples.csv" 2>"$tmp/export.err" ||
	fail "export: $(cat "$tmp/export.err")"
# this kernel's vDSO image, and its symbols with their sizes
python3 - "$tmp/vdso.so" <<'PY' || fail "cannot read this process's [vdso]"
import sys
for line in open("/proc/self/maps"):
    if line.rstrip().endswith("[vdso]"):
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        with open("/proc/self/mem", "rb") as m:
            m.seek(lo)
            open(sys.argv[1], "wb").write(m.read(hi - lo))
        break
else:
    sys.exit("no [vdso] mapping")
PY
nm -D --defined-only -S "$tmp/vdso.so" >"$tmp/vdso.nm" 2>"$tmp/nm.err" ||
	fail "nm on the vDSO image: $(cat "$tmp/nm.err")"
python3 - "$tmp/samples.csv" "$tmp/vdso.nm" "$tmp/syms" <<'PY' || fail "vDSO samples misnamed"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ranges = []
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) == 4 and f[2] in "TtWw":
        ranges.append((int(f[0], 16), int(f[0], 16) + int(f[1], 16), f[3].split("@")[0]))
assert ranges, "no sized function symbols in the vDSO image"
user = [r for r in rows if r["mode"] == "user"]
vd = [r for r in user if r["binary"] == "[vdso]"]
bad, named, unk, seen = [], 0, 0, {}
for r in vd:
    off = int(r["offset"], 0)
    cover = {n for lo, hi, n in ranges if lo <= off < hi}
    sym = r["symbol"]
    if cover:
        named += 1
        seen[sym] = seen.get(sym, 0) + 1
        if sym not in cover:
            bad.append(f"offset {off:#x}: {sym}, the image says {sorted(cover)}")
    else:
        unk += 1
        if sym != "[unknown]":
            bad.append(f"offset {off:#x} lies in no symbol of the image, named {sym}")
print(f"vdsoloop: {len(user)} user-mode samples, {len(vd)} in [vdso]: {named} in the image's "
      f"symbols ({', '.join(f'{k} {v}' for k, v in seen.items())}), {unk} outside any")
assert len(user) >= 100, f"only {len(user)} user-mode samples: the workload hardly ran"
assert 2 * len(vd) >= len(user), f"only {len(vd)} of {len(user)} user-mode samples in [vdso]"
assert named, "no sample in a symbol of the vDSO image"
assert not bad, "; ".join(bad[:5])
open(sys.argv[3], "w").write("\n".join(seen) + "\n")
PY
# perf names the same image: its top named [vdso] symbol is one strobe names
if command -v perf >/dev/null; then
	perf record -q "$(perf_bid)" -o "$tmp/perf.data" -e cpu-clock -F 1000 -- "$WL/vdsoloop" 0.5 \
		>/dev/null 2>"$tmp/perf.err" || fail "perf record: $(cat "$tmp/perf.err")"
	top=$(perf report -i "$tmp/perf.data" --stdio --sort dso,sym 2>/dev/null |
		awk '$2 == "[vdso]" && $4 !~ /^0x/ { print $4; exit }')
	[ -n "$top" ] || fail "perf named nothing in [vdso]"
	grep -qxF "$top" "$tmp/syms" || fail "perf's top [vdso] symbol $top is not strobe's: $(cat "$tmp/syms")"
	echo "perf's top [vdso] symbol: $top"
fi
ok "[vdso] named from the kernel's image"
