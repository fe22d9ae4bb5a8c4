/*
 * otable.c - open-addressing hash table of fixed-size entries (see
 * otable.h).
 *
 * A slot is an 8-byte word, the key's hash with bit 0 set (0: empty),
 * followed by the entry: a probe reads one place in memory, and compares
 * keys only when the hashes agree.  A string-keyed table's entry starts
 * with a pointer to its key (otable_init_str): the same slots, another
 * hash and comparison.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "otable.h"
#include "util.h"

void otable_init(struct otable *t, size_t size, size_t key_size, size_t min_cap)
{
	memset(t, 0, sizeof(*t));
	t->size = size;
	t->key_size = key_size;
	t->stride = 8 + ((size + 7) & ~(size_t)7);
	t->min_cap = 16;
	while (t->min_cap < min_cap)
		t->min_cap *= 2;
}

void otable_init_str(struct otable *t, size_t size, size_t min_cap)
{
	otable_init(t, size, sizeof(char *), min_cap);
	t->str = 1;
}

static uint64_t *slot_at(const struct otable *t, size_t i)
{
	return otable_slot_at(t, i);
}

/* The key of a string-keyed table's entry e. */
static char *str_key(const void *e)
{
	char *k;

	memcpy(&k, e, sizeof(k));
	return k;
}

/* A string-keyed table's copies of its keys: freed. */
static void free_keys(struct otable *t)
{
	for (size_t i = 0; t->str && t->nr && i < t->cap; i++)
		if (*slot_at(t, i))
			free(str_key(slot_at(t, i) + 1));
}

void otable_free(struct otable *t)
{
	free_keys(t);
	free(t->ent);
	t->ent = NULL;
	t->cap = t->nr = 0;
}

/* The string hash (hash_string, FNV-1a), folded as otable_key_hash()'s.
 * Not keyed either: names the profiled choose (paths, comms, cgroups) can
 * be made to collide, which costs probing time only, bounded by the
 * caller's limit on its entries (ingest.h's). */
static uint64_t str_hash(const char *s)
{
	uint64_t h = hash_string(HASH_STRING_INIT, s);

	return (h ^ (h >> 32)) | 1;
}

/* The slot of key (hash h) in a string-keyed table: its own, or the
 * empty one where it goes (otable_slot_of() for the others). */
static size_t slot_of_str(const struct otable *t, const char *key, uint64_t h)
{
	size_t i = (size_t)(h >> 1) & (t->cap - 1);

	for (;; i = (i + 1) & (t->cap - 1)) {
		uint64_t *s = slot_at(t, i);

		if (!*s || (*s == h && !strcmp(str_key(s + 1), key)))
			return i;
	}
}

/* The empty slot where an entry of hash h goes, its key known to be
 * absent (moving entries to a new array: they are distinct). */
static size_t slot_free(const struct otable *t, uint64_t h)
{
	size_t i = (size_t)(h >> 1) & (t->cap - 1);

	while (*slot_at(t, i))
		i = (i + 1) & (t->cap - 1);
	return i;
}

void otable_grow(struct otable *t)
{
	struct otable old = *t;
	size_t cap = t->cap ? t->cap * 2 : t->min_cap;

	t->cap = cap;
	t->ent = xcalloc(cap, t->stride);
	for (size_t j = 0; j < old.cap; j++) {
		uint64_t *s = slot_at(&old, j);

		if (*s)
			memcpy(slot_at(t, slot_free(t, *s)), s, t->stride);
	}
	free(old.ent);
}

void *otable_find(const struct otable *t, const void *key)
{
	return otable_find_sized(t, key, t->key_size);
}

void *otable_get(struct otable *t, const void *key, int *added)
{
	return otable_get_sized(t, key, t->key_size, added);
}

void *otable_find_str(const struct otable *t, const char *key)
{
	uint64_t h;
	uint64_t *s;

	if (!t->nr)
		return NULL;
	h = str_hash(key);
	s = slot_at(t, slot_of_str(t, key, h));
	return *s ? s + 1 : NULL;
}

void *otable_get_str(struct otable *t, const char *key, int *added)
{
	uint64_t h = str_hash(key);
	uint64_t *s;

	if ((t->nr + 1) * 2 > t->cap)
		otable_grow(t);
	s = slot_at(t, slot_of_str(t, key, h));
	*added = !*s;
	if (*added) {
		unsigned char *p = (unsigned char *)(s + 1);
		char *copy = xstrdup(key);

		*s = h;
		memcpy(p, &copy, sizeof(copy));
		memset(p + sizeof(copy), 0, t->size - sizeof(copy));
		t->nr++;
	}
	return s + 1;
}

void otable_clear(struct otable *t)
{
	free_keys(t);
	if (t->nr)
		memset(t->ent, 0, t->cap * t->stride);
	t->nr = 0;
}

void otable_filter(struct otable *t, int (*keep)(void *arg, const void *entry), void *arg)
{
	struct otable old = *t;

	if (!t->nr)
		return;
	/* reinserted: probing chains stay unbroken */
	t->ent = xcalloc(t->cap, t->stride);
	t->nr = 0;
	for (size_t j = 0; j < old.cap; j++) {
		uint64_t *s = slot_at(&old, j);

		if (!*s)
			continue;
		if (!keep(arg, s + 1)) {
			if (t->str)
				free(str_key(s + 1));
			continue;
		}
		memcpy(slot_at(t, slot_free(t, *s)), s, t->stride);
		t->nr++;
	}
	free(old.ent);
}

void *otable_next(const struct otable *t, void *prev)
{
	size_t i = prev ? (size_t)((unsigned char *)prev - 8 - t->ent) / t->stride + 1 : 0;

	if (!t->nr)
		return NULL;
	for (; i < t->cap; i++)
		if (*slot_at(t, i))
			return slot_at(t, i) + 1;
	return NULL;
}
