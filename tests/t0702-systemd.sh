#!/bin/sh
# t0702-systemd: strobed.service and strobed.socket (dist/systemd/) without
# systemd as PID 1.
#  1. `systemd-analyze verify` finds nothing to say about the units (the
#     service made from strobed.service.in with the build tree's strobed,
#     since it checks that ExecStart= exists); `systemd-analyze security
#     --offline=yes` rates the service at most MAX_EXPOSURE (doc/INSTALL.md
#     records the score).
#  2. The capabilities: strobed runs as root under `setpriv` with the
#     unit's CapabilityBoundingSet (less what the unit's Protect*=yes take
#     out of it, as systemd does) and no inheritable ones; its CapEff is
#     exactly that set.  A session then records split603010 run by nobody
#     from a 0700 directory of nobody's (strobed needs its capabilities to
#     read it), and kernwork; the binary is deleted before the report, so
#     only what strobed stored can name its functions: the report must name
#     work60/30/10, and kernwork's kernel samples must carry symbols
#     (/proc/kallsyms read with CAP_SYSLOG); strobed's log has no refusal
#     (SCHED_FIFO, chown) and the socket and cache directory are group
#     strobe's (the cache setgid).  Controls, so that the check
#     can fail: without CAP_SYS_PTRACE, CAP_CHECKPOINT_RESTORE and
#     CAP_DAC_READ_SEARCH the report must not name split603010's
#     functions; without CAP_SYSLOG strobed must refuse the session
#     (kernel addresses hidden).
#  3. Socket activation: systemd-socket-activate passes a listening unix
#     socket; strobed uses it (its log says so), `strobe status --socket`
#     answers, and the socket file stays when strobed exits (it is
#     systemd's).  A passed fd that is a datagram socket, or not a socket,
#     is refused with one line on stderr.
. "$(dirname "$0")/lib.sh"
need_root
need_users
command -v capsh >/dev/null || skip "capsh (libcap2-bin) is not installed: ./setup.sh installs it"
# doc/INSTALL.md: 3.4 with systemd 252; a weaker unit fails
MAX_EXPOSURE=3.5
unit=$top/dist/systemd/strobed.service.in

# 1. systemd-analyze
if command -v systemd-analyze >/dev/null; then
	mkdir "$tmp/units"
	sed "s|@sbindir@|$build/daemon|g" "$unit" >"$tmp/units/strobed.service"
	cp "$top/dist/systemd/strobed.socket" "$tmp/units/"
	# --man=no: the man pages of Documentation= are not installed here
	systemd-analyze verify --man=no "$tmp/units/strobed.service" "$tmp/units/strobed.socket" \
		>"$tmp/verify" 2>&1 || fail "systemd-analyze verify: $(cat "$tmp/verify")"
	[ -s "$tmp/verify" ] && fail "systemd-analyze verify has something to say: $(cat "$tmp/verify")"
	ok "systemd-analyze verify: strobed.service and strobed.socket are clean"
	systemd-analyze security --offline=yes "$tmp/units/strobed.service" >"$tmp/security" 2>&1 ||
		fail "systemd-analyze security: $(tail -3 "$tmp/security")"
	score=$(sed -n 's/.*Overall exposure level for strobed.service: \([0-9.]*\).*/\1/p' "$tmp/security")
	[ -n "$score" ] || fail "no exposure level in: $(tail -3 "$tmp/security")"
	python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) else 1)" \
		"$score" "$MAX_EXPOSURE" || fail "exposure level $score is above $MAX_EXPOSURE"
	ok "systemd-analyze security --offline=yes: exposure $score (at most $MAX_EXPOSURE)"
	# the drop-in for strobed --push that doc/INSTALL.md gives: it parses,
	# and it takes effect (the network, to the allowed addresses only)
	mkdir "$tmp/units/strobed.service.d"
	awk '/<!-- push drop-in/ { f = 1; next } f && /^```ini/ { g = 1; next } g && /^```/ { exit } g' \
		"$top/doc/INSTALL.md" >"$tmp/units/strobed.service.d/push.conf"
	grep -qx 'PrivateNetwork=no' "$tmp/units/strobed.service.d/push.conf" ||
		fail "no push drop-in in doc/INSTALL.md: $(cat "$tmp/units/strobed.service.d/push.conf")"
	systemd-analyze verify --man=no "$tmp/units/strobed.service" >"$tmp/verify" 2>&1 ||
		fail "systemd-analyze verify with the push drop-in: $(cat "$tmp/verify")"
	[ -s "$tmp/verify" ] && fail "systemd-analyze verify with the push drop-in: $(cat "$tmp/verify")"
	systemd-analyze security --offline=yes "$tmp/units/strobed.service" >"$tmp/security" 2>&1
	grep -q "PrivateNetwork=.*has access to the host's network" "$tmp/security" &&
		grep -q "IPAddressDeny=.*allow list" "$tmp/security" ||
		fail "the push drop-in did not take effect: $(grep -E 'PrivateNetwork|IPAddress' "$tmp/security")"
	pscore=$(sed -n 's/.*Overall exposure level for strobed.service: \([0-9.]*\).*/\1/p' "$tmp/security")
	rm -r "$tmp/units/strobed.service.d"
	ok "the push drop-in of doc/INSTALL.md: verify is clean, it gives the network (exposure $pscore)"
else
	echo "not checked: systemd-analyze is not installed (package systemd): no verify, no security score"
fi

# 2. the capabilities
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit")
[ "$(echo "$caps" | wc -l)" = 1 ] && [ -n "$caps" ] || fail "want one CapabilityBoundingSet= line in $unit"
taken=
grep -qx 'ProtectKernelLogs=yes' "$unit" && taken="$taken CAP_SYSLOG"
grep -qx 'ProtectKernelModules=yes' "$unit" && taken="$taken CAP_SYS_MODULE"
grep -qx 'ProtectClock=yes' "$unit" && taken="$taken CAP_SYS_TIME CAP_WAKE_ALARM"
grep -qx 'PrivateDevices=yes' "$unit" && taken="$taken CAP_MKNOD CAP_SYS_RAWIO"
# capset ALL... LESS...: the capabilities of ALL not in LESS, one a line
capset() {
	python3 -c "import sys; a=set(sys.argv[1].split()); print('\n'.join(sorted(a - set(sys.argv[2].split()))))" "$1" "$2"
}
capset "$caps" "$taken" >"$tmp/want"
ok "the unit's capabilities: $(tr '\n' ' ' <"$tmp/want")"

# with_caps LIST NAME [ERE]: a session with strobed holding exactly LIST
# (file of CAP_ names); CSVs in $tmp/NAME.split.csv and $tmp/NAME.kern.csv.
# 1 when strobe start fails with ERE.
# capped_daemon LIST NAME: strobed with exactly the capabilities LIST on
# $tmp/NAME.db and $tmp/NAME.sock ($db, $sock), answering
capped_daemon() {
	spec=-all$(sed 's/^CAP_//' "$1" | tr 'A-Z' 'a-z' | sed 's/^/,+/' | tr -d '\n')
	db=$tmp/$2.db sock=$tmp/$2.sock
	setpriv --bounding-set "$spec" --inh-caps=-all "$STROBED" --foreground --db "$db" \
		--socket "$sock" 2>"$tmp/$2.log" &
	daemon_pid=$!
	i=0
	while ! "$STROBE" status --socket "$sock" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt 200 ] && fail "strobed ($2) did not start: $(cat "$tmp/$2.log")"
		kill -0 "$daemon_pid" 2>/dev/null || fail "strobed ($2) died: $(cat "$tmp/$2.log")"
		sleep 0.05
	done
}
with_caps() {
	capped_daemon "$1" "$2"
	eff=$(sed -n 's/^CapEff:[[:space:]]*//p' "/proc/$daemon_pid/status")
	capsh --decode="$eff" | sed 's/.*=//' | tr ',' '\n' | tr 'a-z' 'A-Z' | sort >"$tmp/$2.eff"
	cmp -s "$1" "$tmp/$2.eff" ||
		fail "strobed ($2) holds other capabilities than asked: $(diff "$1" "$tmp/$2.eff")"
	stat -c '%a %G' "$sock" >"$tmp/$2.sockmode"
	install -d -m 0700 -o "$nuid" -g "$ngid" "$tmp/priv" || fail "nobody's directory"
	# a build-id of its own: no other copy of split603010 can stand in for it
	unique_copy "$WL/split603010" "$tmp/priv/split603010" >/dev/null &&
		chown "$nuid:$ngid" "$tmp/priv/split603010" && chmod 0700 "$tmp/priv/split603010" ||
		fail "copy"
	if ! "$STROBE" start --socket "$sock" --sample-event cpu-clock -F 1000 --name "$2" >/dev/null \
		2>"$tmp/$2.start.err"; then
		stop_daemon
		[ -n "${3:-}" ] && grep -q "$3" "$tmp/$2.start.err" && return 1
		fail "start ($2): $(cat "$tmp/$2.start.err")"
	fi
	as_nobody "$tmp/priv/split603010" 2 || fail "split603010 as nobody"
	"$WL/kernwork" 1 || fail "kernwork"
	"$STROBE" stop --socket "$sock" >"$tmp/err" 2>&1 || fail "stop ($2): $(cat "$tmp/err")"
	stop_daemon || fail "strobed ($2) did not exit cleanly: $(tail -3 "$tmp/$2.log")"
	rm -rf "$tmp/priv"	# only strobed's copy can name its functions now
	"$STROBE" report --db "$db" --comm split603010 --format csv >"$tmp/$2.split.csv" 2>"$tmp/err" ||
		fail "report ($2): $(cat "$tmp/err")"
	"$STROBE" report --db "$db" --kernel --comm kernwork --format csv >"$tmp/$2.kern.csv" \
		2>"$tmp/$2.kern.err" || fail "report --kernel ($2): $(cat "$tmp/$2.kern.err")"
}
# named NAME: 0 when the split report names work60/30/10 in that order and
# the kernel report names most kernel samples; prints what it found
named() {
	python3 - "$tmp/$1.split.csv" "$tmp/$1.kern.csv" "$tmp/priv/split603010" <<'PY'
import csv, re, sys
s = {}
# this copy's rows only: others may run split603010 now (the session is system-wide)
for r in csv.DictReader(open(sys.argv[1])):
    if r["binary"] not in (sys.argv[3], sys.argv[3] + " (deleted)"):
        continue
    s[r["symbol"]] = s.get(r["symbol"], 0) + int(r["samples"])
w = [s.get(f, 0) for f in ("work60", "work30", "work10")]
k = [r for r in csv.DictReader(open(sys.argv[2])) if r["binary"] == "[kernel.kallsyms]"]
kt = sum(int(r["samples"]) for r in k)
kn = sum(int(r["samples"]) for r in k if r["symbol"] and not re.match(r"^(\[|0x)", r["symbol"]))
print(f"split603010: work60/30/10 {w[0]}/{w[1]}/{w[2]} of {sum(s.values())} samples; "
      f"kernwork: {kn} of {kt} kernel samples named")
split_ok = w[0] > w[1] > w[2] > 0 and sum(w) >= 0.8 * sum(s.values())
kern_ok = kt >= 20 and kn >= 0.9 * kt
print("split", "named" if split_ok else "NOT named", "kernel", "named" if kern_ok else "NOT named")
sys.exit(0 if split_ok and kern_ok else 1)
PY
}
with_caps "$tmp/want" unit
named unit >"$tmp/named" || fail "with the unit's capabilities: $(cat "$tmp/named")"
ok "with exactly the unit's capabilities: $(head -1 "$tmp/named")"
# what strobed does with CAP_CHOWN, CAP_FSETID, CAP_SYS_NICE went through
grep -iE "cannot|denied|not permitted" "$tmp/unit.log" && fail "strobed's log with the unit's capabilities"
[ "$(cat "$tmp/unit.sockmode")" = "660 strobe" ] || fail "socket mode and group: $(cat "$tmp/unit.sockmode")"
[ "$(stat -c '%A %G' "$tmp/unit.db.cache")" = "drwxr-s--- strobe" ] ||
	fail "the cache directory is $(stat -c '%A %G' "$tmp/unit.db.cache"), not setgid strobe"
ok "strobed's log has no refusal; socket 0660 and setgid cache directory of group strobe"
capset "$(cat "$tmp/want")" "CAP_SYS_PTRACE CAP_CHECKPOINT_RESTORE CAP_DAC_READ_SEARCH" >"$tmp/less"
with_caps "$tmp/less" control
named control >"$tmp/named" && fail "the control run named the functions: the check proves nothing: $(cat "$tmp/named")"
grep -q "split NOT named kernel named" "$tmp/named" ||
	fail "the control run did not fail the way it should: $(cat "$tmp/named")"
ok "control, without CAP_SYS_PTRACE, CAP_CHECKPOINT_RESTORE, CAP_DAC_READ_SEARCH: $(head -1 "$tmp/named")"
capset "$(cat "$tmp/want")" "CAP_SYSLOG" >"$tmp/less"
with_caps "$tmp/less" nosyslog "kernel addresses are hidden" &&
	fail "without CAP_SYSLOG a session started: the check proves nothing"
ok "control, without CAP_SYSLOG: $(cat "$tmp/nosyslog.start.err")"

# 2b. CAP_SYS_PTRACE, alone: nobody runs a copy of split603010 from its
# 0700 directory and deletes it 0.2 s later while it runs, with ingest
# stalled until it has exited.  strobed can then reach the file only
# through the handle binhold took from /proc/PID/map_files, which needs
# ptrace-read access to nobody's process: with the unit's set the report
# names its functions; without CAP_SYS_PTRACE it says "not available"
# (seen on Linux 6.1: "cannot open ...: No such file or directory").
# gone LIST NAME: that session with strobed holding LIST; its report of the
# deleted copy into $tmp/NAME.gone
gone() {
	capped_daemon "$1" "$2"
	install -d -m 0700 -o "$nuid" -g "$ngid" "$tmp/priv" || fail "nobody's directory"
	unique_copy "$WL/split603010" "$tmp/priv/gone" >/dev/null &&
		chown "$nuid:$ngid" "$tmp/priv/gone" && chmod 0700 "$tmp/priv/gone" || fail "copy"
	"$STROBE" start --socket "$sock" --sample-event cpu-clock -F 1000 --name "$2" >/dev/null \
		2>"$tmp/err" || fail "start ($2): $(cat "$tmp/err")"
	# ingest stalled (the database's write lock held, as in t0490) until the
	# copy has gone: only what binhold took through map_files has it
	STROBE_DB=$db db_lock_hold 60
	as_nobody sh -c '"$1" 2 & sleep 0.2; rm -f "$1"; wait' sh "$tmp/priv/gone" ||
		fail "the deleted copy as nobody"
	[ -e "$tmp/unlocked" ] && fail "the lock went before the copy exited: the test tests nothing"
	db_lock_release
	"$STROBE" stop --socket "$sock" >"$tmp/err" 2>&1 || fail "stop ($2): $(cat "$tmp/err")"
	stop_daemon || fail "strobed ($2) did not exit cleanly: $(tail -3 "$tmp/$2.log")"
	rm -rf "$tmp/priv"
	"$STROBE" report --db "$db" --comm gone --format csv >"$tmp/$2.gone" 2>&1 ||
		fail "report ($2): $(cat "$tmp/$2.gone")"
}
gone "$tmp/want" gone_unit
grep -q ",work60," "$tmp/gone_unit.gone" ||
	fail "with the unit's capabilities the deleted copy is not named: $(cat "$tmp/gone_unit.gone")"
capset "$(cat "$tmp/want")" "CAP_SYS_PTRACE" >"$tmp/less"
gone "$tmp/less" gone_noptrace
grep -q ",work60," "$tmp/gone_noptrace.gone" &&
	fail "without CAP_SYS_PTRACE the deleted copy is named: the check proves nothing"
grep -q "gone.*not available" "$tmp/gone_noptrace.gone" ||
	fail "without CAP_SYS_PTRACE: $(cat "$tmp/gone_noptrace.gone")"
ok "CAP_SYS_PTRACE: a binary deleted while it runs is named with it, not without: $(grep -o 'not available: [^;]*' "$tmp/gone_noptrace.gone" | head -n 1)"

# 3. socket activation
command -v systemd-socket-activate >/dev/null ||
	skip "systemd-socket-activate (package systemd) is not installed: socket activation not checked"
sa=$tmp/sa.sock
systemd-socket-activate -l "$sa" "$STROBED" --foreground --db "$tmp/sa.db" --socket "$tmp/unused.sock" \
	>"$tmp/sa.log" 2>&1 &
daemon_pid=$!
wait_socket "$sa" "$tmp/sa.log"
"$STROBE" status --socket "$sa" >"$tmp/status" 2>&1 || fail "status on the passed socket: $(cat "$tmp/status")"
grep -q "database $tmp/sa.db" "$tmp/status" || fail "status: $(cat "$tmp/status")"
grep -q "listening on $sa (passed by systemd), database $tmp/sa.db" "$tmp/sa.log" ||
	fail "strobed did not say it uses the passed socket: $(cat "$tmp/sa.log")"
[ -e "$tmp/unused.sock" ] && fail "strobed bound --socket although a socket was passed"
stop_daemon || fail "strobed on the passed socket did not exit cleanly: $(tail -3 "$tmp/sa.log")"
[ -S "$sa" ] || fail "strobed removed the passed socket's file: it is systemd's"
ok "socket activation: strobed answers on the passed socket and leaves its file"

systemd-socket-activate --datagram -l "$tmp/dg.sock" "$STROBED" --foreground --db "$tmp/dg.db" \
	>"$tmp/dg.log" 2>&1 &
dg=$!
daemon_pid=$dg
wait_socket "$tmp/dg.sock" "$tmp/dg.log"
python3 -c "import socket, sys; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.sendto(b'x', sys.argv[1])" \
	"$tmp/dg.sock" || fail "sending a datagram"
wait $dg
rc=$?
daemon_pid=
[ $rc = 1 ] || fail "strobed given a datagram socket exited $rc, not 1: $(cat "$tmp/dg.log")"
grep '^strobed: ' "$tmp/dg.log" >"$tmp/dg.err"
[ "$(wc -l <"$tmp/dg.err")" = 1 ] && grep -q "fd 3 is not a listening unix stream socket" "$tmp/dg.err" ||
	fail "strobed given a datagram socket: $(cat "$tmp/dg.log")"
ok "$(cat "$tmp/dg.err")"
sh -c 'exec 3<"$1"; shift; LISTEN_PID=$$ LISTEN_FDS=1 exec "$@"' sh "$unit" "$STROBED" --foreground \
	--db "$tmp/nf.db" >"$tmp/nf.out" 2>"$tmp/nf.err"
rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$tmp/nf.err")" = 1 ] && grep -q "^strobed: socket activation: fd 3 is not a socket" "$tmp/nf.err" ||
	fail "strobed given a file as its socket exited $rc: $(cat "$tmp/nf.err")"
ok "$(cat "$tmp/nf.err")"
echo PASS
