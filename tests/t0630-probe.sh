#!/bin/sh
# t0630-probe: 'strobe probe' on this machine.  Its L1d size and line size
# equal what sysfs says (of the CPU it ran on); a loaded machine can hide
# the L1d's last ways for a whole run (a neighbour on the core), so up to
# five runs are made and one must agree (a broken inference agrees in
# none).  The CSV header starts with the contract's columns, every kind is
# L1d, L2, L3 or dTLB, the JSON parses and has the same rows, the latencies
# grow with the level, the dTLB row has its pages, the check column shows
# sysfs against the measurement; the result is saved 0600 in a 0700
# directory under XDG_CACHE_HOME (else ~/.cache), replacing a planted
# symlink rather than writing through it, and a symlinked directory is
# refused with a note; bad options get one line and exit 2.
. "$(dirname "$0")/lib.sh"

export XDG_CACHE_HOME="$tmp/xdg"
export HOME="$tmp/home"
mkdir -p "$HOME"
P() { nice -n 19 "$STROBE" probe "$@"; }

# bad input first (fast)
refused 2 probe "bad --error '0': give a percentage above 0" "$STROBE" probe --error 0
refused 2 probe "bad --error '-1': give a percentage above 0" "$STROBE" probe --error -1
refused 2 probe "bad --error 'x'" "$STROBE" probe --error x
refused 2 probe "bad --max-size 'lots': give a size in bytes or with K, M, G or T" \
	"$STROBE" probe --max-size lots
refused 2 probe "bad --max-size '1K': give a size from 64K to 1G" "$STROBE" probe --max-size 1K
refused 2 probe "bad --max-size '2G': give a size from 64K to 1G" "$STROBE" probe --max-size 2G
refused 2 probe "bad --format 'xml': use text, csv or json" "$STROBE" probe --format xml
refused 2 probe "bad --cpu '100000': give a CPU number from 0 to" "$STROBE" probe --cpu 100000
refused 2 probe "unknown option '--bogus'" "$STROBE" probe --bogus
refused 2 probe "unexpected argument 'extra'" "$STROBE" probe extra
[ -e "$XDG_CACHE_HOME" ] && fail "a refused probe saved something"
ok "bad input: one line, exit 2"

# the first CPU this test may run on
cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
sys=/sys/devices/system/cpu/cpu$cpu/cache
l1=
for d in "$sys"/index*; do
	[ -r "$d/level" ] || continue
	if [ "$(cat "$d/level")" = 1 ] && [ "$(cat "$d/type")" = Data ]; then
		l1=$d
	fi
done
[ -n "$l1" ] || skip "sysfs has no L1 data cache for cpu$cpu ($sys/index*/)"
size=$(cat "$l1/size")
case $size in
*K) size=$((${size%K} * 1024)) ;;
*M) size=$((${size%M} * 1048576)) ;;
esac
line=$(cat "$l1/coherency_line_size")
echo "sysfs: L1d $size bytes, $line-byte lines"

# a --max-size over the L2 (or 8 x the L1d)
max=$((size * 8))
for d in "$sys"/index*; do
	[ "$(cat "$d/level" 2>/dev/null)" = 2 ] || continue
	l2=$(cat "$d/size")
	case $l2 in
	*K) l2=$((${l2%K} * 1024)) ;;
	*M) l2=$((${l2%M} * 1048576)) ;;
	esac
	max=$((l2 * 2))
done
[ "$max" -gt $((8 << 20)) ] && max=$((8 << 20))

good=0
for try in 1 2 3 4 5; do
	P --cpu $cpu --max-size $max --format csv -o "$tmp/p.csv" --curves "$tmp/c.csv" 2>"$tmp/p.err" ||
		fail "probe: $(cat "$tmp/p.err")"
	got=$(python3 - "$tmp/p.csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["kind"] == "L1d":
        print(r["size_bytes"], r["line_bytes"])
PY
)
	echo "run $try: L1d size and line: $got"
	if [ "$got" = "$size $line" ]; then
		good=1
		break
	fi
	cat "$tmp/p.csv"
done
[ $good = 1 ] || fail "the L1d is not $size bytes with $line-byte lines in 5 runs"
ok "L1d size and line size equal sysfs"

python3 - "$tmp/p.csv" "$size" "$line" <<'PY' || fail "CSV: $(cat "$tmp/p.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
head = open(sys.argv[1]).readline().strip().split(",")
assert head[:6] == ["kind", "size_bytes", "line_bytes", "ways", "latency_ns", "error_pct"], head
for c in ("sysfs_size_bytes", "sysfs_line_bytes", "sysfs_ways", "cpuid_size_bytes", "check", "note"):
    assert c in head, c
kinds = [r["kind"] for r in rows]
assert set(kinds) <= {"L1d", "L2", "L3", "dTLB"}, kinds
assert kinds[0] == "L1d" and "L2" in kinds and kinds[-1] == "dTLB", kinds
lat = [float(r["latency_ns"]) for r in rows if r["kind"] != "dTLB" and r["latency_ns"]]
assert len(lat) >= 2 and all(a < b for a, b in zip(lat, lat[1:])), lat
l1 = rows[0]
assert l1["sysfs_size_bytes"] == sys.argv[2] and l1["sysfs_line_bytes"] == sys.argv[3], l1
assert 0 < float(l1["latency_ns"]) < 100 and float(l1["error_pct"]) >= 0, l1
tlb = rows[-1]
if tlb["pages"]:
    assert int(tlb["size_bytes"]) == int(tlb["pages"]) * int(tlb["line_bytes"]), tlb
else:
    assert tlb["note"], tlb
# a disagreement is named in 'check'
for r in rows:
    if r["sysfs_size_bytes"] and r["size_bytes"] and r["sysfs_size_bytes"] != r["size_bytes"]:
        assert "size: sysfs %s, measured %s" % (r["sysfs_size_bytes"], r["size_bytes"]) in r["check"], r
PY
ok "CSV: header, kinds, latencies growing with the level, cross-check"

# --curves: every measurement; the L1d's size is where the size curve steps
python3 - "$tmp/c.csv" "$tmp/p.csv" <<'PY' || fail "--curves: $(head -5 "$tmp/c.csv")"
import csv, sys
pts = list(csv.DictReader(open(sys.argv[1])))
rows = {r["kind"]: r for r in csv.DictReader(open(sys.argv[2]))}
assert {p["experiment"] for p in pts} >= {"size", "line", "ways", "dtlb"}, {p["experiment"] for p in pts}
size = {float(p["x"]): float(p["ns"]) for p in pts if p["experiment"] == "size"}
l1 = float(rows["L1d"]["size_bytes"])
assert l1 in size and min(size) == 4096, sorted(size)
after = min(x for x in size if x > l1)
assert size[after] > size[l1] * 1.3, (l1, size[l1], after, size[after])
assert abs(float(rows["L1d"]["latency_ns"]) - size[4096]) < 0.3 * size[4096], (rows["L1d"], size[4096])
PY
ok "--curves: the size curve steps after the L1d's size"

# JSON (and the file it saved) with the same kinds; text names them too
P --max-size 256K --format json >"$tmp/p.json" 2>"$tmp/p.err" || fail "probe json: $(cat "$tmp/p.err")"
grep -q "^strobe probe: saved to $XDG_CACHE_HOME/strobe/probe.json\$" "$tmp/p.err" ||
	fail "no 'saved to': $(cat "$tmp/p.err")"
python3 - "$tmp/p.json" "$XDG_CACHE_HOME/strobe/probe.json" <<'PY' || fail "JSON"
import json, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
assert a["rows"] and [r["kind"] for r in a["rows"]] == [r["kind"] for r in b["rows"]]
assert a["rows"][0]["kind"] == "L1d" and isinstance(a["rows"][0]["latency_ns"], float)
assert a["meta"]["timer"].startswith("clock_gettime") and a["meta"]["error_bound_pct"] == 2
PY
[ "$(stat -c %a "$XDG_CACHE_HOME/strobe")" = 700 ] || fail "the directory is not 0700"
[ "$(stat -c %a "$XDG_CACHE_HOME/strobe/probe.json")" = 600 ] || fail "the file is not 0600"
P --max-size 128K >"$tmp/p.txt" 2>/dev/null || fail "probe text"
head -1 "$tmp/p.txt" | grep -q "^kind  *size_bytes  *line_bytes  *ways  *latency_ns  *error_pct" ||
	fail "text header: $(head -1 "$tmp/p.txt")"
grep -q "^L1d " "$tmp/p.txt" || fail "text: no L1d row"
ok "JSON parses, saved file 0600 in a 0700 directory, text"

# ~/.cache without XDG_CACHE_HOME; a planted symlink is replaced, not followed
(unset XDG_CACHE_HOME; P --max-size 128K >/dev/null 2>"$tmp/p.err") || fail "probe: $(cat "$tmp/p.err")"
[ -f "$HOME/.cache/strobe/probe.json" ] || fail "not saved in ~/.cache: $(cat "$tmp/p.err")"
echo precious >"$tmp/victim"
rm "$XDG_CACHE_HOME/strobe/probe.json"
ln -s "$tmp/victim" "$XDG_CACHE_HOME/strobe/probe.json"
P --max-size 128K >/dev/null 2>"$tmp/p.err" || fail "probe: $(cat "$tmp/p.err")"
[ "$(cat "$tmp/victim")" = precious ] || fail "the probe wrote through a planted symlink"
[ -L "$XDG_CACHE_HOME/strobe/probe.json" ] && fail "the symlink is still there"
rm -r "$XDG_CACHE_HOME/strobe"
mkdir "$tmp/elsewhere"
ln -s "$tmp/elsewhere" "$XDG_CACHE_HOME/strobe"
P --max-size 128K -o "$tmp/o.txt" 2>"$tmp/p.err" || fail "probe with a symlinked directory: $(cat "$tmp/p.err")"
grep -q "not saved for 'plot --expect': .*strobe is not a directory (a symlink?)" "$tmp/p.err" ||
	fail "no note for a symlinked directory: $(cat "$tmp/p.err")"
[ -z "$(ls "$tmp/elsewhere")" ] || fail "saved through a symlinked directory"
grep -q "^L1d " "$tmp/o.txt" || fail "-o: no L1d row"
ok "~/.cache, planted symlinks not followed"
