#!/bin/sh
# t0134-jitdump: JIT code named from the process's jitdump file.  jitdump
# copies two counting loops into anonymous executable memory, names them
# jit_func_a and jit_func_b in JIT_CODE_LOAD records of DIR/jit-PID.dump
# (no perf map) and mmaps that file PROT_EXEC, as JITs do; each round runs
# jit_func_a three times as long as jit_func_b.  strobed sees the mapping,
# reads the file at the process's exit into jit_maps/jit_symbols (schema
# 10, load_ns: 11), and the file is deleted before the report: the two
# names still get jitdump's user-mode samples, split about 75/25.
. "$(dirname "$0")/lib.sh"
need_root
mkdir -p "$tmp/jit"
"$WL/jitdump" "$tmp/jit" 0.01 2>"$tmp/probe.err"
rc=$?
rm -f "$tmp"/jit/jit-*.dump
[ $rc = 77 ] && skip "$(cat "$tmp/probe.err")"
[ $rc = 0 ] || fail "jitdump: $(cat "$tmp/probe.err")"

# perf records the same run when it is installed (-k mono: jitdump's
# timestamps are CLOCK_MONOTONIC) and names the functions from the same
# file through perf inject --jit: strobe's split is compared with perf's.
export PERF_BUILDID_DIR="$tmp/perf-buildids"
run=
if command -v perf >/dev/null; then
	run="perf record -q $(perf_bid) -k mono -e cpu-clock -F 1000 -o $tmp/perf.data --"
fi
# shellcheck disable=SC2086
"$STROBE" record --sample-event cpu-clock -F 1000 --name jitdump \
	-- $run sh -c 'echo $$ >"$2/pid"; exec "$1/jitdump" "$2/jit" 2' sh "$WL" "$tmp" \
	>"$tmp/record.out" 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
pid=$(cat "$tmp/pid")
dump=$tmp/jit/jit-$pid.dump
[ -f "$dump" ] || fail "jitdump left no $dump"
[ -f "/tmp/perf-$pid.map" ] && fail "jitdump wrote a perf map: the test would not test jitdump"
: >"$tmp/perf.txt"
if [ -n "$run" ]; then
	perf inject --jit -i "$tmp/perf.data" -o "$tmp/perf.jit.data" 2>"$tmp/inject.err" ||
		fail "perf inject --jit: $(cat "$tmp/inject.err")"
	perf script -i "$tmp/perf.jit.data" --pid "$pid" -F ip,sym >"$tmp/perf.txt" \
		2>"$tmp/script.err" || fail "perf script: $(cat "$tmp/script.err")"
fi
# the dump must have been copied: it is gone now
rm -f "$dump"

n=$(sqlq "$STROBE_DB" "SELECT symbols || ' ' || dropped || ' ' || ifnull(problem, '-') || ' ' || path FROM jit_maps WHERE pid=$pid")
[ "$n" = "2 0 - $dump" ] || fail "jit_maps row for $pid: '$n'"
# load times: after the process started, before it exited
n=$(sqlq "$STROBE_DB" "SELECT count(*) FROM jit_symbols j JOIN processes p ON p.pid=j.pid AND p.session_id=j.session_id WHERE j.pid=$pid AND j.load_ns >= p.start_ns AND (p.exit_ns IS NULL OR j.load_ns <= p.exit_ns) AND j.name IN ('jit_func_a','jit_func_b')")
[ "$n" = 2 ] || fail "load_ns of $pid's symbols not within its life: $(sqlq "$STROBE_DB" "SELECT name, load_ns FROM jit_symbols WHERE pid=$pid")"

"$STROBE" report --pid "$pid" --by symbol --format csv >"$tmp/report.csv" 2>"$tmp/report.err" ||
	fail "report: $(cat "$tmp/report.err")"
python3 - "$tmp/report.csv" "$tmp/perf.txt" <<'PY' || fail "jit_func_a/b not named or split wrong: $(cat "$tmp/report.csv")"
import collections, csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
user = [r for r in rows if r["binary"] != "[kernel.kallsyms]"]
tot = sum(int(r["samples"]) for r in user)
def of(name):
    return sum(int(r["samples"]) for r in user if r["binary"] == "[anon]" and r["symbol"] == name)
a, b = of("jit_func_a"), of("jit_func_b")
unk = of("[unknown]")
print(f"jitdump: {tot} user-mode samples, jit_func_a {a}, jit_func_b {b}, [anon] unnamed {unk}")
# a loaded machine gives the workload less than its 2 s of CPU time
assert tot >= 200, f"only {tot} user samples for 2 s at 1000 Hz"
assert a + b >= 0.8 * tot, "jit_func_a and jit_func_b have less than 80% of them"
share = a / (a + b)
# binomial noise: 4 standard deviations, at least 0.1
tol = max(0.1, 4 * (0.75 * 0.25 / (a + b)) ** 0.5)
assert abs(share - 0.75) <= tol, f"jit_func_a has {share:.3f} of the two, not 0.75 +- {tol:.3f}"
# perf script -F ip,sym of the injected data: "IP SYM"
perf = collections.Counter((l.split() + ["?", "?"])[1] for l in open(sys.argv[2]))
if perf:
    pa, pb = perf["jit_func_a"], perf["jit_func_b"]
    ptot = sum(perf.values())
    print(f"perf: {ptot} samples, jit_func_a {pa}, jit_func_b {pb}")
    assert pa + pb >= 0.8 * ptot, "perf inject --jit did not name them: the dump is wrong"
    pshare = pa / (pa + pb)
    # the same run sampled twice: 4 standard deviations of the difference
    ptol = 0.02 + 4 * (0.75 * 0.25 * (1 / (a + b) + 1 / (pa + pb))) ** 0.5
    assert abs(share - pshare) <= ptol, \
        f"jit_func_a: {share:.3f} in strobe, {pshare:.3f} in perf (+- {ptol:.3f})"
PY
"$STROBE" export --format csv --pid "$pid" -o "$tmp/export.csv" 2>"$tmp/export.err" ||
	fail "export: $(cat "$tmp/export.err")"
python3 - "$tmp/export.csv" <<'PY' || fail "export does not name jit_func_a/b"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["mode"] == "user"]
n = sum(r["binary"] == "[anon]" and r["symbol"] in ("jit_func_a", "jit_func_b") for r in rows)
print(f"export: {len(rows)} user-mode rows, {n} jit_func_a/b")
assert rows and n >= 0.8 * len(rows)
PY

# A dump given to another user than the process's is refused, and said so:
# jitdump runs as nobody in a directory of its own, and its dump is given
# to user daemon before it exits.
need_users daemon
mkdir -p "$tmp/jit2"
chown "$nuid:$ngid" "$tmp/jit2"
rm -f "$tmp/pid2"
(
	i=0
	while [ $i -lt 200 ]; do
		p=$(cat "$tmp/pid2" 2>/dev/null)
		if [ -n "$p" ] && [ -s "$tmp/jit2/jit-$p.dump" ]; then
			sleep 0.2
			chown "$duid" "$tmp/jit2/jit-$p.dump" && echo chowned >"$tmp/chowned"
			break
		fi
		sleep 0.05
		i=$((i + 1))
	done
) &
"$STROBE" record --sample-event cpu-clock -F 1000 --name planted \
	-- sh -c 'setpriv --reuid="$3" --regid="$4" --clear-groups "$1/jitdump" "$2/jit2" 1.5 & echo $! >"$2/pid2"; wait $!' \
	sh "$WL" "$tmp" "$nuid" "$ngid" >"$tmp/record2.out" 2>"$tmp/record2.err" ||
	fail "record as nobody: $(cat "$tmp/record2.err")"
wait
pid2=$(cat "$tmp/pid2")
[ -f "$tmp/chowned" ] || fail "the dump of $pid2 was not seen to give it away"
rm -f "$tmp/jit2/jit-$pid2.dump"
n=$(sqlq "$STROBE_DB" "SELECT symbols || ' ' || ifnull(problem, '-') FROM jit_maps WHERE pid=$pid2")
case $n in
"0 "*"owned by uid $duid, not by the process's uid $nuid, refused") ;;
*) fail "planted dump of $pid2 not refused: '$n'" ;;
esac
"$STROBE" report --pid "$pid2" --by symbol --format csv >"$tmp/report2.csv" 2>"$tmp/report2.err" ||
	fail "report of $pid2"
grep -q jit_func "$tmp/report2.csv" && fail "named from a refused dump: $(cat "$tmp/report2.csv")"
grep -q "pid $pid2: JIT jitdump not used: .*owned by uid $duid" "$tmp/report2.err" ||
	fail "no note on the refused dump: $(cat "$tmp/report2.err")"
ok "JIT code named from a jitdump that no longer exists, split as run; a dump of another owner refused"
