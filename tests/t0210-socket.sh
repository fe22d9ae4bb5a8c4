#!/bin/sh
# t0210-socket: strobed survives malformed requests on its control socket.
# Raw bytes sent straight to the socket (garbage, a NUL byte, an empty line,
# no verb, a field with no '=', a bad %-escape, a duplicate field, 40
# fields, 100 KB with no newline, a connection that sends nothing, an
# unknown verb, an unknown event) each get one reply "error msg=..." naming
# the problem; clients that close mid-request or never read their reply get
# none. After each one strobed still answers 'strobe status', a running
# session keeps running and stops cleanly, and the session recorded first
# reports the same rows as before, byte for byte (binary paths included:
# a binaries row is one (content key, path), so a later session cannot
# rename it).
. "$(dirname "$0")/lib.sh"
need_root

start_daemon
"$STROBE" record --sample-event cpu-clock -F 500 -- "$WL/split603010" 1 >/dev/null 2>"$tmp/rec.err" ||
	fail "record: $(cat "$tmp/rec.err")"
"$STROBE" report --session 1 --format csv >"$tmp/r0.csv" 2>/dev/null || fail "report"

cat >"$tmp/bad.py" <<'PY'
import socket, subprocess, sys, time, urllib.parse

sock, strobe, phase = sys.argv[1:4]
failed = False

def fail(msg):
    global failed
    print("FAIL:", msg)
    failed = True

def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(sock)
    return s

def read_all(s):
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except ConnectionResetError:
        pass            # it closed with our unread bytes queued: fine after the reply
    return out

def alive(what):
    r = subprocess.run([strobe, "status"], capture_output=True, text=True, timeout=20)
    if r.returncode != 0:
        fail(f"after {what}: strobe status failed: {r.stderr.strip()}")
        sys.exit(1)
    if phase == "running" and "running for" not in r.stdout:
        fail(f"after {what}: the session is no longer running: {r.stdout.strip()}")
    return r.stdout

def bad(what, data, want, wait=0.0):
    s = conn()
    t0 = time.time()
    try:
        if data:
            s.sendall(data)
        if wait:
            time.sleep(wait)
    except (BrokenPipeError, ConnectionResetError):
        pass            # it refused before reading all of it
    reply = read_all(s)
    s.close()
    lines = reply.split(b"\n")
    if len(lines) != 2 or lines[1] != b"":
        fail(f"{what}: not one reply line: {reply[:300]!r}")
    elif not reply.startswith(b"error msg="):
        fail(f"{what}: reply is not 'error msg=...': {reply[:300]!r}")
    else:
        msg = urllib.parse.unquote(lines[0][len(b"error msg="):].decode())
        if want not in msg:
            fail(f"{what}: message does not say '{want}': {msg}")
        else:
            print(f"{what}: {msg} ({time.time() - t0:.1f} s)")
    alive(what)

def no_reply(what, data, shut=None):
    s = conn()
    s.sendall(data)
    if shut is not None:
        s.shutdown(shut)
        reply = read_all(s)
        if not reply.startswith(b"error msg="):
            fail(f"{what}: reply is not 'error msg=...': {reply[:300]!r}")
    s.close()
    time.sleep(0.2)
    alive(what)
    print(f"{what}: strobed still answers")

bad("garbage bytes", b"\xff\xfe\x80 garbage\x01\x02\n", "expected 'VERB key=value")
bad("a NUL byte", b"status\x00\xff garbage\n", "NUL byte")
bad("an empty line", b"\n", "expected 'VERB key=value")
bad("no verb", b" events=cpu-clock\n", "expected 'VERB key=value")
bad("a field with no '='", b"start events\n", "no '='")
bad("a bad %-escape", b"start name=%zz\n", "bad value of 'name'")
bad("a NUL escape", b"start name=a%00b\n", "bad value of 'name'")
bad("a bad key", b"start Events=cpu-clock\n", "bad key")
bad("a duplicate field", b"start name=a name=b\n", "duplicate field 'name'")
bad("40 fields", b"status " + b" ".join(b"k%d=v" % i for i in range(40)) + b"\n",
    "more than 32 fields")
bad("100 KB with no newline", b"start name=" + b"a" * 100000, "too long")
bad("a connection that sends nothing", b"", "timed out or closed", wait=3)
bad("an unknown verb", b"frobnicate now=1\n", "unknown request 'frobnicate'")
bad("an unknown event", b"start events=nonsense\n",
    "already running" if phase == "running" else "unknown event 'nonsense'")
no_reply("a client closing mid-request", b"sta")
no_reply("a client half-closing mid-request", b"status", shut=socket.SHUT_WR)
no_reply("a client that never reads its reply", b"status\n")
no_reply("a client that never reads a long error", b"x" * 70000)
sys.exit(1 if failed else 0)
PY

python3 "$tmp/bad.py" "$STROBE_SOCKET" "$STROBE" idle || fail "malformed requests (idle strobed)"

# the same while a session runs: it keeps running and stops cleanly
"$STROBE" start --sample-event cpu-clock -F 200 >"$tmp/id" 2>"$tmp/start.err" ||
	fail "start: $(cat "$tmp/start.err")"
python3 "$tmp/bad.py" "$STROBE_SOCKET" "$STROBE" running || fail "malformed requests (session running)"
"$STROBE" stop >"$tmp/stop.out" 2>"$tmp/stop.err" || fail "stop: $(cat "$tmp/stop.err")"
grep -q "^session $(cat "$tmp/id"): " "$tmp/stop.out" || fail "stop: $(cat "$tmp/stop.out")"
"$STROBE" sessions --format csv >"$tmp/s.csv" || fail sessions
[ "$(grep -c ',done,' "$tmp/s.csv")" = 2 ] || fail "sessions are not both done: $(cat "$tmp/s.csv")"

"$STROBE" report --session 1 --format csv >"$tmp/r1.csv" 2>/dev/null || fail "report after"
# whole rows, binary paths included (binaries: one row per (content key,
# path) since bfad5ce, so no later session can change the path shown)
cmp -s "$tmp/r0.csv" "$tmp/r1.csv" ||
	fail "the report of session 1 changed: $(diff "$tmp/r0.csv" "$tmp/r1.csv" | head -n 6)"
kill -0 "$daemon_pid" || fail "strobed died: $(tail -n 5 "$tmp/strobed.log")"
stop_daemon || fail "strobed did not exit cleanly: $(tail -n 5 "$tmp/strobed.log")"
ok "malformed requests answered in one line; strobed and the stored session survive"

# the log cannot be flooded by one client: of 200 malformed requests from
# one uid within a minute, at most LOG_LIMIT_PER_MINUTE (5) are logged
# (daemon/log.h; review R5: DB.log grew a line for each, unbounded); each
# is still answered
rm -f "$STROBE_DB" "$STROBE_DB"-* "$STROBE_DB".*
start_daemon
python3 - "$STROBE_SOCKET" <<'PY' || fail "malformed requests not answered"
import socket, sys
for i in range(200):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.sendall(b"start =x%d\n" % i)
    ans = s.makefile().readline()
    assert ans.startswith("error"), ans
    s.close()
PY
n=$(grep -c "uid 0: " "$tmp/strobed.log")
echo "log lines for 200 malformed requests: $n"
[ "$n" -le 6 ] && [ "$n" -ge 1 ] || fail "$n log lines for 200 malformed requests of one uid (at most 5, and a summary)"
stop_daemon || fail "strobed did not exit cleanly"
ok "200 malformed requests of one uid: each answered, at most 5 logged"
