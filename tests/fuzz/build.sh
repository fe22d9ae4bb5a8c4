#!/bin/sh
# build.sh [OUTDIR] - build every libFuzzer harness tests/fuzz/fuzz_*.c with
# clang (libFuzzer, ASan, UBSan) into OUTDIR (default tests/fuzz/bin),
# compiling the lib/ sources each one needs with the same flags.
# Needs a configured tree (config.h): ./configure first; set STROBE_BUILD
# to the build tree when it is not the source tree.  Needs clang with
# libFuzzer and the sanitizer runtimes: on Debian 12, when run as root and
# they are missing, it installs them (apt-get install clang
# libclang-rt-14-dev); the test suite does not need them (make check
# replays the corpora with the ordinary compiler).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${STROBE_BUILD:-$top}
out=${1:-$here/bin}
mkdir -p "$out"
CC=${CC:-clang}
OBJCOPY=${OBJCOPY:-objcopy}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
CFLAGS="-g -O1 -fsanitize=fuzzer $SAN"
CPPFLAGS="-I$top/kernel/uapi -I$build"
for d in base capture ingest store symbols query count; do CPPFLAGS="$CPPFLAGS -I$top/lib/$d"; done
[ -f "$build/config.h" ] || { echo "build.sh: no $build/config.h: run ./configure" >&2; exit 1; }

# clang that links libFuzzer (a trivial harness), else install it (root)
has_libfuzzer() {
	command -v "$CC" >/dev/null 2>&1 &&
	echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
		"$CC" -fsanitize=fuzzer,address,undefined -x c -o "$out/.cc-test" - >/dev/null 2>&1
}
if ! has_libfuzzer; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "build.sh: installing clang and libclang-rt-14-dev (libFuzzer)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq && apt-get install -y -qq clang libclang-rt-14-dev >/dev/null
	fi
	has_libfuzzer || {
		echo "build.sh: $CC cannot link libFuzzer: apt-get install clang libclang-rt-14-dev (as root)" >&2
		exit 1
	}
fi
rm -f "$out/.cc-test"

# NAME "LIB SOURCES" "LIBRARIES" [bigalloc]
# With bigalloc, the harness and its lib/ sources are compiled to objects
# whose malloc/calloc/realloc/free are renamed to those of bigalloc.c
# (large blocks kept and reused: see there), built without coverage.
build() {
	name=$1 srcs=$2 libs=$3 big=${4:-}
	set --
	for s in $srcs; do set -- "$@" "$top/lib/$s"; done
	echo "  CC $out/fuzz_$name"
	if [ -z "$big" ]; then
		# shellcheck disable=SC2086
		$CC $CFLAGS $CPPFLAGS -o "$out/fuzz_$name" "$here/fuzz_$name.c" "$@" $libs
		return
	fi
	objs=$out/obj-$name
	rm -rf "$objs"
	mkdir -p "$objs"
	for src in "$here/fuzz_$name.c" "$@"; do
		o=$objs/$(basename "$src" .c).o
		# shellcheck disable=SC2086
		$CC $CFLAGS $CPPFLAGS -c -o "$o" "$src"
		$OBJCOPY --redefine-sym malloc=fuzz_malloc --redefine-sym calloc=fuzz_calloc \
			--redefine-sym realloc=fuzz_realloc --redefine-sym free=fuzz_free "$o"
	done
	# shellcheck disable=SC2086
	$CC -g -O1 $SAN -c -o "$objs/bigalloc.o" "$here/bigalloc.c"
	# shellcheck disable=SC2086
	$CC $CFLAGS -o "$out/fuzz_$name" "$objs"/*.o $libs
}
build record "capture/record.c" ""
build perfrec "capture/perfrec.c" ""
build merge "capture/merge.c base/util.c" ""
build proto "base/proto.c base/util.c" ""
build expr "query/expr.c base/util.c" "-lm"
build usdt "capture/usdt.c capture/usdtargs.c base/elfnote.c base/util.c" "" bigalloc
build hashkey "symbols/hashkey.c base/elfnote.c base/util.c" "-lxxhash" bigalloc
build jitdump "symbols/jitdump.c symbols/jitmap.c base/util.c" ""
build countsave "count/countsave.c base/proto.c base/util.c" "-lm"
