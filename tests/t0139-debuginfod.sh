#!/bin/sh
# t0139-debuginfod: a stripped binary whose debug file is only on a
# debuginfod server (Debian's debuginfod, started here on a free local
# port over a directory holding just that file) is named in reports only
# when the user set DEBUGINFOD_URLS:
#  a. unset (or blank): [unknown], nothing asked of the server, no cache made;
#  b. set: named, the note says "symbols from debuginfod: CACHE-PATH" in the
#     given DEBUGINFOD_CACHE_PATH, at most one query per binary (the
#     server's own request counter), lines from the fetched DWARF;
#  c. a closed port: the report still succeeds at once, unnamed, with one
#     line saying what could not be fetched from which server;
#  d. a server answering garbage: the file is refused (not the binary's
#     build-id), unnamed;
#  e. a server that accepts and never answers: the report ends within the
#     default timeout, unnamed, and says so.
. "$(dirname "$0")/lib.sh"
need_root
for t in gcc objcopy strip readelf curl python3; do
	command -v $t >/dev/null || skip "$t not installed"
done
command -v debuginfod >/dev/null ||
	skip "debuginfod not installed (apt-get install debuginfod, or ./setup.sh)"
unset DEBUGINFOD_TIMEOUT DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE
srv_pid= fake_pid=
stop_servers() {
	for p in $srv_pid $fake_pid; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	srv_pid= fake_pid=
}
trap 'stop_servers; cleanup' EXIT

mkdir -p "$tmp/bin" "$tmp/srv" "$tmp/empty"
gcc -O1 -g -o "$tmp/full" "$top/tests/workloads/split603010.c" -I"$top/tests/workloads" -lm ||
	fail "gcc split603010"
bid=$(unique_copy "$tmp/full" "$tmp/unique") || fail "unique_copy"
cp "$tmp/unique" "$tmp/srv/split.debug" && objcopy --only-keep-debug "$tmp/srv/split.debug" ||
	fail "objcopy --only-keep-debug"
cp "$tmp/unique" "$tmp/bin/split" && strip --strip-all "$tmp/bin/split" || fail strip
readelf -S "$tmp/bin/split" | grep -q '\.symtab' && fail "the stripped binary still has a .symtab"
readelf -S "$tmp/bin/split" | grep -q '\.gnu_debuglink' && fail "the binary has a debuglink"
readelf --dyn-syms "$tmp/bin/split" | grep -q work60 && fail "work60 is in .dynsym: proves nothing"

# the server: over $tmp/srv only, indexed before any report
port=$(free_port) || fail "no free port"
url=http://127.0.0.1:$port
nice -n 19 debuginfod -F -c 1 -t 0 -g 0 -p "$port" -d "$tmp/dinfod.sqlite" "$tmp/srv" \
	>"$tmp/debuginfod.log" 2>&1 &
srv_pid=$!
i=0
until curl -sf -o "$tmp/served.debug" "$url/buildid/$bid/debuginfo"; do
	i=$((i + 1))
	kill -0 "$srv_pid" 2>/dev/null || fail "debuginfod died: $(tail -5 "$tmp/debuginfod.log")"
	[ $i -gt 600 ] && fail "debuginfod did not index $tmp/srv in 60 s: $(tail -5 "$tmp/debuginfod.log")"
	sleep 0.1
done
cmp -s "$tmp/served.debug" "$tmp/srv/split.debug" || fail "debuginfod serves another file"
# buildid_requests: the server's count of /buildid/ requests so far (all
# of http_requests_total but its /metrics ones)
buildid_requests() {
	curl -sf "$url/metrics" | awk '/^http_requests_total\{/ && !/type="metrics"/ { n += $2 }
		END { print n + 0 }'
}
[ "$(buildid_requests)" -ge 1 ] || fail "the server's metrics do not count /buildid/ requests"

"$STROBE" record --sample-event cpu-clock -F 1000 --name dinfod -- sh -c \
	'"$1" 1 & echo $! >"$2/pid"; wait $!' sh "$tmp/bin/split" "$tmp" \
	>"$tmp/record.out" 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
pid=$(cat "$tmp/pid")

# report LABEL [ARGS]: text and CSV reports of the workload's process,
# with no local debug file anywhere (STROBE_DEBUG_DIRS is empty)
report() {
	l=$1
	shift
	STROBE_DEBUG_DIRS=$tmp/empty "$STROBE" report --pid "$pid" --format csv "$@" \
		>"$tmp/$l.csv" 2>"$tmp/$l.err" || fail "report $l: $(cat "$tmp/$l.err")"
	STROBE_DEBUG_DIRS=$tmp/empty "$STROBE" report --pid "$pid" "$@" \
		>"$tmp/$l.txt" 2>>"$tmp/$l.err" || fail "report $l: $(cat "$tmp/$l.err")"
}
named() {
	python3 - "$tmp/$1.csv" "$bid" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
s = {r["symbol"]: int(r["samples"]) for r in rows if r["build_id"] == sys.argv[2]}
w = [s.get(f, 0) for f in ("work60", "work30", "work10")]
print(f"work60/30/10 = {w}, [unknown] = {s.get('[unknown]', 0)}")
sys.exit(0 if w[0] > w[1] > w[2] > 0 else 1)
PY
}
unnamed() {
	! grep -q ',work60,' "$tmp/$1.csv" && grep -q "\[unknown\]" "$tmp/$1.csv" ||
		fail "$1: work60 named, or no [unknown]: $(cat "$tmp/$1.csv")"
}
# binaries LABEL: the distinct binaries of LABEL's CSV
binaries() {
	python3 -c 'import csv, sys; print(len({r["binary"] for r in csv.DictReader(open(sys.argv[1]))}))' \
		"$tmp/$1.csv"
}

# a. DEBUGINFOD_URLS unset, then blank: nothing asked
before=$(buildid_requests)
unset DEBUGINFOD_URLS
DEBUGINFOD_CACHE_PATH=$tmp/cache-a report unset
DEBUGINFOD_URLS="  " DEBUGINFOD_CACHE_PATH=$tmp/cache-a report blank
after=$(buildid_requests)
for l in unset blank; do
	unnamed $l
	grep -qi debuginfod "$tmp/$l.txt" "$tmp/$l.err" &&
		fail "$l: debuginfod mentioned: $(cat "$tmp/$l.txt" "$tmp/$l.err")"
done
[ "$after" = "$before" ] || fail "DEBUGINFOD_URLS unset: the server was asked ($before -> $after)"
[ -e "$tmp/cache-a" ] && fail "DEBUGINFOD_URLS unset: a debuginfod cache was made"
ok "without DEBUGINFOD_URLS: work60 unnamed, nothing asked, no cache"

# b. DEBUGINFOD_URLS set, an empty cache: named from the fetched file
mkdir "$tmp/cache-b"
before=$(buildid_requests)
export DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$tmp/cache-b
report fetched
named fetched || fail "not named from debuginfod: $(cat "$tmp/fetched.csv")"
cached=$tmp/cache-b/$bid/debuginfo
[ -f "$cached" ] || fail "no $cached: $(find "$tmp/cache-b")"
grep -q "note: $tmp/bin/split: symbols from debuginfod: $cached\$" "$tmp/fetched.txt" ||
	fail "no note of debuginfod: $(cat "$tmp/fetched.txt")"
grep -q "symbols from debuginfod: $cached" "$tmp/fetched.err" ||
	fail "CSV report: no note on stderr: $(cat "$tmp/fetched.err")"
# two reports: each binary asked at most once per report, not per sample
# (the library's cache answers the second for the binary it has)
asked=$(($(buildid_requests) - before))
nbin=$(binaries fetched)
samples=$(csv_get "$tmp/fetched.csv" symbol work60 samples)
echo "/buildid/ requests: $asked for 2 reports of $nbin binaries ($samples samples in work60)"
[ "$asked" -ge 1 ] && [ "$asked" -le $((2 * nbin)) ] ||
	fail "$asked /buildid/ requests for 2 reports of $nbin binaries"
# the lines come from the fetched DWARF, as addr2line reads the local file
report lines --by line
grep -q 'split603010\.c:[0-9]' "$tmp/lines.csv" || fail "no source lines: $(head "$tmp/lines.csv")"
ok "with DEBUGINFOD_URLS: named from $cached, noted, $asked requests for $nbin binaries, lines too"

# c. a closed port: the report succeeds, quickly, and says so once
closed=$(free_port)
export DEBUGINFOD_URLS=http://127.0.0.1:$closed DEBUGINFOD_CACHE_PATH=$tmp/cache-c
t0=$(date +%s)
report closed
t1=$(date +%s)
unnamed closed
[ $((t1 - t0)) -le 10 ] || fail "closed port: the reports took $((t1 - t0)) s"
n=$(grep -c "debuginfod: .*could not be fetched.*(server http://127.0.0.1:$closed)" "$tmp/closed.txt")
[ "$n" = 1 ] || fail "closed port: $n summary lines: $(cat "$tmp/closed.txt")"
grep -q "strobe report: note: debuginfod: .*could not be fetched" "$tmp/closed.err" ||
	fail "closed port, CSV: no summary on stderr: $(cat "$tmp/closed.err")"
# plot and export say it once too, on stderr
STROBE_DEBUG_DIRS=$tmp/empty "$STROBE" export --format csv -o "$tmp/closed-export.csv" \
	2>"$tmp/closed-export.err" || fail "export: $(cat "$tmp/closed-export.err")"
STROBE_DEBUG_DIRS=$tmp/empty "$STROBE" plot --event samples --by symbol --pid "$pid" \
	-o "$tmp/closed-plot.csv" 2>"$tmp/closed-plot.err" || fail "plot: $(cat "$tmp/closed-plot.err")"
for w in export plot; do
	f=$tmp/closed-$w.err
	[ "$(grep -c "^strobe $w: note: debuginfod: .*could not be fetched" "$f")" = 1 ] ||
		fail "$w: not one debuginfod line: $(cat "$f")"
done
grep "debuginfod:" "$tmp/closed.txt"
ok "a closed port: unnamed in $((t1 - t0)) s, one line (report, plot, export) says what could not be fetched"

# d. a server answering garbage with 200: refused, not used
gport=$(free_port)
cat >"$tmp/fake.py" <<'PY'
import http.server, sys
mode = sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if mode == "garbage":
            body = b"\x7fELF but not really" * 64
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    def log_message(self, *a):
        pass
class S(http.server.HTTPServer):
    allow_reuse_address = True
    def process_request(self, req, addr):
        if mode == "silent":	# accept, never answer
            self.held = getattr(self, "held", []) + [req]
            return
        super().process_request(req, addr)
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
python3 "$tmp/fake.py" "$gport" garbage &
fake_pid=$!
i=0
until curl -s -o /dev/null "http://127.0.0.1:$gport/"; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "the garbage server did not start"
	sleep 0.1
done
export DEBUGINFOD_URLS=http://127.0.0.1:$gport DEBUGINFOD_CACHE_PATH=$tmp/cache-d
report garbage
unnamed garbage
grep -q "refused: its build-id is not the binary's" "$tmp/garbage.txt" ||
	fail "garbage: no refusal noted: $(cat "$tmp/garbage.txt")"
grep -q "debuginfod: .*fetched but refused" "$tmp/garbage.txt" ||
	fail "garbage: no summary: $(cat "$tmp/garbage.txt")"
kill "$fake_pid"
wait "$fake_pid" 2>/dev/null
ok "a server answering garbage: the file is refused, work60 unnamed"

# e. a server that never answers: bounded by the default timeout
sport=$(free_port)
python3 "$tmp/fake.py" "$sport" silent &
fake_pid=$!
python3 -c '
import socket, sys, time
for i in range(100):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit(1)' "$sport" || fail "the silent server did not start"
export DEBUGINFOD_URLS=http://127.0.0.1:$sport DEBUGINFOD_CACHE_PATH=$tmp/cache-e
t0=$(date +%s)
STROBE_DEBUG_DIRS=$tmp/empty "$STROBE" report --pid "$pid" --format csv >"$tmp/silent.csv" \
	2>"$tmp/silent.err" || fail "report silent: $(cat "$tmp/silent.err")"
t1=$(date +%s)
unnamed silent
[ $((t1 - t0)) -le 30 ] || fail "a silent server held the report $((t1 - t0)) s"
grep -q "debuginfod: .*could not be fetched (timed out" "$tmp/silent.err" ||
	fail "silent server: no summary: $(cat "$tmp/silent.err")"
grep "debuginfod:" "$tmp/silent.err"
ok "a server that never answers: the report ends in $((t1 - t0)) s, unnamed, and says so"
