#!/bin/sh
# t0840-fleet-export-diff: 'strobe export --source' and 'strobe diff
# --source' against two real ClickHouse servers, the two shards of cluster
# strobe_fleet (tests/clickhouse.sh).  Two sessions of host A (a.db: one
# counting page-faults, one counting nothing) and one of host B (b.db) are
# pushed, the hosts on different shards.  Then:
#  - the CSV export of each host's session, and with --pid, --comm,
#    --from/--to and -o, is byte for byte 'strobe export --db' of it;
#  - an export of several hosts (or --host-column) adds host (and
#    session) first columns, whose rows per host are the local export's;
#  - 'strobe diff --source --host A 1 2' is 'strobe diff --db a.db 1 2'
#    byte for byte in CSV, JSON and text (but for the local notes of the
#    symbol lookup, which are not pushed), also with --by binary and
#    --limit; 'A:1 B:1' compares two hosts, named in the header and meta;
#  - bad inputs fail with one line (exit 2 for usage, 1 otherwise).
. "$(dirname "$0")/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
. "$(dirname "$0")/clickhouse.sh"

ch_fleet
ok "two clickhouse-server shards up, schema applied"

ch_shard_hosts

"$STROBE" record --db "$tmp/a.db" --sample-event cpu-clock -F 2000 -e page-faults -- \
	"$WL/split603010" 1 >/dev/null 2>"$tmp/rec.err" || fail "record a1: $(cat "$tmp/rec.err")"
"$STROBE" record --db "$tmp/a.db" --sample-event cpu-clock -F 2000 -- \
	"$WL/split306010" 1 >/dev/null 2>"$tmp/rec.err" || fail "record a2: $(cat "$tmp/rec.err")"
"$STROBE" record --db "$tmp/b.db" --sample-event cpu-clock -F 1500 -e page-faults -- \
	"$WL/split306010" 1 >/dev/null 2>"$tmp/rec.err" || fail "record b: $(cat "$tmp/rec.err")"
"$STROBE" push --db "$tmp/a.db" --to "$url" --host "$hA" >/dev/null 2>"$tmp/push.err" ||
	fail "push a: $(cat "$tmp/push.err")"
"$STROBE" push --db "$tmp/b.db" --to "$url" --host "$hB" >/dev/null 2>"$tmp/push.err" ||
	fail "push b: $(cat "$tmp/push.err")"
ok "pushed sessions 1 and 2 of $hA (a.db) and 1 of $hB (b.db)"

# same NAME DB HOST ARGS: the local export of DB and the fleet's of HOST
same() {
	name=$1 db=$2 h=$3
	shift 3
	"$STROBE" export --db "$db" --format csv "$@" >"$tmp/$name.local" 2>"$tmp/err" ||
		fail "$name: local export: $(cat "$tmp/err")"
	"$STROBE" export --source "$url" --host "$h" --format csv "$@" >"$tmp/$name.fleet" \
		2>"$tmp/err" || fail "$name: fleet export: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/$name.local")" -gt 10 ] || fail "$name: an export of few rows"
	cmp "$tmp/$name.local" "$tmp/$name.fleet" ||
		fail "$name: differs: $(diff "$tmp/$name.local" "$tmp/$name.fleet" | head -6)"
}
same a1 "$tmp/a.db" "$hA" --session 1
same a2 "$tmp/a.db" "$hA" --session 2
same b1 "$tmp/b.db" "$hB" --session 1
head -1 "$tmp/a1.fleet" | grep -qx 'time_ns,tsc,cpu,pid,tid,comm,binary,symbol,page-faults,offset,mode,build_id' ||
	fail "a1 header: $(head -1 "$tmp/a1.fleet")"
n=$(sqlq "$tmp/a.db" "SELECT count(*) FROM samples WHERE session_id = 1")
[ "$(($(wc -l <"$tmp/a1.fleet") - 1))" = "$n" ] || fail "a1: not $n rows"
ok "csv of each host's session as the local export ($n, $(($(wc -l <"$tmp/a2.fleet") - 1)), $(($(wc -l <"$tmp/b1.fleet") - 1)) rows)"

# the filters that map to pushed columns
# the session is system-wide: take the workload's pid and comm (the most
# rows), not the first row's (strobed's own, or another process's few)
pid=$(awk -F, 'NR > 1 && $4 != 0 { n[$4]++ } END { for (p in n) if (n[p] > m) { m = n[p]; b = p } print b }' "$tmp/a1.local")
comm=$(awk -F, 'NR > 1 && $4 != 0 && $6 != "" { n[$6]++ } END { for (c in n) if (n[c] > m) { m = n[c]; b = c } print b }' "$tmp/a2.local")
same a1-pid "$tmp/a.db" "$hA" --session 1 --pid "$pid"
same a2-comm "$tmp/a.db" "$hA" --session 2 --comm "$comm"
same a1-time "$tmp/a.db" "$hA" --session 1 --from 200ms --to 0.6s
[ "$(wc -l <"$tmp/a1-time.fleet")" -lt "$(wc -l <"$tmp/a1.fleet")" ] || fail "--from/--to kept every row"
"$STROBE" export --source "$url" --host "$hA" --session 1 --format csv -o "$tmp/a1.out" \
	2>"$tmp/err" || fail "-o: $(cat "$tmp/err")"
cmp "$tmp/a1.local" "$tmp/a1.out" || fail "-o FILE differs from the local export"
ok "--pid $pid, --comm $comm, --from/--to, -o as the local export"

# several hosts: host and session first, each host's rows its local export's
"$STROBE" export --source "$url" --session 1 --format csv >"$tmp/all.csv" 2>"$tmp/err" ||
	fail "--session 1 of both hosts: $(cat "$tmp/err")"
head -1 "$tmp/all.csv" | grep -qx 'host,session,time_ns,tsc,cpu,pid,tid,comm,binary,symbol,page-faults,offset,mode,build_id' ||
	fail "several hosts' header: $(head -1 "$tmp/all.csv")"
for x in "a1 $hA" "b1 $hB"; do
	set -- $x
	{ head -1 "$tmp/$1.local"; grep "^$2,1," "$tmp/all.csv" | cut -d, -f3-; } >"$tmp/cut"
	cmp "$tmp/$1.local" "$tmp/cut" || fail "$2's rows of the fleet export are not its local export"
done
[ "$(wc -l <"$tmp/all.csv")" = $(($(wc -l <"$tmp/a1.local") + $(wc -l <"$tmp/b1.local") - 1)) ] ||
	fail "several hosts: rows of neither host"
"$STROBE" export --source "$url" --host "$hA" --session 2 --host-column --format csv \
	>"$tmp/hc.csv" 2>"$tmp/err" || fail "--host-column: $(cat "$tmp/err")"
{ head -1 "$tmp/a2.local"; tail -n +2 "$tmp/hc.csv" | sed "s/^$hA,//"; } >"$tmp/cut"
head -1 "$tmp/hc.csv" | grep -q '^host,time_ns,' || fail "--host-column header: $(head -1 "$tmp/hc.csv")"
cmp "$tmp/a2.local" "$tmp/cut" || fail "--host-column: the rows are not the local export's"
# both sessions of host A: the union of their events, empty where not counted
"$STROBE" export --source "$url" --host "$hA" --format csv >"$tmp/a12.csv" 2>"$tmp/err" ||
	fail "both sessions of $hA: $(cat "$tmp/err")"
head -1 "$tmp/a12.csv" | grep -q '^session,time_ns,.*,page-faults,offset' ||
	fail "two sessions' header: $(head -1 "$tmp/a12.csv")"
python3 - "$tmp/a12.csv" <<'PY' || fail "two sessions: the page-faults column (above)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="", encoding="utf-8", errors="surrogateescape")))
s1 = [r for r in rows if r["session"] == "1"]
s2 = [r for r in rows if r["session"] == "2"]
assert s1 and s2, "rows of both sessions"
assert all(r["page-faults"] != "" for r in s1), "session 1 counted page-faults"
bad = [r for r in s2 if r["page-faults"] != ""]
assert not bad, f"session 2 did not count page-faults: {bad[:1]}"
PY
ok "several hosts: host,session columns; --host-column; two sessions: union of events"

# diff: two sessions of one host, as the local diff
dsame() {
	name=$1
	shift
	"$STROBE" diff --db "$tmp/a.db" "$@" 1 2 >"$tmp/$name.local" 2>"$tmp/$name.lerr" ||
		fail "$name: local diff: $(cat "$tmp/$name.lerr")"
	"$STROBE" diff --source "$url" --host "$hA" "$@" 1 2 >"$tmp/$name.fleet" \
		2>"$tmp/$name.ferr" || fail "$name: fleet diff: $(cat "$tmp/$name.ferr")"
	[ "$(wc -l <"$tmp/$name.local")" -gt 3 ] || fail "$name: a diff of no rows"
}
for f in csv json; do
	dsame "d-$f" --format "$f"
	cmp "$tmp/d-$f.local" "$tmp/d-$f.fleet" ||
		fail "diff --format $f differs: $(diff "$tmp/d-$f.local" "$tmp/d-$f.fleet" | head -6)"
done
dsame d-bin --by binary --format csv --limit 4
cmp "$tmp/d-bin.local" "$tmp/d-bin.fleet" || fail "diff --by binary --limit 4 differs"
# the report's filters, on both sides alike
dsame d-user --user --format csv
cmp "$tmp/d-user.local" "$tmp/d-user.fleet" || fail "diff --user differs"
dsame d-range --from 0.2 --to 0.7 --format json
cmp "$tmp/d-range.local" "$tmp/d-range.fleet" || fail "diff --from 0.2 --to 0.7 differs"
cmp -s "$tmp/d-json.local" "$tmp/d-range.local" && fail "--from/--to changed nothing: the test tests nothing"
dsame d-comm --comm split603010 --format csv
cmp "$tmp/d-comm.local" "$tmp/d-comm.fleet" || fail "diff --comm differs"
ok "diff --source with --user, --from/--to, --comm: as the local diff"
grep -q 'A counted page-faults, B did not: left out' "$tmp/d-csv.ferr" ||
	fail "fleet diff: no note on the events: $(cat "$tmp/d-csv.ferr")"
# the text: the local notes of the host's symbol lookup are not pushed
dsame d-text
grep -v '^# note: [AB] (session [0-9]*): ' "$tmp/d-text.local" >"$tmp/l"
grep -v '^# note: [AB] (session [0-9]*): ' "$tmp/d-text.fleet" >"$tmp/f"
cmp "$tmp/l" "$tmp/f" || fail "diff text differs: $(diff "$tmp/l" "$tmp/f" | head -6)"
"$STROBE" diff --source "$url" "$hA:1" "$hA:2" --format csv >"$tmp/d-hid.csv" 2>"$tmp/err" ||
	fail "HOST:ID: $(cat "$tmp/err")"
cmp "$tmp/d-csv.local" "$tmp/d-hid.csv" || fail "HOST:ID HOST:ID is not --host HOST ID ID"
ok "diff of $hA's sessions 1 and 2: csv, json, --by binary --limit, text as the local diff"

# two hosts: session 1 of each
"$STROBE" diff --source "$url" "$hA:1" "$hB:1" >"$tmp/x.txt" 2>"$tmp/err" ||
	fail "two hosts: $(cat "$tmp/err")"
grep -q "^# A: session 1 of host $hA " "$tmp/x.txt" && grep -q "^# B: session 1 of host $hB " "$tmp/x.txt" ||
	fail "two hosts: the header does not name them: $(head -2 "$tmp/x.txt")"
"$STROBE" diff --source "$url" --host "$hB" "$hA:1" 1 --format json >"$tmp/x.json" 2>"$tmp/err" ||
	fail "two hosts json: $(cat "$tmp/err")"
"$STROBE" report --db "$tmp/b.db" --session 1 --format csv --limit 0 >"$tmp/b.rep" 2>"$tmp/err" || fail "report b: $(cat "$tmp/err")"
python3 - "$tmp/x.json" "$tmp/b.rep" "$hA" "$hB" <<'PY' || fail "two hosts: json (above)"
import csv, json, sys
d = json.load(open(sys.argv[1]))
m = d["meta"]
assert m["a_host"] == sys.argv[3] and m["b_host"] == sys.argv[4], m
rep = list(csv.DictReader(open(sys.argv[2])))
n = sum(int(r["samples"]) for r in rep)
assert int(m["b_samples"]) == n, (m["b_samples"], n)
assert sum(int(r["b_samples"]) for r in d["rows"]) == n
want = {}
for r in rep:
    k = (r["binary"], r["symbol"])
    want[k] = want.get(k, 0) + int(r["samples"])
got = {(r["binary"], r["symbol"] or ""): int(r["b_samples"]) for r in d["rows"] if int(r["b_samples"])}
assert got == want, (len(got), len(want))
assert any(int(r["a_samples"]) for r in d["rows"])
print(f"  {len(d['rows'])} rows, B {n} samples as b's local report")
PY
ok "two hosts compared: named in text and json, B's side its local report"

# bad inputs: one line each
port=$(ch_free_port)
refused 1 export "cannot reach" "$STROBE" export --source "http://127.0.0.1:$port/?database=strobe" --format csv
STROBE_CLICKHOUSE_PASSWORD=wrong refused 1 export "[Pp]assword" "$STROBE" export --source "$url" --format csv
refused 1 export "no session 9 of host '$hA'" "$STROBE" export --source "$url" --host "$hA" --session 9 --format csv
refused 1 export "no session of host 'nosuch'" "$STROBE" export --source "$url" --host nosuch --format csv
refused 1 export "nothing to export: no samples of pid 1 " "$STROBE" export --source "$url" --pid 1 --format csv
refused 2 export "--format other than csv and chrome-trace is not supported" "$STROBE" export --source "$url" --format pprof
refused 2 export "--no-demangle .*is not supported" "$STROBE" export --source "$url" --format csv --no-demangle
refused 2 export "--cgroup .*is not supported" "$STROBE" export --source "$url" --format csv --cgroup /x
refused 2 export "give one of them" "$STROBE" export --source "$url" --db "$tmp/a.db" --format csv
refused 2 export "--host is of fleet exports" "$STROBE" export --db "$tmp/a.db" --host "$hA" --format csv
refused 2 export "credentials in the URL" "$STROBE" export --source "http://u:p@127.0.0.1:$port/" --format csv
refused 2 diff "A: session '1' of which host" "$STROBE" diff --source "$url" 1 2
refused 2 diff "B: bad session" "$STROBE" diff --source "$url" --host "$hA" 1 x
refused 2 diff "both session 1 of host '$hA'" "$STROBE" diff --source "$url" --host "$hA" 1 "$hA:1"
refused 2 diff "B: no session 9 of host '$hA'" "$STROBE" diff --source "$url" --host "$hA" 1 9
refused 2 diff "B: no session 1 of host 'nosuch'" "$STROBE" diff --source "$url" --host "$hA" 1 nosuch:1
refused 2 diff "--by line is not supported" "$STROBE" diff --source "$url" --host "$hA" --by line 1 2
refused 2 diff "--cgroup is not supported with --source" "$STROBE" diff --source "$url" --host "$hA" --cgroup /a 1 2
refused 2 diff "--pid PID@START is not supported" "$STROBE" diff --source "$url" --host "$hA" --pid 3@1 1 2
refused 2 diff "--host is of fleet" "$STROBE" diff --db "$tmp/a.db" --host "$hA" 1 2
refused 1 diff "cannot reach" "$STROBE" diff --source "http://127.0.0.1:$port/?database=strobe" --host h 1 2
ok "bad inputs refused with one line each"
exit 0
