/*
 * test_elf_hostile.c - lib/symbols/hashkey.c and lib/capture/usdt.c on crafted ELF files
 * (issue 9): huge or overflowing header counts and offsets, note sections
 * past the end of the file, overflowing note sizes, 100,000 stapsdt
 * notes, overlapping note areas, truncated, non-ELF, ELF32 big-endian,
 * zero-size sections and section names past their table.  Each must give
 * an error or a bounded result: no crash, no allocation larger than a
 * small multiple of the file, bounded time.
 *
 * malloc, calloc and realloc are wrapped (-Wl,--wrap) for the code under
 * test: the largest request is recorded, and one over REFUSE fails as if
 * memory had run out, which code using xmalloc would die on.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "hashkey.h"
#include "symtab.h"
#include "usdt.h"

#define REFUSE		(32u << 20)
#define SLACK		(128u << 10)	/* room for a few struct usdt_site (5 KiB each) */
/* The most the code may allocate at once for a file of n bytes. */
#define ALLOC_BOUND(n)	(16 * (size_t)(n) + SLACK)

void *__real_malloc(size_t n);
void *__real_calloc(size_t nmemb, size_t size);
void *__real_realloc(void *p, size_t n);

static size_t max_req;

static int req_ok(size_t n)
{
	if (n > max_req)
		max_req = n;
	return n <= REFUSE;
}

void *__wrap_malloc(size_t n)
{
	return req_ok(n) ? __real_malloc(n) : NULL;
}

void *__wrap_calloc(size_t nmemb, size_t size)
{
	size_t n;

	if (__builtin_mul_overflow(nmemb, size, &n))
		n = SIZE_MAX;
	return req_ok(n) ? __real_calloc(nmemb, size) : NULL;
}

void *__wrap_realloc(void *p, size_t n)
{
	return req_ok(n) ? __real_realloc(p, n) : NULL;
}

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/strobe-test-hostile-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd);
}

/* An ELF image being built: little-endian unless be. */
struct img {
	unsigned char *b;
	size_t len;
	int be;
};

static void img_init(struct img *m, size_t len, int be)
{
	m->b = calloc(1, len);
	assert_non_null(m->b);
	m->len = len;
	m->be = be;
}

static void put(struct img *m, size_t off, size_t size, uint64_t v)
{
	assert_true(off + size <= m->len);
	for (size_t i = 0; i < size; i++) {
		unsigned shift = m->be ? 8 * (size - 1 - i) : 8 * i;

		m->b[off + i] = (unsigned char)(v >> shift);
	}
}

#define PUT(m, base, type, field, v) \
	put((m), (base) + offsetof(type, field), sizeof(((type *)0)->field), (v))

static void ehdr64(struct img *m, uint64_t phoff, unsigned phnum, unsigned phentsize,
		   uint64_t shoff, unsigned shnum, unsigned shentsize, unsigned shstrndx)
{
	memcpy(m->b, ELFMAG, SELFMAG);
	m->b[EI_CLASS] = ELFCLASS64;
	m->b[EI_DATA] = m->be ? ELFDATA2MSB : ELFDATA2LSB;
	m->b[EI_VERSION] = EV_CURRENT;
	PUT(m, 0, Elf64_Ehdr, e_type, ET_DYN);
	PUT(m, 0, Elf64_Ehdr, e_machine, EM_X86_64);
	PUT(m, 0, Elf64_Ehdr, e_version, EV_CURRENT);
	PUT(m, 0, Elf64_Ehdr, e_phoff, phoff);
	PUT(m, 0, Elf64_Ehdr, e_shoff, shoff);
	PUT(m, 0, Elf64_Ehdr, e_ehsize, sizeof(Elf64_Ehdr));
	PUT(m, 0, Elf64_Ehdr, e_phentsize, phentsize);
	PUT(m, 0, Elf64_Ehdr, e_phnum, phnum);
	PUT(m, 0, Elf64_Ehdr, e_shentsize, shentsize);
	PUT(m, 0, Elf64_Ehdr, e_shnum, shnum);
	PUT(m, 0, Elf64_Ehdr, e_shstrndx, shstrndx);
}

static void shdr64(struct img *m, uint64_t shoff, unsigned i, unsigned name, unsigned type,
		   uint64_t flags, uint64_t addr, uint64_t off, uint64_t size, uint64_t align)
{
	size_t base = shoff + i * sizeof(Elf64_Shdr);

	PUT(m, base, Elf64_Shdr, sh_name, name);
	PUT(m, base, Elf64_Shdr, sh_type, type);
	PUT(m, base, Elf64_Shdr, sh_flags, flags);
	PUT(m, base, Elf64_Shdr, sh_addr, addr);
	PUT(m, base, Elf64_Shdr, sh_offset, off);
	PUT(m, base, Elf64_Shdr, sh_size, size);
	PUT(m, base, Elf64_Shdr, sh_addralign, align);
}

static void phdr64(struct img *m, uint64_t phoff, unsigned i, unsigned type,
		   uint64_t off, uint64_t size, uint64_t align)
{
	size_t base = phoff + i * sizeof(Elf64_Phdr);

	PUT(m, base, Elf64_Phdr, p_type, type);
	PUT(m, base, Elf64_Phdr, p_offset, off);
	PUT(m, base, Elf64_Phdr, p_filesz, size);
	PUT(m, base, Elf64_Phdr, p_align, align);
}

/* One stapsdt note at off for provider "p", probe name, at 0x1000: 52 bytes
 * with a one-letter name. */
#define NOTE_LEN 52
static void stapsdt_note(struct img *m, size_t off, char name)
{
	put(m, off, 4, 8);		/* namesz */
	put(m, off + 4, 4, 29);		/* descsz: 3 addresses, "p\0n\0\0" */
	put(m, off + 8, 4, 3);		/* NT_STAPSDT */
	memcpy(m->b + off + 12, "stapsdt", 8);
	put(m, off + 20, 8, 0x1000);	/* site */
	put(m, off + 28, 8, 0);		/* .stapsdt.base */
	put(m, off + 36, 8, 0);		/* semaphore */
	memcpy(m->b + off + 44, "p\0", 2);
	m->b[off + 46] = name;
	m->b[off + 47] = 0;
	m->b[off + 48] = 0;		/* no arguments */
}

/*
 * ELF64: ehdr | .text (16 bytes at 0x1000) | notes | .shstrtab | 4 shdrs:
 * null, .text, .note.stapsdt (notes_size bytes from NOTES_OFF), .shstrtab.
 * nnotes stapsdt notes are written; the caller may then break any field.
 */
#define TEXT_OFF	64
#define NOTES_OFF	80
static const char shstr[] = "\0.text\0.note.stapsdt\0.shstrtab";

struct layout {
	size_t shstr_off, shoff;
};

static struct layout notes_elf(struct img *m, size_t nnotes, uint64_t notes_size)
{
	struct layout l;

	l.shstr_off = NOTES_OFF + nnotes * NOTE_LEN;
	l.shoff = (l.shstr_off + sizeof(shstr) + 7) & ~(size_t)7;
	img_init(m, l.shoff + 4 * sizeof(Elf64_Shdr), 0);
	ehdr64(m, 0, 0, 0, l.shoff, 4, sizeof(Elf64_Shdr), 3);
	for (size_t i = 0; i < nnotes; i++)
		stapsdt_note(m, NOTES_OFF + i * NOTE_LEN, 'n');
	memcpy(m->b + l.shstr_off, shstr, sizeof(shstr));
	shdr64(m, l.shoff, 1, 1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, TEXT_OFF,
	       16, 16);
	shdr64(m, l.shoff, 2, 7, SHT_NOTE, 0, 0, NOTES_OFF, notes_size, 4);
	shdr64(m, l.shoff, 3, 21, SHT_STRTAB, 0, 0, l.shstr_off, sizeof(shstr), 1);
	return l;
}

/* The reporting side opens every crafted file too: a symtab or an error
 * (libbfd parses it; our code around it must not crash or over-allocate). */
static void symtab_try(const char *path)
{
	struct error e = { 0 };
	struct symtab_hit hit;
	struct symtab *s;
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	max_req = 0;
	s = symtab_open(path, &e);
	if (s) {
		symtab_lookup(s, TEXT_OFF, 1, &hit);
		symtab_close(s);
	} else {
		assert_true(e.msg[0] != 0);
	}
	/* only ours are seen: libbfd is a shared library, not wrapped */
	if (max_req > ALLOC_BOUND(st.st_size))
		fail_msg("symtab_open(%s) asked for %zu bytes at once", path, max_req);
}

/* Write the image to tmpdir/name (freeing it); its path in path. */
static void write_img(struct img *m, const char *name, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/%s", tmpdir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, m->b, m->len), (ssize_t)m->len);
	close(fd);
	free(m->b);
	m->b = NULL;
	symtab_try(path);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static off_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

/* hashkey_build_id_fd on path: the build-id length; allocation bounded. */
static int build_id(const char *path)
{
	uint8_t id[BUILD_ID_MAX];
	struct error e = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC), n;

	assert_true(fd >= 0);
	max_req = 0;
	n = hashkey_build_id_fd(fd, id, sizeof(id), &e);
	close(fd);
	if (max_req > ALLOC_BOUND(file_size(path)))
		fail_msg("hashkey_build_id_fd(%s) asked for %zu bytes at once", path, max_req);
	return n;
}

/* hashkey_file gives a key (the file's contents when no build-id). */
static void key_ok(const char *path)
{
	char key[HASHKEY_MAX];
	struct error e = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	if (hashkey_file(NULL, fd, key, &e) < 0)
		fail_msg("hashkey_file(%s): %s", path, e.msg);
	close(fd);
}

/* usdt_list on path: its return; allocation bounded; e.msg filled. */
static int list(const char *path, size_t *n, struct error *e)
{
	struct usdt_site *s;
	int ret;

	max_req = 0;
	memset(e, 0, sizeof(*e));
	ret = usdt_list(path, &s, n, e);
	free(s);
	if (max_req > ALLOC_BOUND(file_size(path)))
		fail_msg("usdt_list(%s) asked for %zu bytes at once", path, max_req);
	return ret;
}

static void expect_list_error(const char *path, const char *msg)
{
	struct error e;
	size_t n;

	assert_int_equal(list(path, &n, &e), -1);
	if (!strstr(e.msg, msg))
		fail_msg("usdt_list(%s): \"%s\", not \"%s\"", path, e.msg, msg);
	assert_int_equal(n, 0);
}

/* e_phnum 0xfffe of e_phentsize 0xffff: a 4 GiB table in a 128-byte file. */
static void test_huge_phdrs(void **state)
{
	char path[128];
	struct img m;

	(void)state;
	img_init(&m, 128, 0);
	ehdr64(&m, 64, 0xfffe, 0xffff, 0, 0, 0, 0);
	write_img(&m, "huge-phdrs", path, sizeof(path));
	assert_int_equal(build_id(path), 0);
	key_ok(path);
	expect_list_error(path, "malformed ELF file");

	/* the same in ELF32 big-endian */
	img_init(&m, 128, 1);
	memcpy(m.b, ELFMAG, SELFMAG);
	m.b[EI_CLASS] = ELFCLASS32;
	m.b[EI_DATA] = ELFDATA2MSB;
	PUT(&m, 0, Elf32_Ehdr, e_phoff, 52);
	PUT(&m, 0, Elf32_Ehdr, e_phentsize, 0xffff);
	PUT(&m, 0, Elf32_Ehdr, e_phnum, 0xfffe);
	PUT(&m, 0, Elf32_Ehdr, e_shoff, 52);
	PUT(&m, 0, Elf32_Ehdr, e_shentsize, 0xffff);
	PUT(&m, 0, Elf32_Ehdr, e_shnum, 0xfffe);
	write_img(&m, "huge-phdrs-32be", path, sizeof(path));
	assert_int_equal(build_id(path), 0);
	key_ok(path);
	expect_list_error(path, "big-endian");
}

/* Header tables past the end of the file, or at offsets that overflow. */
static void test_table_offsets(void **state)
{
	char path[128];
	struct img m;

	(void)state;
	img_init(&m, 256, 0);
	ehdr64(&m, 1ull << 40, 1, sizeof(Elf64_Phdr), UINT64_MAX - 8, 2, sizeof(Elf64_Shdr), 0);
	write_img(&m, "offsets", path, sizeof(path));
	assert_int_equal(build_id(path), 0);
	key_ok(path);
	expect_list_error(path, "malformed ELF file");

	/* tables starting inside the file and running past its end */
	img_init(&m, 256, 0);
	ehdr64(&m, 200, 4, sizeof(Elf64_Phdr), 200, 4, sizeof(Elf64_Shdr), 0);
	write_img(&m, "offsets-end", path, sizeof(path));
	assert_int_equal(build_id(path), 0);
	expect_list_error(path, "malformed ELF file");
}

/* A note section whose size runs 48 MiB past the end of a small file. */
static void test_note_past_eof(void **state)
{
	char path[128];
	struct img m;
	struct layout l = notes_elf(&m, 1, 48u << 20);

	(void)state;
	(void)l;
	write_img(&m, "note-eof", path, sizeof(path));
	assert_int_equal(build_id(path), 0);
	expect_list_error(path, "note section past its end");

	/* a PT_NOTE segment of 512 KiB in a 1 KiB file */
	img_init(&m, 1024, 0);
	ehdr64(&m, 64, 1, sizeof(Elf64_Phdr), 0, 0, 0, 0);
	phdr64(&m, 64, 0, PT_NOTE, 128, 512u << 10, 4);
	write_img(&m, "pt-note-eof", path, sizeof(path));
	assert_int_equal(build_id(path), 0);
}

/* namesz and descsz near 2^32: no overflow, nothing read past the note. */
static void test_note_sizes_overflow(void **state)
{
	struct error e;
	char path[128];
	struct img m;
	size_t n;

	(void)state;
	notes_elf(&m, 2, 2 * NOTE_LEN);
	put(&m, NOTES_OFF, 4, 0xfffffffc);		/* namesz */
	put(&m, NOTES_OFF + NOTE_LEN + 4, 4, 0xfffffff8);	/* descsz */
	write_img(&m, "note-sizes", path, sizeof(path));
	assert_int_equal(list(path, &n, &e), 0);
	assert_int_equal(n, 0);

	/* a GNU build-id note with descsz 0xfffffffc */
	img_init(&m, 256, 0);
	ehdr64(&m, 64, 1, sizeof(Elf64_Phdr), 0, 0, 0, 0);
	phdr64(&m, 64, 0, PT_NOTE, 128, 32, 4);
	put(&m, 128, 4, 4);
	put(&m, 132, 4, 0xfffffffc);
	put(&m, 136, 4, NT_GNU_BUILD_ID);
	memcpy(m.b + 140, "GNU", 4);
	write_img(&m, "buildid-size", path, sizeof(path));
	assert_int_equal(build_id(path), 0);
}

/* 100,000 stapsdt notes: reading stops at USDT_MAX_SITES, fast. */
static void test_many_notes(void **state)
{
	const size_t count = 100000;
	struct usdt_site *s;
	struct error e;
	char path[128];
	struct img m;
	double t0;
	size_t n;

	(void)state;
	notes_elf(&m, count, count * NOTE_LEN);
	write_img(&m, "many-notes", path, sizeof(path));
	t0 = now();
	expect_list_error(path, "more than 64 USDT probe sites");

	max_req = 0;
	assert_int_equal(usdt_find(path, "p", "n", &s, &n, &e), -1);
	assert_non_null(strstr(e.msg, "USDT probe p:n has more than 64 sites"));
	assert_null(s);
	assert_int_equal(usdt_find(path, "p", "x", &s, &n, &e), -1);
	assert_non_null(strstr(e.msg, "no USDT probe p:x in "));
	assert_non_null(strstr(e.msg, "it has p:n"));
	assert_true(max_req <= ALLOC_BOUND(file_size(path)));
	if (now() - t0 > 2)
		fail_msg("100,000 notes took %.1f s", now() - t0);
}

/* 30,000 PT_NOTE segments all on the same 1 MiB of notes: the note bytes
 * read per file are bounded, so this is fast. */
static void test_overlapping_notes(void **state)
{
	const unsigned nph = 30000;
	size_t notes = 64 + nph * sizeof(Elf64_Phdr);
	char path[128];
	struct img m;
	double t0;

	(void)state;
	img_init(&m, notes + (1u << 20), 0);
	ehdr64(&m, 64, nph, sizeof(Elf64_Phdr), 0, 0, 0, 0);
	for (unsigned i = 0; i < nph; i++)
		phdr64(&m, 64, i, PT_NOTE, notes, 1u << 20, 4);
	/* 1 MiB of empty notes of type 0 */
	write_img(&m, "overlap", path, sizeof(path));
	t0 = now();
	assert_int_equal(build_id(path), 0);
	if (now() - t0 > 1)
		fail_msg("30,000 overlapping note segments took %.1f s", now() - t0);
}

/* Truncated ELF files, a text file. */
static void test_truncated_and_not_elf(void **state)
{
	char path[128];
	struct img m;

	(void)state;
	notes_elf(&m, 1, NOTE_LEN);
	m.len = 40;			/* inside the ELF header */
	write_img(&m, "trunc-ehdr", path, sizeof(path));
	assert_int_equal(build_id(path), 0);
	key_ok(path);
	expect_list_error(path, "truncated");

	notes_elf(&m, 1, NOTE_LEN);
	m.len -= 10;			/* inside the section headers */
	write_img(&m, "trunc-shdr", path, sizeof(path));
	assert_int_equal(build_id(path), 0);
	expect_list_error(path, "malformed ELF file");

	img_init(&m, 64, 0);
	memcpy(m.b, "#!/bin/sh\necho not an ELF file\n", 31);
	write_img(&m, "text", path, sizeof(path));
	assert_int_equal(build_id(path), 0);
	expect_list_error(path, "is not an ELF file");
}

/* Zero-size note and string sections: no sites, no error. */
static void test_zero_size_sections(void **state)
{
	struct error e;
	char path[128];
	struct img m;
	struct layout l = notes_elf(&m, 1, 0);
	size_t n;

	(void)state;
	shdr64(&m, l.shoff, 3, 21, SHT_STRTAB, 0, 0, l.shstr_off, 0, 1);
	write_img(&m, "zero-size", path, sizeof(path));
	assert_int_equal(list(path, &n, &e), 0);
	assert_int_equal(n, 0);
	assert_int_equal(build_id(path), 0);
}

/* Section names past their table; the table itself past the file. */
static void test_strings_past_table(void **state)
{
	struct error e;
	char path[128];
	struct img m;
	struct layout l = notes_elf(&m, 1, NOTE_LEN);
	size_t n;

	(void)state;
	put(&m, l.shoff + 2 * sizeof(Elf64_Shdr), 4, 0xffffff00);	/* sh_name */
	put(&m, l.shoff + 3 * sizeof(Elf64_Shdr), 4, sizeof(shstr));	/* just past */
	write_img(&m, "names", path, sizeof(path));
	assert_int_equal(list(path, &n, &e), 0);
	assert_int_equal(n, 1);		/* found by type, not name */

	/* .shstrtab of 60 MiB in a small file */
	l = notes_elf(&m, 1, NOTE_LEN);
	shdr64(&m, l.shoff, 3, 21, SHT_STRTAB, 0, 0, l.shstr_off, 60u << 20, 1);
	write_img(&m, "shstrtab-eof", path, sizeof(path));
	expect_list_error(path, "section names past its end");

	/* .shstrtab at an offset that overflows */
	l = notes_elf(&m, 1, NOTE_LEN);
	shdr64(&m, l.shoff, 3, 21, SHT_STRTAB, 0, 0, UINT64_MAX - 4, 64, 1);
	write_img(&m, "shstrtab-wrap", path, sizeof(path));
	expect_list_error(path, "section names past its end");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_huge_phdrs),
		cmocka_unit_test(test_table_offsets),
		cmocka_unit_test(test_note_past_eof),
		cmocka_unit_test(test_note_sizes_overflow),
		cmocka_unit_test(test_many_notes),
		cmocka_unit_test(test_overlapping_notes),
		cmocka_unit_test(test_truncated_and_not_elf),
		cmocka_unit_test(test_zero_size_sections),
		cmocka_unit_test(test_strings_past_table),
	};

	/* TEST=name runs one test (each fails alone on unbounded code) */
	if (getenv("TEST"))
		cmocka_set_test_filter(getenv("TEST"));
	return cmocka_run_group_tests(tests, setup, teardown);
}
