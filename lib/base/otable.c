/*
 * otable.c - open-addressing hash table of fixed-size entries (see
 * otable.h).
 */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "otable.h"
#include "util.h"

void otable_init(struct otable *t, size_t size, size_t key_size, size_t min_cap)
{
	memset(t, 0, sizeof(*t));
	t->size = size;
	t->key_size = key_size;
	t->min_cap = min_cap >= 16 ? min_cap : 16;
}

void otable_free(struct otable *t)
{
	free(t->ent);
	free(t->used);
	t->ent = t->used = NULL;
	t->cap = t->nr = 0;
}

static size_t slot_of(const struct otable *t, const void *key)
{
	size_t i = (size_t)XXH3_64bits(key, t->key_size) & (t->cap - 1);

	while (t->used[i] && memcmp(t->ent + i * t->size, key, t->key_size))
		i = (i + 1) & (t->cap - 1);
	return i;
}

static void grow(struct otable *t, size_t cap)
{
	struct otable old = *t;

	t->cap = cap;
	t->ent = xcalloc(cap, t->size);
	t->used = xcalloc(cap, 1);
	for (size_t j = 0; j < old.cap; j++) {
		size_t i;

		if (!old.used[j])
			continue;
		i = slot_of(t, old.ent + j * t->size);
		memcpy(t->ent + i * t->size, old.ent + j * t->size, t->size);
		t->used[i] = 1;
	}
	free(old.ent);
	free(old.used);
}

void *otable_find(const struct otable *t, const void *key)
{
	size_t i;

	if (!t->nr)
		return NULL;
	i = slot_of(t, key);
	return t->used[i] ? t->ent + i * t->size : NULL;
}

void *otable_get(struct otable *t, const void *key, int *added)
{
	size_t i;

	if ((t->nr + 1) * 2 > t->cap)
		grow(t, t->cap ? t->cap * 2 : t->min_cap);
	i = slot_of(t, key);
	*added = !t->used[i];
	if (*added) {
		unsigned char *p = t->ent + i * t->size;

		memcpy(p, key, t->key_size);
		memset(p + t->key_size, 0, t->size - t->key_size);
		t->used[i] = 1;
		t->nr++;
	}
	return t->ent + i * t->size;
}

void otable_clear(struct otable *t)
{
	if (t->nr)
		memset(t->used, 0, t->cap);
	t->nr = 0;
}

void otable_filter(struct otable *t, int (*keep)(void *arg, const void *entry), void *arg)
{
	struct otable old = *t;

	if (!t->nr)
		return;
	/* reinserted: probing chains stay unbroken */
	t->ent = xcalloc(t->cap, t->size);
	t->used = xcalloc(t->cap, 1);
	t->nr = 0;
	for (size_t j = 0; j < old.cap; j++) {
		const unsigned char *p = old.ent + j * t->size;
		size_t i;

		if (!old.used[j] || !keep(arg, p))
			continue;
		i = slot_of(t, p);
		memcpy(t->ent + i * t->size, p, t->size);
		t->used[i] = 1;
		t->nr++;
	}
	free(old.ent);
	free(old.used);
}

void *otable_next(const struct otable *t, void *prev)
{
	size_t i = prev ? (size_t)((unsigned char *)prev - t->ent) / t->size + 1 : 0;

	if (!t->nr)
		return NULL;
	for (; i < t->cap; i++)
		if (t->used[i])
			return t->ent + i * t->size;
	return NULL;
}
