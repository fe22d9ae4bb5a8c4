/*
 * otable.h - an open-addressing hash table of fixed-size entries: the one
 * behind ingest's in-memory sums (sample_agg, sample_time, stack_agg),
 * its stack ids, its unwinding failure counts, its per-thread state of
 * exact attribution, and (keyed by strings) its binaries, comms and
 * cgroups by name.
 *
 * An entry is a struct whose first key_size bytes are its key: compared
 * byte for byte and hashed (not keyed: see otable.c), so a caller zeroes
 * the key's padding
 * (memset before filling the fields) or, better, lays the key out with
 * none.  Linear probing in a power-of-two array at most half full; no
 * removal but otable_clear() and otable_filter().  No allocation once the
 * table has grown.
 *
 * A table made by otable_init_str() is keyed by strings instead (below).
 */
#ifndef STROBE_OTABLE_H
#define STROBE_OTABLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct otable {
	unsigned char *ent;	/* cap slots of stride bytes: a hash word
				 * (0: empty), then the entry (8-byte aligned) */
	size_t size, key_size, stride;
	size_t cap, nr;
	size_t min_cap;		/* the first allocation, a power of two */
	int str;		/* keyed by strings: otable_init_str() */
};

/* An empty table of entries of size bytes, keyed by their first key_size. */
void otable_init(struct otable *t, size_t size, size_t key_size, size_t min_cap);
void otable_free(struct otable *t);

/* The entry whose key is key's (key points at a whole entry, or at least
 * at key_size bytes); NULL if none. */
void *otable_find(const struct otable *t, const void *key);
/* The same, adding it when missing: a new entry is the key followed by
 * zeroes, and *added is set (1: new, 0: there).  Pointers into the table
 * are valid until the next otable_get(). */
void *otable_get(struct otable *t, const void *key, int *added);

/* Empty the table, keeping its memory. */
void otable_clear(struct otable *t);
/* Keep only the entries keep(arg, entry) returns nonzero for. */
void otable_filter(struct otable *t, int (*keep)(void *arg, const void *entry), void *arg);

/* for (void *p = NULL; (p = otable_next(t, p));): every entry. */
void *otable_next(const struct otable *t, void *prev);

/*
 * otable_find() and otable_get() for a hot path whose keys are n bytes, n
 * a constant (the table's key_size): inlined there, the key's hash and
 * comparison unrolled.  The same table, the same entries: otable.c's
 * otable_find() and otable_get() are these with n = key_size.
 */
/* Always inlined, their loops unrolled for a constant n: else a compiler
 * may make one copy for any n. */
#define OTABLE_INLINE static inline __attribute__((always_inline))
OTABLE_INLINE void *otable_find_sized(const struct otable *t, const void *key, size_t n);
OTABLE_INLINE void *otable_get_sized(struct otable *t, const void *key, size_t n, int *added);

/*
 * A table keyed by strings: an entry is a struct of size bytes whose first
 * member is a char *, its key, a NUL-terminated copy that
 * otable_get_str() makes and otable_free(), otable_clear() and (for the
 * entries dropped) otable_filter() free; compared with strcmp, hashed
 * (hash_string(), not keyed either).  The caller never changes an entry's key.
 * otable_find() and otable_get() are for the other tables, these two for
 * these only.
 */
void otable_init_str(struct otable *t, size_t size, size_t min_cap);
void *otable_find_str(const struct otable *t, const char *key);
/* As otable_get(): a new entry is the copy of key followed by zeroes. */
void *otable_get_str(struct otable *t, const char *key, int *added);


/* The inline core of the tables of byte keys (not of string keys). */

/* Double t's array (its first: min_cap slots). */
void otable_grow(struct otable *t);

OTABLE_INLINE uint64_t *otable_slot_at(const struct otable *t, size_t i)
{
	return (uint64_t *)(t->ent + i * t->stride);
}

/* A multiply-xorshift over the key's 8-byte words, bytewise for the rest:
 * as cheap as a hash written for one struct.  Not keyed: a caller whose
 * keys an adversary picks hashes them first (ingest's stack keys are a
 * secret-seeded hash). */
OTABLE_INLINE uint64_t otable_key_hash(const unsigned char *k, size_t n)
{
	uint64_t h = 0x632BE59BD9B4E019ULL ^ n;
	size_t i = 0;

#pragma GCC unroll 8
	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, k + i, 8);
		h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ k[i]) * 0x100000001B3ULL;
	return (h ^ (h >> 32)) | 1;
}

/* Whether keys a and b (n bytes) are equal: word by word (the keys of
 * the hot tables are a few words; a call of memcmp costs more). */
OTABLE_INLINE int otable_key_eq(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t i = 0;

#pragma GCC unroll 8
	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return 0;
	}
	for (; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* The slot of key (n bytes, hash h): its own, or the empty one where it
 * goes. */
OTABLE_INLINE size_t otable_slot_of(const struct otable *t, const void *key, size_t n,
				    uint64_t h)
{
	size_t i = (size_t)(h >> 1) & (t->cap - 1);

	for (;; i = (i + 1) & (t->cap - 1)) {
		uint64_t *s = otable_slot_at(t, i);

		if (!*s || (*s == h && otable_key_eq((const unsigned char *)(s + 1), key, n)))
			return i;
	}
}

OTABLE_INLINE void *otable_find_sized(const struct otable *t, const void *key, size_t n)
{
	uint64_t *s;

	if (!t->nr)
		return NULL;
	s = otable_slot_at(t, otable_slot_of(t, key, n, otable_key_hash(key, n)));
	return *s ? s + 1 : NULL;
}

OTABLE_INLINE void *otable_get_sized(struct otable *t, const void *key, size_t n, int *added)
{
	uint64_t h = otable_key_hash(key, n);
	uint64_t *s;

	if ((t->nr + 1) * 2 > t->cap)
		otable_grow(t);
	s = otable_slot_at(t, otable_slot_of(t, key, n, h));
	*added = !*s;
	if (*added) {
		unsigned char *p = (unsigned char *)(s + 1);

		*s = h;
		memcpy(p, key, n);
		memset(p + n, 0, t->size - n);
		t->nr++;
	}
	return s + 1;
}

#endif
