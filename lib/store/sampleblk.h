/*
 * sampleblk.h - packed blocks of sample rows (schema 006, doc/SCHEMA.md
 * "sample_blocks").
 *
 * strobed stores a session's samples as blocks of up to SAMPLEBLK_MAX
 * consecutive rows, one SQLite row each, instead of one SQLite row per
 * sample: a block costs one INSERT, and its columns, delta- and
 * varint-encoded, take a third of the space.  The rows keep the columns
 * and the rowids that the old samples table had; samplevt.h shows them to
 * SQL as the table "samples" again.
 *
 * The encoding is column after column.  A block is
 *
 *	u8	SAMPLEBLK_VERSION (3; 2 had 18 columns, no stack; 1 had 17,
 *		no period, no mode 3)
 *	varint	nr of rows (1..SAMPLEBLK_MAX)
 *	varint	nr of columns (SAMPLEBLK_COLS; a reader skips columns past
 *		those it knows by their length)
 *	then, for each column in the order of enum sampleblk_col:
 *	u8	0: every value NULL (nothing follows)
 *		1: no NULL: the length, then nr values follow
 *		2: the length, then a bitmap of (nr + 7) / 8 bytes, bit i (byte
 *		   i / 8, bit i % 8) set when row i is NOT NULL, then one value
 *		   per set bit
 *		3: no NULL and every row the same value: the length, then
 *		   that one value
 *	varint	(modes 1 and 2) the length in bytes of the bitmap and values,
 *		so that a reader can skip the column
 *	values	each the difference from the column's previous non-NULL value
 *		(the first from 0), modulo 2^64, zigzag-mapped (0, -1, 1, -2
 *		... to 0, 1, 2, 3 ...) and written as a little-endian base-128
 *		varint (7 bits a byte, high bit set on all but the last byte).
 *
 * This is pure logic with no dependency but libc: the loadable SQLite
 * extension (lib/strobe_sqlite.so) is built from it too.
 */
#ifndef STROBE_SAMPLEBLK_H
#define STROBE_SAMPLEBLK_H

#include <stddef.h>
#include <stdint.h>

#define SAMPLEBLK_VERSION	3
/* Rows of one block at most.  Readers rely on it to find the block that
 * holds a rowid: its first row is at most SAMPLEBLK_MAX - 1 before it. */
#define SAMPLEBLK_MAX		4096

/* The columns of a sample row, in the old samples table's order, less
 * session_id (a column of the block's row). */
enum sampleblk_col {
	SB_TIME_NS, SB_TSC, SB_CPU, SB_PID, SB_TID, SB_COMM_ID, SB_BINARY_ID,
	SB_OFFSET, SB_FLAGS, SB_C0, SB_C1, SB_C2, SB_C3, SB_C4, SB_C5, SB_C6, SB_C7,
	SB_PERIOD,		/* version 2 */
	SB_STACK,		/* version 3: stacks.id (schema 14); NULL: none */
	SAMPLEBLK_COLS
};

struct sampleblk_row {
	int64_t v[SAMPLEBLK_COLS];
	uint32_t null;		/* bit c set: column c is NULL (v[c] is 0) */
};

/* Bytes sampleblk_encode() may write for nr rows, at most. */
size_t sampleblk_bound(size_t nr);

/* Encode rows[0..nr) (1 <= nr <= SAMPLEBLK_MAX) into out, which has room
 * for sampleblk_bound(nr) bytes; returns the bytes written. */
size_t sampleblk_encode(const struct sampleblk_row *rows, size_t nr, uint8_t *out);

/* Decode a block of len bytes that must hold exactly nr rows into
 * rows[0..nr).  Never reads outside data[0..len): 0 on success, -1 when
 * the block is malformed (a wrong version, row count or column count, a
 * truncated or overlong varint, bytes left over). */
int sampleblk_decode(const uint8_t *data, size_t len, size_t nr, struct sampleblk_row *rows);

/* sampleblk_decode() of only the columns whose bit (1 << SB_*) is set in
 * cols: the others are skipped by their length, their null bit set and
 * their v[] left as it was (callers must not read them).  A skipped
 * column is checked no further than its length. */
#define SAMPLEBLK_ALL	((1u << SAMPLEBLK_COLS) - 1)
int sampleblk_decode_cols(const uint8_t *data, size_t len, size_t nr, uint32_t cols,
			  struct sampleblk_row *rows);

#endif
