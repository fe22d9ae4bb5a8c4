#!/bin/sh
# run.sh - run strobe's whole test suite: the cmocka unit tests given as
# arguments, then every numbered end-to-end test tests/tNNNN-*.sh.
# Prints one line per test and ends with "N passed, N failed, N skipped".
# Exit status: 0 when nothing failed.
#
# Environment: STROBE_TOP (source tree), STROBE_BUILD (build tree),
# T=PATTERN runs only the end-to-end tests whose name contains PATTERN.
top=${STROBE_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
build=${STROBE_BUILD:-$top}
out=$build/tests/out
mkdir -p "$out"
pass=0 fail=0 skip=0 failed=

for u in "$@"; do
	name=$(basename "$u")
	log=$out/$name.log
	if "$build/$u" >"$log" 2>&1; then
		pass=$((pass + 1)); echo "PASS  $name"
	else
		fail=$((fail + 1)); failed="$failed $name"; echo "FAIL  $name (see $log)"
		tail -n 15 "$log" | sed 's/^/      /'
	fi
	grep -h "SKIPPED\|^\[  SKIPPED" "$log" | sed 's/^/      /'
done

for t in "$top"/tests/t[0-9][0-9][0-9][0-9]-*.sh; do
	name=$(basename "$t" .sh)
	case "$name" in *"${T:-}"*) ;; *) continue ;; esac
	log=$out/$name.log
	start=$(date +%s)
	STROBE_TOP=$top STROBE_BUILD=$build sh "$t" >"$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	case $rc in
	0) pass=$((pass + 1)); echo "PASS  $name (${secs}s)" ;;
	77) skip=$((skip + 1)); echo "SKIP  $name: $(grep '^SKIP' "$log" | head -n 1 | cut -c6-)" ;;
	*) fail=$((fail + 1)); failed="$failed $name"; echo "FAIL  $name (${secs}s, see $log)"
	   tail -n 25 "$log" | sed 's/^/      /' ;;
	esac
done

[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
