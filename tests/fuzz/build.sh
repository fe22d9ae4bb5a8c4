#!/bin/sh
# build.sh [OUTDIR] - build every libFuzzer harness tests/fuzz/fuzz_*.c with
# clang (libFuzzer, ASan, UBSan) into OUTDIR (default tests/fuzz/bin),
# compiling the lib/ sources each one needs with the same flags.
# Needs a configured tree (config.h): ./configure first; set STROBE_BUILD
# to the build tree when it is not the source tree.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${STROBE_BUILD:-$top}
out=${1:-$here/bin}
mkdir -p "$out"
CC=${CC:-clang}
CFLAGS="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
CPPFLAGS="-I$top/lib -I$top/kernel/uapi -I$build"
[ -f "$build/config.h" ] || { echo "build.sh: no $build/config.h: run ./configure" >&2; exit 1; }

# NAME: lib sources, then libraries
build() {
	name=$1 srcs=$2 libs=$3
	set --
	for s in $srcs; do set -- "$@" "$top/lib/$s"; done
	echo "  CC $out/fuzz_$name"
	# shellcheck disable=SC2086
	$CC $CFLAGS $CPPFLAGS -o "$out/fuzz_$name" "$here/fuzz_$name.c" "$@" $libs
}
build record "record.c" ""
build perfrec "perfrec.c" ""
build merge "merge.c util.c" ""
build proto "proto.c util.c" ""
build expr "expr.c util.c" "-lm"
build usdt "usdt.c util.c" ""
build hashkey "hashkey.c util.c" "-lxxhash"
