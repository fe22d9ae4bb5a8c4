#!/bin/sh
# t0420-owners-limits: what one member of group 'strobe' may do to another,
# and how much kernel memory a member may pin.  A session started by one
# member (nobody, with strobe as a supplementary group) can be stopped and
# marked only by that uid and by root: a second member (user daemon) gets
# one line "permission denied: session N belongs to uid U" for both, and
# the session keeps running.  Only root may shut strobed down.  A member's
# ring of 65536 pages per CPU (256 MiB with 4 KiB pages) is refused in one
# line ("lower -m") before anything starts, while the default ring and the
# same large ring asked by root are accepted.  With --db in a directory
# anyone can write, a DB.cache symlink planted by a member makes strobed
# refuse to start, leaving the symlink's target untouched.
. "$(dirname "$0")/lib.sh"
need_root
need_users daemon
as_a() { as_member "$@"; }
as_b() { as_other "$@"; }

start_daemon

# pinned memory: a member's huge ring is refused, nothing starts
refused 1 start "above the [0-9]+ KiB that users other than root may pin.*lower -m" \
	as_a "$STROBE" start --sample-event cpu-clock -F 100 -m 65536
"$STROBE" status >"$tmp/st" 2>&1 && grep -q "no session running" "$tmp/st" ||
	fail "the refused start left a session: $(cat "$tmp/st")"

# member A's session: B may neither stop nor mark it
as_a "$STROBE" start --sample-event cpu-clock -F 100 >"$tmp/id" 2>"$tmp/err" ||
	fail "start as member A: $(cat "$tmp/err")"
id=$(cat "$tmp/id")
refused 1 stop "permission denied: session $id belongs to uid $nuid" as_b "$STROBE" stop
refused 1 mark "permission denied: session $id belongs to uid $nuid" as_b "$STROBE" mark "from B"
# (no CLI command sends 'shutdown': the request itself, on the socket)
as_b /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])
s.sendall(b"shutdown\n"); print(s.makefile().readline().strip())' "$STROBE_SOCKET" >"$tmp/sd" 2>&1
grep -q "^error msg=permission%20denied" "$tmp/sd" || grep -q "^error .*only root may shut" "$tmp/sd" ||
	fail "shutdown as member B: $(cat "$tmp/sd")"
"$STROBE" status >"$tmp/st" 2>&1 || fail "status: $(cat "$tmp/st")"
grep -q "session $id" "$tmp/st" || fail "B's attempts ended A's session: $(cat "$tmp/st")"
kill -0 "$daemon_pid" || fail "strobed exited"

# A and root may
as_a "$STROBE" mark "from A" >/dev/null 2>"$tmp/err" || fail "mark as the owner: $(cat "$tmp/err")"
"$STROBE" mark "from root" >/dev/null 2>"$tmp/err" || fail "mark as root: $(cat "$tmp/err")"
as_a "$STROBE" stop >"$tmp/out" 2>"$tmp/err" || fail "stop as the owner: $(cat "$tmp/err")"
grep -q "^session $id: " "$tmp/out" || fail "stop as the owner: $(cat "$tmp/out")"
"$STROBE" report --session "$id" --markers --format csv >"$tmp/m.csv" || fail "report --markers"
grep -q "from A" "$tmp/m.csv" && grep -q "from root" "$tmp/m.csv" ||
	fail "the owner's and root's marks are missing: $(cat "$tmp/m.csv")"
grep -q "from B" "$tmp/m.csv" && fail "B's refused mark was stored: $(cat "$tmp/m.csv")"

# root may stop a member's session, and pin a large ring
as_a "$STROBE" start --sample-event cpu-clock -F 100 >"$tmp/id" 2>"$tmp/err" ||
	fail "start as member A: $(cat "$tmp/err")"
"$STROBE" stop >/dev/null 2>"$tmp/err" || fail "stop of A's session as root: $(cat "$tmp/err")"
"$STROBE" start --sample-event cpu-clock -F 100 -m 65536 >/dev/null 2>"$tmp/err" ||
	fail "root's 65536-page ring: $(cat "$tmp/err")"
"$STROBE" stop >/dev/null 2>"$tmp/err" || fail "stop: $(cat "$tmp/err")"
stop_daemon || fail "strobed did not exit cleanly: $(tail -n 5 "$tmp/strobed.log")"
ok "sessions belong to their owner and root; members' rings are capped"

# --db in a directory others can write: a member plants DB.cache as a
# symlink to a directory of root's; strobed refuses to start and neither
# chowns nor fills that directory
mkdir -m 1777 "$tmp/shared" && mkdir -m 0700 "$tmp/victim" || fail "mkdir"
as_a ln -s "$tmp/victim" "$tmp/shared/s.db.cache" || fail "planting the symlink as member A"
timeout 20 "$STROBED" --foreground --db "$tmp/shared/s.db" --socket "$tmp/s2.sock" \
	>"$tmp/s2.out" 2>"$tmp/s2.err"
rc=$?
[ $rc = 1 ] || fail "strobed with a planted cache symlink exited $rc: $(cat "$tmp/s2.err")"
grep -q "cache directory .*s.db.cache\|database's directory .*shared belongs to uid 0, mode 1777" \
	"$tmp/s2.err" || fail "no clear error: $(cat "$tmp/s2.err")"
[ "$(stat -c '%a %G' "$tmp/victim")" = "700 root" ] ||
	fail "strobed changed the planted target: $(stat -c '%a %G' "$tmp/victim")"
[ -z "$(ls -A "$tmp/victim")" ] || fail "strobed wrote into the planted target: $(ls -A "$tmp/victim")"
ok "a planted DB.cache symlink is refused, its target untouched"

# the same directory with a planted DB.spool instead: a symlink to a
# directory of root's whose numbered subdirectories hold spool files.
# strobed cleans up a dead strobed's spool at start (every numbered
# directory's state and seg-* files), so it must refuse the directory
# before it reads or removes anything there (the database's directory
# must be root's and writable by no one else: lib/store/dbdir.h); a
# directory above it that is sticky (like /tmp) is no reason to refuse
rm -f "$tmp/shared/s.db.cache"
mkdir -p -m 0700 "$tmp/victim2/7" && echo keep >"$tmp/victim2/7/state" &&
	echo keep >"$tmp/victim2/7/seg-0" || fail "victim2"
as_a ln -s "$tmp/victim2" "$tmp/shared/s.db.spool" || fail "planting DB.spool as member A"
timeout 20 "$STROBED" --foreground --db "$tmp/shared/s.db" --socket "$tmp/s3.sock" \
	>"$tmp/s3.out" 2>"$tmp/s3.err"
rc=$?
[ $rc = 1 ] || fail "strobed in a directory others can write exited $rc: $(cat "$tmp/s3.err")"
grep -q "database's directory .*shared belongs to uid 0, mode 1777" "$tmp/s3.err" ||
	fail "no clear error: $(cat "$tmp/s3.err")"
[ -f "$tmp/victim2/7/state" ] && [ -f "$tmp/victim2/7/seg-0" ] ||
	fail "strobed removed the spool files behind a planted DB.spool: $(ls -AR "$tmp/victim2")"
[ ! -e "$tmp/shared/s.db" ] || fail "strobed created the database in a directory others can write"
mkdir -m 0700 "$tmp/shared/own" || fail "mkdir own"
timeout 20 "$STROBED" --foreground --db "$tmp/shared/own/s.db" --socket "$tmp/s4.sock" \
	>"$tmp/s4.out" 2>"$tmp/s4.err" &
p4=$!
i=0
until STROBE_SOCKET=$tmp/s4.sock "$STROBE" status >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -gt 100 ] && { kill $p4; fail "strobed in a root-only directory under a sticky one did not start: $(cat "$tmp/s4.err")"; }
	sleep 0.1
done
kill $p4; wait $p4
ok "a directory others can write is refused before strobed touches a planted DB.spool; root's own directory under a sticky one is not"
