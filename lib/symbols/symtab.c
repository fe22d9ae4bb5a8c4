/*
 * symtab.c - function symbols and source lines of an ELF binary through
 * libbfd (see symtab.h).
 *
 * Functions come from .symtab, or from .dynsym when .symtab has none (a
 * stripped binary), plus the synthetic "name@plt" stubs.  Each function
 * covers [start, start + ELF size), or up to the next symbol when the
 * size is unknown, never past the end of its section.  Lookups take a
 * file offset, turned into an address through the section holding it.
 *
 * libbfd is not thread-safe: use a symtab, and open symtabs, from one
 * thread at a time.
 */
#include "config.h"
#include <bfd.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symtab.h"

/* From libiberty's demangle.h, which binutils-dev does not ship. */
#ifndef DMGL_PARAMS
#define DMGL_PARAMS (1 << 0)
#define DMGL_ANSI (1 << 1)
#endif

/*
 * The ELF backend allocates every asymbol inside an elf_symbol_type
 * (elf-bfd.h, not installed), right before the ELF symbol fields.  That
 * is where the symbol size lives.  The layout has been stable for many
 * years, and is still checked against each symbol's value and type
 * before any size is used; on a mismatch sizes are ignored.
 */
struct elf_sym_mirror {
	asymbol symbol;
	struct {
		bfd_vma st_value;
		bfd_vma st_size;
		unsigned long st_name;
		unsigned char st_info;
		unsigned char st_other;
		unsigned char st_target_internal;
		unsigned int st_shndx;
	} internal_elf_sym;
};

struct func {
	uint64_t start, end;
	uint64_t size;		/* ELF size, 0 when unknown */
	const char *name;	/* raw (bfd-owned) or own */
	char *own;		/* the name without its @VERSION, if it had one */
	char *demangled;	/* when demangle_done and it was mangled */
	asection *sec;
	unsigned char rank;	/* global 3, local 2, weak 1 (perf's order) */
	unsigned char demangle_done;
};

struct loadsec {
	uint64_t filepos, size, vma;
	asection *sec;
};

struct symtab {
	bfd *abfd;
	bfd *dbg;		/* the separate debug file, or NULL */
	asymbol **dbgsyms;	/* its .symtab */
	long ndbgsyms;
	int from_symtab;	/* the names came from .symtab (not .dynsym) */
	int raw_names;		/* symtab_set_demangle(s, 0) */
	asymbol **syms;		/* .symtab (kept for line lookups) */
	asymbol **dynsyms;	/* .dynsym */
	asymbol *synth;		/* synthetic @plt symbols, one block */
	long nsyms, ndynsyms, nsynth;
	struct func *fn;
	size_t nfn, fncap;
	size_t nreal;		/* functions from .symtab or .dynsym, not @plt stubs */
	struct loadsec *secs;
	size_t nsecs;
};

static pthread_once_t bfd_once = PTHREAD_ONCE_INIT;
static int bfd_ok;

/* libbfd reports warnings about odd files on stderr; library code does
 * not print, and the caller sees failures through bfd_get_error. */
static void bfd_quiet(const char *fmt, va_list ap)
{
	(void)fmt;
	(void)ap;
}

static void bfd_setup(void)
{
	bfd_ok = bfd_init() == BFD_INIT_MAGIC;
	bfd_set_error_handler(bfd_quiet);
}

static const char *bfd_err(void)
{
	return bfd_errmsg(bfd_get_error());
}

/*
 * Read one symbol table; count, 0 when there is none, or -1 (e says why).
 * Every symbol takes at least an Elf32_Sym (16 bytes) of the file, so a
 * table claiming more than fsize / 16 symbols is malformed: refused before
 * allocating, and the allocation is checked (a hostile file fails alone).
 */
static long read_syms(bfd *abfd, int dynamic, asymbol ***out, const char *path,
		      struct error *e)
{
	uint64_t fsize = bfd_get_size(abfd);
	long upper, n;

	*out = NULL;
	upper = dynamic ? bfd_get_dynamic_symtab_upper_bound(abfd)
			: bfd_get_symtab_upper_bound(abfd);
	if (upper <= 0)
		return 0;	/* no such table */
	if ((uint64_t)upper / sizeof(asymbol *) > fsize / sizeof(Elf32_Sym) + 1)
		return error_set(e, "cannot read symbols of %s: malformed ELF file "
				 "(a symbol table larger than the file)", path);
	*out = malloc(upper);
	if (!*out)
		return error_set(e, "cannot read symbols of %s: out of memory", path);
	n = dynamic ? bfd_canonicalize_dynamic_symtab(abfd, *out)
		    : bfd_canonicalize_symtab(abfd, *out);
	/* bfd fills at most upper bytes: n < upper / sizeof(asymbol *) */
	if (n < 0 || (uint64_t)n >= (uint64_t)upper / sizeof(asymbol *)) {
		free(*out);
		*out = NULL;
		return error_set(e, "cannot read symbols of %s: %s", path, bfd_err());
	}
	return n;
}

/* Is sym code we can name? strict: only symbols typed as functions. */
static int want_sym(const asymbol *sym, int strict)
{
	const asection *sec = bfd_asymbol_section(sym);
	const char *name = bfd_asymbol_name(sym);

	if (!sec || bfd_is_und_section(sec) || bfd_is_abs_section(sec) ||
	    bfd_is_com_section(sec) || bfd_is_ind_section(sec))
		return 0;
	if ((sec->flags & (SEC_CODE | SEC_ALLOC)) != (SEC_CODE | SEC_ALLOC))
		return 0;
	if (sym->flags & (BSF_SECTION_SYM | BSF_FILE | BSF_DEBUGGING |
			  BSF_WARNING | BSF_INDIRECT))
		return 0;
	if (!name || !*name)
		return 0;
	if (sym->flags & BSF_SYNTHETIC)
		return 1;
	if (strict)
		return (sym->flags & (BSF_FUNCTION | BSF_GNU_INDIRECT_FUNCTION)) != 0;
	/* Untyped labels: skip mapping symbols ($x, $d) and .L locals. */
	if (name[0] == '$' || (name[0] == '.' && name[1] == 'L'))
		return 0;
	return (sym->flags & (BSF_LOCAL | BSF_GLOBAL | BSF_WEAK |
			      BSF_GNU_UNIQUE)) != 0;
}

/* Do the ELF fields behind these symbols agree with bfd's view? */
static int sizes_usable(bfd *abfd, asymbol **syms, long n, int strict)
{
	long i, checked = 0;

	if (bfd_get_flavour(abfd) != bfd_target_elf_flavour)
		return 0;
	for (i = 0; i < n; i++) {
		const struct elf_sym_mirror *m = (const void *)syms[i];
		unsigned type;

		if (!want_sym(syms[i], strict) || (syms[i]->flags & BSF_SYNTHETIC))
			continue;
		if (syms[i]->the_bfd != abfd ||
		    m->internal_elf_sym.st_value != bfd_asymbol_value(syms[i]))
			return 0;
		type = ELF64_ST_TYPE(m->internal_elf_sym.st_info);
		if ((syms[i]->flags & (BSF_FUNCTION | BSF_GNU_INDIRECT_FUNCTION)) &&
		    type != STT_FUNC && type != STT_GNU_IFUNC)
			return 0;
		checked++;
	}
	return checked > 0;
}

/* Of aliases, a global name before a local one before a weak one: the
 * order perf prefers them in, so that both name a function alike. */
static unsigned char sym_rank(const asymbol *sym)
{
	if (sym->flags & (BSF_GLOBAL | BSF_GNU_UNIQUE))
		return 3;
	if (sym->flags & BSF_WEAK)
		return 1;
	return 2;
}

/* Add the wanted symbols of a table; the number added. */
static size_t add_syms(struct symtab *s, bfd *abfd, asymbol **syms, long n, int strict)
{
	int use_size = syms && sizes_usable(abfd, syms, n, strict);
	size_t before = s->nfn;
	long i;

	for (i = 0; i < n; i++) {
		asymbol *sym = syms[i];
		struct func *f;
		const char *at;

		if (!want_sym(sym, strict))
			continue;
		ARRAY_GROW(s->fn, s->fncap, s->nfn + 1);
		f = &s->fn[s->nfn++];
		memset(f, 0, sizeof(*f));
		f->start = bfd_asymbol_value(sym);
		f->sec = bfd_asymbol_section(sym);
		f->name = bfd_asymbol_name(sym);
		f->rank = sym_rank(sym);
		if (use_size && !(sym->flags & BSF_SYNTHETIC))
			f->size = ((const struct elf_sym_mirror *)sym)->internal_elf_sym.st_size;
		/* "memcpy@@GLIBC_2.14" -> "memcpy"; "puts@plt" stays. */
		at = strchr(f->name, '@');
		if (at && at != f->name && strcmp(at, "@plt")) {
			size_t len = strlen(f->name);
			int plt = len > 4 && !strcmp(f->name + len - 4, "@plt");

			f->own = xasprintf("%.*s%s", (int)(at - f->name), f->name,
					   plt ? "@plt" : "");
			f->name = f->own;
		}
	}
	return s->nfn - before;
}

static int leading_underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/*
 * By address; at one address the preferred name first, as perf chooses
 * among aliases (so that a report names a function as perf's does): one
 * with a size, then by rank (not weak, then global), then the fewest
 * leading underscores, then the longest name (libc's
 * __memmove_avx_unaligned_erms over __memcpy_avx_unaligned_erms, one
 * function); the alphabetical order only breaks what is left of a tie.
 */
static int func_cmp(const void *a, const void *b)
{
	const struct func *x = a, *y = b;
	size_t lx, ly;
	int d;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank;
	d = leading_underscores(x->name) - leading_underscores(y->name);
	if (d)
		return d;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx > ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void finish_funcs(struct symtab *s)
{
	size_t i, j;

	if (s->nfn)
		qsort(s->fn, s->nfn, sizeof(*s->fn), func_cmp);
	/* One symbol per address: the first (preferred), largest size. */
	for (i = j = 0; i < s->nfn; i++) {
		if (j && s->fn[j - 1].start == s->fn[i].start) {
			s->fn[j - 1].size = MAX(s->fn[j - 1].size, s->fn[i].size);
			free(s->fn[i].own);
			continue;
		}
		s->fn[j++] = s->fn[i];
	}
	s->nfn = j;
	for (i = 0; i < s->nfn; i++) {
		struct func *f = &s->fn[i];
		uint64_t sec_end = f->sec->vma + bfd_section_size(f->sec);
		uint64_t next = i + 1 < s->nfn ? s->fn[i + 1].start : UINT64_MAX;

		f->end = f->size ? f->start + f->size : MIN(next, sec_end);
		f->end = MIN(f->end, sec_end);
		if (f->end < f->start)
			f->end = f->start;
	}
}

/* The @plt stubs of s->synth; a failure only loses their names. */
static void add_synth(struct symtab *s)
{
	asymbol **p = malloc(s->nsynth * sizeof(*p));
	long i;

	for (i = 0; p && i < s->nsynth; i++)
		p[i] = &s->synth[i];
	if (p)
		add_syms(s, s->abfd, p, s->nsynth, 1);
	free(p);
}

static int loadsec_cmp(const void *a, const void *b)
{
	const struct loadsec *x = a, *y = b;

	if (x->filepos != y->filepos)
		return x->filepos < y->filepos ? -1 : 1;
	return 0;
}

static void read_sections(struct symtab *s)
{
	asection *sec;
	size_t cap = 0;

	for (sec = s->abfd->sections; sec; sec = sec->next) {
		flagword want = SEC_ALLOC | SEC_LOAD | SEC_HAS_CONTENTS;

		if ((sec->flags & want) != want || !bfd_section_size(sec))
			continue;
		ARRAY_GROW(s->secs, cap, s->nsecs + 1);
		s->secs[s->nsecs].filepos = sec->filepos;
		s->secs[s->nsecs].size = bfd_section_size(sec);
		s->secs[s->nsecs].vma = sec->vma;
		s->secs[s->nsecs].sec = sec;
		s->nsecs++;
	}
	if (s->nsecs)
		qsort(s->secs, s->nsecs, sizeof(*s->secs), loadsec_cmp);
}

/* bfd_openr(path), or with fd >= 0 bfd_fdopenr on a duplicate of fd
 * (libbfd then reads only that descriptor, never reopening by name). */
static bfd *bfd_open_either(const char *path, int fd)
{
	bfd *abfd;
	int d;

	if (fd < 0)
		return bfd_openr(path, NULL);
	d = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (d < 0) {
		bfd_set_error(bfd_error_system_call);
		return NULL;
	}
	if (lseek(d, 0, SEEK_SET) < 0) {
		close(d);
		bfd_set_error(bfd_error_system_call);
		return NULL;
	}
	abfd = bfd_fdopenr(path, NULL, d);	/* d is the bfd's now, even on failure */
	if (abfd)
		bfd_set_cacheable(abfd, 0);	/* never closed and reopened by name */
	return abfd;
}

static struct symtab *open_either(const char *path, int fd, struct error *e)
{
	struct symtab *s;
	size_t added;

	pthread_once(&bfd_once, bfd_setup);
	if (!bfd_ok) {
		error_set(e, "cannot read symbols of %s: libbfd version mismatch", path);
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	s->abfd = bfd_open_either(path, fd);
	if (!s->abfd) {
		if (bfd_get_error() == bfd_error_system_call)
			error_set(e, "cannot read symbols of %s: %s", path, strerror(errno));
		else
			error_set(e, "cannot read symbols of %s: %s", path, bfd_err());
		goto fail;
	}
	if (!bfd_check_format(s->abfd, bfd_object)) {
		error_set(e, "cannot read symbols of %s: %s", path, bfd_err());
		goto fail;
	}
	if (bfd_get_flavour(s->abfd) != bfd_target_elf_flavour) {
		error_set(e, "cannot read symbols of %s: not an ELF file", path);
		goto fail;
	}
	s->nsyms = read_syms(s->abfd, 0, &s->syms, path, e);
	if (s->nsyms < 0)
		goto fail;
	/* A bad .dynsym is not fatal when .symtab is there. */
	s->ndynsyms = read_syms(s->abfd, 1, &s->dynsyms, path, e);
	if (s->ndynsyms < 0) {
		if (!s->nsyms)
			goto fail;
		s->ndynsyms = 0;
	}

	added = add_syms(s, s->abfd, s->syms, s->nsyms, 1);
	s->from_symtab = added > 0;
	if (!added)
		added = add_syms(s, s->abfd, s->dynsyms, s->ndynsyms, 1);
	if (!added) {
		added = add_syms(s, s->abfd, s->syms, s->nsyms, 0);
		s->from_symtab = added > 0;
	}
	if (!added)
		added = add_syms(s, s->abfd, s->dynsyms, s->ndynsyms, 0);
	s->nreal = added;

	/* The @plt stubs; a failure here only loses their names.  One stub
	 * per PLT relocation, each at least an Elf32_Rel (8 bytes) of the
	 * file: more is malformed, and dropped. */
	s->nsynth = bfd_get_synthetic_symtab(s->abfd, s->nsyms, s->syms,
					     s->ndynsyms, s->dynsyms, &s->synth);
	if (s->nsynth > 0 &&
	    (uint64_t)s->nsynth <= bfd_get_size(s->abfd) / sizeof(Elf32_Rel)) {
		add_synth(s);
	} else {
		if (s->nsynth > 0)
			free(s->synth);
		s->nsynth = 0;
		s->synth = NULL;
	}
	finish_funcs(s);
	read_sections(s);
	return s;

fail:
	symtab_close(s);
	return NULL;
}

struct symtab *symtab_open(const char *path, struct error *e)
{
	return open_either(path, -1, e);
}

struct symtab *symtab_open_fd(int fd, const char *name, struct error *e)
{
	return open_either(name, fd, e);
}

void symtab_close(struct symtab *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nfn; i++) {
		free(s->fn[i].own);
		free(s->fn[i].demangled);
	}
	free(s->fn);
	free(s->secs);
	free(s->syms);
	free(s->dynsyms);
	free(s->synth);
	free(s->dbgsyms);
	if (s->dbg)
		bfd_close(s->dbg);
	if (s->abfd)
		bfd_close(s->abfd);
	free(s);
}

size_t symtab_count(const struct symtab *s)
{
	return s->nreal;
}

void symtab_set_demangle(struct symtab *s, int on)
{
	s->raw_names = !on;
}

int symtab_debugdata(struct symtab *s, void **buf, size_t *len)
{
	asection *sec = bfd_get_section_by_name(s->abfd, ".gnu_debugdata");
	bfd_byte *p = NULL;

	*buf = NULL;
	if (!sec || !(sec->flags & SEC_HAS_CONTENTS) || !bfd_section_size(sec) ||
	    bfd_section_size(sec) > (64u << 20) ||
	    bfd_section_size(sec) > bfd_get_size(s->abfd))
		return 0;
	if (!bfd_malloc_and_get_section(s->abfd, sec, &p)) {
		free(p);
		return 0;
	}
	*buf = p;
	*len = bfd_section_size(sec);
	return 1;
}

int symtab_has_symtab(const struct symtab *s)
{
	return s->from_symtab;
}

char *symtab_debuglink(struct symtab *s, uint32_t *crc)
{
	unsigned long c = 0;
	char *name = bfd_get_debug_link_info(s->abfd, &c);

	if (name && (!*name || memchr(name, '/', strlen(name)))) {
		free(name);
		return NULL;
	}
	*crc = (uint32_t)c;
	return name;
}

static int use_debug_either(struct symtab *s, const char *path, int fd, struct error *e)
{
	struct func *old_fn = s->fn;
	size_t old_nfn = s->nfn, old_cap = s->fncap, added, i;
	asymbol **syms = NULL;
	bfd *d;
	long n;

	if (s->dbg)
		return error_set(e, "%s: a debug file is already in use", path);
	d = bfd_open_either(path, fd);
	if (!d)
		return error_set(e, "cannot read symbols of %s: %s", path, bfd_err());
	if (!bfd_check_format(d, bfd_object) || bfd_get_flavour(d) != bfd_target_elf_flavour) {
		error_set(e, "cannot read symbols of %s: not an ELF file", path);
		bfd_close(d);
		return -1;
	}
	n = read_syms(d, 0, &syms, path, e);
	if (n < 0) {
		bfd_close(d);
		return -1;
	}
	s->fn = NULL;
	s->nfn = s->fncap = 0;
	added = add_syms(s, d, syms, n, 1);
	if (!added)
		added = add_syms(s, d, syms, n, 0);
	if (!added) {
		for (i = 0; i < s->nfn; i++)
			free(s->fn[i].own);
		free(s->fn);
		s->fn = old_fn;
		s->nfn = old_nfn;
		s->fncap = old_cap;
		free(syms);
		bfd_close(d);
		return 0;
	}
	for (i = 0; i < old_nfn; i++) {
		free(old_fn[i].own);
		free(old_fn[i].demangled);
	}
	free(old_fn);
	s->nreal = added;
	s->from_symtab = 1;
	if (s->nsynth > 0)
		add_synth(s);
	finish_funcs(s);
	s->dbg = d;
	s->dbgsyms = syms;
	s->ndbgsyms = n;
	return 1;
}

int symtab_use_debug(struct symtab *s, const char *path, struct error *e)
{
	return use_debug_either(s, path, -1, e);
}

int symtab_use_debug_fd(struct symtab *s, int fd, const char *name, struct error *e)
{
	return use_debug_either(s, name, fd, e);
}

static const struct loadsec *find_section(const struct symtab *s, uint64_t off)
{
	size_t lo = 0, hi = s->nsecs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->secs[mid].filepos <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (off - s->secs[lo - 1].filepos >= s->secs[lo - 1].size)
		return NULL;
	return &s->secs[lo - 1];
}

int symtab_offset_to_vma(struct symtab *s, uint64_t off, uint64_t *vma)
{
	const struct loadsec *ls = find_section(s, off);

	if (!ls)
		return -1;
	*vma = ls->vma + (off - ls->filepos);
	return 0;
}

/* The function covering vma, or NULL. */
static struct func *find_func(struct symtab *s, uint64_t vma)
{
	size_t lo = 0, hi = s->nfn, i, back;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->fn[mid].start <= vma)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Usually the last symbol at or below vma; a few back in case it is
	 * an inner entry point of a larger function that also covers vma. */
	for (i = lo, back = 0; i > 0 && back < 4; i--, back++)
		if (vma < s->fn[i - 1].end)
			return &s->fn[i - 1];
	return NULL;
}

static const char *func_name(struct symtab *s, struct func *f)
{
	if (s->raw_names)
		return f->name;
	if (!f->demangle_done) {
		f->demangle_done = 1;
		if (f->name[0] == '_')
			f->demangled = bfd_demangle(s->abfd, f->name,
						    DMGL_PARAMS | DMGL_ANSI);
	}
	return f->demangled ? f->demangled : f->name;
}

/*
 * bfd_find_nearest_line for vma (in the loadable section ls), in the
 * debug file when one is in use: the same addresses there, in a section
 * with no contents (NOBITS), only its DWARF does.  *used is the bfd asked,
 * for bfd_find_inliner_info after it.
 */
static int nearest_line_in(struct symtab *s, const struct loadsec *ls, uint64_t vma,
			   const char **file, const char **func, unsigned *line, bfd **used)
{
	asymbol **syms = s->nsyms ? s->syms : s->dynsyms;
	bfd *abfd = s->abfd;
	asection *sec = ls->sec;
	uint64_t secvma = ls->vma;

	if (s->dbg) {
		asection *d;

		for (d = s->dbg->sections; d; d = d->next)
			if ((d->flags & SEC_ALLOC) && vma >= d->vma &&
			    vma - d->vma < bfd_section_size(d))
				break;
		if (d) {
			abfd = s->dbg;
			sec = d;
			secvma = d->vma;
			syms = s->dbgsyms;
		}
	}
	*used = abfd;
	return bfd_find_nearest_line(abfd, sec, syms, vma - secvma, file, func, line);
}

static int nearest_line(struct symtab *s, const struct loadsec *ls, uint64_t vma,
			const char **file, const char **func, unsigned *line)
{
	bfd *used;

	return nearest_line_in(s, ls, vma, file, func, line, &used);
}

int symtab_inline(struct symtab *s, uint64_t off, struct symtab_frame *fr, int max)
{
	const struct loadsec *ls = find_section(s, off);
	const char *file = NULL, *func = NULL;
	unsigned line = 0;
	bfd *used;
	int n = 0;

	if (max > SYMTAB_INLINE_MAX)
		max = SYMTAB_INLINE_MAX;
	if (!ls || max <= 0 ||
	    !nearest_line_in(s, ls, ls->vma + (off - ls->filepos), &file, &func, &line, &used))
		return 0;
	/* The frames come innermost first: bfd_find_inliner_info walks out
	 * from the last bfd_find_nearest_line, one caller per call. */
	do {
		fr[n].func = func && *func ? func : NULL;
		fr[n].file = file && *file ? file : NULL;
		fr[n].line = line;
		n++;
		file = func = NULL;
		line = 0;
	} while (n < max && bfd_find_inliner_info(used, &file, &func, &line));
	return n;
}

char *symtab_demangle(struct symtab *s, const char *name)
{
	if (s->raw_names || !name || name[0] != '_')
		return NULL;
	return bfd_demangle(s->abfd, name, DMGL_PARAMS | DMGL_ANSI);
}

int symtab_lookup(struct symtab *s, uint64_t off, int want_line,
		  struct symtab_hit *hit)
{
	const struct loadsec *ls = find_section(s, off);
	struct func *f;
	uint64_t vma;

	memset(hit, 0, sizeof(*hit));
	if (!ls)
		return -1;
	vma = ls->vma + (off - ls->filepos);
	if (want_line) {
		const char *file = NULL, *func = NULL;
		unsigned int line = 0;

		if (nearest_line(s, ls, vma, &file, &func, &line)) {
			hit->file = file;
			hit->line = line;
		}
	}
	f = find_func(s, vma);
	if (!f)
		return -1;
	hit->name = func_name(s, f);
	hit->sym_offset = vma - f->start;
	return 0;
}
