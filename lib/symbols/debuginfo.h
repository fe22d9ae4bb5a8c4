/*
 * debuginfo.h - finding the separate debug file of a stripped binary, as
 * gdb and perf do: by build-id under ROOT/.build-id/xx/rest.debug, then by
 * the binary's .gnu_debuglink (name and CRC-32) in the binary's directory,
 * its .debug/ subdirectory and ROOT/<binary's directory>/.
 *
 * The roots are a colon-separated list (STROBE_DEBUG_DIRS; default
 * /usr/lib/debug).  Everything about a debug file is untrusted input: a
 * debuglink name with a '/' (or "." / "..") is refused, only regular files
 * of at most DEBUGINFO_FILE_MAX bytes are used, a build-id candidate must
 * carry the binary's build-id and a debuglink candidate the link's CRC.
 */
#ifndef STROBE_DEBUGINFO_H
#define STROBE_DEBUGINFO_H

#include <stddef.h>
#include <stdint.h>
#include "util.h"

#define DEBUGINFO_FILE_MAX (1LL << 30)
#define DEBUGINFO_DEFAULT_ROOTS "/usr/lib/debug"
#define DEBUGINFO_MAX_LINK_PATHS 3

/* The CRC-32 of .gnu_debuglink (the zlib/IEEE one): start with crc 0,
 * feed the bytes in order. */
uint32_t debuginfo_crc32(uint32_t crc, const void *buf, size_t len);

/* CRC-32 of the whole file open at fd (read from offset 0); -1 on a read
 * error (e says why). */
int debuginfo_crc32_fd(int fd, uint32_t *crc, struct error *e);

/* ROOT/.build-id/xx/rest.debug for the lowercase hex build-id hex, or NULL
 * when hex is not 4 to 128 hex digits of even length.  Caller frees. */
char *debuginfo_build_id_path(const char *root, const char *hex);

/* The places a debuglink name is looked for, for the binary at bin_path
 * (absolute) and one root: at most DEBUGINFO_MAX_LINK_PATHS strings stored
 * in out (caller frees each), their count; 0 when the name is unusable
 * (empty, ".", "..", contains '/', longer than 255 bytes) or bin_path is
 * not absolute. */
size_t debuginfo_link_paths(const char *bin_path, const char *link, const char *root,
			    char *out[DEBUGINFO_MAX_LINK_PATHS]);

struct debuginfo_want {
	const char *bin_path;	/* the binary's original (absolute) path */
	const char *build_id;	/* lowercase hex, or NULL */
	const char *link;	/* .gnu_debuglink name, or NULL */
	uint32_t link_crc;
	const char *roots;	/* colon-separated; NULL: DEBUGINFO_DEFAULT_ROOTS */
	/* How a build-id candidate's build-id is read (its ELF headers and
	 * notes: the candidate owner's bytes).  NULL: here, with
	 * hashkey_build_id_fd (a reader with its own rights).  strobed, as
	 * root, reads it in the symbol worker (symworker_build_id): the
	 * length (1..cap) into id, 0 none, -1 could not; the comparison with
	 * build_id stays here. */
	int (*read_id)(void *ctx, int fd, uint8_t *id, size_t cap);
	void *read_id_ctx;
};

struct debuginfo_found {
	int fd;			/* the verified file, open; -1: none found */
	char *path;		/* its path (for notes) */
	char *refused;		/* NULL, or why candidates that exist were refused */
};

/*
 * Find and open a debug file for w with the caller's own rights.  Returns
 * 1 with out->fd and out->path set, or 0 when none is usable; in both
 * cases out->refused may say which candidates were refused and why.
 * Release with debuginfo_found_free (closes fd).
 */
int debuginfo_find(const struct debuginfo_want *w, struct debuginfo_found *out);
void debuginfo_found_free(struct debuginfo_found *f);

/* Does the file open at fd (named path in messages) carry build-id hex
 * (lowercase), and is it a regular file of at most DEBUGINFO_FILE_MAX
 * bytes?  0 when it does; -1 when not or when its build-id could not be
 * read, with "PATH refused: why" appended
 * to *refused (a "; "-separated list the caller frees).  fd stays open.
 * Every debug file found by build-id, local or fetched, passes this. */
int debuginfo_check_build_id(int fd, const char *path, const char *hex, char **refused);
/* The same with the build-id read by read_id(ctx, ...) (struct
 * debuginfo_want); read_id NULL: debuginfo_check_build_id. */
int debuginfo_check_build_id_by(int fd, const char *path, const char *hex, char **refused,
				int (*read_id)(void *ctx, int fd, uint8_t *id, size_t cap),
				void *ctx);

/* MiniDebugInfo: the xz stream of a .gnu_debugdata section (in, len)
 * decoded into a new buffer (*out, caller frees; *outlen) of at most
 * DEBUGINFO_MINI_RATIO times len, but 4 MiB always and 64 MiB at most (a
 * section holds a .symtab and its strings, which xz shrinks by 3 to 10).
 * -1 when it is not xz or decodes to more (e says why: a bomb, e.g. xz of
 * zeros, is refused with its limit named). */
#define DEBUGINFO_MINI_MAX (64LL << 20)
#define DEBUGINFO_MINI_FLOOR (4U << 20)
#define DEBUGINFO_MINI_RATIO 64
int debuginfo_xz_decode(const void *in, size_t len, void **out, size_t *outlen,
			struct error *e);

/* The decoded MiniDebugInfo ELF as an anonymous file (memfd): its
 * descriptor, or -1 (e says why).  Readers open it as /proc/self/fd/N. */
int debuginfo_mini_fd(const void *in, size_t len, struct error *e);

#endif
