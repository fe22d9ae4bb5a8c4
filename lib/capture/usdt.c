/*
 * usdt.c - USDT probes of an ELF file (see usdt.h): the sites of its
 * .note.stapsdt notes, found by name; the marker spec PATH:PROVIDER:NAME.
 * A site's argument string is parsed by usdtargs.c.
 *
 * The file is read with pread() from one open handle: the ELF header, the
 * section headers and their names, the program headers, and the note
 * sections; nothing else, so large binaries cost little.  The _fd readers
 * take the handle from the caller (strobed opens it with the requester's
 * rights and places the uprobes on exactly that file); the path readers
 * open it themselves, a regular file only.  32- and 64-bit little-endian ELF files
 * are understood; usdt_find parses arguments of binaries of the machine
 * strobe runs on only (x86_64 and i386, or aarch64: usdtargs.c).
 *
 * A stapsdt note (owner "stapsdt", type 3) holds, in the file's address
 * size: the site's address, the link-time address of .stapsdt.base, the
 * semaphore's address (0: none); then three NUL-terminated strings:
 * provider, name, arguments.
 *
 * Read by hand, not with libelf (elfutils 0.188), because the file is the
 * requester's, parsed in markerparse's child (daemon/markerparse.h) on
 * strobed's behalf, and every read must have a bound the file cannot
 * move: at most MAX_SHDRS sections and MAX_PHDRS segments, every table
 * inside the file, MAX_NOTES_BYTES of notes in all, and an error naming
 * what is wrong (test_elf_hostile, test_usdt).  libelf's elf_begin()
 * callocs an Elf_Scn (some 200 bytes) per section the header claims, as
 * many as the file's size holds (a large sparse file: millions), before
 * the count can be checked; it reads whole header tables and sections at
 * once, steps through them by sizeof(Shdr), not e_shentsize, and takes
 * truncated section headers for none ("no USDT probes" where this reader
 * says the file is malformed); and test_elf_hostile's malloc wrap could
 * not see its allocations.
 */
#include "config.h"
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "elfnote.h"
#include "usdt.h"

#define NT_STAPSDT		3
#define MAX_NOTES_BYTES		(64u << 20)
#define MAX_SHDRS		65536
#define MAX_PHDRS		4096
#define MAX_NAMES		64	/* distinct probe names counted for errors */

struct sec {
	uint32_t name, type;
	uint64_t flags, addr, offset, size, align;
};

struct seg {
	uint32_t type;
	uint64_t offset, vaddr, filesz;
};

struct elf {
	int fd;			/* the caller's: not closed here */
	const char *path;
	int is64;
	unsigned machine;	/* e_machine */
	struct sec *secs;
	size_t nsecs;
	struct seg *segs;
	size_t nsegs;
	char *shstr;
	size_t shstrlen;
	uint64_t fsize;		/* every offset + size read lies inside it */
	uint64_t note_budget;	/* note bytes left to read, all sections */
};

/* Where the notes' sites go: those of provider:name (all when provider is
 * NULL), at most USDT_MAX_SITES; the distinct names seen, for errors. */
struct collect {
	const char *provider, *name;
	struct usdt_site *sites;
	size_t n, cap;
	size_t nall;				/* sites seen, all names */
	char (*names)[2][USDT_MAX_NAME];	/* up to MAX_NAMES */
	size_t nnames;
	int names_full;
};

/* [off, off + len) lies inside the file (no overflow). */
static int in_file(const struct elf *f, uint64_t off, uint64_t len)
{
	return off <= f->fsize && len <= f->fsize - off;
}

/* calloc that fails this one file, not the daemon. */
static void *elf_calloc(const struct elf *f, size_t n, size_t size, struct error *e)
{
	void *p = calloc(n, size);

	if (!p)
		error_set(e, "%s: out of memory reading its ELF headers", f->path);
	return p;
}

static int read_at(struct elf *f, void *buf, size_t len, uint64_t off, struct error *e)
{
	int r = fd_pread_all(f->fd, buf, len, off);

	if (r < 0)
		return error_set(e, "cannot read %s: %s", f->path, strerror(errno));
	if (r == 0)
		return error_set(e, "%s is truncated: not a complete ELF file", f->path);
	return 0;
}

static uint64_t le(const unsigned char *p, int size)
{
	uint64_t v = 0;

	for (int i = size - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void elf_free(struct elf *f)
{
	free(f->secs);
	free(f->segs);
	free(f->shstr);
}


/* The size of the file open as fd, a regular file only (path names it). */
static int regular_size(int fd, const char *path, uint64_t *size, struct error *e)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return error_set(e, "cannot read %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return error_set(e, "%s is not a regular file: give the executable or library "
				 "that holds the probe", path);
	*size = st.st_size;
	return 0;
}

/*
 * Open path for reading, a regular file only.  O_NONBLOCK: a FIFO (or a
 * device) put in its place must not make the caller wait; it is then
 * refused by its type.
 */
static int open_regular(const char *path, struct error *e)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	uint64_t size;

	if (fd < 0)
		return error_set(e, "cannot read %s: %s", path, strerror(errno));
	if (regular_size(fd, path, &size, e) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* An address-sized field of a header: 4 bytes at off32 in a 32-bit file,
 * 8 at off64 in a 64-bit one. */
static uint64_t addr_field(const struct elf *f, const unsigned char *p, int off32, int off64)
{
	return f->is64 ? le(p + off64, 8) : le(p + off32, 4);
}

static void decode_sec(const struct elf *f, const unsigned char *sh, void *el)
{
	struct sec *s = el;

	s->name = le(sh, 4);
	s->type = le(sh + 4, 4);
	s->flags = addr_field(f, sh, 8, 8);
	s->addr = addr_field(f, sh, 12, 16);
	s->offset = addr_field(f, sh, 16, 24);
	s->size = addr_field(f, sh, 20, 32);
	s->align = addr_field(f, sh, 32, 48);
}

static void decode_seg(const struct elf *f, const unsigned char *ph, void *el)
{
	struct seg *s = el;

	s->type = le(ph, 4);
	s->offset = addr_field(f, ph, 4, 8);
	s->vaddr = addr_field(f, ph, 8, 16);
	s->filesz = addr_field(f, ph, 16, 32);
}

/* One of the file's header tables: the section or the program headers. */
struct table_kind {
	const char *ents, *hdrs;	/* "sections", "section headers": in errors */
	uint64_t max;			/* entries at most */
	size_t size32, size64;		/* bytes of an entry read, by the file's class */
	size_t elsize;			/* bytes of an entry decoded */
	void (*decode)(const struct elf *f, const unsigned char *p, void *el);
};

static const struct table_kind sections = {
	"sections", "section headers", MAX_SHDRS, sizeof(Elf32_Shdr), sizeof(Elf64_Shdr),
	sizeof(struct sec), decode_sec,
};
static const struct table_kind segments = {
	"segments", "program headers", MAX_PHDRS, sizeof(Elf32_Phdr), sizeof(Elf64_Phdr),
	sizeof(struct seg), decode_seg,
};

/* The num entries of entsize bytes at off of a table of kind k, decoded,
 * normalised to 64 bits, into an array (at least one element: free() it);
 * NULL on error. */
static void *read_table(struct elf *f, const struct table_kind *k, uint64_t off, uint64_t num,
			uint64_t entsize, struct error *e)
{
	unsigned char buf[sizeof(Elf64_Shdr)];	/* the largest entry read */
	unsigned char *out;

	/* num <= k->max and entsize < 64 KiB: no overflow */
	if (num > k->max)
		return error_set(e, "%s: malformed ELF file (%" PRIu64 " %s)", f->path, num,
				 k->ents), NULL;
	if (!in_file(f, off, num * entsize))
		return error_set(e, "%s: malformed ELF file (%s past its end)", f->path,
				 k->hdrs), NULL;
	out = elf_calloc(f, num ? num : 1, k->elsize, e);
	if (!out)
		return NULL;
	for (uint64_t i = 0; i < num; i++) {
		if (read_at(f, buf, f->is64 ? k->size64 : k->size32, off + i * entsize, e) < 0) {
			free(out);
			return NULL;
		}
		k->decode(f, buf, out + i * k->elsize);
	}
	return out;
}

/* The section headers: shnum (0: the count is in the first one, as when
 * there are more than 0xff00) of shentsize bytes at shoff, and the
 * section names from section shstrndx. */
static int read_sections(struct elf *f, uint64_t shoff, uint64_t shnum, uint64_t shentsize,
			 uint64_t shstrndx, struct error *e)
{
	unsigned char sh[sizeof(Elf64_Shdr)];

	if (shnum == 0 || shstrndx == SHN_XINDEX) {
		if (read_at(f, sh, sizeof(sh) > shentsize ? shentsize : sizeof(sh), shoff, e) < 0)
			return -1;
		if (shnum == 0)
			shnum = addr_field(f, sh, 20, 32);
		if (shstrndx == SHN_XINDEX)
			shstrndx = f->is64 ? le(sh + 40, 4) : le(sh + 24, 4);
	}
	f->secs = read_table(f, &sections, shoff, shnum, shentsize, e);
	if (!f->secs)
		return -1;
	f->nsecs = shnum;
	if (shstrndx < shnum && f->secs[shstrndx].type == SHT_STRTAB &&
	    f->secs[shstrndx].size < MAX_NOTES_BYTES) {
		if (!in_file(f, f->secs[shstrndx].offset, f->secs[shstrndx].size))
			return error_set(e, "%s: malformed ELF file (section names past its end)",
					 f->path);
		f->shstrlen = f->secs[shstrndx].size;
		f->shstr = elf_calloc(f, f->shstrlen + 1, 1, e);
		if (!f->shstr)
			return -1;
		if (read_at(f, f->shstr, f->shstrlen, f->secs[shstrndx].offset, e) < 0)
			return -1;
		f->shstr[f->shstrlen] = 0;
	}
	return 0;
}

/* Section and program headers of the regular file open as fd (named path
 * in messages), normalised to 64 bits. */
static int elf_open(struct elf *f, int fd, const char *path, struct error *e)
{
	unsigned char id[EI_NIDENT], h[sizeof(Elf64_Ehdr)];
	uint64_t shoff, phoff, shnum, phnum, shentsize, phentsize, shstrndx;
	int d;

	memset(f, 0, sizeof(*f));
	f->path = path;
	f->note_budget = MAX_NOTES_BYTES;
	f->fd = fd;
	if (regular_size(f->fd, path, &f->fsize, e) < 0)
		return -1;
	if (pread(f->fd, id, sizeof(id), 0) != sizeof(id) || memcmp(id, ELFMAG, SELFMAG))
		return error_set(e, "%s is not an ELF file: give the executable or library "
				 "that holds the probe", path);
	if (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64)
		return error_set(e, "%s: unknown ELF class %d", path, id[EI_CLASS]);
	if (id[EI_DATA] != ELFDATA2LSB)
		return error_set(e, "%s is a big-endian ELF file: not supported", path);
	f->is64 = id[EI_CLASS] == ELFCLASS64;
	if (read_at(f, h, f->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr), 0, e) < 0)
		return -1;
	f->machine = (unsigned)le(h + 18, 2);
	phoff = addr_field(f, h, 28, 32);
	shoff = addr_field(f, h, 32, 40);
	/* the 2-byte fields after e_flags: 12 bytes further in a 64-bit file */
	d = f->is64 ? 12 : 0;
	phentsize = le(h + 42 + d, 2);
	phnum = le(h + 44 + d, 2);
	shentsize = le(h + 46 + d, 2);
	shnum = le(h + 48 + d, 2);
	shstrndx = le(h + 50 + d, 2);
	if (shoff && shentsize < (f->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)))
		return error_set(e, "%s: malformed ELF section headers", path);
	if (phoff && phnum && phentsize < (f->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return error_set(e, "%s: malformed ELF program headers", path);
	if (shoff && read_sections(f, shoff, shnum, shentsize, shstrndx, e) < 0)
		return -1;
	if (phoff && phnum) {
		f->segs = read_table(f, &segments, phoff, phnum, phentsize, e);
		if (!f->segs)
			return -1;
		f->nsegs = phnum;
	}
	return 0;
}

static const char *sec_name(const struct elf *f, const struct sec *s)
{
	return f->shstr && s->name < f->shstrlen ? f->shstr + s->name : "";
}

/* The file offset of a virtual address: through the loadable segment
 * holding it, else the allocated section holding it.  -1 if none. */
static int vaddr_to_offset(const struct elf *f, uint64_t a, uint64_t *off)
{
	for (size_t i = 0; i < f->nsegs; i++) {
		const struct seg *s = &f->segs[i];

		if (s->type == PT_LOAD && a >= s->vaddr && a - s->vaddr < s->filesz) {
			*off = a - s->vaddr + s->offset;
			return 0;
		}
	}
	for (size_t i = 0; i < f->nsecs; i++) {
		const struct sec *s = &f->secs[i];

		if ((s->flags & SHF_ALLOC) && s->type != SHT_NOBITS && a >= s->addr &&
		    a - s->addr < s->size) {
			*off = a - s->addr + s->offset;
			return 0;
		}
	}
	return -1;
}

/* Count provider:name among the distinct names (at most MAX_NAMES kept). */
static int collect_name(struct collect *c, const char *prov, const char *name)
{
	if (!c->provider || c->names_full)
		return 0;
	for (size_t i = 0; i < c->nnames; i++)
		if (!strcmp(c->names[i][0], prov) && !strcmp(c->names[i][1], name))
			return 0;
	if (c->nnames == MAX_NAMES) {
		c->names_full = 1;
		return 0;
	}
	if (!c->names) {
		c->names = calloc(MAX_NAMES, sizeof(*c->names));
		if (!c->names)
			return -1;
	}
	snprintf(c->names[c->nnames][0], USDT_MAX_NAME, "%s", prov);
	snprintf(c->names[c->nnames][1], USDT_MAX_NAME, "%s", name);
	c->nnames++;
	return 0;
}

/* Room for one more site: at most USDT_MAX_SITES, so a file with millions
 * of notes costs bounded memory and stops early. */
static struct usdt_site *collect_site(struct elf *f, struct collect *c, struct error *e)
{
	size_t cap;
	void *p;

	if (c->n == USDT_MAX_SITES) {
		if (c->provider)
			return error_set(e, "%s: USDT probe %s:%s has more than %d sites",
					 f->path, c->provider, c->name, USDT_MAX_SITES), NULL;
		return error_set(e, "%s: more than %d USDT probe sites", f->path,
				 USDT_MAX_SITES), NULL;
	}
	if (c->n == c->cap) {
		cap = c->cap ? 2 * c->cap : 8;
		cap = MIN(cap, (size_t)USDT_MAX_SITES);
		p = realloc(c->sites, cap * sizeof(*c->sites));
		if (!p)
			return error_set(e, "%s: out of memory reading its USDT notes",
					 f->path), NULL;
		c->sites = p;
		c->cap = cap;
	}
	return &c->sites[c->n];
}

/* Collect the stapsdt notes of one note section. */
static int read_notes(struct elf *f, const struct sec *ns, int have_base, uint64_t base,
		      struct collect *c, struct error *e)
{
	size_t asz = f->is64 ? 8 : 4, p = 0;
	struct elfnote n;
	unsigned char *buf;

	/* Each section lies inside the file, and all of them together read
	 * at most MAX_NOTES_BYTES (overlapping sections cost bounded time). */
	if (ns->size > f->note_budget)
		return error_set(e, "%s: malformed ELF file (note sections of more than %u "
				 "bytes)", f->path, MAX_NOTES_BYTES);
	if (!in_file(f, ns->offset, ns->size))
		return error_set(e, "%s: malformed ELF file (a note section past its end)",
				 f->path);
	f->note_budget -= ns->size;
	buf = malloc(ns->size + 1);
	if (!buf)
		return error_set(e, "%s: out of memory reading its USDT notes", f->path);
	if (read_at(f, buf, ns->size, ns->offset, e) < 0) {
		free(buf);
		return -1;
	}
	/* little-endian files only (elf_open): the host's order or not */
	while (elfnote_next(buf, ns->size, ns->align, __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__,
			     &p, &n)) {
		const char *end, *prov, *pname, *args;
		struct usdt_site *s;
		uint64_t a, b, sem;

		if (n.type != NT_STAPSDT || n.namesz != 8 || memcmp(n.name, "stapsdt", 8) ||
		    n.descsz < 3 * asz)
			continue;
		prov = (const char *)n.desc + 3 * asz;
		end = (const char *)n.desc + n.descsz;
		a = le(n.desc, asz);
		b = le(n.desc + asz, asz);
		sem = le(n.desc + 2 * asz, asz);
		pname = memchr(prov, 0, end - prov);
		args = pname ? memchr(pname + 1, 0, end - (pname + 1)) : NULL;
		if (!pname || !args || !memchr(args + 1, 0, end - (args + 1)) ||
		    !*prov || !pname[1]) {
			free(buf);
			return error_set(e, "%s: malformed USDT note (.note.stapsdt)", f->path);
		}
		pname++;
		args++;
		c->nall++;
		if (collect_name(c, prov, pname) < 0) {
			free(buf);
			return error_set(e, "%s: out of memory reading its USDT notes", f->path);
		}
		if (c->provider && (strcmp(prov, c->provider) || strcmp(pname, c->name)))
			continue;
		s = collect_site(f, c, e);
		if (!s) {
			free(buf);
			return -1;
		}
		memset(s, 0, sizeof(*s));
		snprintf(s->path, sizeof(s->path), "%s", f->path);
		s->machine = f->machine;
		snprintf(s->provider, sizeof(s->provider), "%s", prov);
		snprintf(s->name, sizeof(s->name), "%s", pname);
		snprintf(s->arg_spec, sizeof(s->arg_spec), "%s", args);
		/* prelink moved the file: move the site by as much */
		if (have_base && b) {
			a += base - b;
			if (sem)
				sem += base - b;
		}
		s->addr = a;
		s->semaphore = sem;
		s->nargs = -1;
		if (vaddr_to_offset(f, a, &s->offset) < 0) {
			free(buf);
			return error_set(e, "%s: USDT probe %s:%s at 0x%" PRIx64 " is in no "
					 "loaded part of the file", f->path, s->provider, s->name,
					 a);
		}
		if (sem && vaddr_to_offset(f, sem, &s->semaphore_offset) < 0) {
			free(buf);
			return error_set(e, "%s: the semaphore of USDT probe %s:%s at 0x%" PRIx64
					 " is in no loaded part of the file", f->path, s->provider,
					 s->name, sem);
		}
		c->n++;
	}
	free(buf);
	return 0;
}

/* The sites of the file open as fd (named path) into c. */
static int collect_file(int fd, const char *path, struct collect *c, struct error *e)
{
	struct elf f;
	uint64_t base = 0;
	int have_base = 0, ret = -1;

	if (elf_open(&f, fd, path, e) < 0)
		goto out;
	for (size_t i = 0; i < f.nsecs; i++)
		if (!strcmp(sec_name(&f, &f.secs[i]), ".stapsdt.base")) {
			have_base = 1;
			base = f.secs[i].addr;
		}
	for (size_t i = 0; i < f.nsecs; i++)
		if (f.secs[i].type == SHT_NOTE &&
		    read_notes(&f, &f.secs[i], have_base, base, c, e) < 0)
			goto out;
	ret = 0;
out:
	elf_free(&f);
	return ret;
}

int usdt_list_fd(int fd, const char *path, struct usdt_site **sites, size_t *n,
		 struct error *e)
{
	struct collect c = { 0 };
	int ret = collect_file(fd, path, &c, e);

	free(c.names);
	if (ret < 0) {
		free(c.sites);
		c.sites = NULL;
		c.n = 0;
	}
	*sites = c.sites;
	*n = c.n;
	return ret;
}

int usdt_list(const char *path, struct usdt_site **sites, size_t *n, struct error *e)
{
	int fd = open_regular(path, e), ret;

	*sites = NULL;
	*n = 0;
	if (fd < 0)
		return -1;
	ret = usdt_list_fd(fd, path, sites, n, e);
	close(fd);
	return ret;
}

/* "it has a:b, c:d" or "it has 40 probes, e.g. a:b, ...": the names of
 * the probes seen, each once. */
static void probe_names(const struct collect *c, char *buf, size_t len)
{
	size_t used = 0, shown = 0;

	buf[0] = 0;
	for (size_t i = 0; i < c->nnames && shown < 8 && used < len; i++) {
		int r = snprintf(buf + used, len - used, "%s%s:%s", shown ? ", " : "",
				 c->names[i][0], c->names[i][1]);

		used = r < 0 ? len : MIN(len, used + (size_t)r);
		shown++;
	}
	if ((c->nnames > shown || c->names_full) && used < len)
		snprintf(buf + used, len - used, ", ... (%s%zu probes: 'readelf -n' lists them)",
			 c->names_full ? "more than " : "", c->nnames);
}

int usdt_find_fd(int fd, const char *path, const char *provider, const char *name,
		 struct usdt_site **sites, size_t *n, struct error *e)
{
	struct collect c = { .provider = provider, .name = name };

	*sites = NULL;
	*n = 0;
	if (collect_file(fd, path, &c, e) < 0)
		goto fail;
	for (size_t i = 0; i < c.n; i++) {
		struct usdt_site *s = &c.sites[i];

		if (usdt_machine_check(s->machine, path, e) < 0) {
			error_prefix(e, "USDT probe %s:%s", provider, name);
			goto fail;
		}
		if (usdt_parse_args(s->machine, s->arg_spec, s->args, USDT_MAX_ARGS, &s->nargs,
				    e) < 0) {
			error_prefix(e, "USDT probe %s:%s at offset 0x%" PRIx64 " of %s has "
				     "arguments \"%s\"", provider, name, s->offset, path,
				     s->arg_spec);
			goto fail;
		}
	}
	if (!c.n) {
		char names[300];

		if (!c.nall) {
			error_set(e, "no USDT probe %s:%s in %s: it has no USDT probes "
				  "(no .note.stapsdt notes)", provider, name, path);
		} else {
			probe_names(&c, names, sizeof(names));
			error_set(e, "no USDT probe %s:%s in %s: it has %s", provider, name,
				  path, names);
		}
		goto fail;
	}
	free(c.names);
	*sites = c.sites;
	*n = c.n;
	return 0;
fail:
	free(c.names);
	free(c.sites);
	return -1;
}

int usdt_find(const char *path, const char *provider, const char *name,
	      struct usdt_site **sites, size_t *n, struct error *e)
{
	int fd = open_regular(path, e), ret;

	*sites = NULL;
	*n = 0;
	if (fd < 0)
		return -1;
	ret = usdt_find_fd(fd, path, provider, name, sites, n, e);
	close(fd);
	return ret;
}

static int is_ident(const char *s)
{
	if (!*s || isdigit((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

int usdt_parse_spec(const char *spec, char *path, size_t pathlen,
		    char provider[USDT_MAX_NAME], char name[USDT_MAX_NAME], struct error *e)
{
	const char *c2 = strrchr(spec, ':'), *c1;
	size_t plen;

	c1 = c2 ? c2 : NULL;
	while (c1 && c1 > spec && c1[-1] != ':')
		c1--;
	if (!c2 || c1 == spec) {
		return error_set(e, "bad marker '%s': give PATH:PROVIDER:NAME, e.g. "
				 "./prog:myapp:start ('readelf -n PATH' lists the probes)", spec);
	}
	c1--;	/* the colon before PROVIDER */
	plen = c1 - spec;
	if (!plen || plen >= pathlen)
		return error_set(e, "bad marker '%s': %s", spec,
				 plen ? "the path is too long" :
				 "no path: give PATH:PROVIDER:NAME");
	if ((size_t)(c2 - c1 - 1) >= USDT_MAX_NAME || strlen(c2 + 1) >= USDT_MAX_NAME)
		return error_set(e, "bad marker '%s': provider or probe name too long", spec);
	memcpy(path, spec, plen);
	path[plen] = 0;
	memcpy(provider, c1 + 1, c2 - c1 - 1);
	provider[c2 - c1 - 1] = 0;
	strcpy(name, c2 + 1);
	if (!is_ident(provider) || !is_ident(name))
		return error_set(e, "bad marker '%s': PROVIDER and NAME are C identifiers, "
				 "as in PATH:PROVIDER:NAME", spec);
	return 0;
}
