/*
 * readbudget.h - how many bytes of binaries a session reads, and whose.
 *
 * Ingest reads every binary a process maps: to hash it, to compare it
 * with the cache's entry under its build-id and to copy it into the
 * cache.  A session reads at most its budget (INGEST_READ_MAX).  Charged
 * per path, as it was, eight hard links to one sparse 1 GiB file spent it
 * all, and every binary mapped afterwards, by anyone, went unread.  So:
 *  - a file is charged once, by identity (device, inode, size, mtime,
 *    ctime): a hard link, a bind mount, a second mapping of it costs
 *    nothing more, and its outcome (cache key, cached) is remembered for
 *    the session, so it is not read again either;
 *  - bytes are charged to the file's owner (st_uid: who made and can
 *    grow it), and each owner but root has at most a share of the budget
 *    (READBUDGET_SHARE_DIV of it): one user's files cannot leave the
 *    others' unread.  root's files (the system's binaries) have the whole
 *    budget;
 *  - what was refused is counted per owner, for the stop's log line.
 * The identities and owners are bounded (READBUDGET_FILES_MAX files
 * remembered, READBUDGET_OWNERS_MAX owners, the rest as one).
 */
#ifndef STROBE_READBUDGET_H
#define STROBE_READBUDGET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include "hashkey.h"

#define READBUDGET_SHARE_DIV	4
#define READBUDGET_FILES_MAX	65536
#define READBUDGET_OWNERS_MAX	256

struct readbudget;

struct readbudget *readbudget_new(uint64_t total);
void readbudget_free(struct readbudget *b);
/* The whole budget (tests set a small one). */
void readbudget_set_total(struct readbudget *b, uint64_t total);

/* A file this session read already: its own key (hashkey_file) and the
 * outcome, the key it was stored under and whether it was cached. */
struct readbudget_seen {
	char fkey[HASHKEY_MAX];
	char key[HASHKEY_MAX];
	int cached;
};

/*
 * May the file st (opened, regular) be read now?  Returns its outcome
 * when it was read before (nothing charged); NULL with *ok 1 when it may
 * (st_size charged to its owner now), or NULL with *ok 0 and why (one
 * line: the owner, the limit) when the budget or the owner's share is
 * spent.
 */
const struct readbudget_seen *readbudget_take(struct readbudget *b, const struct stat *st,
					      int *ok, char *why, size_t len);
/* Remember the outcome of reading st (after readbudget_take said yes). */
void readbudget_done(struct readbudget *b, const struct stat *st, const char *fkey,
		     const char *key, int cached);

/* Bytes charged in all, and a line naming the owners whose files were
 * refused ("uid U: N files refused after M MiB", most first); "" if none. */
uint64_t readbudget_used(const struct readbudget *b);
void readbudget_refusals(const struct readbudget *b, char *buf, size_t len);

#endif
