/*
 * dbfix.h - shared by test_resolve.c and test_report.c: a temporary
 * strobe database made through lib/store/db.h (the real schema), its binary
 * cache, the workloads the build produces (tests/workloads/...), and an
 * independent oracle for where a function lies in an ELF file: its own
 * reading of .symtab/.dynsym and the program headers with <elf.h>, not
 * libbfd, so the code under test is never its own judge.
 *
 * Workloads are found in $STROBE_BUILD/tests/workloads (run.sh sets it),
 * else next to this test program (../workloads); their sources in
 * $STROBE_TOP/tests/workloads, else in the same place.
 */
#ifndef STROBE_TEST_DBFIX_H
#define STROBE_TEST_DBFIX_H

#include <elf.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bincache.h"
#include "db.h"

/* path of tests/workloads/name: in the build tree (src 0) or the source
 * tree (src 1). */
static void fix_path(char *buf, size_t len, const char *name, int src)
{
	const char *env = getenv(src ? "STROBE_TOP" : "STROBE_BUILD");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		snprintf(buf, len, "%s/tests/workloads/%s", env, name);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	snprintf(buf, len, "%s/../workloads/%s", dirname(exe), name);
}

/* 1-based line of the first line of file containing marker; 0: none. */
static __attribute__((unused)) unsigned fix_line_of(const char *file, const char *marker)
{
	FILE *f = fopen(file, "r");
	char line[1024];
	unsigned n = 0;

	while (f && fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker)) {
			fclose(f);
			return n;
		}
	}
	if (f)
		fclose(f);
	return 0;
}

/*
 * The file offset and size of function symbol name in the ELF64 file at
 * path, from .symtab (or .dynsym when there is none) and the PT_LOAD
 * headers.  0 on success.
 */
static int fix_elf_func(const char *path, const char *name, uint64_t *off, uint64_t *size)
{
	FILE *f = fopen(path, "rb");
	unsigned char *m = NULL;
	long len;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh, *symsec = NULL;
	int i, rc = -1;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	m = malloc(len);
	if (fread(m, 1, len, f) != (size_t)len)
		goto out;
	eh = (const Elf64_Ehdr *)m;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		goto out;
	sh = (const Elf64_Shdr *)(m + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB)
			symsec = &sh[i];
	for (i = 0; !symsec && i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_DYNSYM)
			symsec = &sh[i];
	if (!symsec)
		goto out;
	{
		const Elf64_Sym *sym = (const Elf64_Sym *)(m + symsec->sh_offset);
		const char *str = (const char *)(m + sh[symsec->sh_link].sh_offset);
		size_t k, nsym = symsec->sh_size / sizeof(*sym);
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(m + eh->e_phoff);

		for (k = 0; k < nsym; k++) {
			if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || !sym[k].st_value ||
			    strcmp(str + sym[k].st_name, name))
				continue;
			for (i = 0; i < eh->e_phnum; i++) {
				if (ph[i].p_type != PT_LOAD || sym[k].st_value < ph[i].p_vaddr ||
				    sym[k].st_value >= ph[i].p_vaddr + ph[i].p_filesz)
					continue;
				*off = sym[k].st_value - ph[i].p_vaddr + ph[i].p_offset;
				*size = sym[k].st_size;
				rc = 0;
				goto out;
			}
		}
	}
out:
	free(m);
	fclose(f);
	return rc;
}

static int fix_rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(p);
}

static void fix_rmtree(const char *dir)
{
	nftw(dir, fix_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

struct fixdb {
	char dir[64];
	char path[128];
	struct db *db;
	struct bincache cache;
};

/* A new empty database in a new temporary directory; 0 on success. */
static int fixdb_open(struct fixdb *f, const char *tag)
{
	struct error e = { "" };
	char *cdir;

	snprintf(f->dir, sizeof(f->dir), "/tmp/strobe-test-%s-XXXXXX", tag);
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/strobe.db", f->dir);
	f->db = db_open(f->path, DB_WRITE, &e);
	if (!f->db) {
		fprintf(stderr, "db_open: %s\n", e.msg);
		return -1;
	}
	cdir = db_cache_dir(f->db);
	if (bincache_open(&f->cache, cdir, &e) < 0) {
		fprintf(stderr, "bincache_open: %s\n", e.msg);
		free(cdir);
		return -1;
	}
	free(cdir);
	return 0;
}

static void fixdb_close(struct fixdb *f)
{
	if (f->db)
		db_close(f->db);
	bincache_close(&f->cache);
	fix_rmtree(f->dir);
	memset(f, 0, sizeof(*f));
}

/* Copy the file at path into the cache under key; 0 on success. */
static int fixdb_cache_file(struct fixdb *f, const char *key, const char *path)
{
	struct error e = { "" };
	FILE *in = fopen(path, "rb");
	int rc;

	if (!in)
		return -1;
	rc = bincache_store_fd(&f->cache, key, fileno(in), BINCACHE_SHARED, &e);
	if (rc < 0)
		fprintf(stderr, "bincache_store_fd: %s\n", e.msg);
	fclose(in);
	return rc;
}

#endif
