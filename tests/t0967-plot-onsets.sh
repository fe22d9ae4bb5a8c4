#!/bin/sh
# t0967-plot-onsets: 'strobe plot --onsets' draws exactly the change points
# 'strobe onsets' reports for the same options.  On a session of
# tests/workloads/phases (CPU duty 30, 90, 50, 100 %, as t0960 records it),
# the gnuplot script that plot hands gnuplot (kept by a STROBE_GNUPLOT
# wrapper) carries, per change point of 'strobe onsets --format csv': its
# time_ns (equal), an arrow and a label at that time's x, the label its
# shift ("%+.0f%%" of shift), the levels before and after (scaled from
# the onsets' bucket to the plot's for an event), in its line's
# linetype (the line of its series' title in the plot command):
#  - at onsets' default bucket (finer than the plot's), and at --bucket;
#  - --onsets-min-shift X as onsets --min-shift X (fewer of them);
#  - --by pid --top 2: each line's change points in that line's colour;
# without --onsets the script has none of these lines, and --onsets only
# adds lines; the CSV is the same with it (and a note says so); the SVG
# shows the labels; bad options are refused in one line.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$WL/phases" ] || skip "tests/workloads/phases is not built"
command -v gnuplot >/dev/null || skip "gnuplot is not installed (apt-get install gnuplot-nox)"

"$STROBE" record -F 2000 --name phases -- sh -c "\"$WL/phases\" 30:1.5 90:1.5 50:1.5 100:1.5 \
>\"$tmp/truth\" & echo \$! >\"$tmp/pid\"; wait" 2>"$tmp/record.err" ||
	fail "record: $(cat "$tmp/record.err")"
pid=$(cat "$tmp/pid")
start=$(python3 - "$STROBE_DB" <<'PY'
import strobedb, sys
db = strobedb.connect(sys.argv[1])
print(db.execute("SELECT start_ns FROM sessions ORDER BY id DESC LIMIT 1").fetchone()[0])
PY
) || fail "reading the session's start"
# the workload's window, as t0960 takes it (less its first quarter second)
from=$(($(sed -n 's/^phase 0 duty .* start_ns //p' "$tmp/truth") - start + 250000000))
to=$(($(sed -n 's/^end_ns //p' "$tmp/truth") - start))
W="--from ${from}ns --to ${to}ns"

# a gnuplot that keeps the script, then runs the real one
cat >"$tmp/gp" <<GP
#!/bin/sh
cp "\$1" "$tmp/saved.gp"
exec gnuplot "\$1"
GP
chmod +x "$tmp/gp"
export STROBE_GNUPLOT="$tmp/gp"

# check NAME ONSETS-ARGS -- PLOT-ARGS: plot --term with PLOT-ARGS (and
# --data, for its bucket) against onsets --format csv with ONSETS-ARGS;
# at least $2 change points (else the check says nothing)
check() {
	name=$1 least=$2
	shift 2
	oargs=
	while [ "$1" != -- ]; do oargs="$oargs $1"; shift; done
	shift
	# shellcheck disable=SC2086
	"$STROBE" onsets $oargs --format csv >"$tmp/$name.on.csv" 2>"$tmp/$name.on.err" ||
		fail "$name: onsets$oargs: $(cat "$tmp/$name.on.err")"
	# shellcheck disable=SC2086
	"$STROBE" onsets $oargs --format json >"$tmp/$name.on.json" 2>/dev/null ||
		fail "$name: onsets$oargs --format json"
	rm -f "$tmp/saved.gp"
	"$STROBE" plot "$@" --term --data "$tmp/$name.data.csv" >"$tmp/$name.term" \
		2>"$tmp/$name.err" || fail "$name: plot $*: $(cat "$tmp/$name.err")"
	[ -s "$tmp/$name.err" ] && fail "$name: plot $* wrote to stderr: $(cat "$tmp/$name.err")"
	cp "$tmp/saved.gp" "$tmp/$name.gp"
	python3 - "$tmp/$name.on.csv" "$tmp/$name.on.json" "$tmp/$name.gp" \
		"$tmp/$name.data.csv" "$start" "$least" <<'PY' || fail "$name: the plot's onsets are not strobe onsets'"
import csv, json, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
obucket = json.load(open(sys.argv[2]))["meta"]["bucket_ns"]
gp = open(sys.argv[3]).read().splitlines()
data = list(csv.DictReader(open(sys.argv[4])))
start, least = int(sys.argv[5]), int(sys.argv[6])
pbucket = int(data[0]["to_ns"]) - int(data[0]["from_ns"])
scale = pbucket / obucket

# the plot command's titles, in order: line i is linetype i + 1
titles = []
for l in gp:
    m = re.search(r"using 1:(\d+) with steps lw 1.5 title '((?:[^']|'\.\"'\"\.')*)'", l)
    if m:
        titles.append(m.group(2).replace("'.\"'\".'", "'"))
assert titles, "no plot command"

def near(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))

drawn = []
for i, l in enumerate(gp):
    m = re.match(r"# onset line (\d+) time_ns (\d+) before (\S+) after (\S+)$", l)
    if not m:
        continue
    line, t, before, after = int(m.group(1)), int(m.group(2)), float(m.group(3)), float(m.group(4))
    x = (t - start) / 1e9
    lt = f"lt {line + 1}"
    # what follows it up to the next onset: its lines and its label
    block = []
    for l2 in gp[i + 1:]:
        if l2.startswith("# onset") or l2.startswith("plot "):
            break
        block.append(l2)
    arrow = [b for b in block if b.startswith("set arrow") and " head " in b]
    label = [b for b in block if b.startswith("set label")]
    assert len(label) == 1, f"onset at {t}: labels {label}"
    ml = re.match(r"set label '([^']*)' at ([0-9.e+-]+), first ([0-9.e+-]+) ", label[0])
    assert ml and abs(float(ml.group(2)) - x) < 2e-9, f"onset at {t}: label at the wrong x: {label[0]}"
    assert near(float(ml.group(3)), after), label[0]
    assert lt in label[0], f"onset at {t} of line {line}: label not in {lt}: {label[0]}"
    for b in block:
        assert b.startswith("set ") and lt in b, f"onset at {t}: not in the line's colour {lt}: {b}"
    if before != after:
        ma = re.match(r"set arrow from ([0-9.e+-]+), first ([0-9.e+-]+) to ([0-9.e+-]+), first ([0-9.e+-]+) head", arrow[0])
        assert ma and abs(float(ma.group(1)) - x) < 2e-9 and abs(float(ma.group(3)) - x) < 2e-9, arrow
        assert near(float(ma.group(2)), before) and near(float(ma.group(4)), after), arrow
    segs = [b for b in block if "nohead front" in b and "first" in b]
    ys = sorted(float(y) for b in segs for y in re.findall(r"first ([0-9.e+-]+)", b))
    assert len(segs) == 2 and near(ys[0], min(before, after)) and near(ys[-1], max(before, after)), segs
    drawn.append((titles[line], t, ml.group(1), before, after))

want = []
for r in rows:
    s = r["shift"]
    text = f"{float(s) * 100:+.0f}%" if s else "from 0"
    want.append((r["series"], int(r["time_ns"]), text, float(r["before"]) * scale,
                 float(r["after"]) * scale))
print(f"{len(want)} onsets at {obucket / 1e6:g} ms buckets, plot at {pbucket / 1e6:g} ms:",
      [(w[0], w[1], w[2]) for w in want])
assert len(want) >= least, f"only {len(want)} change points: the check says little"
key = lambda w: (w[0], w[1])
drawn.sort(key=key)
want.sort(key=key)
assert [key(d) for d in drawn] == [key(w) for w in want], \
    f"times differ:\n plot:   {[key(d) for d in drawn]}\n onsets: {[key(w) for w in want]}"
for d, w in zip(drawn, want):
    assert d[2] == w[2], f"{key(d)}: label {d[2]}, onsets' shift says {w[2]}"
    assert near(d[3], w[3]) and near(d[4], w[4]), f"{key(d)}: levels {d[3:]} not {w[3:]}"
keys = [l for l in gp if "keyentry with vectors" in l]
assert len(keys) == 1 and f"{len(want)} onset" in keys[0] and \
    f"at {obucket / 1e6:g} ms buckets" in keys[0], keys
PY
}

# onsets' default bucket: finer than the plot's ~500 buckets
check default 3 --event samples --pid "$pid" $W -- --event samples --pid "$pid" $W --onsets
grep -q "(strobe onsets at 10 ms buckets)\|(strobe onsets at [0-9.]* ms buckets)" "$tmp/default.gp" ||
	fail "no key entry with the onsets' bucket"
ok "--onsets at onsets' default bucket: the times, shifts and levels of strobe onsets"
check bucket 3 --event samples --pid "$pid" $W --bucket 40 -- \
	--event samples --pid "$pid" $W --bucket 40 --onsets
ok "--onsets --bucket 40: as strobe onsets --bucket 40"
# X: the first of a few that leaves strobe onsets fewer changes than at
# --bucket 40 alone (how many a shift merges depends on what the machine
# did to the workload, and merging happens before ramps are joined), so
# that the plot's drawing them all would show
nb=$(wc -l <"$tmp/bucket.on.csv")
X=
for x in 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9; do
	n=$("$STROBE" onsets --event samples --pid "$pid" $W --bucket 40 --min-shift $x --format csv |
		wc -l) || fail "onsets --min-shift $x"
	[ "$n" -lt "$nb" ] && { X=$x; break; }
done
[ -n "$X" ] || fail "no --min-shift up to 0.9 merged a change away: $(cat "$tmp/bucket.on.csv")"
check minshift 0 --event samples --pid "$pid" $W --bucket 40 --min-shift "$X" -- \
	--event samples --pid "$pid" $W --bucket 40 --onsets-min-shift "$X"
[ "$(grep -c '^# onset ' "$tmp/minshift.gp")" -lt "$(grep -c '^# onset ' "$tmp/bucket.gp")" ] ||
	fail "--onsets-min-shift $X merged no change away"
ok "--onsets-min-shift $X: as strobe onsets --min-shift $X, fewer changes"
check bypid 3 --event samples --by pid --top 2 $W --bucket 40 -- \
	--event samples --by pid --top 2 $W --bucket 40 --onsets
[ "$(grep -c 'with steps lw 1.5' "$tmp/bypid.gp")" -ge 2 ] || fail "--by pid --top 2: one line only"
ok "--by pid --top 2: each line's change points in its colour"

# without --onsets: none of it, and --onsets only adds lines
"$STROBE" plot --event samples --pid "$pid" $W --bucket 40 --term --data "$tmp/plain.csv" \
	>/dev/null 2>"$tmp/err" || fail "plot: $(cat "$tmp/err")"
grep -q "onset" "$tmp/saved.gp" && fail "a plot without --onsets has onsets: $(grep onset "$tmp/saved.gp")"
python3 - "$tmp/saved.gp" "$tmp/bucket.gp" <<'PY' || fail "--onsets changed more than its own lines"
import difflib, sys
keep = lambda l: not l.startswith("set output ")
norm = lambda l: l[:-3] if l.endswith(", \\") else l
a = [norm(l) for l in open(sys.argv[1]).read().splitlines() if keep(l)]
b = [norm(l) for l in open(sys.argv[2]).read().splitlines() if keep(l)]
ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
assert all(op in ("equal", "insert") for op, *_ in ops), "\n".join(difflib.unified_diff(a, b, lineterm=""))
PY
cmp -s "$tmp/plain.csv" "$tmp/bucket.data.csv" || fail "--data differs with --onsets"
ok "without --onsets no onset is drawn; --onsets only adds lines"

# the CSV: the same, and a note
"$STROBE" plot --event samples --pid "$pid" $W -o "$tmp/a.csv" 2>"$tmp/err" || fail "plot -o csv"
"$STROBE" plot --event samples --pid "$pid" $W -o "$tmp/b.csv" --onsets 2>"$tmp/err2" ||
	fail "plot -o csv --onsets: $(cat "$tmp/err2")"
cmp -s "$tmp/a.csv" "$tmp/b.csv" || fail "the CSV differs with --onsets"
grep -q "note: --onsets draws on a plot only" "$tmp/err2" || fail "no note: $(cat "$tmp/err2")"
ok "CSV: the same with --onsets, and a note says so"

# the real gnuplot draws the labels
"$STROBE" plot --event samples --pid "$pid" $W --bucket 40 --onsets -o "$tmp/o.svg" 2>"$tmp/err" ||
	fail "plot --onsets -o svg: $(cat "$tmp/err")"
lab=$(sed -n "s/^set label '\([^']*\)' at .*/\1/p" "$tmp/saved.gp" | head -n 1)
[ -n "$lab" ] && grep -qF ">$lab<" "$tmp/o.svg" || fail "the SVG has no label '$lab'"
ok "the SVG shows the shift labels ($lab)"

# bad options: one line, exit 2
refused 2 plot "bad --onsets-min-shift 'x'" "$STROBE" plot --event samples --onsets-min-shift x --term
refused 2 plot "bad --onsets-min-shift '-0.5'" "$STROBE" plot --event samples --onsets-min-shift -0.5 --term
refused 2 plot "--onsets is not supported with --source" \
	"$STROBE" plot --source 'http://127.0.0.1:1/?database=strobe' --event samples --onsets --term
refused 2 plot "--onsets and --where exclude each other" \
	"$STROBE" plot --event samples --onsets --where 'samples > 1' --term
refused 2 onsets "bad --min-shift 'y'" "$STROBE" onsets --event samples --min-shift y
ok "bad options refused with one line"
