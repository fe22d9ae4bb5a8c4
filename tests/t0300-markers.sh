#!/bin/sh
# t0300-markers: markers in a session.  A session started with
# --marker PATH:tlbwalk:size records each hit of tlbwalk's USDT probe
# through a uprobe: 'tlbwalk 4 11' gives exactly 8 usdt markers, arguments
# n = 4..11 in order (and the passes), times increasing, all between a
# 'strobe mark before' and a 'strobe mark after', with tlbwalk's pid and a
# CPU; the probe is stored in session_probes.  A larger tlbwalk run at
# real-time priority gives its 64 hits and the page faults of its touches
# (sum of n, within 2%).  'strobe record --marker' works too.  Bad input is
# refused with one line and no session: an unknown probe (the message names
# it and the probes the file has), a missing file, a file that is not ELF,
# a copy of tlbwalk marked as built for the other architecture (x86_64,
# aarch64: the registers perf samples are this machine's), a malformed
# spec (exit 2); 'strobe mark' with no session running (exit
# 1), with empty or too long text (exit 2).
. "$(dirname "$0")/lib.sh"
need_root
[ -e /sys/bus/event_source/devices/uprobe/type ] ||
	skip "this kernel has no uprobe perf events (CONFIG_UPROBE_EVENTS)"

TW=$WL/tlbwalk
nsessions() {
	"$STROBE" sessions --format csv >"$tmp/s.csv" || fail "sessions: $(cat "$tmp/s.csv")"
	echo $(($(wc -l <"$tmp/s.csv") - 1))
}

start_daemon

# 1. refused, with nothing started
refused 1 mark "no session running: start one with 'strobe start'" "$STROBE" mark hello
refused 2 mark "empty marker text" "$STROBE" mark ""
refused 2 mark "too long: at most 256" "$STROBE" mark "$(python3 -c 'print("x" * 300)')"
S="$STROBE start --sample-event cpu-clock"
refused 1 start "marker '$TW:tlbwalk:nosuch': no USDT probe tlbwalk:nosuch in $TW: it has tlbwalk:size\$" \
	$S --marker "$TW:tlbwalk:nosuch"
refused 1 start "marker '$tmp/nofile:p:n': cannot read $tmp/nofile: No such file or directory" \
	$S --marker "$tmp/nofile:p:n"
echo "not a program" >"$tmp/text"
refused 1 start "$tmp/text is not an ELF file" $S --marker "$tmp/text:p:n"
refused 1 start "no USDT probe p:n in .*/split603010: it has no USDT probes" \
	$S --marker "$WL/split603010:p:n"
# a copy of tlbwalk marked as built for the other architecture (e_machine)
case $(uname -m) in
x86_64) other=aarch64 here=x86_64 em=183 ;;
aarch64) other=x86_64 here=aarch64 em=62 ;;
*) other= ;;
esac
if [ -n "$other" ]; then
	cp "$TW" "$tmp/tw-other"
	python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(18)
f.write(int(sys.argv[2]).to_bytes(2, "little"))' "$tmp/tw-other" "$em" || fail "patching e_machine"
	m="marker '$tmp/tw-other:tlbwalk:size': USDT probe tlbwalk:size: $tmp/tw-other"
	refused 1 start "$m is a binary for $other, and this strobe runs on $here: " \
		$S --marker "$tmp/tw-other:tlbwalk:size"
fi
refused 2 start "bad marker 'tlbwalk-size': give PATH:PROVIDER:NAME" $S --marker tlbwalk-size
refused 2 start "bad marker '$TW:tlbwalk:': PROVIDER and NAME are C identifiers" \
	$S --marker "$TW:tlbwalk:"
refused 1 record "no USDT probe tlbwalk:nosuch" \
	"$STROBE" record --sample-event cpu-clock --marker "$TW:tlbwalk:nosuch" -- true
"$STROBE" status >"$tmp/st" || fail "status"
grep -q "no session running" "$tmp/st" || fail "a refused start left a session running: $(cat "$tmp/st")"
[ "$(nsessions)" = 0 ] || fail "a refused start stored a session: $(cat "$tmp/s.csv")"
ok "bad markers and marks refused in one line, nothing started"

# 2. the known answer; a relative path works (the CLI makes it absolute)
(cd "$WL" && "$STROBE" start --sample-event cpu-clock -F 1000 -e page-faults \
	--marker tlbwalk:tlbwalk:size --name markers) >"$tmp/id" 2>"$tmp/start.err" ||
	fail "start: $(cat "$tmp/start.err")"
id=$(cat "$tmp/id")
"$STROBE" mark before || fail "mark before"
sh -c 'echo $$ >"$1"; exec "$2" 4 11 -P 50' sh "$tmp/pid" "$TW" >"$tmp/tw.out" || fail "tlbwalk"
"$STROBE" mark "after the walk" || fail "mark after"
rt=
command -v chrt >/dev/null && chrt -f 10 true 2>/dev/null && rt="chrt -f 10"
$rt sh -c 'echo $$ >"$1"; exec "$2" 2000 2063 -P 20' sh "$tmp/pid2" "$TW" >/dev/null || fail "tlbwalk 2000 2063"
"$STROBE" stop >"$tmp/stop" 2>"$tmp/stop.err" || fail "stop: $(cat "$tmp/stop.err")"
refused 1 mark "no session running" "$STROBE" mark late

"$STROBE" report --markers --format csv >"$tmp/m.csv" 2>"$tmp/m.err" || fail "report --markers: $(cat "$tmp/m.err")"
python3 - "$tmp/m.csv" "$(cat "$tmp/pid")" "$(cat "$tmp/pid2")" <<'PY' || fail "markers: $(cat "$tmp/m.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
pid, pid2 = sys.argv[2], sys.argv[3]
marks = [r for r in rows if r["kind"] == "mark"]
assert [m["name"] for m in marks] == ["before", "after the walk"], marks
assert all(m["cpu"] == "" and m["pid"] and m["args"] == "" for m in marks), marks
usdt = [r for r in rows if r["kind"] == "usdt" and r["pid"] == pid]
assert len(usdt) == 8, f"{len(usdt)} usdt markers of pid {pid}, want 8"
for n, r in zip(range(4, 12), usdt):
    assert r["name"] == "tlbwalk:size", r
    a = r["args"].split(",")
    assert len(a) == 3 and a[0] == str(n) and a[1] == "50" and int(a[2]) > 0, r
    assert r["tid"] == pid and r["cpu"] != "" and int(r["cpu"]) >= 0, r
t = [float(r["time_s"]) for r in usdt]
assert all(a < b for a, b in zip(t, t[1:])), f"times not increasing: {t}"
tb, ta = float(marks[0]["time_s"]), float(marks[1]["time_s"])
assert 0 <= tb < t[0] and t[-1] < ta, f"before {tb}, hits {t[0]}..{t[-1]}, after {ta}"
big = [r for r in rows if r["kind"] == "usdt" and r["pid"] == pid2]
assert [int(r["args"].split(",")[0]) for r in big] == list(range(2000, 2064)), \
    f"{len(big)} hits of the large run"
print(f"8 hits n=4..11 in {(t[-1] - t[0]) * 1e6:.0f} us between the marks; 64 hits of the large run")
PY
ok "usdt markers: the known answer"

# the probe as stored
python3 - "$STROBE_DB" "$id" "$TW" <<'PY' || fail "session_probes"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT spec, binary_key, offset, semaphore, nargs, arg_spec FROM session_probes "
                  "WHERE session_id=?", (int(sys.argv[2]),)).fetchall()
assert len(rows) == 1, rows
spec, key, off, sem, nargs, argspec = rows[0]
assert spec == sys.argv[3] + ":tlbwalk:size", spec
assert key and key.startswith("buildid:"), key
assert open(sys.argv[3], "rb").read()[off] == 0x90, "the probe's offset is not its nop"
assert sem is None and nargs == 3 and len(argspec.split()) == 3, rows[0]
PY
ok "session_probes"

# the large run's page faults: one per page touched, sum(2000..2063)
"$STROBE" report --session "$id" --pid "$(cat "$tmp/pid2")" --format csv >"$tmp/pf.csv" ||
	fail "report --pid"
pf=$(python3 -c 'import csv,sys; print(sum(int(r["page-faults"]) for r in csv.DictReader(open(sys.argv[1]))))' "$tmp/pf.csv")
want=$(python3 -c 'print(sum(range(2000, 2064)))')
echo "tlbwalk 2000 2063: $pf page faults, $want pages touched"
near "$pf" "$want" 2 || fail "tlbwalk: $pf page faults attributed, not $want within 2%"
ok "page faults of the walk"

# filters, text and JSON
"$STROBE" report --markers --pid "$(cat "$tmp/pid")" --format csv >"$tmp/p.csv" || fail "--markers --pid"
[ "$(grep -c ',usdt,tlbwalk:size,' "$tmp/p.csv")" = 8 ] && [ "$(wc -l <"$tmp/p.csv")" = 9 ] ||
	fail "--markers --pid: $(cat "$tmp/p.csv")"
"$STROBE" report --markers --limit 1 >"$tmp/t.txt" || fail "--markers text"
head -n 1 "$tmp/t.txt" | grep -q "^# session $id \"markers\" (done): 1 marker selected" ||
	fail "text header: $(cat "$tmp/t.txt")"
grep -q "^time_s  *kind  *name  *pid  *tid  *cpu  *args" "$tmp/t.txt" || fail "text columns: $(cat "$tmp/t.txt")"
grep -q " mark  *before " "$tmp/t.txt" || fail "text row: $(cat "$tmp/t.txt")"
"$STROBE" report --markers --format json >"$tmp/m.json" || fail "--markers json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); n=sum(1 for _ in open(sys.argv[2])) - 1; assert len(d["rows"]) == n >= 74, (len(d["rows"]), n); assert isinstance(d["rows"][0]["time_s"], float)' "$tmp/m.json" "$tmp/m.csv" ||
	fail "json: $(head -c 300 "$tmp/m.json")"
refused 2 report "--markers lists markers, not samples" "$STROBE" report --markers --by line
ok "report --markers filters and formats"

# 3. strobe record --marker, through the running strobed
"$STROBE" record --sample-event cpu-clock --marker "$TW:tlbwalk:size" -- "$TW" 1 3 -P 10 \
	>/dev/null 2>"$tmp/rec.err" || fail "record: $(cat "$tmp/rec.err")"
"$STROBE" report --markers --format csv >"$tmp/r.csv" || fail "report of the record session"
[ "$(grep -c ',usdt,tlbwalk:size,' "$tmp/r.csv")" = 3 ] || fail "record --marker: $(cat "$tmp/r.csv")"
stop_daemon || fail "strobed did not exit cleanly: $(cat "$tmp/strobed.log")"
ok "strobe record --marker"
