#!/bin/sh
# t0750-progress: progress meters on stderr when it is a terminal.
# A session of a million samples made by bench/ingestbench (no daemon, no
# perf: its database is strobe's own), then 'strobe export --format csv',
# 'strobe plot --by symbol -o x.csv' and 'strobe report --from/--to' (the
# time range makes it scan the raw samples), each run under a pseudo-
# terminal (script(1), STROBE_PROGRESS_DELAY_MS=0) and without one:
#   - on the terminal, progress lines "strobe CMD: N% D of T samples, ..."
#     redrawn with \r, their percentages non-decreasing, T the samples the
#     command reads, and the line erased (\r ESC[K) at the end
#   - the file or stdout written is byte for byte the one written without
#     a terminal, and stdout holds no \r (the meter is on stderr only)
#   - without a terminal, stderr stays empty
#   - STROBE_PROGRESS=0, or a delay the command does not outlast, draws
#     nothing on the terminal
#   - a session whose samples SQLite sorts (late_samples): the meter of
#     the blocks read, then of the sorted rows; the same file
. "${STROBE_TOP:-$(dirname "$0")/..}/tests/lib.sh"

N=1000000
command -v script >/dev/null 2>&1 || skip "script(1) from util-linux is missing: no pseudo-terminal to run under"
script -qec true /dev/null >/dev/null 2>&1 || skip "script(1) cannot open a pseudo-terminal here"
[ -x "$build/bench/ingestbench" ] || fail "bench/ingestbench is not built"
"$build/bench/ingestbench" -n $N -k "$tmp/big.db" >"$tmp/ingest.log" 2>&1 ||
	{ cat "$tmp/ingest.log"; fail "ingestbench could not make a session"; }
export STROBE_DB=$tmp/big.db
unset STROBE_PROGRESS STROBE_PROGRESS_DELAY_MS

# on_tty NAME ENV... -- CMD...: CMD (stdout to $tmp/NAME.out) with ENV
# under a pseudo-terminal; what the terminal showed in $tmp/NAME.tty
on_tty() {
	name=$1
	shift
	envs=
	while [ "$1" != -- ]; do
		envs="$envs $1"
		shift
	done
	shift
	cmd=
	for a in "$@"; do
		cmd="$cmd '$a'"
	done
	script -qec "env $envs $cmd >'$tmp/$name.out'" /dev/null >"$tmp/$name.tty" 2>&1 </dev/null
}

# check_meter NAME LABEL TOTAL: the terminal output of NAME has progress
# lines of LABEL with non-decreasing percentages against a total TOTAL
# (as the meter prints it), and ends erased
check_meter() {
	python3 - "$tmp/$1.tty" "$2" "$3" <<'PY' || fail "$1: the terminal output is not a progress meter (above)"
import re, sys
data = open(sys.argv[1], 'rb').read().decode('utf-8', 'replace')
label, total = sys.argv[2], sys.argv[3]
pat = re.compile(r'^' + re.escape(label) + r': (\d+)% \S+(?: \w)? of (\S+ ?\w?) samples, [0-9.]+ s')
pcts, totals = [], set()
for chunk in data.split('\r'):
    chunk = chunk.replace('\x1b[K', '').strip()
    m = pat.match(chunk)
    if m:
        pcts.append(int(m.group(1)))
        totals.add(m.group(2))
    elif chunk:
        print('unexpected on the terminal: %r' % chunk)
        sys.exit(1)
if not pcts:
    print('no progress line of %r in %r' % (label, data[:300]))
    sys.exit(1)
if pcts != sorted(pcts) or pcts[-1] > 100:
    print('percentages not non-decreasing up to 100: %s' % pcts)
    sys.exit(1)
if totals != {total}:
    print('totals %s, expected %s' % (sorted(totals), total))
    sys.exit(1)
# the last thing written: the erase of the line
if not data.replace('\n', '').endswith('\r\x1b[K'):
    print('the line is not erased at the end: %r' % data[-40:])
    sys.exit(1)
print('%d progress lines of %s, %s' % (len(pcts), label, pcts))
PY
}

# --- export --format csv ---
on_tty exp STROBE_PROGRESS_DELAY_MS=0 -- "$STROBE" export --format csv -o "$tmp/f1.csv" ||
	{ cat "$tmp/exp.tty"; fail "export on a terminal failed"; }
check_meter exp "strobe export" "1.0 M"
"$STROBE" export --format csv -o "$tmp/f2.csv" 2>"$tmp/exp2.err" || fail "export failed"
[ -s "$tmp/exp2.err" ] && { cat "$tmp/exp2.err"; fail "export without a terminal wrote on stderr"; }
[ "$(($(wc -l <"$tmp/f2.csv") - 1))" = $N ] || fail "export wrote $(wc -l <"$tmp/f2.csv") lines for $N samples"
cmp -s "$tmp/f1.csv" "$tmp/f2.csv" || fail "the export under a terminal differs from the one without"
ok "export: progress on the terminal, the same file as without one, nothing on stderr without one"

# STROBE_PROGRESS=0, and a delay longer than the export: nothing drawn
on_tty off STROBE_PROGRESS=0 STROBE_PROGRESS_DELAY_MS=0 -- "$STROBE" export --format csv -o "$tmp/f3.csv" ||
	fail "export with STROBE_PROGRESS=0 failed"
[ -s "$tmp/off.tty" ] && { cat -v "$tmp/off.tty"; fail "STROBE_PROGRESS=0 still drew on the terminal"; }
cmp -s "$tmp/f3.csv" "$tmp/f2.csv" || fail "the export with STROBE_PROGRESS=0 differs"
on_tty late STROBE_PROGRESS_DELAY_MS=600000 -- "$STROBE" export --format csv -o "$tmp/f4.csv" ||
	fail "export with a long delay failed"
[ -s "$tmp/late.tty" ] && { cat -v "$tmp/late.tty"; fail "an export shorter than the delay drew on the terminal"; }
ok "STROBE_PROGRESS=0, and an export shorter than the delay: nothing drawn"

# an export to stdout on the terminal: no meter mixed into it
script -qec "env STROBE_PROGRESS_DELAY_MS=0 '$STROBE' export --format csv --to 1" /dev/null \
	>"$tmp/stdout.tty" 2>&1 </dev/null || fail "export to the terminal failed"
grep -q "strobe export:" "$tmp/stdout.tty" && fail "a meter was drawn over an export to the terminal"
ok "an export to the terminal itself draws no meter"

# --- a session with samples stored late: SQLite sorts them by time ---
# the meter counts the blocks read for the sort, then the sorted rows
# (ingestbench's times grow with the rowids: the same rows, in the same
# order; the session is marked so in place, where its binary cache is)
sqlite3 "$tmp/big.db" "UPDATE sessions SET late_samples = 1" || fail "cannot mark the session late"
on_tty sorted STROBE_PROGRESS_DELAY_MS=0 -- "$STROBE" export --format csv -o "$tmp/l1.csv" ||
	{ cat "$tmp/sorted.tty"; fail "export of the late session on a terminal failed"; }
sqlite3 "$tmp/big.db" "UPDATE sessions SET late_samples = 0" || fail "cannot unmark the session"
cmp -s "$tmp/l1.csv" "$tmp/f2.csv" || fail "the export sorted by SQLite differs from the one in rowid order"
python3 - "$tmp/sorted.tty" <<'PY' || fail "the sorted export's meter is wrong (above)"
import re, sys
data = open(sys.argv[1], 'rb').read().decode('utf-8', 'replace')
phases = []
for chunk in data.split('\r'):
    chunk = chunk.replace('\x1b[K', '').strip()
    if not chunk:
        continue
    m = re.match(r'strobe export: (\d+)% \S+(?: \w)? of 1\.0 M (samples|sorted samples), ', chunk)
    if not m:
        print('unexpected on the terminal: %r' % chunk)
        sys.exit(1)
    phases.append((m.group(2) == 'sorted samples', int(m.group(1))))
# the reading, then the sorted rows, each with non-decreasing percentages
if not phases or phases != sorted(phases) or not phases[-1][0]:
    print('phases and percentages: %s' % phases)
    sys.exit(1)
if not data.replace('\n', '').endswith('\r\x1b[K'):
    print('the line is not erased at the end')
    sys.exit(1)
print('%d progress lines: %s' % (len(phases), phases))
PY
ok "a session sorted by SQLite: its reading, then its sorted rows on the meter; the same file"

# --- plot --by symbol (raw scans) ---
on_tty plot STROBE_PROGRESS_DELAY_MS=0 -- "$STROBE" plot --event cycles --by symbol -o "$tmp/p1.csv" ||
	{ cat "$tmp/plot.tty"; fail "plot on a terminal failed"; }
check_meter plot "strobe plot" "1.0 M"
"$STROBE" plot --event cycles --by symbol -o "$tmp/p2.csv" 2>"$tmp/plot2.err" || fail "plot failed"
[ -s "$tmp/plot2.err" ] && { cat "$tmp/plot2.err"; fail "plot without a terminal wrote on stderr"; }
cmp -s "$tmp/p1.csv" "$tmp/p2.csv" || fail "the plot CSV under a terminal differs from the one without"
ok "plot: progress on the terminal, the same CSV, nothing on stderr without one"

# --- report over a time range (raw samples) ---
# ingestbench's samples span 75 s: 10..60 s holds about two thirds
on_tty rep STROBE_PROGRESS_DELAY_MS=0 -- "$STROBE" report --from 10 --to 60 ||
	{ cat "$tmp/rep.tty"; fail "report on a terminal failed"; }
"$STROBE" report --from 10 --to 60 >"$tmp/rep2.out" 2>"$tmp/rep2.err" || fail "report failed"
[ -s "$tmp/rep2.err" ] && { cat "$tmp/rep2.err"; fail "report without a terminal wrote on stderr"; }
# the samples of 10..60 s, counted through SQL: the meter's total is the
# rows of the blocks that overlap the range, at most two blocks more
start=$(sqlite3 "$tmp/big.db" "SELECT start_ns FROM sessions")
inrange=$(sqlq "$tmp/big.db" "SELECT count(*) FROM samples WHERE time_ns BETWEEN $start + 10000000000 AND $start + 60000000000")
python3 - "$tmp/rep.tty" "$inrange" <<'PY' || fail "report: no meter of its scan of samples on the terminal (above)"
import re, sys
data = open(sys.argv[1], 'rb').read().decode('utf-8', 'replace')
inrange = int(sys.argv[2])
mult = {'': 1, 'k': 1e3, 'M': 1e6}
pcts, totals = [], set()
for chunk in data.split('\r'):
    chunk = chunk.replace('\x1b[K', '').strip()
    m = re.match(r'strobe report: (\d+)% \S+(?: \w)? of ([0-9.]+) ?([kM]?) samples, ', chunk)
    if m:
        pcts.append(int(m.group(1)))
        totals.add(float(m.group(2)) * mult[m.group(3)])
    elif chunk and not re.match(r'strobe report: \d+% .* locations named, ', chunk):
        print('unexpected on the terminal: %r' % chunk)
        sys.exit(1)
if not pcts or pcts != sorted(pcts) or len(totals) != 1:
    print('report lines: %s of %s' % (pcts, totals))
    sys.exit(1)
total = totals.pop()
if not inrange - 1000 <= total <= inrange + 2 * 4096 + 1000:
    print('the meter counts %d samples, %d are in the range' % (total, inrange))
    sys.exit(1)
if not data.replace('\n', '').endswith('\r\x1b[K'):
    print('the line is not erased at the end: %r' % data[-40:])
    sys.exit(1)
print('%d progress lines of strobe report, %s, of %d (%d samples in the range)' %
      (len(pcts), pcts, total, inrange))
PY
# its stdout: the report alone, as without a terminal
grep -q "$(printf '\r')" "$tmp/rep.out" && fail "the report on stdout has a carriage return in it"
grep -q "strobe report:" "$tmp/rep.out" && fail "the meter went to stdout"
cmp -s "$tmp/rep.out" "$tmp/rep2.out" || { diff "$tmp/rep.out" "$tmp/rep2.out" | head; fail "the report under a terminal differs"; }
[ -s "$tmp/rep.out" ] || fail "the report is empty"
ok "report --from/--to: progress on stderr, the same stdout, with no carriage return, as without a terminal"
exit 0
