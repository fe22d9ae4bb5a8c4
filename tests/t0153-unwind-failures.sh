#!/bin/sh
# t0153-unwind-failures: a library with neither frame pointers nor unwind
# information (libnocfi.so, tests/workloads/nocfi.c) under --call-graph
# dwarf.  Its samples must get counted unwinding failures, not wrong
# stacks: every stack of the workload whose frame 0 is in libnocfi.so is
# marked incomplete and holds no frame of the program that called the
# library (run_lib, main: reachable only by guessing); unwind_errors
# counts "no CFI" in libnocfi.so for at least those samples; and the
# reports say so (report --children's note names the library and the
# reason).  Control: the program's own frames (with CFI) unwind when the
# sample is outside the library, as t0148 shows for calltree-nofp.
. "$(dirname "$0")/lib.sh"
need_root

"$STROBE" record --call-graph dwarf --sample-event cpu-clock -F 1000 --name nocfi \
	-- sh -c 'echo $$ >"$1"; exec "$2" 2' sh "$tmp/pid" "$WL/nocfi" \
	>"$tmp/record.out" 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
id=$(sqlq "$STROBE_DB" "SELECT max(id) FROM sessions")

python3 - "$STROBE_DB" "$id" "$(cat "$tmp/pid")" <<'PY' || fail "stacks of libnocfi.so"
import os, struct, sys
sys.path.insert(0, os.path.join(os.environ["STROBE_TOP"], "tests"))
import strobedb
db = strobedb.connect(sys.argv[1])
sid, pid = int(sys.argv[2]), int(sys.argv[3])
q = lambda sql, *a: db.execute(sql, a).fetchall()
lib = {r[0] for r in q("SELECT id FROM binaries WHERE path LIKE '%/libnocfi.so'")}
prog = {r[0] for r in q("SELECT id FROM binaries WHERE path LIKE '%/workloads/nocfi'")}
assert lib and prog, f"binaries not stored: libnocfi.so {lib}, nocfi {prog}"
stacks = {}
for i, nr, flags, frames in q("SELECT id, nr, flags, frames FROM stacks WHERE session_id=?", sid):
    stacks[i] = (flags, [struct.unpack_from("<qq", frames, 16 * k) for k in range(nr)])
inlib = 0
for (stack_id, n) in q("SELECT stack_id, count(*) FROM samples WHERE session_id=? AND pid=? "
                       "AND stack_id IS NOT NULL GROUP BY stack_id", sid, pid):
    flags, frames = stacks[stack_id]
    user = [f for f in frames if f[0] in lib or f[0] in prog]
    if not user or user[0][0] not in lib:
        continue
    inlib += n
    assert flags & 1, f"stack {stack_id} in libnocfi.so not marked incomplete: {frames}"
    bad = [f for f in user if f[0] in prog]
    assert not bad, f"stack {stack_id}: made-up callers of libnocfi.so in nocfi: {frames}"
total = q("SELECT count(*) FROM samples WHERE session_id=? AND pid=?", sid, pid)[0][0]
assert inlib >= total // 2, f"only {inlib} of the workload's {total} samples in libnocfi.so"
counted = q("SELECT coalesce(sum(count), 0) FROM unwind_errors WHERE session_id=? AND "
            "binary_id IN (%s) AND reason='no CFI'" % ",".join(map(str, lib)), sid)[0][0]
assert counted >= inlib, f"unwind_errors: {counted} 'no CFI' in libnocfi.so, for {inlib} samples there"
print(f"{inlib} of {total} samples in libnocfi.so, all incomplete, none with a made-up "
      f"caller; unwind_errors counts {counted} 'no CFI' there")
PY
ok "unwinding stops in libnocfi.so and is counted"

"$STROBE" report --children --comm nocfi --limit 3 >"$tmp/children" 2>&1 ||
	fail "report --children: $(cat "$tmp/children")"
grep -q "^# note: unwinding stopped .*libnocfi.so: no CFI" "$tmp/children" ||
	fail "report --children does not say where unwinding stopped: $(cat "$tmp/children")"
grep -q "incomplete stack" "$tmp/children" ||
	fail "report --children does not count the incomplete stacks: $(cat "$tmp/children")"
"$STROBE" report --children --comm nocfi --format csv >"$tmp/children.csv" 2>"$tmp/children.err" ||
	fail "report --children --format csv: $(cat "$tmp/children.err")"
grep -q "note: unwinding stopped .*libnocfi.so: no CFI" "$tmp/children.err" ||
	fail "the CSV report's stderr does not say where unwinding stopped: $(cat "$tmp/children.err")"
ok "reports name the library and the reason"
