#!/bin/sh
# timeviews.sh - 'strobe plot' and 'strobe export --format csv' on a large
# session, side by side for two builds (issue 10), and the ingest cost.
#
# Usage (from anywhere):
#     bench/timeviews.sh OLD_BUILD NEW_BUILD [SAMPLES [RUNS]]   (default 10000000 3)
#
# OLD_BUILD and NEW_BUILD are build trees (each with bench/ingestbench and
# tools/strobe).  Each build's ingestbench makes its own database of
# SAMPLES samples (the two builds' schemas differ, so neither can read the
# other's file), kept in BENCH_DIR as old.db and new.db and reused by a
# later run with the same SAMPLES.  Then, RUNS rounds, the two builds
# alternating (the order swapped every round), of each command below on
# its own build's database, wall-clock seconds and user+system CPU:
#     plot --event instructions
#     plot --event instructions,cycles,samples
#     plot --metric instructions/cycles --by pid
#     plot --event cycles --by cpu
#     plot --event cycles --by binary
#     plot --event cycles --from 10 --to 100
#     plot --event cycles --by symbol
#     export --format csv (to /dev/null)
# Plots write their CSV (-o x.csv), so gnuplot plays no part.  Then
# INGEST_RUNS (default 3) paired runs of 'ingestbench -n INGEST_N' (default
# 1000000), old and new alternating, for the ingest rate.
#
# Prints one line per command and round:
#     plot --event instructions | old 2.31 s (2.25 cpu) | new 0.06 s (0.05 cpu)
# and one per ingest pair:
#     ingest -n 1000000 | old 1650000 samples/s | new 1640000 samples/s
#
# Environment: BENCH_DIR (default /tmp/strobe-timeviews), INGEST_N, INGEST_RUNS.
set -eu
old=${1:?usage: timeviews.sh OLD_BUILD NEW_BUILD [SAMPLES [RUNS]]}
new=${2:?usage: timeviews.sh OLD_BUILD NEW_BUILD [SAMPLES [RUNS]]}
n=${3:-10000000}
runs=${4:-3}
dir=${BENCH_DIR:-/tmp/strobe-timeviews}
mkdir -p "$dir"

for b in old new; do
	eval "tree=\$$b"
	if [ ! -e "$dir/$b.db" ] || [ "$(cat "$dir/$b.n" 2>/dev/null)" != "$n" ]; then
		rm -rf "$dir/$b.db" "$dir/$b.db-wal" "$dir/$b.db-shm" "$dir/$b.db.cache"
		"$tree/bench/ingestbench" -n "$n" -k "$dir/$b.db" >"$dir/$b.ingest" 2>&1
		echo "$n" >"$dir/$b.n"
		echo "$b database: $(grep -E 'samples_per_s|db_bytes' "$dir/$b.ingest" | tr '\n' ' ')"
	fi
done

# one timed command: prints "W s (C cpu)"
timed() {
	/usr/bin/time -f "%e %U %S" -o "$dir/time" "$@" >/dev/null 2>"$dir/err" ||
		{ echo "failed: $* : $(cat "$dir/err")" >&2; exit 1; }
	awk '{ printf "%.2f s (%.2f cpu)", $1, $2 + $3 }' "$dir/time"
}

run() {
	what=$1
	shift
	r=0
	while [ "$r" -lt "$runs" ]; do
		if [ $((r % 2)) = 0 ]; then order="old new"; else order="new old"; fi
		for b in $order; do
			eval "tree=\$$b"
			case $what in
			plot*) t=$(timed "$tree/tools/strobe" plot --db "$dir/$b.db" "$@" -o "$dir/$b.csv") ;;
			export*) t=$(timed "$tree/tools/strobe" export --db "$dir/$b.db" "$@") ;;
			esac
			eval "t_$b=\$t"
		done
		echo "$what | old $t_old | new $t_new"
		r=$((r + 1))
	done
}

run "plot --event instructions" --event instructions
run "plot --event instructions,cycles,samples" --event instructions,cycles,samples
run "plot --metric instructions/cycles --by pid" --metric instructions/cycles --by pid
run "plot --event cycles --by cpu" --event cycles --by cpu
run "plot --event cycles --by binary" --event cycles --by binary
run "plot --event cycles --from 10 --to 100" --event cycles --from 10 --to 100
run "plot --event cycles --by symbol" --event cycles --by symbol
run "export --format csv" --format csv -o /dev/null

i=0
while [ "$i" -lt "${INGEST_RUNS:-3}" ]; do
	for b in old new; do
		eval "tree=\$$b"
		eval "r_$b=\$(\"\$tree/bench/ingestbench\" -n \"${INGEST_N:-1000000}\" | sed -n 's/^samples_per_s: //p')"
	done
	echo "ingest -n ${INGEST_N:-1000000} | old $r_old samples/s | new $r_new samples/s"
	i=$((i + 1))
done
