#!/bin/sh
# t0137-jitmap: JIT code named from the process's perf map.  jitmap copies
# a counting loop into anonymous executable memory and names it
# jit_hot_loop in /tmp/perf-PID.map; strobed copies that file into the
# session at the process's exit (jit_maps, jit_symbols: schema 10).  The
# file is deleted before the report: most of jitmap's user-mode samples are
# still named jit_hot_loop, in binary [anon].
. "$(dirname "$0")/lib.sh"
need_root
sh -c 'echo $$ >"$1/probe.pid"; exec "$2/jitmap" 0.01' sh "$tmp" "$WL" 2>"$tmp/probe.err"
rc=$?
rm -f "/tmp/perf-$(cat "$tmp/probe.pid").map"
[ $rc = 77 ] && skip "$(cat "$tmp/probe.err")"
[ $rc = 0 ] || fail "jitmap: $(cat "$tmp/probe.err")"

"$STROBE" record --sample-event cpu-clock -F 1000 --name jit \
	-- sh -c '"$1/jitmap" 1.5 & echo $! >"$2/pid"; wait $!' sh "$WL" "$tmp" \
	>"$tmp/record.out" 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
pid=$(cat "$tmp/pid")
map=/tmp/perf-$pid.map
[ -f "$map" ] || fail "jitmap left no $map"
# the map must have been copied: it is gone now
rm -f "$map"

n=$(sqlq "$STROBE_DB" "SELECT symbols || ' ' || dropped || ' ' || ifnull(problem, '-') FROM jit_maps WHERE pid=$pid")
[ "$n" = "1 0 -" ] || fail "jit_maps row for $pid: '$n'"

"$STROBE" report --pid "$pid" --by symbol --format csv >"$tmp/report.csv" 2>"$tmp/report.err" ||
	fail "report: $(cat "$tmp/report.err")"
python3 - "$tmp/report.csv" <<'PY' || fail "jit_hot_loop not named: $(cat "$tmp/report.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
user = [r for r in rows if r["binary"] != "[kernel.kallsyms]"]
tot = sum(int(r["samples"]) for r in user)
hot = sum(int(r["samples"]) for r in user
          if r["binary"] == "[anon]" and r["symbol"] == "jit_hot_loop")
unk = sum(int(r["samples"]) for r in user if r["binary"] == "[anon]" and r["symbol"] == "[unknown]")
print(f"jitmap: {tot} user-mode samples, {hot} on jit_hot_loop, {unk} [anon] unnamed")
assert tot >= 500, f"only {tot} user samples for 1.5 s at 1000 Hz"
assert hot >= 0.8 * tot, "jit_hot_loop has less than 80% of them"
PY

# a map planted by another user for a pid they do not own is refused: a
# unit test (test_jitmap) checks the ownership rule itself
ok "JIT code named from a perf map that no longer exists"
