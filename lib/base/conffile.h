/*
 * conffile.h - strobed's configuration file (/etc/strobe/strobed.conf):
 * lines "key = value", '#' comment lines and blank lines.  This reads the
 * syntax only; what the keys mean and which values they take is the
 * caller's business (a callback per key).  (Not "config.h": that name is
 * autoconf's.)
 *
 * Syntax: leading and trailing blanks (spaces, tabs, a CR) are ignored;
 * a line whose first non-blank is '#' is a comment (a '#' after a value is
 * part of the value: paths may hold one); a key is [a-z0-9-]+; the value is
 * the rest of the line after '=' and blanks, and must not be empty nor
 * hold control characters.  Lines are at most CONFFILE_LINE_MAX bytes with
 * the newline.  A key given twice is an error (the duplicate names the
 * line of the first): a file that says two things is a mistake to show,
 * not to settle silently.
 */
#ifndef STROBE_CONFFILE_H
#define STROBE_CONFFILE_H

#include <stdio.h>
#include "util.h"

#define CONFFILE_LINE_MAX	4096	/* bytes per line, with its newline */
#define CONFFILE_MAX_KEYS	256	/* distinct keys per file */

/* Each key = value, in file order.  Returns 0, or -1 with e set to the
 * problem with the value (conffile_read() prefixes it with FILE:LINE). */
typedef int (*conffile_fn)(void *arg, const char *key, const char *value,
			   struct error *e);

/* Flags of conffile_read(). */
#define CONFFILE_MISSING_OK	1	/* a file that does not exist: return 1 */
#define CONFFILE_STRICT		2	/* the file must be owned by this euid (or
					 * root) and writable by no one else */

/*
 * Read the file at path, calling fn for each key.  Returns 0 when every
 * line was good, 1 when the file does not exist and CONFFILE_MISSING_OK is
 * given, -1 with e set to "PATH:LINE: problem: what to do" (or "PATH:
 * problem" when the file cannot be read at all).
 */
int conffile_read(const char *path, int flags, conffile_fn fn, void *arg, struct error *e);

/* The same from an open stream; name is what messages call it. */
int conffile_parse(FILE *f, const char *name, conffile_fn fn, void *arg, struct error *e);

#endif
