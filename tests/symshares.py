# symshares.py - per-(binary, symbol) shares of one workload's samples as
# strobe and perf recorded them in the same run, for bench/symcompare.sh and
# tests/t0146-symbols-vs-perf.sh.
#
# The workload is a process tree: a root pid (the wrapper shell that wrote
# its own pid and exec'd the program) and every process it forked,
# transitively.  Each tool's own view of the tree is used: strobe's
# processes table (pid, ppid) of the session, perf's PERF_RECORD_FORK
# records (perf script --show-task-events).  Samples are split by mode; the
# shares are of the tree's user-mode samples (kernel samples are counted
# apart: two per-CPU cpu-clock timers of one period interfere in the kernel,
# as tests/t0100-report.sh explains, which says nothing about symbols).
#
# Names are normalised so that both tools' spellings of one thing compare
# equal: a binary is its file name (perf's dso is a path, and so is
# strobe's binary, but a JIT perf map is perf's "/tmp/perf-PID.map" and
# strobe's "[anon]"); " (deleted)" is dropped; an unnamed address is
# "[unknown]" in both ("[binary unavailable]" in strobe counts as unnamed).
# Symbols are compared raw (strobe export --no-demangle, perf script
# --no-demangle: perf leaves out a C++ name's parameters, strobe does not),
# without an ELF symbol version ("cfree@GLIBC_2.2.5" is perf's spelling of
# strobe's "cfree"; "@plt" stays).
import collections
import csv
import math
import os
import re
import sqlite3
import subprocess

UNNAMED = ("[unknown]", "[binary unavailable]")


def norm_binary(b):
    b = b.strip()
    if b.endswith(" (deleted)"):
        b = b[:-len(" (deleted)")]
    if re.fullmatch(r"/tmp/perf-\d+\.map", b) or b in ("//anon", "[anon]", "[heap]", "[stack]"):
        return "[anon]"
    if b.startswith("[") or b.startswith("//"):
        return b
    return os.path.basename(b)


def norm_symbol(s):
    if s in UNNAMED:
        return "[unknown]"
    return re.sub(r"@@?(?!plt$)[A-Za-z_][\w.]*$", "", s)


def _tree(root, edges):
    """root and every pid descended from it in edges (parent -> children)"""
    seen, todo = {root}, [root]
    while todo:
        for c in edges.get(todo.pop(), ()):
            if c not in seen:
                seen.add(c)
                todo.append(c)
    return seen


_SAMPLE = re.compile(r"^\s*(.*?)\s+(-?\d+)/(-?\d+)\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")
_FORK = re.compile(r"PERF_RECORD_FORK\((\d+):(\d+)\):\((\d+):(\d+)\)")


PERF_SCRIPT = ["script", "--show-task-events", "--no-demangle", "-F", "comm,pid,tid,ip,sym,dso"]


def perf_samples(perf_data, root, perf="perf"):
    """[(pid, mode, binary, symbol)] of root's tree in perf.data"""
    out = subprocess.run([perf] + PERF_SCRIPT[:1] + ["-i", perf_data] + PERF_SCRIPT[1:],
                         capture_output=True, text=True, errors="replace", check=True).stdout
    return perf_parse(out, root)


def perf_parse(text, root):
    """[(pid, mode, binary, symbol)] of root's tree in the text of perf
    script with PERF_SCRIPT's options"""
    edges, rows = collections.defaultdict(set), []
    for line in text.splitlines():
        m = _FORK.search(line)
        if m:
            child, parent = int(m.group(1)), int(m.group(3))
            if child != parent:
                edges[parent].add(child)
            continue
        m = _SAMPLE.match(line)
        if m:
            ip = int(m.group(4), 16)
            rows.append((int(m.group(2)), "kernel" if ip >= 1 << 63 else "user",
                         norm_binary(m.group(6)), m.group(5)))
    pids = _tree(root, edges)
    return [r for r in rows if r[0] in pids]


def strobe_samples(db, export_csv, root):
    """[(pid, mode, binary, symbol)] of root's tree: strobe export --format
    csv --no-demangle of the latest session in db"""
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    sid, = c.execute("SELECT max(id) FROM sessions").fetchone()
    edges = collections.defaultdict(set)
    for pid, ppid in c.execute("SELECT pid, ppid FROM processes WHERE session_id=?", (sid,)):
        if ppid is not None and pid != ppid:
            edges[ppid].add(pid)
    c.close()
    pids = _tree(root, edges)
    rows = []
    with open(export_csv, newline="") as f:
        for r in csv.DictReader(f):
            pid = int(r["pid"])
            if pid in pids:
                rows.append((pid, r["mode"], norm_binary(r["binary"]), r["symbol"]))
    return rows


class Shares:
    """user-mode (binary, symbol) counts of one tool"""

    def __init__(self, rows):
        self.kernel = sum(r[1] != "user" for r in rows)
        user = [r for r in rows if r[1] == "user"]
        self.n = len(user)
        self.count = collections.Counter(
            (b, norm_symbol(s)) for _, _, b, s in user)
        self.unnamed = sum(v for (b, s), v in self.count.items() if s == "[unknown]")

    def share(self, key):
        return self.count.get(key, 0) / self.n if self.n else 0.0

    def top(self, k=10):
        return [key for key, _ in sorted(self.count.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]


def bound(a, n, b, m, sds=3.0, points=1.0):
    """points (percentage points) plus sds standard deviations of the
    difference of two proportions a/n and b/m (pooled), as a fraction"""
    p = (a + b) / (n + m) if n + m else 0.0
    return points / 100 + sds * math.sqrt(p * (1 - p) * (1 / max(n, 1) + 1 / max(m, 1)))


def compare(st, pf, k=10, sds=3.0):
    """the comparison of Shares st (strobe) and pf (perf): a dict with
    overlap (of the top k), rows (every key of either top k: key, strobe
    share, perf share, difference, bound), maxdiff (the largest difference,
    and its key), unnamed shares and their bound"""
    ts, tp = st.top(k), pf.top(k)
    rows = []
    for key in sorted(set(ts) | set(tp), key=lambda x: -(st.share(x) + pf.share(x))):
        a, b = st.count.get(key, 0), pf.count.get(key, 0)
        rows.append((key, st.share(key), pf.share(key), st.share(key) - pf.share(key),
                     bound(a, st.n, b, pf.n, sds)))
    worst = max(rows, key=lambda r: abs(r[3]), default=(None, 0, 0, 0, 0))
    us = st.unnamed / st.n if st.n else 0.0
    up = pf.unnamed / pf.n if pf.n else 0.0
    return {
        "overlap": len(set(ts) & set(tp)), "k": min(k, max(len(ts), len(tp))),
        "rows": rows, "maxdiff": abs(worst[3]), "maxkey": worst[0], "maxbound": worst[4],
        "unnamed_strobe": us, "unnamed_perf": up,
        # one-sided: strobe's unnamed share may exceed perf's by 1 point
        # plus the sampling noise of the difference
        "unnamed_bound": bound(st.unnamed, st.n, pf.unnamed, pf.n, sds),
    }


def keyname(key):
    return "%s:%s" % key if key else "-"
