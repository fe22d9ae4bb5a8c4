#!/bin/sh
# t0146-symbols-vs-perf: issue 11's target, checked against perf record -a
# recording the same runs at the same time (cpu-clock, 1 kHz, the same
# per-CPU timer in both): strobe's unnamed share of a workload's user-mode
# samples is at most perf's + 1 point, and every (binary, symbol) of either
# tool's top 10 has strobe's share within 1 point of perf's, each plus 3
# standard deviations of the difference of two binomial proportions for the
# sample counts at hand (two timers that do not fire at the same instants
# sample a program independently; the tolerance stays honest on a loaded
# machine, where the work, fixed, takes longer and gives more samples, not
# fewer; at least 500 a tool, ~2,000 here).  tests/symshares.py computes
# the shares (each tool's own view of the workload's process tree; names
# compared raw, without ELF versions).
#
# 1. A program built here whose functions are only in a separate debug
#    file (objcopy --only-keep-debug, strip --strip-all, and the hot
#    functions static, so not in .dynsym), found
#    a. by .gnu_debuglink in the binary's .debug/ directory (perf and strobe
#       both look there), and
#    b. by build-id in DIR/.build-id/xx/rest.debug: strobe with
#       STROBE_DEBUG_DIRS=DIR, perf with DIR bind-mounted on /usr/lib/debug
#       in a mount namespace of its own (perf looks only there), so both
#       see the same debug files and no others (this part says SKIP, and
#       the rest still runs, where no mount namespace can be made).
#    perf must name the hot functions (else the comparison proves nothing).
# 2. tests/workloads/jitmap -n CALLS: JIT-style code in anonymous memory
#    named in /tmp/perf-PID.map (perf's dso "/tmp/perf-PID.map" is
#    strobe's binary "[anon]").
. "$(dirname "$0")/lib.sh"
need_root
command -v perf >/dev/null || skip "perf (linux-perf) is not installed: nothing to compare with"
for t in gcc objcopy strip readelf unshare mount; do
	command -v $t >/dev/null || skip "$t not installed"
done

# compare LABEL ROOTPID [HOT_BINARY HOT_SYMBOLS...]: the target on the
# tree of ROOTPID, from $tmp/LABEL.csv (strobe export) and $tmp/LABEL.perf
# (perf script); HOT_SYMBOLS of HOT_BINARY must have >= 90% of perf's
# samples (the premise: perf named them)
compare() {
	label=$1 root=$2
	shift 2
	python3 - "$label" "$STROBE_DB" "$tmp/$label.csv" "$tmp/$label.perf" "$root" "$@" <<'PY'
import sys, symshares as ss
label, db, xcsv, pscript, root = sys.argv[1:6]
hot_bin, hot = (sys.argv[6], set(sys.argv[7:])) if len(sys.argv) > 6 else (None, set())
st = ss.Shares(ss.strobe_samples(db, xcsv, int(root)))
pf = ss.Shares(ss.perf_parse(open(pscript, errors="replace").read(), int(root)))
c = ss.compare(st, pf)
print(f"{label}: strobe {st.n} user-mode samples ({st.kernel} kernel), perf {pf.n} ({pf.kernel} kernel); "
      f"top-10 overlap {c['overlap']}/{c['k']}")
for key, a, b, d, bd in c["rows"]:
    print(f"  {ss.keyname(key)[:60]:60} strobe {100 * a:6.2f}%  perf {100 * b:6.2f}%  "
          f"diff {100 * d:+6.2f}  bound {100 * bd:5.2f}")
print(f"  unnamed: strobe {100 * c['unnamed_strobe']:.2f}%, perf {100 * c['unnamed_perf']:.2f}%, "
      f"bound perf's + {100 * c['unnamed_bound']:.2f}")
ok = True
if st.n < 500 or pf.n < 500:
    print(f"FAIL {label}: too few samples (strobe {st.n}, perf {pf.n}; want >= 500)"); ok = False
if hot:
    ph = sum(v for (b, s), v in pf.count.items() if b == hot_bin and s in hot) / max(pf.n, 1)
    if ph < 0.9:
        print(f"FAIL {label}: perf names only {100 * ph:.1f}% of the samples {'/'.join(sorted(hot))} "
              "in {hot_bin}: it did not read the debug file, and the comparison proves nothing"); ok = False
if c["unnamed_strobe"] - c["unnamed_perf"] > c["unnamed_bound"]:
    print(f"FAIL {label}: strobe leaves {100 * c['unnamed_strobe']:.2f}% unnamed, perf "
          f"{100 * c['unnamed_perf']:.2f}%"); ok = False
for key, a, b, d, bd in c["rows"]:
    if abs(d) > bd:
        print(f"FAIL {label}: {ss.keyname(key)}: strobe {100 * a:.2f}%, perf {100 * b:.2f}%, "
              f"bound {100 * bd:.2f} points"); ok = False
sys.exit(0 if ok else 1)
PY
}

# perf_script LABEL [PREFIX...]: perf script's text of $tmp/perf.data (the
# fields tests/symshares.py reads) into $tmp/LABEL.perf, run under PREFIX
perf_script() {
	label=$1
	shift
	"$@" perf script -i "$tmp/perf.data" --show-task-events --no-demangle \
		-F comm,pid,tid,ip,sym,dso >"$tmp/$label.perf" 2>"$tmp/$label.perr" ||
		fail "perf script: $(cat "$tmp/$label.perr")"
}

# record LABEL CMD...: CMD under strobe and perf at once; its pid in
# $tmp/pid, strobe's samples in $tmp/LABEL.csv (named as STROBE_DEBUG_DIRS
# says)
record() {
	label=$1
	shift
	rm -f "$tmp/pid" "$tmp/perf.data"
	"$STROBE" record --sample-event cpu-clock -F 1000 --name "$label" \
		-- perf record -q "$(perf_bid)" -N -a -e cpu-clock -F 1000 -o "$tmp/perf.data" \
		-- sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$tmp/pid" "$@" \
		>"$tmp/$label.out" 2>"$tmp/$label.err" || fail "record $label: $(cat "$tmp/$label.err")"
	grep -q "samples, 0 lost" "$tmp/$label.err" || fail "record $label: $(cat "$tmp/$label.err")"
	"$STROBE" export --format csv --no-demangle -o "$tmp/$label.csv" 2>"$tmp/$label.xerr" ||
		fail "export $label: $(cat "$tmp/$label.xerr")"
}

# perf's own build-id cache and debug directory, not root's
export HOME=$tmp/home PERF_BUILDID_DIR=$tmp/home/.debug
mkdir -p "$HOME" "$tmp/bin/.debug" "$tmp/dbg" "$tmp/empty"

# 1. the program: a fixed amount of work, 60:30:10 in three static
# functions; rounds of about 1 ms, each 50-150% of that at random (a fixed
# length could lock onto a 1 ms timer and give the two tools different
# shares)
cat >"$tmp/sepdebug.c" <<'C'
#include <stdint.h>
#include <stdlib.h>
volatile uint64_t sink;
#define SPIN(n) do { uint64_t x = 0x9e3779b97f4a7c15ULL; \
	for (long i = 0; i < (n); i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; \
		__asm__ __volatile__("" : "+r"(x)); } sink = x; } while (0)
static __attribute__((noinline)) void sep_hot60(long n) { SPIN(6 * n); }
static __attribute__((noinline)) void sep_hot30(long n) { SPIN(3 * n); }
static __attribute__((noinline)) void sep_hot10(long n) { SPIN(1 * n); }
int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1000;
	uint64_t r = 88172645463325252ULL;
	for (long i = 0; i < rounds; i++) {
		long u;
		r ^= r << 13; r ^= r >> 7; r ^= r << 17;
		u = 35000 + (long)(r % 70001);
		sep_hot60(u);
		sep_hot30(u);
		sep_hot10(u);
	}
	return 0;
}
C
gcc -O1 -g -o "$tmp/full" "$tmp/sepdebug.c" || fail "gcc sepdebug.c"
# (a) by .gnu_debuglink in .debug/; (b) by build-id: two copies, each with
# a build-id of its own (no other run's binary shares its key)
for v in link bid; do
	unique_copy "$tmp/full" "$tmp/$v.full" >"$tmp/$v.id" || fail unique_copy
	cp "$tmp/$v.full" "$tmp/$v.debug" && objcopy --only-keep-debug "$tmp/$v.debug" ||
		fail "objcopy --only-keep-debug"
	cp "$tmp/$v.full" "$tmp/bin/sep$v" && strip --strip-all "$tmp/bin/sep$v" || fail strip
	readelf -S "$tmp/bin/sep$v" | grep -q '\.symtab' && fail "sep$v still has a .symtab"
	readelf --dyn-syms "$tmp/bin/sep$v" | grep -q sep_hot && fail "sep_hot* in .dynsym: proves nothing"
done
cp "$tmp/link.debug" "$tmp/bin/.debug/seplink.debug" &&
	(cd "$tmp/bin/.debug" && objcopy --add-gnu-debuglink=seplink.debug ../seplink) ||
	fail "--add-gnu-debuglink"
bid=$(cat "$tmp/bid.id")
d=$tmp/dbg/.build-id/$(echo "$bid" | cut -c1-2)
mkdir -p "$d" && cp "$tmp/bid.debug" "$d/$(echo "$bid" | cut -c3-).debug" || fail "the .build-id layout"
readelf -S "$tmp/bin/sepbid" | grep -q '\.gnu_debuglink' && fail "sepbid has a .gnu_debuglink"

# about 1.5 s of CPU at ~1.4 ns an iteration
rounds=1500
# (a): both tools look in the binary's .debug/ and in /usr/lib/debug
unset STROBE_DEBUG_DIRS
record link "$tmp/bin/seplink" $rounds
perf_script link
compare link "$(cat "$tmp/pid")" seplink sep_hot60 sep_hot30 sep_hot10 ||
	fail "debuglink: strobe and perf disagree"
ok "a program named from its .gnu_debuglink file as perf names it"

# (b): both look only in $tmp/dbg; perf reads DIR/.build-id/xx/rest.debug
# as /usr/lib/debug/.build-id/xx/rest.debug
if ! unshare -m --propagation private sh -c 'mount --bind "$1" /usr/lib/debug' sh "$tmp/dbg" \
	2>"$tmp/unshare.err"; then
	echo "SKIP the .build-id/ layout against perf: cannot bind-mount on /usr/lib/debug" \
		"in a mount namespace: $(cat "$tmp/unshare.err")"
else
	export STROBE_DEBUG_DIRS=$tmp/dbg
	record bid "$tmp/bin/sepbid" $rounds
	perf_script bid unshare -m --propagation private sh -c \
		'mount --bind "$1" /usr/lib/debug && shift && exec "$@"' sh "$tmp/dbg"
	unset STROBE_DEBUG_DIRS
	compare bid "$(cat "$tmp/pid")" sepbid sep_hot60 sep_hot30 sep_hot10 ||
		fail "build-id debug file: strobe and perf disagree"
	ok "a program named from DIR/.build-id/xx/rest.debug as perf names it"
fi

# 2. JIT code named in a perf map; perf reads the map while it exists
sh -c 'echo $$ >"$1/probe.pid"; exec "$2/jitmap" -n 1' sh "$tmp" "$WL" 2>"$tmp/probe.err"
rc=$?
rm -f "/tmp/perf-$(cat "$tmp/probe.pid").map"
[ $rc = 77 ] && skip "$(cat "$tmp/probe.err")"
[ $rc = 0 ] || fail "jitmap: $(cat "$tmp/probe.err")"
record jit "$WL/jitmap" -n 500
pid=$(cat "$tmp/pid")
[ -f "/tmp/perf-$pid.map" ] || fail "jitmap left no /tmp/perf-$pid.map"
perf_script jit
rm -f "/tmp/perf-$pid.map"
compare jit "$pid" "[anon]" jit_hot_loop || fail "JIT perf map: strobe and perf disagree"
ok "JIT code named from its perf map as perf names it"
