/*
 * bincache.h - the content-addressed cache of what reports need after the
 * session: a copy of every sampled binary and the kallsyms snapshot, each
 * stored under its hashkey, so reports still work after a file is
 * upgraded or deleted.  Layout: DIR/<key with ':' as '/'>, e.g.
 * DIR/buildid/ab/cdef0123...  Entries are written to a temporary name and
 * renamed, so a reader never sees half a file.
 */
#ifndef STROBE_BINCACHE_H
#define STROBE_BINCACHE_H

#include <stddef.h>
#include "util.h"

struct bincache {
	char *dir;
};

/* Create (mode 0750) or open the cache at dir. */
int bincache_open(struct bincache *c, const char *dir, struct error *e);
void bincache_close(struct bincache *c);

/* Path of the entry for key, whether or not it exists; free() it. */
char *bincache_path(const struct bincache *c, const char *key);

/* 1 if an entry for key exists, else 0. */
int bincache_has(const struct bincache *c, const char *key);

/* Store the whole file at fd (read from offset 0) under key. An existing
 * entry is kept (same key, same contents). */
int bincache_store_fd(const struct bincache *c, const char *key, int fd,
		      struct error *e);

/* Store a memory buffer under key. */
int bincache_store_buf(const struct bincache *c, const char *key,
		       const void *buf, size_t len, struct error *e);

#endif
