#!/bin/sh
# t0810-fleet-report: 'strobe report --source' against two real ClickHouse
# servers, the two shards of cluster strobe_fleet (tests/clickhouse.sh).
# Two sessions recorded with 'strobe record --db' (one counting
# page-faults, one counting nothing) are pushed as two hosts on different
# shards.  Then, for each host's session, the fleet report in CSV, JSON,
# text, --by binary and --limit is byte for byte the local report of the
# same session ('strobe report --db'), except the text's counting-event
# lines (the fleet has no unattributed increases), notes of the host's
# symbol lookup and warnings of late records (doc/FLEET.md); the
# fleet report of both hosts sums the two local reports per (binary,
# symbol), computed from their CSVs; --by host gives each host's total;
# and bad inputs (unreachable server, wrong password, unknown host or
# session, options a fleet report does not take) fail with one line.
. "$(dirname "$0")/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
. "$(dirname "$0")/clickhouse.sh"

ch_fleet
ok "two clickhouse-server shards up, schema applied"

ch_shard_hosts

"$STROBE" record --db "$tmp/a.db" --sample-event cpu-clock -F 2000 -e page-faults -- \
	"$WL/split603010" 1 >/dev/null 2>"$tmp/rec.err" || fail "record a: $(cat "$tmp/rec.err")"
"$STROBE" record --db "$tmp/b.db" --sample-event cpu-clock -F 1500 -- \
	"$WL/split306010" 1 >/dev/null 2>"$tmp/rec.err" || fail "record b: $(cat "$tmp/rec.err")"
"$STROBE" push --db "$tmp/a.db" --to "$url" --host "$hA" >/dev/null 2>"$tmp/push.err" ||
	fail "push a: $(cat "$tmp/push.err")"
"$STROBE" push --db "$tmp/b.db" --to "$url" --host "$hB" >/dev/null 2>"$tmp/push.err" ||
	fail "push b: $(cat "$tmp/push.err")"
ok "pushed session 1 of $hA (a.db, counting page-faults) and of $hB (b.db)"

# The text of the local report has notes of what the host's symbol
# lookup found (stripped binaries, debug files), and may warn of records
# that reached strobed late (and maps made uncertain by them), which push
# does not send: those lines are left out of the comparison (doc/FLEET.md).
localonly() {
	grep -v -e '^# note: ' -e '^# WARNING: [0-9]* records reached strobed more than' \
		-e '^# WARNING: the maps of [0-9]* process' "$1"
}
# same NAME: the local report of DB and the fleet's of HOST with ARGS
same() {
	name=$1 db=$2 h=$3
	shift 3
	"$STROBE" report --db "$db" --session 1 "$@" >"$tmp/$name.local" 2>"$tmp/err" ||
		fail "$name: local report: $(cat "$tmp/err")"
	"$STROBE" report --source "$url" --host "$h" --session 1 "$@" >"$tmp/$name.fleet" \
		2>"$tmp/err" || fail "$name: fleet report: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/$name.local")" -gt 2 ] || fail "$name: a report of no rows"
}
for x in "a $hA" "b $hB"; do
	set -- $x
	db=$tmp/$1.db h=$2
	for f in csv json; do
		same "$1-$f" "$db" "$h" --format "$f" --limit 0
		cmp "$tmp/$1-$f.local" "$tmp/$1-$f.fleet" ||
			fail "$h: --format $f differs: $(diff "$tmp/$1-$f.local" "$tmp/$1-$f.fleet" | head -8)"
	done
	same "$1-bin" "$db" "$h" --by binary --format csv
	cmp "$tmp/$1-bin.local" "$tmp/$1-bin.fleet" ||
		fail "$h: --by binary differs: $(diff "$tmp/$1-bin.local" "$tmp/$1-bin.fleet" | head -8)"
	same "$1-text" "$db" "$h"
	same "$1-btext" "$db" "$h" --by binary --limit 3
	for t in text btext; do
		localonly "$tmp/$1-$t.local" | grep -v -e '^# page-faults: ' >"$tmp/l"
		grep -v -e '^# page-faults: ' "$tmp/$1-$t.fleet" >"$tmp/f"
		cmp "$tmp/l" "$tmp/f" || fail "$h: text differs: $(diff "$tmp/l" "$tmp/f" | head -8)"
	done
	ok "$h: csv, json, text (but for the counting-event line and the local notes), --by binary, --limit as the local report ($(($(wc -l <"$tmp/$1-csv.local") - 1)) rows)"
done
localonly "$tmp/b-text.local" | cmp -s - "$tmp/b-text.fleet" || fail "$hB: text differs"
grep -q '^# page-faults: [0-9]* attributed' "$tmp/a-text.fleet" ||
	fail "$hA: no page-faults line in the fleet's text"
n=$(grep -c '^page-faults' "$tmp/a-csv.fleet"; true)
head -1 "$tmp/a-csv.fleet" | grep -q ',page-faults$' || fail "$hA: no page-faults column"
ok "$hB (no counting event): text byte for byte but for the local notes; $hA: page-faults column and attributed line"

# the fleet, both hosts: the sum of the two local reports per (binary, symbol)
"$STROBE" report --source "$url" --format csv --limit 0 >"$tmp/all.csv" 2>"$tmp/err" ||
	fail "fleet report: $(cat "$tmp/err")"
python3 - "$tmp/a-csv.local" "$tmp/b-csv.local" "$tmp/all.csv" <<'PY' || fail "the fleet report is not the sum of the local ones (above)"
import collections, csv, sys
def load(p):
    d = collections.defaultdict(lambda: [0, 0])
    for r in csv.DictReader(open(p, newline="", encoding="utf-8", errors="surrogateescape")):
        v = d[(r["binary"], r["build_id"], r["symbol"])]
        v[0] += int(r["samples"])
        v[1] += int(r.get("page-faults") or 0)
    return d
a, b, f = load(sys.argv[1]), load(sys.argv[2]), load(sys.argv[3])
want = collections.defaultdict(lambda: [0, 0])
for d in (a, b):
    for k, v in d.items():
        want[k][0] += v[0]; want[k][1] += v[1]
bad = [k for k in set(want) | set(f) if want[k] != f[k]]
for k in sorted(bad)[:8]:
    print(f"  {k}: local sum {want[k]}, fleet {f[k]}")
shared = len(set(a) & set(b))
print(f"  {len(want)} (binary, symbol) rows, {sum(v[0] for v in want.values())} samples, {shared} in both")
sys.exit(1 if bad or not want or not shared else 0)
PY
ok "the fleet report sums the two local reports (per binary and symbol, samples and page-faults)"
# --session 1 without --host: session 1 of every host, here all there is
"$STROBE" report --source "$url" --session 1 --format csv --limit 0 >"$tmp/s1.csv" 2>"$tmp/err" ||
	fail "--session 1: $(cat "$tmp/err")"
cmp "$tmp/all.csv" "$tmp/s1.csv" || fail "--session 1 without --host is not session 1 of both hosts"
"$STROBE" report --source "$url" --limit 5 >"$tmp/all.txt" 2>"$tmp/err" || fail "fleet text: $(cat "$tmp/err")"
nA=$(sqlite3 "$tmp/a.db" "SELECT samples + lost * 1000000000 FROM sessions WHERE id = 1")
nB=$(sqlite3 "$tmp/b.db" "SELECT samples + lost * 1000000000 FROM sessions WHERE id = 1")
n=$((nA + nB))
grep -q "^# fleet: 2 sessions of 2 hosts, $((n % 1000000000)) samples, $((n / 1000000000)) lost; counting: page-faults\$" "$tmp/all.txt" ||
	fail "fleet text header: $(head -3 "$tmp/all.txt")"
ok "--session 1 of every host; text header: $(head -1 "$tmp/all.txt")"

# --by host: each host's total samples
"$STROBE" report --source "$url" --by host --format csv >"$tmp/hosts.csv" 2>"$tmp/err" ||
	fail "--by host: $(cat "$tmp/err")"
for x in "a $hA" "b $hB"; do
	set -- $x
	n=$(sqlite3 "$tmp/$1.db" "SELECT count(*) FROM samples WHERE session_id = 1" 2>/dev/null ||
		sqlq "$tmp/$1.db" "SELECT count(*) FROM samples WHERE session_id = 1")
	grep -q "^$2,$n," "$tmp/hosts.csv" || fail "--by host: $2 should have $n samples: $(cat "$tmp/hosts.csv")"
done
[ "$(wc -l <"$tmp/hosts.csv")" = 3 ] || fail "--by host: not 2 rows: $(cat "$tmp/hosts.csv")"
head -1 "$tmp/hosts.csv" | grep -qx 'host,samples,percent,page-faults' ||
	fail "--by host columns: $(head -1 "$tmp/hosts.csv")"
ok "--by host: $(tail -n +2 "$tmp/hosts.csv" | cut -d, -f1,2 | tr '\n' ' ')"

# bad inputs: one line each
port=$(ch_free_port)
refused 1 report "cannot reach" "$STROBE" report --source "http://127.0.0.1:$port/?database=strobe"
STROBE_CLICKHOUSE_PASSWORD=wrong refused 1 report "[Pp]assword" "$STROBE" report --source "$url"
refused 1 report "no session of host 'nosuch'" "$STROBE" report --source "$url" --host nosuch
refused 1 report "no session 99 of host '$hA'" "$STROBE" report --source "$url" --host "$hA" --session 99
refused 1 report "no session of host 'a'b'" "$STROBE" report --source "$url" --host "a'b"
refused 1 report "no session 99 of any host" "$STROBE" report --source "$url" --session 99
refused 2 report "--by line is not supported" "$STROBE" report --source "$url" --by line
refused 2 report "--inline is not" "$STROBE" report --source "$url" --inline
refused 2 report "--children is not" "$STROBE" report --source "$url" --children
refused 2 report "--callers/--callees is not" "$STROBE" report --source "$url" --callers main
refused 2 report "--cgroup is not" "$STROBE" report --source "$url" --cgroup /system.slice/
refused 2 report "give one of them" "$STROBE" report --source "$url" --db "$tmp/a.db"
refused 2 report "credentials in the URL" "$STROBE" report --source "http://u:p@127.0.0.1:$port/"
refused 2 report "give --source" "$STROBE" report --db "$tmp/a.db" --host "$hA"
ok "bad inputs refused with one line each"

# lost samples and throttling: the text's warnings as the local report's
# (a copy of b.db given lost rows, pushed as a third host)
for f in "$tmp"/b.db*; do	# with its binary cache, b.db.cache
	cp -a "$f" "$tmp/c.db${f#"$tmp/b.db"}" || fail "copy $f"
done
python3 - "$tmp/c.db" <<'PY' || fail "adding lost rows"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
start, = db.execute("SELECT start_ns FROM sessions WHERE id = 1").fetchone()
for cpu, n, kind in ((1, 5, "ring"), (0, 17, "ring"), (0, 3, "throttle"), (2, 0, "ring")):
    db.execute("INSERT INTO lost (session_id, cpu, time_ns, count, kind) VALUES (1, ?, ?, ?, ?)",
               (cpu, start + 1000 * n, n, kind))
db.execute("UPDATE sessions SET lost = 25, throttled = 2 WHERE id = 1")
db.commit()
PY
"$STROBE" push --db "$tmp/c.db" --to "$url" --host lossy >/dev/null 2>"$tmp/push.err" ||
	fail "push c: $(cat "$tmp/push.err")"
same c-text "$tmp/c.db" lossy
localonly "$tmp/c-text.local" | cmp -s - "$tmp/c-text.fleet" ||
	fail "lossy: text differs: $(localonly "$tmp/c-text.local" | diff - "$tmp/c-text.fleet" | head -8)"
grep -q '^# WARNING: 25 samples lost (ring buffer full on CPUs 0 (17), 1 (5); throttled on CPU 0)' \
	"$tmp/c-text.fleet" || fail "lossy: no lost warning: $(grep WARNING "$tmp/c-text.fleet")"
grep -q '^# WARNING: the kernel throttled sampling 2 times' "$tmp/c-text.fleet" ||
	fail "lossy: no throttling warning"
same c-csv "$tmp/c.db" lossy --format csv
grep -q "^strobe report: WARNING: 25 samples lost (ring" "$tmp/err" ||
	fail "lossy csv: no lost warning on stderr: $(cat "$tmp/err")"
ok "lost samples and throttling: the same warnings as the local report"
exit 0
