#!/bin/sh
# t0141-jit-late-ingest: a JIT's names survive an ingest that runs behind.
# While another process holds the database's write lock (ingest cannot
# store anything; the drain thread keeps copying records into the spool),
# jitmap (/tmp/perf-PID.map) and jitdump (DIR/jit-PID.dump) run for 0.5 s
# and exit; only then is the lock released (at most 60 s: a bound, not a
# timing the test relies on).  Ingest sees their mappings only after they are gone, so
# the user who may have their files can no longer be read off /proc/PID
# then: strobed must take it when it drains the mapping's record.  Both
# files are copied (jit_maps rows without a problem, their symbols named),
# and the report names their samples.
. "$(dirname "$0")/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
mkdir -p "$tmp/jit"
"$WL/jitdump" "$tmp/jit" 0.01 2>"$tmp/probe.err"
rc=$?
rm -f "$tmp"/jit/jit-*.dump
[ $rc = 77 ] && skip "$(cat "$tmp/probe.err")"
[ $rc = 0 ] || fail "jitdump: $(cat "$tmp/probe.err")"

start_daemon
"$STROBE" start --sample-event cpu-clock -F 1000 --name late >"$tmp/id" 2>"$tmp/start.err" ||
	fail "start: $(cat "$tmp/start.err")"
db_lock_hold 60
sh -c 'echo $$ >"$1/map.pid"; exec "$2/jitmap" 0.5' sh "$tmp" "$WL" 2>"$tmp/jitmap.err" ||
	fail "jitmap: $(cat "$tmp/jitmap.err")"
sh -c 'echo $$ >"$1/dump.pid"; exec "$2/jitdump" "$1/jit" 0.5' sh "$tmp" "$WL" 2>"$tmp/jitdump.err" ||
	fail "jitdump: $(cat "$tmp/jitdump.err")"
[ -e "$tmp/unlocked" ] && fail "the lock was released (after 60 s) before both JITs exited: the test tests nothing"
mpid=$(cat "$tmp/map.pid")
dpid=$(cat "$tmp/dump.pid")
# ingest has not seen them: no rows yet (it is stuck behind the lock)
n=$(sqlite3 -readonly "$STROBE_DB" "SELECT count(*) FROM jit_maps WHERE pid IN ($mpid, $dpid)" 2>/dev/null || echo locked)
echo "# during the stall: jit_maps rows of the two: $n"
db_lock_release
"$STROBE" stop >"$tmp/stop.out" 2>"$tmp/stop.err" || fail "stop: $(cat "$tmp/stop.err")"
map=/tmp/perf-$mpid.map
dump=$tmp/jit/jit-$dpid.dump
[ -f "$map" ] || fail "jitmap left no $map"
[ -f "$dump" ] || fail "jitdump left no $dump"
rm -f "$map" "$dump"
stop_daemon || fail "strobed exited with status $rc: $(cat "$tmp/strobed.log")"

for p in $mpid $dpid; do
	n=$(sqlq "$STROBE_DB" "SELECT symbols || ' ' || ifnull(problem, '-') FROM jit_maps WHERE pid=$p")
	echo "# jit_maps of $p: $n"
	case $p in
	"$mpid") [ "$n" = "1 -" ] || fail "perf map of jitmap ($p) not copied: '$n'" ;;
	*) [ "$n" = "2 -" ] || fail "jitdump of jitdump ($p) not copied: '$n'" ;;
	esac
done
for p in $mpid $dpid; do
	"$STROBE" report --pid "$p" --by symbol --format csv >"$tmp/r$p.csv" 2>"$tmp/report.err" ||
		fail "report: $(cat "$tmp/report.err")"
done
python3 - "$tmp/r$mpid.csv" "$tmp/r$dpid.csv" <<'PY' || fail "JIT samples not named"
import csv, sys
for f, names in ((sys.argv[1], ("jit_hot_loop",)), (sys.argv[2], ("jit_func_a", "jit_func_b"))):
    rows = [r for r in csv.DictReader(open(f)) if r["binary"] == "[anon]"]
    tot = sum(int(r["samples"]) for r in rows)
    named = sum(int(r["samples"]) for r in rows if r["symbol"] in names)
    print(f"{names}: {named} of {tot} [anon] samples")
    assert tot >= 50, f"only {tot} [anon] samples in 0.5 s at 1000 Hz"
    assert named >= 0.8 * tot, f"{names} have {named} of {tot}"
PY
ok "JIT names copied for processes gone before ingest saw them"
