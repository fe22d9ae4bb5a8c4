#!/bin/sh
# t0631-plot-expect: 'strobe plot --expect' draws the saved probe's
# expectations.  Under a temporary XDG_CACHE_HOME: without a saved probe it
# refuses in one line; with a probe file written here (dTLB reach 64 pages)
# and a session of 'tlbwalk 58 70' with its tlbwalk:size markers, the
# gnuplot script gets the probe's summary as a key entry and a line labelled "dTLB
# reach 64 pages" at the marker of the 64-page walk (the last within the
# reach); a reach of 60 moves it to the 60-page marker; a reach outside the
# walked sizes draws no line and says so; the script without --expect is
# the script with --expect minus those lines (nothing else changes); the
# saved file read through $HOME/.cache when XDG_CACHE_HOME is unset; a
# symlinked or malformed probe file is refused in one line; the real
# gnuplot draws the label on a terminal plot.
. "$(dirname "$0")/lib.sh"
need_root
command -v gnuplot >/dev/null || skip "gnuplot is not installed (apt-get install gnuplot-nox)"

export XDG_CACHE_HOME="$tmp/xdg"
export HOME="$tmp/home"
mkdir -p "$HOME"
TW=$WL/tlbwalk

refused 1 plot "no probe saved: run 'strobe probe' first \(--expect reads $tmp/xdg/strobe/probe.json\)\$" \
	"$STROBE" plot --event samples --expect --term
ok "no probe saved: one line"

"$STROBE" record --sample-event cpu-clock -F 1000 -e page-faults --name expect \
	--marker "$TW:tlbwalk:size" -- "$TW" 58 70 -P 300 \
	>"$tmp/record.out" 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"

# a probe file as 'strobe probe --format json' writes it
probe_file() { # DIR PAGES
	mkdir -p "$1"
	cat >"$1/probe.json" <<JSON
{"meta":{"cpu":0,"max_size":1048576},
"rows":[
{"kind":"L1d","size_bytes":32768,"line_bytes":64,"ways":8,"latency_ns":1.25,"error_pct":0.5,"pages":null,"check":"agrees","note":""},
{"kind":"L2","size_bytes":327680,"line_bytes":null,"ways":null,"latency_ns":3.7,"error_pct":0.4,"pages":null,"check":"size: sysfs 524288, measured 327680","note":"a \"note\", with commas"},
{"kind":"dTLB","size_bytes":$(($2 * 4096)),"line_bytes":4096,"ways":null,"latency_ns":2.2,"error_pct":0.1,"pages":$2,"check":"","note":""}
]}
JSON
}
probe_file "$XDG_CACHE_HOME/strobe" 64

# a gnuplot that keeps the script, then runs the real one
cat >"$tmp/gp" <<GP
#!/bin/sh
cp "\$1" "$tmp/saved.gp"
exec gnuplot "\$1"
GP
chmod +x "$tmp/gp"
export STROBE_GNUPLOT="$tmp/gp"

# x of a label in the saved script
label_x() {
	python3 - "$tmp/saved.gp" "$1" <<'PY'
import re, sys
for line in open(sys.argv[1]):
    m = re.match(r'set label (["\'])(.*?)\1 at ([0-9.e+-]+),', line)
    if m and m.group(2) == sys.argv[2]:
        print(m.group(3))
        break
PY
}

"$STROBE" plot --event page-faults --term >"$tmp/plain" 2>"$tmp/plain.err" || fail "plot: $(cat "$tmp/plain.err")"
cp "$tmp/saved.gp" "$tmp/plain.gp"
grep -q "probe:" "$tmp/plain.gp" && fail "a plot without --expect has the probe's label"
"$STROBE" plot --event page-faults --term --expect >"$tmp/exp" 2>"$tmp/exp.err" ||
	fail "plot --expect: $(cat "$tmp/exp.err")"
[ -s "$tmp/exp.err" ] && fail "plot --expect wrote to stderr: $(cat "$tmp/exp.err")"
cp "$tmp/saved.gp" "$tmp/exp.gp"
grep -Fq "keyentry with lines  title 'probe: L1d 32 KiB 1.25 ns, L2 320 KiB 3.70 ns, dTLB reach 64 pages'" \
	"$tmp/exp.gp" || fail "no summary key entry: $(grep -A3 '^plot' "$tmp/exp.gp")"
m64=$(label_x "tlbwalk:size 64")
e64=$(label_x "dTLB reach 64 pages")
[ -n "$m64" ] || fail "no marker for the 64-page walk: $(grep label "$tmp/exp.gp" | head -20)"
[ "$m64" = "$e64" ] || fail "the dTLB line is at '$e64', not at the 64-page marker ($m64)"
grep -q "^set arrow from $e64, graph 0 to $e64, graph 1 nohead front" "$tmp/exp.gp" ||
	fail "no line at $e64"
# --expect only adds lines
python3 - "$tmp/plain.gp" "$tmp/exp.gp" <<'PY' || fail "--expect changed more than its own lines"
import sys
# the output goes to each run's own temporary directory; a key entry
# continues the plot command's last line
keep = lambda l: not l.startswith("set output ")
norm = lambda l: l[:-3] if l.endswith(", \\") else l
a = [norm(l) for l in open(sys.argv[1]).read().splitlines() if keep(l)]
b = [norm(l) for l in open(sys.argv[2]).read().splitlines() if keep(l)]
import difflib
ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
assert all(op == "equal" or op == "insert" for op, *_ in ops), \
    "\n".join(difflib.unified_diff(a, b, lineterm=""))
extra = [l for op, i1, i2, j1, j2 in ops if op == "insert" for l in b[j1:j2]]
assert len(extra) == 3, extra       # arrow, label, key entry (no line style on a terminal)
PY
grep -q "dTLB reach 64 pages" "$tmp/exp" || fail "the terminal plot does not show the label"
ok "--expect: summary and the dTLB line at the 64-page walk's marker"

probe_file "$XDG_CACHE_HOME/strobe" 60
"$STROBE" plot --event page-faults -o "$tmp/e.svg" --expect 2>"$tmp/err" || fail "plot --expect svg: $(cat "$tmp/err")"
[ "$(label_x "dTLB reach 60 pages")" = "$(label_x "tlbwalk:size 60")" ] || fail "reach 60: not at the 60-page marker"
grep -q 'set style line 101' "$tmp/saved.gp" || fail "no line style for the SVG"
grep -q 'dTLB reach 60 pages' "$tmp/e.svg" || fail "the SVG has no 'dTLB reach 60 pages'"
probe_file "$XDG_CACHE_HOME/strobe" 2000
"$STROBE" plot --event page-faults --term --expect >/dev/null 2>"$tmp/err" || fail "plot, reach 2000: $(cat "$tmp/err")"
grep -q "note: --expect: no markers of session [0-9]* pass the probe's sizes" "$tmp/err" ||
	fail "no note for a reach beyond the walks: $(cat "$tmp/err")"
grep -q "dTLB reach 2000 pages' at [0-9]" "$tmp/saved.gp" && fail "a line for a reach never passed"
ok "other reaches: the line moves, or a note when no walk passes it"

# ~/.cache without XDG_CACHE_HOME
probe_file "$HOME/.cache/strobe" 62
(unset XDG_CACHE_HOME; "$STROBE" plot --event page-faults --term --expect >/dev/null 2>"$tmp/err") ||
	fail "plot with ~/.cache: $(cat "$tmp/err")"
grep -q "dTLB reach 62 pages" "$tmp/saved.gp" || fail "~/.cache/strobe/probe.json not read"
ok "\$HOME/.cache/strobe/probe.json without XDG_CACHE_HOME"

# refused: a symlink planted at the file, a malformed file
mv "$XDG_CACHE_HOME/strobe/probe.json" "$tmp/other.json"
ln -s "$tmp/other.json" "$XDG_CACHE_HOME/strobe/probe.json"
refused 1 plot "--expect: .*probe.json: .*run 'strobe probe' again" \
	"$STROBE" plot --event page-faults --term --expect
rm "$XDG_CACHE_HOME/strobe/probe.json"
echo '{"rows":[{"kind":"L1d","size_bytes":"x"}' >"$XDG_CACHE_HOME/strobe/probe.json"
refused 1 plot "--expect: .*probe.json: .*run 'strobe probe' again" \
	"$STROBE" plot --event page-faults --term --expect
ok "symlinked or malformed probe file refused in one line"
