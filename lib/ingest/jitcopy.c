/*
 * jitcopy.c - JIT code in ingest (ingest.h): the perf map
 * (/tmp/perf-PID.map, jitmap.h) of a process that had anonymous
 * executable memory and the jitdump (jitdump.h) a process mapped, copied
 * into jit_maps and jit_symbols at its exit, or at the session's end for
 * those still running (schema 10, 12).  The files are the process's
 * word: opened in its own view where it can be, checked as jitmap.h and
 * jitdump.h say, parsed in the ingest worker (uparse.h).
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "ingest_int.h"
#include "jitdump.h"
#include "jitmap.h"
#include "uparse.h"

/* Where a process's perf map is: the convention every JIT follows. */
#define JIT_MAP_PATH "/tmp/perf-%u.map"

/*
 * Process pid's pid in its own pid namespace (the last NStgid of
 * /proc/PID/status; 0 if unknown) and, when it lives in another mount
 * namespace than strobed, an O_PATH handle of its /tmp as it sees it
 * (resolved in its root, never out of it; -1 otherwise): where its perf
 * map is, read at its exit, when /proc/PID is gone.  The handle is of the
 * directory itself, so it still leads to the container's /tmp (a tmpfs of
 * its own, say) after the container's mount namespace is torn down.
 */
static int proc_own_tmp(uint32_t pid, uint32_t *nspid)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char path[64], buf[4096], *l, *save;
	struct stat a, b;
	ssize_t n;
	int fd, root;

	*nspid = 0;
	snprintf(path, sizeof(path), "/proc/%u/ns/mnt", pid);
	if (stat(path, &a) < 0 || stat("/proc/self/ns/mnt", &b) < 0 ||
	    (a.st_dev == b.st_dev && a.st_ino == b.st_ino))
		return -1;
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	l = strstr(buf, "\nNStgid:");
	if (l) {
		char *end = strchr(l + 1, '\n'), *last = NULL;

		if (end)
			*end = 0;
		for (char *t = strtok_r(l + 9, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
			last = t;
		if (last)
			*nspid = (uint32_t)strtoul(last, NULL, 10);
	}
	snprintf(path, sizeof(path), "/proc/%u/root", pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -1;
	fd = (int)syscall(SYS_openat2, root, "/tmp", &how, sizeof(how));
	close(root);
	return fd;
}

/* Give back p's handle of its /tmp (maps.h jit_root), if it holds one:
 * closed and no longer counted against INGEST_JIT_ROOTS_MAX. */
void jit_root_drop(struct ingest *in, struct proc *p)
{
	if (!p->jit_root)
		return;
	close(p->jit_root - 1);
	p->jit_root = 0;
	in->jit_roots--;
}

void jit_forked(struct ingest *in, struct proc *p)
{
	int tmp;

	if (in->jit_roots >= INGEST_JIT_ROOTS_MAX)
		return;
	/* its parent's JIT code: its own perf map, in its own /tmp */
	tmp = proc_own_tmp(p->pid, &p->jit_nspid);
	if (tmp >= 0) {
		p->jit_root = tmp + 1;
		in->jit_roots++;
	}
}

/* The user of m's process: the backend's look (m->owner_known), else the
 * owner of its /proc/PID now.  0: unknown. */
static int mmap_owner(const struct sink_mmap *m, uid_t *uid)
{
	char proc_dir[32];
	struct stat st;

	if (m->owner_known) {
		*uid = m->owner_uid;
		return 1;
	}
	snprintf(proc_dir, sizeof(proc_dir), "/proc/%u", m->pid);
	if (stat(proc_dir, &st) < 0)
		return 0;
	*uid = st.st_uid;
	return 1;
}

void jit_mmap_dump(struct ingest *in, const struct sink_mmap *m)
{
	struct proc *p = proc_get(in->procs, m->pid, 1);
	uid_t uid;

	free(p->jitdump);
	p->jitdump = xstrdup(m->filename);
	p->jitdump_uid_known = mmap_owner(m, &uid);
	p->jitdump_uid = p->jitdump_uid_known ? uid : 0;
	p->jitdump_dev_known = !m->build_id;
	p->jitdump_maj = m->maj;
	p->jitdump_min = m->min;
	p->jitdump_ino = m->ino;
}

void jit_mmap_anon(struct ingest *in, struct proc *p, const struct sink_mmap *m)
{
	uid_t uid;

	/* its perf map is read at its exit, if owned by its user, who owns
	 * /proc/PID while it runs (root when it is not dumpable: then only
	 * root's file is taken) */
	p->jit = 1;
	if (mmap_owner(m, &uid)) {
		p->jit_uid_known = 1;
		p->jit_uid = uid;
	}
	/* a container's: its map is in its own /tmp, by its own pid; the
	 * handle is kept (bounded) until its exit */
	if (in->jit_roots < INGEST_JIT_ROOTS_MAX) {
		int root = proc_own_tmp(m->pid, &p->jit_nspid);

		if (root >= 0) {
			p->jit_root = root + 1;
			in->jit_roots++;
		}
	} else {
		in->stats.jit_roots_over++;
	}
}

/* jitmap_parse() / jitdump_parse() in the worker (uparse_jit()): -2 when
 * the worker failed (m empty, e says why), else as jitdump_parse(). */
static int jit_parse_in_worker(struct ingest *in, enum uparse_kind kind, const void *buf,
			       size_t len, uint32_t pid, uint64_t not_before, struct jitmap *m,
			       struct jitdump_info *info, struct error *e)
{
	struct uworker *w = ingest_worker(in);
	int rc;

	if (!w) {
		memset(m, 0, sizeof(*m));
		parse_done(in, 1);
		error_set(e, "the ingest worker could not start");
		return -2;
	}
	rc = uparse_jit(w, kind, buf, len, pid, not_before, m, info, e);
	parse_done(in, rc == -2);
	return rc;
}

/* A process started in the session (its fork seen) wrote its map since
 * it started: the time its map may not be older than (wall clock ns; the
 * file system's clock is coarser: 1 s slack); 0: any. */
static int64_t jit_not_before(const struct ingest *in, const struct proc *p)
{
	int64_t not_before = p->start_ns > (uint64_t)in->s->start_ns ?
			     (int64_t)p->start_ns + in->s->wall_offset_ns - 1000000000 : 0;

	return not_before > 0 ? not_before : 0;
}

/* Store what came of p's perf map at path: its bytes (buf, len, when rc
 * > 0; freed here) parsed in the worker into jit_symbols, or problem;
 * the jit_maps row says which. */
static int jit_map_store(struct ingest *in, struct proc *p, const char *path, int rc,
			 char *buf, size_t len, const char *problem, struct error *e)
{
	struct jitmap m = { 0 };
	struct error je;
	char pmsg[sizeof(je.msg) + 160];

	if (rc > 0) {
		in->stats.bytes_read += len;
		if (jit_parse_in_worker(in, UPARSE_JITMAP, buf, len, p->pid, 0, &m, NULL,
					&je) < 0) {
			snprintf(pmsg, sizeof(pmsg), "%s: not parsed: %s", path, je.msg);
			problem = pmsg;
		}
		free(buf);
	}
	rc = db_jit_map_put(in->db, in->s->id, p->pid, p->start_ns, path, m.nr, m.dropped,
			    problem, e);
	if (!rc && m.nr)
		rc = db_jit_symbols_put(in->db, in->s->id, p->pid, p->start_ns, &m, e);
	jitmap_free(&m);
	return rc;
}

/* The perf map name ("perf-N.map", N its own pid) in tmp, p's /tmp
 * (proc_own_tmp(), closed here): beneath it, no symlink, no magic link;
 * then checked and read as jitmap_read() does.  path is how jit_maps
 * names it. */
static int jit_copy_in(struct ingest *in, struct proc *p, int root, const char *name,
		       const char *path, struct error *e)
{
	const char *problem = NULL;
	struct error je;
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd, rc;

	fd = open_regular_untrusted(root, name, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS |
				    RESOLVE_NO_SYMLINKS, OPEN_UNTRUSTED_NO_FUSE, &st);
	if (fd < 0 && errno == ENOENT) {
		close(root);
		return 0;
	}
	if (fd < 0) {
		snprintf(je.msg, sizeof(je.msg), "%s: %s", path, errno == ELOOP ?
			 "a symbolic link, refused" : errno == EFTYPE_NOT_REGULAR ?
			 "not a regular file, refused" : errno == EFTYPE_FUSE ?
			 EFTYPE_FUSE_TEXT : strerror(errno));
		problem = je.msg;
		rc = -1;
	} else if (!p->jit_uid_known) {
		close(fd);
		problem = "not read: the process's user is unknown (it exited before "
			  "its executable memory was seen)";
		rc = -1;
	} else if (in->stats.bytes_read >= in->limits.bytes_read) {
		close(fd);
		problem = "not read: the session has read its limit of bytes";
		rc = -1;
	} else {
		rc = jitmap_read_fd(fd, path, p->jit_uid, jit_not_before(in, p), &buf, &len, &je);
		if (rc < 0)
			problem = je.msg;
	}
	close(root);
	return jit_map_store(in, p, path, rc, buf, len, problem, e);
}

/*
 * Copy the perf map of p, a process that had anonymous executable memory,
 * into the session (schema 10; jitmap.h says what is refused and why).
 * The file is read in strobed's own /tmp, or for a process of another
 * mount namespace, in its own (jit_copy_in(), through the handle of its
 * /tmp taken by proc_own_tmp() while it ran).
 */
static int jit_copy(struct ingest *in, struct proc *p, struct error *e)
{
	char path[96], *buf = NULL;
	const char *problem = NULL;
	struct error je;
	size_t len = 0;
	int rc;

	if (!p->jit)
		return 0;
	p->jit = 0;	/* once */
	if (p->jit_root) {
		/* in its own mount namespace, named by its own pid */
		char name[64];
		int tmp = p->jit_root - 1;

		p->jit_root = 0;
		in->jit_roots--;
		snprintf(name, sizeof(name), "perf-%u.map", p->jit_nspid ? p->jit_nspid : p->pid);
		snprintf(path, sizeof(path), "/proc/%u/root/tmp/%s", p->pid, name);
		return jit_copy_in(in, p, tmp, name, path, e);
	}
	snprintf(path, sizeof(path), JIT_MAP_PATH, p->pid);
	if (!p->jit_uid_known) {
		/* its owner cannot be checked: read nothing */
		struct stat st;

		if (lstat(path, &st) < 0)
			return 0;
		problem = "not read: the process's user is unknown (it exited before "
			  "its executable memory was seen)";
		rc = -1;
	} else if (in->stats.bytes_read >= in->limits.bytes_read) {
		problem = "not read: the session has read its limit of bytes";
		rc = -1;
	} else {
		rc = jitmap_read(path, p->jit_uid, jit_not_before(in, p), &buf, &len, &je);
		if (!rc)
			return 0;
		if (rc < 0)
			problem = je.msg;
	}
	return jit_map_store(in, p, path, rc, buf, len, problem, e);
}

/*
 * Copy the jitdump p mapped (jitdump.h) into the session, as jit_copy()
 * does a perf map, and forget its path.  The path is the process's word:
 * it is opened in the process's own view while it lives (open_in_root(),
 * its mount namespace), else in strobed's without following any symlink
 * (RESOLVE_NO_SYMLINKS: a directory of the path may be the process's
 * user's, pointing anywhere); the last component is never followed, a FIFO
 * never blocks.  Then jitdump_read_fd() checks the owner (the process's
 * user, not root: see jitdump.h), the type and the size, and when the
 * MMAP2 record had the file's device and inode, the file opened must be
 * that one.  Records
 * stamped before the process started (an earlier process of the same pid)
 * are dropped.  A jit_maps row says what came of it, missing file included.
 */
static int jitdump_copy(struct ingest *in, struct proc *p, struct error *e)
{
	char *path = p->jitdump, problem[PATH_MAX + 1024];
	unsigned char *buf = NULL;
	struct jitmap m = { 0 };
	struct jitdump_info info;
	struct error je;
	struct stat st;
	size_t len = 0;
	int fd = -1, rc;

	p->jitdump = NULL;	/* once */
	problem[0] = 0;
	if (!p->jitdump_uid_known) {
		snprintf(problem, sizeof(problem), "%s: not read: the process's user is "
			 "unknown (it exited before its mapping was seen)", path);
	} else if (in->stats.bytes_read >= in->limits.bytes_read) {
		snprintf(problem, sizeof(problem), "%s: not read: the session has read its "
			 "limit of bytes", path);
	} else {
		fd = open_in_root(p->pid, path);
		if (fd < 0 && errno != ELOOP)
			fd = open_regular_untrusted(AT_FDCWD, path, RESOLVE_NO_SYMLINKS |
						    RESOLVE_NO_MAGICLINKS, OPEN_UNTRUSTED_NO_FUSE,
						    &st);
		if (fd < 0)
			snprintf(problem, sizeof(problem), "%s: %s", path,
				 errno == ENOENT ? "gone (deleted before the process's exit was "
				 "seen): keep the file until the session stops" :
				 errno == ELOOP ? "a symbolic link on the way, refused" :
				 errno == EFTYPE_NOT_REGULAR ? "not a regular file, refused" :
				 errno == EFTYPE_FUSE ? EFTYPE_FUSE_TEXT : strerror(errno));
	}
	if (fd >= 0 && p->jitdump_dev_known &&
	    (fstat(fd, &st) < 0 || major(st.st_dev) != p->jitdump_maj ||
	     minor(st.st_dev) != p->jitdump_min || (uint64_t)st.st_ino != p->jitdump_ino))
		snprintf(problem, sizeof(problem), "%s: no longer the file the process mapped "
			 "(device or inode differ), refused", path);
	else if (fd >= 0 && jitdump_read_fd(fd, path, p->jitdump_uid, &buf, &len, &je) < 0)
		snprintf(problem, sizeof(problem), "%s", je.msg);
	if (fd >= 0)
		close(fd);
	if (buf) {
		/* a process started in the session (its fork seen) wrote its
		 * dump since: records stamped before its start are not its */
		uint64_t not_before = p->start_ns > (uint64_t)in->s->start_ns ? p->start_ns : 0;

		in->stats.bytes_read += len;
		rc = jit_parse_in_worker(in, UPARSE_JITDUMP, buf, len, p->pid, not_before, &m,
					 &info, &je);
		if (rc == -2)
			snprintf(problem, sizeof(problem), "%s: not parsed: %s", path, je.msg);
		else if (rc < 0)
			snprintf(problem, sizeof(problem), "%s: %s, refused", path, je.msg);
		free(buf);
	}
	rc = db_jit_map_put(in->db, in->s->id, p->pid, p->start_ns, path, m.nr, m.dropped,
			    problem[0] ? problem : NULL, e);
	if (!rc && m.nr)
		rc = db_jit_symbols_put(in->db, in->s->id, p->pid, p->start_ns, &m, e);
	jitmap_free(&m);
	free(path);
	return rc;
}

int jit_copy_proc(struct ingest *in, struct proc *p, struct error *e)
{
	int rc = 0;

	if (p->jit)
		rc = jit_copy(in, p, e);
	if (!rc && p->jitdump)
		rc = jitdump_copy(in, p, e);
	return rc;
}

struct jit_all {
	struct ingest *in;
	struct error *e;
	int rc;
};

static void jit_copy_each(struct proc *p, void *arg)
{
	struct jit_all *a = arg;

	if (!a->rc)
		a->rc = jit_copy_proc(a->in, p, a->e);
}

int jit_copy_all(struct ingest *in, struct error *e)
{
	struct jit_all a = { in, e, 0 };

	proc_table_each(in->procs, jit_copy_each, &a);
	return a.rc < 0 ? -1 : 0;
}
