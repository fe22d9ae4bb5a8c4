/*
 * util.c - small helpers shared by every strobe program (see util.h).
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <linux/openat2.h>
#include <unistd.h>
#include "util.h"

int error_set(struct error *e, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return -1;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	text_sanitize(e->msg);	/* one line of text, wherever it is shown */
	return -1;
}

int error_prefix(struct error *e, const char *fmt, ...)
{
	char pre[256], old[sizeof(e->msg)];
	int n;
	va_list ap;

	if (!e)
		return -1;
	va_start(ap, fmt);
	vsnprintf(pre, sizeof(pre), fmt, ap);
	va_end(ap);
	memcpy(old, e->msg, sizeof(old));
	n = snprintf(e->msg, sizeof(e->msg), "%s: ", pre);
	if (n >= 0 && (size_t)n < sizeof(e->msg))
		snprintf(e->msg + n, sizeof(e->msg) - n, "%s", old);
	text_sanitize(e->msg);
	return -1;
}

static void die_oom(void)
{
	fputs("strobe: out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die_oom();
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		die_oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die_oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");

	if (!p)
		die_oom();
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die_oom();
	va_end(ap);
	return s;
}

void array_grow(void *pp, size_t *cap, size_t n, size_t sz)
{
	void **p = pp;
	size_t c = *cap;

	if (n <= c)
		return;
	c = c ? c : 16;
	while (c < n)
		c *= 2;
	*p = xrealloc(*p, c * sz);
	*cap = c;
}

uint64_t clock_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t clock_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t tsc_read(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
	uint64_t v;

	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	return 0;
#endif
}

int parse_duration_ns(const char *s, int64_t *ns)
{
	char *end;
	double v, mul = 1e9;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return -1;
	if (!*end || !strcmp(end, "s"))
		mul = 1e9;
	else if (!strcmp(end, "ms"))
		mul = 1e6;
	else if (!strcmp(end, "us"))
		mul = 1e3;
	else if (!strcmp(end, "ns"))
		mul = 1;
	else
		return -1;
	v *= mul;
	if (v > 9.2e18 || v < -9.2e18)
		return -1;
	*ns = (int64_t)(v + (v < 0 ? -0.5 : 0.5));
	return 0;
}

int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

void json_write_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', f);
	for (; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static int csv_is_formula(const char *s)
{
	return s[0] && strchr("=+-@\t\r", s[0]);
}

size_t csv_escape(char *dst, const char *s, int flags)
{
	int guard = (flags & CSV_TEXT) && csv_is_formula(s);
	size_t n = 0;

	if (!strpbrk(s, ",\"\r\n") && s[0] != ' ' && (!*s || s[strlen(s) - 1] != ' ')) {
		if (guard)
			dst[n++] = '\'';
		memcpy(dst + n, s, strlen(s));
		return n + strlen(s);
	}
	dst[n++] = '"';
	if (guard)
		dst[n++] = '\'';
	for (; *s; s++) {
		if (*s == '"')
			dst[n++] = '"';
		dst[n++] = *s;
	}
	dst[n++] = '"';
	return n;
}

void csv_write_field(FILE *f, const char *s, int flags)
{
	char small[512], *buf = small;
	size_t len, max;

	s = s ? s : "";
	max = CSV_ESCAPE_MAX(strlen(s));
	if (max > sizeof(small))
		buf = xmalloc(max);
	len = csv_escape(buf, s, flags);
	fwrite(buf, 1, len, f);
	if (buf != small)
		free(buf);
}

void gnuplot_write_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('\'', f);
	for (; *p; p++) {
		if (*p == '\'')
			fputs("'.\"'\".'", f);
		else if (*p < 0x20 || *p == 0x7f)
			fputc(' ', f);
		else
			fputc(*p, f);
	}
	fputc('\'', f);
}

size_t text_char(const unsigned char *p, int *ok)
{
	unsigned int c = p[0];
	uint32_t cp;
	size_t n, i;

	*ok = 0;
	if (c < 0x80) {
		*ok = c >= 0x20 && c != 0x7f;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 1;		/* a continuation byte or 0xc0, 0xc1, 0xf5-0xff */
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)	/* NUL included: never read past it */
			return 1;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 1;		/* overlong, beyond Unicode, a surrogate */
	*ok = cp >= 0xa0 && cp != 0x2028 && cp != 0x2029 &&
	      !(cp >= 0x202a && cp <= 0x202e) && !(cp >= 0x2066 && cp <= 0x2069);
	return n;
}

char *text_escape(char *dst, size_t cap, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = 0, len;
	int ok;

	if (!cap)
		return dst;
	while (*p) {
		len = text_char(p, &ok);
		if (n + (ok ? len : 1) >= cap)
			break;
		if (ok)
			memcpy(dst + n, p, len);
		else
			dst[n] = '?';
		n += ok ? len : 1;
		p += len;
	}
	dst[n] = 0;
	return dst;
}

void text_sanitize(char *s)
{
	unsigned char *r = (unsigned char *)s, *w = r;
	size_t len;
	int ok;

	while (*r) {
		len = text_char(r, &ok);
		if (!ok) {
			*w++ = '?';
			r += len;
			continue;
		}
		memmove(w, r, len);
		w += len;
		r += len;
	}
	*w = 0;
}

void text_write_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t len;
	int ok;

	while (*p) {
		len = text_char(p, &ok);
		if (ok)
			fwrite(p, 1, len, f);
		else
			fputc('?', f);
		p += len;
	}
}

#ifndef FUSE_CTL_SUPER_MAGIC
#define FUSE_CTL_SUPER_MAGIC 0x65735543
#endif

int fd_on_fuse(int fd)
{
	char path[48], *buf, *line, *end, *type;
	unsigned long mnt = 0, id;
	int found = -1;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	buf = file_read_all(path, NULL);
	if (!buf)
		return -1;
	line = strstr(buf, "\nmnt_id:");
	if (line)
		mnt = strtoul(line + 8, NULL, 10);
	free(buf);
	if (!line)
		return -1;
	buf = file_read_all("/proc/self/mountinfo", NULL);
	if (!buf)
		return -1;
	for (line = buf; *line && found < 0; line = end + 1) {
		end = strchrnul(line, '\n');
		id = strtoul(line, NULL, 10);
		if (id == mnt) {
			*end = 0;
			/* "ID PARENT M:N ROOT POINT OPTS [TAGS...] - TYPE ..." */
			type = strstr(line, " - ");
			found = type && (!strncmp(type + 3, "fuse ", 5) ||
					 !strncmp(type + 3, "fuse.", 5) ||
					 !strncmp(type + 3, "fuseblk ", 8));
			break;
		}
		if (!*end)
			break;
	}
	free(buf);
	if (found < 0) {
		/* a mount of another namespace: FUSE's control file system,
		 * when mounted, names each connection by its device; the
		 * device without asking the file system (cached attributes) */
		struct statx sx;
		struct statfs cs;

		if (statfs("/sys/fs/fuse/connections", &cs) == 0 &&
		    cs.f_type == FUSE_CTL_SUPER_MAGIC &&
		    statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE, &sx) == 0) {
			snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%u",
				 (unsigned)makedev(sx.stx_dev_major, sx.stx_dev_minor));
			found = access(path, F_OK) == 0;
		}
	}
	return found;
}

int walk_nofollow(int dirfd, const char *path, int (*dir_ok)(int dfd, void *arg), void *arg)
{
	const char *comp = path, *end;
	char name[NAME_MAX + 1];
	struct stat st;
	int dfd, nfd, err;

	dfd = open(*path == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*path != '/' && dirfd != AT_FDCWD) {
		if (dfd >= 0)
			close(dfd);
		dfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	}
	if (dfd < 0)
		return -1;
	for (;;) {
		while (*comp == '/')
			comp++;
		end = strchrnul(comp, '/');
		if (!*comp || (end - comp == 1 && *comp == '.')) {
			if (!*comp) {	/* "", "/" or a trailing "/": the directory */
				return dfd;
			}
			comp = end;
			continue;
		}
		if (end - comp == 2 && !strncmp(comp, "..", 2)) {
			err = EXDEV;
			goto fail;
		}
		if ((size_t)(end - comp) > NAME_MAX) {
			err = ENAMETOOLONG;
			goto fail;
		}
		memcpy(name, comp, end - comp);
		name[end - comp] = 0;
		if (dir_ok && dir_ok(dfd, arg)) {
			err = EACCES;
			goto fail;
		}
		nfd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		err = errno;
		close(dfd);
		if (nfd < 0) {
			errno = err;
			return -1;
		}
		dfd = nfd;
		comp = end;
		while (*comp == '/')
			comp++;
		if (!*comp && *end != '/')
			return dfd;	/* the last component, as it is */
		if (fstat(dfd, &st) < 0) {
			err = errno;
			goto fail;
		}
		if (!S_ISDIR(st.st_mode)) {
			err = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
			goto fail;
		}
	}
fail:
	close(dfd);
	errno = err;
	return -1;
}

int open_regular_untrusted(int dirfd, const char *path, uint64_t resolve, int flags,
			   struct stat *st)
{
	int follow = flags & OPEN_UNTRUSTED_FOLLOW;
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
		.resolve = resolve,
	};
	char self[40];
	struct stat again;
	int pfd, fd, err;

	pfd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (pfd < 0 && errno == ENOSYS && !resolve) {	/* before Linux 5.6 */
		pfd = openat(dirfd, path, (int)how.flags);
	} else if (pfd < 0 && errno == ENOSYS && !follow &&
		   !(resolve & ~(uint64_t)(RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
					   RESOLVE_BENEATH)) &&
		   (resolve & RESOLVE_NO_SYMLINKS) &&
		   !((resolve & RESOLVE_BENEATH) && *path == '/')) {
		pfd = walk_nofollow(dirfd, path, NULL, NULL);
	}
	if (pfd < 0)
		return -1;
	if ((flags & OPEN_UNTRUSTED_NO_FUSE) && fd_on_fuse(pfd) == 1) {
		close(pfd);
		memset(st, 0, sizeof(*st));
		errno = EFTYPE_FUSE;
		return -1;
	}
	if (fstat(pfd, st) < 0) {
		err = errno;
		close(pfd);
		errno = err;
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		close(pfd);
		/* O_PATH | O_NOFOLLOW gives the link itself: as open() would */
		errno = S_ISLNK(st->st_mode) && !follow ? ELOOP : EFTYPE_NOT_REGULAR;
		return -1;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	err = errno;
	close(pfd);
	if (fd < 0) {
		errno = err;
		return -1;
	}
	/* the magic link leads to the inode held: checked, not assumed */
	if (fstat(fd, &again) < 0 || again.st_dev != st->st_dev || again.st_ino != st->st_ino) {
		close(fd);
		errno = EFTYPE_NOT_REGULAR;
		return -1;
	}
	*st = again;
	return fd;
}

long fd_send_with(int sock, const void *buf, size_t len, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t r;

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		m.msg_control = u.buf;
		m.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		r = sendmsg(sock, &m, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	return r;
}

void fd_close_others(int keep)
{
#ifdef SYS_close_range
	if ((keep == 0 || syscall(SYS_close_range, 0U, (unsigned)keep - 1, 0U) == 0) &&
	    syscall(SYS_close_range, (unsigned)keep + 1, ~0U, 0U) == 0)
		return;
#endif
	for (int fd = 0; fd < 65536; fd++)
		if (fd != keep)
			close(fd);
}

char *file_read_all(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 65536, n = 0;
	char *buf;
	ssize_t r;

	if (fd < 0)
		return NULL;
	buf = xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int saved = errno;

			free(buf);
			close(fd);
			errno = saved;
			return NULL;
		}
		if (r == 0)
			break;
		n += r;
	}
	close(fd);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

int mkdir_p(const char *path, unsigned mode)
{
	char *p = xstrdup(path), *s;
	int ret = 0;

	for (s = p + 1; ; s++) {
		if (*s == '/' || !*s) {
			char c = *s;

			*s = 0;
			if (mkdir(p, mode) < 0 && errno != EEXIST) {
				ret = -1;
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	return ret;
}

const char *util_fd_name(int fd, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, len - 1);
	if (n <= 0)
		snprintf(buf, len, "fd %d", fd);
	else
		buf[n] = 0;
	return buf;
}

const char *util_path_base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

void sbuf_addf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	ARRAY_GROW(b->s, b->cap, b->n + (size_t)len + 1);
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, (size_t)len + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)len;
}

void sbuf_add(struct sbuf *b, const void *p, size_t n)
{
	ARRAY_GROW(b->s, b->cap, b->n + n + 1);
	memcpy(b->s + b->n, p, n);
	b->n += n;
	b->s[b->n] = 0;
}

uint64_t hash_string(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * HASH_STRING_PRIME;
	return h;
}

uint64_t hash_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

int fd_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t r = write(fd, p, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0) {
			errno = EIO;
			return -1;
		}
		p += r;
		len -= r;
	}
	return 0;
}

int fd_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	while (len) {
		ssize_t r = pread(fd, p, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return 0;
		p += r;
		len -= r;
		off += r;
	}
	return 1;
}
