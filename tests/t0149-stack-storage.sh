#!/bin/sh
# t0149-stack-storage: call stacks as stored (schema 14), of a -g (frame
# pointer) session over calltree-fp and of a --call-graph dwarf one over
# calltree-nofp: every sample of the workload has a stack, frame 0 is the
# sample's own location, every frame names a stored binary, most of the
# workload's stacks reach main (3 frames or more), stack_agg sums to the
# samples with a stack; and the bytes the fp session added to the database
# per sample, against perf.data's per sample from perf record -g over the
# same run: printed, and strobe's must not exceed perf's.
. "$(dirname "$0")/lib.sh"
need_root

command -v perf >/dev/null || skip "perf (linux-perf) is not installed: nothing to compare with"
# the database's bytes in use (its pages, WAL included, less the free ones)
dbsize() {
	sqlq "$STROBE_DB" "SELECT ((SELECT page_count FROM pragma_page_count) - \
		(SELECT freelist_count FROM pragma_freelist_count)) * \
		(SELECT page_size FROM pragma_page_size)"
}
# a first session creates the database: the fp session's growth is its own
"$STROBE" record --name first -- true >"$tmp/first.out" 2>&1 || fail "first record: $(cat "$tmp/first.out")"
before=$(dbsize)
"$STROBE" record -g --sample-event cpu-clock -F 1000 --name stacks \
	-- perf record -q "$(perf_bid)" -a -g -e cpu-clock -F 1000 -o "$tmp/perf.data" \
	-- sh -c 'echo $$ >"$1"; exec "$2" 2' sh "$tmp/pid" "$WL/calltree-fp" \
	>"$tmp/record.out" 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
pid=$(cat "$tmp/pid")
# what the fp session added to the database, and perf's samples
dbbytes=$(( $(dbsize) - before ))
psamples=$(perf report -i "$tmp/perf.data" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }')
[ -n "$psamples" ] && [ "$psamples" -gt 0 ] || fail "perf report --stats: no SAMPLE count"
id=$(sqlq "$STROBE_DB" "SELECT max(id) FROM sessions")
[ "$(sqlq "$STROBE_DB" "SELECT call_graph FROM sessions WHERE id=$id")" = fp ] ||
	fail "sessions.call_graph: $(sqlq "$STROBE_DB" "SELECT call_graph FROM sessions WHERE id=$id")"

"$STROBE" record --call-graph dwarf --sample-event cpu-clock -F 1000 --name dwarf \
	-- sh -c 'echo $$ >"$1"; exec "$2" 2' sh "$tmp/pid2" "$WL/calltree-nofp" \
	>"$tmp/record2.out" 2>"$tmp/record2.err" || fail "record dwarf: $(cat "$tmp/record2.err")"
id2=$(sqlq "$STROBE_DB" "SELECT max(id) FROM sessions")
[ "$(sqlq "$STROBE_DB" "SELECT call_graph FROM sessions WHERE id=$id2")" = dwarf,8192 ] ||
	fail "dwarf sessions.call_graph: $(sqlq "$STROBE_DB" "SELECT call_graph FROM sessions WHERE id=$id2")"

python3 - "$STROBE_DB" "$id" "$pid" "$tmp/perf.data" "$id2" "$(cat "$tmp/pid2")" "$dbbytes" \
	"$psamples" <<'PY' || fail "stacks"
import os, sqlite3, struct, sys
sys.path.insert(0, os.path.join(os.environ["STROBE_TOP"], "tests"))
import strobedb
db = strobedb.connect(sys.argv[1])
q = lambda sql, *a: db.execute(sql, a).fetchall()
binaries = {r[0] for r in q("SELECT id FROM binaries")}

def check(sid, pid, what):
    """the session's stacks; the numbers of its samples and of those with a stack"""
    n, with_stack = q("SELECT count(*), count(stack_id) FROM samples WHERE session_id=?", sid)[0]
    mine, mine_stack = q("SELECT count(*), count(stack_id) FROM samples WHERE session_id=? "
                         "AND pid=?", sid, pid)[0]
    assert mine > 500, f"{what}: only {mine} samples of the workload"
    assert mine_stack == mine, f"{what}: {mine - mine_stack} of the workload's {mine} samples have no stack"
    stacks = {}
    for i, h, nr, flags, frames in q("SELECT id, hash, nr, flags, frames FROM stacks "
                                     "WHERE session_id=?", sid):
        assert len(frames) == 16 * nr and nr >= 1, f"{what}: stack {i}: {len(frames)} bytes, {nr} frames"
        fr = [struct.unpack_from("<qq", frames, 16 * k) for k in range(nr)]
        assert all(b in binaries for b, _ in fr), f"{what}: stack {i}: a frame names no stored binary"
        assert flags & 6, f"{what}: stack {i}: neither kernel nor user frames"
        stacks[i] = tuple(fr)
    for b, off, st in q("SELECT binary_id, offset, stack_id FROM samples "
                        "WHERE session_id=? AND stack_id IS NOT NULL", sid):
        assert stacks[st][0] == (b, off), f"{what}: stack {st}: frame 0 {stacks[st][0]}, sample ({b}, {off})"
    deep = sum(1 for (st,) in q("SELECT stack_id FROM samples WHERE session_id=? AND pid=?", sid, pid)
               if len(stacks[st]) >= 3)
    print(f"{what}: {deep} of the workload's {mine} samples have 3 frames or more")
    assert deep > mine * 0.9, f"{what}: only {deep} of the workload's {mine} samples have 3 frames or more"
    agg = q("SELECT sum(samples) FROM stack_agg WHERE session_id=?", sid)[0][0]
    assert agg == with_stack, f"{what}: stack_agg sums {agg}, samples with a stack {with_stack}"
    return stacks, n

check(int(sys.argv[5]), int(sys.argv[6]), "dwarf")
for path, reason, count in q("SELECT coalesce(b.path, '(none)'), u.reason, u.count FROM unwind_errors u "
                             "LEFT JOIN binaries b ON b.id = u.binary_id WHERE u.session_id=? "
                             "ORDER BY u.count DESC LIMIT 8", int(sys.argv[5])):
    print(f"dwarf: {count} unwinding failures: {reason} in {path}")
mine_fail = q("SELECT count(*) FROM stacks k JOIN samples s ON s.session_id = k.session_id AND "
              "s.stack_id = k.id WHERE k.session_id=? AND s.pid=? AND k.flags & 1",
              int(sys.argv[5]), int(sys.argv[6]))[0][0]
print(f"dwarf: {mine_fail} of the workload's samples have an incomplete stack")
sid, pid = int(sys.argv[2]), int(sys.argv[3])
stacks, n = check(sid, pid, "fp")
# bytes per sample: the database's growth over the session (its samples,
# stacks, histograms, binaries and processes) per strobe sample, against
# perf.data's size per perf sample; and the payload of the session's
# blocks and frames
dbbytes, psamples = int(sys.argv[7]), int(sys.argv[8])
blk = q("SELECT sum(length(data)) FROM sample_blocks WHERE session_id=?", sid)[0][0]
stk = q("SELECT sum(length(frames)) FROM stacks WHERE session_id=?", sid)[0][0]
nagg = q("SELECT count(*) FROM stack_agg WHERE session_id=?", sid)[0][0]
perf = os.path.getsize(sys.argv[4])
print(f"fp: {n} samples, {len(stacks)} distinct stacks, {nagg} stack_agg rows; database growth "
      f"{dbbytes} bytes, {dbbytes / n:.1f} per sample (payload: blocks {blk / n:.1f}, frames "
      f"{stk / n:.1f}); perf.data {perf} bytes for {psamples} samples, {perf / psamples:.1f} "
      f"per sample")
assert dbbytes / n <= perf / psamples, "strobe's database takes more per sample than perf.data"
PY
ok "stacks stored"
