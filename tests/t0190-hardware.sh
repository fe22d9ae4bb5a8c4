#!/bin/sh
# t0190-hardware: the default sampler and, where the machine has a PMU,
# hardware events.  Each records one run of split603010 under 'perf stat'
# (the command strobe records), so both measure the same process, selected
# by its pid (the wrapper shell writes it, then execs the workload).
# Without a hardware PMU: the default sampling event is cpu-clock, and the
# workload's samples match its task-clock from perf stat at the session's
# frequency (within 4 standard deviations: a per-CPU timer grid of random
# phase counts each of the workload's k+1 time slices to floor(L + U),
# variance <= 1/4 a slice; the bound takes the larger of that and a
# Poisson count's variance); the hardware part is skipped
# (exit 77, saying why).  With a PMU: the default is cycles, and
# instructions and cycles counted in the group, summed over the workload's
# samples, give a whole-process IPC that agrees with perf stat's IPC of
# the same run within the share of its sampling intervals that a context
# switch can split (2 per switch, from perf stat's context-switches) plus
# 2% for perf stat's and strobe's different start and end points.
. "$(dirname "$0")/lib.sh"
need_root
command -v perf >/dev/null || skip "perf (linux-perf) is not installed"

# ipc_check STROBE_CSV PERF_CSV: strobe report --by binary rows of the
# workload's pid vs perf stat -x, of the same run
ipc_check() {
	python3 - "$1" "$2" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and "instructions" in rows[0] and "cycles" in rows[0], f"no instructions,cycles columns: {rows[:1]}"
n = sum(int(r["samples"]) for r in rows)
ins = sum(int(r["instructions"] or 0) for r in rows)
cyc = sum(int(r["cycles"] or 0) for r in rows)
p = {}
for line in open(sys.argv[2]):
    f = line.strip().split(",")
    if len(f) > 4 and f[0][:1].isdigit():
        p[f[2].split(":")[0]] = (float(f[0]), float(f[4] or 100))
for ev in ("instructions", "cycles", "context-switches"):
    assert ev in p, f"perf stat has no {ev}: {open(sys.argv[2]).read()}"
pipc = p["instructions"][0] / p["cycles"][0]
sipc = ins / cyc
cs = p["context-switches"][0]
bound = 2 * (cs + 1) / n + 0.02
print(f"IPC: strobe {sipc:.3f} ({ins} instructions, {cyc} cycles in {n} samples), perf stat {pipc:.3f} "
      f"(counted {min(p['instructions'][1], p['cycles'][1]):.0f}% of the time), {cs:.0f} context switches: "
      f"differ by {100 * abs(sipc - pipc) / pipc:.2f}%, bound {100 * bound:.2f}%")
assert n >= 500, f"only {n} samples"
assert abs(sipc - pipc) <= bound * pipc, f"IPC strobe {sipc:.3f}, perf stat {pipc:.3f}"
PY
}

# rec_stat EVENTS [STROBE ARGS]: record split603010 2 under perf stat -e EVENTS
rec_stat() {
	ev=$1
	shift
	"$STROBE" record "$@" -- perf stat -x, -e "$ev" -o "$tmp/perf.csv" \
		-- sh -c "echo \$\$ >\"$tmp/pid\"; exec \"$WL/split603010\" 2" 2>"$tmp/rec.err" ||
		fail "record: $(cat "$tmp/rec.err")"
	grep -q "samples, 0 lost" "$tmp/rec.err" || fail "record summary: $(cat "$tmp/rec.err")"
	pid=$(cat "$tmp/pid")
}

if ! perf stat -e cycles -x, true 2>&1 | grep -q '^[0-9]'; then
	rec_stat task-clock,context-switches
	"$STROBE" sessions --format csv >"$tmp/s.csv"
	[ "$(csv_get "$tmp/s.csv" id 1 sample_event)" = cpu-clock ] ||
		fail "default sampler is not cpu-clock without a PMU: $(cat "$tmp/s.csv")"
	"$STROBE" report --pid "$pid" --by binary --format csv >"$tmp/r.csv" || fail report
	python3 - "$STROBE_DB" "$tmp/r.csv" "$tmp/perf.csv" <<'PY' || fail "cpu-clock samples vs perf stat task-clock"
import csv, math, sqlite3, sys
hz, = sqlite3.connect(sys.argv[1]).execute("SELECT sample_freq FROM sessions WHERE id=1").fetchone()
n = sum(int(r["samples"]) for r in csv.DictReader(open(sys.argv[2])))
p = {}
for line in open(sys.argv[3]):
    f = line.strip().split(",")
    if len(f) > 2 and f[0][:1].isdigit():
        p[f[2].split(":")[0]] = float(f[0])
ms, cs = p["task-clock"], p["context-switches"]	# task-clock in msec
want = ms / 1000 * hz
bound = 4 * math.sqrt(max(want, (cs + 1) / 4))
print(f"{n} cpu-clock samples at {hz} Hz; perf stat: task-clock {ms:.1f} ms, {cs:.0f} context switches: "
      f"want {want:.0f} ± {bound:.0f}")
assert hz and want >= 500, f"{hz} Hz, {ms} ms"
assert abs(n - want) <= bound, f"{n} samples, want {want:.0f} ± {bound:.0f}"
PY
	skip "no hardware PMU on this machine (perf stat -e cycles fails): hardware events untested here (cpu-clock default checked)"
fi

rec_stat instructions,cycles,context-switches -F 1000 -e instructions,cycles
"$STROBE" sessions --format csv >"$tmp/s.csv"
[ "$(csv_get "$tmp/s.csv" id 1 sample_event)" = cycles ] ||
	fail "default sampler is not cycles with a PMU: $(cat "$tmp/s.csv")"
"$STROBE" report --pid "$pid" --by binary --format csv >"$tmp/r.csv" || fail report
head -n 1 "$tmp/r.csv" | grep -q 'instructions,cycles,ipc' || fail "no ipc column: $(head -n 1 "$tmp/r.csv")"
ipc_check "$tmp/r.csv" "$tmp/perf.csv" || fail "IPC of pid $pid disagrees with perf stat of the same run"
ok "cycles sampling and IPC"
