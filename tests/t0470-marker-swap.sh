#!/bin/sh
# t0470-marker-swap: 'strobe start --marker PATH:...' by a member of group
# strobe (nobody, with strobe as a supplementary group) places uprobes only
# in a file that member could read themselves, and exactly in the file the
# notes were read from, however PATH changes meanwhile.  Files: the
# member's copy of tlbwalk ($tmp/m/prog, theirs), a root-only copy
# ($tmp/secret/prog: root's 0700 directory), root's setuid, setgid and
# file-capability copies in a directory anyone may search; each copy has
# its own build-id.
#  1. a symlink of the member's to the root-only copy, the root-only copy
#     itself and a missing file beside it are each refused in one line,
#     "cannot read PATH as uid U: permission denied or no such file", the
#     three messages equal but for PATH (nothing tells the member what
#     exists in a directory they cannot search), and nothing starts;
#  2. the member's own copy, directly and through a symlink of theirs,
#     works: the member's run of it gives its 3 hits, root's run of the
#     root-only copy none, and session_probes holds the member copy's key;
#  3. the setuid, setgid and capability copies are refused for the member
#     ("only root may place probes in it") and accepted for root;
#  4. the race: the member renames, as fast as it can, a symlink to its
#     copy and one to the root-only copy over one path while starting 8
#     sessions on that path.  Each start is either refused with the message
#     of 1 or accepted (some are), and every accepted session records the
#     3 hits of the member's run of its copy, none of root's run of the
#     root-only copy, and the member copy's key (before: strobed looked
#     the path up again for each CPU's uprobe, so probes landed in the
#     root-only copy);
#  5. a FIFO is refused within 5 s as not a regular file, for the member
#     and for root, and strobed then answers at once;
#  6. a copy the member can read but does not own (root's, 0755, like
#     libc) is refused for the member, whose probes would fire in every
#     other user's runs of it, and accepted for root.
# Each part reports its own failure and the next still runs.
. "$(dirname "$0")/lib.sh"
need_root
need_users
[ -e /sys/bus/event_source/devices/uprobe/type ] ||
	skip "this kernel has no uprobe perf events (CONFIG_UPROBE_EVENTS)"

bad=0
failed() { echo "FAIL: $*"; bad=$((bad + 1)); }
P=tlbwalk:size
S="start --sample-event cpu-clock -F 100"

mkdir -m 0755 "$tmp/m" "$tmp/pub" && mkdir -m 0700 "$tmp/secret" || fail "mkdir"
chown "$nuid:$ngid" "$tmp/m" || fail "chown"
mid=$(unique_copy "$WL/tlbwalk" "$tmp/m/prog") && chown "$nuid:$ngid" "$tmp/m/prog" &&
	unique_copy "$WL/tlbwalk" "$tmp/secret/prog" >/dev/null || fail "copies of tlbwalk"
for f in suid sgid caps; do
	unique_copy "$WL/tlbwalk" "$tmp/pub/$f" >/dev/null || fail "copy $f"
done
chmod 4755 "$tmp/pub/suid" && chmod 2755 "$tmp/pub/sgid" || fail "chmod"
# cap_net_raw, effective (VFS_CAP_REVISION_2); without xattr support: no caps check
have_caps=1
python3 -c 'import os, struct, sys; os.setxattr(sys.argv[1], "security.capability", struct.pack("<IIIII", 0x02000001, 1 << 13, 0, 0, 0))' \
	"$tmp/pub/caps" 2>/dev/null || have_caps=
as_member ln -s "$tmp/secret/prog" "$tmp/m/link" && as_member ln -s prog "$tmp/m/alias" ||
	fail "member's symlinks"

# no_session WHAT: nothing is running (a refused start left nothing)
no_session() {
	"$STROBE" status >"$tmp/st" 2>&1
	grep -q "no session running" "$tmp/st" && return 0
	failed "$1: a session is running: $(cat "$tmp/st")"
	"$STROBE" stop >/dev/null 2>&1
	return 1
}

# msg_of SPEC: strobed's answer to the member's start on SPEC, its path
# replaced by PATH (stopping the session if one started)
msg_of() {
	as_member timeout 20 "$STROBE" $S --marker "$1:$P" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc = 0 ] && "$STROBE" stop >/dev/null 2>&1
	echo "rc=$rc $(sed "s|$2|PATH|g" "$tmp/err")"
}

# runs ID WHAT: run the member's copy as the member, the root-only copy as
# root, stop session ID; the member's 3 hits must be recorded, root's none,
# and session_probes must hold the member copy's key
runs() {
	as_member sh -c 'echo $$ >"$1"; exec "$2" 1 3 -P 1' sh "$tmp/m/pid" "$tmp/m/prog" \
		>/dev/null || failed "$2: the member's run"
	sh -c 'echo $$ >"$1"; exec "$2" 1 2 -P 1' sh "$tmp/rpid" "$tmp/secret/prog" >/dev/null ||
		failed "$2: root's run"
	"$STROBE" stop >/dev/null 2>"$tmp/stop.err" || failed "$2: stop: $(cat "$tmp/stop.err")"
	"$STROBE" report --session "$1" --markers --format csv >"$tmp/mk.csv" 2>&1 ||
		failed "$2: report --markers: $(cat "$tmp/mk.csv")"
	r=$(python3 - "$tmp/mk.csv" "$tmp/m/pid" "$tmp/rpid" "$STROBE_DB" "$1" "buildid:$mid" <<'PY'
import csv, sqlite3, sys
f, mpid, rpid, dbf, sid, want = sys.argv[1:7]
rows = [r for r in csv.DictReader(open(f)) if r["kind"] == "usdt"]
hm = sum(r["pid"] == open(mpid).read().strip() for r in rows)
hr = sum(r["pid"] == open(rpid).read().strip() for r in rows)
db = sqlite3.connect("file:" + dbf + "?mode=ro", uri=True)
keys = [k for k, in db.execute("SELECT binary_key FROM session_probes WHERE session_id = ?",
                               (int(sid),))]
bad = []
if hm != 3:
    bad.append(f"{hm} hits of the member's copy recorded, not 3")
if hr:
    bad.append(f"{hr} hits of the root-only copy recorded, not 0")
if keys != [want]:
    bad.append(f"session_probes holds keys {keys}, not the member copy's {want}")
print("; ".join(bad))
PY
)
	[ -z "$r" ] || failed "$2: $r"
}

start_daemon

# 1. no probes where the member may not read, and one message for all
bad1=$bad
want="rc=1 strobe start: marker 'PATH:$P': cannot read PATH as uid $nuid: permission denied or no such file \(give a file that uid $nuid can read\)\$"
for p in "$tmp/m/link" "$tmp/secret/prog" "$tmp/secret/nosuch"; do
	m=$(msg_of "$p" "$p")
	echo "$p: $m"
	echo "$m" | grep -Eq -- "$want" || failed "1: the member's --marker $p: $m"
	no_session "1: $p"
done
[ $bad = $bad1 ] && ok "1: the root-only file, a symlink to it and a missing file: one refusal"

# 2. the member's own copy, directly and through their symlink
bad2=$bad
for p in "$tmp/m/prog" "$tmp/m/alias"; do
	as_member "$STROBE" $S --marker "$p:$P" >"$tmp/id" 2>"$tmp/err" || {
		failed "2: the member's start on $p: $(cat "$tmp/err")"; continue; }
	runs "$(cat "$tmp/id")" "2: $p"
done
[ $bad = $bad2 ] && ok "2: the member's own copy, directly and through a symlink: its hits only"

# 3. setuid, setgid, capabilities: root only
bad3=$bad
for f in suid sgid ${have_caps:+caps}; do
	p=$tmp/pub/$f
	m=$(msg_of "$p" "$p")
	echo "$f: $m"
	echo "$m" | grep -Eq "^rc=1 strobe start: marker 'PATH:$P': PATH (is set-user-ID or set-group-ID|has file capabilities): only root may place probes in it\$" ||
		failed "3: the member's --marker on the $f copy: $m"
	no_session "3: $f"
	"$STROBE" $S --marker "$p:$P" >/dev/null 2>"$tmp/err" &&
		"$STROBE" stop >/dev/null 2>&1 || failed "3: root's --marker on the $f copy: $(cat "$tmp/err")"
done
[ -n "$have_caps" ] || echo "no security.capability xattr on $tmp: the capability copy is not tried"
[ $bad = $bad3 ] && ok "3: setuid, setgid and capability files: refused for the member, root's"

# 4. the race: the member swaps the path while strobed places the probes
bad4=$bad
as_member /usr/bin/python3 -c '
import os, sys
d, own, other = sys.argv[1:4]
tmp, n = d + "/.swap", 0
while not os.path.exists(d + "/stop"):
    os.symlink((own, other)[n % 2], tmp)
    os.replace(tmp, d + "/race")
    n += 1
open(d + "/swaps", "w").write(str(n))' "$tmp/m" "$tmp/m/prog" "$tmp/secret/prog" &
swapper=$!
i=0
while [ ! -e "$tmp/m/race" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
acc=0 ref=0
for i in $(seq 8); do
	as_member timeout 20 "$STROBE" $S --marker "$tmp/m/race:$P" >"$tmp/id" 2>"$tmp/err"
	rc=$?
	if [ $rc = 0 ]; then
		acc=$((acc + 1))
		runs "$(cat "$tmp/id")" "4: start $i"
	elif grep -q "cannot read $tmp/m/race as uid $nuid: permission denied or no such file" "$tmp/err"; then
		ref=$((ref + 1))
		no_session "4: start $i"
	else
		failed "4: start $i exited $rc: $(cat "$tmp/err")"
		"$STROBE" stop >/dev/null 2>&1
	fi
done
as_member touch "$tmp/m/stop"
wait "$swapper"
echo "race: $acc starts accepted, $ref refused, while the path was swapped $(cat "$tmp/m/swaps" 2>/dev/null) times"
[ $acc -gt 0 ] || failed "4: no start was accepted while the path was swapped"
[ "$(cat "$tmp/m/swaps" 2>/dev/null || echo 0)" -gt 1000 ] || failed "4: the path was hardly swapped"
[ $bad = $bad4 ] && ok "4: swaps during the requests: refused, or probes in the member's copy only"

# 5. a FIFO: refused at once, for the member and for root
bad5=$bad
as_member mkfifo "$tmp/m/fifo" || fail "mkfifo"
for who in member root; do
	w=
	[ $who = member ] && w=as_member
	t0=$(date +%s%N)
	$w timeout 10 "$STROBE" $S --marker "$tmp/m/fifo:p:n" >"$tmp/out" 2>"$tmp/err"
	rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
	echo "FIFO as $who: exit $rc after $ms ms: $(cat "$tmp/err")"
	if [ $rc = 124 ]; then
		failed "5: the FIFO blocked the $who's start for 10 s"
		timeout 5 sh -c ': >"$1"' sh "$tmp/m/fifo"	# let strobed go on
	elif [ $rc = 0 ]; then
		failed "5: a FIFO was accepted for the $who"
		"$STROBE" stop >/dev/null 2>&1
	else
		grep -q "^strobe start: marker '$tmp/m/fifo:p:n': $tmp/m/fifo is not a regular file" "$tmp/err" ||
			failed "5: the $who's FIFO: $(cat "$tmp/err")"
		[ $ms -lt 5000 ] || failed "5: the $who's FIFO took $ms ms"
	fi
	timeout 2 "$STROBE" status >/dev/null 2>&1 || failed "5: strobed does not answer after the $who's FIFO"
done
[ $bad = $bad5 ] && ok "5: a FIFO is refused at once"

# 6. a file the member can read but does not own
bad6=$bad
unique_copy "$WL/tlbwalk" "$tmp/pub/other" >/dev/null || fail "copy other"
as_member test -r "$tmp/pub/other" || fail "the member cannot read pub/other"
as_member "$STROBE" $S --marker "$tmp/pub/other:$P" >/dev/null 2>"$tmp/err" && {
	failed "6: the member's --marker on root's readable copy was accepted"
	as_member "$STROBE" stop >/dev/null 2>&1
}
grep -q "^strobe start: marker '$tmp/pub/other:$P': $tmp/pub/other belongs to uid 0: only its owner and root may place probes in it" "$tmp/err" ||
	failed "6: the member's refusal: $(cat "$tmp/err")"
no_session "6: other"
"$STROBE" $S --marker "$tmp/pub/other:$P" >/dev/null 2>"$tmp/err" &&
	"$STROBE" stop >/dev/null 2>&1 || failed "6: root's --marker on its own copy: $(cat "$tmp/err")"
[ $bad = $bad6 ] && ok "6: a readable file of another user: refused for the member, root's"

stop_daemon || failed "strobed did not exit cleanly: $(tail -n 5 "$tmp/strobed.log")"
[ $bad = 0 ] || fail "$bad checks failed"
ok "markers are placed only in files the member can read, and in the file read"
