/*
 * jitdump.c - jitdump files of JIT compilers (see jitdump.h).
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "jitdump.h"
#include "otable.h"

/* Byte offsets of the fixed parts of the records the parser reads. */
#define LOAD_FIXED 56		/* header, pid, tid, vma, code_addr, code_size, code_index */
#define MOVE_FIXED 64		/* header, pid, tid, vma, old, new, code_size, code_index */

struct reader {
	const unsigned char *buf;
	int swap;
};

static uint32_t get32(const struct reader *r, size_t off)
{
	uint32_t v;

	memcpy(&v, r->buf + off, sizeof(v));
	return r->swap ? __builtin_bswap32(v) : v;
}

static uint64_t get64(const struct reader *r, size_t off)
{
	uint64_t v;

	memcpy(&v, r->buf + off, sizeof(v));
	return r->swap ? __builtin_bswap64(v) : v;
}

/* code_index -> index + 1 of the latest kept load of it (for moves), in
 * an otable keyed by the code_index. */
struct code_load {
	uint64_t code_index;
	size_t sym;		/* index + 1 into the map's symbols */
};

static void index_put(struct otable *t, uint64_t code_index, size_t sym)
{
	int added;
	struct code_load *l = otable_get(t, &code_index, &added);

	l->sym = sym;
}

static size_t index_get(const struct otable *t, uint64_t code_index)
{
	const struct code_load *l = otable_find(t, &code_index);

	return l ? l->sym : 0;
}

static char *clean_name(const unsigned char *s, size_t n)
{
	char *name = xmalloc(n + 1);

	for (size_t i = 0; i < n; i++)
		name[i] = s[i] < 0x20 || s[i] == 0x7f ? '?' : (char)s[i];
	name[n] = 0;
	return name;
}

static int range_ok(uint64_t start, uint64_t size)
{
	return size && size <= JITMAP_SIZE_MAX && start <= UINT64_MAX - size;
}

static void sym_add(struct jitmap *m, size_t *cap, uint64_t start, uint64_t size,
		    uint64_t load_ns, char *name)
{
	ARRAY_GROW(m->syms, *cap, m->nr + 1);
	m->syms[m->nr].start = start;
	m->syms[m->nr].size = size;
	m->syms[m->nr].load_ns = load_ns;
	m->syms[m->nr].name = name;
	m->nr++;
}

int jitdump_parse(const unsigned char *buf, size_t len, uint32_t pid, uint64_t not_before_ns,
		  struct jitmap *m, struct jitdump_info *info, struct error *e)
{
	struct reader r = { buf, 0 };
	struct otable idx;
	uint32_t magic, hsize;
	size_t off, cap = 0;
	int timed;

	memset(m, 0, sizeof(*m));
	memset(info, 0, sizeof(*info));
	otable_init(&idx, sizeof(struct code_load), sizeof(uint64_t), 64);
	if (len < JITDUMP_HEADER_SIZE)
		return error_set(e, "%zu bytes, shorter than a jitdump header", len);
	memcpy(&magic, buf, sizeof(magic));
	if (magic == __builtin_bswap32(JITDUMP_MAGIC))
		r.swap = 1;
	else if (magic != JITDUMP_MAGIC)
		return error_set(e, "not a jitdump (magic 0x%08x)", (unsigned)magic);
	info->swapped = r.swap;
	info->version = get32(&r, 4);
	hsize = get32(&r, 8);
	info->elf_mach = get32(&r, 12);
	info->pid = get32(&r, 20);
	info->timestamp = get64(&r, 24);
	info->flags = get64(&r, 32);
	if (hsize < JITDUMP_HEADER_SIZE || hsize > len)
		return error_set(e, "a jitdump header of %u bytes in a file of %zu",
				 (unsigned)hsize, len);
	if (pid && info->pid != pid)
		return error_set(e, "the jitdump of pid %u, not of this process (%u)",
				 (unsigned)info->pid, (unsigned)pid);
	timed = not_before_ns && !(info->flags & JITDUMP_FLAG_ARCH_TIMESTAMP);

	for (off = hsize; len - off >= JITDUMP_RECORD_HEADER;) {
		uint32_t id = get32(&r, off), size = get32(&r, off + 4);
		uint64_t ts = get64(&r, off + 8);
		const unsigned char *rec = buf + off;

		if (size < JITDUMP_RECORD_HEADER || size > len - off) {
			m->dropped++;	/* truncated or garbage: the rest is lost */
			break;
		}
		info->records++;
		off += size;
		if (id != JITDUMP_CODE_LOAD && id != JITDUMP_CODE_MOVE)
			continue;	/* debug info, close, unwinding, unknown */
		if (timed && ts < not_before_ns) {
			info->early++;
			m->dropped++;
			continue;
		}
		if (m->nr >= JITMAP_SYMS_MAX) {
			m->dropped++;
			continue;
		}
		if (id == JITDUMP_CODE_LOAD) {
			const unsigned char *name, *nul;
			uint64_t addr, csize, cindex;
			size_t n;

			if (size < LOAD_FIXED + 1) {
				m->dropped++;
				continue;
			}
			addr = get64(&r, rec - buf + 32);	/* code_addr */
			csize = get64(&r, rec - buf + 40);
			cindex = get64(&r, rec - buf + 48);
			name = rec + LOAD_FIXED;
			nul = memchr(name, 0, size - LOAD_FIXED);
			n = nul ? (size_t)(nul - name) : 0;
			if (!nul || !n ||
			    n > JITMAP_NAME_MAX || !range_ok(addr, csize)) {
				m->dropped++;
				continue;
			}
			sym_add(m, &cap, addr, csize, ts, clean_name(name, n));
			index_put(&idx, cindex, m->nr);
		} else {
			uint64_t to, csize, cindex;
			size_t from;

			if (size < MOVE_FIXED) {
				m->dropped++;
				continue;
			}
			to = get64(&r, rec - buf + 40);		/* new_code_addr */
			csize = get64(&r, rec - buf + 48);
			cindex = get64(&r, rec - buf + 56);
			from = index_get(&idx, cindex);
			if (!from ||
			    !range_ok(to, csize)) {
				m->dropped++;	/* no load of that code_index */
				continue;
			}
			sym_add(m, &cap, to, csize, ts, xstrdup(m->syms[from - 1].name));
			index_put(&idx, cindex, m->nr);
		}
	}
	if (off < len && len - off < JITDUMP_RECORD_HEADER)
		m->dropped++;	/* a partial record header at the end */
	otable_free(&idx);
	return 0;
}

int jitdump_read_fd(int fd, const char *path, uid_t uid, unsigned char **buf, size_t *len,
		    struct error *e)
{
	struct stat st;
	size_t done = 0;
	unsigned char *b;

	*buf = NULL;
	*len = 0;
	if (fstat(fd, &st) < 0)
		return error_set(e, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return error_set(e, "%s: not a regular file, refused", path);
	if (st.st_uid != uid)
		return error_set(e, "%s: owned by uid %u, not by the process's uid %u, refused",
				 path, (unsigned)st.st_uid, (unsigned)uid);
	if (st.st_size < 0 || (uint64_t)st.st_size > JITDUMP_FILE_MAX)
		return error_set(e, "%s: larger than %u MiB, refused", path,
				 JITDUMP_FILE_MAX >> 20);
	/* the file may grow meanwhile: read what fstat said, no more */
	b = xmalloc((size_t)st.st_size + 1);
	while (done < (size_t)st.st_size) {
		ssize_t n = pread(fd, b + done, (size_t)st.st_size - done, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(b);
			return error_set(e, "%s: %s", path, strerror(errno));
		}
		if (!n)
			break;
		done += n;
	}
	*buf = b;
	*len = done;
	return 0;
}

int jitdump_name_matches(const char *path, uint32_t pid)
{
	const char *base = strrchr(path, '/');
	char want[32];

	base = base ? base + 1 : path;
	snprintf(want, sizeof(want), "jit-%u.dump", (unsigned)pid);
	return !strcmp(base, want);
}
