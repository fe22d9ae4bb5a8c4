#!/bin/sh
# progress.sh - what the progress meter (lib/base/progress.h) costs:
# 'strobe export --format csv -o /dev/null' of a large session, under a
# pseudo-terminal (script(1)) with the meter drawing (after its usual
# delay, and from the start with STROBE_PROGRESS_DELAY_MS=0) and with it
# turned off (STROBE_PROGRESS=0), the three alternating (in an order that
# turns every round), RUNS rounds.
#
# Usage (from anywhere):
#     bench/progress.sh BUILD [SAMPLES [RUNS]]     (default 10000000 5)
#
# BUILD is a build tree (bench/ingestbench, tools/strobe).  ingestbench
# makes the session in BENCH_DIR (default /tmp/strobe-progress), kept and
# reused by a later run with the same SAMPLES.  Prints one line per run:
#     on   | 1.62 s wall | 1.31 s cpu
# then the median and the least of each.
set -eu
build=${1:?usage: progress.sh BUILD [SAMPLES [RUNS]]}
n=${2:-10000000}
runs=${3:-5}
dir=${BENCH_DIR:-/tmp/strobe-progress}
mkdir -p "$dir"
db=$dir/progress-$n.db
[ -f "$db" ] || "$build/bench/ingestbench" -n "$n" -k "$db" >/dev/null
command -v script >/dev/null || { echo "progress.sh: script(1) is missing: install bsdutils" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "progress.sh: /usr/bin/time is missing: apt-get install time" >&2; exit 1; }

# one MODE ENV: one export on a pseudo-terminal, its times in $dir/t.MODE
one() {
	script -qec "env $2 /usr/bin/time -f '%e %U %S' -o '$dir/t.now' \
		'$build/tools/strobe' export --db '$db' --format csv -o /dev/null" /dev/null \
		>/dev/null </dev/null
	read -r wall user sys <"$dir/t.now"
	cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
	echo "$wall $cpu" >>"$dir/t.$1"
	printf '%-5s| %s s wall | %s s cpu\n' "$1" "$wall" "$cpu"
}

rm -f "$dir/t.on" "$dir/t.now0" "$dir/t.off"
# the order turns every round, so that none always runs first
for i in $(seq "$runs"); do
	case $((i % 3)) in
	1) set -- on now0 off ;;
	2) set -- now0 off on ;;
	0) set -- off on now0 ;;
	esac
	for m; do
		case $m in
		on) one on STROBE_PROGRESS=1 ;;
		now0) one now0 STROBE_PROGRESS_DELAY_MS=0 ;;
		off) one off STROBE_PROGRESS=0 ;;
		esac
	done
done
# median and least of column C of file F
stat() {
	cut -d' ' -f"$2" "$1" | sort -n | sed -n "1h;$(((runs + 1) / 2))p;\${x;p}" | tr '\n' ' '
}
for m in on now0 off; do
	printf '%-5s| median, least: %s s wall | %s s cpu\n' "$m" \
		"$(stat "$dir/t.$m" 1 | sed 's/ $//; s/ /, /')" "$(stat "$dir/t.$m" 2 | sed 's/ $//; s/ /, /')"
done
