/*
 * bincache.h - the content-addressed cache of what reports need after the
 * session: a copy of every sampled binary and the kallsyms snapshot, each
 * stored under its hashkey, so reports still work after a file is
 * upgraded or deleted.  Layout: DIR/<key with ':' as '/'>, e.g.
 * DIR/buildid/ab/cdef0123...  Entries are written to a temporary name and
 * renamed, so a reader never sees half a file.
 *
 * Who may read an entry follows who could read the original: an entry is
 * shared (mode 0640, group strobe through the setgid cache directory) only
 * when everyone could read the file it came from; else it is private to
 * root (0600), and a member's report names its code only by reading the
 * original file with the member's own rights (see resolvebin.c).
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

enum bincache_access {
	BINCACHE_SHARED,	/* readable by group strobe */
	BINCACHE_PRIVATE,	/* readable by root only */
	BINCACHE_RESTRICT,	/* root only, even if it was shared before */
};

/* Store the whole file at fd (read from offset 0) under key.  An existing
 * entry is kept (same key, same contents): a private one becomes shared
 * when stored again as shared, a shared one stays shared unless stored
 * again as BINCACHE_RESTRICT. */
int bincache_store_fd(const struct bincache *c, const char *key, int fd,
		      enum bincache_access access, struct error *e);

/* Store a memory buffer under key. */
int bincache_store_buf(const struct bincache *c, const char *key,
		       const void *buf, size_t len, enum bincache_access access,
		       struct error *e);

/* Whether the entry for key holds exactly the bytes of the file at fd,
 * compared byte for byte (keys are build-ids, chosen by whoever built the
 * file, or fast hashes: an attacker can match either): 1 when
 * equal or when there is no entry yet, 0 when different, -1 on a read
 * error (e says why). */
int bincache_same(const struct bincache *c, const char *key, int fd, struct error *e);

/* Open the entry for key read-only (never following a symlink); -1 with
 * errno when it is missing or unreadable. */
int bincache_open_entry(const struct bincache *c, const char *key);

#endif
