#!/bin/sh
# t0150-callgraph-capture: the capture side of call stacks (issue 12).
# 'strobe record' and 'strobe start' refuse a bad --call-graph (unknown
# mode, a stack size that is not a positive multiple of 8 or is too big,
# an empty one) and --keep-stacks without dwarf, each with one line
# naming the problem and exit status 2, before any strobed is asked;
# strobed refuses the same from a client that skips those checks (a raw
# start request on its socket).  A 'strobe record -g' session stores
# sessions.call_graph 'fp', '--call-graph dwarf,4096 --keep-stacks' stores
# 'dwarf,4096', plain 'dwarf' 'dwarf,8192' and none NULL, and each has
# the workload's samples.  With the driver backend (where /dev/strobe
# exists) dwarf is refused.
. "$(dirname "$0")/lib.sh"
need_root

# refused REGEX OPTIONS...: strobe record OPTIONS -- true fails with exit
# status 2 and one line matching REGEX
refused() {
	re=$1
	shift
	"$STROBE" record "$@" -- true >"$tmp/out" 2>"$tmp/err" && fail "accepted: $*"
	rc=$?
	[ $rc = 2 ] || fail "$*: exit status $rc, not 2: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "$*: not one line: $(cat "$tmp/err")"
	grep -Eq -e "$re" "$tmp/err" || fail "$*: $(cat "$tmp/err")"
}
refused "^strobe record: --call-graph: unknown mode 'xyz' \(fp or dwarf\[,BYTES\]\)$" \
	--call-graph xyz
refused "unknown mode 'lbr'" --call-graph lbr
refused "mode 'fp' takes no size" --call-graph fp,8192
refused "^strobe record: --call-graph: bad stack size '100': give a multiple of 8 bytes" \
	--call-graph dwarf,100
refused "bad stack size '0'" --call-graph dwarf,0
refused "bad stack size 'abc'" --call-graph dwarf,abc
refused "bad stack size ''" --call-graph dwarf,
refused "bad stack size '-8'" --call-graph dwarf,-8
refused "bad stack size '65536'" --call-graph dwarf,65536
refused "empty mode" --call-graph ''
refused "^strobe record: --keep-stacks needs --call-graph dwarf" --keep-stacks
refused "--keep-stacks needs --call-graph dwarf" -g --keep-stacks
refused "--keep-stacks needs --call-graph dwarf" --call-graph fp --keep-stacks
"$STROBE" start --call-graph xyz >"$tmp/out" 2>"$tmp/err" && fail "start accepted --call-graph xyz"
grep -q "^strobe start: --call-graph: unknown mode 'xyz'" "$tmp/err" || fail "start: $(cat "$tmp/err")"
"$STROBE" record --help | grep -q -- "--call-graph fp|dwarf\[,BYTES\]" || fail "record --help"
"$STROBE" start --help | grep -q -- "--keep-stacks" || fail "start --help"
ok "bad --call-graph and --keep-stacks refused by the CLI"

start_daemon
# strobed checks what a client sends, whatever the CLI let through
raw_start() {
	python3 - "$STROBE_SOCKET" "$1" <<'PY'
import socket, sys, urllib.parse
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(("start sample_event=cpu-clock " + sys.argv[2] + "\n").encode())
print(urllib.parse.unquote(s.makefile().readline().strip()))
PY
}
for req in "call_graph=xyz:unknown mode 'xyz'" "call_graph=dwarf,12:bad stack size '12'" \
	   "call_graph=fp keep_stacks=1:--keep-stacks needs --call-graph dwarf" \
	   "call_graph=dwarf keep_stacks=2:bad keep_stacks '2'"; do
	r=$(raw_start "${req%%:*}")
	case $r in
	error*"${req#*:}"*) ;;
	*) fail "strobed answered '$r' to start ${req%%:*}" ;;
	esac
done
"$STROBE" status >"$tmp/status" 2>&1
grep -qi "no session" "$tmp/status" || fail "a refused start left a session: $(cat "$tmp/status")"
ok "strobed refuses bad call_graph and keep_stacks requests"

# rec NAME OPTIONS...: a session named NAME around calltree-fp 1
rec() {
	name=$1
	shift
	"$STROBE" record --sample-event cpu-clock --name "$name" "$@" -- "$WL/calltree-fp" 1 \
		>"$tmp/rec.out" 2>"$tmp/rec.err" || fail "record $*: $(cat "$tmp/rec.err")"
}
rec fp -g
rec dw4 --call-graph dwarf,4096 --keep-stacks
rec dw --call-graph dwarf
rec none
rec fp2 --call-graph dwarf -g
for want in "fp|fp" "dw4|dwarf,4096" "dw|dwarf,8192" "none|" "fp2|fp"; do
	name=${want%%|*}
	got=$(sqlite3 "$STROBE_DB" "SELECT ifnull(call_graph,'') FROM sessions WHERE name='$name'")
	[ "$got" = "${want#*|}" ] || fail "session $name: call_graph '$got', not '${want#*|}'"
	n=$(sqlite3 "$STROBE_DB" "SELECT samples FROM sessions WHERE name='$name' AND state='done'")
	[ "${n:-0}" -gt 0 ] || fail "session $name: no samples, or not done"
done
ok "sessions.call_graph says how each session recorded stacks"

if [ -c /dev/strobe ]; then
	stop_daemon
	start_daemon --backend driver
	"$STROBE" start --sample-event cpu-clock --call-graph dwarf >"$tmp/out" 2>"$tmp/err" &&
		fail "driver backend accepted --call-graph dwarf"
	grep -q "call-graph dwarf needs the perf backend" "$tmp/err" || fail "driver: $(cat "$tmp/err")"
	ok "the driver backend refuses dwarf"
else
	echo "SKIP (part) driver backend with --call-graph dwarf: no /dev/strobe (strobe.ko not loaded)"
fi
