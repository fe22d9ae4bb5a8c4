#!/bin/sh
# t0250-backend: strobed's --backend choice.  A bad name is refused with
# the accepted ones; auto picks the driver only when /dev/strobe exists and
# perf_event_open otherwise, and the session row says which; --backend
# driver without the device is refused with one line saying to load
# strobe.ko or use --backend perf, and writes nothing.  (The driver backend
# itself is tested in a QEMU guest by make check-kernel: tests/kernel/.)
. "$(dirname "$0")/lib.sh"
need_root

"$STROBED" --foreground --backend bogus --db "$STROBE_DB" --socket "$STROBE_SOCKET" \
	2>"$tmp/bogus.err" && fail "--backend bogus accepted"
[ $? = 2 ] || fail "--backend bogus: exit status not 2"
grep -q "unknown backend 'bogus': use auto, perf or driver" "$tmp/bogus.err" ||
	fail "--backend bogus: $(cat "$tmp/bogus.err")"
[ "$(wc -l <"$tmp/bogus.err")" = 1 ] || fail "more than one line: $(cat "$tmp/bogus.err")"

if [ -e /dev/strobe ]; then
	want=driver
else
	want=perf
	"$STROBED" --foreground --backend driver --db "$STROBE_DB" --socket "$STROBE_SOCKET" \
		2>"$tmp/drv.err" && fail "--backend driver without /dev/strobe accepted"
	grep -q "needs /dev/strobe: load the driver (insmod kernel/strobe.ko) or use --backend perf" \
		"$tmp/drv.err" || fail "--backend driver: $(cat "$tmp/drv.err")"
	[ "$(wc -l <"$tmp/drv.err")" = 1 ] || fail "more than one line: $(cat "$tmp/drv.err")"
	[ -e "$STROBE_DB" ] && fail "a refused start created $STROBE_DB"
fi

start_daemon
grep -q "backend $want" "$tmp/strobed.log" || fail "auto did not pick $want: $(cat "$tmp/strobed.log")"
"$STROBE" start --sample-event cpu-clock -F 1000 --name be >/dev/null 2>"$tmp/start.err" ||
	fail "start: $(cat "$tmp/start.err")"
"$WL/split603010" 0.2 || fail "split603010"
"$STROBE" stop >/dev/null || fail "stop"
stop_daemon || fail "strobed exit status"
"$STROBE" sessions --format csv >"$tmp/s.csv" || fail "sessions"
[ "$(csv_get "$tmp/s.csv" name be backend)" = "$want" ] || fail "session backend: $(cat "$tmp/s.csv")"
ok "bad backend refused; auto chose $want and the session says so"
