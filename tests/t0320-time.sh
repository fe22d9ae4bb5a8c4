#!/bin/sh
# t0320-time: sample times are right.  pagetouch --phases spins ~0.3 s, makes
# a burst of page faults, spins ~0.3 s again, and prints the CLOCK_MONOTONIC
# times at which the burst started and ended.  Recorded with cpu-clock at
# 1000 Hz counting page-faults, the page-fault series of 'strobe plot'
# (its CSV, 10 ms buckets) puts the burst's first and last buckets within one
# bucket of those times, and nearly all of the burst's faults between them.
# The samples' TSCs converted with the session's tsc_mult/tsc_shift/
# tsc_ref/tsc_ref_ns agree with their CLOCK_MONOTONIC times to 0.1%: over
# the whole session, and for every sample against the first.
. "$(dirname "$0")/lib.sh"
need_root

# pagetouch at real-time priority keeps its CPU, so that its faults go to its
# own samples (the attribution rule, doc/DESIGN.md)
rt=
command -v chrt >/dev/null && chrt -f 10 true 2>/dev/null && rt="chrt -f 10"
N=100000
"$STROBE" record --sample-event cpu-clock -F 1000 -e page-faults --name time \
	-- $rt "$WL/pagetouch" $N --phases >"$tmp/phases" 2>"$tmp/record.err" ||
	fail "record: $(cat "$tmp/record.err")"
grep -q "samples, 0 lost" "$tmp/record.err" || fail "record summary: $(cat "$tmp/record.err")"
cat "$tmp/phases"
grep -q '^phase fault_start [0-9]*$' "$tmp/phases" && grep -q '^phase fault_end [0-9]*$' "$tmp/phases" ||
	fail "pagetouch did not print its phases: $(cat "$tmp/phases")"

# --- the burst where pagetouch says it was
"$STROBE" plot --event page-faults --comm pagetouch --bucket 10 -o "$tmp/pf.csv" ||
	fail "plot -o pf.csv"
python3 - "$tmp/pf.csv" "$tmp/phases" $N <<'PY' || fail "the page-fault burst is not where pagetouch says"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ph = dict(l.split()[1:3] for l in open(sys.argv[2]) if l.startswith("phase "))
start, end, n = int(ph["fault_start"]), int(ph["fault_end"]), int(sys.argv[3])
b0 = int(rows[0]["from_ns"])
width = int(rows[0]["to_ns"]) - b0
assert width == 10_000_000, f"bucket of {width} ns"
pf = [int(r["page-faults"] or 0) for r in rows]
peak = max(pf)
burst = [i for i, v in enumerate(pf) if v > 0.05 * peak]
first, last = burst[0], burst[-1]
want_first, want_last = (start - b0) // width, (end - b0) // width
print(f"burst {(end - start) / 1e6:.1f} ms at {(start - b0) / 1e9:.4f}..{(end - b0) / 1e9:.4f} s "
      f"(buckets {want_first}..{want_last}); plotted in buckets {first}..{last}, "
      f"peak {peak} faults per 10 ms")
assert (end - start) > 3 * width, "burst too short to place"
assert abs(first - want_first) <= 1, f"burst starts in bucket {first}, not {want_first}"
assert abs(last - want_last) <= 1, f"burst ends in bucket {last}, not {want_last}"
inside = sum(pf[max(0, want_first - 1):want_last + 2])
total = sum(pf)
print(f"{inside} of {total} page faults within a bucket of the burst (N = {n})")
assert inside >= 0.98 * n, f"only {inside} of {n} faults within a bucket of the burst"
# the spins before and after are quiet
quiet = [v for i, v in enumerate(pf) if i < want_first - 1 or i > want_last + 1]
assert sum(quiet) <= 0.01 * n, f"{sum(quiet)} faults outside the burst"
PY
ok "page-fault burst placed within a bucket"

# --- TSC against CLOCK_MONOTONIC
python3 - "$STROBE_DB" <<'PY' || fail "TSC and CLOCK_MONOTONIC times disagree"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
sid, mult, shift, ref, ref_ns, src, first, last = db.execute(
    "SELECT id, tsc_mult, tsc_shift, tsc_ref, tsc_ref_ns, tsc_source, first_sample, last_sample "
    "FROM sessions ORDER BY id DESC").fetchone()
print(f"session {sid}: tsc_source {src}, mult {mult}, shift {shift}")
if not mult or src == "none":
    print("no TSC on this machine: nothing to compare")
    sys.exit(0)
M = 1 << 64
def ns(tsc):	# lib/tsc.c: tsc_to_ns()
    tsc %= M
    r = ref % M
    if tsc >= r:
        return ref_ns + (((tsc - r) * mult) >> shift)
    return ref_ns - (((r - tsc) * mult) >> shift)
rows = db.execute("SELECT time_ns, tsc FROM samples WHERE rowid BETWEEN ? AND ? AND session_id=? "
                  "ORDER BY time_ns", (first, last, sid)).fetchall()
assert len(rows) > 500, f"{len(rows)} samples"
t0, c0 = rows[0]
t1, c1 = rows[-1]
el_ns, el_tsc = t1 - t0, ns(c1) - ns(c0)
err = abs(el_tsc - el_ns) / el_ns
print(f"{len(rows)} samples over {el_ns / 1e9:.4f} s: TSC says {el_tsc / 1e9:.6f} s "
      f"({100 * err:.5f}% apart)")
assert err <= 0.001, "elapsed times differ by more than 0.1%"
worst = 0
for t, c in rows[1:]:
    d = abs((ns(c) - ns(c0)) - (t - t0))
    worst = max(worst, d - 0.001 * (t - t0))
    assert d <= 0.001 * (t - t0) + 2000, \
        f"sample at {(t - t0) / 1e9:.6f} s: TSC and time_ns differ by {d} ns"
off = sorted(ns(c) - t for t, c in rows)
print(f"TSC-derived minus time_ns: median {off[len(off) // 2]} ns, "
      f"range {off[0]}..{off[-1]} ns")
PY
ok "TSC and CLOCK_MONOTONIC agree within 0.1%"
