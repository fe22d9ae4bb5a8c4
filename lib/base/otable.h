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
 * A table keyed by strings: an entry is a struct of size bytes whose first
 * member is a char *, its key, a NUL-terminated copy that
 * otable_get_str() makes and otable_free(), otable_clear() and (for the
 * entries dropped) otable_filter() free; compared with strcmp, hashed
 * (FNV-1a, not keyed either).  The caller never changes an entry's key.
 * otable_find() and otable_get() are for the other tables, these two for
 * these only.
 */
void otable_init_str(struct otable *t, size_t size, size_t min_cap);
void *otable_find_str(const struct otable *t, const char *key);
/* As otable_get(): a new entry is the copy of key followed by zeroes. */
void *otable_get_str(struct otable *t, const char *key, int *added);

#endif
