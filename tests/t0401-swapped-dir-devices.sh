#!/bin/sh
# t0401-swapped-dir-devices: root strobed never opens a device node or a
# FIFO that a user names through a directory on a mapped file's path.
# nobody maps a file, exits at once and exchanges a directory on its path
# for a symlink (tests/workloads/mapswap TARGET form): to /dev, the file
# being named "full", and to a directory of its own holding a FIFO of the
# mapped file's name.  O_NOFOLLOW covers only the last component, so a
# strobed that opens the path for real (to check what it is afterwards)
# opens /dev/full and the FIFO as root: with /dev/watchdog that reboots
# the machine.  Every open of /dev/full and of the FIFO is watched with
# inotify (IN_OPEN: a real open, not an O_PATH lookup): none may come from
# strobed, and both binaries are stored unavailable.  Runs as nobody
# outside group strobe and as a member.
. "$(dirname "$0")/lib.sh"
need_root
need_users
[ -c /dev/full ] || skip "no /dev/full"

bad=0
failed() { echo "FAIL: $*"; bad=$((bad + 1)); }

# watch FILE...: inotify IN_OPEN on each, until $tmp/watch.stop; the
# opens, by file, in $tmp/watch.out
watch_start() {
	rm -f "$tmp/watch.stop" "$tmp/watch.out" "$tmp/watch.ready"
	python3 - "$tmp" "$@" <<'PY' &
import ctypes, os, select, struct, sys
tmp, files = sys.argv[1], sys.argv[2:]
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK)
wds = {libc.inotify_add_watch(fd, f.encode(), 0x20): f for f in files}	# IN_OPEN
open(tmp + "/watch.ready", "w").close()
opens = {f: 0 for f in files}
while not os.path.exists(tmp + "/watch.stop"):
    if select.select([fd], [], [], 0.1)[0]:
        buf = os.read(fd, 65536)
        i = 0
        while i < len(buf):
            wd, mask, cookie, n = struct.unpack_from("iIII", buf, i)
            opens[wds.get(wd, "?")] = opens.get(wds.get(wd, "?"), 0) + 1
            i += 16 + n
with open(tmp + "/watch.out", "w") as o:
    for f, n in opens.items():
        o.write(f"{n} {f}\n")
PY
	watcher=$!
	i=0
	while [ ! -e "$tmp/watch.ready" ]; do
		i=$((i + 1))
		[ $i -gt 100 ] && fail "inotify watcher did not start"
		sleep 0.05
	done
}
watch_stop() {
	: >"$tmp/watch.stop"
	wait "$watcher"
}

binary_row() {
	sqlite3 "$STROBE_DB" "SELECT cached || '|' || ifnull(problem, '') FROM binaries WHERE path = '$1'"
}

for who in nobody member; do
	run=as_$who
	att=$tmp/att-$who
	mkdir "$att" && chown "$nuid:$ngid" "$att" && chmod 0755 "$att" || fail "attacker dir"
	$run mkdir "$att/d" "$att/e" "$att/fifod" || fail "dirs as $who"
	$run sh -c "head -c 8192 /dev/urandom >$att/d/full; head -c 8192 /dev/urandom >$att/e/pipe" ||
		fail "files as $who"
	$run mkfifo "$att/fifod/pipe" || fail "mkfifo as $who"
	$run ln -s /dev "$att/devl" && $run ln -s "$att/fifod" "$att/fifol" || fail "symlinks"

	rm -rf "$STROBE_DB" "$STROBE_DB"-* "$STROBE_DB".*
	start_daemon
	"$STROBE" start --sample-event cpu-clock -F 100 --name devices >/dev/null 2>"$tmp/start.err" ||
		fail "start: $(cat "$tmp/start.err")"
	sleep 0.3
	watch_start /dev/full "$att/fifod/pipe"
	$run "$WL/mapswap" "$att/d/full" "$att/devl" "$att/d" >/dev/null || failed "mapswap d/full"
	$run "$WL/mapswap" "$att/e/pipe" "$att/fifol" "$att/e" >/dev/null || failed "mapswap e/pipe"
	[ -L "$att/d" ] && [ -L "$att/e" ] || failed "the directories were not exchanged"
	sleep 0.5
	timeout 20 "$STROBE" stop >"$tmp/stop" 2>&1 || failed "stop: $(cat "$tmp/stop")"
	sleep 0.2
	watch_stop
	stop_daemon
	echo "$who: opens seen while strobed ingested: $(tr '\n' ';' <"$tmp/watch.out")"
	while read -r n f; do
		[ "$n" = 0 ] || failed "$who: $f was opened $n times while strobed ingested the swapped paths"
	done <"$tmp/watch.out"
	for p in "$att/d/full" "$att/e/pipe"; do
		row=$(binary_row "$p")
		echo "$who: $p: $row"
		case $row in
		0\|?*) ;;
		*) failed "$who: $p not stored unavailable with a problem ($row)" ;;
		esac
	done
done
[ $bad = 0 ] || fail "$bad checks failed"
ok "a directory swapped for a symlink to /dev or to a FIFO's directory: strobed opened neither, both binaries unavailable"
