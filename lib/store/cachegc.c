/*
 * cachegc.c - cache size and pruning (see cachegc.h).
 */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cachegc.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* A name of the cache's layout: [a-z0-9_-]+, at most max bytes. */
static int layout_name(const char *s, size_t max)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') ||
		      s[n] == '_' || s[n] == '-'))
			return 0;
	return n > 0 && n <= max;
}

/* Called for each file DIR/prefix/xx/name; dfd is DIR/prefix/xx. */
typedef int (*entry_fn)(void *arg, int dfd, const char *prefix, const char *xx,
			const char *name, const struct stat *st, struct error *e);

static int walk(const char *dir, entry_fn fn, void *arg, struct error *e)
{
	int top = open(dir, DIR_FLAGS), ret = 0;
	DIR *d1;
	struct dirent *p;

	if (top < 0) {
		if (errno == ENOENT)
			return 0;
		return error_set(e, "cannot open the cache %s: %s", dir, strerror(errno));
	}
	d1 = fdopendir(top);
	if (!d1) {
		close(top);
		return error_set(e, "cannot read the cache %s: %s", dir, strerror(errno));
	}
	while (!ret && (p = readdir(d1))) {
		int pfd;
		DIR *d2;
		struct dirent *x;

		if (!layout_name(p->d_name, 64))
			continue;
		pfd = openat(top, p->d_name, DIR_FLAGS);
		if (pfd < 0)
			continue;	/* not a directory, or a symlink */
		d2 = fdopendir(pfd);
		if (!d2) {
			close(pfd);
			continue;
		}
		while (!ret && (x = readdir(d2))) {
			int xfd, n_in = 0;
			DIR *d3;
			struct dirent *f;

			if (strlen(x->d_name) != 2 || !layout_name(x->d_name, 2))
				continue;
			xfd = openat(pfd, x->d_name, DIR_FLAGS);
			if (xfd < 0)
				continue;
			d3 = fdopendir(xfd);
			if (!d3) {
				close(xfd);
				continue;
			}
			while (!ret && (f = readdir(d3))) {
				struct stat st;

				if (!strcmp(f->d_name, ".") || !strcmp(f->d_name, ".."))
					continue;
				n_in++;
				if (fstatat(xfd, f->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
					continue;
				if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
					continue;
				ret = fn(arg, xfd, p->d_name, x->d_name, f->d_name, &st, e);
				if (ret > 0) {	/* removed */
					n_in--;
					ret = 0;
				}
			}
			closedir(d3);
			if (!ret && !n_in)	/* emptied: fails harmlessly if not */
				unlinkat(pfd, x->d_name, AT_REMOVEDIR);
		}
		closedir(d2);
	}
	closedir(d1);
	return ret < 0 ? -1 : 0;
}

static int add_size(void *arg, int dfd, const char *prefix, const char *xx,
		    const char *name, const struct stat *st, struct error *e)
{
	*(uint64_t *)arg += (uint64_t)st->st_blocks * 512;
	return 0;
}

int cachegc_usage(const char *dir, uint64_t *bytes, struct error *e)
{
	*bytes = 0;
	return walk(dir, add_size, bytes, e);
}

struct prune {
	struct db *db;
	sqlite3_stmt *by_key, *by_kallsyms;
	struct cachegc_stats *st;
};

static int referenced(struct prune *p, const char *key, struct error *e)
{
	sqlite3_stmt *st = strncmp(key, "kallsyms:", 9) ? p->by_key : p->by_kallsyms;
	int rc;

	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return db_sql_error(p->db, e, "checking the cache's entries");
}

static int prune_one(void *arg, int dfd, const char *prefix, const char *xx,
		     const char *name, const struct stat *st, struct error *e)
{
	struct prune *p = arg;
	char key[300];
	int r;

	if (!strncmp(name, ".tmp.", 5)) {
		if (unlinkat(dfd, name, 0) == 0) {
			p->st->tmp_removed++;
			return 1;
		}
		return 0;
	}
	if (!layout_name(name, 250))
		return 0;	/* not an entry of ours: left alone */
	snprintf(key, sizeof(key), "%s:%s%s", prefix, xx, name);
	r = referenced(p, key, e);
	if (r < 0)
		return -1;
	if (r) {
		p->st->kept++;
		return 0;
	}
	if (unlinkat(dfd, name, 0) < 0)
		return 0;
	p->st->removed++;
	p->st->removed_bytes += (uint64_t)st->st_blocks * 512;
	return 1;
}

int cachegc_prune(struct db *db, const char *dir, struct cachegc_stats *st,
		  struct error *e)
{
	struct prune p = { .db = db, .st = st };
	int ret;

	memset(st, 0, sizeof(*st));
	if (sqlite3_prepare_v2(db_sqlite(db), "SELECT 1 FROM binaries WHERE key=?1 LIMIT 1", -1,
			       &p.by_key, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db_sqlite(db), "SELECT 1 FROM sessions WHERE kallsyms_key=?1 "
			       "LIMIT 1", -1, &p.by_kallsyms, NULL) != SQLITE_OK) {
		sqlite3_finalize(p.by_key);
		return db_sql_error(db, e, "checking the cache's entries");
	}
	ret = walk(dir, prune_one, &p, e);
	sqlite3_finalize(p.by_key);
	sqlite3_finalize(p.by_kallsyms);
	return ret;
}
