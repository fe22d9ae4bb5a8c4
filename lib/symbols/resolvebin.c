/*
 * resolvebin.c - opening one binary for the resolver (resolve_int.h): its
 * row in binaries, then, for a file, its cached copy parsed with symtab
 * (libbfd) here or in the symbol worker (symworker.h), or the original
 * file when the cache entry is root's only; for a binary with no .symtab,
 * its separate debug file (debuginfo.h, dbgfetch.h) or its MiniDebugInfo;
 * for the kernel, the session's kallsyms snapshot.  Whatever stops a
 * binary from being named is its problem (resolve.h: naming never
 * guesses).
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "binname.h"
#include "dbgfetch.h"
#include "debuginfo.h"
#include "hashkey.h"
#include "kallsyms.h"
#include "resolve_int.h"
#include "symtab.h"
#include "symworker.h"

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

/* The problem of a binary whose cache entry does not exist. */
static char *copy_missing(const struct db_binary *row)
{
	return xstrdup(row->cached ? "cached copy missing" : "never copied to the binary cache");
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

/* Append line to the "; "-separated list *list. */
static void note_add(char **list, char *line)
{
	char *old = *list;

	*list = xasprintf("%s%s%s", old ? old : "", old ? "; " : "", line);
	free(old);
	free(line);
}

/* Note in *list that the debug file what was not used: rc < 0, err says
 * why; rc 0, it has no function symbols. */
static void refuse(char **list, const char *what, int rc, const struct error *err)
{
	note_add(list, xasprintf("%s not used: %s", what,
				 rc ? err->msg : "it has no function symbols"));
}

/* symtab_use_debug() of the file open at fd (libbfd opens it by name:
 * /proc/self/fd/N). */
static int use_debug_fd(struct symtab *st, int fd, struct error *err)
{
	char name[64];

	snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	return symtab_use_debug(st, name, err);
}

/* MiniDebugInfo: the .symtab in the binary's own .gnu_debugdata (xz). */
static void mini_attach(struct rbin *b, char **refused)
{
	struct error err = { "" };
	void *buf;
	size_t len;
	int fd, rc;

	if (!symtab_debugdata(b->st, &buf, &len))
		return;
	fd = debuginfo_mini_fd(buf, len, &err);
	free(buf);
	rc = fd >= 0 ? use_debug_fd(b->st, fd, &err) : -1;
	if (rc == 1) {
		b->debug = xstrdup(".gnu_debugdata (MiniDebugInfo)");
		b->dbg_fd = fd;
		return;
	}
	if (fd >= 0)
		close(fd);
	refuse(refused, ".gnu_debugdata", rc, &err);
}

/* Use the debug file f found for b: its symbols (b->debug, b->dbg_fd
 * take f's path and fd), or a "not used" line in f->refused. */
static void use_found(struct rbin *b, struct debuginfo_found *f)
{
	struct error err = { "" };
	int rc = use_debug_fd(b->st, f->fd, &err);

	if (rc == 1) {
		b->debug = f->path;
		b->dbg_fd = f->fd;
		f->path = NULL;
		f->fd = -1;
		return;
	}
	refuse(&f->refused, f->path, rc, &err);
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

/* What debuginfo_find() looks for, for the binary of row, by build-id or
 * by link (NULL: none) with its CRC. */
static void want_init(struct resolver *r, const struct db_binary *row, const char *link,
		      uint32_t link_crc, struct debuginfo_want *w)
{
	memset(w, 0, sizeof(*w));
	w->bin_path = row->path;
	w->build_id = strncmp(row->key, "buildid:", 8) ? NULL : row->key + 8;
	w->link = link;
	w->link_crc = link_crc;
	w->roots = r->debug_roots;
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
	struct debuginfo_want w;
	struct debuginfo_found f;
	uint32_t crc = 0;
	char *link;

	if (symtab_has_symtab(b->st))
		return;
	link = symtab_debuglink(b->st, &crc);
	want_init(r, row, link, crc, &w);
	if (debuginfo_find(&w, &f) == 1)
		use_found(b, &f);
	if (!b->debug && w.build_id && fetch_get(r)) {
		struct debuginfo_found g;

		if (dbgfetch_find(r->fetch, w.build_id, &g) == 1)
			use_found(b, &g);
		if (g.refused) {
			note_add(&f.refused, g.refused);
			g.refused = NULL;
		}
		debuginfo_found_free(&g);
	}
	if (!b->debug)
		mini_attach(b, &f.refused);
	b->debug_note = f.refused;
	f.refused = NULL;
	debuginfo_found_free(&f);
	free(link);
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
	struct debuginfo_want w;
	struct debuginfo_found f;
	struct error err = { "" };
	int rc;

	want_init(r, row, info->link[0] ? info->link : NULL, info->link_crc, &w);
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
			refuse(&f.refused, f.path, rc, &err);
		}
	}
	if (!b->debug) {
		rc = symworker_mini(r->worker, b->wh, info, &err);
		if (rc == 1)
			b->debug = xstrdup(".gnu_debugdata (MiniDebugInfo)");
		else if (rc < 0)
			refuse(&f.refused, ".gnu_debugdata", rc, &err);
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
			b->problem = copy_missing(row);
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

/* The cached copy of a file binary, parsed here (or, when the entry is
 * root's only, the original file opened as the reader). */
static void local_bin_open(struct resolver *r, struct rbin *b, const struct db_binary *row)
{
	struct error err = { "" };
	char *path = bincache_path(&r->cache, row->key);

	if (!path) {
		b->problem = xasprintf("bad key '%s' in the database", row->key);
	} else if (access(path, F_OK) < 0 && errno == ENOENT) {
		b->problem = copy_missing(row);
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
}

/* b for the binary of row, whose key is a file's or the kernel's. */
static void row_open(struct resolver *r, struct rbin *b, const struct db_binary *row)
{
	b->key = xstrdup(row->key);
	b->display = xstrdup(binname_of(row->key, row->path, 0));
	if (binname_is_kernel(row->key)) {
		b->kind = BIN_KERNEL;
		b->build_id = xstrdup(row->key + 7);
		if (row->problem[0])
			b->problem = xstrdup(row->problem);
		else if (!kallsyms_get(r))
			b->problem = xstrdup(r->ks_problem);
		return;
	}
	if (binname_is_nofile(row->key)) {
		b->kind = BIN_NOFILE;
		return;
	}
	b->kind = BIN_FILE;
	if (!strncmp(row->key, "buildid:", 8))
		b->build_id = xstrdup(row->key + 8);
	else
		b->build_id = xstrdup(row->key);
	if (row->note[0])
		b->note = xstrdup(row->note);
	if (row->problem[0])
		b->problem = xstrdup(row->problem);
	else if (r->worker)
		worker_bin_open(r, b, row);
	else
		local_bin_open(r, b, row);
}

void resolve_bin_open(struct resolver *r, struct rbin *b, int64_t id)
{
	struct db_binary *row = xmalloc(sizeof(*row));
	struct error err = { "" };

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
	} else {
		row_open(r, b, row);
	}
	free(row);
}

void resolve_bin_free(struct resolver *r, struct rbin *b)
{
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
