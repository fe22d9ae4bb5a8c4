#!/bin/sh
# t0325-tsc: the TSC of each sample is right, checked against the TSC the
# workload reads itself.  pagetouch --phases (tests/workloads/pagetouch.c)
# reads the TSC (rdtsc, x86_64) just before and after CLOCK_MONOTONIC at
# "start", "fault_start", "fault_end" and "end", around spin_before(),
# touch_pages() and spin_after().  Its own readings give the TSC's rate R
# (ticks per ns) and one sampling period P = R * 1e9 / F ticks.  Recorded
# with cpu-clock at F = 1000 Hz, for the samples of pagetouch's pid:
#   - time: each sample's TSC is within P of the TSC the workload's own
#     readings put at the sample's time_ns;
#   - place: the samples in spin_before, touch_pages and spin_after have
#     TSCs within P of the workload's TSC readings around that function,
#     and the first and last sample in each spin are within P (or the
#     widest gap between its samples, the timer's jitter) of its readings
#     (the spin runs at real-time priority, sampled every P);
#     this does not use time_ns at all.
# The perf backend derives a sample's TSC from its time with the session's
# calibration, so this is what would catch a wrong derivation.  SKIP (77)
# when pagetouch cannot read a TSC (not x86_64) or the session has none.
. "$(dirname "$0")/lib.sh"
need_root

rt=
command -v chrt >/dev/null && chrt -f 10 true 2>/dev/null && rt="chrt -f 10"
N=100000	# pages: ~250 ms of touch_pages, so that its few user-mode samples are many (CI25: none of ~50)
F=1000
"$STROBE" record --sample-event cpu-clock -F $F -e page-faults --name tsc \
	-- $rt "$WL/pagetouch" $N --phases >"$tmp/phases" 2>"$tmp/record.err" ||
	fail "record: $(cat "$tmp/record.err")"
cat "$tmp/phases"
grep -q '^tsc none' "$tmp/phases" && skip "$(sed -n 's/^tsc none: //p' "$tmp/phases")"
pid=$(sed -n 's/^pid \([0-9]*\)$/\1/p' "$tmp/phases")
[ -n "$pid" ] && [ "$(grep -c '^tsc [a-z_]* [0-9]* [0-9]* [0-9]*$' "$tmp/phases")" = 4 ] ||
	fail "pagetouch did not print its TSC readings: $(cat "$tmp/phases")"
src=$(sqlite3 "$STROBE_DB" "SELECT coalesce(tsc_source, 'none') || ' ' || coalesce(tsc_mult, 0) FROM sessions ORDER BY id DESC LIMIT 1")
echo "session: tsc_source, tsc_mult: $src"
case "$src" in none*|*" 0") skip "strobe has no TSC for this session (tsc_source '${src% *}', tsc_mult ${src#* })" ;; esac

"$STROBE" export --format csv --pid "$pid" -o "$tmp/samples.csv" || fail "export"
python3 - "$tmp/samples.csv" "$tmp/phases" $F <<'PY' || fail "the samples' TSCs disagree with pagetouch's"
import csv, sys
rows = [(int(r["time_ns"]), int(r["tsc"] or 0), r["symbol"]) for r in csv.DictReader(open(sys.argv[1]))]
hz = int(sys.argv[3])
rd, cs = {}, {}
for l in open(sys.argv[2]):
    f = l.split()
    if f[0] == "tsc":
        rd[f[1]] = tuple(map(int, f[2:5]))	# tsc before, ns, tsc after
    elif f[0] == "phase":
        cs[f[1]] = int(f[4])
a, z = rd["start"], rd["end"]
rate = ((z[0] + z[2]) / 2 - (a[0] + a[2]) / 2) / (z[1] - a[1])	# ticks per ns
P = rate * 1e9 / hz
print(f"pagetouch: TSC at {rate:.6f} ticks/ns, one sampling period = {P:.0f} ticks; {len(rows)} samples")
assert rate > 0 and rows, "nothing to compare"
ok = True
# time: TSC against time_ns, at the workload's own rate
worst, n = 0, 0
for t, c, s in rows:
    if not a[1] - 1e9 / hz <= t <= z[1] + 1e9 / hz:
        continue
    want = (a[0] + a[2]) / 2 + (t - a[1]) * rate
    worst = max(worst, abs(c - want))
    n += 1
print(f"time: {n} samples in pagetouch's readings: TSC minus the workload's TSC at time_ns, at most {worst:.0f} ticks")
if n < 100 or worst > P:
    print(f"FAIL: time: {n} samples (want >= 100), worst {worst:.0f} ticks (want <= {P:.0f})")
    ok = False
# place: by the function the sample is in
for sym, lo, hi, spin in (("spin_before", "start", "fault_start", True),
                          ("touch_pages", "fault_start", "fault_end", False),
                          ("spin_after", "fault_end", "end", True)):
    ts = sorted(c for t, c, s in rows if s == sym)
    l, h = rd[lo][0], rd[hi][2]
    if not ts:
        print(f"FAIL: place: no sample in {sym}")
        ok = False
        continue
    print(f"place: {len(ts)} samples in {sym}: TSC {ts[0] - l} .. {ts[-1] - h} ticks from the "
          f"workload's readings at {lo} .. {hi}")
    if ts[0] < l - P or ts[-1] > h + P:
        print(f"FAIL: place: a sample in {sym} is more than {P:.0f} ticks outside {lo} .. {hi}")
        ok = False
    # a spin runs without a break (unless the workload says it was switched
    # out), sampled every period: its first and last samples are no further
    # from its ends than a period, give or take the timer's jitter (the
    # widest gap between its own samples)
    gap = max([P] + [y - x for x, y in zip(ts, ts[1:])])
    if spin and cs[hi] == cs[lo] and (ts[0] > l + gap or ts[-1] < h - gap):
        print(f"FAIL: place: {sym}'s first or last sample is more than {gap:.0f} ticks from {lo} or {hi}")
        ok = False
sys.exit(0 if ok else 1)
PY
ok "the samples' TSCs agree with pagetouch's own within one sampling period"
