#!/bin/sh
# t0171-window-filters: a time window read from the raw samples, with every
# filter, selects exactly the samples the database holds for it.  A window
# that is not the whole session decodes the sample blocks in C (report's and
# the stacks' readers, samplescan.h) rather than through SQL's samples
# table; this checks that reader's filters (--pid, --comm, --binary,
# --kernel, --user, and their mix) against SQL over the same database
# (strobedb, the samples virtual table): the report's samples and
# page-faults totals, and the folded export's samples, for three windows.
. "$(dirname "$0")/lib.sh"
need_root

# wsplit, a copy of split603010 with a build-id of its own, beside kernwork
unique_copy "$WL/split603010" "$tmp/wsplit" >/dev/null || fail "copying split603010"
"$STROBE" record --sample-event cpu-clock -F 1000 -e page-faults --call-graph fp \
	--name wfilters -- sh -c "\"$tmp/wsplit\" 2 & echo \$! >\"$tmp/s.pid\"; \
\"$WL/kernwork\" 2 & echo \$! >\"$tmp/k.pid\"; wait" \
	2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
spid=$(cat "$tmp/s.pid") kpid=$(cat "$tmp/k.pid")

# the windows (ns since the start): the first third, the middle half, the
# last third of the session's samples
python3 - "$STROBE_DB" >"$tmp/windows" <<'PY' || fail "reading the session"
import strobedb, sys
db = strobedb.connect(sys.argv[1])
sid, start = db.execute("SELECT id, start_ns FROM sessions ORDER BY id DESC LIMIT 1").fetchone()
lo, hi = db.execute("SELECT min(time_ns), max(time_ns) FROM samples WHERE session_id=?",
                    (sid,)).fetchone()
d = hi - start
for a, b in ((0, d // 3), (d // 4, 3 * d // 4), (2 * d // 3, d - d // 50)):
    print(a, b)
PY

# truth FROM TO COND: samples, their page-faults, those with a stack
truth() {
	python3 - "$STROBE_DB" "$1" "$2" "$3" <<'PY'
import strobedb, sys
db = strobedb.connect(sys.argv[1])
sid, start = db.execute("SELECT id, start_ns FROM sessions ORDER BY id DESC LIMIT 1").fetchone()
pf, = db.execute("SELECT idx FROM session_events WHERE session_id=? AND name='page-faults'",
                 (sid,)).fetchone()
cond = sys.argv[4]
n, c, st = db.execute(
    f"SELECT count(*), coalesce(sum(c{pf}), 0), count(stack_id) FROM samples s "
    f"WHERE s.session_id=? AND time_ns BETWEEN ? AND ? {cond}",
    (sid, start + int(sys.argv[2]), start + int(sys.argv[3]))).fetchone()
print(n, c, st)
PY
}

# got FROM TO FILTERS...: the report's samples and page-faults totals, and
# the folded export's samples (export takes --pid and --comm only: with
# others, $fold is 0 and the stacks are counted by 'strobe flamegraph')
got() {
	a=$1 b=$2
	shift 2
	"$STROBE" report --format csv --limit 0 --from "${a}ns" --to "${b}ns" "$@" \
		>"$tmp/r.csv" 2>"$tmp/r.err" || { echo "report: $(cat "$tmp/r.err")"; return 1; }
	if [ "$fold" = 1 ]; then
		"$STROBE" export --format folded --from "${a}ns" --to "${b}ns" "$@" \
			>"$tmp/f.txt" 2>"$tmp/f.err" || { echo "export: $(cat "$tmp/f.err")"; return 1; }
	else
		"$STROBE" flamegraph --samples -o "$tmp/f.svg" --from "${a}ns" --to "${b}ns" "$@" \
			>/dev/null 2>"$tmp/f.err" || { echo "flamegraph: $(cat "$tmp/f.err")"; return 1; }
		# its root frame: "all (N samples, ...)"
		sed -n 's/.*>all (\([0-9]*\) samples.*/x \1/p' "$tmp/f.svg" | head -n 1 >"$tmp/f.txt"
	fi
	python3 - "$tmp/r.csv" "$tmp/f.txt" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
n = sum(int(r["samples"]) for r in rows)
c = sum(int(r["page-faults"]) for r in rows)
f = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]) if l.strip())
print(n, c, f)
PY
}

comm="AND comm_id IN (SELECT id FROM comms WHERE name='%s')"
bin="AND binary_id IN (SELECT id FROM binaries WHERE path LIKE '%%/wsplit')"
nonzero=0
while read -r a b; do
	for case in "none" "pid" "comm" "kcomm" "kernel" "user" "binary" "kpid-kernel" \
		    "comm-user"; do
		fold=0
		case $case in
		none)	set -- ; cond="" fold=1 ;;
		pid)	set -- --pid "$spid"; cond="AND pid=$spid" fold=1 ;;
		comm)	set -- --comm wsplit; cond=$(printf "$comm" wsplit) fold=1 ;;
		kcomm)	set -- --comm kernwork; cond=$(printf "$comm" kernwork) fold=1 ;;
		kernel)	set -- --kernel; cond="AND (flags & 2) != 0" ;;
		user)	set -- --user; cond="AND (flags & 1) != 0" ;;
		binary)	set -- --binary wsplit; cond=$(printf "$bin") ;;
		kpid-kernel) set -- --pid "$kpid" --kernel; cond="AND pid=$kpid AND (flags & 2) != 0" ;;
		comm-user) set -- --comm wsplit --user; cond="$(printf "$comm" wsplit) AND (flags & 1) != 0" ;;
		esac
		want=$(truth "$a" "$b" "$cond") || fail "truth $a..$b $case"
		have=$(got "$a" "$b" "$@") || fail "$a..$b $case: $have"
		[ "$have" = "$want" ] ||
			fail "window ${a}ns..${b}ns, $case: report, page-faults, folded $have; the database $want"
		[ "${want%% *}" -gt 0 ] && nonzero=$((nonzero + 1))
	done
done <"$tmp/windows"
# each filter selects something in some window, or the check proves little
[ "$nonzero" -ge 20 ] || fail "only $nonzero of 27 window-filter cases had samples"
ok "windows x filters equal the database ($nonzero cases with samples)"
