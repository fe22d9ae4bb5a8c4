"""stracelog - reading the log of `strace -f -o` on strobed (tests/lib.sh
strace_daemon): who made which call, as whom, and from which image.

The tests that show strobed parses nothing as root (t0155, t0472, t0804)
each ask the same three things of a call: which pid made it, that pid's
last successful setresuid, and whether that pid executed strobed afresh
(an execveat of a worker's command line, lib/base/selfexec.c)."""
import re

_LINE = re.compile(r"(\d+)\s+(\w+)\((.*)")


class Log:
    def __init__(self, path):
        self.uid = {}		# pid -> the uid of its last successful setresuid
        self.fresh = set()	# pids that executed strobed afresh
        self.calls = []		# (pid, call, the rest of the line)
        for line in open(path):
            m = _LINE.match(line)
            if not m:
                continue
            pid, call, rest = m.groups()
            ok = rest.rstrip().endswith("= 0")
            if call == "execveat" and "--strobe-worker" in rest and ok:
                self.fresh.add(pid)
            elif call == "setresuid" and ok:
                self.uid[pid] = rest.split(",")[0]
            self.calls.append((pid, call, rest))

    def check(self, what, pids, strobed, uid, fresh=True):
        """Each pid of pids (those that did what) is not strobed's, took
        uid with its last setresuid and, when fresh, executed strobed
        afresh; raises AssertionError naming the first that did not."""
        assert pids, f"no {what} seen"
        for p in pids:
            assert p not in strobed, f"strobed's own thread {p} did {what}"
            assert self.uid.get(p) == uid, \
                f"{what} by {p} as uid {self.uid.get(p, '0 (no setresuid)')}"
            assert not fresh or p in self.fresh, \
                f"{what} by {p}, a forked copy of strobed (no execveat)"
        return (f"{what}: by {sorted(set(pids))}, each after setresuid({uid})"
                + (", executed afresh" if fresh else ""))
