# strobed -g with the driver (STROBE_CONFIG_CALLCHAIN), on the known call tree of tests/kernel/callchain.c (--workload: main -> root ->
# outer_a -> leaf for 60% of the work, root -> outer_b -> leaf for 40%,
# frame pointers everywhere): the stacks strobed stores for the workload's
# samples in leaf must have outer_a or outer_b as caller and root above
# it, with the 60/40 split.  --call-graph dwarf with the driver is refused
# with one line that names --backend perf.  BACKENDS="driver perf" runs the
# same checks on the perf backend (not the default yet: it does not request
# PERF_SAMPLE_CALLCHAIN on this branch).  Overridable for a run outside the
# guest: CALLCHAIN (the static binary), SAMPLES_EXT (strobe's sqlite
# extension), BACKENDS.
if [ ! -x /usr/sbin/strobed ] && [ -z "${CALLCHAIN:-}" ]; then
	echo "SKIP strobed-callchain: strobed and its libraries are packed into the x86_64 guest only"
	exit 0
fi
CALLCHAIN=${CALLCHAIN:-/callchain}
SAMPLES_EXT=${SAMPLES_EXT:-/usr/lib/strobe/strobe_samples}
sqlite3() { command sqlite3 -cmd ".load $SAMPLES_EXT" "$@"; }
fails=0
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
pass() { echo "PASS $1"; }

# tree_shares DB PID RANGES: "leaf a b rooted" sample counts of PID's
# stacks: samples whose frame 0 is in leaf, of those with outer_a / outer_b
# as frame 1, and with root as frame 2.  frames: 16 bytes a frame,
# little-endian binary_id then offset (schema/014-stacks.sql).
tree_shares() {
	sqlite3 "$1" "SELECT a.samples, hex(s.frames) FROM stack_agg a JOIN stacks s
		ON s.session_id = a.session_id AND s.id = a.stack_id WHERE a.pid = $2" |
	awk -F'|' -v ranges="$3" '
	function hexval(s,   i, v) {
		v = 0
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789ABCDEF", substr(s, i, 1)) - 1
		return v
	}
	function le(h,   i, v) {	# little-endian hex bytes
		v = 0
		for (i = length(h) - 1; i >= 1; i -= 2)
			v = v * 256 + hexval(substr(h, i, 2))
		return v
	}
	function off(h, k) { return le(substr(h, 32 * k + 17, 16)) }
	function in_(name, o) { return o >= lo[name] && o < hi[name] }
	BEGIN {
		n = split(ranges, r, " ")
		for (i = 1; i + 2 <= n; i += 3) { lo[r[i]] = r[i + 1]; hi[r[i]] = r[i + 2] }
	}
	{
		nf = length($2) / 32
		if (nf < 1 || !in_("leaf", off($2, 0)))
			next
		leaf += $1
		if (nf > 1 && in_("outer_a", off($2, 1))) a += $1
		if (nf > 1 && in_("outer_b", off($2, 1))) b += $1
		if (nf > 2 && (in_("outer_a", off($2, 1)) || in_("outer_b", off($2, 1))) &&
		    in_("root", off($2, 2)))
			rooted += $1
	}
	END { printf "%d %d %d %d\n", leaf, a, b, rooted }'
}

run() {
	b=$1
	export STROBE_DB=/tmp/db/cg-$b.db STROBE_SOCKET=/tmp/cg-$b.sock
	rm -f "$STROBE_DB" "$STROBE_SOCKET"
	strobed --foreground --backend "$b" 2>/tmp/cg-$b.log &
	spid=$!
	i=0
	while [ ! -S "$STROBE_SOCKET" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	if [ "$b" = driver ]; then
		if strobe start --call-graph dwarf --sample-event cpu-clock -F 1000 \
			>/tmp/cg-$b.dwarf 2>&1; then
			fail driver-dwarf-refused "strobe start --call-graph dwarf succeeded"
			strobe stop >/dev/null 2>&1
		elif [ "$(wc -l </tmp/cg-$b.dwarf)" = 1 ] && grep -q -- '--backend perf' /tmp/cg-$b.dwarf; then
			pass driver-dwarf-refused
		else
			fail driver-dwarf-refused "want one line naming --backend perf: $(cat /tmp/cg-$b.dwarf)"
		fi
	fi
	if ! strobe start -g --sample-event cpu-clock -F 1000 --name "cg-$b" >/tmp/cg-$b.start 2>&1; then
		fail "$b-callchain-start" "$(cat /tmp/cg-$b.start /tmp/cg-$b.log)"
		kill $spid
		wait $spid
		return
	fi
	"$CALLCHAIN" --workload 3 >/tmp/cg-$b.ranges
	strobe stop >/tmp/cg-$b.stop 2>&1 || fail "$b-callchain-stop" "$(cat /tmp/cg-$b.stop)"
	kill $spid
	wait $spid
	pid=$(awk '$1 == "pid" { print $2 }' /tmp/cg-$b.ranges)
	ranges=$(awk '$1 == "range" { printf "%s %s %s ", $2, $3, $4 }' /tmp/cg-$b.ranges)
	cg=$(sqlite3 "$STROBE_DB" "SELECT call_graph FROM sessions WHERE name = 'cg-$b'")
	[ "$cg" = fp ] && pass "$b-callchain-session" ||
		fail "$b-callchain-session" "sessions.call_graph '$cg', want fp"
	nostack=$(sqlite3 "$STROBE_DB" "SELECT count(*) FROM samples WHERE pid = $pid AND stack_id IS NULL")
	set -- $(tree_shares "$STROBE_DB" "$pid" "$ranges")
	leaf=${1:-0} a=${2:-0} bb=${3:-0} rooted=${4:-0}
	echo "# $b: $(cat /tmp/cg-$b.stop)"
	echo "# $b: workload pid $pid: $leaf samples in leaf, caller outer_a $a outer_b $bb, root above $rooted; $nostack samples without a stack"
	if [ "$leaf" -ge 100 ] && [ $((10 * (a + bb))) -ge $((9 * leaf)) ] &&
	   [ $((10 * rooted)) -ge $((9 * leaf)) ] && [ "$nostack" = 0 ]; then
		pass "$b-callchain-callers"
	else
		fail "$b-callchain-callers" "want >= 100 leaf samples, 90% under outer_a/outer_b and root, none without a stack"
	fi
	if [ "$a" -gt 0 ] && [ "$bb" -gt 0 ] && [ $((100 * a)) -ge $((45 * (a + bb))) ] &&
	   [ $((100 * a)) -le $((75 * (a + bb))) ]; then
		pass "$b-callchain-split"
	else
		fail "$b-callchain-split" "outer_a $a outer_b $bb: want outer_a 45..75% (the work is 60/40)"
	fi
	eval "share_$b=\$((100 * a / (a + bb + 1)))"
}

for b in ${BACKENDS:-driver}; do
	run "$b"
done
echo "# outer_a's share of leaf: driver ${share_driver:-?}%, perf ${share_perf:-?}%"
[ $fails = 0 ]
