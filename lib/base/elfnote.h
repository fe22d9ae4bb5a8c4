/*
 * elfnote.h - the notes of an ELF note area (a PT_NOTE segment, an
 * SHT_NOTE section, /sys/kernel/notes) held in memory: the one walk that
 * the build-id reader (lib/symbols/hashkey.c) and the USDT reader
 * (lib/capture/usdt.c) share.  Written by hand, as those readers are: why
 * libelf's gelf_getnote() does not do, hashkey.c says.
 *
 * A note is a header of three 4-byte words (namesz, descsz, type), its
 * name, then its desc; the desc and the next note start at the area's
 * alignment (4, or 8 in some PT_NOTE segments and sections) counted from
 * the note's start, as binutils reads them.  The area is untrusted: a
 * note is given only when its name and desc lie inside the area.
 */
#ifndef STROBE_ELFNOTE_H
#define STROBE_ELFNOTE_H

#include <stddef.h>
#include <stdint.h>

struct elfnote {
	uint32_t type;
	uint32_t namesz, descsz;
	const unsigned char *name, *desc;	/* inside the area */
};

/*
 * The note at *pos of the len bytes at p (start *pos at 0), its header
 * words of the file's byte order (swap: not the host's), align 8 for an
 * area aligned so (any other value: 4).  1 with *n filled and *pos moved
 * to the next note; 0 at the end of the area or at a note that does not
 * fit in it (the rest of the area is then not read).
 */
int elfnote_next(const unsigned char *p, size_t len, uint64_t align, int swap, size_t *pos,
		  struct elfnote *n);

#endif
