/*
 * readbudget.c - a session's budget for reading binaries (readbudget.h).
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "otable.h"
#include "readbudget.h"
#include "util.h"

/* A file by identity: the key laid out without padding (otable.h). */
struct seen_ent {
	uint64_t dev, ino, size, mtime_ns, ctime_ns;
	struct readbudget_seen out;
};

struct owner {
	uint32_t uid;
	uint64_t bytes, refused;
};

struct readbudget {
	uint64_t total, used;
	struct otable seen;
	struct owner owners[READBUDGET_OWNERS_MAX + 1];	/* the last: all others */
	int nr_owners;
};

struct readbudget *readbudget_new(uint64_t total)
{
	struct readbudget *b = xcalloc(1, sizeof(*b));

	b->total = total;
	b->owners[READBUDGET_OWNERS_MAX].uid = UINT32_MAX;	/* "other uids" */
	otable_init(&b->seen, sizeof(struct seen_ent), 5 * sizeof(uint64_t), 64);
	return b;
}

void readbudget_free(struct readbudget *b)
{
	if (!b)
		return;
	otable_free(&b->seen);
	free(b);
}

void readbudget_set_total(struct readbudget *b, uint64_t total)
{
	b->total = total;
}

static void ident(const struct stat *st, struct seen_ent *k)
{
	memset(k, 0, sizeof(*k));
	k->dev = st->st_dev;
	k->ino = st->st_ino;
	k->size = (uint64_t)st->st_size;
	k->mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000ULL + st->st_mtim.tv_nsec;
	k->ctime_ns = (uint64_t)st->st_ctim.tv_sec * 1000000000ULL + st->st_ctim.tv_nsec;
}

/* The account of uid (the shared last one once READBUDGET_OWNERS_MAX are
 * taken). */
static struct owner *owner_of(struct readbudget *b, uint32_t uid)
{
	for (int i = 0; i < b->nr_owners; i++)
		if (b->owners[i].uid == uid)
			return &b->owners[i];
	if (b->nr_owners == READBUDGET_OWNERS_MAX)
		return &b->owners[READBUDGET_OWNERS_MAX];
	b->owners[b->nr_owners].uid = uid;
	return &b->owners[b->nr_owners++];
}

const struct readbudget_seen *readbudget_take(struct readbudget *b, const struct stat *st,
					      int *ok, char *why, size_t len)
{
	struct seen_ent k, *s;
	struct owner *o;
	uint64_t size = (uint64_t)st->st_size, share;

	ident(st, &k);
	s = otable_find(&b->seen, &k);
	if (s) {
		*ok = 1;
		return &s->out;
	}
	o = owner_of(b, (uint32_t)st->st_uid);
	share = st->st_uid == 0 ? b->total : b->total / READBUDGET_SHARE_DIV;
	if (b->used + size > b->total) {
		snprintf(why, len, "not read: the session has read its limit of %" PRIu64
			 " MiB of binaries already", b->total >> 20);
	} else if (o->bytes + size > share) {
		snprintf(why, len, "not read: the files of uid %u have used their share of "
			 "the session's budget for reading binaries (%" PRIu64 " of %" PRIu64
			 " MiB)", (unsigned)st->st_uid, share >> 20, b->total >> 20);
	} else {
		o->bytes += size;
		b->used += size;
		*ok = 1;
		return NULL;
	}
	o->refused++;
	*ok = 0;
	return NULL;
}

void readbudget_done(struct readbudget *b, const struct stat *st, const char *fkey,
		     const char *key, int cached)
{
	struct seen_ent k, *s;
	int added;

	if (b->seen.nr >= READBUDGET_FILES_MAX)
		return;		/* read again when met again: charged again */
	ident(st, &k);
	s = otable_get(&b->seen, &k, &added);
	snprintf(s->out.fkey, sizeof(s->out.fkey), "%s", fkey);
	snprintf(s->out.key, sizeof(s->out.key), "%s", key);
	s->out.cached = cached;
}

uint64_t readbudget_used(const struct readbudget *b)
{
	return b->used;
}

static int by_refused(const void *x, const void *y)
{
	const struct owner *a = x, *c = y;

	return a->refused < c->refused ? 1 : a->refused > c->refused ? -1 : 0;
}

void readbudget_refusals(const struct readbudget *b, char *buf, size_t len)
{
	struct owner o[READBUDGET_OWNERS_MAX + 1];
	size_t n = 0;
	int nr = b->nr_owners;

	memcpy(o, b->owners, sizeof(o));
	if (o[READBUDGET_OWNERS_MAX].refused)
		o[nr++] = o[READBUDGET_OWNERS_MAX];
	qsort(o, nr, sizeof(o[0]), by_refused);
	buf[0] = 0;
	for (int i = 0; i < nr && o[i].refused && n < len; i++) {
		char who[32];
		int w;

		if (o[i].uid == UINT32_MAX)
			snprintf(who, sizeof(who), "other uids");
		else
			snprintf(who, sizeof(who), "uid %u", (unsigned)o[i].uid);
		w = snprintf(buf + n, len - n, "%s%s: %" PRIu64 " files refused after %" PRIu64
			     " MiB", i ? ", " : "", who, o[i].refused, o[i].bytes >> 20);

		if (w < 0)
			break;
		n += (size_t)w;
	}
}
