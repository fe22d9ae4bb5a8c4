#!/bin/sh
# t0800-push: 'strobe push' into two real ClickHouse servers, the two
# shards of cluster strobe_fleet behind the Distributed tables
# (tests/clickhouse.sh, schema/clickhouse/).  Two real sessions recorded
# with 'strobe record --db' into two databases (the second of a workload
# whose file name, and so comm, holds a tab, a backslash and a newline)
# are pushed as two hosts that land on different shards.  Then, for each,
# the fleet's sample count, per-(binary, symbol) sample counts and
# page-fault sums, per-comm counts and marker-free counter sums equal what
# the local database says (strobe report --format csv and sqlite3), each
# host's rows are on one shard only, each sampled location's symbol is
# stored once though both hosts sampled it, and a second push sends nothing:
# every count and every shard's parts stay as they were.
. "$(dirname "$0")/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
. "$(dirname "$0")/clickhouse.sh"

ch_fleet
ok "two clickhouse-server shards up, schema applied"

# two host names on different shards (cityHash64(host) % 2, as the
# Distributed tables shard)
ch_shard_hosts

hostile=$(printf '%s/w\tx\\y\nz' "$tmp")
cp "$WL/split603010" "$hostile" || fail "copy the workload"
"$STROBE" record --db "$tmp/a.db" --sample-event cpu-clock -F 2000 -e page-faults -- \
	"$WL/split603010" 1 >/dev/null 2>"$tmp/rec.err" || fail "record a: $(cat "$tmp/rec.err")"
"$STROBE" record --db "$tmp/b.db" --sample-event cpu-clock -F 1500 -e page-faults \
	-e context-switches -- "$hostile" 1 >/dev/null 2>"$tmp/rec.err" ||
	fail "record b: $(cat "$tmp/rec.err")"

"$STROBE" push --db "$tmp/a.db" --to "$url" --host "$hA" >"$tmp/pushA.out" 2>"$tmp/pushA.err" ||
	fail "push a: $(cat "$tmp/pushA.err")"
grep -q "^session 1 of host $hA: sent " "$tmp/pushA.out" || fail "push a said: $(cat "$tmp/pushA.out")"
"$STROBE" push --db "$tmp/b.db" --to "$url" --host "$hB" --session 1 >"$tmp/pushB.out" \
	2>"$tmp/pushB.err" || fail "push b: $(cat "$tmp/pushB.err")"
[ -s "$tmp/pushA.err" ] && fail "push a wrote on stderr: $(cat "$tmp/pushA.err")"
ok "pushed $hA (a.db) and $hB (b.db)"

# compare DB HOST: the fleet's view of session 1 of HOST against DB
compare() {
	db=$1 h=$2
	"$STROBE" report --db "$db" --format csv --limit 0 >"$tmp/local.csv" 2>/dev/null ||
		fail "report $db"
	sqlite3 "$db" "SELECT idx, name FROM session_events WHERE session_id = 1" >"$tmp/events"
	ch_q 1 "SELECT name, symbol, count(), sum(c0), sum(c1), sum(c2), sum(c3), sum(c4),
			sum(c5), sum(c6), sum(c7) FROM
		(SELECT * FROM strobe.samples
		GLOBAL ANY LEFT JOIN (SELECT binary_key, offset, any(symbol) AS symbol
			FROM strobe.symbols GROUP BY binary_key, offset) USING (binary_key, offset)
		WHERE host = '$h' AND session = 1)
		GLOBAL ANY LEFT JOIN (SELECT binary_id, name FROM strobe.binaries
			WHERE host = '$h' AND session = 1) USING (binary_id)
		GROUP BY name, symbol FORMAT TabSeparated" >"$tmp/fleet.tsv"
	python3 - "$tmp/local.csv" "$tmp/fleet.tsv" "$tmp/events" <<'PY' || fail "$h: per-symbol counts differ (above)"
import collections, csv, sys
events = {}
for line in open(sys.argv[3]).read().splitlines():
    i, name = line.split("|", 1)
    events[name] = int(i)
rows = list(csv.DictReader(open(sys.argv[1], newline="", encoding="utf-8", errors="surrogateescape")))
cols = [c for c in (rows[0].keys() if rows else []) if c in events]
assert cols, "no counter column in the report"
loc = collections.defaultdict(lambda: [0] * 9)
for r in rows:
    if int(r["samples"]) == 0:
        continue
    v = loc[(r["binary"], r["symbol"])]
    v[0] += int(r["samples"])
    for c in cols:
        v[1 + events[c]] += int(r[c] or 0)
def unesc(f):	# ClickHouse's TabSeparated escapes
    m = {"t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", "0": "\0", "\\": "\\", "'": "'"}
    o, i = [], 0
    while i < len(f):
        if f[i] == "\\" and i + 1 < len(f):
            o.append(m.get(f[i + 1], f[i + 1])); i += 2
        else:
            o.append(f[i]); i += 1
    return "".join(o)
fl = collections.defaultdict(lambda: [0] * 9)
for line in open(sys.argv[2], encoding="utf-8", errors="surrogateescape").read().split("\n"):
    if not line:
        continue
    f = [unesc(x) for x in line.split("\t")]
    v = fl[(f[0], f[1])]
    for i in range(9):
        v[i] += int(f[2 + i])
shown = [0] + [1 + events[c] for c in cols]
bad = 0
for k in sorted(set(loc) | set(fl)):
    a = [loc[k][i] for i in shown]
    b = [fl[k][i] for i in shown]
    if a != b:
        print(f"  {k}: local {a}, fleet {b} (samples, {', '.join(cols)})")
        bad += 1
print(f"  {len(loc)} (binary, symbol) rows, {sum(v[0] for v in loc.values())} samples, counters {', '.join(cols)}")
sys.exit(1 if bad or not loc else 0)
PY
	n=$(sqlq "$db" "SELECT count(*) FROM samples WHERE session_id = 1")
	s=$(sqlite3 "$db" "SELECT samples FROM sessions WHERE id = 1")
	f=$(ch_q 1 "SELECT count() FROM strobe.samples WHERE host = '$h' AND session = 1")
	[ "$n" -gt 0 ] && [ "$n" = "$f" ] && [ "$s" = "$f" ] ||
		fail "$h: $n samples in SQLite (sessions.samples $s), $f in the fleet"
	l=$(sqlq "$db" "SELECT sum(c0), sum(coalesce(c1, 0)), sum(period) FROM samples WHERE session_id = 1" | tr '|' ' ')
	r=$(ch_q 1 "SELECT sum(c0), sum(c1), sum(period) FROM strobe.samples WHERE host = '$h' AND session = 1" | tr '\t' ' ')
	[ "$l" = "$r" ] || fail "$h: counter sums $l in SQLite, $r in the fleet"
	sqlq "$db" "SELECT hex(coalesce(c.name, '')), count(*) FROM samples s LEFT JOIN comms c ON c.id = s.comm_id
		WHERE s.session_id = 1 GROUP BY 1 ORDER BY 1" | tr '|' ' ' >"$tmp/comm.local"
	ch_q 1 "SELECT hex(comm), count() FROM strobe.samples WHERE host = '$h' AND session = 1
		GROUP BY comm ORDER BY hex(comm)" | tr '\t' ' ' >"$tmp/comm.fleet"
	cmp -s "$tmp/comm.local" "$tmp/comm.fleet" ||
		fail "$h: per-comm counts differ: $(diff "$tmp/comm.local" "$tmp/comm.fleet" | head -5)"
	# the aggregates of schema 2: the same per comm, and the same sums
	ch_q 1 "SELECT hex(comm), sum(n) FROM strobe.samples_by_loc WHERE host = '$h' AND session = 1
		GROUP BY comm ORDER BY hex(comm)" | tr '\t' ' ' >"$tmp/comm.agg"
	cmp -s "$tmp/comm.local" "$tmp/comm.agg" ||
		fail "$h: per-comm sums of samples_by_loc differ: $(diff "$tmp/comm.local" "$tmp/comm.agg" | head -5)"
	for t in samples_by_loc samples_by_time; do
		a=$(ch_q 1 "SELECT sum(n), sum(c0), sum(c1), sum(period) FROM strobe.$t WHERE host = '$h' AND session = 1" | tr '\t' ' ')
		[ "$a" = "$f $r" ] || fail "$h: $t sums (n, c0, c1, period) $a, the samples $f $r"
	done
	np=$(sqlite3 "$db" "SELECT count(*) FROM processes WHERE session_id = 1")
	fp=$(ch_q 1 "SELECT count() FROM strobe.processes WHERE host = '$h' AND session = 1")
	[ "$np" = "$fp" ] || fail "$h: $np processes in SQLite, $fp in the fleet"
	ok "$h: $f samples, counters ($r), $(wc -l <"$tmp/comm.local") comms, $np processes as in $(basename "$db"); the aggregates sum to the same"
}
compare "$tmp/a.db" "$hA"
compare "$tmp/b.db" "$hB"

# the hostile comm arrived byte for byte
want=$(printf 'w\tx\\y\nz' | od -An -tx1 | tr -d ' \n' | tr a-f A-F)
ch_q 1 "SELECT hex(comm) FROM strobe.samples WHERE host = '$hB' GROUP BY comm" | grep -qx "$want" ||
	fail "the comm with a tab, backslash and newline did not arrive as it is"
ok "a comm with a tab, a backslash and a newline kept as it is"

# each host on one shard: its samples in one shard's local table only
a1=$(ch_q 1 "SELECT count() FROM strobe.samples_local WHERE host = '$hA'")
a2=$(ch_q 2 "SELECT count() FROM strobe.samples_local WHERE host = '$hA'")
b1=$(ch_q 1 "SELECT count() FROM strobe.samples_local WHERE host = '$hB'")
b2=$(ch_q 2 "SELECT count() FROM strobe.samples_local WHERE host = '$hB'")
[ "$a1" -gt 0 ] && [ "$a2" = 0 ] && [ "$b1" = 0 ] && [ "$b2" -gt 0 ] ||
	fail "hosts not sharded: $hA $a1/$a2, $hB $b1/$b2 samples on shards 1/2"
ok "$hA on shard 1 only ($a1 samples), $hB on shard 2 only ($b2)"

# symbols: each (key, offset) once in the fleet, though both hosts sampled
# the same binaries (the kernel, libc, split603010 and its copy)
shared=$(ch_q 1 "SELECT count() FROM (SELECT binary_key, offset FROM strobe.samples WHERE host = '$hA'
	GROUP BY binary_key, offset) WHERE (binary_key, offset) IN (SELECT binary_key, offset
	FROM strobe.samples WHERE host = '$hB' GROUP BY binary_key, offset)")
pairs=$(ch_q 1 "SELECT count() FROM (SELECT DISTINCT binary_key, offset FROM strobe.samples)")
r1=$(ch_q 1 "SELECT count() FROM strobe.symbols_local")
r2=$(ch_q 2 "SELECT count() FROM strobe.symbols_local")
[ "$shared" -gt 0 ] || fail "the two hosts share no sampled location: nothing to check"
[ $((r1 + r2)) = "$pairs" ] ||
	fail "$((r1 + r2)) symbol rows for $pairs sampled locations ($shared shared by both hosts)"
ok "$pairs symbol rows for $pairs sampled locations, $shared of them sampled by both hosts"

# pushing again sends nothing and changes nothing
state() {
	for n in 1 2; do
		ch_parts $n table "database = 'strobe'"
		ch_q $n "SELECT count() FROM strobe.symbols_local"
	done
}
state >"$tmp/state1"
"$STROBE" push --db "$tmp/a.db" --to "$url" --host "$hA" >"$tmp/again.out" 2>"$tmp/again.err" ||
	fail "push a again: $(cat "$tmp/again.err")"
"$STROBE" push --db "$tmp/b.db" --to "$url" --host "$hB" >>"$tmp/again.out" 2>>"$tmp/again.err" ||
	fail "push b again: $(cat "$tmp/again.err")"
grep -q "^session 1 of host $hA: already pushed" "$tmp/again.out" &&
	grep -q "^session 1 of host $hB: already pushed" "$tmp/again.out" &&
	grep -q "^pushed 0 of 1 sessions: 0 of " "$tmp/again.out" ||
	fail "the second push said: $(cat "$tmp/again.out")"
state >"$tmp/state2"
cmp -s "$tmp/state1" "$tmp/state2" || fail "the second push changed the servers: $(diff "$tmp/state1" "$tmp/state2")"
compare "$tmp/a.db" "$hA"
ok "pushing again sent nothing: every table's parts and rows as they were"
exit 0
