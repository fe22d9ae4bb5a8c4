#!/bin/sh
# t0260-export: 'strobe export'.  On a hand-made database
# (tests/data/export-fixture.sql, with a real split603010 in its binary
# cache and a kallsyms snapshot): the CSV is exactly tests/golden/export.csv
# (time order, names from the cache and the snapshot, [unknown] and
# [binary unavailable], CSV quoting) and the Chrome trace parses to exactly
# tests/golden/export-chrome.json, with its structure checked (ph/ts/pid on
# every event, process and thread names, a counter track per event per CPU
# whose steps add up to the samples' increases, markers and lost records as
# instant events); filters; bad input refused in one line.  Then a real
# session of split603010 (root): as many CSV rows as samples, page-faults
# summing to the report's total, times in order, work60/30/10 named, and a
# Chrome trace with its counters.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"

# --- the fixture: schema, rows, and the cache (split603010 with build-id
# 5a5a..., the offsets of work60/30/10 + 4 into it)
python3 - "$WL/split603010" "$tmp/split" >"$tmp/offsets" <<'PY' || fail "preparing split603010"
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
assert d[:4] == b"\x7fELF" and d[4] == 2 and d[5] == 1, "not a little-endian ELF64 file"
phoff, shoff = struct.unpack_from("<QQ", d, 0x20)
phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", d, 0x36)
secs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
ids = 0
for name, typ, flags, addr, off, size, link, info, align, entsize in secs:
    p = off
    while typ == 7 and p + 12 <= off + size:	# SHT_NOTE
        nsz, dsz, nt = struct.unpack_from("<III", d, p)
        desc = p + 12 + ((nsz + 3) & ~3)
        if nt == 3 and d[p + 12:p + 12 + nsz] == b"GNU\0":
            assert dsz == 20, dsz
            d[desc:desc + dsz] = b"\x5a" * dsz
            ids += 1
        p = desc + ((dsz + 3) & ~3)
assert ids == 1, f"{ids} build-id notes"
syms = {}
for name, typ, flags, addr, off, size, link, info, align, entsize in secs:
    if typ != 2:	# SHT_SYMTAB
        continue
    stroff = secs[link][4]
    for i in range(size // 24):
        st_name, st_info, st_other, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", d, off + 24 * i)
        n = d[stroff + st_name:d.index(0, stroff + st_name)].decode()
        syms[n] = st_value
for fn, key in (("work60", "W60"), ("work30", "W30"), ("work10", "W10")):
    vma = syms[fn] + 4
    for i in range(phnum):
        pt, pf, poff, pvaddr, ppaddr, pfilesz = struct.unpack_from("<IIQQQQ", d, phoff + i * phentsize)
        if pt == 1 and pvaddr <= vma < pvaddr + pfilesz:
            print(key, hex(vma - pvaddr + poff))
            break
    else:
        sys.exit(f"{fn} is in no PT_LOAD segment")
open(sys.argv[2], "wb").write(d)
PY
w60=$(awk '$1 == "W60" { print $2 }' "$tmp/offsets")
w30=$(awk '$1 == "W30" { print $2 }' "$tmp/offsets")
w10=$(awk '$1 == "W10" { print $2 }' "$tmp/offsets")
[ -n "$w60" ] && [ -n "$w30" ] && [ -n "$w10" ] || fail "offsets: $(cat "$tmp/offsets")"
subst() { sed -e "s/@W60@/$w60/g" -e "s/@W30@/$w30/g" -e "s/@W10@/$w10/g" "$1"; }

fx=$tmp/fx.db
nschema=$(ls "$top"/schema/[0-9][0-9][0-9]-*.sql | wc -l)
{
	cat "$top"/schema/[0-9][0-9][0-9]-*.sql
	echo "PRAGMA application_id=1398035023; PRAGMA user_version=$nschema;"
	subst "$top/tests/data/export-fixture.sql"
} | sqlq -bail "$fx" || fail "building the fixture database"
mkdir -p "$fx.cache/buildid/5a" "$fx.cache/kallsyms/01"
cp "$tmp/split" "$fx.cache/buildid/5a/5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a" || fail "cache"
cp "$top/tests/data/export-kallsyms" "$fx.cache/kallsyms/01/23456789abcdef0123456789abcdef" || fail "cache"
X() { "$STROBE" export --db "$fx" "$@"; }

# --- CSV: exactly the golden file
X --session 1 --format csv >"$tmp/fx.csv" 2>"$tmp/err" || fail "export csv: $(cat "$tmp/err")"
[ -s "$tmp/err" ] && fail "export csv wrote to stderr: $(cat "$tmp/err")"
subst "$top/tests/golden/export.csv" >"$tmp/golden.csv"
diff -u "$tmp/golden.csv" "$tmp/fx.csv" || fail "CSV differs from tests/golden/export.csv"
X --session 1 --format csv -o "$tmp/fx-o.csv" >"$tmp/out" || fail "export csv -o"
cmp -s "$tmp/fx.csv" "$tmp/fx-o.csv" || fail "-o FILE differs from stdout"
[ -s "$tmp/out" ] && fail "-o FILE also wrote to stdout"
ok "CSV matches the golden file"

# --- Chrome trace: the golden file, compared parsed
X --session 1 --format chrome-trace --samples -o "$tmp/fx.json" || fail "export chrome-trace"
X --session 1 --format chrome-trace >"$tmp/fx-nos.json" || fail "export chrome-trace (no samples)"
python3 - "$tmp/fx.json" "$top/tests/golden/export-chrome.json" "$tmp/fx-nos.json" <<'PY' || fail "Chrome trace"
import difflib, json, sys
got = json.load(open(sys.argv[1], encoding="utf-8"))
want = json.load(open(sys.argv[2], encoding="utf-8"))
for j in (got, want):
    j["otherData"].pop("generator", None)	# carries the version
if got != want:
    a = json.dumps(want, indent=1, ensure_ascii=False).splitlines()
    b = json.dumps(got, indent=1, ensure_ascii=False).splitlines()
    print("\n".join(difflib.unified_diff(a, b, "golden", "export", lineterm="")))
    sys.exit("the Chrome trace differs from tests/golden/export-chrome.json")

ev = got["traceEvents"]
CP = got["otherData"]["counters_pid"]
for e in ev:
    assert {"ph", "ts", "pid"} <= e.keys(), e
    assert isinstance(e["ts"], (int, float)) and isinstance(e["pid"], int), e
    assert e["ph"] in ("M", "C", "i"), e
meta = {(e["name"], e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M"}
for k, v in ((("process_name", 100, 100), "split603010"),
             (("process_name", 200, 200), 'we,ird "name"'),
             (("process_name", 300, 300), "café"),
             (("process_name", 400, 400), "strobe"),
             (("process_name", CP, 0), "CPU counters"),
             (("thread_name", 100, 101), "split-worker"),
             (("thread_name", 0, 0), "swapper")):
    assert meta.get(k) == v, (k, meta.get(k), meta)
# counter tracks: one per event per CPU, on the counters' pseudo-process;
# a step function whose area is the increase of the event on the CPU
events = got["otherData"]["events"]
assert events == ["page-faults", "context-switches"], events
cs = [e for e in ev if e["ph"] == "C"]
assert {e["name"] for e in cs} == {f"{n} cpu{c}" for n in events for c in (0, 1)}, {e["name"] for e in cs}
assert all(e["pid"] == CP and set(e["args"]) == {"value"} for e in cs)
bucket = got["otherData"]["counter_bucket_us"]
want_tot = {"page-faults cpu0": 10, "page-faults cpu1": 12,
            "context-switches cpu0": 3, "context-switches cpu1": 4}
for name, tot in want_tot.items():
    pts = sorted((e["ts"], e["args"]["value"]) for e in cs if e["name"] == name)
    assert pts[-1][1] == 0, f"{name} does not end at 0"
    area = sum(v * (pts[i + 1][0] - t) for i, (t, v) in enumerate(pts[:-1]))
    assert abs(area / bucket - tot) < 1e-6, (name, area / bucket, tot)
# markers: strobe mark global, USDT on its thread with the probe's arguments
mk = [e for e in ev if e.get("cat") == "marker"]
assert [(e["name"], e["ph"], e["s"]) for e in mk] == [
    ('phase 2: "go"', "i", "g"), ("app:request", "i", "t"), ("end", "i", "g")], mk
usdt = mk[1]
assert (usdt["pid"], usdt["tid"], usdt["ts"]) == (100, 101, 2200.0), usdt
assert usdt["args"]["args"] == "42,7" and usdt["args"]["cpu"] == 1, usdt
lost = [e for e in ev if e.get("cat") == "lost"]
assert [(e["ph"], e["s"], e["args"]["cpu"], e["args"]["count"], e["args"]["kind"]) for e in lost] == [
    ("i", "g", 1, 3, "ring"), ("i", "g", 0, 1, "throttle")], lost
samples = [e for e in ev if e.get("cat") == "sample"]
assert len(samples) == 12 and all(e["ph"] == "i" and e["s"] == "t" for e in samples)
assert [e["name"] for e in samples].count("work60") == 3
od = got["otherData"]
assert od["start_monotonic_ns"] == 1000000000000 and od["wall_offset_ns"] == 1699999000000000000, od
assert od["start_utc"] == "2023-11-14T22:13:20.000000000Z", od
# without --samples: the same minus the samples
nos = json.load(open(sys.argv[3], encoding="utf-8"))
assert nos["traceEvents"] == [e for e in ev if e.get("cat") != "sample"], "--samples changed more than the samples"
print(f"{len(ev)} events: {len(cs)} counter points, {len(mk)} markers, {len(lost)} lost, {len(samples)} samples")
PY
ok "Chrome trace matches the golden file and has its tracks"

# --- a sample the kernel gave no task (pid and tid -1): on the "no task"
# pseudo-process, inside the pid span a fleet trace offsets (t0841)
cp "$fx" "$tmp/nt.db" && cp -r "$fx.cache" "$tmp/nt.db.cache" || fail "copying the fixture"
sqlq "$tmp/nt.db" "UPDATE samples SET pid = -1, tid = -1 WHERE time_ns = 1000007150000" ||
	fail "the no-task sample"
"$STROBE" export --db "$tmp/nt.db" --session 1 --format chrome-trace --samples -o "$tmp/nt.json" ||
	fail "export chrome-trace with a no-task sample"
python3 - "$tmp/nt.json" <<'PY' || fail "the no-task sample (above)"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
CP = 4194304
assert all(0 <= e["pid"] <= CP + 1 and 0 <= e.get("tid", 0) <= CP + 1 for e in ev), \
    [e for e in ev if not 0 <= e["pid"] <= CP + 1 or not 0 <= e.get("tid", 0) <= CP + 1]
nt = [e for e in ev if e.get("cat") == "sample" and e["ts"] == 7150.0]
assert [(e["pid"], e["tid"]) for e in nt] == [(CP + 1, CP + 1)], nt
meta = {(e["name"], e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M"}
assert meta.get(("process_name", CP + 1, CP + 1)) == "no task", meta
PY
ok "a sample of no task (pid -1): on pid $((4194304 + 1)), named \"no task\""

# --- filters and the latest session
X --session 1 --format csv --pid 100 >"$tmp/p.csv" || fail "--pid"
X --session 1 --format csv --comm 'we,ird "name"' >"$tmp/c.csv" || fail "--comm"
X --session 1 --format csv --from 2ms --to 7.1ms >"$tmp/t.csv" || fail "--from/--to"
X --format csv >"$tmp/latest.csv" || fail "the latest session"
python3 - "$tmp/fx.csv" "$tmp/p.csv" "$tmp/c.csv" "$tmp/t.csv" "$tmp/latest.csv" <<'PY' || fail "filters"
import csv, sys
a, p, c, t, l = (list(csv.DictReader(open(f, encoding="utf-8"))) for f in sys.argv[1:6])
assert p == [r for r in a if r["pid"] == "100"] and len(p) == 8, p
assert c == [r for r in a if r["comm"] == 'we,ird "name"'] and len(c) == 2, c
lo, hi = 1000000000000 + 2000000, 1000000000000 + 7100000	# inclusive, as in report
assert t == [r for r in a if lo <= int(r["time_ns"]) <= hi] and len(t) == 6, [r["time_ns"] for r in t]
assert len(l) == 1 and l[0]["time_ns"] == "1000020500000" and l[0]["symbol"] == "work60", l
assert list(l[0])[:9] == ["time_ns", "tsc", "cpu", "pid", "tid", "comm", "binary", "symbol", "offset"], list(l[0])
PY
ok "filters"

# --- bad input: one line, the right exit status, no file left behind
refused 1 export "no session 9 in .*fx.db.*strobe sessions" X --session 9 --format csv
refused 2 export "bad --format 'xml': use csv, chrome-trace, folded, pprof or gecko" X --format xml
refused 2 export "give --format" X
refused 2 export "unknown option '--frmat'" X --frmat csv
refused 2 export "bad --from" X --format csv --from soon
refused 1 export "empty time range: --from 5s is not before --to 5s" X --format csv --from 5s --to 5s
refused 1 export "empty time range" X --format csv --from 3s --to 1s
refused 1 export "no samples in session 1 between 0.5s and 1s" \
	X --session 1 --format csv --from 0.5 --to 1s -o "$tmp/none.csv"
[ -e "$tmp/none.csv" ] && fail "an empty export left $tmp/none.csv"
refused 1 export "no samples of pid 4242 in session 1" X --session 1 --format chrome-trace --pid 4242
refused 1 export "no process named 'nosuch'" X --format csv --comm nosuch
refused 1 export "cannot write $tmp/no/such/dir/x.csv: No such file or directory" \
	X --session 1 --format csv -o "$tmp/no/such/dir/x.csv"
refused 2 export "applies to --format chrome-trace" X --format csv --samples
refused 2 export "bad --bucket" X --format chrome-trace --bucket 0
refused 1 export "/nonexistent/x.db.*No such file" "$STROBE" export --db /nonexistent/x.db --format csv
ok "bad input"

# --- names that are not UTF-8 still make valid JSON (U+FFFD)
sqlite3 "$fx" "UPDATE comms SET name = CAST(X'7374ff7201626522' AS TEXT) WHERE id = 6" || fail "sqlite3"
X --session 1 --format chrome-trace -o "$tmp/bad-utf8.json" || fail "export chrome-trace"
python3 - "$tmp/bad-utf8.json" <<'PY' || fail "JSON with a comm that is not UTF-8"
import json, sys
j = json.load(open(sys.argv[1], encoding="utf-8"))
names = [e["args"]["name"] for e in j["traceEvents"] if e["ph"] == "M" and e["pid"] == 400]
assert names == ['st\ufffdr\x01be"'], names
PY
ok "names that are not UTF-8"

# --- a real session
[ "$(id -u)" = 0 ] || skip "the real-session part needs root (system-wide profiling); the fixture parts passed"
"$STROBE" record --sample-event cpu-clock -F 1000 -e page-faults --name export \
	-- "$WL/split603010" 2 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
"$STROBE" export --format csv -o "$tmp/real.csv" || fail "export csv"
"$STROBE" export --format chrome-trace -o "$tmp/real.json" || fail "export chrome-trace"
"$STROBE" sessions --format csv >"$tmp/sessions.csv" || fail "sessions"
"$STROBE" report --by binary --format csv >"$tmp/report.csv" || fail "report"
python3 - "$tmp/real.csv" "$tmp/sessions.csv" "$tmp/report.csv" "$tmp/real.json" <<'PY' || fail "the real session's exports"
import collections, csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8", errors="replace")))
sess = list(csv.DictReader(open(sys.argv[2])))[-1]
rep = list(csv.DictReader(open(sys.argv[3], encoding="utf-8", errors="replace")))
assert len(rows) == int(sess["samples"]), (len(rows), sess["samples"])
assert list(rows[0])[:9] == ["time_ns", "tsc", "cpu", "pid", "tid", "comm", "binary", "symbol", "page-faults"]
pf = sum(int(r["page-faults"]) for r in rows)
want = sum(int(r["page-faults"]) for r in rep)
assert pf == want, f"page-faults: export {pf}, report {want}"
t = [int(r["time_ns"]) for r in rows]
assert all(a <= b for a, b in zip(t, t[1:])), "times out of order"
mine = collections.Counter(r["symbol"] for r in rows if r["comm"] == "split603010")
print(f"{len(rows)} rows, page-faults {pf}, split603010: {dict(mine.most_common(4))}")
assert mine["work60"] > mine["work30"] > mine["work10"] > 0, mine
per_cpu = collections.Counter()
for r in rows:
    per_cpu[f"page-faults cpu{r['cpu']}"] += int(r["page-faults"])
j = json.load(open(sys.argv[4], encoding="utf-8"))
ev = j["traceEvents"]
assert all({"ph", "ts", "pid"} <= e.keys() for e in ev)
cs = [e for e in ev if e["ph"] == "C"]
names = {e["name"] for e in cs}
assert names == {f"page-faults cpu{c}" for c in {r["cpu"] for r in rows}}, names
bucket = j["otherData"]["counter_bucket_us"]
for name in names:
    pts = sorted((e["ts"], e["args"]["value"]) for e in cs if e["name"] == name)
    area = sum(v * (pts[i + 1][0] - t) for i, (t, v) in enumerate(pts[:-1]))
    assert round(area / bucket) == per_cpu[name], (name, area / bucket, per_cpu[name])
assert any(e["ph"] == "M" and e["name"] == "process_name" and e["args"]["name"] == "split603010" for e in ev)
PY
ok "a real session exported"
