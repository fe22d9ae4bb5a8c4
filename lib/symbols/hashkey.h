/*
 * hashkey.h - the identity of a binary: its GNU build-id, or else the
 * XXH3-128 of its contents.  Keys are strings:
 *   "buildid:<hex>"   an ELF file with a .note.gnu.build-id
 *   "xxh3:<32 hex>"   any other file, hashed whole
 *   "kernel:<hex>"    the running kernel (build-id from /sys/kernel/notes)
 * Hashing a file is done once per (dev, inode, size, mtime, ctime) through
 * a memo.
 */
#ifndef STROBE_HASHKEY_H
#define STROBE_HASHKEY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "util.h"

#define HASHKEY_MAX 96		/* longest key string, NUL included */
#define BUILD_ID_MAX 64

/* Largest file strobed hashes and copies into its cache as a binary.  A
 * profiled process can map anything executable, e.g. a 500 GB sparse file:
 * without a bound strobed would read and store all of it.  Real binaries
 * (even large debug builds) stay well below this. */
#define HASHKEY_FILE_MAX (1LL << 30)
#define HASHKEY_FILE_MAX_TEXT "1 GiB"

/* Build-id of the ELF file open at fd: its length (1..cap), 0 if the file
 * has none or is not ELF, -1 on a read error (e says why). */
int hashkey_build_id_fd(int fd, uint8_t *id, size_t cap, struct error *e);
/* How many times this process has called hashkey_build_id_fd (parsed an
 * ELF file's headers and notes): the tests' proof of which process parses
 * (a worker's calls are its own). */
unsigned long hashkey_build_id_parses(void);

/* Build-id from a notes blob (e.g. /sys/kernel/notes): length or 0. */
int hashkey_build_id_notes(const void *notes, size_t len, uint8_t *id, size_t cap);

/* XXH3-128 of the whole file at fd as 32 lowercase hex digits. */
int hashkey_xxh3_fd(int fd, char hex[33], struct error *e);

/* XXH3-128 of a memory buffer as 32 lowercase hex digits. */
void hashkey_xxh3_buf(const void *buf, size_t len, char hex[33]);

/* "buildid:<hex>" (or with prefix "kernel") from raw build-id bytes. */
void hashkey_format(char key[HASHKEY_MAX], const char *prefix,
		    const uint8_t *id, size_t len);

/* Key of the running kernel, from /sys/kernel/notes. */
int hashkey_kernel(char key[HASHKEY_MAX], struct error *e);

/* Memo of file keys and content hashes by (dev, ino, size, mtime, ctime),
 * so each file is read once.  It holds at most HASHKEY_MEMO_MAX files (a
 * process creating files without end cannot grow it): past that it is
 * emptied and files are read again. */
#define HASHKEY_MEMO_MAX 65536
struct hashkey_memo;
struct hashkey_memo *hashkey_memo_new(void);
void hashkey_memo_free(struct hashkey_memo *m);
size_t hashkey_memo_count(const struct hashkey_memo *m);

/* Key of the file open at fd: build-id when it has one, else XXH3-128.
 * Uses and fills the memo (m may be NULL). */
int hashkey_file(struct hashkey_memo *m, int fd, char key[HASHKEY_MAX],
		 struct error *e);

/* The same, the build-id read by read_id(ctx, fd, id, cap, e) (as
 * hashkey_build_id_fd(), which NULL means; -2: it could not be read, the
 * file is then keyed by its contents, which the memo does not keep):
 * strobed has it read in a worker
 * without rights (uparse.h). */
int hashkey_file_by(struct hashkey_memo *m, int fd, char key[HASHKEY_MAX],
		    int (*read_id)(void *ctx, int fd, uint8_t *id, size_t cap, struct error *e),
		    void *ctx, struct error *e);

/* XXH3-128 of the whole contents of the regular file at fd (32 hex digits),
 * whatever its key: what tells two files with the same build-id apart.
 * Uses and fills the memo (m may be NULL). */
int hashkey_content(struct hashkey_memo *m, int fd, char hex[33], struct error *e);

#endif
