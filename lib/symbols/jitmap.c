/*
 * jitmap.c - perf map files of JIT compilers (see jitmap.h).
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "jitmap.h"

int jitmap_read(const char *path, uid_t uid, int64_t not_before_ns, char **buf, size_t *len,
		struct error *e)
{
	struct stat st;
	int fd = open_regular_untrusted(AT_FDCWD, path, 0, OPEN_UNTRUSTED_NO_FUSE, &st);

	*buf = NULL;
	*len = 0;
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return error_set(e, "%s: %s", path, errno == ELOOP ?
				 "a symbolic link, refused" : errno == EFTYPE_NOT_REGULAR ?
				 "not a regular file, refused" : errno == EFTYPE_FUSE ?
				 EFTYPE_FUSE_TEXT : strerror(errno));
	}
	return jitmap_read_fd(fd, path, uid, not_before_ns, buf, len, e);
}

int jitmap_read_fd(int fd, const char *path, uid_t uid, int64_t not_before_ns, char **buf,
		   size_t *len, struct error *e)
{
	struct stat st;
	size_t done = 0;
	char *b;

	*buf = NULL;
	*len = 0;
	if (fstat(fd, &st) < 0) {
		error_set(e, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		error_set(e, "%s: not a regular file, refused", path);
		goto fail;
	}
	if (st.st_uid != uid && st.st_uid != 0) {
		error_set(e, "%s: owned by uid %u, not by the process's uid %u or root, "
			  "refused", path, (unsigned)st.st_uid, (unsigned)uid);
		goto fail;
	}
	/* a hard link to another file of the user's is that file, whatever
	 * its name (with fs.protected_hardlinks 0, even another user's) */
	if (st.st_nlink != 1) {
		error_set(e, "%s: %ju hard links, not 1, refused", path, (uintmax_t)st.st_nlink);
		goto fail;
	}
	if (not_before_ns &&
	    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec < not_before_ns) {
		error_set(e, "%s: last modified before the process started (an earlier "
			  "process's), refused", path);
		goto fail;
	}
	if (st.st_size < 0 || (uint64_t)st.st_size > JITMAP_FILE_MAX) {
		error_set(e, "%s: larger than %u MiB, refused", path, JITMAP_FILE_MAX >> 20);
		goto fail;
	}
	/* the file may grow meanwhile: read what fstat said, no more */
	b = xmalloc((size_t)st.st_size + 1);
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, b + done, (size_t)st.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			error_set(e, "%s: %s", path, strerror(errno));
			free(b);
			goto fail;
		}
		if (!n)
			break;
		done += n;
	}
	close(fd);
	b[done] = 0;
	*buf = b;
	*len = done;
	return 1;
fail:
	close(fd);
	return -1;
}

/* A hex number at *p (optional 0x, 1 to 16 digits), then at least one
 * space or tab; *p moves past them.  -1 if malformed. */
static int hex_field(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	int digits = 0;

	*v = 0;
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end; s++, digits++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (digits >= 16)
			return -1;
		*v = *v << 4 | (uint64_t)d;
	}
	if (!digits || s == end || (*s != ' ' && *s != '\t'))
		return -1;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	*p = s;
	return 0;
}

static int parse_line(const char *s, const char *end, struct jitmap_sym *out)
{
	uint64_t start, size;
	size_t n;
	char *name;

	if (hex_field(&s, end, &start) || hex_field(&s, end, &size))
		return -1;
	while (end > s && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	n = end - s;
	if (!n || n > JITMAP_NAME_MAX || !size || size > JITMAP_SIZE_MAX ||
	    start > UINT64_MAX - size)
		return -1;
	name = xmalloc(n + 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		name[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	name[n] = 0;
	out->start = start;
	out->size = size;
	out->load_ns = 0;
	out->name = name;
	return 0;
}

void jitmap_parse(const char *buf, size_t len, struct jitmap *m)
{
	const char *p = buf, *end = buf + len;
	size_t cap = 0;

	memset(m, 0, sizeof(*m));
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		const char *le = nl ? nl : end;
		struct jitmap_sym sym;

		if (le == p) {
			/* an empty line */
		} else if (m->nr >= JITMAP_SYMS_MAX || parse_line(p, le, &sym) < 0) {
			m->dropped++;
		} else {
			ARRAY_GROW(m->syms, cap, m->nr + 1);
			m->syms[m->nr++] = sym;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
}

void jitmap_free(struct jitmap *m)
{
	for (size_t i = 0; i < m->nr; i++)
		free(m->syms[i].name);
	free(m->syms);
	memset(m, 0, sizeof(*m));
}
