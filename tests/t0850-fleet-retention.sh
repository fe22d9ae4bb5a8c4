#!/bin/sh
# t0850-fleet-retention: 'strobe prune' on the two real shards of
# strobe_fleet.  A real session is recorded and pushed as two hosts (one on
# each shard, in batches of 50 rows); then copies of each host's rows are
# made old in every partitioned table with clickhouse-client (T = today,
# UTC; --older-than 3d, so the cutoff C is T-3):
#   12 of hA over T-4..T-3 spans the cutoff: kept whole, the boundary B
#     moves to T-4;
#   13 of hB over T-5..T-4 ends before C but spans T-4: kept, B to T-5;
#   17 of hA, its rows on T-6 on shard 1 and on T-5 on shard 2 (as if hA
#     had moved shard): one session over T-6..T-5, kept, B to T-6;
#   16 of hA over T-7..T-6: kept, B to T-7;
#   14 of hB on T-6 is then kept too (its day is not before B);
#   11 of hA on T-10 and 18 of hB on T-8: dropped.
# Checked: the dry run lists exactly that and changes nothing; the prune
# leaves exactly the partitions from T-5 on and the sessions 1, 12 of hA
# and 1, 13 of hB, each whole (every table's rows as session 1's); symbols
# untouched; 'report --source' of the kept sessions equals the local
# report; pushing again sends nothing; pruning again drops nothing; bad
# input fails in one line (age, a shard missing or given twice, an
# unreachable server, a wrong password, another schema version) and
# changes nothing.
. "$(dirname "$0")/lib.sh"
need_root
. "$(dirname "$0")/clickhouse.sh"

ch_fleet
ch_shard_hosts
url2=$(ch_url 2)
tables="sessions_local intervals_local samples_local samples_by_loc_local samples_by_time_local markers_local lost_local processes_local binaries_local"

# the partitioned tables of the schema are prune's
got=$(ch_q 1 "SELECT table FROM system.columns WHERE database = 'strobe' AND name = 'day'
	AND table LIKE '%\\_local' ORDER BY table" | tr '\n' ' ')
want=$(echo $tables | tr ' ' '\n' | sort | tr '\n' ' ')
[ "$got" = "$want" ] || fail "the schema's partitioned tables are '$got', prune drops '$want'"

"$STROBE" record --db "$tmp/a.db" --sample-event cpu-clock -F 2000 -- "$WL/split603010" 1 \
	>/dev/null 2>"$tmp/rec.err" || fail "record: $(cat "$tmp/rec.err")"
for h in "$hA" "$hB"; do
	STROBE_PUSH_BATCH_ROWS=50 "$STROBE" push --db "$tmp/a.db" --to "$url" --host "$h" \
		>/dev/null 2>"$tmp/err" || fail "push as $h: $(cat "$tmp/err")"
done
ok "one session pushed as $hA (shard 1) and $hB (shard 2)"

now=$(date -u +%s)
today=$((now / 86400))
day() { date -u -d "@$(((today - $1) * 86400))" +%F; }
pid() { date -u -d "@$(((today - $1) * 86400))" +%Y%m%d; }

# copy N HOST NEW A B [AS]: session 1 of HOST (on shard N) as session NEW
# (of host AS), its rows of even batches on day T-A, the others on T-B
copy() {
	for t in $tables; do
		cols= sel=
		for c in $(ch_q "$1" "SELECT name FROM system.columns WHERE database = 'strobe'
				AND table = '$t'"); do
			case $c in
			session) e="toInt64($3)" ;;
			host) e="'${6:-$2}'" ;;
			day) if [ "$t" = intervals_local ]; then e="toDate('$(day "$4")')"
				else e="if(batch % 2 = 0, toDate('$(day "$4")'), toDate('$(day "$5")'))"; fi ;;
			*) e=$c ;;
			esac
			cols=$cols${cols:+, }$c sel=$sel${sel:+, }$e
		done
		ch_q "$1" "INSERT INTO strobe.$t ($cols) SELECT $sel FROM strobe.$t
			WHERE host = '$2' AND session = 1"
	done
}
copy 1 "$hA" 11 10 10
copy 1 "$hA" 16 7 6
copy 1 "$hA" 12 4 3
copy 1 "$hA" 17 6 6
copy 2 "$hB" 17 5 5 "$hA"
copy 2 "$hB" 13 5 4
copy 2 "$hB" 14 6 6
copy 2 "$hB" 18 8 8
# each copy spans the days it should
for x in "1 $hA 11 10 10" "1 $hA 16 7 6" "1 $hA 12 4 3" "1 $hA 17 6 6" "2 $hA 17 5 5" \
	"2 $hB 13 5 4" "2 $hB 14 6 6" "2 $hB 18 8 8"; do
	set -- $x
	d=$(ch_q "$1" "SELECT toString(min(day)), toString(max(day)) FROM strobe.samples_local
		WHERE host = '$2' AND session = $3" | tr '\t' ' ')
	lo=$(day "$4") hi=$(day "$5")
	[ "$d" = "$(day "$4") $(day "$5")" ] || fail "copy $3 of $2 spans $d, not $lo $hi"
done
ok "old copies: $hA 11 on $(day 10), 16 on $(day 7)..$(day 6), 12 on $(day 4)..$(day 3), 17 on $(day 6) (shard 1) and $(day 5) (shard 2); $hB 13 on $(day 5)..$(day 4), 14 on $(day 6), 18 on $(day 8)"

# state: every shard's active parts of the strobe tables and symbols' rows
state() {
	for n in 1 2; do
		ch_parts $n "table, partition_id" "database = 'strobe'"
		ch_q $n "SELECT count() FROM strobe.symbols_local"
	done
}
# sessions N: "HOST SESSION" of every row of every table of shard N
sessions() {
	for t in $tables; do
		ch_q "$1" "SELECT DISTINCT host, session FROM strobe.$t"
	done | tr '\t' ' ' | LC_ALL=C sort -u | tr '\n' ' '
}
# expect "HOST SESSION"...: as sessions() prints them
expect() { printf '%s\n' "$@" | LC_ALL=C sort -u | tr '\n' ' '; }
# partitions N: the partition ids of shard N's tables
partitions() {
	ch_q "$1" "SELECT DISTINCT partition_id FROM system.parts WHERE database = 'strobe'
		AND active AND table != 'schema_version' AND table != 'symbols_local'
		ORDER BY partition_id" | tr '\n' ' '
}

symbols() { echo "$(ch_q 1 'SELECT count() FROM strobe.symbols_local') $(ch_q 2 'SELECT count() FROM strobe.symbols_local')"; }
sym0=$(symbols)

# bad input: one line, the exit status, nothing changed
state >"$tmp/state0"
P() { "$STROBE" prune "$@"; }
for a in -3d 3 3h 0d garbage 3.5d 99999d ""; do
	refused 2 prune "bad --older-than '$a'" P --source "$url" --source "$url2" --older-than "$a"
done
refused 2 prune "no --source" P --older-than 3d
refused 2 prune "no --older-than" P --source "$url"
refused 2 prune "credentials" P --source "http://default:x@127.0.0.1:1/?database=strobe" --older-than 3d
refused 2 prune "unexpected argument" P --source "$url" --older-than 3d extra
refused 1 prune "shard 2 of strobe_fleet \(2 servers\) was not given" P --source "$url" --older-than 3d
refused 1 prune "shard 1 of strobe_fleet \(2 servers\) was not given" P --source "$url2" --older-than 3d
refused 1 prune "are the same server of strobe_fleet \(shard 1" P --source "$url" --source "$url" \
	--older-than 3d
port=$(ch_free_port)
refused 1 prune "^strobe prune: http://127.0.0.1:$port/.*: .*(reach|connect)" P --source "$url" \
	--source "http://127.0.0.1:$port/?database=strobe" --older-than 3d
STROBE_CLICKHOUSE_PASSWORD=wrong-pw refused 1 prune "[Pp]assword" P --source "$url" \
	--source "$url2" --older-than 3d
grep -q "wrong-pw\|$CH_PASSWORD" "$tmp/err" && fail "a password in the message: $(cat "$tmp/err")"
for n in 1 2; do
	ch_q $n "CREATE DATABASE IF NOT EXISTS strobe_v2"
	for f in "$top"/schema/clickhouse/001-*.sql "$top"/schema/clickhouse/002-*.sql; do
		clickhouse-client --host 127.0.0.1 --port "$(ch_tcp_port $n)" --user default \
			--password "$CH_PASSWORD" --database strobe_v2 --multiquery <"$f" ||
			fail "schema 2 on $n"
	done
done
refused 1 prune "strobe_v2: .*schema version 2, this strobe writes version 3" P \
	--source "$(ch_url 1 strobe_v2)" --source "$(ch_url 2 strobe_v2)" --older-than 3d
state >"$tmp/state1"
cmp -s "$tmp/state0" "$tmp/state1" || fail "bad input changed the servers: $(diff "$tmp/state0" "$tmp/state1")"
ok "bad ages, a missing or doubled shard, an unreachable server, a wrong password, schema 2: one line each, nothing changed"

# the dry run: what would go, nothing gone
P --source "$url2" --source "$url" --older-than 3d --dry-run >"$tmp/dry" 2>"$tmp/err" ||
	fail "dry run: $(cat "$tmp/err")"
[ -s "$tmp/err" ] && fail "dry run wrote on stderr: $(cat "$tmp/err")"
state >"$tmp/state2"
cmp -s "$tmp/state0" "$tmp/state2" || fail "the dry run changed the servers: $(diff "$tmp/state0" "$tmp/state2")"
head -1 "$tmp/dry" | grep -qx "cutoff $(day 3) (3 days before $(day 0), UTC); session 16 of host $hA spans $(day 7) to $(day 6) and is kept whole: would drop the days before $(day 7)" ||
	fail "dry run's first line: $(head -1 "$tmp/dry")"
grep '^session ' "$tmp/dry" >"$tmp/dry.sessions"
printf 'session 11 of host %s (%s to %s): would be dropped\nsession 18 of host %s (%s to %s): would be dropped\n' \
	"$hA" "$(day 10)" "$(day 10)" "$hB" "$(day 8)" "$(day 8)" |
	sort >"$tmp/want.sessions"
sort "$tmp/dry.sessions" | cmp -s - "$tmp/want.sessions" ||
	fail "dry run's sessions: $(cat "$tmp/dry.sessions")"
# shard 1 has its old day T-10 in each table with rows; shard 2 T-8
for x in "1 $url 10" "2 $url2 8"; do
	set -- $x
	n=$1 u=$2
	shift 2
	for d in "$@"; do
		for t in sessions_local samples_local samples_by_loc_local samples_by_time_local processes_local binaries_local; do
			rows=$(ch_q $n "SELECT count() FROM strobe.$t WHERE day = '$(day "$d")'")
			[ "$rows" = 0 ] && continue
			grep -q "^shard $n ($u): would drop $t partition $(pid "$d"): [0-9]* parts, $rows rows\$" "$tmp/dry" ||
				fail "dry run does not list $t $(pid "$d") of shard $n ($rows rows): $(grep "^shard" "$tmp/dry" | head -5)"
		done
	done
done
tail -1 "$tmp/dry" | grep -q "^dry run: would drop [0-9]* partitions ([0-9]* parts, [0-9]* rows) on 2 servers: 2 sessions\$" ||
	fail "dry run's last line: $(tail -1 "$tmp/dry")"
[ "$(grep -c '^shard' "$tmp/dry")" = "$(($(ch_q 1 "SELECT count() FROM (SELECT DISTINCT table, partition_id FROM system.parts
	WHERE database = 'strobe' AND active AND partition_id = '$(pid 10)')") + $(ch_q 2 "SELECT count() FROM (SELECT DISTINCT table, partition_id FROM system.parts
	WHERE database = 'strobe' AND active AND partition_id = '$(pid 8)')")))" ] || fail "dry run lists other partitions: $(grep '^shard' "$tmp/dry")"
ok "dry run: boundary $(day 7), sessions $hA 11 and $hB 18, $(grep -c '^shard' "$tmp/dry") partitions listed; nothing changed"

# the prune
P --source "$url" --source "$url2" --older-than 3d >"$tmp/prune" 2>"$tmp/err" ||
	fail "prune: $(cat "$tmp/err")"
[ -s "$tmp/err" ] && fail "prune wrote on stderr: $(cat "$tmp/err")"
sed -e 's/^dry run: would drop/dropped/' -e 's/would be dropped$/dropping/' \
	-e 's/: would drop the days/: dropping the days/' -e 's/): would drop /): dropped /' \
	"$tmp/dry" | sort >"$tmp/want.prune"
# (the dry run had the servers the other way round: its lines in another order)
sort "$tmp/prune" | cmp -s "$tmp/want.prune" - || fail "the prune did not do what the dry run said: $(sort "$tmp/prune" | diff "$tmp/want.prune" - | head -8)"
p1=$(partitions 1) p2=$(partitions 2)
[ "$p1" = "$(pid 7) $(pid 6) $(pid 4) $(pid 3) $(pid 0) " ] || fail "shard 1 keeps partitions $p1"
[ "$p2" = "$(pid 6) $(pid 5) $(pid 4) $(pid 0) " ] || fail "shard 2 keeps partitions $p2"
s1=$(sessions 1) s2=$(sessions 2)
[ "$s1" = "$(expect "$hA 1" "$hA 12" "$hA 16" "$hA 17")" ] || fail "shard 1 keeps sessions $s1"
[ "$s2" = "$(expect "$hA 17" "$hB 1" "$hB 13" "$hB 14")" ] || fail "shard 2 keeps sessions $s2"
# the kept copies whole: every table's rows as those of the session 1
# they copy (17 on shard 2: hB's)
for x in "1 $hA 12" "1 $hA 16" "1 $hA 17" "2 $hB 13" "2 $hB 14" "2 $hB 17 $hA"; do
	set -- $x
	for t in $tables; do
		a=$(ch_q "$1" "SELECT count() FROM strobe.$t WHERE host = '$2' AND session = 1")
		b=$(ch_q "$1" "SELECT count() FROM strobe.$t WHERE host = '${4:-$2}' AND session = $3")
		[ "$a" = "$b" ] || fail "$t: session $3 of ${4:-$2} on shard $1 has $b rows, the copied $a"
	done
done
[ "$(symbols)" = "$sym0" ] || fail "symbols_local changed: $sym0 rows before, $(symbols) after"
ok "pruned: partitions $p1 on shard 1, $p2 on shard 2; sessions $s1 $s2 whole; symbols kept"

# the kept sessions as the local report
for x in "$hA 1" "$hA 12" "$hA 16" "$hB 1" "$hB 13" "$hB 14"; do
	set -- $x
	"$STROBE" report --db "$tmp/a.db" --session 1 --format csv --limit 0 >"$tmp/l.csv" 2>"$tmp/err" ||
		fail "local report: $(cat "$tmp/err")"
	"$STROBE" report --source "$url" --host "$1" --session "$2" --format csv --limit 0 \
		>"$tmp/f.csv" 2>"$tmp/err" || fail "fleet report of $1 $2: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/l.csv")" -gt 2 ] || fail "a local report of no rows"
	cmp -s "$tmp/l.csv" "$tmp/f.csv" || fail "report of $1 $2 differs: $(diff "$tmp/l.csv" "$tmp/f.csv" | head -6)"
done
ok "report --source of $hA 1, 12, 16 and $hB 1, 13, 14 equals the local report"

# pushing again sends nothing; pruning again drops nothing
state >"$tmp/state3"
for h in "$hA" "$hB"; do
	"$STROBE" push --db "$tmp/a.db" --to "$url" --host "$h" >"$tmp/again" 2>"$tmp/err" ||
		fail "push again: $(cat "$tmp/err")"
	grep -q "^session 1 of host $h: already pushed" "$tmp/again" || fail "push again: $(cat "$tmp/again")"
done
P --source "$url" --source "$url2" --older-than 3d >"$tmp/prune2" 2>"$tmp/err" ||
	fail "prune again: $(cat "$tmp/err")"
tail -1 "$tmp/prune2" | grep -qx "nothing to drop: no partition before $(day 7) on 2 servers" ||
	fail "prune again: $(cat "$tmp/prune2")"
state >"$tmp/state4"
cmp -s "$tmp/state3" "$tmp/state4" || fail "push or prune again changed the servers: $(diff "$tmp/state3" "$tmp/state4")"
ok "pushing the kept session again sent nothing; pruning again dropped nothing"
exit 0
