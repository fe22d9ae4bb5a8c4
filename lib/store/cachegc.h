/*
 * cachegc.h - the binary cache's size, and removing what nothing needs.
 *
 * An entry of the cache (bincache.h: DIR/prefix/xx/rest for key
 * "prefix:xxrest") is needed while a binaries row has its key or, for a
 * "kallsyms:" snapshot, while a session names it in kallsyms_key.
 * cachegc_prune() removes the other entries, and the temporary files a
 * strobed that died while storing left behind (".tmp.*": entries are
 * written to one and renamed into place).  Only strobed writes the cache;
 * it calls this while no session runs, so no entry is being stored and
 * none is about to be referenced by a row not yet committed.
 *
 * The walk goes through directory handles opened O_NOFOLLOW (a symlink is
 * never followed), looks only at names of the cache's own layout, and
 * removes only regular files and symlinks with unlinkat() in their own
 * directory; emptied xx directories are removed with rmdir semantics.
 */
#ifndef STROBE_CACHEGC_H
#define STROBE_CACHEGC_H

#include <stdint.h>
#include "db.h"

/* Bytes on disk (allocated blocks) of the files in the cache at dir; 0
 * when it does not exist. */
int cachegc_usage(const char *dir, uint64_t *bytes, struct error *e);

struct cachegc_stats {
	uint64_t kept, removed;		/* entries */
	uint64_t removed_bytes;		/* their allocated bytes */
	uint64_t tmp_removed;		/* left-over temporary files */
};

/* Remove the entries of the cache at dir that no row of db refers to. */
int cachegc_prune(struct db *db, const char *dir, struct cachegc_stats *st,
		  struct error *e);

#endif
