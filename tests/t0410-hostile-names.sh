#!/bin/sh
# t0410-hostile-names: names a profiled process controls are data, never
# commands.  During a session, processes run as nobody (half of them
# outside group strobe, half as members of it) name themselves
# (through /proc/self/comm) with gnuplot and shell syntax: backquotes,
# quotes that would close a gnuplot string and start a '!' shell command or
# a system() call, $(...), and a leading =, +, -, @ for spreadsheets; one
# of them runs from a binary whose file name has backquotes.  The session
# name and 'strobe mark' texts, given by a member who starts the session,
# carry the same payloads; root then plots and exports it.  Every payload calls
# a command zN (on PATH, in $tmp/bin) that would create $tmp/hit.zN: then
# 'strobe plot' (PNG, SVG, PDF, --term; --by pid, binary and symbol, with
# the markers) and 'strobe export --format csv' must succeed and no hit file
# exist; the SVG's legend shows each name literally; and CSV cells from
# names that start with = + - @ are prefixed with a single quote.
. "$(dirname "$0")/lib.sh"
need_root
command -v gnuplot >/dev/null || skip "gnuplot is not installed (apt-get install gnuplot-nox)"
need_users
mkdir -m 755 "$tmp/bin" "$tmp/b"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 20 21 22 23 24 25 30; do
	printf '#!/bin/sh\n: >"%s/hit.z%s"\n' "$tmp" "$i" >"$tmp/bin/z$i"
	chmod 755 "$tmp/bin/z$i"
done
PATH=$tmp/bin:$PATH
export PATH
# a binary whose file name runs z30 when expanded
cp "$(command -v dash || command -v sh)" "$tmp/b/\`z30\`"
chmod 755 "$tmp/b/\`z30\`"

# comm names: at most 15 bytes each
set -- \
	'`z1`' \
	"a'b\`z2\`" \
	'$(z3)' \
	'";!z4 #' \
	"';!z5 #" \
	"'.system('z6')#" \
	'".system("z7")#' \
	'@`z8`' \
	'=`z9`' \
	'+`z10`' \
	'-`z11`' \
	'=1+2 `z12`'

start_daemon
as_member "$STROBE" start --sample-event cpu-clock -F 499 --name "\`z20\`';!z21 #" \
	>"$tmp/id" 2>"$tmp/start.err" || fail "start: $(cat "$tmp/start.err")"
as_member "$STROBE" mark '`z22`' || fail "mark 1"
as_member "$STROBE" mark "';!z23 #" || fail "mark 2"
as_member "$STROBE" mark '".system("z24")."' || fail "mark 3"
as_member "$STROBE" mark "'.system('z25').'" || fail "mark 4"
# setpriv in the background directly (not through as_nobody/as_member, a
# function: $! would then be a subshell, and killing it would leave the
# burner running)
pids= groups=--clear-groups
for name in "$@"; do
	setpriv --reuid="$nuid" --regid="$ngid" "$groups" \
		sh -c 'printf %s "$1" >/proc/self/comm || exit 1; while :; do :; done' sh "$name" &
	pids="$pids $!"
	if [ "$groups" = --clear-groups ]; then groups=--groups=$gid; else groups=--clear-groups; fi
done
setpriv --reuid="$nuid" --regid="$ngid" --groups="$gid" "$tmp/b/\`z30\`" -c \
	'printf %s "burner30" >/proc/self/comm; while :; do :; done' &
pids="$pids $!"
sleep 3
for p in $pids; do kill "$p"; done
for p in $pids; do wait "$p" 2>/dev/null; done
as_member "$STROBE" stop >"$tmp/stop" 2>"$tmp/stop.err" || fail "stop: $(cat "$tmp/stop.err")"
ls "$tmp"/hit.* 2>/dev/null && fail "a payload ran while recording"

# the names as recorded
python3 - "$STROBE_DB" "$@" <<'PY' || fail "names not recorded"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
names = {r[0] for r in db.execute("SELECT DISTINCT name FROM comms")}
miss = [n for n in sys.argv[2:] if n not in names]
assert not miss, f"not in table comms: {miss}"
PY

mkdir "$tmp/cwd"
cd "$tmp/cwd" || fail "cd"
# every plot runs; a payload that ran is reported before a plot that failed
bad=
P() { "$STROBE" plot --top 40 "$@" 2>>"$tmp/plot.err" || bad="$bad
plot $*"; }
P --event samples --by pid -o "$tmp/pid.svg"
P --event samples --by pid -o "$tmp/pid.png"
P --event samples --by pid -o "$tmp/pid.pdf"
P --event samples --by pid --term >"$tmp/term"
P --event samples --by binary -o "$tmp/bin.svg"
P --event samples --by symbol -o "$tmp/sym.svg"
P --event samples --comm "'.system('z6')#" -o "$tmp/comm.svg"
"$STROBE" export --format csv >"$tmp/export.csv" 2>"$tmp/export.err" ||
	fail "export: $(cat "$tmp/export.err")"
"$STROBE" report --by binary --format csv >"$tmp/report.csv" 2>"$tmp/report.err" || true
hits=$(cd "$tmp" && ls hit.* 2>/dev/null | tr '\n' ' ')
[ -z "$hits" ] || fail "payloads ran: $hits"
[ -z "$bad" ] || fail "failed:$bad
$(cat "$tmp/plot.err")"
ok "no payload ran (plots as PNG, SVG, PDF, --term; --by pid, binary, symbol; export)"

python3 - "$tmp/pid.svg" "$tmp/bin.svg" "$@" <<'PY' || fail "SVG legend"
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
texts = lambda f: ["".join(t.itertext()) for t in ET.parse(f).getroot().iter(ns + "text")]
legend = texts(sys.argv[1])
for n in sys.argv[3:]:
    assert any(t.endswith(f" ({n})") and t.startswith("pid ") for t in legend), \
        f"no legend entry for {n!r}: {legend}"
assert any("`z30`" == t for t in texts(sys.argv[2])), f"binary `z30` not in {texts(sys.argv[2])}"
PY
ok "the SVG legend shows every name literally"

python3 - "$tmp/export.csv" "$@" <<'PY' || fail "CSV formula guard"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
comms = {r["comm"] for r in rows}
for n in sys.argv[2:]:
    want = "'" + n if n[0] in "=+-@" else n
    assert want in comms, f"comm {n!r}: want cell {want!r}, have {sorted(comms)}"
    if want != n:
        assert n not in comms, f"unguarded {n!r} in the CSV"
bad = [r for r in rows if r["pid"].startswith("'") or r["cpu"].startswith("'")]
assert not bad, bad[:3]
PY
ok "CSV cells from names starting with = + - @ begin with a quote; numbers untouched"
