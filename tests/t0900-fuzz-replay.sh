#!/bin/sh
# t0900-fuzz-replay: every corpus of tests/fuzz/corpus/NAME/ (the seeds, what
# fuzzing found interesting, and every input that once crashed a harness)
# replayed through its libFuzzer harness, built with the ordinary compiler
# as tests/fuzz/replay_NAME (tests/fuzz/replay.c; no clang needed).  A
# harness checks more than "no crash" (round trips, merge order, ...: see
# the header of tests/fuzz/fuzz_NAME.c); a failed check aborts it.
# Needs no root.
. "$(dirname "$0")/lib.sh"

n=0
for dir in "$top"/tests/fuzz/corpus/*/; do
	name=$(basename "$dir")
	bin=$build/tests/fuzz/replay_$name
	[ -x "$bin" ] || fail "no $bin (make check builds it)"
	"$bin" "$dir" >"$tmp/$name.out" 2>&1 ||
		fail "replay_$name: $(tail -n 5 "$tmp/$name.out")"
	files=$(find "$dir" -type f | wc -l)
	grep -q "^replayed $files inputs\$" "$tmp/$name.out" ||
		fail "replay_$name: $(cat "$tmp/$name.out") (expected $files)"
	ok "$name: $files inputs"
	n=$((n + 1))
done
[ "$n" -ge 8 ] || fail "only $n corpora under $top/tests/fuzz/corpus"
