#!/bin/sh
# t0220-permissions: only root and members of group 'strobe' may drive
# strobed or read its data. The control socket is mode 0660 group strobe; a
# user outside the group (nobody) gets one line "permission denied ... group
# 'strobe'" and exit 1 from 'strobe status' and 'strobe start', and still
# does when the socket is made 0666, because strobed checks each peer's
# credentials itself (SO_PEERCRED); nothing starts. Members of the group, by
# primary or supplementary group, are served. The database and its binary
# cache have no permission bits for others, and nobody's 'strobe report' and
# 'strobe sessions' fail with one permission line. Creates group strobe if
# missing (as setup.sh does) and leaves it.
. "$(dirname "$0")/lib.sh"
need_root
# nobody may traverse the test directory: only the modes below keep it out
need_users
as_primary() { setpriv --reuid="$nuid" --regid="$gid" --clear-groups "$@"; }


no_new_session() {
	"$STROBE" status >"$tmp/st" 2>&1 || fail "status as root after $1: $(cat "$tmp/st")"
	grep -q "no session running" "$tmp/st" || fail "$1 started a session: $(cat "$tmp/st")"
	"$STROBE" sessions --format csv >"$tmp/s.csv" || fail "sessions after $1"
	[ "$(wc -l <"$tmp/s.csv")" = "$2" ] || fail "$1 added a session: $(cat "$tmp/s.csv")"
}

start_daemon
"$STROBE" record --sample-event cpu-clock -F 200 -- true >/dev/null 2>"$tmp/rec.err" ||
	fail "record as root: $(cat "$tmp/rec.err")"

# the socket: 0660, group strobe
[ "$(stat -c %a "$STROBE_SOCKET")" = 660 ] || fail "socket mode is $(stat -c %a "$STROBE_SOCKET"), not 660"
[ "$(stat -c %G "$STROBE_SOCKET")" = strobe ] || fail "socket group is $(stat -c %G "$STROBE_SOCKET"), not strobe"

# nobody is stopped by the socket's mode...
refused 1 status "permission denied.*group 'strobe'" as_nobody "$STROBE" status
refused 1 start "permission denied.*group 'strobe'" as_nobody "$STROBE" start --sample-event cpu-clock
no_new_session "nobody's start" 2

# ...and by strobed itself when the mode would let it through
chmod 0666 "$STROBE_SOCKET"
msg="permission denied: uid $nuid is neither root nor a member of group 'strobe'"
refused 1 status "$msg" as_nobody "$STROBE" status
refused 1 start "$msg" as_nobody "$STROBE" start --sample-event cpu-clock
refused 1 stop "$msg" as_nobody "$STROBE" stop
grep -q "refused uid $nuid" "$tmp/strobed.log" || fail "strobed did not log the refusal"
no_new_session "nobody's start through a 0666 socket" 2
chmod 0660 "$STROBE_SOCKET"

# members of group strobe are served
as_member "$STROBE" status >"$tmp/out" 2>"$tmp/err" || fail "status as a member of strobe: $(cat "$tmp/err")"
grep -q "no session running" "$tmp/out" || fail "status as a member: $(cat "$tmp/out")"
as_primary "$STROBE" status >"$tmp/out" 2>"$tmp/err" || fail "status with primary group strobe: $(cat "$tmp/err")"
as_member "$STROBE" start --sample-event cpu-clock -F 200 >"$tmp/id" 2>"$tmp/err" ||
	fail "start as a member of strobe: $(cat "$tmp/err")"
as_member "$STROBE" stop >"$tmp/out" 2>"$tmp/err" || fail "stop as a member of strobe: $(cat "$tmp/err")"
grep -q "^session $(cat "$tmp/id"): " "$tmp/out" || fail "stop as a member: $(cat "$tmp/out")"
stop_daemon || fail "strobed did not exit cleanly: $(tail -n 5 "$tmp/strobed.log")"

# the stored data: nothing for others
for f in "$STROBE_DB" "$STROBE_DB-wal" "$STROBE_DB-shm" "$STROBE_DB.cache"; do
	[ -e "$f" ] || continue
	m=$(stat -c %a "$f")
	case $m in *0) ;; *) fail "$f is mode $m: others may read it" ;; esac
done
[ "$(stat -c %G "$STROBE_DB")" = strobe ] || fail "the database's group is $(stat -c %G "$STROBE_DB"), not strobe"
find "$STROBE_DB.cache" -perm /o=rwx | grep -q . && fail "cache entries readable by others: $(find "$STROBE_DB.cache" -perm /o=rwx | head -n 3)"
sum0=$(sha256sum <"$STROBE_DB")
refused 1 report "permission denied.*group 'strobe'" as_nobody "$STROBE" report --db "$STROBE_DB"
refused 1 sessions "permission denied.*group 'strobe'" as_nobody "$STROBE" sessions --db "$STROBE_DB"
# and nobody cannot start a private strobed on it either
refused 1 record "must run as root" as_nobody "$STROBE" record --db "$STROBE_DB" -- true
[ "$(sha256sum <"$STROBE_DB")" = "$sum0" ] || fail "the database changed"
"$STROBE" sessions --format csv >"$tmp/s.csv" || fail "sessions as root"
[ "$(wc -l <"$tmp/s.csv")" = 3 ] || fail "expected 2 sessions: $(cat "$tmp/s.csv")"
ok "socket and database refuse outsiders in one line; strobe members are served"
