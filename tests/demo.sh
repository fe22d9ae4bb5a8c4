#!/bin/sh
# demo.sh - the main job: a real system-wide session over the bundled
# workloads, then the hot-spot reports and a timeline image.  Run by
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
echo "    pagetouch: exactly 200000 first-touch page faults in one burst;"
echo "    tlbwalk: walks of 22..41 pages, a USDT marker per size)"
"$strobe" record --db "$db" --name demo -e page-faults,context-switches \
	--marker "$wl/tlbwalk:tlbwalk:size" -- \
	sh -c "'$wl/split603010' 3 & sleep 0.5; '$wl/pagetouch' 200000 --phases >/dev/null;
	       '$wl/tlbwalk' 22 41 -P 100000 >/dev/null; wait"
echo
echo "== strobe report --by binary"
"$strobe" report --db "$db" --by binary --limit 8
echo
echo "== strobe report --by symbol (the hot spots)"
"$strobe" report --db "$db" --by symbol --limit 12
echo
echo "== strobe report --markers (the tlbwalk probe hits)"
"$strobe" report --db "$db" --markers --format csv | head -n 6
echo
echo "== strobe plot: when did the page faults happen? (the timeline)"
"$strobe" plot --db "$db" --event page-faults -o "$out/timeline.png"
"$strobe" plot --db "$db" --event samples --by binary --top 3 --term --size 100x24
echo "timeline image: $out/timeline.png"
echo
echo "== strobe sessions"
"$strobe" sessions --db "$db"
echo
echo "database: $db (STROBE_DB or --db choose another)"
