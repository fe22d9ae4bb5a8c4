/*
 * elfnote.c - walking the notes of an ELF note area (see elfnote.h).
 */
#include "config.h"
#include <string.h>
#include "elfnote.h"

#define NOTE_HDR 12	/* namesz, descsz, type */

static uint32_t word(const unsigned char *p, int swap)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap32(v) : v;
}

int elfnote_next(const unsigned char *p, size_t len, uint64_t align, int swap, size_t *pos,
		  struct elfnote *n)
{
	size_t at = *pos, a = align == 8 ? 8 : 4, desc, next;
	uint32_t namesz, descsz;

	if (at > len || len - at < NOTE_HDR)
		return 0;
	namesz = word(p + at, swap);
	descsz = word(p + at + 4, swap);
	/* namesz, descsz <= len: the sums below do not overflow */
	if (namesz > len || descsz > len)
		return 0;
	desc = at + ((NOTE_HDR + namesz + a - 1) & ~(a - 1));
	if (desc > len || descsz > len - desc)
		return 0;
	next = at + ((desc - at + descsz + a - 1) & ~(a - 1));
	n->type = word(p + at + 8, swap);
	n->namesz = namesz;
	n->descsz = descsz;
	n->name = p + at + NOTE_HDR;
	n->desc = p + desc;
	*pos = next;
	return 1;
}
