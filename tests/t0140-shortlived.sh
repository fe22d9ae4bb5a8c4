#!/bin/sh
# t0140-shortlived: 200 short processes exec'd one after another (each burns
# 30 ms of CPU in short_spin and exits) are all seen and named: >= 85% of the
# samples of comm shortlived are on short_spin, >= 150 distinct pids of comm
# shortlived have samples in the database, a typical child has ~30 samples
# (30 ms at 1000 Hz), and a child's pid alone reports short_spin.
. "$(dirname "$0")/lib.sh"
need_root

"$STROBE" record --sample-event cpu-clock -F 1000 --name short \
	-- "$WL/shortlived" 200 30 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
grep -q "samples, 0 lost" "$tmp/record.err" || fail "record summary: $(cat "$tmp/record.err")"

"$STROBE" report --comm shortlived --format csv >"$tmp/r.csv" || fail "report csv"
python3 - "$tmp/r.csv" <<'PY' || fail "short_spin share"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tot = sum(int(r["samples"]) for r in rows)
hot = sum(int(r["samples"]) for r in rows
          if r["binary"].endswith("/shortlived") and r["symbol"] == "short_spin")
print(f"shortlived: {tot} samples, {hot} on short_spin ({100.0 * hot / max(tot, 1):.2f}%)")
assert tot >= 4000, f"only {tot} samples for 200 x 30 ms at 1000 Hz"
assert hot >= 0.85 * tot, f"short_spin has {hot} of {tot} samples, not >= 85%"
PY

python3 - "$STROBE_DB" >"$tmp/pid" <<'PY' || fail "distinct pids"
import sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
n, = db.execute("SELECT count(DISTINCT pid) FROM samples s JOIN comms c ON c.id=s.comm_id "
                "WHERE c.name='shortlived'").fetchone()
per = [r[0] for r in db.execute(
    "SELECT count(*) FROM samples s JOIN comms c ON c.id=s.comm_id "
    "WHERE c.name='shortlived' GROUP BY pid")]
med = statistics.median(per) if per else 0
print(f"{n} distinct pids of shortlived, median {med} samples per pid", file=sys.stderr)
assert n >= 150, f"only {n} distinct shortlived pids have samples, want >= 150 of 200"
assert 20 <= med <= 40, f"median {med} samples per pid, want ~30 (30 ms at 1000 Hz)"
# a child: one whose samples are mostly not the parent's (the parent is idle)
pid, = db.execute("SELECT pid FROM samples s JOIN comms c ON c.id=s.comm_id "
                  "WHERE c.name='shortlived' GROUP BY pid ORDER BY count(*) DESC LIMIT 1").fetchone()
print(pid)
PY
cat "$tmp/pid" >&2
pid=$(tail -n 1 "$tmp/pid")
"$STROBE" report --pid "$pid" --format csv >"$tmp/p.csv" || fail "report --pid $pid"
python3 - "$tmp/p.csv" <<'PY' || fail "report --pid of one child"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tot = sum(int(r["samples"]) for r in rows)
assert 10 <= tot <= 60, f"one child has {tot} samples, want ~30"
assert rows[0]["symbol"] == "short_spin", f"top symbol of one child is {rows[0]['symbol']}"
PY
ok "200 short-lived processes seen and named"
