/*
 * vdso.h - the kernel's vDSO image as this process sees it.
 *
 * Every process of one kernel and one ABI maps the same vDSO image (the
 * kernel links one per ABI into itself), so strobed names the [vdso]
 * mappings of profiled processes from a copy of its own: found through
 * getauxval(AT_SYSINFO_EHDR), its length bounded by the [vdso] mapping
 * that holds it (/proc/self/maps) and taken from its own ELF headers.
 * The image is a complete ELF shared object whose PT_LOAD segment starts
 * at file offset 0 with address 0 relative to the load base, so the file
 * offset of a sampled address in a [vdso] mapping is ip - mapping start.
 *
 * A process of another ABI (a 32-bit process on x86-64) maps another
 * image: vdso_matches() tells the images apart by the length of the
 * mapping only, the one thing a MMAP record says about it.
 */
#ifndef STROBE_VDSO_H
#define STROBE_VDSO_H

#include <stddef.h>
#include <stdint.h>
#include "util.h"

/* Longest image accepted (real ones are 8 to 16 KiB). */
#define VDSO_IMAGE_MAX (1 << 20)

struct vdso_image {
	const void *image;	/* in this process's own mapping: never freed */
	size_t size;		/* the ELF file's length, from its headers */
	uint64_t map_len;	/* length of the [vdso] mapping holding it */
};

/* This process's vDSO; -1 (e says why) if there is none or it is not a
 * well-formed ELF image of this process's class. */
int vdso_self(struct vdso_image *v, struct error *e);

/* Length of the ELF image at buf, read only within its first max bytes:
 * the largest end of its headers, section headers and segments; -1 (e says
 * why) when they are not ELF of this process's class or run past max. */
int vdso_image_size(const void *buf, size_t max, size_t *size, struct error *e);

/* Whether a [vdso] mapping of len bytes holds the image v. */
static inline int vdso_matches(const struct vdso_image *v, uint64_t len)
{
	return v->size && len == v->map_len;
}

#endif
