/*
 * test_hashkey.c - lib/symbols/hashkey.c and lib/symbols/bincache.c: build-ids read from
 * hand-made ELF files (ELF64/ELF32, both byte orders, PT_NOTE and
 * SHT_NOTE), XXH3 keys checked against the one-shot hash, the memo, the
 * notes blob parser, and the cache's layout and key checks.
 */
#include "config.h"
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* nftw */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include "bincache.h"
#include "hashkey.h"

static const uint8_t id8[] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };
static const uint8_t id20[] = {
	0xde, 0xad, 0xbe, 0xef, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55,
	0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
};

/* A growable byte buffer with fields written in either byte order. */
struct img {
	unsigned char b[4096];
	size_t len;
	int be;
};

static void put(struct img *m, size_t off, size_t size, uint64_t v)
{
	size_t i;

	assert_true(off + size <= sizeof(m->b));
	for (i = 0; i < size; i++) {
		unsigned shift = m->be ? 8 * (size - 1 - i) : 8 * i;

		m->b[off + i] = (unsigned char)(v >> shift);
	}
	if (off + size > m->len)
		m->len = off + size;
}

#define PUT(m, base, type, field, v) \
	put((m), (base) + offsetof(type, field), sizeof(((type *)0)->field), (v))

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Append a note at m->len (aligned to align); returns its offset. */
static size_t add_note(struct img *m, size_t align, uint32_t type,
		       const char *name, const void *desc, size_t descsz)
{
	size_t off = align_up(m->len, align), namesz = strlen(name) + 1, pos;

	put(m, off, 4, namesz);
	put(m, off + 4, 4, descsz);
	put(m, off + 8, 4, type);
	pos = off + 12;
	memcpy(m->b + pos, name, namesz);
	pos = align_up(pos + namesz, align);
	memcpy(m->b + pos, desc, descsz);
	m->len = align_up(pos + descsz, align);
	return off;
}

enum layout { PHDR, SHDR };

/*
 * A minimal ELF file whose only content is notes.  For ELF64/PT_NOTE an
 * 8-aligned segment holds a GNU property note with a 12-byte desc before
 * the build-id, so that reading it with 4-byte alignment would go wrong.
 */
static void make_elf(struct img *m, int is64, int be, enum layout lay,
		     const uint8_t *id, size_t idlen)
{
	size_t ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t phsize = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	size_t shsize = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	size_t align = is64 && lay == PHDR ? 8 : 4, notes, end;
	static const uint8_t prop[12] = { 2, 0, 0, 0xc0, 4, 0, 0, 0, 3, 0, 0, 0 };
	static const char abi[16] = { 0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0 };

	memset(m, 0, sizeof(*m));
	m->be = be;
	memcpy(m->b, ELFMAG, SELFMAG);
	m->b[EI_CLASS] = is64 ? ELFCLASS64 : ELFCLASS32;
	m->b[EI_DATA] = be ? ELFDATA2MSB : ELFDATA2LSB;
	m->b[EI_VERSION] = EV_CURRENT;
	m->len = ehsize;
	if (is64) {
		PUT(m, 0, Elf64_Ehdr, e_type, ET_DYN);
		PUT(m, 0, Elf64_Ehdr, e_machine, EM_X86_64);
		PUT(m, 0, Elf64_Ehdr, e_version, EV_CURRENT);
		PUT(m, 0, Elf64_Ehdr, e_ehsize, ehsize);
	} else {
		PUT(m, 0, Elf32_Ehdr, e_type, ET_EXEC);
		PUT(m, 0, Elf32_Ehdr, e_machine, be ? EM_PPC : EM_386);
		PUT(m, 0, Elf32_Ehdr, e_version, EV_CURRENT);
		PUT(m, 0, Elf32_Ehdr, e_ehsize, ehsize);
	}

	/* Leave room for two program headers: a PT_LOAD and the PT_NOTE. */
	if (lay == PHDR)
		m->len = ehsize + 2 * phsize;
	notes = align_up(m->len, align);
	m->len = notes;
	if (lay == PHDR && is64)
		add_note(m, align, NT_GNU_PROPERTY_TYPE_0, "GNU", prop, sizeof(prop));
	else
		add_note(m, align, NT_GNU_ABI_TAG, "GNU", abi, sizeof(abi));
	add_note(m, align, 0x100, "Linux", "x", 1);
	if (id)
		add_note(m, align, NT_GNU_BUILD_ID, "GNU", id, idlen);
	end = m->len;

	if (lay == PHDR) {
		size_t ph0 = ehsize, ph1 = ehsize + phsize;

		if (is64) {
			PUT(m, 0, Elf64_Ehdr, e_phoff, ehsize);
			PUT(m, 0, Elf64_Ehdr, e_phentsize, phsize);
			PUT(m, 0, Elf64_Ehdr, e_phnum, 2);
			PUT(m, ph0, Elf64_Phdr, p_type, PT_LOAD);
			PUT(m, ph0, Elf64_Phdr, p_filesz, end);
			PUT(m, ph0, Elf64_Phdr, p_align, 4096);
			PUT(m, ph1, Elf64_Phdr, p_type, PT_NOTE);
			PUT(m, ph1, Elf64_Phdr, p_offset, notes);
			PUT(m, ph1, Elf64_Phdr, p_filesz, end - notes);
			PUT(m, ph1, Elf64_Phdr, p_align, align);
		} else {
			PUT(m, 0, Elf32_Ehdr, e_phoff, ehsize);
			PUT(m, 0, Elf32_Ehdr, e_phentsize, phsize);
			PUT(m, 0, Elf32_Ehdr, e_phnum, 2);
			PUT(m, ph0, Elf32_Phdr, p_type, PT_LOAD);
			PUT(m, ph0, Elf32_Phdr, p_filesz, end);
			PUT(m, ph0, Elf32_Phdr, p_align, 4096);
			PUT(m, ph1, Elf32_Phdr, p_type, PT_NOTE);
			PUT(m, ph1, Elf32_Phdr, p_offset, notes);
			PUT(m, ph1, Elf32_Phdr, p_filesz, end - notes);
			PUT(m, ph1, Elf32_Phdr, p_align, align);
		}
	} else {
		/* Section headers: the null one and one SHT_NOTE. */
		size_t sh = align_up(end, 8), sh1 = sh + shsize;

		m->len = sh + 2 * shsize;
		if (is64) {
			PUT(m, 0, Elf64_Ehdr, e_shoff, sh);
			PUT(m, 0, Elf64_Ehdr, e_shentsize, shsize);
			PUT(m, 0, Elf64_Ehdr, e_shnum, 2);
			PUT(m, sh1, Elf64_Shdr, sh_type, SHT_NOTE);
			PUT(m, sh1, Elf64_Shdr, sh_offset, notes);
			PUT(m, sh1, Elf64_Shdr, sh_size, end - notes);
			PUT(m, sh1, Elf64_Shdr, sh_addralign, align);
		} else {
			PUT(m, 0, Elf32_Ehdr, e_shoff, sh);
			PUT(m, 0, Elf32_Ehdr, e_shentsize, shsize);
			PUT(m, 0, Elf32_Ehdr, e_shnum, 2);
			PUT(m, sh1, Elf32_Shdr, sh_type, SHT_NOTE);
			PUT(m, sh1, Elf32_Shdr, sh_offset, notes);
			PUT(m, sh1, Elf32_Shdr, sh_size, end - notes);
			PUT(m, sh1, Elf32_Shdr, sh_addralign, align);
		}
	}
}

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/strobe-test-hashkey-XXXXXX");
	umask(022);
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	(void)state;
	return nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Write buf to tmpdir/name; an O_RDWR fd on it. */
static int write_file(const char *name, const void *buf, size_t len)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, buf, len, 0), (ssize_t)len);
	return fd;
}

/* The expected XXH3 key, formatted through the canonical big-endian form. */
static void expect_xxh3(const void *buf, size_t len, char key[HASHKEY_MAX])
{
	XXH128_canonical_t c;
	size_t i;
	int n;

	XXH128_canonicalFromHash(&c, XXH3_128bits(buf, len));
	n = sprintf(key, "xxh3:");
	for (i = 0; i < sizeof(c.digest); i++)
		n += sprintf(key + n, "%02x", c.digest[i]);
}

static void check_build_id(const struct img *m, const char *name,
			   const uint8_t *id, size_t idlen, const char *want_key)
{
	uint8_t got[BUILD_ID_MAX];
	char key[HASHKEY_MAX];
	struct error e = { "" };
	int fd = write_file(name, m->b, m->len);

	assert_int_equal(hashkey_build_id_fd(fd, got, sizeof(got), &e), (int)idlen);
	assert_memory_equal(got, id, idlen);
	assert_int_equal(hashkey_file(NULL, fd, key, &e), 0);
	assert_string_equal(key, want_key);
	close(fd);
}

static void test_build_id_elf64_phdr(void **state)
{
	struct img m;

	(void)state;
	make_elf(&m, 1, 0, PHDR, id8, sizeof(id8));
	check_build_id(&m, "elf64", id8, sizeof(id8), "buildid:0123456789abcdef");
}

static void test_build_id_elf32_be(void **state)
{
	struct img m;

	(void)state;
	make_elf(&m, 0, 1, PHDR, id20, sizeof(id20));
	check_build_id(&m, "elf32be", id20, sizeof(id20),
		       "buildid:deadbeef00112233445566778899aabbccddeeff");
	make_elf(&m, 0, 0, PHDR, id8, sizeof(id8));
	check_build_id(&m, "elf32le", id8, sizeof(id8), "buildid:0123456789abcdef");
}

static void test_build_id_sections(void **state)
{
	struct img m;

	(void)state;
	make_elf(&m, 1, 0, SHDR, id20, sizeof(id20));
	check_build_id(&m, "elf64sh", id20, sizeof(id20),
		       "buildid:deadbeef00112233445566778899aabbccddeeff");
	make_elf(&m, 1, 1, SHDR, id8, sizeof(id8));
	check_build_id(&m, "elf64besh", id8, sizeof(id8), "buildid:0123456789abcdef");
}

static void test_build_id_small_cap(void **state)
{
	uint8_t got[4];
	struct error e;
	struct img m;
	int fd;

	(void)state;
	make_elf(&m, 1, 0, PHDR, id8, sizeof(id8));
	fd = write_file("cap", m.b, m.len);
	assert_int_equal(hashkey_build_id_fd(fd, got, sizeof(got), &e), 4);
	assert_memory_equal(got, id8, 4);
	close(fd);
}

/* ELF without a build-id, truncated ELF, non-ELF: no build-id, xxh3 key. */
static void test_no_build_id(void **state)
{
	uint8_t got[BUILD_ID_MAX];
	char key[HASHKEY_MAX], want[HASHKEY_MAX];
	struct error e;
	struct img m;
	int fd;

	(void)state;
	make_elf(&m, 1, 0, PHDR, NULL, 0);
	fd = write_file("noid", m.b, m.len);
	assert_int_equal(hashkey_build_id_fd(fd, got, sizeof(got), &e), 0);
	assert_int_equal(hashkey_file(NULL, fd, key, &e), 0);
	expect_xxh3(m.b, m.len, want);
	assert_string_equal(key, want);
	close(fd);

	make_elf(&m, 1, 0, PHDR, id8, sizeof(id8));
	fd = write_file("trunc", m.b, 100);	/* notes cut off */
	assert_int_equal(hashkey_build_id_fd(fd, got, sizeof(got), &e), 0);
	close(fd);

	fd = write_file("empty", "", 0);
	assert_int_equal(hashkey_build_id_fd(fd, got, sizeof(got), &e), 0);
	assert_int_equal(hashkey_file(NULL, fd, key, &e), 0);
	expect_xxh3("", 0, want);
	assert_string_equal(key, want);
	close(fd);
}

/* A 2.5 MiB file (several read chunks): key = one-shot XXH3-128, and a
 * one-byte change changes it. */
static void test_xxh3_file(void **state)
{
	size_t len = 5 * (1 << 19) + 123, i;
	unsigned char *buf = malloc(len);
	char key[HASHKEY_MAX], want[HASHKEY_MAX], hex[33];
	struct error e;
	int fd;

	(void)state;
	assert_non_null(buf);
	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * 2654435761u >> 13);
	fd = write_file("big", buf, len);
	lseek(fd, 1000, SEEK_SET);	/* the fd offset must not matter */
	assert_int_equal(hashkey_xxh3_fd(fd, hex, &e), 0);
	assert_int_equal(strlen(hex), 32);
	expect_xxh3(buf, len, want);
	assert_string_equal(hex, want + 5);
	assert_int_equal(hashkey_file(NULL, fd, key, &e), 0);
	assert_string_equal(key, want);
	memset(hex, 0, sizeof(hex));
	hashkey_xxh3_buf(buf, len, hex);
	assert_string_equal(hex, want + 5);
	hashkey_xxh3_buf("", 0, hex);
	expect_xxh3("", 0, want);
	assert_string_equal(hex, want + 5);
	expect_xxh3(buf, len, want);

	buf[len - 7] ^= 1;
	assert_int_equal(pwrite(fd, buf + len - 7, 1, len - 7), 1);
	assert_int_equal(hashkey_file(NULL, fd, key, &e), 0);
	assert_string_not_equal(key, want);
	expect_xxh3(buf, len, want);
	assert_string_equal(key, want);
	close(fd);
	free(buf);
}

static void test_not_regular(void **state)
{
	char key[HASHKEY_MAX];
	struct error e = { "" };
	int fd = open("/dev/null", O_RDONLY);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(hashkey_file(NULL, fd, key, &e), -1);
	assert_non_null(strstr(e.msg, "/dev/null"));
	close(fd);
}

/* The memo keys on (dev, ino, size, mtime, ctime): a same-size rewrite
 * with the mtime put back changes the ctime, which no one can set, so it
 * is seen; the content hash is memoised with the key. */
static void test_memo(void **state)
{
	struct hashkey_memo *memo = hashkey_memo_new();
	char key1[HASHKEY_MAX], key2[HASHKEY_MAX], want[HASHKEY_MAX], hex[33];
	char a[] = "first contents, no build-id here";
	char b[] = "other contents, no build-id here";
	struct timespec ts[2];
	struct error e;
	struct stat st;
	int fd, fd2, i;

	(void)state;
	assert_int_equal(sizeof(a), sizeof(b));
	fd = write_file("memo", a, sizeof(a));
	assert_int_equal(hashkey_file(memo, fd, key1, &e), 0);
	expect_xxh3(a, sizeof(a), want);
	assert_string_equal(key1, want);
	assert_int_equal(fstat(fd, &st), 0);

	/* Unchanged: the memo answers for another handle, key and content. */
	fd2 = dup(fd);
	assert_int_equal(hashkey_file(memo, fd2, key2, &e), 0);
	assert_string_equal(key2, key1);
	assert_int_equal(hashkey_content(memo, fd2, hex, &e), 0);
	assert_string_equal(hex, key1 + 5);
	close(fd2);
	assert_int_equal(hashkey_memo_count(memo), 1);

	/* Same size, content changed, mtime restored: the ctime tells. */
	usleep(10000);
	assert_int_equal(pwrite(fd, b, sizeof(b), 0), (ssize_t)sizeof(b));
	ts[0] = st.st_atim;
	ts[1] = st.st_mtim;
	assert_int_equal(futimens(fd, ts), 0);
	assert_int_equal(hashkey_file(memo, fd, key2, &e), 0);
	expect_xxh3(b, sizeof(b), want);
	assert_string_equal(key2, want);
	assert_int_equal(hashkey_content(memo, fd, hex, &e), 0);
	assert_string_equal(hex, want + 5);

	/* A new mtime: the memo misses and rehashes. */
	ts[1].tv_sec += 10;
	assert_int_equal(futimens(fd, ts), 0);
	assert_int_equal(hashkey_file(memo, fd, key2, &e), 0);
	assert_string_equal(key2, want);

	/* Many files: the table grows and still answers for each. */
	for (i = 0; i < 300; i++) {
		char name[32], data[32], k[HASHKEY_MAX];
		int f;

		snprintf(name, sizeof(name), "m%d", i);
		snprintf(data, sizeof(data), "data %d", i);
		f = write_file(name, data, strlen(data));
		assert_int_equal(hashkey_file(memo, f, k, &e), 0);
		expect_xxh3(data, strlen(data), want);
		assert_string_equal(k, want);
		close(f);
	}
	assert_int_equal(hashkey_file(memo, fd, key2, &e), 0);
	expect_xxh3(b, sizeof(b), want);
	assert_string_equal(key2, want);
	close(fd);
	hashkey_memo_free(memo);
}

static void test_notes_blob(void **state)
{
	uint8_t got[BUILD_ID_MAX];
	struct img m;

	(void)state;
	memset(&m, 0, sizeof(m));
	add_note(&m, 4, 0x100, "Linux", "6.1", 4);
	add_note(&m, 4, 1, "Xen", "\0\0\0\0\0\0\0\1", 8);
	add_note(&m, 4, NT_GNU_BUILD_ID, "GNU", id20, sizeof(id20));
	assert_int_equal(hashkey_build_id_notes(m.b, m.len, got, sizeof(got)), 20);
	assert_memory_equal(got, id20, sizeof(id20));
	/* Truncated inside the build-id note: nothing. */
	assert_int_equal(hashkey_build_id_notes(m.b, m.len - 4, got, sizeof(got)), 0);
	assert_int_equal(hashkey_build_id_notes(m.b, 5, got, sizeof(got)), 0);
	assert_int_equal(hashkey_build_id_notes(NULL, 0, got, sizeof(got)), 0);

	/* Type 3 with another owner name is not a build-id. */
	memset(&m, 0, sizeof(m));
	add_note(&m, 4, NT_GNU_BUILD_ID, "GNUX", id8, sizeof(id8));
	assert_int_equal(hashkey_build_id_notes(m.b, m.len, got, sizeof(got)), 0);
	/* A huge descsz must not read out of bounds. */
	put(&m, 4, 4, 0xfffffff0u);
	assert_int_equal(hashkey_build_id_notes(m.b, m.len, got, sizeof(got)), 0);
}

static void test_format(void **state)
{
	uint8_t big[BUILD_ID_MAX];
	char key[HASHKEY_MAX];

	(void)state;
	hashkey_format(key, "kernel", id8, sizeof(id8));
	assert_string_equal(key, "kernel:0123456789abcdef");
	hashkey_format(key, "buildid", (const uint8_t *)"\x00\xff", 2);
	assert_string_equal(key, "buildid:00ff");
	memset(big, 0xab, sizeof(big));
	hashkey_format(key, "buildid", big, sizeof(big));	/* truncated, no overflow */
	assert_true(strlen(key) < HASHKEY_MAX);
	assert_int_equal(strncmp(key, "buildid:abab", 12), 0);
}

static void test_kernel(void **state)
{
	char key[HASHKEY_MAX];
	struct error e;
	size_t i;

	(void)state;
	if (access("/sys/kernel/notes", R_OK)) {
		skip();
		return;
	}
	assert_int_equal(hashkey_kernel(key, &e), 0);
	assert_int_equal(strncmp(key, "kernel:", 7), 0);
	assert_true(strlen(key) >= 7 + 16 && strlen(key) % 2 == 1);
	for (i = 7; key[i]; i++)
		assert_non_null(strchr("0123456789abcdef", key[i]));
}

/* Read a whole file into a static buffer; its length or -1. */
static ssize_t slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, cap);
	close(fd);
	return n;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void test_bincache(void **state)
{
	struct bincache c;
	struct error e = { "" };
	char dir[256], want[512], buf[4096];
	char *path;
	struct stat st;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/cache/sub", tmpdir);
	assert_int_equal(bincache_open(&c, dir, &e), 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0750);

	path = bincache_path(&c, "buildid:abcdef0123");
	snprintf(want, sizeof(want), "%s/buildid/ab/cdef0123", dir);
	assert_string_equal(path, want);
	free(path);
	assert_int_equal(bincache_has(&c, "buildid:abcdef0123"), 0);

	assert_int_equal(bincache_store_buf(&c, "buildid:abcdef0123", "hello", 5, BINCACHE_SHARED, &e), 0);
	assert_int_equal(bincache_has(&c, "buildid:abcdef0123"), 1);
	assert_int_equal(slurp(want, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(stat(want, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	snprintf(want, sizeof(want), "%s/buildid/ab", dir);
	assert_int_equal(stat(want, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0750);
	assert_int_equal(count_entries(want), 1);	/* no temporary left */

	/* Same key again: ok, the first contents are kept. */
	assert_int_equal(bincache_store_buf(&c, "buildid:abcdef0123", "other", 5, BINCACHE_SHARED, &e), 0);
	snprintf(want, sizeof(want), "%s/buildid/ab/cdef0123", dir);
	assert_int_equal(slurp(want, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "hello", 5);

	/* An empty entry is an entry. */
	assert_int_equal(bincache_store_buf(&c, "kallsyms:0000", "", 0, BINCACHE_SHARED, &e), 0);
	assert_int_equal(bincache_has(&c, "kallsyms:0000"), 1);
	bincache_close(&c);

	/* A trailing slash is the same cache. */
	snprintf(want, sizeof(want), "%s/", dir);
	assert_int_equal(bincache_open(&c, want, &e), 0);
	assert_int_equal(bincache_has(&c, "buildid:abcdef0123"), 1);
	bincache_close(&c);

	/* A file in the way. */
	snprintf(want, sizeof(want), "%s/cache/sub/buildid/ab/cdef0123", tmpdir);
	assert_int_equal(bincache_open(&c, want, &e), -1);
	assert_non_null(strstr(e.msg, want));
}

static void test_bincache_bad_keys(void **state)
{
	static const char *bad[] = {
		"../x", "buildid:../../etc/passwd", "buildid:ab/cd", "nocolon",
		":abcdef", "buildid:ab", "buildid:", "a:b:cdef", "BuildId:abcd",
		"buildid:ABCD", "buildid:ab cd", "buildid:..ab", "x/y:abcd", "",
	};
	struct bincache c;
	struct error e;
	char dir[256];
	size_t i;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/badkeys", tmpdir);
	assert_int_equal(bincache_open(&c, dir, &e), 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		e.msg[0] = 0;
		assert_null(bincache_path(&c, bad[i]));
		assert_int_equal(bincache_has(&c, bad[i]), 0);
		assert_int_equal(bincache_store_buf(&c, bad[i], "x", 1, BINCACHE_SHARED, &e), -1);
		assert_true(e.msg[0] != 0);
	}
	assert_null(bincache_path(&c, NULL));
	assert_int_equal(count_entries(dir), 0);
	/* The allowed characters. */
	assert_int_equal(bincache_store_buf(&c, "xxh3:0a-b_c9", "y", 1, BINCACHE_SHARED, &e), 0);
	assert_int_equal(bincache_has(&c, "xxh3:0a-b_c9"), 1);
	bincache_close(&c);
}

static void test_bincache_store_fd(void **state)
{
	size_t len = 3 * (1 << 20) + 17, i;
	unsigned char *buf = malloc(len), *got = malloc(len);
	struct bincache c;
	struct error e = { "" };
	char dir[256], *path;
	int fd, pfd[2];

	(void)state;
	assert_non_null(buf);
	assert_non_null(got);
	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * 7 + (i >> 12));
	fd = write_file("src", buf, len);	/* fd offset left at the end */
	snprintf(dir, sizeof(dir), "%s/fdcache", tmpdir);
	assert_int_equal(bincache_open(&c, dir, &e), 0);
	assert_int_equal(bincache_store_fd(&c, "xxh3:0123456789", fd, BINCACHE_SHARED, &e), 0);
	close(fd);
	path = bincache_path(&c, "xxh3:0123456789");
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, got, len, 0), (ssize_t)len);
	assert_int_equal(pread(fd, got, 1, len), 0);
	assert_memory_equal(got, buf, len);
	close(fd);
	free(path);

	/* A /proc file: copy_file_range cannot copy it, reads can. */
	fd = open("/proc/self/status", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(bincache_store_fd(&c, "proc:status", fd, BINCACHE_SHARED, &e), 0);
	close(fd);
	path = bincache_path(&c, "proc:status");
	assert_true(slurp(path, (char *)got, len) > 5);
	assert_memory_equal(got, "Name:", 5);
	free(path);

	/* An unreadable source fails, and leaves nothing behind. */
	assert_int_equal(pipe(pfd), 0);
	assert_int_equal(bincache_store_fd(&c, "pipe:abcd", pfd[0], BINCACHE_SHARED, &e), -1);
	assert_non_null(strstr(e.msg, "cannot read pipe:["));
	assert_int_equal(bincache_has(&c, "pipe:abcd"), 0);
	snprintf((char *)got, len, "%s/pipe/ab", dir);
	assert_int_equal(count_entries((char *)got), 0);
	close(pfd[0]);
	close(pfd[1]);
	bincache_close(&c);
	free(buf);
	free(got);
}

/* Who may read an entry: private entries are 0600, a shared store of the
 * same key opens a private entry to the group, and a private store never
 * closes a shared one (what was shared stays what it was). */
static void test_bincache_access(void **state)
{
	struct bincache c;
	struct error e = { "" };
	char dir[256], *path;
	struct stat st;
	int fd;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/access", tmpdir);
	assert_int_equal(bincache_open(&c, dir, &e), 0);
	/* stores of one key in turn, and the entry's mode after each: shared
	 * once seen readable by everyone, root's again only when restricted */
	static const struct {
		enum bincache_access access;
		mode_t mode;
	} steps[] = {
		{ BINCACHE_PRIVATE, 0600 }, { BINCACHE_PRIVATE, 0600 },
		{ BINCACHE_SHARED, 0640 }, { BINCACHE_PRIVATE, 0640 },
		{ BINCACHE_RESTRICT, 0600 },
	};

	path = bincache_path(&c, "xxh3:aa01");
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		assert_int_equal(bincache_store_buf(&c, "xxh3:aa01", "secret", 6,
						    steps[i].access, &e), 0);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 07777, steps[i].mode);
	}
	assert_int_equal(bincache_store_buf(&c, "xxh3:ab01", "new", 3, BINCACHE_RESTRICT, &e), 0);
	free(path);
	path = bincache_path(&c, "xxh3:ab01");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);

	/* bincache_open_entry reads the entry, never through a symlink */
	fd = bincache_open_entry(&c, "xxh3:aa01");
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(bincache_open_entry(&c, "xxh3:aa02"), -1);
	assert_int_equal(errno, ENOENT);
	free(path);
	path = bincache_path(&c, "xxh3:bb01");
	{
		char sub[300];

		snprintf(sub, sizeof(sub), "%s/xxh3/bb", dir);
		assert_int_equal(mkdir_p(sub, 0750), 0);
	}
	assert_int_equal(symlink("/etc/passwd", path), 0);
	assert_int_equal(bincache_open_entry(&c, "xxh3:bb01"), -1);
	assert_int_equal(errno, ELOOP);
	/* and a store never writes through it nor takes it for an entry's mode */
	assert_int_equal(bincache_store_buf(&c, "xxh3:bb01", "x", 1, BINCACHE_SHARED, &e), 0);
	assert_int_equal(stat("/etc/passwd", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	free(path);
	bincache_close(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bincache_access),
		cmocka_unit_test(test_build_id_elf64_phdr),
		cmocka_unit_test(test_build_id_elf32_be),
		cmocka_unit_test(test_build_id_sections),
		cmocka_unit_test(test_build_id_small_cap),
		cmocka_unit_test(test_no_build_id),
		cmocka_unit_test(test_xxh3_file),
		cmocka_unit_test(test_not_regular),
		cmocka_unit_test(test_memo),
		cmocka_unit_test(test_notes_blob),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_bincache),
		cmocka_unit_test(test_bincache_bad_keys),
		cmocka_unit_test(test_bincache_store_fd),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
