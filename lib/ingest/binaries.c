/*
 * binaries.c - binary identification for ingest (ingest.h's ingest_mmap):
 * an executable mapping's file opened as exactly the mapped object,
 * keyed (its build-id checked against its bytes, or its contents),
 * copied into the binary cache once and named by binaries.id; the
 * special mappings ([vdso] as strobed's own image, [anon], ...); the JIT
 * files a mapping announces are jitcopy.c's.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "hashkey.h"
#include "ingest_int.h"
#include "jitdump.h"
#include "public.h"
#include "readbudget.h"
#include "shares.h"
#include "uparse.h"

int64_t binary_special(struct ingest *in, const char *key, struct error *e)
{
	int64_t *slot = name_slot(&in->binaries, key, 1);

	if (!*slot) {
		*slot = db_binary_intern(in->db, key, key, 0, 0, NULL, e);
		if (*slot < 0) {
			*slot = 0;
			return -1;
		}
		in->binary_max = MAX(in->binary_max, *slot);
	}
	return *slot;
}

/* hashkey_file_by()'s reader: the build-id read in the worker; -2 when it
 * could not (the file then keyed by its contents). */
static int build_id_in_worker(void *ctx, int fd, uint8_t *id, size_t cap, struct error *e)
{
	struct ingest *in = ctx;
	struct uworker *w = ingest_worker(in);
	int n;

	if (!w) {
		parse_done(in, 1);
		in->parse_lost = 1;
		return -2;
	}
	n = uparse_build_id(w, fd, id, cap, e);
	parse_done(in, n == -2);
	in->parse_lost |= n == -2;
	return n;
}

/*
 * The file at path as process pid sees it: path resolved under its root
 * directory (/proc/PID/root, its mount namespace and chroot), symlinks
 * included, never escaping that root (openat2 RESOLVE_IN_ROOT: an absolute
 * link target or ".." stays inside) and never through a magic link; the
 * last component is not followed.  -1 with errno when it cannot: the
 * process is gone, or the kernel predates openat2 (Linux 5.6).
 */
int open_in_root(uint32_t pid, const char *path)
{
	char root[64];
	struct stat st;
	int dfd, fd, err;

	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	fd = open_regular_untrusted(dfd, path, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
				    OPEN_UNTRUSTED_NO_FUSE, &st);
	err = errno;
	close(dfd);
	errno = err;
	return fd;
}

/* fd is the mapped object of m (else -1, fd closed, problem says why): a
 * regular file of at most HASHKEY_FILE_MAX bytes and, opened by path, the
 * device and inode of the record when it has them. */
static int mapped_check(int fd, const struct sink_mmap *m, int by_path, struct stat *st,
			char *problem, size_t size)
{
	if (fstat(fd, st) < 0) {
		snprintf(problem, size, "cannot stat %s: %s", m->filename, strerror(errno));
	} else if (!S_ISREG(st->st_mode)) {
		snprintf(problem, size, "%s is not a regular file", m->filename);
	} else if (st->st_size > HASHKEY_FILE_MAX) {
		snprintf(problem, size, "%s is larger than " HASHKEY_FILE_MAX_TEXT,
			 m->filename);
	} else if (by_path && !m->build_id_len &&
		   (major(st->st_dev) != m->maj || minor(st->st_dev) != m->min ||
		    (uint64_t)st->st_ino != m->ino)) {
		snprintf(problem, size, "%s is no longer the mapped file (device "
			 "or inode differ)", m->filename);
	} else {
		/* With a build-id instead of dev/ino, binary_hash() accepts
		 * the file only if it has that build-id. */
		problem[0] = 0;
		return fd;
	}
	close(fd);
	return -1;
}

/*
 * Open exactly the mapped object, by handle, first of:
 *  0. the handle the capture backend held since it drained the record
 *     (m->held: binhold.h), opened then through 1, while the process
 *     surely ran: ingest, seconds behind under load, may find 1 gone
 *     with the process, and a deleted binary with it;
 *  1. /proc/PID/map_files/START-END: the mapping itself, whatever became
 *     of its path (renamed, deleted, replaced);
 *  2. the path in the process's own view (open_in_root()): a process in a
 *     container maps files of its mount namespace, which the same path in
 *     strobed's may not name;
 *  3. the path in strobed's namespace (the process has exited).
 * By path (2, 3), the path is the mapping process's word only: by now it
 * may be a symlink to /etc/shadow, a FIFO, a device, another file; its pid
 * may even be another process's.  So the last component is not followed,
 * and a handle is kept only if mapped_check() finds the very file the
 * kernel reported mapped (device and inode; with a build-id instead,
 * binary_hash() checks that).  -1 if none is: problem says why (the
 * last reason).
 */
static int open_mapped(const struct sink_mmap *m, struct stat *st,
		       char *problem, size_t size)
{
	char path[128];
	int fd;

	if (m->held && (fd = fcntl(m->held_fd, F_DUPFD_CLOEXEC, 0)) >= 0)
		return mapped_check(fd, m, 0, st, problem, size);
	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64,
		 m->pid, m->start, m->start + m->len);
	/* the mapping itself (a magic link: followed), never opened unless
	 * it is a regular file: a device mapped executable is not */
	fd = open_regular_untrusted(AT_FDCWD, path, 0, OPEN_UNTRUSTED_FOLLOW |
				    OPEN_UNTRUSTED_NO_FUSE, st);
	if (fd >= 0)
		return mapped_check(fd, m, 0, st, problem, size);
	if (errno == EFTYPE_NOT_REGULAR) {
		snprintf(problem, size, "%s is not a regular file", m->filename);
		return -1;
	}
	if (errno == EFTYPE_FUSE) {	/* and so is its path */
		snprintf(problem, size, "%s is " EFTYPE_FUSE_TEXT, m->filename);
		return -1;
	}
	fd = open_in_root(m->pid, m->filename);
	if (fd >= 0 && (fd = mapped_check(fd, m, 1, st, problem, size)) >= 0)
		return fd;
	/* strobed's view: no symlink anywhere on the path (the kernel names
	 * a mapping by its resolved path), the end opened only if regular */
	fd = open_regular_untrusted(AT_FDCWD, m->filename, RESOLVE_NO_SYMLINKS |
				    RESOLVE_NO_MAGICLINKS, OPEN_UNTRUSTED_NO_FUSE, st);
	if (fd < 0) {
		snprintf(problem, size, "cannot open %s: %s%s", m->filename,
			 errno == EFTYPE_NOT_REGULAR ? "not a regular file" :
			 errno == EFTYPE_FUSE ? EFTYPE_FUSE_TEXT : strerror(errno),
			 m->held_over ? " (and strobed held no handle of it from the "
			 "drain: its limit of files held was reached)" : "");
		return -1;
	}
	return mapped_check(fd, m, 1, st, problem, size);
}

/* The cache entry for the file at fd (content hash hex, key as found in
 * the file): the key itself, unless the cache already holds different
 * bytes under it.  Build-ids are chosen by whoever builds the file, so an
 * ELF file crafted with libc's build-id, mapped before libc is cached,
 * would otherwise have libc's samples named from it.  Such a file is keyed
 * by its contents instead, and note says so; if even that entry holds other
 * bytes the binary cannot be cached (-1, problem set). */
static int cache_key_verify(struct ingest *in, int fd, char key[HASHKEY_MAX],
			    char *note, size_t note_size, char *problem, size_t psize)
{
	char hex[33], other[HASHKEY_MAX];
	struct error fe;
	int same;

	same = bincache_same(in->cache, key, fd, &fe);
	if (same < 0) {
		snprintf(problem, psize, "%s", fe.msg);
		return -1;
	}
	if (same)
		return 0;
	if (hashkey_content(in->memo, fd, hex, &fe) < 0) {
		snprintf(problem, psize, "%s", fe.msg);
		return -1;
	}
	snprintf(other, sizeof(other), "xxh3:%s", hex);
	if (!strcmp(other, key) || bincache_same(in->cache, other, fd, &fe) != 1) {
		snprintf(problem, psize, "the binary cache holds different contents under "
			 "%s and %s: not cached", key, other);
		return -1;
	}
	snprintf(note, note_size, "its build-id %s is also that of a different binary in "
		 "the cache: named from its own contents (%s)", key, other);
	in->stats.collisions++;
	snprintf(key, HASHKEY_MAX, "%s", other);
	return 0;
}

/* What identifying the file of a mapping found (binary_of_file). */
struct binary_found {
	char key[HASHKEY_MAX];		/* its cache key; first the one of the
					 * record's build-id, or "" */
	char problem[sizeof(((struct error *)0)->msg)];	/* "": none */
	char note[512];			/* "": none */
	int64_t size;
	int cached;
};

/*
 * The memo key of m's binary (what the session remembers it by) into
 * memo, and the key of its build-id into f->key ("" without one).  A
 * record with a build-id has no device and inode, and a path and a
 * build-id name no file: another mount namespace may put a file of the
 * same build-id, other bytes, at the same path (a bind mount of a doctored
 * libc).  So the file is opened (returned, st its stat; -1 with
 * f->problem when it cannot) and remembered by what it is (device, inode,
 * size, times): only the same file skips binary_read() and its checks
 * (bytes compared with the cache's under its build-id).
 */
static int binary_memo(const struct sink_mmap *m, char *memo, size_t size,
		       struct binary_found *f, struct stat *st)
{
	int pre;

	if (!m->build_id_len) {
		snprintf(memo, size, "ino:%u:%u:%" PRIu64 ":%" PRIu64 ":%s", m->maj, m->min,
			 m->ino, m->ino_generation, m->filename);
		f->key[0] = 0;
		return -1;
	}
	hashkey_format(f->key, "buildid", m->build_id, m->build_id_len);
	pre = open_mapped(m, st, f->problem, sizeof(f->problem));
	if (pre >= 0)
		snprintf(memo, size, "file:%ju:%ju:%jd:%jd.%09ld:%jd.%09ld:%s",
			 (uintmax_t)st->st_dev, (uintmax_t)st->st_ino, (intmax_t)st->st_size,
			 (intmax_t)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
			 (intmax_t)st->st_ctim.tv_sec, st->st_ctim.tv_nsec, f->key);
	else
		snprintf(memo, size, "unopened:%s:%s", f->key, m->filename);
	return pre;
}

/* The file fkey names (hashed from its bytes, fd) is the one to name the
 * binary by (f->key): copied into the cache unless its key holds other
 * bytes (cache_key_verify), and the outcome remembered for the file. */
static void binary_cache(struct ingest *in, const struct sink_mmap *m, int fd,
			 const struct stat *st, const char *fkey, struct binary_found *f)
{
	struct error fe;

	snprintf(f->key, sizeof(f->key), "%s", fkey);
	if (cache_key_verify(in, fd, f->key, f->note, sizeof(f->note), f->problem,
			     sizeof(f->problem)) < 0)
		;
	else if (bincache_store_fd(in->cache, f->key, fd,
				   file_public(m->filename, fd, st) ?
				   BINCACHE_SHARED : BINCACHE_PRIVATE, &fe) < 0)
		snprintf(f->problem, sizeof(f->problem), "%s", fe.msg);
	else
		f->cached = 1;
	if (!f->problem[0] && !in->parse_lost)	/* else read again */
		readbudget_done(in->budget, st, fkey, f->key, f->cached);
}

/* Key the file open at fd (m's, st its stat) by its bytes and cache it;
 * fd is closed.  1: it is not the file m's build-id names but m's handle
 * was held since the drain (another file: the address remapped, the pid
 * reused before it was opened): to be tried the other ways, as if none
 * was held; else 0, f says what came of it. */
static int binary_hash(struct ingest *in, const struct sink_mmap *m, int fd,
		       const struct stat *st, struct binary_found *f)
{
	char fkey[HASHKEY_MAX];
	struct error fe;
	int hk;

	f->size = st->st_size;
	in->stats.bytes_read += st->st_size;
	in->parse_lost = 0;
	hk = hashkey_file_by(in->memo, fd, fkey, build_id_in_worker, in, &fe);
	if (!hk && in->parse_lost && f->key[0] && strcmp(f->key, fkey)) {
		/* the kernel's build-id could not be checked against the
		 * file's (the ingest worker failed): keyed by its contents */
		snprintf(f->note, sizeof(f->note), "its build-id was not read (the ingest "
			 "worker failed): named from its contents (%s)", fkey);
		snprintf(f->key, sizeof(f->key), "%s", fkey);
	}
	if (hk < 0) {
		snprintf(f->problem, sizeof(f->problem), "%s", fe.msg);
	} else if (f->key[0] && strcmp(f->key, fkey) && m->held) {
		close(fd);
		return 1;
	} else if (f->key[0] && strcmp(f->key, fkey)) {
		snprintf(f->problem, sizeof(f->problem), "%s no longer matches the mapped "
			 "binary (its build-id changed)", m->filename);
	} else {
		binary_cache(in, m, fd, st, fkey, f);
	}
	close(fd);
	return 0;
}

/* The file open at fd (m's, st its stat), read once (not a path), within
 * its owner's share (readbudget.h): hashed and cached, or its outcome
 * when the session read it already.  fd is closed; 1 as binary_hash(). */
static int binary_read(struct ingest *in, const struct sink_mmap *m, int fd,
		       const struct stat *st, struct binary_found *f)
{
	const struct readbudget_seen *seen;
	int ok;

	seen = readbudget_take(in->budget, st, &ok, f->problem, sizeof(f->problem));
	if (!ok) {
		in->stats.read_refused++;
		close(fd);
		return 0;
	}
	if (!seen)
		return binary_hash(in, m, fd, st, f);
	f->size = st->st_size;
	close(fd);
	if (f->key[0] && strcmp(f->key, seen->fkey) && m->held)
		return 1;
	if (f->key[0] && strcmp(f->key, seen->fkey)) {
		snprintf(f->problem, sizeof(f->problem), "%s no longer matches the "
			 "mapped binary (its build-id changed)", m->filename);
	} else {
		snprintf(f->key, sizeof(f->key), "%s", seen->key);
		f->cached = seen->cached;
	}
	return 0;
}

/* binaries.id of the file behind an executable mapping. */
static int64_t binary_of_file(struct ingest *in, const struct sink_mmap *m,
			      struct error *e)
{
	/* the memo key holds the whole path: cut, two paths alike in their
	 * first few hundred bytes were one binary (the first's name) */
	char memo[PATH_MAX + 3 * HASHKEY_MAX];
	struct binary_found f = { .size = 0 };
	struct sink_mmap unheld;
	int64_t *slot, id;
	int fd, tried;
	struct stat st;

	if (strlen(m->filename) >= PATH_MAX)	/* no path the kernel names */
		return binary_special(in, "[path too long]", e);
	fd = binary_memo(m, memo, sizeof(memo), &f, &st);
	slot = name_slot(&in->binaries, memo, 0);
	if (slot && *slot) {
		if (fd >= 0)
			close(fd);
		return *slot;
	}
	if (in->binaries.nr >= in->limits.binaries ||
	    !shares_take(in->shares, SHARES_BINARIES,
			 proc_charge(proc_get(in->procs, m->pid, 0), m->pid))) {
		if (fd >= 0)
			close(fd);
		in->stats.binaries_over++;
		return binary_special(in, "[too many binaries]", e);
	}
	slot = name_slot(&in->binaries, memo, 1);
	/* opened by binary_memo with a build-id (fd, or f.problem) */
	for (tried = m->build_id_len != 0;; tried = 0) {
		if (!tried)
			fd = open_mapped(m, &st, f.problem, sizeof(f.problem));
		if (fd < 0 || !binary_read(in, m, fd, &st, &f))
			break;
		unheld = *m;
		unheld.held = 0;
		m = &unheld;
	}
	if (!f.key[0]) {
		/* nothing identifies the contents: key by what the kernel said */
		hashkey_xxh3_buf(memo, strlen(memo),
				 f.key + snprintf(f.key, sizeof(f.key), "missing:"));
	}
	id = db_binary_intern(in->db, f.key, m->filename, f.size, f.cached,
			      f.problem[0] ? f.problem : NULL, e);
	if (id < 0)
		return -1;
	if (f.note[0] && db_binary_note(in->db, id, f.note, e) < 0)
		return -1;
	*slot = id;
	in->binary_max = MAX(in->binary_max, id);
	in->stats.binaries++;
	return id;
}

/* Whether the cache entry for key is missing (1), holds exactly buf (1),
 * or something else (0). */
static int cache_entry_is(struct ingest *in, const char *key, const void *buf, size_t len)
{
	char tmp[4096];
	size_t done = 0;
	ssize_t n;
	int fd, same = 1;

	if (!bincache_has(in->cache, key))
		return 1;
	fd = bincache_open_entry(in->cache, key);
	if (fd < 0)
		return 0;
	while (same && (n = read(fd, tmp, sizeof(tmp))) > 0) {
		if ((size_t)n > len - done || memcmp(tmp, (const char *)buf + done, n))
			same = 0;
		done += n;
	}
	close(fd);
	return same && done == len;
}

/*
 * binaries.id of strobed's own vDSO image, copied into the cache once (see
 * vdso.h), for a [vdso] mapping of len bytes; 0 when the mapping is not of
 * that image (another ABI's) or strobed has none: then it stays "[vdso]"
 * with no symbols, never named from the wrong image.
 */
static int64_t binary_vdso(struct ingest *in, uint64_t len, struct error *e)
{
	static const char memo[] = "vdso:self";
	const ElfW(Ehdr) *eh;
	char key[HASHKEY_MAX], hex[33];
	uint8_t bid[BUILD_ID_MAX];
	int64_t *slot, id;
	struct error ve;
	int n = 0;

	if (!in->vdso_tried) {
		in->vdso_tried = 1;
		if (vdso_self(&in->vdso, &ve) < 0)
			in->vdso.size = 0;
	}
	if (!vdso_matches(&in->vdso, len))
		return 0;
	slot = name_slot(&in->binaries, memo, 1);
	if (*slot)
		return *slot;
	eh = in->vdso.image;
	for (size_t i = 0; i < eh->e_phnum && !n; i++) {
		const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff) + i;

		/* vdso_image_size() checked that it lies within the image */
		if (ph->p_type == PT_NOTE)
			n = hashkey_build_id_notes((const char *)eh + ph->p_offset,
						   ph->p_filesz, bid, sizeof(bid));
	}
	if (n > 0)
		hashkey_format(key, "buildid", bid, n);
	/* a build-id is the builder's choice: a file cached under the same
	 * one (planted by a profiled process) must not name the vDSO */
	if (n <= 0 || !cache_entry_is(in, key, in->vdso.image, in->vdso.size)) {
		hashkey_xxh3_buf(in->vdso.image, in->vdso.size, hex);
		snprintf(key, sizeof(key), "xxh3:%s", hex);
	}
	if (bincache_store_buf(in->cache, key, in->vdso.image, in->vdso.size,
			       BINCACHE_SHARED, &ve) < 0)
		id = db_binary_intern(in->db, key, "[vdso]", in->vdso.size, 0, ve.msg, e);
	else
		id = db_binary_intern(in->db, key, "[vdso]", in->vdso.size, 1, NULL, e);
	if (id < 0)
		return -1;
	*slot = id;
	in->binary_max = MAX(in->binary_max, id);
	return id;
}

static const char *const special_maps[] = {
	"[vdso]", "[vsyscall]", "[heap]", "[stack]", "[uprobes]", "[vvar]",
};

/* What ingest_mmap() makes of a mapping's name: one of special_maps,
 * "[anon]" for file-less executable memory, or NULL for a file. */
static const char *mmap_special(const char *filename)
{
	if (filename[0] == '[') {
		for (size_t i = 0; i < ARRAY_SIZE(special_maps); i++)
			if (!strcmp(filename, special_maps[i]))
				return special_maps[i];
		return "[anon]";
	}
	if (filename[0] != '/' || !strcmp(filename, "//anon") ||
	    !strncmp(filename, "/memfd:", 7) || !strncmp(filename, "/dev/zero", 9) ||
	    !strncmp(filename, "/SYSV", 5))
		return "[anon]";
	return NULL;
}

int ingest_mmap_wants_file(uint32_t pid, uint32_t prot, const char *filename)
{
	return (prot & PROT_EXEC) && !mmap_special(filename) &&
	       !jitdump_name_matches(filename, pid);
}

int ingest_mmap_wants_owner(uint32_t pid, uint32_t prot, const char *filename)
{
	const char *special;

	if (!(prot & PROT_EXEC))
		return 0;
	special = mmap_special(filename);
	if (special)
		return !strcmp(special, "[anon]");
	return jitdump_name_matches(filename, pid);
}

int ingest_mmap(struct ingest *in, const struct sink_mmap *m, struct error *e)
{
	struct proc *p;
	int64_t id;
	const char *special;

	if (samples_flush(in, e))
		return -1;
	if (!(m->prot & PROT_EXEC))
		return 0;
	if (batch_open(in, e))
		return -1;
	special = mmap_special(m->filename);
	if (!special && jitdump_name_matches(m->filename, m->pid) &&
	    strlen(m->filename) < PATH_MAX) {
		/* a JIT's jitdump (jitdump.h), mapped only to be seen here:
		 * read at its exit, never a binary of its own */
		jit_mmap_dump(in, m);
		return 0;
	}
	if (special && !strcmp(special, "[vdso]")) {
		id = binary_vdso(in, m->len, e);
		if (id < 0)
			return -1;
		if (id) {
			/* the image from offset 0 at the mapping's start (vdso.h) */
			p = proc_get(in->procs, m->pid, 1);
			proc_map_add(p, m->start, m->len, 0, id);
			return 0;
		}
	}
	id = special ? binary_special(in, special, e) : binary_of_file(in, m, e);
	if (id < 0)
		return -1;
	p = proc_get(in->procs, m->pid, 1);
	if (special && !strcmp(special, "[anon]") && !p->jit)
		jit_mmap_anon(in, p, m);	/* JIT code, perhaps */
	proc_map_add(p, m->start, m->len, special ? m->start : m->pgoff, id);
	return 0;
}
