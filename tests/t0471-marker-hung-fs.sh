#!/bin/sh
# t0471-marker-hung-fs: a member whose --marker paths hang (a FUSE mount
# or a dead NFS directory) cannot hold strobed's event loop again and
# again.  The requester's child looks the path up, and the event loop
# waits for it up to 2 s (PEER_OPEN_TIMEOUT_MS); each uid but root has
# 4 s of such lookups a minute (daemon/session_params.c).  A FUSE file system
# whose every lookup hangs (python3-fusepy): the member's first two
# starts time out, the next is refused at once with a line saying why
# (before: each start held every client 2 s, without end), and root's
# start with a local marker still works.
. "$(dirname "$0")/lib.sh"
need_root
need_users
[ -c /dev/fuse ] || skip "no /dev/fuse"
/usr/bin/python3 -c 'import fusepy' 2>/dev/null || skip "python3-fusepy is not installed"

mkdir -m 0755 "$tmp/mnt"
chmod 755 "$tmp"
cat >"$tmp/hang.py" <<'PY'
import errno, stat, sys, time
import fusepy as fuse
class Hang(fuse.Operations):
    def getattr(self, path, fh=None):
        if path == "/":
            return dict(st_mode=stat.S_IFDIR | 0o755, st_nlink=2)
        time.sleep(120)
        raise fuse.FuseOSError(errno.ENOENT)
fuse.FUSE(Hang(), sys.argv[1], foreground=True, allow_other=True)
PY
/usr/bin/python3 "$tmp/hang.py" "$tmp/mnt" >"$tmp/fuse.log" 2>&1 &
fpid=$!
cleanup_fuse() { umount -l "$tmp/mnt" 2>/dev/null; kill "$fpid" 2>/dev/null; }
i=0
until grep -q " $tmp/mnt fuse" /proc/mounts; do
	i=$((i + 1))
	[ $i -gt 100 ] && { cleanup_fuse; skip "the FUSE file system did not mount: $(cat "$tmp/fuse.log")"; }
	sleep 0.05
done

start_daemon
S="start --sample-event cpu-clock -F 100"
refused=0
# the request goes straight to the socket: the CLI's own realpath of the
# path would hang in the file system first
# (six tries: the budget is per minute, and a minute may turn meanwhile)
for n in 1 2 3 4 5 6; do
	t0=$(date +%s%N)
	as_member /usr/bin/python3 - "$STROBE_SOCKET" "$tmp/mnt/prog:p:n" >"$tmp/err" 2>&1 <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(30)
s.connect(sys.argv[1])
s.sendall(b"start sample_event=cpu-clock freq=100 marker0=" + sys.argv[2].encode() + b"\n")
import urllib.parse
print(urllib.parse.unquote(s.makefile().readline().strip()))
PY
	rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
	echo "start $n: exit $rc after $ms ms: $(cat "$tmp/err")"
	grep -q "^ok" "$tmp/err" && { "$STROBE" stop >/dev/null 2>&1; cleanup_fuse; fail "start $n with a hung marker path accepted"; }
	grep -q "took .* in this minute" "$tmp/err" && { refused=$n; break; }
done
cleanup_fuse
[ "$refused" -ge 3 ] || fail "no start was refused for the uid's lookup time (refused at: $refused)"
cp "$WL/split603010" "$tmp/m1" && chmod 755 "$tmp/m1"
"$STROBE" $S >/dev/null 2>"$tmp/err" || fail "root's start after the member's: $(cat "$tmp/err")"
"$STROBE" stop >/dev/null 2>&1 || fail "stop"
ok "a member's hung --marker lookups: two time out, then refused for the uid's lookup time; strobed never waited for the stuck children"
