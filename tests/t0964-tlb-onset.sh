#!/bin/sh
# t0964-tlb-onset: the TLB experiment of the seed papers, found by 'strobe
# onsets' against the machine's own measure.  'strobe probe' times the
# dTLB's reach (pages); tests/workloads/tlbwalk then grows its working set
# across it, from half the reach to twice it in steps of an eighth, each
# size doing the same work: rounds of a pointer chase over one line per
# page (function chase: its loads miss the dTLB once the pages pass the
# reach) and of a fixed computation (function steady, whose cost the TLB
# does not touch), a USDT marker at the end of each size.  On a machine
# without TLB events (no PMU) the onset shows in cpu-clock alone, as the
# share of the samples in chase against steady (a share within the code
# under test: a loaded machine slows both alike): 'strobe onsets --by
# symbol' must find chase's largest rise at the size where the reach is
# crossed, within one step, the size read from the marker that ends it.
# The truth is checked first: the walk's own time per load (tlbwalk prints
# it per size) must step up there too, else the probe and the walk
# disagree on this machine (a noisy host) and there is nothing to hold the
# method to: SKIP, saying so.  The arm64 guest's PMU (QEMU's PMUv3 counts
# cycles and instructions, no TLB events, and under -icount cycles follow
# instructions) cannot show a TLB step: this runs on the host kind only.
# tlbwalk runs at nice -20; a machine that still took more than 15 % of
# the walks' time (the median size's rounds against its fastest) makes it
# SKIP.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$WL/tlbwalk" ] || skip "tests/workloads/tlbwalk is not built"
[ -e /sys/bus/event_source/devices/uprobe/type ] ||
	skip "this kernel has no uprobe perf events (CONFIG_UPROBE_EVENTS): no size markers"

B=80	# the bucket, ms: 160 samples; a size lasts 3 to 5

"$STROBE" probe --format csv --max-size 256K -o "$tmp/probe.csv" 2>"$tmp/probe.err" ||
	fail "strobe probe: $(cat "$tmp/probe.err")"
reach=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "pages") c = i }
	$1 == "dTLB" { print $c }' "$tmp/probe.csv")
case "$reach" in
''|*[!0-9]*) skip "strobe probe measured no dTLB reach here: $(grep '^dTLB' "$tmp/probe.csv")" ;;
esac
[ "$reach" -ge 16 ] || skip "a dTLB reach of $reach pages is too small to step across"
step=$((reach / 8))
a=$((reach / 2))
b=$((2 * reach))
echo "dTLB reach $reach pages: sizes $a to $b, step $step"

"$STROBE" record -F 2000 --name tlbonset --marker "$WL/tlbwalk:tlbwalk:size" -- \
	sh -c "nice -n -20 \"$WL/tlbwalk\" $a $b -S $step -A 2000000 -R 40 -C 2000000 >\"$tmp/walk\" & \
echo \$! >\"$tmp/pid\"; wait" 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
pid=$(cat "$tmp/pid")

# the truth: the first size past the reach, and the walk's own step
python3 - "$tmp/walk" "$reach" "$step" >"$tmp/truth" <<'PY' || fail "reading tlbwalk's output"
import sys
rows = [tuple(map(float, l.split()[:2])) for l in open(sys.argv[1]) if l.strip()]
# the machine's share of the walks: the median over the sizes (one size a
# hiccup hit says nothing of the others)
losts = sorted(float(l.split()[2]) for l in open(sys.argv[1]) if l.strip())
lost = losts[len(losts) // 2]
reach, step = int(sys.argv[2]), int(sys.argv[3])
cross = min(int(n) for n, _ in rows if n > reach)
base = min(ns for n, ns in rows if n <= reach)
# the walk's own onset: the first size whose load takes 1.25 x the
# fastest below the reach
own = min((int(n) for n, ns in rows if ns > 1.25 * base), default=-1)
print(cross, own, round(100 * lost))
PY
read -r cross own lost <"$tmp/truth"
[ "$lost" -le 15 ] || skip "the machine took $lost % of the median size's walk from tlbwalk (other \
load): its samples say more of the machine than of the TLB; run on a quieter machine"
echo "first size past the reach: $cross; the walk's own step at: $own; the machine took $lost % of the median size's walk"
[ "$own" -ge 0 ] && [ $((own - cross)) -le "$step" ] && [ $((cross - own)) -le "$step" ] ||
	skip "the probe's reach ($reach pages) and the walk's own step ($own) disagree on this \
machine by more than a step: $(tr '\n' ' ' <"$tmp/walk")"

"$STROBE" report --markers --pid "$pid" --format csv >"$tmp/m.csv" 2>"$tmp/m.err" ||
	fail "report --markers: $(cat "$tmp/m.err")"
# the walk's own window: from the end of its first size (the process's
# start is a change of its own) to the end of its last
set -- $(awk -F, 'NR > 1 { if (!first) first = $1; last = $1 } END { print first, last }' "$tmp/m.csv")
[ $# -eq 2 ] || fail "no markers: $(cat "$tmp/m.csv")"
"$STROBE" onsets --event samples --by symbol --pid "$pid" --from "${1}s" --to "${2}s" \
	--bucket "$B" --format csv >"$tmp/on.csv" 2>"$tmp/on.err" || fail "onsets: $(cat "$tmp/on.err")"
python3 - "$tmp/on.csv" "$tmp/m.csv" "$cross" "$step" "$B" <<'PY' || fail "the TLB onset"
import csv, sys
ons = list(csv.DictReader(open(sys.argv[1])))
# args: "n,passes,ns" (tlbwalk:size's three)
marks = sorted((float(r["time_s"]), int(r["args"].split(",")[0]))
               for r in csv.DictReader(open(sys.argv[2])))
cross, step, b_s = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]) / 1000
print("markers:", [(round(t, 3), n) for t, n in marks])
def series(name):
    return [r for r in ons if r["series"].split(" ")[0].split(":")[-1] == name]
chase, steady = series("chase"), series("steady")
print("chase:", [(r["time_s"], round(float(r["shift"] or 0), 2)) for r in chase])
print("steady:", [(r["time_s"], round(float(r["shift"] or 0), 2)) for r in steady])
assert chase, f"no change in chase's samples: {[r['series'] for r in ons]}"
# the time moving from steady to chase: chase rises where steady falls
# (within two buckets); a stall (the machine took the CPU) lowers both
def moved(r):
    t = float(r["time_s"])
    return float(r["shift"] or 0) > 0.15 and any(
        float(x["shift"] or 0) < 0 and abs(float(x["time_s"]) - t) <= 2 * b_s for x in steady)
ups = [r for r in chase if moved(r)]
assert ups, f"no rise of chase against a fall of steady: chase {chase}, steady {steady}"
up = max(ups, key=lambda r: float(r["shift"]))
t = float(up["time_s"])
# the size running in the middle of that bucket: the first whose end
# marker comes after it
size = next((n for mt, n in marks if mt >= t + b_s / 2), None)
assert size is not None, f"a change at {t} s, after the last marker"
print(f"chase rises by {float(up['shift']):+.0%} at {t} s, size {size}; the reach is crossed at {cross}")
assert abs(size - cross) <= step, f"the onset is at {size} pages, the reach crossed at {cross} (step {step})"
PY
ok "the onset in chase's share at the size where the dTLB's reach ($reach pages) is crossed"
