/*
 * resolve.h - names for sampled locations.  A sample's location is
 * (binary_id, offset) in a session: offset is a file offset in the binary
 * (user space) or a kernel address.  The resolver names the binary (its
 * path, [kernel.kallsyms], [vdso], [unknown], ...), the symbol (libbfd on
 * the binary cache's copy; the session's kallsyms snapshot for the kernel)
 * and, if asked, the source line.  Reports, plots and exports share it.
 *
 * Naming never guesses: a binary whose row records a problem, or with no
 * usable cached copy (or, for the kernel, no kallsyms snapshot), has
 * problem set and every symbol in it is "[binary unavailable]"; an offset
 * no symbol covers is "[unknown]".  Memory with no file ([vdso] of another
 * ABI than strobed's, [anon], [heap], [stack], [unknown], and a sample with
 * no binary row) is named under its key with symbol "[unknown]" and no
 * problem, except [anon] code named from its process's perf map (below).
 * The vDSO of strobed's own ABI is a binary like any other (path [vdso],
 * its image cached by build-id at ingest: ingest.h).
 *
 * A cache entry only root may read (its file was not readable by everyone
 * when it was cached) is named, for anyone else, from the original file
 * opened with the reader's own rights, and only while that file still has
 * the binary's key; else the binary is unavailable to that reader.
 *
 * A binary with no .symtab is named from its separate debug file when one
 * is found under STROBE_DEBUG_DIRS (colon-separated roots, default
 * /usr/lib/debug) by build-id, or by .gnu_debuglink with its CRC checked
 * (debuginfo.h); failing that, and only when the reader set
 * DEBUGINFOD_URLS, from the debug file a debuginfod server has for its
 * build-id (dbgfetch.h: libdebuginfod, its cache and timeout, each
 * binary asked once per resolver, nothing more after a failed query);
 * failing that, from its MiniDebugInfo.  resolved.debug says which file
 * ("debuginfod: CACHE-PATH" for a fetched one), and
 * resolver_debuginfod_summary() what could not be fetched.
 *
 * The resolver only reads: it never creates the cache directory.  Like
 * symtab (libbfd), use it from one thread at a time.
 */
#ifndef STROBE_RESOLVE_H
#define STROBE_RESOLVE_H

#include <stdint.h>
#include "db.h"

struct resolver;

/* For session s of db (binaries and kallsyms through db's cache dir). */
struct resolver *resolver_new(struct db *db, const struct db_session *s, struct error *e);
void resolver_free(struct resolver *r);

/* Demangled C++ and Rust names (on: the default) or the raw ones; call
 * before the first lookup. */
void resolver_set_demangle(struct resolver *r, int on);

/* Also name the inline chain of each location (resolved.inlined); call
 * before the first lookup.  Off by default. */
void resolver_set_inline(struct resolver *r, int on);

/*
 * Parse binaries in the symbol worker w (symworker.h) instead of in this
 * process: for strobed, which runs as root (strobed --push).  Cache
 * entries are opened here, by handle, and read there; a debug file is
 * found and opened here and read there; MiniDebugInfo is decoded there;
 * debuginfod is never asked.  Only symbols are named through the worker:
 * source is "" and the inline chain "" (strobed asks for neither).  A
 * binary the worker crashed or hung on gets problem set and
 * "[binary unavailable]" from then on.  Call before the first lookup; r
 * does not own w.
 */
struct symworker;
void resolver_set_worker(struct resolver *r, struct symworker *w);

struct resolved {
	const char *binary;	/* display name: path, [kernel.kallsyms], [unknown], ... */
	const char *build_id;	/* NULL when none; the hex build-id of buildid: and
				 * kernel: keys, the whole key for xxh3: and missing: */
	const char *key;	/* binaries.key; "[unknown]" when there is no row */
	const char *symbol;	/* "[unknown]" when not found, "[binary unavailable]" when
				 * the binary cannot be read (problem says why); kernel
				 * module symbols as "name [module]" */
	const char *source;	/* only when want_line: "file:line", or "" when
				 * unknown; NULL otherwise */
	const char *problem;	/* NULL, or why the binary is unavailable */
	const char *note;	/* NULL, or a warning about the binary that did not
				 * stop naming its code (binaries.note) */
	int no_symbols;		/* the binary's copy has no function symbols (stripped) */
	const char *debug;	/* NULL, or the separate debug file its symbols and
				 * lines come from (found as debuginfo.h says, with
				 * the reader's rights, for binaries with no .symtab;
				 * "debuginfod: CACHE-PATH" when fetched) */
	const char *debug_note;	/* NULL, or which debug files were refused and why */
	const char *inlined;	/* only after resolver_set_inline(r, 1), else NULL:
				 * the inline chain at the location, outermost
				 * function first, "outer -> inlined -> ...", as
				 * the DWARF names them (symtab_inline, demangled
				 * unless resolver_set_demangle(r, 0)); "" when
				 * the location is not in inlined code or nothing
				 * says (no DWARF, kernel, no file, JIT code) */
};

/*
 * Name one location.  Binaries are opened once and kept, and each
 * (binary_id, offset) is named once (with its line and inline chain when
 * asked) and remembered, so calling this for
 * every sample of a session costs one hash lookup per sample.  All the
 * strings stay valid until resolver_free().
 */
void resolver_lookup(struct resolver *r, int64_t binary_id, uint64_t offset, int want_line,
		     struct resolved *out);

/* Name the locations (binary_id, off[i]) not named yet all at once (with
 * a worker: in messages of SYMWORKER_BATCH offsets, not one each), so that
 * resolver_lookup() of them parses nothing more.  Without a worker this
 * does nothing: resolver_lookup() names as cheaply. */
void resolver_prefetch(struct resolver *r, int64_t binary_id, const uint64_t *off, size_t n);

/* The binary's fields of out for binary_id (binary, build_id, key,
 * problem, note, no_symbols, debug, debug_note), no location named:
 * symbol, source and inlined are NULL. */
void resolver_binary(struct resolver *r, int64_t binary_id, struct resolved *out);

/*
 * JIT code (schema 10): a location in anonymous executable memory
 * ([anon], whose offset is the address itself) is named from the perf map
 * (/tmp/perf-PID.map) or jitdump (jit-PID.dump, schema 12) of its process,
 * copied into the session at the process's exit: the symbol whose
 * [addr, addr + size) covers the offset, the later line or record of the
 * file where several do (for all samples: not by the time of the load).  Not named (the symbol
 * stays "[unknown]") when pid left no map, or when several processes of
 * that pid in the session left one (pid reuse: whose sample it is cannot
 * be told from (pid, address)).
 *
 * resolver_by_pid() is 1 when locations of binary_id are named per
 * process (an [anon] binary, and the session has perf map symbols): the
 * caller then keeps them apart by pid and names them with
 * resolver_lookup_pid(), which is resolver_lookup() for any other binary
 * or pid 0.  The strings stay valid until resolver_free().
 */
int resolver_by_pid(struct resolver *r, int64_t binary_id);
void resolver_lookup_pid(struct resolver *r, int64_t binary_id, uint64_t offset, uint32_t pid,
			 int want_line, struct resolved *out);

/* One line saying which debug files debuginfod did not give (not found,
 * could not be fetched, not asked after a failure, refused) and from
 * which servers, or NULL when nothing failed or nothing was asked.  Valid
 * until the next call or resolver_free(). */
const char *resolver_debuginfod_summary(struct resolver *r);

#endif
