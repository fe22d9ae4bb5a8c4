/*
 * resolve.c - names for sampled locations (see resolve.h).
 *
 * Two tables: the binaries (one entry per binaries.id, opened on first
 * use: its row, then the cached copy through symtab, or the session's
 * kallsyms snapshot for the kernel) and the locations named so far, keyed
 * by (binary_id, offset).  Both are open-addressing hash tables.
 *
 * The build_id of a binary is the hex build-id of "buildid:" and
 * "kernel:" keys, the whole key for other file keys ("xxh3:", a content
 * hash, not a build-id, but still what identifies the exact file, and
 * the prefix keeps the two apart), and NULL for memory with no file.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bincache.h"
#include "binname.h"
#include "dbgfetch.h"
#include "debuginfo.h"
#include "hashkey.h"
#include "kallsyms.h"
#include "resolve.h"
#include "symtab.h"
#include "symworker.h"

enum bin_kind { BIN_FILE, BIN_KERNEL, BIN_NOFILE };

struct rbin {
	int64_t id;
	enum bin_kind kind;
	char *display;
	char *key;
	char *build_id;			/* NULL: none */
	struct symtab *st;		/* BIN_FILE with a usable copy */
	char *problem;			/* non-NULL: cannot be symbolised */
	char *note;			/* non-NULL: a warning (binaries.note) */
	int no_symbols;			/* copy has no function symbols */
	int own_fd;			/* the original, opened as the reader; -1: none */
	char *debug;			/* the debug file its symbols come from, or NULL */
	char *debug_note;		/* NULL, or why debug files were refused */
	int dbg_fd;			/* that debug file, open; -1: none */
	int wh;				/* its handle in r->worker; -1: none */
};

struct rloc {
	int64_t binary_id;
	uint64_t offset;
	size_t bin;			/* index in bins */
	const char *symbol;		/* owned by a symtab, the kallsyms, or own_sym */
	char *own_sym;
	char *source;			/* NULL until a lookup wanted the line */
	char *inl;			/* NULL until named with want_inline */
};

/* The perf map symbols of one process (schema 10), sorted by addr. */
struct rjsym {
	uint64_t addr, size;
	int64_t seq;		/* the later line wins where ranges overlap */
	char *name;
};

struct rjit {
	uint32_t pid;
	struct rjsym *v;
	size_t n;
};

struct resolver {
	struct db *db;
	int64_t session_id;
	struct rjit *jits;		/* loaded on demand, one per pid asked */
	size_t njits, jits_cap;
	int jit_checked, jit_none;	/* whether the session has perf map symbols */
	struct bincache cache;		/* dir only: never created */
	char kallsyms_key[sizeof(((struct db_session *)0)->kallsyms_key)];
	struct kallsyms *ks;
	int ks_tried;
	char *ks_problem;
	char *debug_roots;		/* STROBE_DEBUG_DIRS, or NULL: the default */
	char *debuginfod_urls;		/* DEBUGINFOD_URLS, or NULL: not set */
	struct dbgfetch *fetch;		/* made on first need; NULL: none */
	int fetch_tried;
	char *fetch_summary;		/* resolver_debuginfod_summary() */
	int raw_names;			/* resolver_set_demangle(r, 0) */
	int want_inline;		/* resolver_set_inline(r, 1) */
	struct symworker *worker;	/* resolver_set_worker(); NULL: parse here */

	struct rbin *bins;
	size_t nbins, bins_cap;
	size_t *bin_slot;		/* index + 1 into bins; 0: empty */
	size_t bin_mask;

	struct rloc *locs;
	size_t nlocs, locs_cap;
	size_t *loc_slot;
	size_t loc_mask;
	size_t last_loc;		/* index + 1 of the last hit: a fast path */
};

static size_t loc_hash(int64_t b, uint64_t off)
{
	return hash_mix64(off ^ hash_mix64((uint64_t)b));
}

struct resolver *resolver_new(struct db *db, const struct db_session *s, struct error *e)
{
	struct resolver *r = xcalloc(1, sizeof(*r));

	(void)e;
	r->db = db;
	/* Not bincache_open(): readers must not create the cache. */
	r->cache.dir = db_cache_dir(db);
	if (getenv("STROBE_DEBUG_DIRS"))
		r->debug_roots = xstrdup(getenv("STROBE_DEBUG_DIRS"));
	if (dbgfetch_enabled(getenv("DEBUGINFOD_URLS")))
		r->debuginfod_urls = xstrdup(getenv("DEBUGINFOD_URLS"));
	snprintf(r->kallsyms_key, sizeof(r->kallsyms_key), "%s", s ? s->kallsyms_key : "");
	r->session_id = s ? s->id : 0;
	return r;
}

void resolver_set_demangle(struct resolver *r, int on)
{
	r->raw_names = !on;
}

void resolver_set_inline(struct resolver *r, int on)
{
	r->want_inline = on;
}

void resolver_set_worker(struct resolver *r, struct symworker *w)
{
	r->worker = w;
}

void resolver_free(struct resolver *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->njits; i++) {
		for (size_t j = 0; j < r->jits[i].n; j++)
			free(r->jits[i].v[j].name);
		free(r->jits[i].v);
	}
	free(r->jits);
	for (i = 0; i < r->nbins; i++) {
		struct rbin *b = &r->bins[i];

		if (b->st)
			symtab_close(b->st);
		if (b->wh >= 0)
			symworker_close(r->worker, b->wh);
		free(b->display);
		free(b->key);
		free(b->build_id);
		free(b->problem);
		free(b->note);
		if (b->own_fd >= 0)
			close(b->own_fd);
		free(b->debug);
		free(b->debug_note);
		if (b->dbg_fd >= 0)
			close(b->dbg_fd);
	}
	for (i = 0; i < r->nlocs; i++) {
		free(r->locs[i].own_sym);
		free(r->locs[i].source);
		free(r->locs[i].inl);
	}
	free(r->bins);
	free(r->bin_slot);
	free(r->locs);
	free(r->loc_slot);
	if (r->ks)
		kallsyms_free(r->ks);
	free(r->ks_problem);
	free(r->debug_roots);
	free(r->debuginfod_urls);
	dbgfetch_free(r->fetch);
	free(r->fetch_summary);
	free(r->cache.dir);
	free(r);
}

/* The session's kallsyms snapshot, loaded on first use; NULL with
 * r->ks_problem set when there is none. */
static struct kallsyms *kallsyms_get(struct resolver *r)
{
	const char *key = r->kallsyms_key;
	struct error err = { "" };
	char *path;

	if (r->ks_tried)
		return r->ks;
	r->ks_tried = 1;
	if (!*key) {
		r->ks_problem = xstrdup("the session has no kallsyms snapshot");
		return NULL;
	}
	path = bincache_path(&r->cache, key);
	if (!path) {
		r->ks_problem = xasprintf("bad kallsyms key '%s' in the session", key);
		return NULL;
	}
	if (access(path, F_OK) < 0 && errno == ENOENT)
		r->ks_problem = xasprintf("kallsyms snapshot %s missing from the cache", key);
	else if (access(path, R_OK) < 0 && errno == EACCES)
		r->ks_problem = xstrdup("kernel symbols are root's only on this machine "
					"(kernel.kptr_restrict was not 0): run the report as root");
	else if (!(r->ks = kallsyms_load(path, &err)))
		r->ks_problem = xasprintf("kallsyms snapshot unreadable: %s", err.msg);
	free(path);
	return r->ks;
}

/* The original file of a root-only cache entry, opened with the reader's
 * own rights: its symbols are used only if it still has the row's key
 * (hashkey_file parses its ELF headers: a user's report only; strobed, in
 * worker mode, opens every entry as root by handle, worker_bin_open, and
 * never comes here).  Returns the symtab (b->own_fd keeps the file open for libbfd, which may
 * reopen it by name) or NULL with *why set. */
static struct symtab *own_copy_open(struct rbin *b, const struct db_binary *row,
				    const char **why)
{
	char key[HASHKEY_MAX], hex[33], name[64];
	struct error err = { "" };
	struct symtab *st;
	struct stat sb;
	int fd;

	*why = "";
	fd = open(row->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))
		goto fail;
	if (!strncmp(row->key, "xxh3:", 5)) {
		if (hashkey_content(NULL, fd, hex, &err) < 0 || strcmp(row->key + 5, hex))
			goto changed;
	} else if (hashkey_file(NULL, fd, key, &err) < 0 || strcmp(row->key, key)) {
		goto changed;
	}
	snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	st = symtab_open(name, &err);
	if (!st)
		goto fail;
	b->own_fd = fd;
	return st;
changed:
	*why = ", and the file there now is another";
fail:
	close(fd);
	return NULL;
}

/* MiniDebugInfo: the .symtab in the binary's own .gnu_debugdata (xz). */
static void mini_attach(struct rbin *b, char **refused)
{
	struct error err = { "" };
	char name[64], *old;
	void *buf;
	size_t len;
	int fd, rc;

	if (!symtab_debugdata(b->st, &buf, &len))
		return;
	fd = debuginfo_mini_fd(buf, len, &err);
	free(buf);
	rc = -1;
	if (fd >= 0) {
		snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
		rc = symtab_use_debug(b->st, name, &err);
	}
	if (rc == 1) {
		b->debug = xstrdup(".gnu_debugdata (MiniDebugInfo)");
		b->dbg_fd = fd;
		return;
	}
	if (fd >= 0)
		close(fd);
	old = *refused;
	*refused = xasprintf("%s%s.gnu_debugdata not used: %s", old ? old : "", old ? "; " : "",
			     rc ? err.msg : "it has no function symbols");
	free(old);
}

/* Use the debug file f found for b: its symbols (b->debug, b->dbg_fd
 * take f's path and fd), or a "not used" line in f->refused. */
static void use_found(struct rbin *b, struct debuginfo_found *f)
{
	struct error err = { "" };
	char name[64], *old;
	int rc;

	snprintf(name, sizeof(name), "/proc/self/fd/%d", f->fd);
	rc = symtab_use_debug(b->st, name, &err);
	if (rc == 1) {
		b->debug = f->path;
		b->dbg_fd = f->fd;
		f->path = NULL;
		f->fd = -1;
		return;
	}
	old = f->refused;
	f->refused = xasprintf("%s%s%s not used: %s", old ? old : "", old ? "; " : "", f->path,
			       rc ? err.msg : "it has no function symbols");
	free(old);
}

/* The debuginfod fetcher, made on first need: NULL when DEBUGINFOD_URLS
 * names no server. */
static struct dbgfetch *fetch_get(struct resolver *r)
{
	if (!r->fetch_tried) {
		r->fetch_tried = 1;
		r->fetch = dbgfetch_new(r->debuginfod_urls);
	}
	return r->fetch;
}

/*
 * A binary without a .symtab: its separate debug file, found with the
 * reader's own rights (debuginfo.h), gives the symbols and lines; failing
 * that, and when the user set DEBUGINFOD_URLS, the one a debuginfod server
 * has for its build-id (dbgfetch.h); failing that, its MiniDebugInfo.
 * b->debug says which file, b->debug_note why candidates were refused.
 */
static void debug_attach(struct resolver *r, struct rbin *b, const struct db_binary *row)
{
	struct debuginfo_want w = { 0 };
	struct debuginfo_found f;
	uint32_t crc = 0;

	if (symtab_has_symtab(b->st))
		return;
	w.bin_path = row->path;
	w.build_id = strncmp(row->key, "buildid:", 8) ? NULL : row->key + 8;
	w.link = symtab_debuglink(b->st, &crc);
	w.link_crc = crc;
	w.roots = r->debug_roots;
	if (debuginfo_find(&w, &f) == 1)
		use_found(b, &f);
	if (!b->debug && w.build_id && fetch_get(r)) {
		struct debuginfo_found g;

		if (dbgfetch_find(r->fetch, w.build_id, &g) == 1)
			use_found(b, &g);
		if (g.refused) {
			char *old = f.refused;

			f.refused = xasprintf("%s%s%s", old ? old : "", old ? "; " : "", g.refused);
			free(old);
		}
		debuginfo_found_free(&g);
	}
	if (!b->debug)
		mini_attach(b, &f.refused);
	b->debug_note = f.refused;
	f.refused = NULL;
	debuginfo_found_free(&f);
	free((char *)w.link);
}

/* Append line to the "; "-separated list *list. */
static void note_add(char **list, char *line)
{
	char *old = *list;

	*list = xasprintf("%s%s%s", old ? old : "", old ? "; " : "", line);
	free(old);
	free(line);
}

/* debuginfo_want.read_id in worker mode: a build-id candidate's ELF
 * headers and notes are read in the worker, not in root's process. */
static int worker_read_id(void *ctx, int fd, uint8_t *id, size_t cap)
{
	struct error err = { "" };

	return symworker_build_id(ctx, fd, id, cap, &err);
}

/*
 * debug_attach through the worker: the debug file is found and opened
 * here (debuginfo.h: by path, regular files only, a debuglink candidate's
 * CRC computed here: bytes summed, not parsed) and read in the worker; a
 * build-id candidate's build-id is read there too (worker_read_id) and
 * compared here; MiniDebugInfo is decoded there.  debuginfod is not asked
 * (strobed never does).
 */
static void worker_debug(struct resolver *r, struct rbin *b, const struct db_binary *row,
			 struct symworker_bin *info)
{
	struct debuginfo_want w = { 0 };
	struct debuginfo_found f;
	struct error err = { "" };
	int rc;

	w.bin_path = row->path;
	w.build_id = strncmp(row->key, "buildid:", 8) ? NULL : row->key + 8;
	w.link = info->link[0] ? info->link : NULL;
	w.link_crc = info->link_crc;
	w.roots = r->debug_roots;
	w.read_id = worker_read_id;
	w.read_id_ctx = r->worker;
	if (debuginfo_find(&w, &f) == 1) {
		int fd = fcntl(f.fd, F_DUPFD_CLOEXEC, 0);

		rc = fd < 0 ? error_set(&err, "%s", strerror(errno)) :
			symworker_debug(r->worker, b->wh, fd, info, &err);
		if (rc == 1) {
			b->debug = f.path;
			f.path = NULL;
		} else {
			note_add(&f.refused, xasprintf("%s not used: %s", f.path,
						       rc ? err.msg : "it has no function symbols"));
		}
	}
	if (!b->debug) {
		rc = symworker_mini(r->worker, b->wh, info, &err);
		if (rc == 1)
			b->debug = xstrdup(".gnu_debugdata (MiniDebugInfo)");
		else if (rc < 0)
			note_add(&f.refused, xasprintf(".gnu_debugdata not used: %s", err.msg));
	}
	b->debug_note = f.refused;
	f.refused = NULL;
	debuginfo_found_free(&f);
}

/* The cached copy of a file binary, opened here (never following a
 * symlink) and parsed in r->worker. */
static void worker_bin_open(struct resolver *r, struct rbin *b, const struct db_binary *row)
{
	struct symworker_bin info;
	struct error err = { "" };
	int fd = bincache_open_entry(&r->cache, row->key);

	if (fd < 0) {
		if (errno == ENOENT)
			b->problem = xstrdup(row->cached ? "cached copy missing" :
					     "never copied to the binary cache");
		else
			b->problem = xasprintf("cached copy unreadable: %s", strerror(errno));
		return;
	}
	b->wh = symworker_open(r->worker, fd, row->path, &info, &err);
	if (b->wh < 0) {
		b->problem = xasprintf("cached copy unreadable: %s", err.msg);
		return;
	}
	if (!info.has_symtab)
		worker_debug(r, b, row, &info);
	b->no_symbols = !info.nsyms;
}

/* The worker failed on b: its names are lost (b->problem says why). */
static void worker_failed(struct rbin *b, const struct error *err)
{
	if (!b->problem)
		b->problem = xasprintf("its symbols could not be read: %s", err->msg);
}

/* Fill b for binary id: its row, its cached copy or the kallsyms. */
static void bin_open(struct resolver *r, struct rbin *b, int64_t id)
{
	struct db_binary *row = xmalloc(sizeof(*row));
	struct error err = { "" };
	char *path;

	memset(b, 0, sizeof(*b));
	b->id = id;
	b->own_fd = -1;
	b->dbg_fd = -1;
	b->wh = -1;
	if (id <= 0 || db_binary_get(r->db, id, row, &err) < 0) {
		/* No mapping was known for the sample (or the row is gone). */
		b->kind = BIN_NOFILE;
		b->display = xstrdup(binname_of(NULL, NULL, 0));
		b->key = xstrdup(BINNAME_UNKNOWN);
		free(row);
		return;
	}
	b->key = xstrdup(row->key);
	b->display = xstrdup(binname_of(row->key, row->path, 0));
	if (binname_is_kernel(row->key)) {
		b->kind = BIN_KERNEL;
		b->build_id = xstrdup(row->key + 7);
		if (row->problem[0])
			b->problem = xstrdup(row->problem);
		else if (!kallsyms_get(r))
			b->problem = xstrdup(r->ks_problem);
		free(row);
		return;
	}
	if (binname_is_nofile(row->key)) {
		b->kind = BIN_NOFILE;
		free(row);
		return;
	}
	b->kind = BIN_FILE;
	if (!strncmp(row->key, "buildid:", 8))
		b->build_id = xstrdup(row->key + 8);
	else
		b->build_id = xstrdup(row->key);
	if (row->note[0])
		b->note = xstrdup(row->note);
	if (row->problem[0]) {
		b->problem = xstrdup(row->problem);
		free(row);
		return;
	}
	if (r->worker) {
		worker_bin_open(r, b, row);
		free(row);
		return;
	}
	path = bincache_path(&r->cache, row->key);
	if (!path) {
		b->problem = xasprintf("bad key '%s' in the database", row->key);
	} else if (access(path, F_OK) < 0 && errno == ENOENT) {
		b->problem = xstrdup(row->cached ? "cached copy missing" :
				     "never copied to the binary cache");
	} else if (access(path, R_OK) < 0 && errno == EACCES) {
		/* A root-only entry: the file was not readable by everyone. */
		const char *why;

		if (!(b->st = own_copy_open(b, row, &why)))
			b->problem = xasprintf("its cached copy is root's only (the file was not "
					       "readable by everyone)%s: run the report as root or "
					       "as a user who can read %s", why, row->path);
	} else if (!(b->st = symtab_open(path, &err))) {
		b->problem = xasprintf("cached copy unreadable: %s", err.msg);
	}
	if (b->st) {
		symtab_set_demangle(b->st, !r->raw_names);
		debug_attach(r, b, row);
		b->no_symbols = !symtab_count(b->st);
	}
	free(path);
	free(row);
}

static void bin_rehash(struct resolver *r)
{
	size_t nslots = r->bin_slot ? (r->bin_mask + 1) * 2 : 64, i;

	free(r->bin_slot);
	r->bin_slot = xcalloc(nslots, sizeof(*r->bin_slot));
	r->bin_mask = nslots - 1;
	for (i = 0; i < r->nbins; i++) {
		size_t h = hash_mix64((uint64_t)r->bins[i].id) & r->bin_mask;

		while (r->bin_slot[h])
			h = (h + 1) & r->bin_mask;
		r->bin_slot[h] = i + 1;
	}
}

/* Index in bins of binary id, opened if new. */
static size_t bin_get(struct resolver *r, int64_t id)
{
	size_t h;

	if (!r->bin_slot || (r->nbins + 1) * 2 > r->bin_mask + 1)
		bin_rehash(r);
	h = hash_mix64((uint64_t)id) & r->bin_mask;
	while (r->bin_slot[h]) {
		size_t i = r->bin_slot[h] - 1;

		if (r->bins[i].id == id)
			return i;
		h = (h + 1) & r->bin_mask;
	}
	ARRAY_GROW(r->bins, r->bins_cap, r->nbins + 1);
	bin_open(r, &r->bins[r->nbins], id);
	r->bin_slot[h] = ++r->nbins;
	return r->nbins - 1;
}

static void loc_rehash(struct resolver *r)
{
	size_t nslots = r->loc_slot ? (r->loc_mask + 1) * 2 : 1024, i;

	free(r->loc_slot);
	r->loc_slot = xcalloc(nslots, sizeof(*r->loc_slot));
	r->loc_mask = nslots - 1;
	for (i = 0; i < r->nlocs; i++) {
		size_t h = loc_hash(r->locs[i].binary_id, r->locs[i].offset) & r->loc_mask;

		while (r->loc_slot[h])
			h = (h + 1) & r->loc_mask;
		r->loc_slot[h] = i + 1;
	}
}

/* Name l's symbol, and its source line when want_line. */
static void loc_name(struct resolver *r, struct rbin *b, struct rloc *l, int want_line)
{
	if (!l->symbol && b->wh >= 0 && !b->problem) {
		struct error err = { "" };
		char *name;

		if (symworker_lookup(r->worker, b->wh, &l->offset, 1, &name, &err) < 0)
			worker_failed(b, &err);
		else
			l->symbol = l->own_sym = name;
		if (l->symbol && want_line && !l->source)
			l->source = xstrdup("");	/* lines are not read in the worker */
	}
	if (!l->symbol) {
		l->symbol = "[unknown]";
		if (b->problem) {
			l->symbol = "[binary unavailable]";
		} else if (b->kind == BIN_KERNEL) {
			const char *module = NULL, *name;
			uint64_t off;

			name = kallsyms_lookup(r->ks, l->offset, &off, &module);
			if (name && module)
				l->symbol = l->own_sym = xasprintf("%s [%s]", name, module);
			else if (name)
				l->symbol = name;
		} else if (b->kind == BIN_FILE && b->st) {
			struct symtab_hit hit = { 0 };

			if (symtab_lookup(b->st, l->offset, want_line, &hit) == 0 && hit.name)
				l->symbol = hit.name;
			if (want_line)
				l->source = hit.file && hit.line ?
					xasprintf("%s:%u", hit.file, hit.line) : xstrdup("");
		}
	}
	if (want_line && !l->source) {
		struct symtab_hit hit = { 0 };

		if (b->kind == BIN_FILE && b->st && !b->problem)
			symtab_lookup(b->st, l->offset, 1, &hit);
		l->source = hit.file && hit.line ?
			xasprintf("%s:%u", hit.file, hit.line) : xstrdup("");
	}
}

/* Longest function name kept in an inline chain (DWARF is the binary's:
 * hostile input); longer ones are cut and end in "...". */
#define INLINE_NAME_MAX 512

/* The inline chain at off in b: "outer -> inlined -> ...", or "" when off
 * is not in inlined code (symtab_inline gives one frame or none). */
static char *inline_chain(const struct rbin *b, uint64_t off)
{
	struct symtab_frame fr[SYMTAB_INLINE_MAX];
	struct sbuf chain = { 0 };
	int n, i;

	if (b->kind != BIN_FILE || !b->st || b->problem)
		return xstrdup("");
	n = symtab_inline(b->st, off, fr, SYMTAB_INLINE_MAX);
	if (n < 2)
		return xstrdup("");
	for (i = n - 1; i >= 0; i--) {
		char *dem = symtab_demangle(b->st, fr[i].func);
		const char *name = dem ? dem : fr[i].func ? fr[i].func : "[unknown]";
		size_t len = strlen(name);

		if (len > INLINE_NAME_MAX)
			sbuf_addf(&chain, "%s%.*s...", i == n - 1 ? "" : " -> ",
				  INLINE_NAME_MAX, name);
		else
			sbuf_addf(&chain, "%s%s", i == n - 1 ? "" : " -> ", name);
		free(dem);
	}
	return chain.s ? chain.s : xstrdup("");
}

static struct rloc *loc_get(struct resolver *r, int64_t binary_id, uint64_t offset)
{
	struct rloc *l;
	size_t h;

	if (r->last_loc) {
		l = &r->locs[r->last_loc - 1];
		if (l->binary_id == binary_id && l->offset == offset)
			return l;
	}
	if (!r->loc_slot || (r->nlocs + 1) * 2 > r->loc_mask + 1)
		loc_rehash(r);
	h = loc_hash(binary_id, offset) & r->loc_mask;
	while (r->loc_slot[h]) {
		l = &r->locs[r->loc_slot[h] - 1];
		if (l->binary_id == binary_id && l->offset == offset) {
			r->last_loc = r->loc_slot[h];
			return l;
		}
		h = (h + 1) & r->loc_mask;
	}
	ARRAY_GROW(r->locs, r->locs_cap, r->nlocs + 1);
	l = &r->locs[r->nlocs];
	memset(l, 0, sizeof(*l));
	l->binary_id = binary_id;
	l->offset = offset;
	r->loc_slot[h] = ++r->nlocs;
	r->last_loc = r->nlocs;
	/* after the growth above: bin_get does not touch locs */
	l->bin = bin_get(r, binary_id);
	return l;
}

void resolver_lookup(struct resolver *r, int64_t binary_id, uint64_t offset, int want_line,
		     struct resolved *out)
{
	struct rloc *l = loc_get(r, binary_id, offset);
	struct rbin *b = &r->bins[l->bin];

	if (!l->symbol || (want_line && !l->source))
		loc_name(r, b, l, want_line);
	if (r->want_inline && !l->inl)
		l->inl = inline_chain(b, l->offset);
	out->binary = b->display;
	out->build_id = b->build_id;
	out->key = b->key;
	out->symbol = l->symbol;
	out->source = want_line ? l->source : NULL;
	out->problem = b->problem;
	out->note = b->note;
	out->no_symbols = b->no_symbols;
	out->debug = b->debug;
	out->debug_note = b->debug_note;
	out->inlined = r->want_inline ? l->inl : NULL;
}

void resolver_prefetch(struct resolver *r, int64_t binary_id, const uint64_t *off, size_t n)
{
	size_t bi = bin_get(r, binary_id), k = 0, *idx;
	struct error err = { "" };
	uint64_t *todo;
	char **names;

	if (!n || r->bins[bi].wh < 0 || r->bins[bi].problem)
		return;		/* resolver_lookup names them as cheaply */
	idx = xmalloc(n * sizeof(*idx));
	todo = xmalloc(n * sizeof(*todo));
	for (size_t i = 0; i < n; i++) {
		struct rloc *l = loc_get(r, binary_id, off[i]);

		if (l->symbol)
			continue;
		l->symbol = "[unknown]";	/* an offset given twice is asked once */
		idx[k] = (size_t)(l - r->locs);
		todo[k++] = off[i];
	}
	names = xcalloc(k + 1, sizeof(*names));
	if (k && symworker_lookup(r->worker, r->bins[bi].wh, todo, k, names, &err) < 0) {
		worker_failed(&r->bins[bi], &err);
		for (size_t j = 0; j < k; j++)
			r->locs[idx[j]].symbol = "[binary unavailable]";
	} else {
		for (size_t j = 0; j < k; j++) {
			struct rloc *l = &r->locs[idx[j]];

			l->own_sym = names[j];
			if (names[j])
				l->symbol = names[j];
		}
	}
	free(names);
	free(todo);
	free(idx);
}

void resolver_binary(struct resolver *r, int64_t binary_id, struct resolved *out)
{
	size_t i = bin_get(r, binary_id);	/* may move bins */
	const struct rbin *b = &r->bins[i];

	memset(out, 0, sizeof(*out));
	out->binary = b->display;
	out->build_id = b->build_id;
	out->key = b->key;
	out->problem = b->problem;
	out->note = b->note;
	out->no_symbols = b->no_symbols;
	out->debug = b->debug;
	out->debug_note = b->debug_note;
}

static int rjsym_cmp(const void *pa, const void *pb)
{
	const struct rjsym *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Whether the session has perf map symbols at all: asked once. */
static int jit_any(struct resolver *r)
{
	sqlite3_stmt *st;

	if (r->jit_checked)
		return !r->jit_none;
	r->jit_checked = 1;
	r->jit_none = 1;
	if (sqlite3_prepare_v2(db_sqlite(r->db), "SELECT 1 FROM jit_symbols WHERE "
			       "session_id=?1 LIMIT 1", -1, &st, NULL))
		return 0;	/* a database before schema 10 */
	sqlite3_bind_int64(st, 1, r->session_id);
	if (sqlite3_step(st) == SQLITE_ROW)
		r->jit_none = 0;
	sqlite3_finalize(st);
	return !r->jit_none;
}

/*
 * The symbols of pid's perf map, read once.  None when the session has
 * none (or predates schema 10), and none when several processes of this
 * pid left one (pid reuse): the (pid, address) key cannot tell whose
 * sample it is, and naming never guesses.
 */
static const struct rjit *jit_get(struct resolver *r, uint32_t pid)
{
	struct rjit *j;
	sqlite3_stmt *st;
	int64_t first_start = 0;
	size_t cap = 0;
	int rc, ambiguous = 0;

	for (size_t i = 0; i < r->njits; i++)
		if (r->jits[i].pid == pid)
			return &r->jits[i];
	if (!jit_any(r))
		return NULL;
	ARRAY_GROW(r->jits, r->jits_cap, r->njits + 1);
	j = &r->jits[r->njits++];
	memset(j, 0, sizeof(*j));
	j->pid = pid;
	if (sqlite3_prepare_v2(db_sqlite(r->db), "SELECT start_ns,seq,addr,size,name FROM "
			       "jit_symbols WHERE session_id=?1 AND pid=?2", -1, &st, NULL))
		return j;
	sqlite3_bind_int64(st, 1, r->session_id);
	sqlite3_bind_int64(st, 2, pid);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 4);
		struct rjsym *y;

		if (!j->n)
			first_start = sqlite3_column_int64(st, 0);
		else if (sqlite3_column_int64(st, 0) != first_start)
			ambiguous = 1;
		ARRAY_GROW(j->v, cap, j->n + 1);
		y = &j->v[j->n++];
		y->seq = sqlite3_column_int64(st, 1);
		y->addr = (uint64_t)sqlite3_column_int64(st, 2);
		y->size = (uint64_t)sqlite3_column_int64(st, 3);
		y->name = xstrdup(name ? name : "");
	}
	sqlite3_finalize(st);
	if (ambiguous || rc != SQLITE_DONE) {
		for (size_t i = 0; i < j->n; i++)
			free(j->v[i].name);
		free(j->v);
		j->v = NULL;
		j->n = 0;
	}
	if (j->n)
		qsort(j->v, j->n, sizeof(*j->v), rjsym_cmp);
	return j;
}

/* Symbols further back than this from the last one starting at or below
 * an address are not looked at for a range covering it. */
#define JIT_OVERLAP_SCAN 64

static const char *jit_name(struct resolver *r, uint32_t pid, uint64_t addr)
{
	const struct rjit *j = jit_get(r, pid);
	const struct rjsym *best = NULL;
	size_t lo = 0, hi;

	if (!j || !j->n)
		return NULL;
	hi = j->n;
	while (lo < hi) {	/* the first symbol starting above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (j->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, k = 0; i > 0 && k < JIT_OVERLAP_SCAN; i--, k++) {
		const struct rjsym *y = &j->v[i - 1];

		if (addr - y->addr < y->size && (!best || y->seq > best->seq))
			best = y;
	}
	return best ? best->name : NULL;
}

int resolver_by_pid(struct resolver *r, int64_t binary_id)
{
	const struct rbin *b;
	size_t i;

	if (!jit_any(r))
		return 0;
	i = bin_get(r, binary_id);	/* may move bins */
	b = &r->bins[i];
	return b->kind == BIN_NOFILE && b->key && !strcmp(b->key, "[anon]");
}

void resolver_lookup_pid(struct resolver *r, int64_t binary_id, uint64_t offset, uint32_t pid,
			 int want_line, struct resolved *out)
{
	const char *name;

	resolver_lookup(r, binary_id, offset, want_line, out);
	if (pid && resolver_by_pid(r, binary_id) && (name = jit_name(r, pid, offset))) {
		out->symbol = name;
		if (want_line)
			out->source = "";
		if (r->want_inline)
			out->inlined = "";
	}
}

const char *resolver_debuginfod_summary(struct resolver *r)
{
	free(r->fetch_summary);
	r->fetch_summary = dbgfetch_summary(r->fetch);
	return r->fetch_summary;
}
