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
# strobe export names them too (one row per sample)
"$STROBE" export --format csv --pid "$pid" -o "$tmp/export.csv" 2>"$tmp/export.err" ||
	fail "export: $(cat "$tmp/export.err")"
python3 - "$tmp/export.csv" <<'PY' || fail "export does not name jit_hot_loop"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["mode"] == "user"]
hot = sum(r["binary"] == "[anon]" and r["symbol"] == "jit_hot_loop" for r in rows)
print(f"export: {len(rows)} user-mode rows, {hot} jit_hot_loop")
assert rows and hot >= 0.8 * len(rows)
PY

# A map owned by another user than the process's is refused (anyone can
# write /tmp/perf-PID.map for a pid they do not own): jitmap runs as
# nobody, and its map is given to user daemon before it exits.
need_users daemon
rm -f "$tmp/pid2"
(
	i=0
	while [ $i -lt 200 ]; do
		p=$(cat "$tmp/pid2" 2>/dev/null)
		if [ -n "$p" ] && [ -s "/tmp/perf-$p.map" ]; then
			chown "$duid" "/tmp/perf-$p.map" && echo chowned >"$tmp/chowned"
			break
		fi
		sleep 0.05
		i=$((i + 1))
	done
) &
"$STROBE" record --sample-event cpu-clock -F 1000 --name planted \
	-- sh -c 'setpriv --reuid="$3" --regid="$4" --clear-groups "$1/jitmap" 1.5 & echo $! >"$2/pid2"; wait $!' \
	sh "$WL" "$tmp" "$nuid" "$ngid" >"$tmp/record2.out" 2>"$tmp/record2.err" ||
	fail "record as nobody: $(cat "$tmp/record2.err")"
wait
pid2=$(cat "$tmp/pid2")
rm -f "/tmp/perf-$pid2.map"
[ -f "$tmp/chowned" ] || fail "the map of $pid2 was not seen to give it away"
n=$(sqlq "$STROBE_DB" "SELECT symbols || ' ' || ifnull(problem, '-') FROM jit_maps WHERE pid=$pid2")
case $n in
"0 "*"owned by uid $duid, not by the process's uid $nuid or root, refused") ;;
*) fail "planted map of $pid2 not refused: '$n'" ;;
esac
"$STROBE" report --pid "$pid2" --by symbol --format csv >"$tmp/report2.csv" 2>"$tmp/report2.err" ||
	fail "report of $pid2"
grep -q jit_hot_loop "$tmp/report2.csv" && fail "named from a refused map: $(cat "$tmp/report2.csv")"
grep -q "pid $pid2: JIT perf map not used: .*owned by uid $duid" "$tmp/report2.err" ||
	fail "no note on the refused map: $(cat "$tmp/report2.err")"
ok "JIT code named from a perf map that no longer exists; a map of another owner refused"
