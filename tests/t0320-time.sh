#!/bin/sh
# t0320-time: sample times are right.  pagetouch --phases spins ~0.3 s, makes
# a burst of N page faults, spins ~0.3 s again, and reports its own readings
# (tests/workloads/pagetouch.c): at "start", "fault_start", "fault_end" and
# "end", its CLOCK_MONOTONIC time, its page faults so far (getrusage: since
# the fork, exec and dynamic loading included) and its context switches so
# far.  Recorded with cpu-clock at 1000 Hz counting page-faults, the
# page-fault series of 'strobe plot --pid PID' (its CSV, 10 ms buckets) must
# account for the workload's faults where the workload says they happened:
#   - before the bucket of fault_start: the faults the workload made before
#     fault_start (its start-up), give or take T;
#   - after the bucket following fault_end's: the faults it made after
#     fault_end, give or take T (plus its exit);
#   - in between: at least the burst's faults (>= N) less what its context
#     switches in the burst can carry away (none when it reports none).
# So the burst's edges, placed by the cumulative series, are within a bucket
# of the workload's own times.  T is what the attribution rule
# (doc/DESIGN.md) can move across a context switch: the faults of one
# sampling period at the burst's rate (the fastest this machine faults, as
# the workload measured it), per context switch the workload reports, and
# one more for its first run (before the burst) and its exit (after).
# Nothing depends on the machine's speed or where bucket boundaries fall;
# shifting the burst by more than a bucket (plus T's worth) or losing faults
# fails.
. "$(dirname "$0")/lib.sh"
need_root

# pagetouch at real-time priority keeps its CPU, so that its faults go to its
# own samples (the attribution rule, doc/DESIGN.md)
rt=
command -v chrt >/dev/null && chrt -f 10 true 2>/dev/null && rt="chrt -f 10"
N=100000
F=1000
"$STROBE" record --sample-event cpu-clock -F $F -e page-faults --name time \
	-- $rt "$WL/pagetouch" $N --phases >"$tmp/phases" 2>"$tmp/record.err" ||
	fail "record: $(cat "$tmp/record.err")"
grep -q "samples, 0 lost" "$tmp/record.err" || fail "record summary: $(cat "$tmp/record.err")"
cat "$tmp/phases"
pid=$(sed -n 's/^pid \([0-9]*\)$/\1/p' "$tmp/phases")
[ -n "$pid" ] && grep -q '^phase fault_start [0-9]* [0-9]* [0-9]*$' "$tmp/phases" &&
	grep -q '^phase end [0-9]* [0-9]* [0-9]*$' "$tmp/phases" ||
	fail "pagetouch did not print its readings: $(cat "$tmp/phases")"

"$STROBE" plot --event page-faults --pid "$pid" --bucket 10 -o "$tmp/pf.csv" ||
	fail "plot -o pf.csv"
python3 - "$tmp/pf.csv" "$tmp/phases" $N $F <<'PY' || fail "the page faults are not where pagetouch says"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
n, hz = int(sys.argv[3]), int(sys.argv[4])
ph = {}
for l in open(sys.argv[2]):
    f = l.split()
    if f[0] == "phase":
        ph[f[1]] = tuple(map(int, f[2:5]))	# ns, faults, context switches
fs, fe = ph["fault_start"][0], ph["fault_end"][0]
w_before = ph["fault_start"][1]
w_burst = ph["fault_end"][1] - ph["fault_start"][1]
w_after = ph["end"][1] - ph["fault_end"][1]
cs_before = ph["fault_start"][2]
cs_burst = ph["end"][2] - ph["fault_start"][2]	# to the end: the last burst faults ride on a later sample
cs_after = ph["end"][2] - ph["fault_end"][2]
period = 1e9 / hz
assert w_burst >= n, f"pagetouch says its burst made {w_burst} faults, not >= {n}"
b0 = int(rows[0]["from_ns"])
width = int(rows[0]["to_ns"]) - b0
assert width == 10_000_000, f"bucket of {width} ns"
assert width >= 2 * period
assert all(int(r["from_ns"]) == b0 + i * width for i, r in enumerate(rows)), "buckets not contiguous"
pf = [int(r["page-faults"] or 0) for r in rows]
def bucket(t):
    return (t - b0) // width
kfs, kfe = bucket(fs), bucket(fe) + 1	# a sample carries faults of at most one period before it
before, inside, after = sum(pf[:kfs]), sum(pf[kfs:kfe + 1]), sum(pf[kfe + 1:])
per_period = -(-w_burst * period // (fe - fs))	# faults per sampling period at the burst's rate
tol_before = (cs_before + 1) * per_period	# + 1: its first run, after the fork
tol_burst = cs_burst * per_period
tol_after = (cs_after + 1) * per_period	# + 1: the exit, after the last reading
print(f"pagetouch (pid in the plot): {w_before} faults before the burst, {w_burst} in it "
      f"({(fe - fs) / 1e6:.1f} ms, {per_period:.0f} per sampling period), {w_after} after; "
      f"context switches {cs_before} before, {cs_burst} from the burst to the end")
print(f"plot: {before} faults before bucket {kfs} (fault_start), {inside} in buckets {kfs}..{kfe}, "
      f"{after} after")
# the burst's edges by the cumulative series
cum, c = [], 0
for v in pf:
    c += v
    cum.append(c)
first = next(i for i, v in enumerate(cum) if v > w_before + tol_before)
last = next(i for i, v in enumerate(cum) if v >= cum[-1] - (w_after + tol_after))
print(f"burst edges by the cumulative series: buckets {first}..{last}; pagetouch's times: "
      f"buckets {kfs}..{bucket(fe)}")
ok = True
if abs(before - w_before) > tol_before:
    print(f"FAIL: {before} faults plotted before the burst, pagetouch made {w_before} (+-{tol_before:.0f})")
    ok = False
if abs(after - w_after) > tol_after:
    print(f"FAIL: {after} faults plotted after the burst, pagetouch made {w_after} (+-{tol_after:.0f})")
    ok = False
if inside < w_burst - tol_burst:
    print(f"FAIL: {inside} faults plotted in the burst, pagetouch made {w_burst} (-{tol_burst:.0f})")
    ok = False
if not (kfs <= first and last <= kfe):
    print(f"FAIL: the burst is plotted in buckets {first}..{last}, not within {kfs}..{kfe}")
    ok = False
sys.exit(0 if ok else 1)
PY
ok "page faults before, in and after the burst where pagetouch says"
