#!/bin/sh
# t0415-terminal-escapes: what a user or a profiled process names reaches
# root's terminal as text, never as commands to the terminal.  A member
# starts a session whose name holds an OSC title sequence (ESC ] 0 ; ...
# BEL), a clear screen (ESC [ 2 J), the C1 CSI (U+009B and the lone byte
# 0x9b) and a newline followed by a forged "# note:" line; a process of
# nobody names itself (comm) with an escape and runs a stripped static
# binary from a directory whose name carries the same payloads, so that the
# report's "# note:" about the binary and its rows hold the path.  Root's
# report (by binary, symbol, pid), diff, markers, sessions and strobed's own
# log then must hold no ESC, BEL, CR, C1 byte or forged line, and must show
# each payload as '?' in its place (so the test sees the data it checks).
. "$(dirname "$0")/lib.sh"
need_root
need_users
command -v cc >/dev/null || skip "no C compiler (cc) for the stripped static binary"

esc=$(printf '\033')
bel=$(printf '\007')
c1=$(printf '\302\233')		# U+009B, CSI in UTF-8
raw=$(printf '\233')		# the lone 8-bit CSI
name="${esc}]0;pwned${bel}${esc}[2J${c1}31m${raw}1m
# note: forged by the session name"

# a static binary without any symbol (no .symtab, no .dynsym): the report
# notes it by its path
printf '#include <time.h>\nint main(void){time_t t=time(0)+3;volatile unsigned long n=0;while(time(0)<t)n++;return 0;}\n' \
	>"$tmp/spin.c"
cc -O1 -static -o "$tmp/spin" "$tmp/spin.c" 2>"$tmp/cc.err" ||
	skip "cannot link a static binary (libc6-dev's libc.a): $(head -n 1 "$tmp/cc.err")"
strip --strip-all "$tmp/spin" || fail "strip"
dir="$tmp/${esc}]0;dir${bel}${c1}
# note: forged by the path"
mkdir -m 755 "$dir" && cp "$tmp/spin" "$dir/spin${raw}x" && chmod 755 "$dir/spin${raw}x" ||
	fail "hostile directory"
chmod 755 "$tmp"

start_daemon
as_member "$STROBE" start --sample-event cpu-clock -F 499 --name "$name" >"$tmp/id" \
	2>"$tmp/start.err" || fail "start: $(cat "$tmp/start.err")"
as_member "$STROBE" mark "before the run" || fail "mark"
setpriv --reuid="$nuid" --regid="$ngid" --clear-groups \
	sh -c 'printf "\033]0;c\007\n" >/proc/self/comm; exec "$1"' sh "$dir/spin${raw}x" ||
	fail "the hostile binary did not run"
as_member "$STROBE" stop >"$tmp/stop" 2>"$tmp/stop.err" || fail "stop: $(cat "$tmp/stop.err")"
id=$(cat "$tmp/id")
"$STROBE" start --sample-event cpu-clock -F 99 --name other >"$tmp/id2" 2>&1 || fail "start 2"
sleep 0.3
"$STROBE" stop >/dev/null 2>&1 || fail "stop 2"

: >"$tmp/all"
out() {
	what=$1
	shift
	"$@" >"$tmp/o" 2>&1 || fail "$what failed: $(cat "$tmp/o")"
	printf '=== %s\n' "$what" >>"$tmp/all"
	cat "$tmp/o" >>"$tmp/all"
}
out "report" "$STROBE" report --session "$id"
out "report --by symbol" "$STROBE" report --session "$id" --by symbol
out "report --markers" "$STROBE" report --session "$id" --markers
out "diff" "$STROBE" diff "$id" "$(cat "$tmp/id2")"
out "sessions" "$STROBE" sessions
end_daemon 2>/dev/null || kill "$daemon_pid" 2>/dev/null
printf '=== strobed log\n' >>"$tmp/all"
cat "$tmp/strobed.log" >>"$tmp/all"

python3 - "$tmp/all" <<'PY' || fail "terminal controls in root's output (above)"
import sys
data = open(sys.argv[1], "rb").read()
bad = []
for name, b in ((b"ESC", b"\x1b"), (b"BEL", b"\x07"), (b"CR", b"\r"), (b"C1 CSI", b"\xc2\x9b")):
    if b in data:
        bad.append(name.decode())
# a lone 0x9b: not the second byte of a valid UTF-8 sequence
for i, c in enumerate(data):
    if c == 0x9b and not (i and data[i - 1] == 0xc2) and not (i and 0x80 <= data[i - 1] < 0xc0):
        bad.append("lone 0x9b")
        break
lines = data.split(b"\n")
forged = [l for l in lines if l.startswith(b"# note: forged")]
if forged:
    bad.append(f"{len(forged)} forged lines")
section = None
seen = {}
for l in lines:
    if l.startswith(b"=== "):
        section = l[4:].decode()
        continue
    for mark in (b"?]0;pwned??[2J?31m?1m?# note: forged by the session name",
                 b"?]0;dir???# note: forged by the path/spin?x",
                 b"?]0;c?"):
        if mark in l:
            seen.setdefault(mark, set()).add(section)
print("payloads seen escaped:", {k.decode(): sorted(v) for k, v in seen.items()})
want = {b"?]0;pwned??[2J?31m?1m?# note: forged by the session name": ["report", "report --markers", "diff", "sessions"],
        b"?]0;dir???# note: forged by the path/spin?x": ["report", "report --by symbol"]}
for mark, where in want.items():
    for w in where:
        if w not in seen.get(mark, set()):
            bad.append(f"{mark.decode()!r} not shown escaped in {w}")
if bad:
    sys.stdout.write(data.decode("utf-8", "backslashreplace")[-3000:])
    print("BAD:", bad)
    sys.exit(1)
PY
ok "session names, marks, comm and paths reach root's report, diff, sessions and log as text: every control a '?'"
