/*
 * hashkey.c - the identity of a binary (see hashkey.h): the GNU build-id
 * read straight from the ELF notes, or else the XXH3-128 of the whole
 * file, memoised by (dev, inode, size, mtime).
 */
#include "config.h"
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include "elfnote.h"
#include "hashkey.h"
#include "otable.h"

/*
 * Why the build-id is read by hand and not with libelf (elfutils, linked
 * already for libdw), checked against elfutils 0.188:
 *  - Fixed bounds whatever the file says.  elf_begin() callocs one
 *    Elf_Scn (some 200 bytes) for every section e_shnum (or section 0's
 *    sh_size) claims, as many as the file's size holds headers, before a
 *    caller can look at the count; gelf_getshdr() reads and mallocs the whole
 *    section header table at once; elf_getdata() a note section's whole
 *    sh_size.  A crafted file of up to HASHKEY_FILE_MAX (1 GiB) so costs
 *    GiBs in the process that parses.  Here a header table is at most
 *    HDRTAB_MAX, a note area NOTES_MAX, all note areas NOTES_BUDGET, and
 *    test_elf_hostile proves it (its malloc wrap sees this file's
 *    allocations, never libelf.so's).
 *  - The same key.  Keys are stored in databases and the binary cache:
 *    they must not change with the parser.  libelf steps through header
 *    tables by sizeof(Phdr)/sizeof(Shdr), ignoring e_phentsize and
 *    e_shentsize, and treats PN_XNUM and truncated tables its own way,
 *    so some files this reader keys by their build-id would get another
 *    key (or the hash of their contents).
 *  - hashkey_build_id_notes() reads a bare notes blob (/sys/kernel/notes,
 *    the vdso's PT_NOTE in memory): gelf_getnote() walks only an Elf_Data
 *    of an Elf handle, never a caller's buffer.
 * What is left by hand is small: the header fields (memcpy and byte swap)
 * here, and the note walk, lib/base/elfnote.c, shared with usdt.c.
 */
#define NOTES_MAX (1 << 20)	/* largest note segment/section we read */
#define NOTES_BUDGET (4 << 20)	/* note bytes read per file, all areas */
#define HDRTAB_MAX (4 << 20)	/* largest program/section header table */
#define CHUNK (1 << 20)		/* XXH3 read size */


/* Reading ELF fields of either byte order. */
struct elf_reader {
	int swap;
	int is64;
};

static uint16_t rd16(const struct elf_reader *r, const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return r->swap ? __builtin_bswap16(v) : v;
}

static uint32_t rd32(const struct elf_reader *r, const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return r->swap ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const struct elf_reader *r, const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return r->swap ? __builtin_bswap64(v) : v;
}

/* Find NT_GNU_BUILD_ID "GNU" in a sequence of notes with the given
 * alignment (4, or 8 for some PT_NOTE segments). Returns its length. */
static int parse_notes(const struct elf_reader *r, const unsigned char *p,
		       size_t len, size_t align, uint8_t *id, size_t cap)
{
	struct elfnote n;
	size_t pos = 0;

	while (elfnote_next(p, len, align, r->swap, &pos, &n))
		if (n.type == NT_GNU_BUILD_ID && n.namesz == 4 && !memcmp(n.name, "GNU", 4) &&
		    n.descsz > 0) {
			size_t k = MIN((size_t)n.descsz, cap);

			memcpy(id, n.desc, k);
			return (int)k;
		}
	return 0;
}

int hashkey_build_id_notes(const void *notes, size_t len, uint8_t *id, size_t cap)
{
	struct elf_reader r = { 0, 0 };

	if (!notes || !cap)
		return 0;
	return parse_notes(&r, notes, len, 4, id, cap);
}

/* [off, off + len) lies inside a file of fsize bytes (no overflow). */
static int in_file(uint64_t off, uint64_t len, uint64_t fsize)
{
	return off <= fsize && len <= fsize - off;
}

/* Read the note area [off, off+size) and look for the build-id in it.
 * The area must lie inside the file, and all areas together read at most
 * NOTES_BUDGET bytes (*budget), so overlapping areas cost bounded time. */
static int note_area(int fd, const struct elf_reader *r, uint64_t fsize,
		     uint64_t off, uint64_t size, uint64_t align, uint8_t *id,
		     size_t cap, size_t *budget)
{
	unsigned char *buf;
	int ret;

	if (size < sizeof(Elf32_Nhdr) || size > NOTES_MAX ||
	    !in_file(off, size, fsize) || size > *budget)
		return 0;
	*budget -= size;
	buf = malloc(size);
	if (!buf) {
		errno = ENOMEM;
		return -1;
	}
	ret = fd_pread_all(fd, buf, size, off);
	if (ret > 0)
		ret = parse_notes(r, buf, size, align == 8 ? 8 : 4, id, cap);
	free(buf);
	return ret;
}

/* A header table of n entries of ent bytes at off lies inside a file of
 * fsize bytes (else it cannot be read: and the header's numbers must not
 * size an allocation, up to 4 GB, before that is known). */
/* One entry of a header table, copied out of it (entries need not be
 * aligned: e_phentsize and e_shentsize are the file's word). */
union hdr_ent {
	Elf64_Phdr p64;
	Elf32_Phdr p32;
	Elf64_Shdr s64;
	Elf32_Shdr s32;
};

static unsigned long build_id_parses;

unsigned long hashkey_build_id_parses(void)
{
	return __atomic_load_n(&build_id_parses, __ATOMIC_RELAXED);
}

/* The fields of the ELF header that locate the header tables. */
struct elf_tables {
	uint64_t phoff, shoff;
	unsigned phnum, shnum, phentsize, shentsize;
};

/* Read fd's ELF header into *r (class, byte order) and *t.  Returns 1,
 * 0 when fd is no ELF file of a known class and byte order (or is too
 * short), -1 with errno set when it cannot be read. */
static int read_elf_header(int fd, struct elf_reader *r, struct elf_tables *t)
{
	unsigned char ehdr[sizeof(Elf64_Ehdr)];
	struct stat st;
	int ret;

	ret = fd_pread_all(fd, ehdr, EI_NIDENT, 0);
	if (ret <= 0)
		return ret;
	if (memcmp(ehdr, ELFMAG, SELFMAG))
		return 0;
	if (ehdr[EI_CLASS] != ELFCLASS32 && ehdr[EI_CLASS] != ELFCLASS64)
		return 0;
	if (ehdr[EI_DATA] != ELFDATA2LSB && ehdr[EI_DATA] != ELFDATA2MSB)
		return 0;
	r->is64 = ehdr[EI_CLASS] == ELFCLASS64;
	r->swap = (ehdr[EI_DATA] == ELFDATA2LSB) !=
		  (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
	ret = fd_pread_all(fd, ehdr, r->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr), 0);
	if (ret <= 0)
		return ret;
	if (fstat(fd, &st) < 0)
		return -1;

	if (r->is64) {
		const Elf64_Ehdr *h = (const void *)ehdr;

		t->phoff = rd64(r, &h->e_phoff);
		t->shoff = rd64(r, &h->e_shoff);
		t->phnum = rd16(r, &h->e_phnum);
		t->shnum = rd16(r, &h->e_shnum);
		t->phentsize = rd16(r, &h->e_phentsize);
		t->shentsize = rd16(r, &h->e_shentsize);
	} else {
		const Elf32_Ehdr *h = (const void *)ehdr;

		t->phoff = rd32(r, &h->e_phoff);
		t->shoff = rd32(r, &h->e_shoff);
		t->phnum = rd16(r, &h->e_phnum);
		t->shnum = rd16(r, &h->e_shnum);
		t->phentsize = rd16(r, &h->e_phentsize);
		t->shentsize = rd16(r, &h->e_shentsize);
	}
	return 1;
}

/* Whether the table entry ent is a note area (PT_NOTE for a program
 * header, SHT_NOTE for a section header); if so its place and alignment. */
typedef int (*note_ent_fn)(const struct elf_reader *r, const union hdr_ent *ent,
			   uint64_t *off, uint64_t *size, uint64_t *align);

static int phdr_note(const struct elf_reader *r, const union hdr_ent *ent,
		     uint64_t *off, uint64_t *size, uint64_t *align)
{
	if (r->is64) {
		const Elf64_Phdr *p = &ent->p64;

		if (rd32(r, &p->p_type) != PT_NOTE)
			return 0;
		*off = rd64(r, &p->p_offset);
		*size = rd64(r, &p->p_filesz);
		*align = rd64(r, &p->p_align);
	} else {
		const Elf32_Phdr *p = &ent->p32;

		if (rd32(r, &p->p_type) != PT_NOTE)
			return 0;
		*off = rd32(r, &p->p_offset);
		*size = rd32(r, &p->p_filesz);
		*align = rd32(r, &p->p_align);
	}
	return 1;
}

static int shdr_note(const struct elf_reader *r, const union hdr_ent *ent,
		     uint64_t *off, uint64_t *size, uint64_t *align)
{
	if (r->is64) {
		const Elf64_Shdr *s = &ent->s64;

		if (rd32(r, &s->sh_type) != SHT_NOTE)
			return 0;
		*off = rd64(r, &s->sh_offset);
		*size = rd64(r, &s->sh_size);
		*align = rd64(r, &s->sh_addralign);
	} else {
		const Elf32_Shdr *s = &ent->s32;

		if (rd32(r, &s->sh_type) != SHT_NOTE)
			return 0;
		*off = rd32(r, &s->sh_offset);
		*size = rd32(r, &s->sh_size);
		*align = rd32(r, &s->sh_addralign);
	}
	return 1;
}

/* Look for the build-id in the note areas of a header table of num
 * entries of entsize bytes (entlen of them copied out) at off.  A table
 * must lie inside the file and be at most HDRTAB_MAX: a malformed one means
 * no build-id (the file is then keyed by its contents).  Returns the
 * build-id's length, 0 for none, -1 with errno set on a read error. */
static int scan_table(int fd, const struct elf_reader *r, uint64_t fsize, uint64_t off,
		      unsigned num, unsigned entsize, size_t entlen, note_ent_fn is_note,
		      uint8_t *id, size_t cap, size_t *budget)
{
	size_t tablen = (size_t)num * entsize;
	unsigned char *tab;
	int ret, found = 0;

	if (!off || !num || entsize < entlen || tablen > HDRTAB_MAX ||
	    !in_file(off, tablen, fsize))
		return 0;
	tab = malloc(tablen);
	if (!tab) {
		errno = ENOMEM;
		return -1;
	}
	ret = fd_pread_all(fd, tab, tablen, off);
	if (ret < 0)
		found = -1;
	for (unsigned i = 0; ret > 0 && i < num && !found; i++) {
		union hdr_ent ent;
		uint64_t aoff, size, align;

		/* an aligned copy: entsize need not be a multiple of 8 */
		memcpy(&ent, tab + (size_t)i * entsize, entlen);
		if (!is_note(r, &ent, &aoff, &size, &align))
			continue;
		found = note_area(fd, r, fsize, aoff, size, align, id, cap, budget);
	}
	if (found < 0) {
		int err = errno;

		free(tab);
		errno = err;
		return -1;
	}
	free(tab);
	return found;
}

int hashkey_build_id_fd(int fd, uint8_t *id, size_t cap, struct error *e)
{
	struct elf_reader r;
	struct elf_tables t;
	size_t budget = NOTES_BUDGET;
	int ret, found = 0, err;
	struct stat st;
	char name[256];

	__atomic_add_fetch(&build_id_parses, 1, __ATOMIC_RELAXED);
	if (fstat(fd, &st) < 0)
		goto fail;
	ret = read_elf_header(fd, &r, &t);
	if (ret < 0)
		goto fail;
	if (!ret)
		return 0;

	/* The PT_NOTE segments of executables and shared objects. */
	if (t.phnum != PN_XNUM)
		found = scan_table(fd, &r, st.st_size, t.phoff, t.phnum, t.phentsize,
				   r.is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr),
				   phdr_note, id, cap, &budget);
	if (found)
		goto done;

	/* Else the SHT_NOTE sections (objects without program headers). */
	found = scan_table(fd, &r, st.st_size, t.shoff, t.shnum, t.shentsize,
			   r.is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr),
			   shdr_note, id, cap, &budget);
done:
	if (found >= 0)
		return found;
fail:
	err = errno;
	return error_set(e, "cannot read the ELF headers of %s: %s",
			 util_fd_name(fd, name, sizeof(name)), strerror(err));
}

int hashkey_xxh3_fd(int fd, char hex[33], struct error *e)
{
	XXH3_state_t *st = XXH3_createState();
	XXH128_hash_t h;
	unsigned char *buf;
	uint64_t off = 0;

	if (!st)
		return error_set(e, "cannot hash file: out of memory");
	buf = malloc(CHUNK);
	if (!buf) {
		XXH3_freeState(st);
		return error_set(e, "cannot hash file: out of memory");
	}
	XXH3_128bits_reset(st);
	for (;;) {
		ssize_t r = pread(fd, buf, CHUNK, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			int err = errno;
			char name[256];

			error_set(e, "cannot read %s to hash it: %s",
				  util_fd_name(fd, name, sizeof(name)), strerror(err));
			free(buf);
			XXH3_freeState(st);
			return -1;
		}
		if (r == 0)
			break;
		XXH3_128bits_update(st, buf, (size_t)r);
		off += r;
		if (off > HASHKEY_FILE_MAX) {
			/* grew since hashkey_file() checked its size */
			char name[256];

			error_set(e, "cannot hash %s: larger than " HASHKEY_FILE_MAX_TEXT,
				  util_fd_name(fd, name, sizeof(name)));
			free(buf);
			XXH3_freeState(st);
			return -1;
		}
	}
	h = XXH3_128bits_digest(st);
	free(buf);
	XXH3_freeState(st);
	snprintf(hex, 33, "%016llx%016llx", (unsigned long long)h.high64,
		 (unsigned long long)h.low64);
	return 0;
}

void hashkey_xxh3_buf(const void *buf, size_t len, char hex[33])
{
	XXH128_hash_t h = XXH3_128bits(buf, len);

	snprintf(hex, 33, "%016llx%016llx", (unsigned long long)h.high64,
		 (unsigned long long)h.low64);
}

void hashkey_format(char key[HASHKEY_MAX], const char *prefix,
		    const uint8_t *id, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	size_t n = strlen(prefix), i;

	/* Truncate an (absurdly) long build-id rather than overflow. */
	if (n + 1 + 2 * len + 1 > HASHKEY_MAX)
		len = (HASHKEY_MAX - n - 2) / 2;
	memcpy(key, prefix, n);
	key[n++] = ':';
	for (i = 0; i < len; i++) {
		key[n++] = digits[id[i] >> 4];
		key[n++] = digits[id[i] & 15];
	}
	key[n] = 0;
}

int hashkey_kernel(char key[HASHKEY_MAX], struct error *e)
{
	static const char path[] = "/sys/kernel/notes";
	uint8_t id[BUILD_ID_MAX];
	size_t len;
	char *buf = file_read_all(path, &len);
	int n;

	if (!buf)
		return error_set(e, "cannot read %s: %s", path, strerror(errno));
	n = hashkey_build_id_notes(buf, len, id, sizeof(id));
	free(buf);
	if (n <= 0)
		return error_set(e, "no build-id in %s", path);
	hashkey_format(key, "kernel", id, n);
	return 0;
}

/* The memo: an otable of file identities.  The identity includes the
 * ctime, which no one can set: a file rewritten in place with its size
 * and mtime restored (touch -d) is a new identity.  Laid out without
 * padding: the otable compares and hashes its bytes. */
struct memo_id {
	uint64_t dev, ino;
	int64_t size;
	int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
};

struct memo_entry {
	struct memo_id id;
	char key[HASHKEY_MAX];	/* "" until known */
	char content[33];	/* XXH3-128 hex, "" until known */
};

struct hashkey_memo {
	struct otable tab;
};

struct hashkey_memo *hashkey_memo_new(void)
{
	struct hashkey_memo *m = xcalloc(1, sizeof(*m));

	otable_init(&m->tab, sizeof(struct memo_entry), sizeof(struct memo_id), 64);
	return m;
}

void hashkey_memo_free(struct hashkey_memo *m)
{
	if (!m)
		return;
	otable_free(&m->tab);
	free(m);
}

size_t hashkey_memo_count(const struct hashkey_memo *m)
{
	return m ? m->tab.nr : 0;
}

/* The entry of st, created empty if new (valid until the next call).  The
 * table is bounded: past HASHKEY_MEMO_MAX identities it starts afresh
 * (files are then read again, which costs time, never memory). */
static struct memo_entry *memo_get(struct hashkey_memo *m, const struct stat *st)
{
	struct memo_id id = {
		.dev = st->st_dev,
		.ino = st->st_ino,
		.size = st->st_size,
		.mtime_s = st->st_mtim.tv_sec,
		.mtime_ns = st->st_mtim.tv_nsec,
		.ctime_s = st->st_ctim.tv_sec,
		.ctime_ns = st->st_ctim.tv_nsec,
	};
	int added;

	if (m->tab.nr >= HASHKEY_MEMO_MAX)
		otable_clear(&m->tab);
	return otable_get(&m->tab, &id, &added);
}

/* fstat fd and check it is a regular file hashkey may read. */
static int hashable(int fd, struct stat *st, struct error *e)
{
	char name[256];
	int n;

	if (fstat(fd, st) < 0) {
		n = errno;
		return error_set(e, "cannot stat %s to hash it: %s",
				 util_fd_name(fd, name, sizeof(name)), strerror(n));
	}
	if (!S_ISREG(st->st_mode))
		return error_set(e, "cannot hash %s: not a regular file",
				 util_fd_name(fd, name, sizeof(name)));
	if (st->st_size > HASHKEY_FILE_MAX)
		return error_set(e, "cannot hash %s: larger than " HASHKEY_FILE_MAX_TEXT,
				 util_fd_name(fd, name, sizeof(name)));
	return 0;
}

int hashkey_content(struct hashkey_memo *m, int fd, char hex[33], struct error *e)
{
	struct memo_entry *me = NULL;
	struct stat st;

	if (hashable(fd, &st, e) < 0)
		return -1;
	if (m) {
		me = memo_get(m, &st);
		if (me->content[0]) {
			memcpy(hex, me->content, 33);
			return 0;
		}
	}
	if (hashkey_xxh3_fd(fd, hex, e) < 0)
		return -1;
	if (me)
		memcpy(me->content, hex, 33);
	return 0;
}

int hashkey_file(struct hashkey_memo *m, int fd, char key[HASHKEY_MAX],
		 struct error *e)
{
	return hashkey_file_by(m, fd, key, NULL, NULL, e);
}

int hashkey_file_by(struct hashkey_memo *m, int fd, char key[HASHKEY_MAX],
		    int (*read_id)(void *ctx, int fd, uint8_t *id, size_t cap, struct error *e),
		    void *ctx, struct error *e)
{
	struct memo_entry *me = NULL;
	uint8_t id[BUILD_ID_MAX];
	struct stat st;
	char hex[33];
	int n;

	if (hashable(fd, &st, e) < 0)
		return -1;
	if (m) {
		me = memo_get(m, &st);
		if (me->key[0]) {
			memcpy(key, me->key, HASHKEY_MAX);
			return 0;
		}
	}
	n = read_id ? read_id(ctx, fd, id, sizeof(id), e) :
		      hashkey_build_id_fd(fd, id, sizeof(id), e);
	if (n == -2) {
		/* unread: keyed by its contents, and not remembered so (the
		 * next look may read it) */
		me = NULL;
		n = 0;
	}
	if (n < 0 || n > (int)sizeof(id))
		return -1;
	if (n > 0) {
		hashkey_format(key, "buildid", id, n);
	} else {
		if (hashkey_xxh3_fd(fd, hex, e) < 0)
			return -1;
		snprintf(key, HASHKEY_MAX, "xxh3:%s", hex);
		if (me)
			memcpy(me->content, hex, 33);
	}
	if (me)
		snprintf(me->key, sizeof(me->key), "%s", key);
	return 0;
}
