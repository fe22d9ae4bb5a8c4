#!/bin/sh
# t0450-retention: removing sessions.  Each session runs its own copy of
# the 60/30/10 workload with a fresh build-id, so that its binary's cache
# entry is its alone.
#  - 'strobe rm' goes through strobed: a member (nobody) removes their own
#    session; another member (daemon) is refused ("permission denied:
#    session N belongs to uid U"), and so are an unknown id, a list with
#    one unknown id, and the running session, each in one line with nothing
#    removed; bad arguments are usage errors; root removes anyone's.  A
#    removed session leaves 'strobe sessions' at once, its rows go, then
#    its binary's cache entry and binaries row, while the entries other
#    sessions use stay and their reports do not change.
#  - --keep DAYS at start-up: a session that ended 40 days ago (its clock
#    moved back with sqlite3) goes with --keep 30, a recent one stays.
#  - --max-size while strobed runs: set a page above the usage (database
#    pages in use + cache files, as strobed counts them), the next
#    session's stop removes the oldest sessions (a prefix of them, at least
#    one) and the cache entries only they used, never the newest, and
#    brings the usage under the limit (or, when other programs running
#    meanwhile put the newest session alone over it, removes all the older
#    ones and says so); the remaining reports do not change.
#    With --max-size 1K everything but the newest session goes, and strobed
#    logs that the limit is not met.
#  - bad --keep, --max-size and --max-wal values are refused in one line.
. "$(dirname "$0")/lib.sh"
need_root
need_users daemon
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
command -v find >/dev/null || skip "find is not installed"

q() { sqlq -readonly "$STROBE_DB" "$@"; }
cache=$STROBE_DB.cache
entry() { hex=${1#buildid:}; echo "$cache/buildid/$(echo "$hex" | cut -c1-2)/$(echo "$hex" | cut -c3-)"; }
# usage as strobed counts it: database pages in use (of DB.stacks too, the
# raw stack copies' file, schema 17), and the cache's files
pages_used() {
	[ -e "$1" ] || { echo 0; return; }
	echo $(( ($(sqlite3 -readonly "$1" "PRAGMA page_count") -
		  $(sqlite3 -readonly "$1" "PRAGMA freelist_count")) *
		 $(sqlite3 -readonly "$1" "PRAGMA page_size") ))
}
usage() {
	echo $(( $(pages_used "$STROBE_DB") + $(pages_used "$STROBE_DB.stacks") +
		 $(find "$cache" -type f -printf '%b\n' | awk '{ s += $1 } END { print s * 512 }') ))
}
# wait_until DESC CMD...: poll CMD for up to 20 s
wait_until() {
	desc=$1
	shift
	i=0
	until "$@"; do
		i=$((i + 1))
		[ $i -gt 400 ] && fail "$desc did not happen within 20 s: $(tail -n 3 "$tmp/strobed.log")"
		sleep 0.05
	done
}
gone() { [ "$(q "SELECT count(*) FROM sessions WHERE id=$1")" = 0 ]; }
no_file() { [ ! -e "$1" ]; }

# record WHO NAME: a session of WHO (as_member, as_other or env) over its
# own copy of the workload; sets id and key (the copy's cache key)
n=0
record() {
	n=$((n + 1))
	bid=$(unique_copy "$WL/split603010" "$tmp/wl$n") || fail "unique_copy"
	key=buildid:$bid
	$1 "$STROBE" start --sample-event cpu-clock -F 1000 --name "$2" >"$tmp/id" 2>"$tmp/err" ||
		fail "start as $1: $(cat "$tmp/err")"
	id=$(cat "$tmp/id")
	"$tmp/wl$n" 1
	$1 "$STROBE" stop >/dev/null 2>"$tmp/err" || fail "stop as $1: $(cat "$tmp/err")"
	[ -f "$(entry "$key")" ] || fail "session $id's binary $key is not in the cache: binaries
$(q "SELECT * FROM binaries WHERE key='$key'"), samples of it $(q "SELECT count(*) FROM samples s
JOIN binaries b ON b.id=s.binary_id WHERE s.session_id=$id AND b.key='$key'"); $(cat "$tmp/strobed.log")"
}
report() { "$STROBE" report --session "$1" --format csv 2>"$tmp/report.err" ||
	{ cat "$tmp/report.err" >&2; return 1; }; }

start_daemon
record as_member a; s1=$id k1=$key
record as_other b; s2=$id k2=$key
record env root; s3=$id k3=$key
report "$s2" >"$tmp/r2" && report "$s3" >"$tmp/r3" || fail "reports"
kallsyms=$(q "SELECT DISTINCT kallsyms_key FROM sessions" | head -n 1)

# refusals: nothing is removed
refused 1 rm "permission denied: session $s1 belongs to uid $nuid; only it and root may remove it" \
	as_other "$STROBE" rm "$s1"
refused 1 rm "no session 999 in .*strobe sessions.*nothing was removed" as_member "$STROBE" rm 999
refused 1 rm "no session 999 .*nothing was removed" as_member "$STROBE" rm "$s1" 999
refused 2 rm "bad session 'x1'" "$STROBE" rm x1
refused 2 rm "bad session '-3'" "$STROBE" rm -- -3
refused 2 rm "no session given" "$STROBE" rm
"$STROBE" start --sample-event cpu-clock -F 100 >"$tmp/id" || fail "start"
running=$(cat "$tmp/id")
refused 1 rm "session $running is running: stop it first" "$STROBE" rm "$running"
"$STROBE" stop >/dev/null || fail "stop"
[ "$(q "SELECT count(*) FROM sessions WHERE state!='deleting'")" = 4 ] || fail "a refused rm removed a session"

# the owner removes theirs: gone at once from the list, then its rows and cache entry
as_member "$STROBE" rm "$s1" >"$tmp/out" 2>"$tmp/err" || fail "rm by the owner: $(cat "$tmp/err")"
grep -q "^removed session $s1$" "$tmp/out" || fail "rm said: $(cat "$tmp/out")"
"$STROBE" sessions --format csv >"$tmp/s.csv" || fail "sessions"
[ -z "$(csv_get "$tmp/s.csv" id "$s1" id)" ] || fail "session $s1 is still listed: $(cat "$tmp/s.csv")"
refused 1 report "no session $s1" "$STROBE" report --session "$s1"
wait_until "removing session $s1" gone "$s1"
[ "$(q "SELECT count(*) FROM samples WHERE session_id=$s1") $(q "SELECT count(*) FROM sample_agg WHERE session_id=$s1")" = "0 0" ] ||
	fail "rows of session $s1 are left"
for t in processes lost markers session_cpus session_events; do
	[ "$(q "SELECT count(*) FROM $t WHERE session_id=$s1")" = 0 ] || fail "$t rows of session $s1 are left"
done
wait_until "the cache entry of $k1 going" no_file "$(entry "$k1")"
[ "$(q "SELECT count(*) FROM binaries WHERE key='$k1'")" = 0 ] || fail "the binaries row of $k1 is left"
[ -f "$(entry "$k2")" ] && [ -f "$(entry "$k3")" ] || fail "entries other sessions use were removed"
[ -f "$cache/kallsyms/$(echo "${kallsyms#kallsyms:}" | cut -c1-2)/$(echo "${kallsyms#kallsyms:}" | cut -c3-)" ] ||
	fail "the kallsyms snapshot other sessions use was removed"
report "$s2" | cmp -s - "$tmp/r2" && report "$s3" | cmp -s - "$tmp/r3" ||
	fail "reports of the remaining sessions changed"
grep -q "binary cache: removed [1-9]" "$tmp/strobed.log" || fail "strobed did not log the pruning"
# root removes another member's session
"$STROBE" rm "$s2" >/dev/null 2>"$tmp/err" || fail "rm by root: $(cat "$tmp/err")"
wait_until "removing session $s2" gone "$s2"
wait_until "the cache entry of $k2 going" no_file "$(entry "$k2")"
ok "strobe rm: owner and root only, not running, all or nothing; rows and unused cache entries go"

# --keep at start-up: a session that ended 40 days ago goes
stop_daemon || fail "strobed did not exit cleanly"
sqlite3 "$STROBE_DB" "UPDATE sessions SET wall_offset_ns = wall_offset_ns - 40 * 86400000000000
	WHERE id=$s3" || fail "ageing session $s3"
report "$running" >"$tmp/r4" || fail "report"
start_daemon --keep 30
wait_until "--keep removing session $s3" gone "$s3"
wait_until "the cache entry of $k3 going" no_file "$(entry "$k3")"
[ "$(q "SELECT state FROM sessions WHERE id=$running")" = done ] || fail "the recent session $running went too"
report "$running" | cmp -s - "$tmp/r4" || fail "the report of session $running changed"
grep -q "retention: removing 1 session ($s3)" "$tmp/strobed.log" || fail "no log of --keep: $(cat "$tmp/strobed.log")"
ok "--keep 30 removes a session 40 days old at start-up and keeps a recent one"

# bad limits are refused in one line, before anything starts
for bad in "--keep 0" "--keep -1" "--keep 3x" "--max-size 0" "--max-size 12Q" "--max-size M" \
	   "--max-wal 1.5G" "--ingest-nice 20" "--ingest-nice -1"; do
	"$STROBED" --foreground --db "$tmp/other.db" --socket "$tmp/other.sock" $bad \
		>/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] &&
		grep -q "^strobed: bad ${bad%% *} '${bad#* }': give" "$tmp/err" ||
		fail "strobed $bad: exit $rc: $(cat "$tmp/err")"
done
[ -e "$tmp/other.db" ] && fail "a refused strobed created its database"

# --max-size while strobed runs: a limit a page above what the database and
# the cache take now, so that the next session goes over it
record env m1; m1=$id k_m1=$key
record env m2; m2=$id k_m2=$key
stop_daemon || fail "strobed did not exit cleanly"
limit=$(($(usage) + 4096))
start_daemon --max-size "$limit"
sleep 0.5
[ "$(q "SELECT count(*) FROM sessions")" = 3 ] || fail "--max-size $limit removed sessions while under it"
report "$m2" >"$tmp/rm2" || fail "report of session $m2"
record env m3; m3=$id k_m3=$key
report "$m3" >"$tmp/rm3" || fail "report of session $m3"
settled() { [ "$(q "SELECT count(*) FROM sessions WHERE state='deleting'")" = 0 ]; }
under() { [ "$(usage)" -le "$limit" ] && settled; }
# Session m3 is system-wide: whatever else ran meanwhile (a compiler on a
# shared host: tens of MB) is cached for it too, and can put it alone over
# the limit.  Then retention must remove every older session, keep m3 and
# say that the limit is not met.
alone_over() {
	settled && [ "$(q "SELECT group_concat(id) FROM sessions")" = "$m3" ] &&
		grep -q "only the running and the newest finished sessions are left" "$tmp/strobed.log"
}
under_or_alone() { under || alone_over; }
wait_until "--max-size bringing the usage ($(usage)) under $limit" under_or_alone
left=$(q "SELECT group_concat(id) FROM (SELECT id FROM sessions ORDER BY id)")
echo "limit $limit; sessions $running,$m1,$m2,$m3 -> $left; usage $(usage)"
note=
if ! under; then
	note=" (session $m3 alone took $(usage) bytes, over the limit: other programs ran during it; it stays and strobed says so)"
	echo "note:$note"
fi
case $left in
"$m1,$m2,$m3"|"$m2,$m3"|"$m3") ;;
*) fail "--max-size did not remove the oldest sessions first: $left are left of $running,$m1,$m2,$m3" ;;
esac
grep -q "retention: removing" "$tmp/strobed.log" || fail "no log of --max-size: $(cat "$tmp/strobed.log")"
[ -f "$(entry "$k_m3")" ] || fail "the newest session's binary left the cache"
report "$m3" | cmp -s - "$tmp/rm3" || fail "the newest session's report changed"
case $left in
*"$m1"*) [ -f "$(entry "$k_m1")" ] || fail "session $m1 stays, its binary went" ;;
*) wait_until "the cache entry of removed session $m1 going" no_file "$(entry "$k_m1")" ;;
esac
case $left in
*"$m2"*) report "$m2" | cmp -s - "$tmp/rm2" || fail "session $m2's report changed" ;;
*) wait_until "the cache entry of removed session $m2 going" no_file "$(entry "$k_m2")" ;;
esac
ok "--max-size: the oldest sessions go when a new one goes over, the newest stays$note"

# a limit nothing can meet: everything but the newest session goes, and
# strobed says it stays over
stop_daemon || fail "strobed did not exit cleanly"
start_daemon --max-size 1K
only_newest() { [ "$(q "SELECT group_concat(id) FROM sessions")" = "$m3" ]; }
wait_until "--max-size 1K removing all but the newest" only_newest
wait_until "strobed saying it stays over --max-size" \
	grep -q "over --max-size 0.0 MiB, and only the running and the newest finished" "$tmp/strobed.log"
ok "--max-size 1K keeps the newest session and says the limit is not met"
