# lib.sh - helpers for the end-to-end tests tests/tNNNN-*.sh.
# Each test sources this file, runs the real strobed and strobe on real
# workloads in a private directory, and exits 0 (pass), 1 (fail) or
# 77 (skip, with a line "SKIP reason" saying why).
set -u
top=${STROBE_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
build=${STROBE_BUILD:-$top}
STROBE=$build/tools/strobe
STROBED=$build/daemon/strobed
WL=$build/tests/workloads
export STROBED
# Python's checks read samples through tests/strobedb.py; the sqlite3
# shell through strobe's extension (sqlq ARGS: sqlite3 with it loaded)
export PYTHONPATH=$top/tests${PYTHONPATH:+:$PYTHONPATH}
sqlq() { sqlite3 -cmd ".load $build/lib/strobe_samples" "$@"; }
tmp=$(mktemp -d /tmp/strobe-test.XXXXXX)
export STROBE_TEST_TMP=$tmp
export STROBE_DB=$tmp/strobe.db
export STROBE_SOCKET=$tmp/strobed.sock
# No report asks the user's debuginfod servers (t0139 starts its own).
unset DEBUGINFOD_URLS
daemon_pid=
spins=
uipid=

# spins_start: one bench/spin per online CPU, every CPU kept busy until
# spins_stop (or the test's end)
spins_start() {
	for i in $(seq "$(getconf _NPROCESSORS_ONLN)"); do
		"$build/bench/spin" 1000000 &
		spins="$spins $!"
	done
}
spins_stop() {
	[ -n "$spins" ] && kill $spins 2>/dev/null
	for p in $spins; do wait "$p" 2>/dev/null; done
	spins=
}

# need_browser: skip unless strobe ui is built and a headless browser can
# drive it (Debian's chromium, or $CHROMIUM; node >= 20; playwright-core
# from npm ci --prefix tests/ui); sets chromium to the browser's path
need_browser() {
	"$STROBE" ui --help >/dev/null 2>&1 || skip "strobe ui is not built"
	chromium=${CHROMIUM:-/usr/bin/chromium}
	[ -x "$chromium" ] || skip "no chromium at $chromium (apt-get install chromium)"
	command -v node >/dev/null || skip "node is not installed (apt-get install nodejs npm)"
	nodemajor=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)
	[ "${nodemajor:-0}" -ge 20 ] 2>/dev/null ||
		skip "node $(node --version 2>/dev/null) is older than playwright-core's 20"
	[ -f "$top/tests/ui/node_modules/playwright-core/package.json" ] ||
		skip "playwright-core is not installed: npm ci --prefix tests/ui"
}

# ui_start ARG...: 'strobe ui ARG...' in the background, its pid in uipid
# (cleanup kills it), its stdout in $tmp/ui.out and stderr in $tmp/ui.err;
# back once it printed its "strobe ui: " line or after 10 s (the caller
# checks the URL line); fails if it exits before
ui_start() {
	"$STROBE" ui "$@" >"$tmp/ui.out" 2>"$tmp/ui.err" &
	uipid=$!
	i=0
	# -s: the file may not be there yet (the shell of & opens it)
	while ! grep -qs '^strobe ui: ' "$tmp/ui.out" && [ $i -lt 100 ]; do
		kill -0 $uipid 2>/dev/null || fail "strobe ui exited: $(cat "$tmp/ui.err")"
		sleep 0.1
		i=$((i + 1))
	done
}

# status_save NAME: 'strobe status' into $tmp/NAME; status_stored NAME
# (samples stored), status_behind NAME ("RECORDS SECONDS" ingest is
# behind) and status_waited NAME (seconds ingest has waited for an idle
# CPU; empty when it does not wait) read that file
# free_port: a TCP port on 127.0.0.1 that nothing listens on now, for a
# server a test starts later (ClickHouse, debuginfod).  Taken below the
# kernel's ephemeral range (ip_local_port_range): a port from that range
# can be taken by any outgoing connection (the other shard's, curl's)
# before the server binds it, as t0820 once found ("Address already in
# use").  Random, so that tests running at once rarely pick the same;
# never one this test was given before ($tmp/free_ports), which nothing
# listens on until its server starts: two ClickHouse instances' four
# ports drawn before either started could meet (t0812 once did).
free_port() {
	python3 - "$tmp/free_ports" <<'PY'
import random, socket, sys
try:
    given = set(open(sys.argv[1]).read().split())
except OSError:
    given = set()
try:
    lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except (OSError, ValueError, IndexError):
    lo = 32768
lo = max(lo, 2048)
for _ in range(200):
    p = random.randrange(1024 if lo <= 11024 else 10000, lo)
    if str(p) in given:
        continue
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        s.close()
    break
else:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
with open(sys.argv[1], "a") as f:
    f.write(f"{p}\n")
print(p)
PY
}

status_save() { "$STROBE" status >"$tmp/$1" 2>&1 || fail "status: $(cat "$tmp/$1")"; }
status_stored() { sed -n 's/^session [0-9]* running for [0-9.]* s: \([0-9]*\) samples.*/\1/p' "$tmp/$1"; }
status_behind() { sed -n 's/^ingest: \([0-9]*\) records behind (\([0-9.]*\) s).*/\1 \2/p' "$tmp/$1"; }
status_waited() { sed -n 's/.*ingest waits for an idle CPU since \([0-9.]*\) s.*/\1/p' "$tmp/$1"; }
# wait_ingest_waits NAME: until ingest waits for an idle CPU (the session
# running, every CPU spinning: spins_start), its status in $tmp/NAME;
# fails after 10 s
wait_ingest_waits() {
	i=0
	while status_save "$1"; [ -z "$(status_waited "$1")" ]; do
		i=$((i + 1))
		[ $i -gt 100 ] && fail "no wait for an idle CPU in 10 s with $(getconf _NPROCESSORS_ONLN) spinning CPUs: $(cat "$tmp/$1")"
		sleep 0.1
	done
}

# mount_small: a 1 GiB tmpfs at $small ($tmp/small, mode 0700) for a
# database to fill, unmounted at the end after strobed is gone; skips
# when no tmpfs can be mounted here
mount_small() {
	small=$tmp/small
	mkdir "$small"
	mount -t tmpfs -o size=1g,mode=0700 tmpfs "$small" 2>"$tmp/mount.err" ||
		skip "cannot mount a tmpfs here: $(cat "$tmp/mount.err")"
	trap cleanup_small EXIT
}
cleanup_small() {
	spins_stop
	if [ -n "$daemon_pid" ]; then
		kill "$daemon_pid" 2>/dev/null
		wait "$daemon_pid" 2>/dev/null
		daemon_pid=
	fi
	umount "$small" 2>/dev/null || umount -l "$small"
	cleanup
}

cleanup() {
	spins_stop
	if [ -n "$uipid" ]; then
		kill "$uipid" 2>/dev/null
		wait "$uipid" 2>/dev/null
	fi
	if [ -n "$daemon_pid" ]; then
		kill "$daemon_pid" 2>/dev/null
		wait "$daemon_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP $*"; exit 77; }
ok() { echo "ok: $*"; }

need_root() {
	[ "$(id -u)" = 0 ] || skip "needs root (system-wide profiling)"
}

# start_daemon [ARGS]: a strobed in the foreground on $STROBE_DB/$STROBE_SOCKET
start_daemon() {
	"$STROBED" --foreground --db "$STROBE_DB" --socket "$STROBE_SOCKET" "$@" \
		2>"$tmp/strobed.log" &
	daemon_pid=$!
	i=0
	while ! "$STROBE" status >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt 200 ] && { cat "$tmp/strobed.log"; fail "strobed did not start"; }
		kill -0 "$daemon_pid" 2>/dev/null || { cat "$tmp/strobed.log"; fail "strobed died"; }
		sleep 0.05
	done
}

# wait_socket PATH LOG: until a socket file PATH exists (10 s at most);
# fails showing LOG, also as soon as the process $daemon_pid has died
wait_socket() {
	i=0
	while ! [ -S "$1" ]; do
		i=$((i + 1))
		[ $i -gt 200 ] && { cat "$2"; fail "nothing listens on $1"; }
		kill -0 "$daemon_pid" 2>/dev/null || { cat "$2"; fail "the daemon died before listening on $1"; }
		sleep 0.05
	done
}

stop_daemon() {
	kill "$daemon_pid"
	wait "$daemon_pid"
	rc=$?
	daemon_pid=
	return $rc
}

# idlest_cpu: the online CPU that was idle longest over 0.3 s (/proc/stat).
# A workload whose system-wide shape a test reads (the samples per bucket)
# runs pinned there: sharing a CPU with other load (a CPU hog), its idle
# time would be the hog's busy time, and its phases would not show.
idlest_cpu() {
	python3 - <<'PY'
import time
def idle():
    d = {}
    for l in open("/proc/stat"):
        f = l.split()
        if f[0].startswith("cpu") and f[0] != "cpu":
            d[f[0][3:]] = int(f[4]) + int(f[5])
    return d
a = idle()
time.sleep(0.3)
b = idle()
print(max(b, key=lambda c: b[c] - a.get(c, b[c])))
PY
}

# strobed_req LINE: send one protocol line to $STROBE_SOCKET, print the
# first line of the answer (requests the CLI never sends as such).
strobed_req() {
	python3 - "$STROBE_SOCKET" "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().readline().strip())
PY
}

# perf_bid: the option that makes perf record accept MMAP2 records with
# build-ids (strobed's events ask for them, and the kernel may then flag
# perf's own as carrying one: perf 6.1 asserts on those unless it asks too);
# -B (no build-ids at all) where perf or the kernel (< 5.12) lacks it
perf_bid() {
	if perf record -q --buildid-mmap -e cpu-clock -o "$tmp/perf-probe.data" -- true \
		>/dev/null 2>&1; then
		echo --buildid-mmap
	else
		echo -B
	fi
	rm -f "$tmp/perf-probe.data"
}

# csv_get FILE KEYCOL KEY COL: the value of COL in the first row whose KEYCOL is KEY
csv_get() {
	python3 - "$@" <<'PY'
import csv, sys
f, kc, k, c = sys.argv[1:5]
for row in csv.DictReader(open(f)):
    if row[kc] == k:
        print(row[c]); break
PY
}

# near A B PCT: |A-B| <= PCT% of B
near() {
	python3 -c "import sys; a,b,p=map(float,sys.argv[1:4]); sys.exit(0 if abs(a-b) <= p/100*abs(b) else 1)" "$1" "$2" "$3"
}

# unique_copy SRC DST [HEX]: copy an ELF file with fresh random build-id
# bytes (or the build-id HEX, of the same length); prints the new build-id
unique_copy() {
	python3 - "$@" <<'PY'
import os, struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
assert d[:4] == b"\x7fELF" and d[4] == 2 and d[5] == 1, "not a little-endian ELF64 file"
shoff, = struct.unpack_from("<Q", d, 0x28)
shentsize, shnum = struct.unpack_from("<HH", d, 0x3a)
ids = []
for i in range(shnum):
    sh = shoff + i * shentsize
    if struct.unpack_from("<I", d, sh + 4)[0] != 7:	# SHT_NOTE
        continue
    off, size = struct.unpack_from("<QQ", d, sh + 0x18)
    p = off
    while p + 12 <= off + size:
        nsz, dsz, typ = struct.unpack_from("<III", d, p)
        desc = p + 12 + ((nsz + 3) & ~3)
        if typ == 3 and d[p + 12:p + 12 + nsz] == b"GNU\0":	# NT_GNU_BUILD_ID
            new = bytes.fromhex(sys.argv[3]) if len(sys.argv) > 3 else os.urandom(dsz)
            assert len(new) == dsz, f"build-id of {dsz} bytes, not {len(new)}"
            d[desc:desc + dsz] = new
            ids.append(d[desc:desc + dsz].hex())
        p = desc + ((dsz + 3) & ~3)
assert len(ids) == 1, f"{len(ids)} build-id notes"
open(sys.argv[2], "wb").write(d)
os.chmod(sys.argv[2], 0o755)
print(ids[0])
PY
}

# refused RC SUBCMD ERE CMD...: CMD exits RC with exactly one line on stderr,
# "strobe SUBCMD: ..." matching ERE.
refused() {
	want=$1 sub=$2 re=$3
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = "$want" ] || fail "'$*' exited $rc, not $want: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "'$*' did not print exactly one line on stderr: $(cat "$tmp/err")"
	grep -q "^strobe $sub: " "$tmp/err" || fail "'$*': stderr does not start with 'strobe $sub: ': $(cat "$tmp/err")"
	grep -Eq -- "$re" "$tmp/err" || fail "'$*': stderr does not match /$re/: $(cat "$tmp/err")"
}

# need_users [daemon]: the unprivileged users the permission tests run as.
# Skips (saying why) without setpriv or user nobody (and user daemon, when
# asked for); creates group strobe as setup.sh does; sets gid (strobe's),
# nuid/ngid (nobody's) and duid/dgid (daemon's), and lets others traverse
# $tmp (the tests' own modes keep them out of what matters).  Then:
#   as_nobody CMD...   nobody, in no group of strobe's
#   as_member CMD...   nobody, with strobe as a supplementary group
#   as_other CMD...    daemon, with strobe as a supplementary group
need_users() {
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	id nobody >/dev/null 2>&1 || skip "no user nobody"
	if [ "${1:-}" = daemon ]; then
		id daemon >/dev/null 2>&1 || skip "no user daemon (a second unprivileged user)"
		duid=$(id -u daemon) dgid=$(id -g daemon)
	fi
	getent group strobe >/dev/null || groupadd --system strobe || fail "groupadd --system strobe"
	gid=$(getent group strobe | cut -d: -f3)
	nuid=$(id -u nobody) ngid=$(id -g nobody)
	chmod 0711 "$tmp"
}
# strace_daemon CALLS: strace -f on strobed ($daemon_pid), the system calls
# CALLS (strace's -e trace= list) with descriptors' paths (-y) into
# $tmp/strace.log, its pid in $spid; returns once strace has attached (a
# request to strobed was logged: accept4 or accept must be in CALLS).
# strace_stop: let strobed's last calls in, then stop it.
strace_daemon() {
	strace -f -p "$daemon_pid" -y -qq -e trace="$1" -o "$tmp/strace.log" 2>"$tmp/strace.err" &
	spid=$!
	i=0
	until grep -q . "$tmp/strace.log" 2>/dev/null || [ $i -gt 100 ]; do
		"$STROBE" status >/dev/null 2>&1
		i=$((i + 1))
		sleep 0.05
	done
	grep -q . "$tmp/strace.log" || fail "strace did not attach: $(cat "$tmp/strace.err")"
}
strace_stop() {
	sleep 0.3
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
}

# the uid strobed's workers run as (sandbox_worker_ids, lib/base/sandbox.h):
# _strobe when it exists (setup.sh creates it), else nobody
worker_uid() { id -u _strobe 2>/dev/null || id -u nobody 2>/dev/null || echo 65534; }
as_nobody() { setpriv --reuid="$nuid" --regid="$ngid" --clear-groups "$@"; }
as_member() { setpriv --reuid="$nuid" --regid="$ngid" --groups="$gid" "$@"; }
as_other() { setpriv --reuid="$duid" --regid="$dgid" --groups="$gid" "$@"; }

# db_lock_hold SECS: a process holds $STROBE_DB's write lock (BEGIN
# IMMEDIATE), so that strobed's ingest stores nothing, until
# db_lock_release or SECS seconds; returns once the lock is taken.
# $tmp/unlocked appears when it is released (a test checks it did not
# happen too early).
db_lock_hold() {
	rm -f "$tmp/locked" "$tmp/release" "$tmp/unlocked"
	python3 - "$STROBE_DB" "$1" "$tmp" <<'PY' &
import os, sqlite3, sys, time
db, secs, d = sys.argv[1], float(sys.argv[2]), sys.argv[3]
c = sqlite3.connect(db, timeout=20, isolation_level=None)
c.execute("BEGIN IMMEDIATE")
open(d + "/locked", "w").close()
end = time.monotonic() + secs
while not os.path.exists(d + "/release") and time.monotonic() < end:
    time.sleep(0.05)
c.execute("ROLLBACK")
open(d + "/unlocked", "w").close()
PY
	db_lock_pid=$!
	_i=0
	while [ ! -e "$tmp/locked" ]; do
		_i=$((_i + 1))
		[ $_i -gt 200 ] && fail "could not take the database's write lock"
		sleep 0.05
	done
}

# db_lock_release: end db_lock_hold's hold and wait for it
db_lock_release() {
	: >"$tmp/release"
	wait "$db_lock_pid"
}
