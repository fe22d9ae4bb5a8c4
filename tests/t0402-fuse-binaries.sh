#!/bin/sh
# t0402-fuse-binaries: root strobed never waits for a FUSE daemon.  A file
# on FUSE is served by a process, perhaps a user's (a mount with
# allow_other, which /etc/fuse.conf's user_allow_other lets any user make),
# that answers each stat, open and read when it pleases, or never: ingest
# and binhold, reading a mapped binary as root, would wait on it, and the
# session with them.  A FUSE file system (python3-fusepy) serves one
# program, nobody's, mode 0755; nobody runs it from there; the file system
# logs every open and read with the caller's uid and process.  None may be
# this strobed's (other strobeds on the machine may look too), and the binary is
# stored unavailable, its problem saying FUSE.  Before: strobed opened and
# read it as root (map_files), and had the daemon hung, so would ingest.
. "$(dirname "$0")/lib.sh"
need_root
need_users
[ -c /dev/fuse ] || skip "no /dev/fuse"
/usr/bin/python3 -c 'import fusepy' 2>/dev/null || skip "python3-fusepy is not installed"

chmod 755 "$tmp"
mkdir -m 0755 "$tmp/mnt"
unique_copy "$WL/split603010" "$tmp/prog" >/dev/null || fail "copying split603010"
cat >"$tmp/serve.py" <<'PY'
import errno, os, stat, sys
import fusepy as fuse
data = open(sys.argv[2], "rb").read()
log = open(sys.argv[3], "a", buffering=1)
uid, gid = int(sys.argv[4]), int(sys.argv[5])
def who():
    # the caller's uid and process (FUSE names the thread): other test
    # suites' strobeds on this machine profile our program too
    u, g, tid = fuse.fuse_get_context()
    try:
        tgid = [l.split()[1] for l in open(f"/proc/{tid}/status") if l.startswith("Tgid:")][0]
    except (OSError, IndexError):
        tgid = "?"
    return f"uid {u} process {tgid}"
class One(fuse.Operations):
    def getattr(self, path, fh=None):
        if path == "/":
            return dict(st_mode=stat.S_IFDIR | 0o755, st_nlink=2)
        if path == "/prog":
            return dict(st_mode=stat.S_IFREG | 0o755, st_nlink=1, st_size=len(data),
                        st_uid=uid, st_gid=gid)
        raise fuse.FuseOSError(errno.ENOENT)
    def readdir(self, path, fh):
        return [".", "..", "prog"]
    def open(self, path, flags):
        log.write(f"open {who()} \n")
        return 0
    def read(self, path, size, offset, fh):
        log.write(f"read {who()} {offset} {size}\n")
        return data[offset:offset + size]
fuse.FUSE(One(), sys.argv[1], foreground=True, allow_other=True)
PY
: >"$tmp/ops"
/usr/bin/python3 "$tmp/serve.py" "$tmp/mnt" "$tmp/prog" "$tmp/ops" "$nuid" "$ngid" \
	>"$tmp/fuse.log" 2>&1 &
fpid=$!
cleanup_fuse() { umount -l "$tmp/mnt" 2>/dev/null; kill "$fpid" 2>/dev/null; }
trap 'cleanup_fuse; cleanup' EXIT
i=0
until grep -q " $tmp/mnt fuse" /proc/mounts; do
	i=$((i + 1))
	[ $i -gt 100 ] && skip "the FUSE file system did not mount: $(cat "$tmp/fuse.log")"
	sleep 0.05
done

start_daemon
mine=" uid 0 process $daemon_pid "
"$STROBE" start --sample-event cpu-clock -F 200 --name fuse >/dev/null 2>"$tmp/err" ||
	fail "start: $(cat "$tmp/err")"
as_nobody "$tmp/mnt/prog" 1 >/dev/null 2>"$tmp/run.err" ||
	fail "nobody could not run the program on FUSE: $(cat "$tmp/run.err")"
timeout 30 "$STROBE" stop >"$tmp/stop" 2>&1 || fail "stop: $(cat "$tmp/stop")"
stop_daemon
cleanup_fuse

row=$(sqlite3 "$STROBE_DB" "SELECT cached || '|' || ifnull(problem, '') FROM binaries WHERE path = '$tmp/mnt/prog'")
echo "binary: $row"
echo "opens and reads: $(grep -c '^open' "$tmp/ops") and $(grep -c '^read' "$tmp/ops"), our strobed's: $(grep -c "$mine" "$tmp/ops")"
grep "$mine" "$tmp/ops" | head -5
samples=$(sqlq "$STROBE_DB" "SELECT count(*) FROM samples s JOIN binaries b ON b.id = s.binary_id WHERE b.path = '$tmp/mnt/prog'")
[ "$samples" -gt 0 ] || fail "no samples in the program on FUSE (the test ran nothing)"
grep -q "$mine" "$tmp/ops" && fail "strobed (root) opened or read the file on FUSE"
case $row in
0\|*FUSE*) ;;
*) fail "the program on FUSE not stored unavailable with a FUSE problem ($row)" ;;
esac
ok "a program on FUSE: strobed asked its daemon nothing, the binary unavailable ($samples samples)"
