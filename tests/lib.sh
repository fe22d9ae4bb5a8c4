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
tmp=$(mktemp -d /tmp/strobe-test.XXXXXX)
export STROBE_DB=$tmp/strobe.db
export STROBE_SOCKET=$tmp/strobed.sock
daemon_pid=

cleanup() {
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

stop_daemon() {
	kill "$daemon_pid"
	wait "$daemon_pid"
	rc=$?
	daemon_pid=
	return $rc
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
