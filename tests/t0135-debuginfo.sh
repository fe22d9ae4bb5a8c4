#!/bin/sh
# t0135-debuginfo: a binary stripped of .symtab and DWARF (and whose hot
# functions are not in .dynsym) is named from its separate debug file, as
# gdb and perf find it: ROOT/.build-id/xx/rest.debug (STROBE_DEBUG_DIRS),
# then .gnu_debuglink in the binary's .debug/ directory with its CRC-32
# checked.  The report notes which file; a debug file with the wrong CRC or
# the wrong build-id is refused (work60 goes back to [unknown], with a
# note).  One recording, named at report time under each layout.  And
# libc's internal functions are named when libc6-dbg is installed.
. "$(dirname "$0")/lib.sh"
need_root
for t in gcc objcopy strip readelf; do
	command -v $t >/dev/null || skip "$t not installed"
done

mkdir -p "$tmp/bin" "$tmp/dbg" "$tmp/empty"
gcc -O1 -g -o "$tmp/full" "$top/tests/workloads/split603010.c" -I"$top/tests/workloads" -lm ||
	fail "gcc split603010"
# a build-id of its own: no other run's binary shares this one's key
bid=$(unique_copy "$tmp/full" "$tmp/unique") || fail "unique_copy"
cp "$tmp/unique" "$tmp/split.debug" && objcopy --only-keep-debug "$tmp/split.debug" ||
	fail "objcopy --only-keep-debug"
cp "$tmp/unique" "$tmp/bin/split" && strip --strip-all "$tmp/bin/split" || fail strip
(cd "$tmp" && objcopy --add-gnu-debuglink=split.debug bin/split) || fail "--add-gnu-debuglink"
readelf -S "$tmp/bin/split" >"$tmp/sections" || fail "readelf -S"
grep -q '\.symtab' "$tmp/sections" && fail "the stripped binary still has a .symtab"
grep -q '\.gnu_debuglink' "$tmp/sections" || fail "no .gnu_debuglink"
readelf --dyn-syms "$tmp/bin/split" | grep -q work60 && fail "work60 is in .dynsym: proves nothing"

"$STROBE" record --sample-event cpu-clock -F 1000 --name dbg -- sh -c \
	'"$1" 1 & echo $! >"$2/pid"; wait $!' sh "$tmp/bin/split" "$tmp" \
	>"$tmp/record.out" 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
pid=$(cat "$tmp/pid")

# report LABEL: the text and CSV reports of the workload's process
report() {
	"$STROBE" report --pid "$pid" --format csv >"$tmp/$1.csv" 2>"$tmp/$1.err" ||
		fail "report $1: $(cat "$tmp/$1.err")"
	"$STROBE" report --pid "$pid" >"$tmp/$1.txt" 2>>"$tmp/$1.err" ||
		fail "report $1: $(cat "$tmp/$1.err")"
}
# named LABEL: work60 > work30 > work10 > 0 in LABEL's CSV
named() {
	python3 - "$tmp/$1.csv" "$bid" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
s = {r["symbol"]: int(r["samples"]) for r in rows if r["build_id"] == sys.argv[2]}
w = [s.get(f, 0) for f in ("work60", "work30", "work10")]
print(f"work60/30/10 = {w}, [unknown] = {s.get('[unknown]', 0)}")
sys.exit(0 if w[0] > w[1] > w[2] > 0 else 1)
PY
}
unnamed() {
	! grep -q ',work60,' "$tmp/$1.csv" && grep -q '\[unknown\]' "$tmp/$1.csv"
}

# 1. by build-id
d=$tmp/dbg/.build-id/$(echo "$bid" | cut -c1-2)
mkdir -p "$d" && cp "$tmp/split.debug" "$d/$(echo "$bid" | cut -c3-).debug"
STROBE_DEBUG_DIRS=$tmp/dbg report buildid
named buildid || fail "not named from the .build-id debug file: $(cat "$tmp/buildid.csv")"
grep -q "note: $tmp/bin/split: symbols from $d/$(echo "$bid" | cut -c3-).debug" "$tmp/buildid.txt" ||
	fail "no note of the debug file: $(cat "$tmp/buildid.txt")"
ok "named from ROOT/.build-id/xx/rest.debug, and noted"

# 2. by .gnu_debuglink in the binary's .debug/
mkdir -p "$tmp/bin/.debug" && cp "$tmp/split.debug" "$tmp/bin/.debug/split.debug"
STROBE_DEBUG_DIRS=$tmp/empty report link
named link || fail "not named from .debug/split.debug: $(cat "$tmp/link.csv")"
grep -q "symbols from $tmp/bin/.debug/split.debug" "$tmp/link.txt" ||
	fail "no note of the debuglink file: $(cat "$tmp/link.txt")"
ok "named from .gnu_debuglink in .debug/, and noted"

# 3. the wrong CRC: the same file with one more byte
printf x >>"$tmp/bin/.debug/split.debug"
STROBE_DEBUG_DIRS=$tmp/empty report crc
unnamed crc || fail "a debug file with the wrong CRC was used: $(cat "$tmp/crc.csv")"
grep -q "$tmp/bin/.debug/split.debug refused: its CRC-32" "$tmp/crc.txt" ||
	fail "no note of the refused CRC: $(cat "$tmp/crc.txt")"
ok "a debuglink file with the wrong CRC is refused, with a note"

# 4. the wrong build-id at the binary's build-id path
rm -rf "$tmp/bin/.debug"
unique_copy "$tmp/split.debug" "$d/$(echo "$bid" | cut -c3-).debug" >/dev/null || fail unique_copy
STROBE_DEBUG_DIRS=$tmp/dbg report wrongid
unnamed wrongid || fail "a debug file with another build-id was used: $(cat "$tmp/wrongid.csv")"
grep -q "refused: its build-id is not the binary's" "$tmp/wrongid.txt" ||
	fail "no note of the refused build-id: $(cat "$tmp/wrongid.txt")"
ok "a .build-id file with another build-id is refused, with a note"

# 5. MiniDebugInfo, as Fedora builds it: the .symtab of the debug file
# (no DWARF), xz-compressed into the binary's .gnu_debugdata; and one whose
# .gnu_debugdata is not xz (refused, with a note)
command -v xz >/dev/null || fail "xz not installed (xz-utils)"
bid2=$(unique_copy "$tmp/full" "$tmp/full2") || fail unique_copy
cp "$tmp/full2" "$tmp/mini.debug" && objcopy --only-keep-debug "$tmp/mini.debug" &&
	strip --strip-debug "$tmp/mini.debug" || fail "the MiniDebugInfo ELF"
readelf -S "$tmp/mini.debug" | grep -q '\.debug_info' && fail "mini.debug still has DWARF"
xz -k "$tmp/mini.debug" || fail xz
cp "$tmp/full2" "$tmp/bin/mini" && strip --strip-all "$tmp/bin/mini" &&
	objcopy --add-section .gnu_debugdata="$tmp/mini.debug.xz" "$tmp/bin/mini" || fail "add .gnu_debugdata"
unique_copy "$tmp/full" "$tmp/bin/badmini" >/dev/null && strip --strip-all "$tmp/bin/badmini" &&
	head -c 4096 "$tmp/full" >"$tmp/notxz" &&
	objcopy --add-section .gnu_debugdata="$tmp/notxz" "$tmp/bin/badmini" || fail "bad .gnu_debugdata"
"$STROBE" record --sample-event cpu-clock -F 1000 --name mini -- sh -c \
	'"$1/mini" 1 & echo $! >"$2/pid"; wait $!; "$1/badmini" 1 & echo $! >"$2/pid2"; wait $!' \
	sh "$tmp/bin" "$tmp" >"$tmp/record4.out" 2>"$tmp/record4.err" ||
	fail "record: $(cat "$tmp/record4.err")"
pid=$(cat "$tmp/pid")
bid_saved=$bid
bid=$bid2
STROBE_DEBUG_DIRS=$tmp/empty report mini
named mini || fail "not named from .gnu_debugdata: $(cat "$tmp/mini.csv")"
grep -q "note: $tmp/bin/mini: symbols from .gnu_debugdata (MiniDebugInfo)" "$tmp/mini.txt" ||
	fail "no MiniDebugInfo note: $(cat "$tmp/mini.txt")"
pid=$(cat "$tmp/pid2")
STROBE_DEBUG_DIRS=$tmp/empty report badmini
unnamed badmini || fail "work60 named without a usable .gnu_debugdata: $(cat "$tmp/badmini.csv")"
grep -q "$tmp/bin/badmini: debug file .gnu_debugdata not used: MiniDebugInfo: not a valid xz" \
	"$tmp/badmini.txt" || fail "no note for the bad .gnu_debugdata: $(cat "$tmp/badmini.txt")"
bid=$bid_saved
ok "MiniDebugInfo (.gnu_debugdata) read; one that is not xz refused with a note"

# 6. C++ names demangled by default, raw with --no-demangle
if command -v g++ >/dev/null; then
	cat >"$tmp/hot.cc" <<'CC'
#include <chrono>
namespace ns { __attribute__((noinline)) unsigned long spin(double s)
{
	auto t = std::chrono::steady_clock::now();
	unsigned long x = 0;
	while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count() < s)
		for (int i = 0; i < 1000; i++)
			x = x * 31 + i;
	return x;
} }
int main() { return ns::spin(1) == 42; }
CC
	g++ -O1 -o "$tmp/hotcc" "$tmp/hot.cc" || fail "g++"
	"$STROBE" record --sample-event cpu-clock -F 1000 --name cc -- sh -c \
		'"$1" & echo $! >"$2/pid"; wait $!' sh "$tmp/hotcc" "$tmp" \
		>"$tmp/record3.out" 2>"$tmp/record3.err" || fail "record: $(cat "$tmp/record3.err")"
	pid=$(cat "$tmp/pid")
	"$STROBE" report --pid "$pid" --format csv >"$tmp/cc.csv" || fail "report"
	"$STROBE" report --pid "$pid" --format csv --no-demangle >"$tmp/ccraw.csv" ||
		fail "report --no-demangle"
	grep -q ',"\?ns::spin(double)"\?,' "$tmp/cc.csv" || fail "ns::spin(double) not demangled: $(cat "$tmp/cc.csv")"
	grep -q ',_ZN2ns4spinEd,' "$tmp/ccraw.csv" || fail "--no-demangle: $(cat "$tmp/ccraw.csv")"
	grep -q 'ns::spin' "$tmp/ccraw.csv" && fail "--no-demangle still demangles"
	"$STROBE" export --format csv --no-demangle -o "$tmp/ccx.csv" || fail "export --no-demangle"
	grep -q '_ZN2ns4spinEd' "$tmp/ccx.csv" || fail "export --no-demangle: no raw name"
	"$STROBE" plot --event samples --by symbol --pid "$pid" --no-demangle -o "$tmp/ccp.csv" ||
		fail "plot --no-demangle"
	grep -q '_ZN2ns4spinEd' "$tmp/ccp.csv" || fail "plot --no-demangle: no raw name: $(head -3 "$tmp/ccp.csv")"
	"$STROBE" plot --event samples --by symbol --pid "$pid" -o "$tmp/ccp2.csv" || fail "plot"
	grep -q 'ns::spin(double)' "$tmp/ccp2.csv" || fail "plot: not demangled: $(head -3 "$tmp/ccp2.csv")"
	ok "C++ names demangled, raw with --no-demangle (report, export, plot)"
else
	echo "SKIP C++ names: g++ not installed"
fi

# 7. libc's internal functions, from libc6-dbg
libc=$(ldd "$tmp/bin/split" | awk '/libc.so/ { print $3 }')
lbid=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID:/ { print $3 }')
ldbg=/usr/lib/debug/.build-id/$(echo "$lbid" | cut -c1-2)/$(echo "$lbid" | cut -c3-).debug
if [ -z "$lbid" ] || [ ! -f "$ldbg" ]; then
	echo "SKIP libc's internal functions: no $ldbg (install libc6-dbg)"
	exit 0
fi
"$STROBE" record --sample-event cpu-clock -F 1000 --name libc -- sh -c \
	'python3 -c "
import time
a = b\"x\" * 4000000 + b\"a\"; b = b\"x\" * 4000000 + b\"b\"
t = time.monotonic()
while time.monotonic() - t < 1: a == b; a.find(b\"y\")
" & echo $! >"$1/pid"; wait $!' sh "$tmp" >"$tmp/record2.out" 2>"$tmp/record2.err" ||
	fail "record: $(cat "$tmp/record2.err")"
pid=$(cat "$tmp/pid")
unset STROBE_DEBUG_DIRS
report libc
python3 - "$tmp/libc.csv" <<'PY' || fail "libc's internal functions not named"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if "libc.so" in r["binary"]]
names = {r["symbol"]: int(r["samples"]) for r in rows}
inner = {k: v for k, v in names.items() if k.startswith("__mem") or k.startswith("__str")}
print("libc:", sorted(names.items(), key=lambda x: -x[1])[:5])
sys.exit(0 if inner and sum(inner.values()) > names.get("[unknown]", 0) else 1)
PY
grep -q "libc.so.6: symbols from $ldbg" "$tmp/libc.txt" || fail "no note for libc: $(cat "$tmp/libc.txt")"
ok "libc's internal functions named from $ldbg"
