# strobedb.py - a strobe database for the end-to-end tests' Python checks,
# read with nothing but Python's own sqlite3 and doc/SCHEMA.md: connect()
# opens it read-only and unpacks every sample block into a temporary table
# "samples" with the columns and rowids of the virtual table strobe shows.
# (Python's sqlite3 cannot load strobe's extension; this is also the proof
# that the documented format is enough to read the file without strobe.)
import sqlite3

COLS = ["time_ns", "tsc", "cpu", "pid", "tid", "comm_id", "binary_id", "offset",
        "flags"] + ["c%d" % i for i in range(8)] + ["period", "stack_id"]


def _varint(b, p):
    x, shift = 0, 0
    while True:
        byte = b[p]
        p += 1
        x |= (byte & 0x7f) << shift
        if not byte & 0x80:
            return x, p
        shift += 7


def decode_block(data, nr):
    """The rows of one sample block: a list of nr lists of 19 values (None: NULL)."""
    version = data[0]
    assert version in (1, 2, 3), "sample block version %d" % version
    n, p = _varint(data, 1)
    ncols, p = _varint(data, p)
    # version 1: 17 columns, no period; version 2: 18 or more (no stack_id),
    # version 3: 19 or more; columns past those of the version skipped
    known = {1: 17, 2: 18, 3: 19}[version]
    assert n == nr and (ncols == 17 if version == 1 else ncols >= known)
    rows = [[None] * len(COLS) for _ in range(nr)]
    for c in range(ncols):
        mode = data[p]
        p += 1
        assert mode <= (2 if version == 1 else 3), "column mode %d" % mode
        if mode == 0:
            continue
        length, p = _varint(data, p)
        end = p + length
        if c >= known:
            p = end
            continue
        if mode == 3:
            z, p = _varint(data, p)
            v = (z >> 1) ^ -(z & 1)
            for i in range(nr):
                rows[i][c] = v
            assert p == end, "column %d does not fill its length" % c
            continue
        present = [True] * nr
        if mode == 2:
            bitmap = data[p:p + (nr + 7) // 8]
            p += (nr + 7) // 8
            present = [bool(bitmap[i // 8] & (1 << (i % 8))) for i in range(nr)]
        prev = 0
        for i in range(nr):
            if not present[i]:
                continue
            z, p = _varint(data, p)
            prev = (prev + ((z >> 1) ^ -(z & 1))) & (2**64 - 1)
            rows[i][c] = prev - 2**64 if prev >= 2**63 else prev
        assert p == end, "column %d does not fill its length" % c
    assert p == len(data), "bytes left over in a sample block"
    return rows


def connect(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    # a system-wide session holds every process's names and paths, which
    # need not be UTF-8 (t0410's hostile names): keep their bytes
    db.text_factory = lambda b: b.decode("utf-8", "surrogateescape")
    db.execute("CREATE TEMP TABLE samples (session_id INTEGER, %s)" %
               ", ".join(c + " INTEGER" for c in COLS))
    rows = []
    for first, sid, nr, data in db.execute(
            "SELECT first_row, session_id, nr, data FROM sample_blocks ORDER BY first_row"):
        for i, r in enumerate(decode_block(data, nr)):
            rows.append([first + i, sid] + r)
    db.executemany("INSERT INTO temp.samples(rowid, session_id, %s) VALUES (%s)" %
                   (", ".join(COLS), ", ".join("?" * (len(COLS) + 2))), rows)
    return db
