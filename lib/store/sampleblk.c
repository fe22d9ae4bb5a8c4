/*
 * sampleblk.c - packed blocks of sample rows (see sampleblk.h for the
 * format).
 */
#include <string.h>
#include "sampleblk.h"

#define VARINT_MAX	10	/* bytes of a 64-bit base-128 varint */

size_t sampleblk_bound(size_t nr)
{
	/* header, then per column a mode byte, its length, a bitmap and the values */
	return 1 + 2 * VARINT_MAX +
	       SAMPLEBLK_COLS * (1 + VARINT_MAX + (nr + 7) / 8 + nr * VARINT_MAX);
}

static uint8_t *varint_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* 0 on success; -1 when the varint runs past end or past 64 bits. */
static int varint_get(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t x = 0;

	for (int shift = 0; p < end; shift += 7) {
		uint8_t b = *p++;

		if (shift == 63 && b > 1)
			return -1;	/* more than 64 bits */
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			*v = x;
			return 0;
		}
		if (shift == 63)
			return -1;
	}
	return -1;
}

static uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ -(z & 1);
}

/*
 * One pass over the rows (each read once, in order), each column's bytes
 * written into a region of out of its worst-case size (its mode byte and
 * the varint of its length left room for in front); the regions are then
 * moved down to follow each other.  sampleblk_bound() is exactly the
 * header plus those regions.
 */
size_t sampleblk_encode(const struct sampleblk_row *rows, size_t nr, uint8_t *out)
{
	size_t stride = 1 + VARINT_MAX + (nr + 7) / 8 + nr * VARINT_MAX;
	uint8_t *col[SAMPLEBLK_COLS], *map[SAMPLEBLK_COLS], *p = out;
	uint64_t prev[SAMPLEBLK_COLS] = { 0 };
	uint32_t all_null = ~0u, any_null = 0, same = 0, skip;

	for (size_t i = 0; i < nr; i++) {
		all_null &= rows[i].null;
		any_null |= rows[i].null;
	}
	/* mode 3: a column with no NULL whose rows all hold one value */
	for (int c = 0; c < SAMPLEBLK_COLS; c++) {
		size_t i;

		if (any_null & (1u << c))
			continue;
		for (i = 1; i < nr && rows[i].v[c] == rows[0].v[c]; i++)
			;
		if (i == nr)
			same |= 1u << c;
	}
	for (int c = 0; c < SAMPLEBLK_COLS; c++) {
		uint32_t bit = 1u << c;
		uint8_t *q = out + 1 + 2 * VARINT_MAX + c * stride + 1 + VARINT_MAX;

		map[c] = NULL;
		if (!(all_null & bit) && (any_null & bit)) {
			map[c] = q;
			memset(q, 0, (nr + 7) / 8);
			q += (nr + 7) / 8;
		}
		col[c] = q;
		if (same & bit)
			col[c] = varint_put(q, zigzag((uint64_t)rows[0].v[c]));
	}
	skip = (all_null | same) & ((1u << SAMPLEBLK_COLS) - 1);
	for (size_t i = 0; i < nr; i++) {
		const struct sampleblk_row *r = &rows[i];

		for (int c = 0; c < SAMPLEBLK_COLS; c++) {
			uint64_t v;

			if (skip & (1u << c))
				continue;
			if (map[c]) {
				if (r->null & (1u << c))
					continue;
				map[c][i / 8] |= 1u << (i % 8);
			}
			v = (uint64_t)r->v[c];
			col[c] = varint_put(col[c], zigzag(v - prev[c]));
			prev[c] = v;
		}
	}
	*p++ = SAMPLEBLK_VERSION;
	p = varint_put(p, nr);
	p = varint_put(p, SAMPLEBLK_COLS);
	for (int c = 0; c < SAMPLEBLK_COLS; c++) {
		uint32_t bit = 1u << c;
		uint8_t *start = out + 1 + 2 * VARINT_MAX + c * stride + 1 + VARINT_MAX;
		size_t len = (size_t)(col[c] - start);

		if (all_null & bit) {
			*p++ = 0;
			continue;
		}
		*p++ = same & bit ? 3 : any_null & bit ? 2 : 1;
		p = varint_put(p, len);
		memmove(p, start, len);
		p += len;
	}
	return (size_t)(p - out);
}

/* Column c of nr rows from [p, end), which it must fill exactly. */
static int column_decode(const uint8_t *p, const uint8_t *end, int mode, size_t nr, int c,
			 struct sampleblk_row *rows)
{
	uint32_t bit = 1u << c;
	const uint8_t *map = NULL;
	uint64_t prev = 0;

	if (mode == 3) {
		uint64_t z;

		if (varint_get(&p, end, &z) || p != end)
			return -1;
		for (size_t i = 0; i < nr; i++)
			rows[i].v[c] = (int64_t)unzigzag(z);
		return 0;
	}
	if (mode == 2) {
		if ((size_t)(end - p) < (nr + 7) / 8)
			return -1;
		map = p;
		p += (nr + 7) / 8;
	}
	for (size_t i = 0; i < nr; i++) {
		uint64_t z;

		if (map && !(map[i / 8] & (1u << (i % 8)))) {
			rows[i].v[c] = 0;
			rows[i].null |= bit;
			continue;
		}
		/* most differences fit one byte */
		if (p < end && *p < 0x80)
			z = *p++;
		else if (varint_get(&p, end, &z))
			return -1;
		prev += unzigzag(z);
		rows[i].v[c] = (int64_t)prev;
	}
	return p == end ? 0 : -1;
}

int sampleblk_decode_cols(const uint8_t *data, size_t len, size_t nr, uint32_t cols,
			  struct sampleblk_row *rows)
{
	const uint8_t *p = data, *end = data + len;
	uint64_t n, ncols;
	uint8_t version, max_mode;
	int known_cols;

	if (nr < 1 || nr > SAMPLEBLK_MAX || len < 1)
		return -1;
	version = *p++;
	if (varint_get(&p, end, &n) || n != nr || varint_get(&p, end, &ncols))
		return -1;
	/* version 1: 17 columns (no period), modes 0-2; version 2: mode 3, and
	 * at least 18 columns (no stack); version 3: at least SAMPLEBLK_COLS.
	 * Columns past those known are skipped by their length; known columns
	 * a block lacks are NULL */
	if (version == 1 && ncols == SB_PERIOD)
		max_mode = 2, known_cols = SB_PERIOD;
	else if (version == 2 && ncols >= SB_STACK && ncols <= 64)
		max_mode = 3, known_cols = SB_STACK;
	else if (version == SAMPLEBLK_VERSION && ncols >= SAMPLEBLK_COLS && ncols <= 64)
		max_mode = 3, known_cols = SAMPLEBLK_COLS;
	else
		return -1;
	/* the columns the caller skips are NULL, their values left alone:
	 * writing them would cost as much as decoding the wanted ones */
	for (size_t i = 0; i < nr; i++)
		rows[i].null = ~cols & SAMPLEBLK_ALL;
	for (int c = 0; c < (int)ncols || c < SAMPLEBLK_COLS; c++) {
		int known = c < known_cols, want = known && (cols & (1u << c));
		uint64_t clen;
		uint8_t mode;

		if (c >= known_cols && c < SAMPLEBLK_COLS) {
			/* a column the block's version lacks (period in version
			 * 1, stack before version 3): NULL, 0; what the block
			 * has there is another version's, skipped */
			for (size_t i = 0; i < nr; i++) {
				rows[i].v[c] = 0;
				rows[i].null |= 1u << c;
			}
			if (c >= (int)ncols)
				continue;
		}
		if (p >= end)
			return -1;
		mode = *p++;
		if (mode > max_mode)
			return -1;
		if (mode == 0) {
			if (want)
				for (size_t i = 0; i < nr; i++) {
					rows[i].v[c] = 0;
					rows[i].null |= 1u << c;
				}
			continue;
		}
		if (varint_get(&p, end, &clen) || clen > (uint64_t)(end - p))
			return -1;
		if (want && column_decode(p, p + clen, mode, nr, c, rows))
			return -1;
		p += clen;
	}
	return p == end ? 0 : -1;
}

int sampleblk_decode(const uint8_t *data, size_t len, size_t nr, struct sampleblk_row *rows)
{
	return sampleblk_decode_cols(data, len, nr, SAMPLEBLK_ALL, rows);
}
