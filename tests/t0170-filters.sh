#!/bin/sh
# t0170-filters: the report filters and groupings on one session running two
# workloads at once (fsplit, a copy of split603010, in user space; kernwork
# in the kernel): --pid and --comm select exactly their process's samples
# (checked against the database), --binary by path or file name,
# --kernel/--user split the samples by mode, --from/--to select by time (up
# to the half of the session: exactly the samples the database has up to
# then; a window after the end is empty), --limit, --by binary/symbol/line (work60 at
# split603010.c:<its line>), and JSON.
. "$(dirname "$0")/lib.sh"
need_root


# A copy of split603010 named fsplit with a build-id of its own: its comm,
# path, file name and cache entry are this test's alone, whatever else runs.
fbid=$(unique_copy "$WL/split603010" "$tmp/fsplit") || fail "copying split603010"

"$STROBE" record --sample-event cpu-clock -F 1000 -e page-faults --name filters \
	-- sh -c "\"$tmp/fsplit\" 2 & echo \$! >\"$tmp/s.pid\"; \"$WL/kernwork\" 2 & echo \$! >\"$tmp/k.pid\"; wait" \
	2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
grep -q "samples, 0 lost" "$tmp/record.err" || fail "record summary: $(cat "$tmp/record.err")"
spid=$(cat "$tmp/s.pid") kpid=$(cat "$tmp/k.pid")

R() { "$STROBE" report --format csv "$@"; }
# total FILE: the sum of the samples column
total() { python3 -c 'import csv,sys; print(sum(int(r["samples"]) for r in csv.DictReader(open(sys.argv[1]))))' "$1"; }
# rows FILE: the number of rows
rows() { python3 -c 'import csv,sys; print(len(list(csv.DictReader(open(sys.argv[1])))))' "$1"; }

R >"$tmp/all.csv" || fail "report"
R --by binary >"$tmp/bin.csv" || fail "report --by binary"
all=$(total "$tmp/all.csv")
[ "$all" -ge 1000 ] || fail "only $all samples"

# --- the truth from the database: samples per comm (any process: the
# machine may run others of the same name) and per pid (ours)
python3 - "$STROBE_DB" "$spid" "$kpid" >"$tmp/db" <<'PY' || fail "reading the database"
import strobedb, sys
db = strobedb.connect(sys.argv[1])
sid, = db.execute("SELECT max(id) FROM sessions").fetchone()
for comm, pid in (("fsplit", sys.argv[2]), ("kernwork", sys.argv[3])):
    n, = db.execute("SELECT count(*) FROM samples s JOIN comms c ON c.id=s.comm_id "
                    "WHERE s.session_id=? AND c.name=?", (sid, comm)).fetchone()
    np, = db.execute("SELECT count(*) FROM samples s JOIN comms c ON c.id=s.comm_id "
                     "WHERE s.session_id=? AND pid=? AND c.name=?", (sid, int(pid), comm)).fetchone()
    na, = db.execute("SELECT count(*) FROM samples WHERE session_id=? AND pid=?",
                     (sid, int(pid))).fetchone()
    print(n, np, na)
PY
{ read -r sn spn span; read -r kn kpn kpan; } <"$tmp/db"
echo "fsplit: pid $spid: $spn samples ($sn for the comm); kernwork: pid $kpid: $kpn ($kn); all: $all"
# a floor for the checks' statistics, not a share of the CPUs (which other
# load decides): 2 s at 1 kHz give some 2000 each on an idle machine
[ "$spn" -ge 100 ] && [ "$kpn" -ge 100 ] || fail "too few samples: fsplit $spn, kernwork $kpn"

# --- --comm: exactly the samples of that comm, of the right kind
R --comm fsplit >"$tmp/cs.csv" || fail "--comm fsplit"
R --comm kernwork >"$tmp/ck.csv" || fail "--comm kernwork"
[ "$(total "$tmp/cs.csv")" -eq "$sn" ] || fail "--comm fsplit: $(total "$tmp/cs.csv") samples, database has $sn"
[ "$(total "$tmp/ck.csv")" -eq "$kn" ] || fail "--comm kernwork: $(total "$tmp/ck.csv") samples, database has $kn"
python3 - "$tmp/cs.csv" "$tmp/ck.csv" <<'PY' || fail "--comm selects the wrong samples"
import csv, sys
cs = list(csv.DictReader(open(sys.argv[1])))
ck = list(csv.DictReader(open(sys.argv[2])))
assert cs[0]["symbol"] == "work60", f"top of fsplit is {cs[0]['symbol']}"
assert not any(r["symbol"] == "read_zero" for r in cs), "read_zero under comm fsplit"
assert ck[0]["binary"] == "[kernel.kallsyms]", f"top of kernwork is in {ck[0]['binary']}"
assert not any(r["binary"].endswith("/fsplit") for r in ck), "fsplit under comm kernwork"
PY
R --comm no-such-comm >"$tmp/none.csv" 2>"$tmp/none.err" || fail "--comm no-such-comm exit"
[ "$(rows "$tmp/none.csv")" -eq 0 ] || fail "--comm no-such-comm has rows"
ok "--comm"

# --- --pid: our process's samples; with --comm of another name, none
R --pid "$spid" --comm fsplit >"$tmp/ps.csv" || fail "--pid $spid"
R --pid "$kpid" --comm kernwork >"$tmp/pk.csv" || fail "--pid $kpid"
[ "$(total "$tmp/ps.csv")" -eq "$spn" ] || fail "--pid $spid: $(total "$tmp/ps.csv") samples, database has $spn"
[ "$(total "$tmp/pk.csv")" -eq "$kpn" ] || fail "--pid $kpid: $(total "$tmp/pk.csv") samples, database has $kpn"
python3 - "$tmp/ps.csv" "$tmp/pk.csv" <<'PY' || fail "--pid selects the wrong samples"
import csv, sys
ps = list(csv.DictReader(open(sys.argv[1])))
pk = list(csv.DictReader(open(sys.argv[2])))
assert ps[0]["symbol"] == "work60", f"top of pid fsplit is {ps[0]['symbol']}"
assert not any(r["symbol"] == "read_zero" for r in ps)
assert pk[0]["binary"] == "[kernel.kallsyms]" and pk[0]["symbol"] != "work60"
assert not any(r["binary"].endswith("/fsplit") for r in pk)
PY
R --pid "$spid" >"$tmp/psa.csv" || fail "--pid $spid alone"
[ "$(total "$tmp/psa.csv")" -eq "$span" ] || fail "--pid $spid alone: $(total "$tmp/psa.csv") samples, database has $span"
R --pid "$kpid" >"$tmp/pka.csv" || fail "--pid $kpid alone"
[ "$(total "$tmp/pka.csv")" -eq "$kpan" ] || fail "--pid $kpid alone: $(total "$tmp/pka.csv") samples, database has $kpan"
R --pid "$kpid" --comm fsplit >"$tmp/pkcs.csv" || fail "--pid + --comm"
[ "$(rows "$tmp/pkcs.csv")" -eq 0 ] || fail "--pid of kernwork with --comm fsplit has rows"
ok "--pid"

# --- --binary: by path, by file name, the kernel
R --binary "$tmp/fsplit" >"$tmp/b1.csv" || fail "--binary path"
R --binary fsplit >"$tmp/b2.csv" || fail "--binary name"
R --binary '[kernel.kallsyms]' >"$tmp/bk.csv" || fail "--binary [kernel.kallsyms]"
R --binary /no/such/binary >"$tmp/bn.csv" 2>"$tmp/bn.err" || fail "--binary missing exit"
python3 - "$tmp/bin.csv" "$tmp/b1.csv" "$tmp/b2.csv" "$tmp/bk.csv" "$tmp/bn.csv" "$tmp/fsplit" "$fbid" <<'PY' || fail "--binary"
import csv, sys
bins, b1, b2, bk, bn = (list(csv.DictReader(open(f))) for f in sys.argv[1:6])
path, bid = sys.argv[6], sys.argv[7]
want = {r["binary"]: int(r["samples"]) for r in bins}
assert b1 and all(r["binary"] == path for r in b1), {r["binary"] for r in b1}
assert all(r["build_id"] == bid for r in b1), {r["build_id"] for r in b1}
assert sum(int(r["samples"]) for r in b1) == want[path]
assert b1 == b2, "--binary by name differs from by path"
assert bk and all(r["binary"] == "[kernel.kallsyms]" for r in bk)
assert sum(int(r["samples"]) for r in bk) == want["[kernel.kallsyms]"]
assert not bn, "rows for a binary never seen"
PY
grep -q "no binary" "$tmp/bn.err" || fail "no note for an unknown --binary: $(cat "$tmp/bn.err")"
ok "--binary"

# --- --kernel / --user
R --kernel >"$tmp/k.csv" || fail "--kernel"
R --user >"$tmp/u.csv" || fail "--user"
"$STROBE" report --kernel --user >/dev/null 2>&1 && fail "--kernel --user accepted"
python3 - "$tmp/k.csv" "$tmp/u.csv" "$all" <<'PY' || fail "--kernel/--user"
import csv, sys
k = list(csv.DictReader(open(sys.argv[1])))
u = list(csv.DictReader(open(sys.argv[2])))
kt = sum(int(r["samples"]) for r in k)
ut = sum(int(r["samples"]) for r in u)
print(f"kernel {kt} + user {ut} = {kt + ut} (all {sys.argv[3]})")
assert k and all(r["binary"] == "[kernel.kallsyms]" for r in k), {r["binary"] for r in k}
assert u and not any(r["binary"] == "[kernel.kallsyms]" for r in u)
assert kt + ut == int(sys.argv[3])
assert any(r["symbol"] == "read_zero" for r in k[:3]), "read_zero not among the top kernel rows"
assert any(r["symbol"] == "work60" for r in u[:3]), "work60 not among the top user rows"
PY
ok "--kernel/--user"

# --- --from/--to
dur=$("$STROBE" sessions --format csv | python3 -c 'import csv,sys; print(list(csv.DictReader(sys.stdin))[-1]["duration_s"])')
half=$(python3 -c "print(float('$dur') / 2)")
R --to "${half}s" >"$tmp/t1.csv" || fail "--to"
R --from "${half}s" --to 1000s >"$tmp/t2.csv" || fail "--from/--to"
R --from 0 --to 1000s >"$tmp/tall.csv" || fail "--from 0 --to 1000s"
R --pid "$spid" --comm fsplit --to "${half}s" >"$tmp/t1s.csv" || fail "--pid --comm --to"
python3 - "$tmp/t1.csv" "$tmp/t2.csv" "$all" "$tmp/t1s.csv" "$spn" "$STROBE_DB" "$half" "$spid" \
	<<'PY' || fail "--from/--to halves"
import csv, strobedb, sys
t = lambda f: sum(int(r["samples"]) for r in csv.DictReader(open(f)))
a, b, n = t(sys.argv[1]), t(sys.argv[2]), int(sys.argv[3])
s, sn = t(sys.argv[4]), int(sys.argv[5])
print(f"first half {a} ({100.0 * a / n:.1f}%), second half {b}, all {n}; "
      f"fsplit first half {100.0 * s / sn:.1f}%")
# what the database holds up to the half (a sample within 1 us of it may
# fall either way: the half is given in decimal seconds), for the session
# and for fsplit: exact, whatever share of the CPUs the workloads had
db = strobedb.connect(sys.argv[6])
sid, start = db.execute("SELECT id, start_ns FROM sessions ORDER BY id DESC").fetchone()
bnd = start + round(float(sys.argv[7]) * 1e9)
def upto(t, pid=None):
    q = "SELECT count(*) FROM samples WHERE session_id=? AND time_ns <= ?"
    args = [sid, t]
    if pid is not None:
        q += " AND pid=? AND comm_id IN (SELECT id FROM comms WHERE name='fsplit')"
        args.append(pid)
    return db.execute(q, args).fetchone()[0]
lo, hi = upto(bnd - 1000), upto(bnd + 1000)
assert lo <= a <= hi, f"--to half: {a} samples, the database has {lo}..{hi} up to it"
assert 0 < a < n, f"--to half: {a} of {n}: nothing filtered"
lo, hi = upto(bnd - 1000, int(sys.argv[8])), upto(bnd + 1000, int(sys.argv[8]))
assert lo <= s <= hi, f"--pid --comm --to half: {s} samples, the database has {lo}..{hi} up to it"
assert a + b >= n and a + b <= n + 50, f"halves {a}+{b} do not cover {n}"
PY
# a window over the whole session reads the raw samples: same table as the histogram
cmp -s "$tmp/tall.csv" "$tmp/all.csv" || fail "--from 0 --to 1000s differs from the unfiltered report"
R --from 100s >"$tmp/empty.csv" || fail "--from 100s exit status"
[ "$(rows "$tmp/empty.csv")" -eq 0 ] || fail "--from 100s has rows"
head -n 1 "$tmp/empty.csv" | grep -q '^binary,build_id,symbol,samples' || fail "--from 100s header"
"$STROBE" report --from 2s --to 1s >/dev/null 2>&1 && fail "--from after --to accepted"
ok "--from/--to"

# --- --limit
R --limit 3 >"$tmp/l3.csv" || fail "--limit 3"
[ "$(rows "$tmp/l3.csv")" -eq 3 ] || fail "--limit 3 gives $(rows "$tmp/l3.csv") rows"
head -n 4 "$tmp/all.csv" | cmp -s - "$tmp/l3.csv" || fail "--limit 3 is not the top 3 rows"
R --limit 1 --by binary >"$tmp/l1.csv" || fail "--limit 1"
[ "$(rows "$tmp/l1.csv")" -eq 1 ] || fail "--limit 1 gives $(rows "$tmp/l1.csv") rows"
ok "--limit"

# --- --by binary / symbol / line
R --by symbol >"$tmp/sym.csv" || fail "--by symbol"
cmp -s "$tmp/sym.csv" "$tmp/all.csv" || fail "--by symbol is not the default"
R --by line --pid "$spid" >"$tmp/line.csv" || fail "--by line"
head -n 1 "$tmp/line.csv" | grep -q '^binary,build_id,symbol,source,samples,percent,page-faults' ||
	fail "--by line header: $(head -n 1 "$tmp/line.csv")"
l60=$(grep -n '^DEFINE_WORK(work60)' "$top/tests/workloads/split603010.c" | cut -d: -f1)
python3 - "$tmp/bin.csv" "$tmp/line.csv" "$l60" "$all" "$span" <<'PY' || fail "--by binary/line"
import csv, re, sys
bins = list(csv.DictReader(open(sys.argv[1])))
lines = list(csv.DictReader(open(sys.argv[2])))
l60, n, sn = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
names = [r["binary"] for r in bins]
assert len(names) == len(set(names)), "a binary on two rows in --by binary"
assert all(r["symbol"] == "" for r in bins), "--by binary has symbols"
assert sum(int(r["samples"]) for r in bins) == n, "--by binary total"
assert sum(int(r["samples"]) for r in lines) == sn, "--by line --pid total"
w60 = [r for r in lines if r["symbol"] == "work60"]
assert w60, "no work60 rows by line"
for r in w60:
    m = re.fullmatch(r".*/?split603010\.c:(\d+)", r["source"])
    assert m, f"work60 source is {r['source']!r}"
top = max(w60, key=lambda r: int(r["samples"]))
print(f"work60 at {top['source']} (want line {l60})")
assert int(re.search(r":(\d+)$", top["source"]).group(1)) == l60
PY
ok "--by"

# --- JSON carries the same rows as CSV
"$STROBE" report --pid "$spid" --comm fsplit --format json >"$tmp/r.json" || fail "--format json"
python3 - "$tmp/r.json" "$tmp/ps.csv" "$spn" <<'PY' || fail "JSON"
import csv, json, sys
j = json.load(open(sys.argv[1]))
c = list(csv.DictReader(open(sys.argv[2])))
assert j["meta"]["samples"] == int(sys.argv[3]), j["meta"]
assert len(j["rows"]) == len(c)
for a, b in zip(j["rows"], c):
    assert a["symbol"] == b["symbol"] and a["samples"] == int(b["samples"])
    assert a["page-faults"] == int(b["page-faults"])
PY
ok "all filters"
