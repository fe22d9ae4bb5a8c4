#!/bin/sh
# t0400-hostile-paths: an unprivileged user (nobody, outside group strobe
# and then as a member of it) cannot turn strobed,
# which runs as root, against the machine through the paths of its
# mappings.  Each attack maps a file of its own (no build-id) PROT_EXEC and
# exits at once (tests/workloads/mapswap), so that strobed, ingesting the
# MMAP2 record ~100 ms later, finds /proc/PID/map_files gone and has only
# the path:
#  1. a symlink to a root-only file (mode 0600, a random marker inside) and
#     one to /etc/shadow are renamed over the paths: no file under the
#     binary cache ($STROBE_DB.cache) nor the db holds the marker or
#     /etc/shadow's bytes, and both binaries are stored unavailable
#     (binaries.cached = 0, with a problem); and the same when the
#     directory on the path is exchanged with a symlink to a root-only
#     directory holding a root-only file of the same name (O_NOFOLLOW does
#     not cover that: the check of the opened file's device and inode does);
#  2. a FIFO is renamed over the path: strobed still answers strobe status
#     within 3 s and the session stops cleanly;
#  3. a 100 GB sparse file is mapped (one page): strobe stop returns within
#     10 s, no cache entry is larger than strobed's limit (1 GiB), the cache
#     grows by less than 256 MB (the session is system-wide: binaries other
#     engineers start meanwhile land in the cache too), and the binary is
#     stored unavailable as larger than strobed's limit.
# mapswap prints its pid before it maps, so only a rename(2) separates the
# mapping from the exit: a drain of strobed's ring inside that window
# (strobed wakes every 100 ms) would read the original through map_files.
# Each part runs its own strobed; a part that fails is reported and the
# next still runs.
. "$(dirname "$0")/lib.sh"
need_root
need_users

bad=0
failed() { echo "FAIL: $*"; bad=$((bad + 1)); }

# strobed may be stuck: TERM, then KILL after 5 s
end_daemon() {
	[ -n "$daemon_pid" ] || return 0
	kill "$daemon_pid" 2>/dev/null
	i=0
	while kill -0 "$daemon_pid" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$daemon_pid" 2>/dev/null; then
		echo "strobed $daemon_pid did not exit on SIGTERM: killed"
		kill -KILL "$daemon_pid"
	fi
	wait "$daemon_pid" 2>/dev/null
	daemon_pid=
}

session_start() {
	rm -rf "$STROBE_DB" "$STROBE_DB"-* "$STROBE_DB.cache"
	start_daemon
	"$STROBE" start --sample-event cpu-clock -F 100 --name hostile >"$tmp/id" \
		2>"$tmp/start.err" || fail "start: $(cat "$tmp/start.err")"
	sleep 0.3
}

# binary_row PATH: "cached|problem" of the binaries row of PATH
binary_row() {
	python3 - "$STROBE_DB" "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
rows = db.execute("SELECT cached, problem FROM binaries WHERE path = ?", (sys.argv[2],)).fetchall()
print("|".join(str(r) for r in rows[0]) if rows else "no row")
PY
}

# unavailable PATH WHAT: PATH's binary is stored, uncached, with a problem
unavailable() {
	row=$(binary_row "$1")
	echo "$2: binaries row of $1: $row"
	case $row in
	0\|None|"no row"|1\|*) failed "$2: binary $1 not stored as unavailable ($row)" ;;
	esac
}

# The attacker's directory (nobody's); the secret is root's, in $tmp,
# which nobody can traverse but not write.
marker=strobe-t0400-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
printf 'secret %s\n' "$marker" >"$tmp/secret"
chmod 0600 "$tmp/secret"
as_nobody test -r "$tmp/secret" && fail "nobody can read the secret"
as_member test -r "$tmp/secret" && fail "a member can read the secret"
# for the directory swap: root's directory with a root-only f5
mkdir -m 0711 "$tmp/sdir" && cp -p "$tmp/secret" "$tmp/sdir/f5" || fail "sdir"

# Each attack runs twice: as nobody outside group strobe, and as nobody
# in it (a member, who may also read the database and cache).
for who in nobody member; do
run=as_$who
echo "--- attacks as $who"
att=$tmp/att-$who
mkdir "$att" && chown "$nuid:$ngid" "$att" && chmod 0755 "$att" || fail "attacker dir"
for f in f1 f2 f3; do
	$run sh -c "head -c 8192 /dev/urandom >$att/$f" || fail "creating $f as $who"
done
$run mkdir "$att/d" && $run sh -c "head -c 8192 /dev/urandom >$att/d/f5" ||
	fail "creating d/f5 as $who"

# 1. symlink race
part=$bad
session_start
$run ln -s "$tmp/secret" "$att/l1" && $run ln -s /etc/shadow "$att/l2" || fail "symlinks"
$run "$WL/mapswap" "$att/f1" "$att/l1" || fail "mapswap f1"
$run "$WL/mapswap" "$att/f2" "$att/l2" || fail "mapswap f2"
$run ln -s "$tmp/sdir" "$att/dl" || fail "symlink to sdir"
$run "$WL/mapswap" "$att/d/f5" "$att/dl" "$att/d" || fail "mapswap d/f5"
[ -L "$att/d" ] || fail "$att/d was not exchanged with a symlink"
sleep 0.5
timeout 20 "$STROBE" stop >"$tmp/stop1" 2>&1 || failed "symlink: stop: $(cat "$tmp/stop1")"
end_daemon
python3 - "$STROBE_DB" "$marker" <<'PY' || failed "symlink: root-only contents were copied"
import os, sys
db, marker = sys.argv[1], sys.argv[2].encode()
shadow = open("/etc/shadow", "rb").read()
files = [db, db + "-wal"] + [os.path.join(d, f) for d, _, fs in os.walk(db + ".cache") for f in fs]
leaks = []
for f in files:
    try:
        data = open(f, "rb").read()
    except FileNotFoundError:
        continue
    if marker in data:
        leaks.append(f"{f} holds the marker")
    if data == shadow or (len(shadow) > 64 and shadow in data):
        leaks.append(f"{f} holds /etc/shadow")
print(f"checked {len(files)} files under the db and its cache")
for l in leaks:
    print("LEAK:", l)
sys.exit(1 if leaks else 0)
PY
unavailable "$att/f1" symlink
unavailable "$att/f2" symlink
unavailable "$att/d/f5" symlink
[ $bad = "$part" ] && ok "$who: symlinks renamed over mapped files or their directory: nothing copied, binaries unavailable"

# 2. FIFO swap
part=$bad
session_start
$run mkfifo "$att/p3" || fail "mkfifo"
$run "$WL/mapswap" "$att/f3" "$att/p3" || fail "mapswap f3"
sleep 0.5
if ! timeout 3 "$STROBE" status >"$tmp/st3" 2>&1; then
	failed "FIFO: strobed did not answer strobe status within 3 s"
	# unblock a strobed stuck opening the FIFO
	timeout 2 sh -c ": >\"$att/f3\""
fi
timeout 10 "$STROBE" stop >"$tmp/stop3" 2>&1 || failed "FIFO: stop: $(cat "$tmp/stop3")"
grep -q "^session [0-9]*: " "$tmp/stop3" || failed "FIFO: stop output: $(cat "$tmp/stop3")"
end_daemon
unavailable "$att/f3" FIFO
[ $bad = "$part" ] && ok "$who: FIFO renamed over a mapped file: strobed answered, session stopped"

# 3. sparse 100 GB file
part=$bad
$run truncate -s 100G "$att/f4" || skip "no sparse 100 GB file on $tmp's filesystem"
session_start
before=$(du -sk "$STROBE_DB.cache" 2>/dev/null | cut -f1)
$run "$WL/mapswap" "$att/f4" || fail "mapswap f4"
sleep 0.5
t0=$(date +%s)
timeout 10 "$STROBE" stop >"$tmp/stop4" 2>&1 || failed "sparse: strobe stop did not return within 10 s: $(cat "$tmp/stop4")"
echo "sparse: stop took $(( $(date +%s) - t0 )) s"
end_daemon
after=$(du -sk "$STROBE_DB.cache" 2>/dev/null | cut -f1)
echo "sparse: cache ${before:-0} KB -> ${after:-0} KB"
[ $(( ${after:-0} - ${before:-0} )) -lt 262144 ] || failed "sparse: the cache grew by $(( ${after:-0} - ${before:-0} )) KB"
big=$(find "$STROBE_DB.cache" -type f -size +1048576k 2>/dev/null)
[ -z "$big" ] || failed "sparse: cache entries larger than 1 GiB: $big"
rm -f "$att/f4"
unavailable "$att/f4" sparse
binary_row "$att/f4" | grep -q "larger than" || failed "sparse: problem does not say larger than the limit"
[ $bad = "$part" ] && ok "$who: 100 GB sparse file mapped: bounded time and cache"

done
[ $bad = 0 ] || fail "$bad checks failed"
