#!/bin/sh
# t0330-hostile-elf: crafted ELF files mapped PROT_EXEC by a process during
# a session (issue 9): a 4 GiB program header table in a 4 KiB file,
# 65,000 PT_NOTE segments over the same 1 MiB, and 100,000 stapsdt notes,
# mapped by user nobody outside group strobe and (copies) by a member.
# strobed reads every one of them (to key it) and must neither die nor
# stall: the session ends cleanly and promptly, strobed is still alive and
# answers, and it exits cleanly when stopped.  Everything here runs with
# 1 GiB of address space (ulimit -v), as a daemon under a memory limit
# would: an allocation sized by the file then fails instead of being
# overcommitted, and it must fail that binary only.
. "$(dirname "$0")/lib.sh"
need_root
need_users

python3 - "$tmp" <<'PY' || fail "writing the crafted files"
import struct, sys
d = sys.argv[1]

def ehdr(phoff, phnum, phentsize, shoff=0, shnum=0, shentsize=0, shstrndx=0):
    return (b"\x7fELF" + bytes([2, 1, 1]) + bytes(9) +
            struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, phoff, shoff, 0, 64,
                        phentsize, phnum, shentsize, shnum, shstrndx))

def phdr(typ, off, size):
    return struct.pack("<IIQQQQQQ", typ, 4, off, 0, 0, size, size, 4)

# e_phnum 0xfffe of e_phentsize 0xffff
open(d + "/huge-phdrs.so", "wb").write(ehdr(64, 0xfffe, 0xffff).ljust(4096, b"\0"))

# 65,000 PT_NOTE segments, all over the same 1 MiB of notes
n = 65000
notes = 64 + n * 56
img = ehdr(64, n, 56) + b"".join(phdr(4, notes, 1 << 20) for _ in range(n))
open(d + "/overlap.so", "wb").write(img + bytes(1 << 20))

# 100,000 stapsdt notes in .note.stapsdt
note = (struct.pack("<III", 8, 29, 3) + b"stapsdt\0" +
        struct.pack("<QQQ", 0x1000, 0, 0) + b"p\0n\0\0").ljust(52, b"\0")
count = 100000
shstr = b"\0.text\0.note.stapsdt\0.shstrtab\0"
shstr_off = 80 + count * len(note)
shoff = (shstr_off + len(shstr) + 7) & ~7
def shdr(name, typ, flags, addr, off, size, align):
    return struct.pack("<IIQQQQIIQQ", name, typ, flags, addr, off, size, 0, 0, align, 0)
img = ehdr(0, 0, 0, shoff, 4, 64, 3).ljust(80, b"\0") + note * count + shstr
img = img.ljust(shoff, b"\0")
img += (bytes(64) + shdr(1, 1, 6, 0x1000, 64, 16, 16) +
        shdr(7, 7, 0, 0, 80, count * len(note), 4) +
        shdr(21, 3, 0, 0, shstr_off, len(shstr), 1))
open(d + "/many-notes.so", "wb").write(img)

open(d + "/mapper.py", "w").write('''
import mmap, os, sys, time
maps = []
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY)
    maps.append(mmap.mmap(fd, 0, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_EXEC))
    os.close(fd)
end = time.time() + 2
while time.time() < end:
    pass
''')
PY

for f in huge-phdrs overlap many-notes; do
	cp "$tmp/$f.so" "$tmp/m-$f.so" || fail "copy"
done
ulimit -v 1048576
start_daemon
t0=$(date +%s)
"$STROBE" start --sample-event cpu-clock -F 1000 --name hostile >/dev/null 2>"$tmp/start.err" ||
	fail "start: $(cat "$tmp/start.err")"
as_nobody /usr/bin/python3 "$tmp/mapper.py" "$tmp/huge-phdrs.so" "$tmp/overlap.so" \
	"$tmp/many-notes.so" & p1=$!
as_member /usr/bin/python3 "$tmp/mapper.py" "$tmp/m-huge-phdrs.so" "$tmp/m-overlap.so" \
	"$tmp/m-many-notes.so" & p2=$!
wait $p1 || fail "mapper as nobody"
wait $p2 || fail "mapper as a member"
"$STROBE" stop >"$tmp/record.err" 2>&1 || fail "stop: $(cat "$tmp/record.err"; cat "$tmp/strobed.log")"
t1=$(date +%s)
grep -q "samples" "$tmp/record.err" || fail "stop summary: $(cat "$tmp/record.err")"
[ $((t1 - t0)) -le 12 ] || fail "the session took $((t1 - t0)) s (strobed stalled)"
kill -0 "$daemon_pid" 2>/dev/null || fail "strobed died: $(cat "$tmp/strobed.log")"
"$STROBE" status >/dev/null 2>&1 || fail "strobed does not answer: $(cat "$tmp/strobed.log")"
ok "session with crafted ELF files mapped ended cleanly in $((t1 - t0)) s"

# Each was ingested: a binaries row, keyed by its contents (a malformed
# ELF has no build-id to trust) or marked with the problem that stopped it.
for f in huge-phdrs overlap many-notes m-huge-phdrs m-overlap m-many-notes; do
	row=$(sqlite3 "$STROBE_DB" "SELECT key || ' ' || coalesce(problem, '-') FROM binaries
		WHERE path = '$tmp/$f.so'") || fail "reading binaries"
	[ -n "$row" ] || fail "$f.so: no binaries row (not ingested)"
	ok "$f.so: $row"
done

"$STROBE" report --comm python3 --format csv >"$tmp/r.csv" 2>"$tmp/r.err" ||
	fail "report: $(cat "$tmp/r.err")"
ok "report works"

stop_daemon || fail "strobed did not exit cleanly: $(cat "$tmp/strobed.log")"
ok "strobed exits cleanly"
