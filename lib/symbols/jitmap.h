/*
 * jitmap.h - perf map files of JIT compilers: /tmp/perf-PID.map.
 *
 * The convention of V8/Node (--perf-basic-prof), Java agents, Python 3.12
 * (-X perf) and LuaJIT: one text line per compiled function,
 *   START SIZE NAME
 * START and SIZE in hex (an optional 0x), NAME the rest of the line.
 *
 * The file is written by the profiled process, and /tmp is writable by
 * everyone: everything in it is hostile.  jitmap_read() opens it without
 * following a symlink or blocking (a FIFO), accepts only a regular file
 * owned by the process's user or root, and reads at most JITMAP_FILE_MAX
 * bytes; jitmap_parse() keeps only well-formed lines, at most
 * JITMAP_SYMS_MAX of them, with sizes up to JITMAP_SIZE_MAX, ranges that
 * do not wrap, and names up to JITMAP_NAME_MAX bytes with control bytes
 * replaced by '?'.  Names are data: never passed to a shell.
 */
#ifndef STROBE_JITMAP_H
#define STROBE_JITMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "util.h"

#define JITMAP_FILE_MAX (64u << 20)	/* bytes read of one file */
#define JITMAP_SYMS_MAX 1000000		/* symbols kept of one file */
#define JITMAP_NAME_MAX 1024		/* bytes of a name, longer lines dropped */
#define JITMAP_SIZE_MAX (1ULL << 30)	/* one function's code, larger dropped */

struct jitmap_sym {
	uint64_t start, size;
	char *name;
	uint64_t load_ns;	/* jitdump (jitdump.h): the record's timestamp;
				 * 0 for a perf map (no time) */
};

struct jitmap {
	struct jitmap_sym *syms;	/* in file order; later lines win on overlap */
	size_t nr;
	size_t dropped;			/* malformed, overlong, huge or past the limit */
};

/*
 * The perf map of process pid as path (normally "/tmp/perf-PID.map") into
 * a malloc'ed buffer (*buf, *len; NUL-terminated): 1 when read, 0 when
 * there is none (ENOENT), -1 when refused or unreadable (e says why): not
 * a regular file, a symlink, owned by neither uid nor root, larger than
 * JITMAP_FILE_MAX, or last modified before not_before_ns (CLOCK_REALTIME
 * ns; 0: any time) - left by an earlier process of the same pid.  uid is
 * the process's effective uid.
 */
int jitmap_read(const char *path, uid_t uid, int64_t not_before_ns, char **buf, size_t *len,
		struct error *e);

/* The same for a file already opened (fd, without following a symlink or
 * blocking; path names it in messages); fd is closed. */
int jitmap_read_fd(int fd, const char *path, uid_t uid, int64_t not_before_ns, char **buf,
		   size_t *len, struct error *e);

/* Parse len bytes of buf (need not be NUL-terminated) into m; never fails
 * (bad lines are counted in m->dropped).  jitmap_free() releases it. */
void jitmap_parse(const char *buf, size_t len, struct jitmap *m);
void jitmap_free(struct jitmap *m);

#endif
