/*
 * vdso.c - the kernel's vDSO image as this process sees it (see vdso.h).
 */
#include "config.h"
#include <elf.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include "vdso.h"

static int end_within(uint64_t off, uint64_t n, uint64_t entsize, size_t max, uint64_t *end)
{
	uint64_t len;

	if (entsize && n > (UINT64_MAX - off) / entsize)
		return -1;
	len = off + n * entsize;
	if (len > max)
		return -1;
	if (len > *end)
		*end = len;
	return 0;
}

int vdso_image_size(const void *buf, size_t max, size_t *size, struct error *e)
{
	const ElfW(Ehdr) *eh = buf;
	uint64_t end = sizeof(*eh);
	size_t i;

	if (max < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32))
		return error_set(e, "vDSO: not an ELF image of this process's class");
	if ((eh->e_phnum && eh->e_phentsize != sizeof(ElfW(Phdr))) ||
	    (eh->e_shnum && eh->e_shentsize != sizeof(ElfW(Shdr))) ||
	    end_within(eh->e_phoff, eh->e_phnum, sizeof(ElfW(Phdr)), max, &end) ||
	    end_within(eh->e_shoff, eh->e_shnum, sizeof(ElfW(Shdr)), max, &end))
		return error_set(e, "vDSO: its ELF headers run past its mapping");
	for (i = 0; i < eh->e_phnum; i++) {
		const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)buf + eh->e_phoff) + i;

		if (end_within(ph->p_offset, ph->p_filesz, 1, max, &end))
			return error_set(e, "vDSO: a segment runs past its mapping");
	}
	for (i = 0; i < eh->e_shnum; i++) {
		const ElfW(Shdr) *sh = (const ElfW(Shdr) *)((const char *)buf + eh->e_shoff) + i;

		if (sh->sh_type != SHT_NOBITS &&
		    end_within(sh->sh_offset, sh->sh_size, 1, max, &end))
			return error_set(e, "vDSO: a section runs past its mapping");
	}
	*size = end;
	return 0;
}

/* Length of the mapping of /proc/self/maps that starts at addr; 0: none. */
static uint64_t self_map_len(uintptr_t addr)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uint64_t len = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t lo, hi;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) == 2 && lo == addr &&
		    hi > lo) {
			len = hi - lo;
			break;
		}
	}
	fclose(f);
	return len;
}

int vdso_self(struct vdso_image *v, struct error *e)
{
	uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	uint64_t len;
	size_t size;

	memset(v, 0, sizeof(*v));
	if (!base)
		return error_set(e, "vDSO: the kernel gave this process none");
	len = self_map_len(base);
	if (!len)
		return error_set(e, "vDSO: no mapping starts at its address %#" PRIxPTR, base);
	if (vdso_image_size((const void *)base, len < VDSO_IMAGE_MAX ? len : VDSO_IMAGE_MAX,
			    &size, e) < 0)
		return -1;
	v->image = (const void *)base;
	v->size = size;
	v->map_len = len;
	return 0;
}
