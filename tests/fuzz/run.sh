#!/bin/sh
# run.sh NAME SECONDS [OUTDIR] - run the libFuzzer harness fuzz_NAME (built
# by build.sh into OUTDIR, default tests/fuzz/bin) for SECONDS of wall
# time, one job, starting from its corpus tests/fuzz/corpus/NAME/; then
# merge what it found back into that corpus with -merge=1 (only inputs
# that add coverage), so the corpus stays small.  A crash leaves
# crash-* in OUTDIR/artifacts and exits non-zero.
# The libFuzzer summary (stat::number_of_executed_units and the rest) is
# printed at the end; the full log is OUTDIR/NAME.log.  RUNS=N stops
# after N executions (whichever of RUNS and SECONDS comes first).
# tests/fuzz/NAME.dict, when there is one, is the libFuzzer -dict.
# Runs at the priority it is given: nice -n 19 run.sh ... on a shared
# machine.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 NAME SECONDS [OUTDIR]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
name=$1 secs=$2
out=${3:-$here/bin}
bin=$out/fuzz_$name
corpus=$here/corpus/$name
[ -x "$bin" ] || { echo "run.sh: no $bin: run build.sh first" >&2; exit 1; }
mkdir -p "$corpus" "$out/artifacts" "$out/new-$name"
# ELF inputs (a small shared object is ~5 KB) need more room
case $name in usdt|hashkey) maxlen=8192 ;; *) maxlen=4096 ;; esac
dict=
[ -f "$here/$name.dict" ] && dict=-dict=$here/$name.dict
start=$(date +%s)
rc=0
# One job, one worker (libFuzzer then writes the job's output to
# fuzz-0.log in its working directory: OUTDIR).  New inputs go to a scratch
# dir; the corpus proper only takes what the merge below keeps.
rm -f "$out/fuzz-0.log"
(cd "$out" && "$bin" -jobs=1 -workers=1 -max_total_time="$secs" -runs="${RUNS:--1}" -max_len=$maxlen ${dict:+"$dict"} \
	-timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
	-artifact_prefix="$out/artifacts/" "$out/new-$name" "$corpus") >"$out/$name.log" 2>&1 || rc=$?
end=$(date +%s)
[ -f "$out/fuzz-0.log" ] && cat "$out/fuzz-0.log" >>"$out/$name.log"
grep -E '^(stat::|Done|==[0-9]+==ERROR|SUMMARY)|#[0-9]+.*DONE' "$out/$name.log" || true
echo "wall ${name}: $((end - start)) s, exit $rc"
if [ $rc -ne 0 ]; then
	tail -n 40 "$out/$name.log"
	exit $rc
fi
"$bin" -merge=1 -max_len=$maxlen "$corpus" "$out/new-$name" >"$out/$name.merge.log" 2>&1
rm -rf "$out/new-$name"
echo "corpus $name: $(ls "$corpus" | wc -l) files, $(cat "$corpus"/* | wc -c) bytes"
