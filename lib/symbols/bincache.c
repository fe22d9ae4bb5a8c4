/*
 * bincache.c - the content-addressed store of binaries and kallsyms
 * snapshots (see bincache.h).  Key "prefix:hex" lives at
 * DIR/prefix/<first 2 hex>/<rest>.  Keys are checked against [a-z0-9_-]
 * with exactly one ':', so no key can name a path outside DIR.
 */
#include "config.h"
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* copy_file_range, mkostemp */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bincache.h"
#include "hashkey.h"

#define ENTRY_MODE 0640
#define PRIVATE_MODE 0600
#define DIR_MODE 0750
#define COPY_CHUNK (1 << 20)

static int key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

/* Length of the prefix of a valid key, or 0 if the key is not valid:
 * a non-empty prefix, one ':', then at least three more characters. */
static size_t key_check(const char *key)
{
	const char *colon, *p;

	if (!key)
		return 0;
	colon = strchr(key, ':');
	if (!colon || colon == key || strlen(colon + 1) < 3 ||
	    strlen(key) > 255)
		return 0;
	for (p = key; *p; p++)
		if (p != colon && !key_char(*p))
			return 0;
	return colon - key;
}

int bincache_open(struct bincache *c, const char *dir, struct error *e)
{
	struct stat st;
	size_t n;

	c->dir = NULL;
	if (!dir || !*dir)
		return error_set(e, "no cache directory given");
	if (mkdir_p(dir, DIR_MODE) < 0)
		return error_set(e, "cannot create cache directory %s: %s",
				 dir, strerror(errno));
	if (stat(dir, &st) < 0)
		return error_set(e, "cannot open cache directory %s: %s",
				 dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return error_set(e, "cannot open cache directory %s: not a directory", dir);
	c->dir = xstrdup(dir);
	n = strlen(c->dir);
	while (n > 1 && c->dir[n - 1] == '/')
		c->dir[--n] = 0;
	return 0;
}

void bincache_close(struct bincache *c)
{
	free(c->dir);
	c->dir = NULL;
}

/* DIR/prefix/xx (with sub) or DIR/prefix/xx/rest; NULL for a bad key. */
static char *entry_path(const struct bincache *c, const char *key, int dir_only)
{
	size_t plen = key_check(key);
	const char *hex;

	if (!plen)
		return NULL;
	hex = key + plen + 1;
	if (dir_only)
		return xasprintf("%s/%.*s/%.2s", c->dir, (int)plen, key, hex);
	return xasprintf("%s/%.*s/%.2s/%s", c->dir, (int)plen, key, hex, hex + 2);
}

char *bincache_path(const struct bincache *c, const char *key)
{
	return entry_path(c, key, 0);
}

int bincache_has(const struct bincache *c, const char *key)
{
	char *path = entry_path(c, key, 0);
	struct stat st;
	int ret;

	if (!path)
		return 0;
	ret = stat(path, &st) == 0 && S_ISREG(st.st_mode);
	free(path);
	return ret;
}


/* Copy [off, end) of src (end -1: to its end) to the same offsets of dst;
 * -1 with errno.  *rd tells whether the failure was in reading (1) or
 * writing (0).  Past HASHKEY_FILE_MAX it fails with EFBIG: src may be a
 * profiled process's file, extended while we copy. */
static int copy_range(int dst, int src, loff_t off, loff_t end, int *rd)
{
	loff_t doff = off;
	char *buf;
	int cfr = 1;

	/* copy_file_range first (it may share extents); any error makes us
	 * fall back to plain reads, which then report real I/O errors. */
	while (cfr && (end < 0 || off < end)) {
		size_t want = end < 0 ? COPY_CHUNK : (size_t)MIN((loff_t)COPY_CHUNK, end - off);
		ssize_t r = copy_file_range(src, &off, dst, &doff, want, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			cfr = 0;
		if (off > HASHKEY_FILE_MAX) {
			errno = EFBIG;
			*rd = 1;
			return -1;
		}
	}
	if (end >= 0 && off >= end)
		return 0;
	/* Whatever copy_file_range could not do (pseudo files report 0). */
	if (lseek(dst, off, SEEK_SET) < 0) {
		*rd = 0;
		return -1;
	}
	/* a fixed size, but checked: failing this binary, not the daemon */
	buf = malloc(COPY_CHUNK);
	if (!buf) {
		errno = ENOMEM;
		*rd = 0;
		return -1;
	}
	while (end < 0 || off < end) {
		size_t want = end < 0 ? COPY_CHUNK : (size_t)MIN((loff_t)COPY_CHUNK, end - off);
		ssize_t r = pread(src, buf, want, off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			*rd = 1;
			goto fail;
		}
		if (r == 0)
			break;
		if (fd_write_all(dst, buf, r) < 0) {
			*rd = 0;
			goto fail;
		}
		off += r;
		if (off > HASHKEY_FILE_MAX) {
			errno = EFBIG;
			*rd = 1;
			goto fail;
		}
	}
	free(buf);
	return 0;
fail:
	free(buf);
	return -1;
}

/*
 * Copy all of src into dst; -1 with errno, *rd as copy_range()'s.  A
 * sparse file (fewer blocks than its size) stays sparse: only its data
 * is copied (SEEK_DATA, SEEK_HOLE) and the size set, so a user's file of
 * holes does not become as many bytes of root's disk.  Any other file is
 * copied whole, to its end.
 */
static int copy_fd(int dst, int src, int *rd)
{
	loff_t data, hole;
	struct stat st;

	if (fstat(src, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_blocks * 512 >= (uint64_t)st.st_size)
		return copy_range(dst, src, 0, -1, rd);
	if (st.st_size > HASHKEY_FILE_MAX) {
		errno = EFBIG;
		*rd = 1;
		return -1;
	}
	data = lseek(src, 0, SEEK_DATA);
	if (data < 0 && errno != ENXIO)	/* cannot say where holes are */
		return copy_range(dst, src, 0, -1, rd);
	while (data >= 0 && data < st.st_size) {
		hole = lseek(src, data, SEEK_HOLE);
		if (hole < 0 || hole > st.st_size)
			hole = st.st_size;
		if (copy_range(dst, src, data, hole, rd) < 0)
			return -1;
		data = lseek(src, hole, SEEK_DATA);
	}
	if (ftruncate(dst, st.st_size) < 0) {
		*rd = 0;
		return -1;
	}
	return 0;
}

int bincache_open_entry(const struct bincache *c, const char *key)
{
	char *path = entry_path(c, key, 0);
	int fd;

	if (!path) {
		errno = EINVAL;
		return -1;
	}
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	free(path);
	return fd;
}

int bincache_same(const struct bincache *c, const char *key, int fd, struct error *e)
{
	struct stat a, b;
	char *x = NULL, *y = NULL, name[256];
	loff_t off = 0;
	int efd, ret = -1;

	efd = bincache_open_entry(c, key);
	if (efd < 0) {
		if (errno == ENOENT)
			return 1;
		return error_set(e, "cannot open the cache entry %s: %s", key, strerror(errno));
	}
	if (fstat(efd, &a) < 0 || fstat(fd, &b) < 0) {
		error_set(e, "cannot stat %s: %s", key, strerror(errno));
		goto out;
	}
	if (!S_ISREG(a.st_mode) || a.st_size != b.st_size) {
		ret = 0;
		goto out;
	}
	x = malloc(COPY_CHUNK);
	y = malloc(COPY_CHUNK);
	if (!x || !y) {
		error_set(e, "cannot compare %s with its cache entry: out of memory", key);
		goto out;
	}
	for (;;) {
		ssize_t r = pread(efd, x, COPY_CHUNK, off), s;

		if (r < 0) {
			error_set(e, "cannot read the cache entry %s: %s", key, strerror(errno));
			goto out;
		}
		s = r ? pread(fd, y, r, off) : pread(fd, y, 1, off);
		if (s < 0) {
			error_set(e, "cannot read %s: %s", util_fd_name(fd, name, sizeof(name)),
				  strerror(errno));
			goto out;
		}
		if (s != r || memcmp(x, y, r)) {
			ret = 0;
			goto out;
		}
		if (!r)
			break;
		off += r;
		if (off > HASHKEY_FILE_MAX) {
			error_set(e, "cannot compare %s: larger than " HASHKEY_FILE_MAX_TEXT, key);
			goto out;
		}
	}
	ret = 1;
out:
	free(x);
	free(y);
	close(efd);
	return ret;
}

/* An existing entry at path: share or restrict it if asked to.  0 if it
 * exists, -1 (errno ENOENT) if not. */
static int entry_share(const char *path, enum bincache_access access)
{
	mode_t want = access == BINCACHE_SHARED ? ENTRY_MODE : PRIVATE_MODE;
	struct stat st;
	int fd;

	if (access == BINCACHE_PRIVATE)
		return lstat(path, &st);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -1 : 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (st.st_mode & 07777) != want)
		fchmod(fd, want);
	close(fd);
	return 0;
}

/* Write an entry through a temporary file renamed into place. */
static int store(const struct bincache *c, const char *key, int src,
		 const void *mem, size_t len, enum bincache_access access,
		 struct error *e)
{
	char *dir, *path, *tmp, name[256];
	int fd, rd = 0, saved;

	path = entry_path(c, key, 0);
	if (!path)
		return error_set(e, "bad cache key '%s'", key ? key : "(null)");
	if (entry_share(path, access) == 0) {
		free(path);
		return 0;
	}
	dir = entry_path(c, key, 1);
	if (mkdir_p(dir, DIR_MODE) < 0) {
		error_set(e, "cannot create cache directory %s: %s", dir,
			  strerror(errno));
		free(dir);
		free(path);
		return -1;
	}
	tmp = xasprintf("%s/.tmp.%s.XXXXXX", dir, strrchr(path, '/') + 1);
	free(dir);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		error_set(e, "cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (fchmod(fd, access == BINCACHE_SHARED ? ENTRY_MODE : PRIVATE_MODE) < 0)
		goto write_fail;
	if (src >= 0) {
		if (copy_fd(fd, src, &rd) < 0)
			goto write_fail;
	} else if (fd_write_all(fd, mem, len) < 0) {
		goto write_fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		goto write_fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		error_set(e, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	free(tmp);
	free(path);
	return 0;

write_fail:
	saved = errno;
	if (rd)
		error_set(e, "cannot read %s to store it as %s: %s",
			  util_fd_name(src, name, sizeof(name)), path, strerror(saved));
	else if (saved == ENOSPC || saved == EDQUOT)
		error_set(e, "cannot write %s: disk full (%s): free space in %s", tmp,
			  strerror(saved), c->dir);
	else
		error_set(e, "cannot write %s: %s", tmp, strerror(saved));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
out:
	free(tmp);
	free(path);
	return -1;
}

int bincache_store_fd(const struct bincache *c, const char *key, int fd,
		      enum bincache_access access, struct error *e)
{
	if (fd < 0)
		return error_set(e, "cannot store %s: bad file descriptor", key);
	return store(c, key, fd, NULL, 0, access, e);
}

int bincache_store_buf(const struct bincache *c, const char *key,
		       const void *buf, size_t len, enum bincache_access access,
		       struct error *e)
{
	return store(c, key, -1, buf, len, access, e);
}
