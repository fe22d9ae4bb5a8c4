/*
 * resolve.h - names for sampled locations.  A sample's location is
 * (binary_id, offset) in a session: offset is a file offset in the binary
 * (user space) or a kernel address.  The resolver names the binary (its
 * path, [kernel.kallsyms], [vdso], [unknown], ...), the symbol (libbfd on
 * the binary cache's copy; the session's kallsyms snapshot for the kernel)
 * and, if asked, the source line.  Reports, plots and exports share it.
 */
#ifndef STROBE_RESOLVE_H
#define STROBE_RESOLVE_H

#include <stdint.h>
#include "db.h"

struct resolver;

/* For session s of db (binaries and kallsyms through db's cache dir). */
struct resolver *resolver_new(struct db *db, const struct db_session *s, struct error *e);
void resolver_free(struct resolver *r);

struct resolved {
	const char *binary;	/* display name: path, [kernel.kallsyms], [unknown], ... */
	const char *build_id;	/* NULL when none */
	const char *symbol;	/* "[unknown]" when not found, "[binary unavailable]" when
				 * the binary cannot be read (problem says why) */
	const char *source;	/* "file:line", only when want_line; NULL otherwise */
	const char *problem;	/* NULL, or why the binary is unavailable */
};

/*
 * Name one location.  Binaries are opened once and kept; the strings stay
 * valid until the next resolver_lookup() or resolver_free().
 */
void resolver_lookup(struct resolver *r, int64_t binary_id, uint64_t offset, int want_line,
		     struct resolved *out);

#endif
