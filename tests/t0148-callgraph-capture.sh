#!/bin/sh
# t0148-callgraph-capture: the capture side of call stacks (issue 12).
# 'strobe record' and 'strobe start' refuse a bad --call-graph (unknown
# mode, a stack size that is not a positive multiple of 8 or is too big,
# an empty one) and --keep-stacks without dwarf, each with one line
# naming the problem and exit status 2, before any strobed is asked;
# strobed refuses the same from a client that skips those checks (a raw
# start request on its socket).  A 'strobe record -g' session stores
# sessions.call_graph 'fp', '--call-graph dwarf,4096 --keep-stacks' stores
# 'dwarf,4096' (and the raw copies, in DB.stacks), plain 'dwarf' 'dwarf,8192' and none NULL, and each has
# the workload's samples.  The stored stacks of calltree-fp (-g) and
# calltree-nofp (--call-graph dwarf) decode, frame by frame through the
# workload's symbol table, to leaf <- outer_a|outer_b <- main for at least
# 95% of the samples in leaf, outer_a's share as perf -g (or perf
# --call-graph dwarf) gives it for the same run within 4 standard
# deviations of two proportions, and near the known 60%.  With the driver
# backend (where /dev/strobe exists) dwarf is refused.
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

# --keep-stacks: the raw copy of every sample that had one (user samples of
# the workload: abi 2, its 4096-byte stack), by the sample's row; none
# without it.  They are in root's DB.stacks (schema 17), attached as rawstk
raw() { sqlq -cmd "ATTACH '$STROBE_DB.stacks' AS rawstk" "$STROBE_DB" "SELECT $2 FROM
	rawstk.raw_stacks AS r JOIN samples AS x ON
	x.rowid = r.sample_row AND x.session_id = r.session_id JOIN sessions AS s ON
	s.id = r.session_id WHERE s.name = '$1'"; }
kept=$(raw dw4 "count(*)")
user=$(sqlq "$STROBE_DB" "SELECT count(*) FROM samples AS x JOIN sessions AS s ON s.id = x.session_id
	WHERE s.name = 'dw4' AND x.flags & 15 = 1")
[ "${kept:-0}" -gt 0 ] && [ "$kept" -ge "$user" ] ||
	fail "--keep-stacks: $kept raw stacks for $user user samples"
# struct strobe_ustack: abi (u32) 2 = PERF_SAMPLE_REGS_ABI_64 first, for
# every sample taken in user mode (kernel threads have none: abi 0)
abi2=$(raw dw4 "sum(x.flags & 15 = 1 AND substr(hex(ustack), 1, 8) = '02000000')")
[ "$abi2" = "$user" ] || fail "--keep-stacks: $abi2 of $user user samples have abi 2"
[ "$(raw dw "count(*)")" = 0 ] || fail "raw stacks kept without --keep-stacks"
ok "--keep-stacks keeps each sample's registers and stack copy"

# The stacks of calltree's samples, decoded into the workload's symbols:
# shares of the samples in leaf whose caller is outer_a (the rest:
# outer_b), with main above, against perf -g recording the same run.
# check_tree NAME PROG OPTIONS...: strobe OPTIONS and perf (PERF_CG) on PROG
check_tree() {
	name=$1 prog=$2
	shift 2
	"$STROBE" record --sample-event cpu-clock -F 1000 --name "$name" "$@" \
		-- perf record -q "$(perf_bid)" -a $PERF_CG -e cpu-clock -F 1000 \
		-o "$tmp/$name.data" -- sh -c 'echo $$ >"$1"; exec "$2" 2' sh "$tmp/$name.pid" \
		"$WL/$prog" >"$tmp/rec.out" 2>"$tmp/rec.err" || fail "record $*: $(cat "$tmp/rec.err")"
	perf script -i "$tmp/$name.data" --pid "$(cat "$tmp/$name.pid")" -F ip,sym \
		>"$tmp/$name.txt" 2>"$tmp/script.err" || fail "perf script: $(cat "$tmp/script.err")"
	python3 - "$STROBE_DB" "$name" "$(cat "$tmp/$name.pid")" "$WL/$prog" "$tmp/$name.txt" \
		<<'PY' || fail "$name: stacks of $prog"
import os, sqlite3, struct, subprocess, sys
import strobedb
dbf, name, pid, prog, perff = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
# file offset -> symbol of the workload (PIE: through its LOAD segments)
loads = []
for l in subprocess.run(["readelf", "-lW", prog], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if f and f[0] == "LOAD":
        loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))	# offset, vaddr, filesz
syms = sorted((int(a, 16), n) for a, t, n in (l.split() for l in subprocess.run(
    ["nm", prog], capture_output=True, text=True).stdout.splitlines() if len(l.split()) == 3)
    if t in "tT")
def sym(off):
    for o, v, sz in loads:
        if o <= off < o + sz:
            a = v + off - o
            return max((s for s in syms if s[0] <= a), default=(0, "?"))[1]
    return "?"
db = strobedb.connect(dbf)
q = lambda sql, *a: db.execute(sql, a).fetchall()
sid, = q("SELECT id FROM sessions WHERE name=?", name)[0]
prog_ids = {i for i, p in q("SELECT id, path FROM binaries") if p and os.path.realpath(p) == os.path.realpath(prog)}
assert prog_ids, f"{prog} not among the session's binaries"
stacks = {}
for i, nr, frames in q("SELECT id, nr, frames FROM stacks WHERE session_id=?", sid):
    assert len(frames) == 16 * nr, f"stack {i}: {len(frames)} bytes for {nr} frames"
    stacks[i] = [sym(o) if b in prog_ids else "-" for b, o in
                 (struct.unpack_from("<qq", frames, 16 * k) for k in range(nr))]
n = a = b = other = 0
for (st,) in q("SELECT stack_id FROM samples WHERE session_id=? AND pid=?", sid, pid):
    fr = stacks.get(st, [])
    if not fr or fr[0] != "leaf":
        continue
    n += 1
    if fr[1:3] == ["outer_a", "main"]:
        a += 1
    elif fr[1:3] == ["outer_b", "main"]:
        b += 1
    else:
        other += 1
assert n > 200, f"only {n} samples in leaf with a stack"
assert other <= n / 20, f"{other} of {n} leaf samples without leaf <- outer_a|outer_b <- main"
# perf script: blank-line separated samples, "IP SYM" frames, leaf first
pn = pa = 0
for blk in open(perff).read().split("\n\n"):
    fr = [l.split()[1] if len(l.split()) > 1 else "?" for l in blk.strip().splitlines()]
    if fr and fr[0] == "leaf" and len(fr) > 1 and fr[1] in ("outer_a", "outer_b"):
        pn += 1
        pa += fr[1] == "outer_a"
assert pn > 200, f"perf: only {pn} samples in leaf under outer_a or outer_b"
sa, pa_ = 100 * a / (a + b), 100 * pa / pn
# two proportions of some 1,000 samples each: 4 standard deviations
tol = 4 * 100 * (0.24 / (a + b) + 0.24 / pn) ** 0.5
print(f"{name}: outer_a {sa:.1f}% of {a + b} strobe samples, perf {pa_:.1f}% of {pn}")
assert abs(sa - pa_) <= tol, f"outer_a {sa:.1f}% against perf's {pa_:.1f}% (tolerance {tol:.1f})"
assert abs(sa - 60) <= tol + 3, f"outer_a {sa:.1f}%, not 60%"
PY
}
if command -v perf >/dev/null; then
	PERF_CG=-g check_tree treefp calltree-fp -g
	ok "fp: stacks of calltree-fp decode to leaf <- outer_a|outer_b <- main, shares as perf's"
	PERF_CG="--call-graph dwarf" check_tree treedw calltree-nofp --call-graph dwarf
	ok "dwarf: stacks of calltree-nofp decode to leaf <- outer_a|outer_b <- main, shares as perf's"
else
	echo "SKIP (part) stacks against perf's: perf (linux-perf) is not installed"
fi

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
