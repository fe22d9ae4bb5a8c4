#!/bin/sh
# run.sh - run strobe's whole test suite: the cmocka unit tests given as
# arguments, then every numbered end-to-end test tests/tNNNN-*.sh.
# Prints one line per test and ends with "N passed, N failed, N skipped".
#
# Counting: every cmocka case counts on its own (a binary with 12 passing
# and 3 skipped cases adds 12 passed and 3 skipped, each skip with the
# reason the case printed); every end-to-end test counts once.  An
# end-to-end test skips by exiting 77 after a line "SKIP reason"; exiting 77
# without saying why is a failure, and so is a unit binary that ran no case
# or whose output cmocka did not close.  A run as non-root skips nearly every
# end-to-end test (they need root for system-wide profiling): it says so
# plainly before the closing line.
# Exit status: 0 when nothing failed.
#
# Environment: STROBE_TOP (source tree), STROBE_BUILD (build tree),
# T=PATTERN runs only the end-to-end tests whose name contains PATTERN.
top=${STROBE_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
build=${STROBE_BUILD:-$top}
out=$build/tests/out
# The suite never asks the user's debuginfod servers (t0139 starts its own).
unset DEBUGINFOD_URLS
mkdir -p "$out"
pass=0 fail=0 skip=0 failed= e2e=0 e2e_skip=0

# cmocka_count LOG WHAT: the N of cmocka's closing "[  WHAT ] N test(s)"
cmocka_count() {
	sed -n "s/^\[  *$2 *\] \([0-9][0-9]*\) test(s).*/\1/p" "$1" | tail -n 1
}

for u in "$@"; do
	name=$(basename "$u")
	log=$out/$name.log
	"$build/$u" >"$log" 2>&1
	rc=$?
	ran=$(sed -n 's/^\[==========\] \([0-9][0-9]*\) test(s) run\..*/\1/p' "$log" | tail -n 1)
	np=$(cmocka_count "$log" PASSED)
	ns=$(cmocka_count "$log" SKIPPED)
	nf=$(cmocka_count "$log" FAILED)
	np=${np:-0} ns=${ns:-0} nf=${nf:-0}
	if [ -z "$ran" ] || [ "$ran" -eq 0 ] || [ $((np + ns + nf)) -ne "$ran" ]; then
		fail=$((fail + 1)); failed="$failed $name"
		echo "FAIL  $name (exit $rc, no complete cmocka summary; see $log)"
		tail -n 15 "$log" | sed 's/^/      /'
		continue
	fi
	pass=$((pass + np)); skip=$((skip + ns))
	if [ "$rc" -ne 0 ] || [ "$nf" -ne 0 ]; then
		[ "$nf" -eq 0 ] && nf=1
		fail=$((fail + nf)); failed="$failed $name"
		echo "FAIL  $name ($nf of $ran cases failed, exit $rc; see $log)"
		tail -n 15 "$log" | sed 's/^/      /'
	else
		echo "PASS  $name ($np cases${ns:+, $ns skipped})" | sed 's/, 0 skipped//'
	fi
	# each skipped case with the reason it printed ("skipped: ...") just before
	awk '/^skipped: /{ why = substr($0, 10); next }
	     /^\[ RUN      \]/{ why = "" }
	     /^\[  SKIPPED \] [A-Za-z_]/ && !done[$4]++ && !/test\(s\)/ {
		printf "SKIP  %s: %s\n", $4, why == "" ? "(no reason printed)" : why }' "$log" |
		sed 's/^/      /'
done

for t in "$top"/tests/t[0-9][0-9][0-9][0-9]-*.sh; do
	name=$(basename "$t" .sh)
	case "$name" in *"${T:-}"*) ;; *) continue ;; esac
	log=$out/$name.log
	e2e=$((e2e + 1))
	start=$(date +%s)
	STROBE_TOP=$top STROBE_BUILD=$build sh "$t" >"$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	why=$(grep '^SKIP ' "$log" | head -n 1 | cut -c6-)
	case $rc in
	0) pass=$((pass + 1)); echo "PASS  $name (${secs}s)" ;;
	77) if [ -n "$why" ]; then
		skip=$((skip + 1)); e2e_skip=$((e2e_skip + 1)); echo "SKIP  $name: $why"
	    else
		fail=$((fail + 1)); failed="$failed $name"
		echo "FAIL  $name (skipped without a 'SKIP reason' line; see $log)"
	    fi ;;
	*) fail=$((fail + 1)); failed="$failed $name"; echo "FAIL  $name (${secs}s, see $log)"
	   tail -n 25 "$log" | sed 's/^/      /' ;;
	esac
done

[ -n "$failed" ] && echo "failed:$failed"
if [ "$(id -u)" != 0 ] && [ "$e2e_skip" -gt 0 ]; then
	echo "NOT ROOT: $e2e_skip of $e2e end-to-end tests were skipped; this run tested almost" \
		"nothing of capture, ingest or reports. Run the suite as root."
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
