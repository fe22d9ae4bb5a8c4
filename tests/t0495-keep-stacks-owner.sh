#!/bin/sh
# t0495-keep-stacks-owner: the raw stack copies of --keep-stacks are root's
# alone (issue 30).  A raw copy holds a sampled process's user registers
# and up to 64 KiB of its stack: whatever any process, root's included,
# had there.  Before, any member could ask for them and they were stored
# in the database group strobe reads.  Now:
#  - a member's 'strobe start --call-graph dwarf,8192 --keep-stacks' is
#    refused with one line "permission denied: --keep-stacks is root's ..."
#    and no session starts (the same member's dwarf session without
#    --keep-stacks is accepted);
#  - root's session with --call-graph dwarf,16384 --keep-stacks, while a
#    root process (tests/workloads/stacksecret) spins with a random secret
#    from its environment in a local buffer on its stack, keeps the copies
#    in DB.stacks, mode 0600 and root's: root finds the secret there (so
#    the test would see a leak), while no file under the database that
#    the member can read (the database, its -wal and -shm, the cache, the
#    spool, the lock) holds it; the member's report of that session still
#    works without DB.stacks.
. "$(dirname "$0")/lib.sh"
need_root
need_users

start_daemon

# a member may not keep raw stacks, and nothing starts
refused 1 start "^strobe start: permission denied: --keep-stacks is root's: raw stack copies hold other users' stack bytes and registers \(secrets\); record as root, or without --keep-stacks$" \
	as_member "$STROBE" start --sample-event cpu-clock -F 100 --call-graph dwarf,8192 --keep-stacks
"$STROBE" status >"$tmp/st" 2>&1 && grep -q "no session running" "$tmp/st" ||
	fail "the refused start left a session: $(cat "$tmp/st")"
[ "$(sqlite3 "$STROBE_DB" "SELECT count(*) FROM sessions")" = 0 ] ||
	fail "the refused start stored a session"
as_member "$STROBE" start --sample-event cpu-clock -F 100 --call-graph dwarf,8192 \
	>"$tmp/id" 2>"$tmp/err" || fail "a member's dwarf session without --keep-stacks: $(cat "$tmp/err")"
as_member "$STROBE" stop >/dev/null 2>"$tmp/err" || fail "stop as the member: $(cat "$tmp/err")"
ok "a member's --keep-stacks is refused; the same session without it is not"

# root's session: a root process with a secret on its stack
secret=strobe-secret-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
"$STROBE" start --sample-event cpu-clock -F 1000 --name rootkeep --call-graph dwarf,16384 \
	--keep-stacks >"$tmp/id" 2>"$tmp/err" || fail "root's --keep-stacks session: $(cat "$tmp/err")"
id=$(cat "$tmp/id")
STACKSECRET=$secret "$WL/stacksecret" 2 || fail "stacksecret"
"$STROBE" stop >/dev/null 2>"$tmp/err" || fail "stop: $(cat "$tmp/err")"
n=$(sqlite3 "$STROBE_DB" "SELECT count(*) FROM processes AS p JOIN comms AS c ON c.id = p.comm_id
	WHERE p.session_id = $id AND c.name = 'stacksecret'")
[ "${n:-0}" -ge 1 ] || fail "session $id has no stacksecret process"

# nothing the member can read under the database holds the secret
readable=0
for f in $(find "$STROBE_DB"* -type f); do
	as_member test -r "$f" || continue
	readable=$((readable + 1))
	as_member grep -qaF -e "$secret" "$f" && fail "the member reads the secret in $f"
done
for f in "$STROBE_DB" "$STROBE_DB-wal" "$STROBE_DB-shm"; do
	as_member test -r "$f" || fail "the member cannot read $f (the test needs it)"
done
[ "$readable" -ge 4 ] || fail "the member reads only $readable files under the database"
ok "no file the member can read ($readable of them) holds root's stack secret"

# root's: DB.stacks (and its WAL), where root finds the secret
[ "$(stat -c '%a %U' "$STROBE_DB.stacks")" = "600 root" ] ||
	fail "DB.stacks is $(stat -c '%a %U' "$STROBE_DB.stacks"), not 600 root"
for f in "$STROBE_DB.stacks-wal" "$STROBE_DB.stacks-shm"; do
	[ ! -e "$f" ] || [ "$(stat -c '%a %U' "$f")" = "600 root" ] ||
		fail "$f is $(stat -c '%a %U' "$f"), not 600 root"
done
as_member test -r "$STROBE_DB.stacks" && fail "the member can read DB.stacks"
cat "$STROBE_DB.stacks"* | grep -qaF -e "$secret" ||
	fail "root does not find the secret in DB.stacks: the test would not see a leak"
kept=$(sqlite3 "$STROBE_DB" "ATTACH '$STROBE_DB.stacks' AS rawstk;
	SELECT count(*) FROM rawstk.raw_stacks WHERE session_id = $id")
[ "${kept:-0}" -gt 0 ] || fail "no raw stacks kept for session $id"
[ "$(sqlite3 "$STROBE_DB" "SELECT count(*) FROM main.raw_stacks")" = 0 ] ||
	fail "raw stacks in the database itself"
ok "root's $kept raw stacks are in DB.stacks (600 root), the secret with them"

# the member still reports root's session, without DB.stacks
as_member "$STROBE" report --session "$id" --format csv >"$tmp/r.csv" 2>"$tmp/err" ||
	fail "the member's report of session $id: $(cat "$tmp/err")"
grep -q "stacksecret" "$tmp/r.csv" || fail "the member's report lacks stacksecret: $(head -5 "$tmp/r.csv")"
stop_daemon || fail "strobed did not exit cleanly: $(tail -n 5 "$tmp/strobed.log")"
ok "the member reports root's session"
