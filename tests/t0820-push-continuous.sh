#!/bin/sh
# t0820-push-continuous: strobed --push into two real ClickHouse shards
# (tests/clickhouse.sh).  Bad settings (--push-interval 0, in the file
# too, a password file others may read, a missing one, a URL with a
# password) each give one line and exit 2.  Then strobed runs with --push
# URL --push-interval 1 --push-password-file FILE (mode 600); a 99 Hz
# session over a few seconds of work arrives on its own after 'strobe
# stop': the fleet's sample count and per-symbol counts equal the local
# database's.  Then the host's shard is killed: a second session stops
# meanwhile, 'strobe status' shows it pending with the error, strobed logs
# one outage line however often it retries; the shard comes back after
# ~3 s and the session arrives exactly once (exact counts, the first one
# unchanged), with one recovery line in the log.  A third session stops
# while the shard is down and strobed is restarted: the new strobed pushes
# it.
# Intervals pushed while a session runs: t0821-push-intervals.
. "$(dirname "$0")/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
. "$(dirname "$0")/clickhouse.sh"

ch_fleet
unset STROBE_CLICKHOUSE_PASSWORD
ok "two clickhouse-server shards up, schema applied"
pw=$tmp/ch.pw
(umask 077; echo "$CH_PASSWORD" >"$pw")

# bad settings: one line on stderr, exit 2, before anything starts
bad() {
	what=$1; shift
	"$STROBED" --foreground --db "$tmp/bad.db" --socket "$tmp/bad.sock" "$@" \
		>"$tmp/bad.out" 2>"$tmp/bad.err"
	rc=$?
	[ $rc = 2 ] || fail "$what: exit $rc, want 2 ($(cat "$tmp/bad.err"))"
	[ "$(wc -l <"$tmp/bad.err")" = 1 ] || fail "$what: not one line: $(cat "$tmp/bad.err")"
	grep -q "$1" "$tmp/bad.err" 2>/dev/null
	ok "$what: $(cat "$tmp/bad.err")"
}
bad "--push-interval 0" --push "$url" --push-interval 0 --push-password-file "$pw"
grep -q "push-interval '0'" "$tmp/bad.err" || fail "the message does not name --push-interval 0"
printf 'push = %s\npush-interval = 0\n' "$url" >"$tmp/bad.conf"
bad "push-interval = 0 in the config file" --config "$tmp/bad.conf"
grep -q "push-interval" "$tmp/bad.err" || fail "the message does not name push-interval"
cp "$pw" "$tmp/open.pw" && chmod 644 "$tmp/open.pw"
bad "a password file others may read" --push "$url" --push-password-file "$tmp/open.pw"
grep -q "chmod 600" "$tmp/bad.err" || fail "the message does not say chmod 600"
bad "a missing password file" --push "$url" --push-password-file "$tmp/none.pw"
grep -q "none.pw" "$tmp/bad.err" || fail "the message does not name the file"
printf 'push = %s\npush-password-file = %s\n' "$url" "$tmp/open.pw" >"$tmp/bad.conf"
bad "push-password-file in the config file, readable by others" --config "$tmp/bad.conf"
bad "a relative password file" --push "$url" --push-password-file ch.pw
grep -q "absolute path" "$tmp/bad.err" || fail "the message does not ask for an absolute path"
bad "a password in the URL" --push "http://default:x@127.0.0.1:1/?database=strobe"
[ -e "$tmp/bad.db" ] && fail "a refused strobed created its database"

host=$(hostname)
# the host's shard is the one killed; strobed pushes to, and the test
# asks, the other, which stays up throughout
shard=$(( $(ch_q 1 "SELECT cityHash64('$host') % 2") + 1 ))
qs=$((3 - shard))
url=$(ch_url "$qs")
start_daemon --push "$url" --push-interval 1 --push-password-file "$pw"
grep -q "pushing each session to" "$tmp/strobed.log" || fail "no push line in the log: $(cat "$tmp/strobed.log")"

fleet_count() { ch_q "$qs" "SELECT count() FROM strobe.samples WHERE host = '$host' AND session = $1"; }
# wait_fleet ID N: until the fleet has N samples of session ID (30 s at most)
wait_fleet() {
	i=0
	while [ "$(fleet_count "$1")" != "$2" ]; do
		i=$((i + 1))
		[ $i -gt 150 ] && { cat "$tmp/strobed.log"; fail "session $1: $(fleet_count "$1") samples in the fleet after 30 s, want $2"; }
		sleep 0.2
	done
}
# compare ID: per-symbol sample counts of session ID, local and fleet
compare() {
	"$STROBE" report --session "$1" --format csv --limit 0 >"$tmp/local.csv" 2>/dev/null ||
		fail "report $1"
	ch_q "$qs" "SELECT name, symbol, count() FROM
		(SELECT * FROM strobe.samples
		GLOBAL ANY LEFT JOIN (SELECT binary_key, offset, any(symbol) AS symbol
			FROM strobe.symbols GROUP BY binary_key, offset) USING (binary_key, offset)
		WHERE host = '$host' AND session = $1)
		GLOBAL ANY LEFT JOIN (SELECT binary_id, name FROM strobe.binaries
			WHERE host = '$host' AND session = $1) USING (binary_id)
		GROUP BY name, symbol FORMAT TabSeparated" >"$tmp/fleet.tsv"
	python3 - "$tmp/local.csv" "$tmp/fleet.tsv" <<'PY' || fail "session $1: per-symbol counts differ (above)"
import collections, csv, sys
loc = collections.Counter()
for r in csv.DictReader(open(sys.argv[1], newline="", errors="surrogateescape")):
    loc[(r["binary"], r["symbol"])] += int(r["samples"])
loc = +loc
fl = collections.Counter()
for line in open(sys.argv[2], errors="surrogateescape").read().splitlines():
    b, s, n = line.split("\t")
    fl[(b, s)] += int(n)
bad = [k for k in set(loc) | set(fl) if loc[k] != fl[k]]
for k in sorted(bad)[:10]:
    print(f"  {k}: local {loc[k]}, fleet {fl[k]}")
print(f"  {len(loc)} (binary, symbol) rows, {sum(loc.values())} samples")
sys.exit(1 if bad or not loc else 0)
PY
}

"$STROBE" start --sample-event cpu-clock -F 99 --name cont1 >"$tmp/id1" 2>"$tmp/start.err" ||
	fail "start: $(cat "$tmp/start.err")"
id1=$(cat "$tmp/id1")
"$WL/split603010" 3 || fail "split603010"
"$STROBE" stop >/dev/null 2>"$tmp/stop.err" || fail "stop: $(cat "$tmp/stop.err")"
n1=$(sqlq "$STROBE_DB" "SELECT count(*) FROM samples WHERE session_id = $id1")
[ "$n1" -gt 100 ] || fail "session $id1 has only $n1 samples"
wait_fleet "$id1" "$n1"
compare "$id1"
ok "session $id1 pushed by strobed on its own: $n1 samples, per-symbol counts as in SQLite"

# the host's shard down while a session stops
ch_kill "$shard"
"$STROBE" start --sample-event cpu-clock -F 99 --name cont2 >"$tmp/id2" 2>"$tmp/start.err" ||
	fail "start 2: $(cat "$tmp/start.err")"
id2=$(cat "$tmp/id2")
"$WL/split603010" 2 || fail "split603010"
"$STROBE" stop >/dev/null 2>"$tmp/stop.err" || fail "stop 2: $(cat "$tmp/stop.err")"
n2=$(sqlq "$STROBE_DB" "SELECT count(*) FROM samples WHERE session_id = $id2")
i=0
until "$STROBE" status >"$tmp/st" && grep -q "^push to .*: last pushed session $id1, 1 pending; failing: " "$tmp/st"; do
	i=$((i + 1))
	[ $i -gt 50 ] && fail "status did not show session $id2 pending: $(cat "$tmp/st")"
	sleep 0.1
done
ok "status during the outage: $(grep '^push to' "$tmp/st")"
sleep 3
ch_start "$shard"
wait_fleet "$id2" "$n2"
compare "$id2"
[ "$(fleet_count "$id1")" = "$n1" ] || fail "session $id1 now has $(fleet_count "$id1") samples in the fleet, not $n1"
sleep 1.5	# a few more rounds: nothing more may arrive
[ "$(fleet_count "$id2")" = "$n2" ] || fail "session $id2: $(fleet_count "$id2") samples, not $n2"
nb=$(ch_q "$qs" "SELECT count() FROM strobe.sessions WHERE host = '$host'")
[ "$nb" = 2 ] || fail "$nb session rows in the fleet, want 2"
ok "session $id2 arrived once after the outage: $n2 samples, session $id1 unchanged"
"$STROBE" status >"$tmp/st" || fail "status"
grep -q "^push to .*: last pushed session $id2, 0 pending$" "$tmp/st" || fail "status after: $(cat "$tmp/st")"

down=$(grep -c "push to .* failed: " "$tmp/strobed.log")
up=$(grep -c "push to .* works again after " "$tmp/strobed.log")
[ "$down" = 1 ] && [ "$up" = 1 ] ||
	fail "$down outage and $up recovery lines in the log, want 1 and 1: $(grep 'push to' "$tmp/strobed.log")"
ok "the log: $(grep "push to .* failed: " "$tmp/strobed.log" | cut -c1-200)"
ok "the log: $(grep "push to .* works again" "$tmp/strobed.log")"

# a session that could not be pushed before strobed exited is pushed by
# the next strobed --push (the server has this host's sessions up to $id2)
ch_kill "$shard"
"$STROBE" start --sample-event cpu-clock -F 99 --name cont3 >"$tmp/id3" 2>"$tmp/start.err" ||
	fail "start 3: $(cat "$tmp/start.err")"
id3=$(cat "$tmp/id3")
"$WL/split603010" 1 || fail "split603010"
"$STROBE" stop >/dev/null 2>"$tmp/stop.err" || fail "stop 3: $(cat "$tmp/stop.err")"
n3=$(sqlq "$STROBE_DB" "SELECT count(*) FROM samples WHERE session_id = $id3")
stop_daemon || fail "strobed exited $? (server down)"
ch_start "$shard"
start_daemon --push "$url" --push-interval 1 --push-password-file "$pw"
wait_fleet "$id3" "$n3"
compare "$id3"
[ "$(fleet_count "$id1")" = "$n1" ] && [ "$(fleet_count "$id2")" = "$n2" ] ||
	fail "sessions $id1 and $id2 changed in the fleet"
ok "session $id3, stopped while the server was down and strobed then restarted, arrived: $n3 samples"
stop_daemon || fail "strobed exited $?"
exit 0
