/*
 * symtab.h - symbols and source lines of a binary, through libbfd.
 *
 * Samples name code by file offset (ip - mapping start + mapping pgoff),
 * which does not depend on where the binary was loaded: PIE executables,
 * shared libraries and fixed executables are all handled the same way.
 * The function symbols come from .symtab, or from .dynsym when the binary
 * was stripped.
 */
#ifndef STROBE_SYMTAB_H
#define STROBE_SYMTAB_H

#include <stdint.h>
#include "util.h"

struct symtab;

struct symtab_hit {
	const char *name;	/* symbol, owned by the symtab */
	uint64_t sym_offset;	/* offset of the address in the symbol */
	const char *file;	/* source file or NULL, owned by the symtab */
	unsigned line;		/* 0 when unknown */
};

/* Open the ELF file at path and read its function symbols. */
struct symtab *symtab_open(const char *path, struct error *e);
/* The same from the open file fd (read from offset 0 through a duplicate:
 * the caller keeps fd; nothing is opened by name), called name in
 * messages.  For a process that may not open files (symworker.h). */
struct symtab *symtab_open_fd(int fd, const char *name, struct error *e);
void symtab_close(struct symtab *s);

/* Number of function symbols read from .symtab or .dynsym (0: the binary
 * has none).  The synthetic name@plt stubs are not counted: a binary
 * stripped of everything still has them, and they name none of its own
 * code. */
size_t symtab_count(const struct symtab *s);

/* Demangle C++ and Rust names (on: the default) or keep them raw. */
void symtab_set_demangle(struct symtab *s, int on);

/* Did the function symbols come from a .symtab (the binary's own, or its
 * debug file's after symtab_use_debug)?  0: from .dynsym, or none. */
int symtab_has_symtab(const struct symtab *s);

/* The binary's .gnu_debuglink name (caller frees) with its CRC-32 in *crc;
 * NULL when it has none or the name is unusable (empty, has a '/'). */
char *symtab_debuglink(struct symtab *s, uint32_t *crc);

/* The contents of the binary's .gnu_debugdata (MiniDebugInfo, xz) in
 * *buf (caller frees), its size in *len: 1, or 0 when there is none or it
 * is larger than 64 MiB or unreadable. */
int symtab_debugdata(struct symtab *s, void **buf, size_t *len);

/* Take function symbols and source lines from the separate debug file at
 * path (already verified as this binary's: see debuginfo.h).  File offsets
 * still go through the binary's own sections; the debug file has the same
 * addresses.  Returns 1 when it had function symbols (they replace the
 * binary's, the @plt stubs stay), 0 when it had none (nothing changes),
 * -1 when it cannot be read (e says why; nothing changes). */
int symtab_use_debug(struct symtab *s, const char *path, struct error *e);
/* The same from the open file fd (a duplicate is read; the caller keeps
 * fd), called name in messages. */
int symtab_use_debug_fd(struct symtab *s, int fd, const char *name, struct error *e);

/* Name the code at file offset off. want_line also looks up file:line
 * (needs DWARF line info). Returns 0 when a symbol covers off, -1 if not
 * (hit->name is then NULL; file/line may still be set). */
int symtab_lookup(struct symtab *s, uint64_t off, int want_line,
		  struct symtab_hit *hit);

/* One frame of the inline chain at an address (see symtab_inline). */
struct symtab_frame {
	const char *func;	/* DWARF function name, raw (not demangled), or
				 * NULL when unknown; owned by the symtab */
	const char *file;	/* source file or NULL, owned by the symtab */
	unsigned line;		/* 0 when unknown */
};

/* Deepest inline chain symtab_inline reports: a deeper one (from hostile
 * or broken DWARF) is cut there, its outermost frames left out. */
#define SYMTAB_INLINE_MAX 32

/*
 * The inline chain at file offset off, from the DWARF of the binary (or of
 * its debug file), innermost first, as "addr2line -f -i" prints it:
 * fr[0] is the function whose code is at off with the line of off; each
 * next frame is the function that inlined the previous one, with the line
 * of that call site.  The last frame is the outermost (real) function.
 * Fills at most max frames (max <= SYMTAB_INLINE_MAX); returns how many:
 * 1 when off is not in inlined code (or there is no DWARF for it: then
 * func may come from the symbol table and file is NULL, as addr2line
 * says "??:?"), 0 when nothing at all names off.  The strings stay valid until symtab_close().
 */
int symtab_inline(struct symtab *s, uint64_t off, struct symtab_frame *fr, int max);

/* name demangled (C++, Rust) as symtab_lookup names symbols, in a string
 * the caller frees; NULL when it is not a mangled name or demangling is
 * off (symtab_set_demangle(s, 0)). */
char *symtab_demangle(struct symtab *s, const char *name);

/* Convert a file offset to the binary's virtual address; -1 if no
 * loadable section holds it. */
int symtab_offset_to_vma(struct symtab *s, uint64_t off, uint64_t *vma);

#endif
