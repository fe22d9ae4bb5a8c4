#!/bin/sh
# t0145-pidreuse: one pid, two processes in one session, kept apart.
# tests/workloads/pidreuse forks a child that burns 300 ms of CPU in
# reuse_first and exits, then makes the kernel give its pid P to a second
# child (ns_last_pid, as root) that burns 300 ms in reuse_second.
# Asserted, against the raw samples as exported (each matched to the
# process of P started last before it, from table processes):
# - the session has two processes with pid P;
# - 'report --pid P' has a process column, one row per (process, symbol),
#   labels "P@START" from the processes' starts, reuse_first only in the
#   first process and reuse_second only in the second, with exactly the
#   samples the raw rows give each; the same with --from 0 (a raw scan);
# - 'report --pid P@START' of each is that process alone, without the
#   column (and --pid of a pid that was one process has none either);
# - 'plot --by pid' has one series per process of P, named
#   "pid P@START (pidreuse)", each with the total the raw rows give it;
# - 'export --process-start' gives each sample its process's start.
. "$(dirname "$0")/lib.sh"
need_root
[ -w /proc/sys/kernel/ns_last_pid ] ||
	skip "/proc/sys/kernel/ns_last_pid is not writable (a read-only /proc/sys): pid reuse cannot be forced"

"$STROBE" record --sample-event cpu-clock -F 1000 --name reuse \
	-- "$WL/pidreuse" 300 300 >"$tmp/record.out" 2>"$tmp/record.err"
rc=$?
[ $rc = 77 ] && skip "$(cat "$tmp/record.err")"
[ $rc = 0 ] || fail "record: $(cat "$tmp/record.err")"
read -r P tries <"$tmp/record.out" || fail "pidreuse printed nothing"
ok "pid $P given twice ($tries forks for the second)"

"$STROBE" export --format csv --process-start --pid "$P" -o "$tmp/x.csv" 2>"$tmp/x.err" ||
	fail "export: $(cat "$tmp/x.err")"
R() { "$STROBE" report --by symbol --limit 0 --format csv "$@"; }
R --pid "$P" >"$tmp/r.csv" 2>"$tmp/r.err" || fail "report --pid $P: $(cat "$tmp/r.err")"
R --pid "$P" --from 0 >"$tmp/rraw.csv" 2>"$tmp/rraw.err" || fail "report --from 0: $(cat "$tmp/rraw.err")"
"$STROBE" report --pid "$P" >"$tmp/r.txt" 2>&1 || fail "report --pid $P (text)"
"$STROBE" plot --event samples --by pid -o "$tmp/p.csv" 2>"$tmp/p.err" ||
	fail "plot --by pid: $(cat "$tmp/p.err")"
"$STROBE" plot --event samples --by pid --pid "$P" -o "$tmp/pp.csv" 2>"$tmp/pp.err" ||
	fail "plot --by pid --pid $P: $(cat "$tmp/pp.err")"

python3 - "$STROBE_DB" "$P" "$tmp" "$STROBE" <<'PY' || fail "report and plot keep pid $P's processes apart"
import csv, io, strobedb, subprocess, sys
dbf, P, tmp, strobe = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
db = strobedb.connect(dbf)
sid, s0 = db.execute("SELECT id, start_ns FROM sessions ORDER BY id DESC").fetchone()
starts = [r[0] for r in db.execute("SELECT start_ns FROM processes WHERE session_id=? AND pid=? "
                                   "ORDER BY start_ns", (sid, P))]
assert len(starts) == 2, f"the session has {len(starts)} processes with pid {P}, want 2"
label = lambda st: f"{P}@{(st - s0) / 1e9:.3f}"
labels = [label(st) for st in starts]
assert labels[0] != labels[1], labels
# the truth: each exported sample of P to the process started last before it
want = {}
for r in csv.DictReader(open(f"{tmp}/x.csv")):
    t = int(r["time_ns"])
    k = 1 if t >= starts[1] else 0
    assert r["process_start_ns"] == str(starts[k]), f"export --process-start: {r}, want {starts[k]}"
    key = (labels[k], r["binary"], r["symbol"])
    want[key] = want.get(key, 0) + 1
per = [sum(v for (l, b, s), v in want.items() if l == labels[k]) for k in (0, 1)]
first = {k: v for k, v in want.items() if k[2] == "reuse_first"}
second = {k: v for k, v in want.items() if k[2] == "reuse_second"}
assert first and all(k[0] == labels[0] for k in first), f"reuse_first in the raw rows: {first}"
assert second and all(k[0] == labels[1] for k in second), f"reuse_second in the raw rows: {second}"
assert sum(first.values()) >= 100 and sum(second.values()) >= 100, f"too few samples: {first} {second}"
def report(path):
    rows = list(csv.DictReader(open(path)))
    assert rows and "process" in rows[0], f"{path}: no process column: {rows[:1]}"
    got = {}
    for r in rows:
        key = (r["process"], r["binary"], r["symbol"])
        assert key not in got, f"{path}: two rows for {key}"
        got[key] = int(r["samples"])
    return got
for path in ("r.csv", "rraw.csv"):
    got = report(f"{tmp}/{path}")
    if got != want:
        diff = {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}
        raise SystemExit(f"{path}: (process, binary, symbol) -> (report, raw rows) differ: {diff}")
text = open(f"{tmp}/r.txt").read()
assert f"pid {P} was 2 processes" in text and labels[0] in text and labels[1] in text, text
# --pid P@START: that process alone, without the column
for k in (0, 1):
    out = subprocess.run([strobe, "report", "--by", "symbol", "--limit", "0", "--format", "csv",
                          "--pid", labels[k]], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert rows and "process" not in rows[0], f"--pid {labels[k]}: {rows[:1]}"
    got = {}
    for r in rows:
        got[(labels[k], r["binary"], r["symbol"])] = int(r["samples"])
    exp = {kk: v for kk, v in want.items() if kk[0] == labels[k]}
    assert got == exp, f"--pid {labels[k]}: {got} != {exp}"
# a pid that was one process: no column (the output as before)
ppid, = db.execute("SELECT ppid FROM processes WHERE session_id=? AND pid=? ORDER BY start_ns",
                   (sid, P)).fetchone()
out = subprocess.run([strobe, "report", "--format", "csv", "--pid", str(ppid)],
                     capture_output=True, text=True)
assert out.returncode == 0 and not out.stdout.startswith("process,"), out.stdout[:200] + out.stderr
# plot --by pid: a series per process, named by label, with its samples
for path in ("p.csv", "pp.csv"):
    rows = list(csv.DictReader(open(f"{tmp}/{path}")))
    cols = list(rows[0].keys())
    for k in (0, 1):
        name = f"pid {labels[k]} (pidreuse)"
        assert name in cols, f"{path}: no series '{name}': {cols}"
        tot = sum(float(r[name] or 0) for r in rows)
        assert tot == per[k], f"{path}: series '{name}' has {tot} samples, the raw rows {per[k]}"
    assert not any(c.startswith(f"pid {P} ") for c in cols), f"{path}: a merged series of pid {P}: {cols}"
print(f"pid {P}: processes {labels[0]} ({per[0]} samples) and {labels[1]} ({per[1]} samples)")
PY
ok "report --pid, --pid P@START and plot --by pid keep the two processes of pid $P apart"
