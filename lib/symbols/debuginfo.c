/*
 * debuginfo.c - finding separate debug files (see debuginfo.h).
 *
 * Each candidate is opened once (O_NONBLOCK, so a FIFO cannot block us),
 * checked with fstat (regular file, bounded size) and verified by build-id
 * or CRC on that same descriptor: the caller reads symbols through the
 * descriptor, never by reopening the path.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <unistd.h>
#include <lzma.h>
#include <linux/openat2.h>
#include "debuginfo.h"
#include "hashkey.h"

uint32_t debuginfo_crc32(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t i;
	int k;

	crc = ~crc;
	for (i = 0; i < len; i++) {
		crc ^= p[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

/* Debug files run to hundreds of MiB: a byte at a time through a table
 * (built per call, from debuginfo_crc32 itself), not a bit at a time. */
int debuginfo_crc32_fd(int fd, uint32_t *crc, struct error *e)
{
	static const size_t bufsz = 1 << 16;
	unsigned char *buf = xmalloc(bufsz);
	uint32_t table[256], c = ~0u;
	off_t pos = 0;
	ssize_t n, i;

	for (i = 0; i < 256; i++) {
		unsigned char b = (unsigned char)i;

		/* the CRC register after one byte b from 0, pre and post ~ undone */
		table[i] = ~debuginfo_crc32(~0u, &b, 1);
	}

	while ((n = pread(fd, buf, bufsz, pos)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return error_set(e, "read: %s", strerror(errno));
		}
		for (i = 0; i < n; i++)
			c = (c >> 8) ^ table[(c ^ buf[i]) & 0xff];
		pos += n;
	}
	free(buf);
	*crc = ~c;
	return 0;
}

static int is_hex(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

char *debuginfo_build_id_path(const char *root, const char *hex)
{
	size_t len = hex ? strlen(hex) : 0;

	if (len < 4 || len > 128 || len % 2 || !is_hex(hex, len))
		return NULL;
	return xasprintf("%s/.build-id/%.2s/%s.debug", root, hex, hex + 2);
}

size_t debuginfo_link_paths(const char *bin_path, const char *link, const char *root,
			    char *out[DEBUGINFO_MAX_LINK_PATHS])
{
	const char *slash = bin_path ? strrchr(bin_path, '/') : NULL;
	int dirlen;

	if (!link || !*link || strchr(link, '/') || !strcmp(link, ".") || !strcmp(link, "..") ||
	    strlen(link) > 255 || !bin_path || bin_path[0] != '/' || !slash)
		return 0;
	dirlen = (int)(slash - bin_path);
	out[0] = xasprintf("%.*s/%s", dirlen, bin_path, link);
	out[1] = xasprintf("%.*s/.debug/%s", dirlen, bin_path, link);
	out[2] = xasprintf("%s%.*s/%s", root, dirlen, bin_path, link);
	return 3;
}

static void refuse(char **refused, const char *path, const char *why)
{
	char *old = *refused;

	*refused = xasprintf("%s%s%s refused: %s", old ? old : "", old ? "; " : "", path, why);
	free(old);
}

/* Is fd a regular file of at most DEBUGINFO_FILE_MAX bytes?  Else refused. */
static int usable_file(int fd, const char *path, char **refused)
{
	struct stat sb;

	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size > DEBUGINFO_FILE_MAX) {
		refuse(refused, path, "not a regular file of at most 1 GiB");
		return -1;
	}
	return 0;
}

/* Open path as a candidate: fd, or -1 (ENOENT and the like: silently).
 * The path comes partly from the binary (its debug link): looked up
 * O_PATH, so a device or FIFO there is never opened (symlinks followed:
 * /usr/lib/debug/.build-id is made of them; the file must then be
 * regular). */
static int open_candidate(const char *path, char **refused)
{
	struct stat st;
	/* root's (reports, strobed --push) never wait for a FUSE daemon */
	int fd = open_regular_untrusted(AT_FDCWD, path, RESOLVE_NO_MAGICLINKS,
					OPEN_UNTRUSTED_FOLLOW |
					(geteuid() ? 0 : OPEN_UNTRUSTED_NO_FUSE), &st);

	if (fd < 0) {
		if (errno == EFTYPE_NOT_REGULAR)
			refuse(refused, path, "not a regular file of at most 1 GiB");
		else if (errno == EFTYPE_FUSE)
			refuse(refused, path, EFTYPE_FUSE_TEXT);
		return -1;
	}
	if (usable_file(fd, path, refused) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int debuginfo_check_build_id_by(int fd, const char *path, const char *hex, char **refused,
				int (*read_id)(void *ctx, int fd, uint8_t *id, size_t cap),
				void *ctx)
{
	struct error err = { "" };
	uint8_t id[64];
	char got[129];
	int n, i;

	if (usable_file(fd, path, refused) < 0)
		return -1;
	n = read_id ? read_id(ctx, fd, id, sizeof(id)) :
		      hashkey_build_id_fd(fd, id, sizeof(id), &err);
	if (n > (int)sizeof(id))
		n = -1;
	for (i = 0; i < n; i++)
		snprintf(got + 2 * i, 3, "%02x", id[i]);
	got[n > 0 ? 2 * n : 0] = 0;
	if (n < 0) {	/* a read error, or the symbol worker failed on it */
		refuse(refused, path, "its build-id could not be read");
		return -1;
	}
	if (!n || !hex || strcmp(got, hex)) {
		refuse(refused, path, "its build-id is not the binary's");
		return -1;
	}
	return 0;
}

int debuginfo_check_build_id(int fd, const char *path, const char *hex, char **refused)
{
	return debuginfo_check_build_id_by(fd, path, hex, refused, NULL, NULL);
}

static int try_build_id(const struct debuginfo_want *w, const char *path, char **refused)
{
	int fd = open_candidate(path, refused);

	if (fd < 0)
		return -1;
	if (debuginfo_check_build_id_by(fd, path, w->build_id, refused, w->read_id,
					w->read_id_ctx) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int try_link(const char *path, uint32_t want, char **refused)
{
	struct error err = { "" };
	uint32_t crc;
	int fd = open_candidate(path, refused);

	if (fd < 0)
		return -1;
	if (debuginfo_crc32_fd(fd, &crc, &err) < 0 || crc != want) {
		refuse(refused, path, "its CRC-32 is not the one in the binary's .gnu_debuglink");
		close(fd);
		return -1;
	}
	return fd;
}

int debuginfo_find(const struct debuginfo_want *w, struct debuginfo_found *out)
{
	const char *roots = w->roots && *w->roots ? w->roots : DEBUGINFO_DEFAULT_ROOTS;
	int pass;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	/* All roots by build-id first, then all by debuglink. */
	for (pass = 0; pass < 2; pass++) {
		const char *p = roots;

		while (*p) {
			const char *end = strchr(p, ':');
			size_t len = end ? (size_t)(end - p) : strlen(p);
			char *root = xasprintf("%.*s", (int)len, p);

			p += len + (end ? 1 : 0);
			if (!*root) {
				free(root);
				continue;
			}
			if (pass == 0 && w->build_id) {
				char *path = debuginfo_build_id_path(root, w->build_id);

				if (path && (out->fd = try_build_id(w, path, &out->refused)) >= 0) {
					out->path = path;
					free(root);
					return 1;
				}
				free(path);
			} else if (pass == 1 && w->link) {
				char *c[DEBUGINFO_MAX_LINK_PATHS];
				size_t n = debuginfo_link_paths(w->bin_path, w->link, root, c), i;

				for (i = 0; i < n; i++) {
					if (out->fd < 0 &&
					    (out->fd = try_link(c[i], w->link_crc, &out->refused)) >= 0)
						out->path = c[i];
					else
						free(c[i]);
				}
				if (out->fd >= 0) {
					free(root);
					return 1;
				}
			}
			free(root);
		}
	}
	return 0;
}

void debuginfo_found_free(struct debuginfo_found *f)
{
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	free(f->refused);
	f->fd = -1;
	f->path = f->refused = NULL;
}

int debuginfo_xz_decode(const void *in, size_t len, void **out, size_t *outlen,
			struct error *e)
{
	/* a bomb (xz of zeros: 1000 to 1 and more) stops at the limit: the
	 * output grows only as it is decoded, one pass */
	size_t max = len > DEBUGINFO_MINI_MAX / DEBUGINFO_MINI_RATIO ? DEBUGINFO_MINI_MAX :
		     len * DEBUGINFO_MINI_RATIO;
	size_t cap = 1 << 20;
	lzma_stream z = LZMA_STREAM_INIT;
	unsigned char *buf = NULL;
	lzma_ret rc;

	*out = NULL;
	if (max < DEBUGINFO_MINI_FLOOR)
		max = DEBUGINFO_MINI_FLOOR;
	if (lzma_stream_decoder(&z, 128 << 20, 0) != LZMA_OK)
		return error_set(e, "MiniDebugInfo: cannot start an xz decoder");
	z.next_in = in;
	z.avail_in = len;
	do {
		if (!z.avail_out) {
			size_t n = z.total_out;
			unsigned char *nb;

			if (n >= max) {
				lzma_end(&z);
				free(buf);
				return error_set(e, "MiniDebugInfo: decodes to more than %zu MiB (at most "
						 "%d times its %zu bytes, and %d MiB): refused",
						 max >> 20, DEBUGINFO_MINI_RATIO, len,
						 (int)(DEBUGINFO_MINI_MAX >> 20));
			}
			cap = n ? (n * 2 > max ? max : n * 2) : (cap > max ? max : cap);
			nb = realloc(buf, cap);
			if (!nb) {
				lzma_end(&z);
				free(buf);
				return error_set(e, "MiniDebugInfo: out of memory");
			}
			buf = nb;
			z.next_out = buf + n;
			z.avail_out = cap - n;
		}
		rc = lzma_code(&z, LZMA_FINISH);
	} while (rc == LZMA_OK);
	*outlen = z.total_out;
	lzma_end(&z);
	if (rc != LZMA_STREAM_END) {
		free(buf);
		return error_set(e, "MiniDebugInfo: %s",
				 rc == LZMA_MEMLIMIT_ERROR ? "needs too much memory to decode" :
				 "not a valid xz stream");
	}
	*out = buf;
	return 0;
}

int debuginfo_mini_fd(const void *in, size_t len, struct error *e)
{
	size_t n, done = 0;
	void *elf;
	int fd;

	if (debuginfo_xz_decode(in, len, &elf, &n, e) < 0)
		return -1;
	fd = memfd_create("strobe-minidebuginfo", MFD_CLOEXEC);
	if (fd < 0) {
		free(elf);
		return error_set(e, "MiniDebugInfo: memfd_create: %s", strerror(errno));
	}
	while (done < n) {
		ssize_t w = write(fd, (char *)elf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			error_set(e, "MiniDebugInfo: write: %s", w < 0 ? strerror(errno) : "short");
			free(elf);
			close(fd);
			return -1;
		}
		done += w;
	}
	free(elf);
	return fd;
}
