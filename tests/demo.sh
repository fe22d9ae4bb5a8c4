#!/bin/sh
# demo.sh - the main job: a real system-wide session over the bundled
# workloads with call stacks, then the hot-spot reports, a timeline image
# and a flame graph.  Run by
# 'make demo' (as root).  STROBE_DEMO_DIR chooses where the image goes.
set -e
top=${STROBE_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
build=${STROBE_BUILD:-$top}
strobe=$build/tools/strobe
wl=$build/tests/workloads
export STROBED=$build/daemon/strobed
db=${STROBE_DB:-/var/lib/strobe/strobe.db}
out=${STROBE_DEMO_DIR:-$build}

if [ "$(id -u)" != 0 ]; then
	echo "demo: run as root: system-wide profiling needs it" >&2
	exit 1
fi
echo "== strobe record: a system-wide session while the bundled workloads run"
echo "   (split603010: work60/work30/work10 do 60/30/10 of the CPU work;"
echo "    calltree-fp: a known call tree, with frame pointers;"
echo "    pagetouch: exactly 200000 first-touch page faults in one burst;"
echo "    tlbwalk: walks of 22..41 pages, a USDT marker per size)"
"$strobe" record --db "$db" --name demo -g -e page-faults,context-switches \
	--marker "$wl/tlbwalk:tlbwalk:size" -- \
	sh -c "'$wl/split603010' 3 & '$wl/calltree-fp' 2 & sleep 0.5; '$wl/pagetouch' 200000 --phases >/dev/null;
	       '$wl/tlbwalk' 22 41 -P 100000 >/dev/null; wait"
echo
echo "== strobe report --by binary"
"$strobe" report --db "$db" --by binary --limit 8
echo
echo "== strobe report --by symbol (the hot spots)"
"$strobe" report --db "$db" --by symbol --limit 12
echo
echo "== strobe report --children (inclusive figures from the call stacks, -g)"
echo "   (calltree-fp: main -> outer_a -> leaf does 60% of its work, main -> outer_b -> leaf 40%)"
"$strobe" report --db "$db" --children --comm calltree-fp --limit 5
echo
echo "== strobe report --callers leaf"
"$strobe" report --db "$db" --callers leaf --comm calltree-fp
echo
echo "== strobe report --markers (the tlbwalk probe hits)"
"$strobe" report --db "$db" --markers --format csv | head -n 6
echo
echo "== strobe plot: when did the page faults happen? (the timeline)"
"$strobe" plot --db "$db" --event page-faults -o "$out/timeline.png"
"$strobe" plot --db "$db" --event samples --by binary --top 3 --term --size 100x24
echo "timeline image: $out/timeline.png"
"$strobe" flamegraph --db "$db" -o "$out/flamegraph.svg"
echo "flame graph (open in a browser): $out/flamegraph.svg"
echo
echo "== strobe sessions"
"$strobe" sessions --db "$db"
echo
echo "database: $db (STROBE_DB or --db choose another)"
echo
echo "== explore it in the browser: the timeline, a window's hot spots, flame graph, call tree and diff"
echo "   $strobe ui --db $db"
echo "   (serves on 127.0.0.1 only and prints the URL to open, with its token; Ctrl-C stops it)"
