#!/bin/sh
# t0138-inline: inlined functions in reports.  inlinesplit's hot function
# hot_mix exists only inlined (always_inline, -O2) into outer70 and outer30,
# which run it 70:30; a small C++ program built here runs a namespaced
# function inlined into drive().  (Not a template: libbfd, and so
# addr2line, names a static function template's inlined code after its
# caller.)  One session records both.
#  - report --by symbol --inline names hot_mix in the chains "outer70 ->
#    hot_mix" and "outer30 -> hot_mix", 70:30 within 5 standard deviations
#    of the binomial share for the samples counted;
#  - for every sampled offset of both programs (read from the session's
#    histogram), addr2line -f -i gives the expected line and chain: the
#    --by line --inline and --by symbol --inline rows are exactly those
#    sums, with names demangled as addr2line -C does, and raw as plain
#    addr2line with --no-demangle;
#  - without --inline the columns are those of before and each row is the
#    sum of its --inline rows; --inline with --by binary is refused.
. "$(dirname "$0")/lib.sh"
need_root
command -v addr2line >/dev/null || skip "addr2line (binutils) not installed: nothing to compare with"
command -v readelf >/dev/null || skip "readelf (binutils) not installed"
command -v c++ >/dev/null || skip "no C++ compiler (c++) to build the demangling check"

cat >"$tmp/cxxinline.cc" <<'CC'
#include <cstdint>
#include <ctime>
namespace wl {
inline __attribute__((always_inline)) uint64_t churn(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		__asm__ __volatile__("" : "+r"(x));
	}
	return x;
}
}
__attribute__((noinline)) uint64_t drive(uint64_t n, uint64_t x)
{
	return wl::churn(n, x) + 1;
}
static volatile uint64_t sink;
int main()
{
	struct timespec a, b;
	uint64_t x = 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		x = drive(70000, x);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec) < 1000000000LL);
	sink = x;
	return 0;
}
CC
c++ -O2 -g -o "$tmp/cxxinline" "$tmp/cxxinline.cc" 2>"$tmp/cc.err" || fail "c++: $(cat "$tmp/cc.err")"
addr2line -f -i -e "$WL/inlinesplit" 0 >/dev/null 2>&1 || fail "addr2line cannot read inlinesplit"

"$STROBE" record --sample-event cpu-clock -F 1000 --name inline \
	-- sh -c '"$1/inlinesplit" 3 & echo $! >"$2/pid1"; wait $! || exit 1
		"$2/cxxinline" & echo $! >"$2/pid2"; wait $!' sh "$WL" "$tmp" \
	>"$tmp/record.out" 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
pid1=$(cat "$tmp/pid1")
pid2=$(cat "$tmp/pid2")

refused 2 report "--inline shows the inline chains of symbols and lines" \
	"$STROBE" report --by binary --inline

# report PID NAME ARGS...: the report of PID as CSV in $tmp/NAME.csv
report() {
	p=$1
	n=$2
	shift 2
	"$STROBE" report --pid "$p" --limit 0 --format csv "$@" >"$tmp/$n.csv" 2>"$tmp/$n.err" ||
		fail "report $*: $(cat "$tmp/$n.err")"
}
report "$pid1" sym --by symbol
report "$pid1" symi --by symbol --inline
report "$pid1" line --by line
report "$pid1" linei --by line --inline
report "$pid2" csym --by symbol --inline
report "$pid2" cline --by line --inline
report "$pid2" rsym --by symbol --inline --no-demangle
report "$pid2" rline --by line --inline --no-demangle
report "$pid2" rplain --by symbol --no-demangle

# the sampled offsets of each program in the session's histogram, as
# "offset samples" lines
hist() {
	sqlq "$STROBE_DB" -separator ' ' "SELECT a.offset, sum(a.samples) FROM sample_agg a
		JOIN binaries b ON b.id = a.binary_id
		WHERE a.session_id = (SELECT max(id) FROM sessions) AND a.pid = $1
		AND b.path = '$2' GROUP BY a.offset" >"$tmp/$3" || fail "reading sample_agg"
	[ -s "$tmp/$3" ] || fail "no samples of $2 (pid $1) in the histogram"
}
hist "$pid1" "$WL/inlinesplit" hist1
hist "$pid2" "$tmp/cxxinline" hist2

# check.py BIN HIST LINECSV SYMCSV [-C]: the rows of BIN in both reports
# are the sums addr2line -f -i [-C] gives for the histogram's offsets
cat >"$tmp/check.py" <<'PY'
import collections, csv, re, subprocess, sys
binp, histf, linecsv, symcsv = sys.argv[1:5]
flags = sys.argv[5:]
loads = []
for l in subprocess.run(["readelf", "-lW", binp], capture_output=True, text=True,
                        check=True).stdout.splitlines():
    f = l.split()
    if f and f[0] == "LOAD":
        loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
hist = {}
for l in open(histf):
    off, n = map(int, l.split())
    hist[off] = n
def vma(off):
    for o, v, sz in loads:
        if o <= off < o + sz:
            return off - o + v
    raise SystemExit(f"offset {off:#x} in no LOAD segment")
offs = sorted(hist)
out = subprocess.run(["addr2line", "-f", "-i", "-a", *flags, "-e", binp],
                     input="".join(f"{vma(o):#x}\n" for o in offs),
                     capture_output=True, text=True, check=True).stdout.splitlines()
frames, cur = {}, None
i = 0
while i < len(out):
    if out[i].startswith("0x"):
        cur = offs[len(frames)]
        frames[cur] = []
        i += 1
        continue
    frames[cur].append((out[i], re.sub(r" \(discriminator \d+\)$", "", out[i + 1])))
    i += 2
assert len(frames) == len(offs), "addr2line left out addresses"
want_line, want_chain = collections.Counter(), collections.Counter()
for off, fr in frames.items():
    chain = " -> ".join(f for f, _ in reversed(fr)) if len(fr) > 1 else ""
    src = fr[0][1]
    if src.startswith("??") or src.endswith(":?") or src.endswith(":0"):
        src = ""
    want_line[(src, chain)] += hist[off]
    want_chain[chain] += hist[off]
def rows(f):
    return [r for r in csv.DictReader(open(f)) if r["binary"] == binp]
got_line = collections.Counter()
for r in rows(linecsv):
    got_line[(r["source"], r["inline"])] += int(r["samples"])
got_chain = collections.Counter()
for r in rows(symcsv):
    got_chain[r["inline"]] += int(r["samples"])
ok = True
for k in sorted(set(want_line) | set(got_line)):
    if want_line[k] != got_line[k]:
        print(f"--by line {k}: report {got_line[k]}, addr2line {want_line[k]}")
        ok = False
for k in sorted(set(want_chain) | set(got_chain)):
    if want_chain[k] != got_chain[k]:
        print(f"--by symbol inline '{k}': report {got_chain[k]}, addr2line {want_chain[k]}")
        ok = False
print(f"{binp}: {sum(hist.values())} samples at {len(hist)} offsets, "
      f"{len(want_line)} (line, chain) rows, chains {dict(want_chain)}")
sys.exit(0 if ok else 1)
PY
python3 "$tmp/check.py" "$WL/inlinesplit" "$tmp/hist1" "$tmp/linei.csv" "$tmp/symi.csv" ||
	fail "inlinesplit: reports differ from addr2line -f -i"
python3 "$tmp/check.py" "$tmp/cxxinline" "$tmp/hist2" "$tmp/cline.csv" "$tmp/csym.csv" -C ||
	fail "cxxinline: demangled reports differ from addr2line -f -i -C"
python3 "$tmp/check.py" "$tmp/cxxinline" "$tmp/hist2" "$tmp/rline.csv" "$tmp/rsym.csv" ||
	fail "cxxinline: --no-demangle reports differ from addr2line -f -i"

python3 - "$tmp" "$WL/inlinesplit" "$tmp/cxxinline" <<'PY' || fail "inline report"
import collections, csv, math, sys
d, binp, cxx = sys.argv[1:4]
def load(n):
    f = open(f"{d}/{n}.csv")
    hdr = f.readline().strip()
    f.seek(0)
    return hdr, list(csv.DictReader(f))
hs, sym = load("sym")
hsi, symi = load("symi")
hl, line = load("line")
hli, linei = load("linei")
# the columns of before, then inline
assert hsi == hs + ",inline", f"--inline columns: {hsi} (without: {hs})"
assert hli == hl + ",inline", f"--inline columns: {hli} (without: {hl})"
# each row without --inline is the sum of its rows with it
for plain, inl, key in ((sym, symi, ("binary", "symbol")), (line, linei, ("binary", "symbol", "source"))):
    a, b = collections.Counter(), collections.Counter()
    for r in plain:
        a[tuple(r[k] for k in key)] += int(r["samples"])
    for r in inl:
        b[tuple(r[k] for k in key)] += int(r["samples"])
    assert a == b, f"rows by {key} differ with --inline: {a} vs {b}"
# the split: hot_mix in outer70 : outer30 = 70 : 30
s = {r["inline"]: int(r["samples"]) for r in symi if r["binary"] == binp}
a, b = s.get("outer70 -> hot_mix", 0), s.get("outer30 -> hot_mix", 0)
n = a + b
user = sum(int(r["samples"]) for r in symi if r["binary"] != "[kernel.kallsyms]")
print(f"inlinesplit: {user} user samples; hot_mix in outer70 {a}, in outer30 {b}")
assert n >= 0.8 * user and n >= 1000, f"hot_mix has {n} of {user} user samples"
sd = math.sqrt(0.7 * 0.3 / n)
assert abs(a / n - 0.7) <= 5 * sd, f"split {a / n:.3f} not 0.7 within 5 sd ({5 * sd:.3f})"
# the symbol column stays the outer function
assert all(r["symbol"] in ("outer70", "outer30") for r in symi
           if r["binary"] == binp and "hot_mix" in r["inline"]), "symbol column changed"
# --by line: hot_mix's own lines, not its callers'
hot = [r for r in linei if r["binary"] == binp and r["inline"].endswith("-> hot_mix")]
assert hot and all(r["source"] for r in hot), "hot_mix rows without a line"
# C++: demangled by default, raw with --no-demangle
_, csym = load("csym")
_, rsym = load("rsym")
_, rplain = load("rplain")
dem = [r["inline"] for r in csym if r["binary"] == cxx and "churn" in r["inline"]]
raw = [r["inline"] for r in rsym if r["binary"] == cxx and "churn" in r["inline"]]
print(f"cxxinline: chains {dem} / raw {raw}")
assert dem and all(c.endswith("-> wl::churn(unsigned long, unsigned long)") for c in dem), \
    f"not demangled: {dem}"
assert raw and all(c.endswith("-> _ZN2wl5churnEmm") for c in raw), f"not raw: {raw}"
assert any(r["symbol"].startswith("_Z5drive") for r in rplain if r["binary"] == cxx), \
    "--no-demangle without --inline: drive not raw"
PY
ok "inline chains named as addr2line -f -i names them"
