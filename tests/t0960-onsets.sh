#!/bin/sh
# t0960-onsets: 'strobe onsets' against the truth of a workload that times
# its own phase changes (tests/workloads/phases: CPU duty 30, 90, 50, 100 %
# for 1.5 s each, each start printed on CLOCK_MONOTONIC, phase I in its
# own function spinI): every true change found within one bucket, its time
# inside its stated uncertainty widened by a bucket, the levels in the
# duty's order, no other change but where the workload says the machine
# took its CPU (it times its own stalls: a real change, not one it made);
# 'strobe phases' cuts there, each phase's
# top hot spot its own spinI, which grew against the phase before while
# the one before's shrank; the same
# workload at one duty (20 runs of 3 s in one session, each its own
# window): false positives counted (changes not at a stall the run
# printed), at most three in the 20; --min-shift
# merges the smaller changes away (0.6 keeps only 30 -> 90 %); the CSV
# columns; bad options refused with one line.  The workloads run at nice
# -20, and a run that a busy machine still took a tenth of its time from
# (its own stalls) is no truth: SKIP when a phase was, or more than 5 of
# the 20 stationary runs.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$WL/phases" ] || skip "tests/workloads/phases is not built"

B=40	# the bucket, ms: at 2 kHz, 24 to 80 samples of the workload per bucket

# start: the session's start_ns (CLOCK_MONOTONIC)
session_start() {
	python3 - "$STROBE_DB" <<'PY'
import strobedb, sys
db = strobedb.connect(sys.argv[1])
print(db.execute("SELECT start_ns FROM sessions ORDER BY id DESC LIMIT 1").fetchone()[0])
PY
}

"$STROBE" record -F 2000 --name phases -- sh -c "nice -n -20 \"$WL/phases\" 30:1.5 90:1.5 50:1.5 100:1.5 \
>\"$tmp/truth\" & echo \$! >\"$tmp/pid\"; wait" 2>"$tmp/record.err" ||
	fail "record: $(cat "$tmp/record.err")"
pid=$(cat "$tmp/pid")
start=$(session_start) || fail "reading the session's start"
# the workload's own window: its first phase's start to its end, less its
# first quarter second (WARM): a new process of this workload gets fewer
# samples for its first 0.1-0.2 s, the first and a second one alike in one
# session (cause not found: not a stall it sees)
WARM=250000000
from=$(($(sed -n 's/^phase 0 duty .* start_ns //p' "$tmp/truth") - start + WARM))
to=$(($(sed -n 's/^end_ns //p' "$tmp/truth") - start))
# the truth is what the workload ran: a machine that took a tenth of a
# phase's time from it (its stalls: another process, the hypervisor) made
# changes of its own, as large as the ones asked (a 90 % phase run at 60 %
# under two other busy processes): no truth to hold the method to
starved() {
	python3 - "$@" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
starts = [int(l.split()[5]) for l in lines if l.startswith("phase ")]
ends = [int(l.split()[1]) for l in lines if l.startswith("end_ns")]
stalls = [tuple(map(int, l.split()[1:])) for l in lines if l.startswith("stall ")]
worst = 0.0
for a, z in zip(starts, starts[1:] + ends[:1]):
    worst = max(worst, min(1.0, sum(n for s, _, n in stalls if a <= s < z) / max(z - a, 1)))
print(f"{100 * worst:.0f}")
PY
}
lost=$(starved "$tmp/truth") || fail "reading the workload's stalls"
[ "$lost" -le 10 ] || skip "the machine took $lost % of a phase's time from the workload (other load): \
its duties are not the truth; run on a quieter machine"
"$STROBE" onsets --event samples --pid "$pid" --from "${from}ns" --to "${to}ns" \
	--bucket "$B" --format csv >"$tmp/on.csv" 2>"$tmp/on.err" ||
	fail "onsets: $(cat "$tmp/on.err")"
head -n 1 "$tmp/on.csv" | grep -q '^time_ns,time_s,uncertainty_ms,before,after,shift,confidence' ||
	fail "CSV header: $(head -n 1 "$tmp/on.csv")"
python3 - "$tmp/on.csv" "$tmp/truth" "$B" <<'PY' || fail "onsets against the truth"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
truth = [l.split() for l in open(sys.argv[2]) if l.startswith("phase ")]
b_ns = int(sys.argv[3]) * 1000000
changes = [(int(t[5]), int(t[3])) for t in truth[1:]]   # (start_ns, duty) of phases 1..
duties = [int(t[3]) for t in truth]
found = [(int(r["time_ns"]), float(r["uncertainty_ms"]), float(r["before"]),
          float(r["after"]), float(r["confidence"])) for r in rows]
print("found:", [(f[0], f[1], round(f[2], 1), round(f[3], 1), f[4]) for f in found])
print("truth:", changes)
used = set()
for i, (t, duty) in enumerate(changes):
    near = [k for k, f in enumerate(found) if abs(f[0] - t) <= b_ns]
    assert near, f"the change to {duty}% at {t} was not found within one bucket"
    k = min(near, key=lambda k: abs(found[k][0] - t))
    used.add(k)
    f = found[k]
    # the truth inside the stated interval, widened by the bucket the
    # time is quantised to
    assert abs(f[0] - t) <= f[1] * 1e6 + b_ns, f"change at {t}: found {f[0]} +- {f[1]} ms"
    # the levels go the way the duty went
    before, after = duties[i], duty
    assert (f[3] > f[2]) == (after > before), f"change {before}->{after}%: {f[2]} -> {f[3]}"
    assert f[4] >= 0.9, f"change {before}->{after}%: confidence {f[4]}"
stalls = [tuple(map(int, l.split()[1:])) for l in open(sys.argv[2]) if l.startswith("stall ")]
def stalled(t):
    return any(a - 2 * b_ns <= t <= z + 2 * b_ns for a, z, _ in stalls)
extra = [f for k, f in enumerate(found) if k not in used and not stalled(f[0])]
print(f"{len(stalls)} stalls; changes at stalls:",
      [f[0] for k, f in enumerate(found) if k not in used and stalled(f[0])])
assert not extra, f"changes that did not happen: {extra}"
PY
ok "the three phase changes, within one bucket, nothing else"

# --min-shift 0.6: 90 -> 50 (0.44) merged first, then 70 -> 100 (0.3),
# leaving 30 -> 80 (0.63)
"$STROBE" onsets --event samples --pid "$pid" --from "${from}ns" --to "${to}ns" \
	--bucket "$B" --min-shift 0.6 --format csv >"$tmp/ms.csv" 2>"$tmp/ms.err" ||
	fail "onsets --min-shift: $(cat "$tmp/ms.err")"
python3 - "$tmp/ms.csv" "$tmp/truth" "$B" <<'PY' || fail "--min-shift 0.6"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
truth = [l.split() for l in open(sys.argv[2]) if l.startswith("phase ")]
assert len(rows) == 1, f"{len(rows)} changes: {rows}"
assert abs(int(rows[0]["time_ns"]) - int(truth[1][5])) <= int(sys.argv[3]) * 1000000, rows
assert float(rows[0]["shift"]) > 1.0, rows    # 30 -> about 80 %
PY
ok "--min-shift 0.6 keeps only 30 -> 90 %"

"$STROBE" phases --event samples --pid "$pid" --from "${from}ns" --to "${to}ns" \
	--bucket "$B" --format csv >"$tmp/ph.csv" 2>"$tmp/ph.err" ||
	fail "phases: $(cat "$tmp/ph.err")"
python3 - "$tmp/ph.csv" "$tmp/truth" "$B" <<'PY' || fail "phases against the truth"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
truth = [l.split() for l in open(sys.argv[2]) if l.startswith("phase ")]
stalls = [tuple(map(int, l.split()[1:])) for l in open(sys.argv[2]) if l.startswith("stall ")]
b_ns = int(sys.argv[3]) * 1000000
for r in rows:
    print(r["phase"], r["time_s"], r["duration_s"], r["samples"], r["top"], "|",
          r["grew"], r["grew_delta_percent"], "|", r["shrank"], r["shrank_delta_percent"])
for k in range(1, len(rows)):
    assert rows[k]["from_ns"] == rows[k - 1]["to_ns"], "phases do not tile"
# a cut at a stall of the workload's (as for onsets) splits its phase: the
# part after it has the same code on top, and is no phase of the truth
starts = [int(x[5]) for x in truth[1:]]
kept = []
for r in rows:
    t = int(r["from_ns"])
    true_cut = any(abs(t - x) <= b_ns for x in starts)
    if kept and not true_cut and any(a - 2 * b_ns <= t <= z + 2 * b_ns for a, z, _ in stalls):
        assert r["top"].split(" ")[0] == kept[-1]["top"].split(" ")[0], f"cut at a stall: {r}"
        print("a cut at a stall:", r["from_ns"])
        continue
    kept.append(r)
assert len(kept) == 4, f"{len(kept)} phases"
for k, r in enumerate(kept):
    if k:
        assert abs(int(r["from_ns"]) - int(truth[k][5])) <= b_ns, f"phase {k} starts at {r['from_ns']}"
    assert r["top"].startswith(f"spin{k} "), f"phase {k}: top {r['top']}"
    if k:
        assert r["grew"] == f"spin{k}", f"phase {k}: grew {r['grew']}"
        assert float(r["grew_delta_percent"]) > 50, r
        assert r["shrank"] == f"spin{k - 1}", f"phase {k}: shrank {r['shrank']}"
    else:
        assert not r["grew"] and not r["shrank"], "phase 0 has no phase before"
PY
ok "phases: four, each its own code on top, grown against the one before"

# --- stationary: 20 runs at one duty, each analysed in its own window
"$STROBE" record -F 2000 --name stationary -- sh -c "for i in \$(seq 20); do \
nice -n -20 \"$WL/phases\" 50:3 >>\"$tmp/runs\" & echo \$! >>\"$tmp/pids\"; wait; done" \
	2>"$tmp/record2.err" || fail "record: $(cat "$tmp/record2.err")"
start=$(session_start) || fail "reading the session's start"
fp=0 runs=0 excused=0 starved_runs=0
exec 3<"$tmp/pids"
grep -E '^(phase|end_ns)' "$tmp/runs" | paste - - >"$tmp/windows"
while read -r _ _ _ _ _ s0 _ s1; do
	read -r p <&3
	"$STROBE" onsets --event samples --pid "$p" --from "$((s0 - start + WARM))ns" \
		--to "$((s1 - start))ns" --bucket "$B" --format csv >"$tmp/st.csv" \
		2>"$tmp/st.err" || fail "onsets of run $runs: $(cat "$tmp/st.err")"
	# each change: at a stall of this run's (within two buckets), or false
	set -- $(python3 - "$tmp/st.csv" "$tmp/runs" "$s0" "$s1" "$B" <<'PY'
import csv, sys
b_ns = int(sys.argv[5]) * 1000000
s0, s1 = int(sys.argv[3]), int(sys.argv[4])
stalls = [tuple(map(int, l.split()[1:])) for l in open(sys.argv[2])
          if l.startswith("stall ") and s0 <= int(l.split()[1]) <= s1]
false = excused = 0
lost = sum(n for _, _, n in stalls) / max(s1 - s0, 1)
if lost > 0.10:
    print(0, 0, 1)      # starved: not stationary as run (see starved())
    sys.exit(0)
for r in csv.DictReader(open(sys.argv[1])):
    t = int(r["time_ns"])
    if any(a - 2 * b_ns <= t <= z + 2 * b_ns for a, z, _ in stalls):
        excused += 1
    else:
        false += 1
        print(f"false change: {dict(r)}", file=sys.stderr)
print(false, excused, 0)
PY
)
	fp=$((fp + $1))
	excused=$((excused + $2))
	starved_runs=$((starved_runs + $3))
	runs=$((runs + 1))
done <"$tmp/windows"
exec 3<&-
[ "$runs" -eq 20 ] || fail "$runs stationary runs, not 20"
[ "$starved_runs" -le 5 ] || skip "the machine took a tenth of the time of $starved_runs of 20 \
stationary runs from the workload (other load); run on a quieter machine"
echo "stationary: $fp false positives in $((runs - starved_runs)) runs ($excused changes at the runs' own stalls, $starved_runs runs starved)"
# at most 3: on a virtual machine the profiler itself misses samples of a
# process that runs (its timer fires late: dips to 40 % for 60 ms with no
# stall the workload sees), which no bound on noise tells from a change;
# the unit test holds the method to at most 1 in 20 on synthetic noise
[ "$fp" -le 3 ] || fail "$fp false positives in $((runs - starved_runs)) stationary runs"
ok "stationary: $fp false positives in $((runs - starved_runs)) runs"

# --- bad input: one line each, exit 2
"$STROBE" onsets >/dev/null 2>"$tmp/e1" && fail "no --event accepted"
[ "$(wc -l <"$tmp/e1")" -eq 1 ] && grep -q -- "--event" "$tmp/e1" || fail "no --event: $(cat "$tmp/e1")"
"$STROBE" onsets --event samples --min-shift x >/dev/null 2>"$tmp/e2"
[ $? -eq 2 ] && grep -q "bad --min-shift" "$tmp/e2" || fail "bad --min-shift: $(cat "$tmp/e2")"
"$STROBE" onsets --event no-such-event >/dev/null 2>"$tmp/e3" && fail "unknown event accepted"
[ "$(wc -l <"$tmp/e3")" -eq 1 ] && grep -q "unknown event 'no-such-event'" "$tmp/e3" ||
	fail "unknown event: $(cat "$tmp/e3")"
ok "bad options refused with one line"
