/*
 * binname.h - the name a binary is shown with, from its row of table
 * binaries (db.h's struct db_binary: key and path) or the same two columns
 * from elsewhere (the fleet's binaries): the one rule every report, plot
 * and export follows.
 *
 *   no binary (no mapping was known, its row is gone: key NULL)  [unknown]
 *   the running kernel (key "kernel:<build-id>")       [kernel.kallsyms]
 *   no file (key "[...]": [anon], [heap], a JIT's...),
 *   or no path                                          the key ([unknown] if "")
 *   a file (vdso: path "[vdso]")                        its path, or with
 *                                                       BINNAME_BASE its last
 *                                                       component
 */
#ifndef STROBE_BINNAME_H
#define STROBE_BINNAME_H

#define BINNAME_UNKNOWN	"[unknown]"
#define BINNAME_KERNEL	"[kernel.kallsyms]"

/* binname_of(): the path's last component, not the whole path */
#define BINNAME_BASE	1

/* 1 if key names the running kernel ("kernel:<build-id>"). */
int binname_is_kernel(const char *key);
/* 1 if key names no file ("[...]", or ""): nothing to open or symbolise. */
int binname_is_nofile(const char *key);

/* The name of binary (key, path) (see above): a constant, key, or path
 * or a part of it; valid as long as they are.  key NULL: no binary. */
const char *binname_of(const char *key, const char *path, int flags);

#endif
