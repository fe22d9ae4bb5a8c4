#!/bin/sh
# t0445-startup: strobed's start-up does not grow with its database.
# bench/startup.sh times, on a small database (one session) and a large one
# (the same plus 300 synthetic sessions of 2,500 samples: about 60 times
# the file), a plain start and a restart after SIGKILL mid-session (which
# rebuilds that session), until strobed answers, and how long reading the
# whole large file takes here (PRAGMA quick_check).  The bounds come from
# the same run, each from the fastest of 5 runs (a loaded machine's
# medians wander by more than the difference): the large database may cost
# at most half of a whole read more than the small one, for the start and
# for the restart (a start-up that reads the file, as the whole-file check
# at every start did, pays all of it).  The first start after sqlite3 wrote the file checks it
# whole, once, and is not held to this.
. "$(dirname "$0")/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"

BENCH_DIR=$tmp/bench STROBE_BUILD=$build sh "$top/bench/startup.sh" 300 2500 5 >"$tmp/out" 2>&1 ||
	fail "bench/startup.sh: $(tail -n 3 "$tmp/out")"
cat "$tmp/out"
python3 - "$tmp/out" >"$tmp/check" <<'PY'
import re, sys
m = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] in ("start", "restart", "scan", "first"):
        m[f[0]] = {k: float(v) for k, v in (x.split("=") for x in f[1:])}
full = m["scan"]["large_min_ms"] - m["scan"]["small_min_ms"]
small = m["start"]["small_min_ms"]
if full < 2 * small:
    print(f"SKIP reading the large file whole takes {full:.0f} ms here, too little against a "
          f"{small:.0f} ms start to tell")
    sys.exit(77)
for k in ("start", "restart"):
    grow = m[k]["large_min_ms"] - m[k]["small_min_ms"]
    print(f"{k}: {grow:+.1f} ms on the large database; a whole read costs {full:.1f} ms more")
    assert grow <= full / 2, f"{k} takes {grow:.0f} ms longer on the large database, over half of a whole read ({full:.0f} ms)"
PY
rc=$?
cat "$tmp/check"
[ $rc = 77 ] && skip "$(sed -n 's/^SKIP //p' "$tmp/check")"
[ $rc = 0 ] || fail "start-up grows with the database"
ok "start and restart do not read the database whole"
