/*
 * cgroups.c - cgroup v2 ids and paths (cgroups.h): the walk of the
 * cgroup2 mount, ids from file handles (as the kernel's cgroup id), and
 * /proc/PID/cgroup.  Then, below, the cgroups of a session in ingest
 * (ingest.h, schema 13): the cgroups stored, and the cgroup of each
 * process's samples.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "cgroups.h"
#include "ingest_int.h"
#include "shares.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* The id of the directory open at fd: its file handle (a u64 kernfs id,
 * what the kernel calls the cgroup id), else its inode number. */
static uint64_t dir_id(int fd)
{
	struct {
		struct file_handle fh;
		unsigned char bytes[16];
	} h;
	int mount_id;
	struct stat st;

	h.fh.handle_bytes = sizeof(h.bytes);
	if (!name_to_handle_at(fd, "", &h.fh, &mount_id, AT_EMPTY_PATH) &&
	    h.fh.handle_bytes == 8) {
		uint64_t id;

		memcpy(&id, h.fh.f_handle, 8);
		return id;
	}
	return fstat(fd, &st) ? 0 : (uint64_t)st.st_ino;
}

struct walk {
	size_t max, seen;
	uint64_t *over;
	cgroups_fn fn;
	void *ctx;
	char path[CGROUP_PATH_MAX];
};

/* fd: the directory of w->path (len bytes); closed here */
static int walk_dir(struct walk *w, int fd, size_t len, int depth)
{
	DIR *d;
	struct dirent *de;
	int rc;

	if (w->seen >= w->max) {
		(*w->over)++;
		close(fd);
		return 0;
	}
	w->seen++;
	rc = w->fn(w->ctx, dir_id(fd), len ? w->path : "/");
	if (rc || depth >= CGROUP_DEPTH_MAX) {
		close(fd);
		return rc;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		int sub;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (len + 1 + n >= sizeof(w->path)) {
			(*w->over)++;
			continue;
		}
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;	/* removed meanwhile */
		w->path[len] = '/';
		memcpy(w->path + len + 1, de->d_name, n + 1);
		rc = walk_dir(w, sub, len + 1 + n, depth + 1);
		w->path[len] = 0;
		if (rc)
			break;
	}
	closedir(d);
	return rc;
}

static int is_cgroup2(const char *path)
{
	struct statfs sf;

	return !statfs(path, &sf) && sf.f_type == CGROUP2_SUPER_MAGIC;
}

int cgroups_find_root(char *out, size_t len)
{
	static const char *const known[] = { CGROUP_ROOT, CGROUP_ROOT "/unified" };
	char line[1024], dev[256], dir[512], type[64];
	FILE *f;

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (is_cgroup2(known[i]) && strlen(known[i]) < len) {
			strcpy(out, known[i]);
			return 0;
		}
	f = fopen("/proc/self/mounts", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%255s %511s %63s", dev, dir, type) == 3 &&
		    !strcmp(type, "cgroup2") && !strchr(dir, '\\') && strlen(dir) < len &&
		    is_cgroup2(dir)) {
			strcpy(out, dir);
			fclose(f);
			return 0;
		}
	fclose(f);
	return -1;
}

long cgroups_scan(const char *root, size_t max, cgroups_fn fn, void *ctx, uint64_t *over,
		  struct error *e)
{
	struct walk w = { .max = max, .over = over, .fn = fn, .ctx = ctx };
	struct statfs sf;
	int fd, rc;

	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return error_set(e, "cannot open %s: %s", root, strerror(errno));
	if (fstatfs(fd, &sf) || sf.f_type != CGROUP2_SUPER_MAGIC) {
		close(fd);
		return error_set(e, "%s is not a cgroup v2 mount: cgroups are not recorded",
				 root);
	}
	w.path[0] = 0;
	rc = walk_dir(&w, fd, 0, 0);
	return rc ? rc : (long)w.seen;
}

uint64_t cgroups_id(const char *root, const char *path)
{
	char full[CGROUP_PATH_MAX + 64];
	uint64_t id;
	int fd;

	if (strlen(root) + strlen(path) >= sizeof(full))
		return 0;
	memcpy(full, root, strlen(root));
	memcpy(full + strlen(root), path, strlen(path) + 1);
	fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	id = dir_id(fd);
	close(fd);
	return id;
}

int cgroups_parse_proc(const char *buf, size_t len, char *out, size_t outlen)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		const char *le = nl ? nl : end;

		if (le - p >= 3 && !memcmp(p, "0::", 3)) {
			size_t n = le - p - 3;

			if (!n || p[3] != '/' || n >= outlen || memchr(p + 3, 0, n))
				return -1;
			memcpy(out, p + 3, n);
			out[n] = 0;
			return 0;
		}
		p = le + 1;
	}
	return -1;
}

int cgroups_of_pid(uint32_t pid, char *out, size_t outlen)
{
	char path[64], buf[CGROUP_PATH_MAX + 512];
	ssize_t n;
	size_t len = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)n;
	close(fd);
	return cgroups_parse_proc(buf, len, out, outlen);
}

/* The cgroups of a session in ingest (ingest.h). */

/* Whom a new cgroup is charged to (shares.h): its directory's owner,
 * the user it was delegated to; SHARES_UNKNOWN when it is gone. */
static uint32_t cgroup_charge(const struct ingest *in, const char *path)
{
	char full[sizeof(in->cgroup_root) + CGROUP_PATH_MAX];
	struct stat st;

	snprintf(full, sizeof(full), "%s%s", in->cgroup_root, path);
	if (!in->cgroup_root[0] || lstat(full, &st) < 0)
		return SHARES_UNKNOWN;
	return st.st_uid;
}

int ingest_cgroup(struct ingest *in, uint64_t id, const char *path, struct error *e)
{
	int64_t *slot;
	size_t n = strnlen(path, CGROUP_PATH_MAX);

	if (samples_flush(in, e))
		return -1;
	if (!in->cgroup_source || !id || n >= CGROUP_PATH_MAX || path[0] != '/')
		return 0;
	slot = name_slot(&in->cgroups, path, 0);
	if (slot && *slot == (int64_t)id)
		return 0;
	if (!slot && (in->cgroups.nr >= INGEST_CGROUPS_MAX ||
		      !shares_take(in->shares, SHARES_CGROUPS, cgroup_charge(in, path)))) {
		in->stats.cgroups_over++;
		return 0;
	}
	if (batch_open(in, e) || db_cgroup_put(in->db, in->s->id, id, path, e) < 0)
		return -1;
	if (!slot)
		in->stats.cgroups++;
	*name_slot(&in->cgroups, path, 1) = (int64_t)id;
	in->cgroup_dirty = 1;
	return 0;
}

static int cgroup_scan_one(void *ctx, uint64_t id, const char *path)
{
	void **a = ctx;

	return ingest_cgroup(a[0], id, path, a[1]) < 0 ? -2 : 0;
}

int ingest_cgroups_start(struct ingest *in, int from_samples, const char *root,
			 struct error *e)
{
	if (samples_flush(in, e))
		return -1;
	struct error se;
	void *a[2] = { in, e };
	long n = -1;

	in->cgroup_source = from_samples ? CG_SAMPLE : CG_PROC;
	if (root && !*root)
		goto stored;	/* "": no scan */
	if (root)
		snprintf(in->cgroup_root, sizeof(in->cgroup_root), "%s", root);
	else if (cgroups_find_root(in->cgroup_root, sizeof(in->cgroup_root)) < 0)
		goto none;
	n = cgroups_scan(in->cgroup_root, INGEST_CGROUPS_MAX, cgroup_scan_one, a, &in->stats.cgroups_over,
			 &se);
none:
	if (n == -1) {
		/* not a cgroup2 mount: no cgroups in this session, said so */
		in->cgroup_source = CG_NONE;
		snprintf(in->s->cgroup_source, sizeof(in->s->cgroup_source), "none");
		return 0;
	}
	if (n < 0)
		return -1;
stored:
	/* stored with the session at the next commit */
	snprintf(in->s->cgroup_source, sizeof(in->s->cgroup_source), "%s",
		 from_samples ? "sample" : "proc");
	return 0;
}

/* The id of process pid's cgroup from /proc/PID/cgroup; 0 if unknown. */
static uint64_t cgroup_of_proc(struct ingest *in, uint32_t pid, struct error *e, int *fail)
{
	char path[CGROUP_PATH_MAX];
	int64_t *slot;
	uint64_t id;

	if (cgroups_of_pid(pid, path, sizeof(path)) < 0)
		return 0;
	slot = name_slot(&in->cgroups, path, 0);
	if (slot && *slot)
		return (uint64_t)*slot;
	id = cgroups_id(in->cgroup_root, path);
	if (id && ingest_cgroup(in, id, path, e) < 0)
		*fail = 1;
	return id;
}

/* p's cgroup row, when it changed in the open batch */
int cgroup_store(struct ingest *in, struct proc *p, struct error *e)
{
	if (!p->cgroup_dirty || !p->cgroup_id)
		return 0;
	return db_process_cgroup(in->db, in->s->id, p->pid, p->start_ns, p->cgroup_id,
				 p->cgroup_moves, e);
}

struct cgroup_store_all {
	struct ingest *in;
	struct error *e;
	int rc;
};

static void cgroup_store_each(struct proc *p, void *arg)
{
	struct cgroup_store_all *a = arg;

	if (!a->rc && cgroup_store(a->in, p, a->e) < 0)
		a->rc = -1;
}

int cgroups_store_all(struct ingest *in, struct error *e)
{
	struct cgroup_store_all a = { in, e, 0 };

	proc_table_each(in->procs, cgroup_store_each, &a);
	return a.rc;
}

/*
 * A sample of p in cgroup id (0: the sample does not say): p's cgroup is
 * that of its latest sample; a change is counted in cgroup_moves.  Without
 * the sample's, /proc/PID/cgroup at the process's first sample, once.
 */
int cgroup_sample(struct ingest *in, struct proc *p, uint64_t id, struct error *e)
{
	int fail = 0;

	if (!id && in->cgroup_source == CG_PROC && !p->cgroup_tried) {
		p->cgroup_tried = 1;
		id = cgroup_of_proc(in, p->pid, e, &fail);
		if (fail)
			return -1;
		if (!id)
			in->stats.cgroup_unknown++;
	}
	if (!id || id == p->cgroup_id)
		return 0;
	if (p->cgroup_id) {
		if (!p->cgroup_moves)
			in->stats.cgroup_moved++;
		p->cgroup_moves++;
	}
	/* stored at the commit (or its exit): once per batch however often
	 * its threads flip between cgroups */
	p->cgroup_id = id;
	p->cgroup_dirty = 1;
	in->cgroup_dirty = 1;
	return 0;
}

static void proc_cgroup_clean(struct proc *p, void *arg)
{
	(void)arg;
	p->cgroup_dirty = 0;
}

/* its cgroup row was not stored: the next sample stores it again */
static void proc_cgroup_undo(struct proc *p, void *arg)
{
	(void)arg;
	if (p->cgroup_dirty)
		p->cgroup_id = 0, p->cgroup_tried = 0, p->cgroup_dirty = 0;
}

/* The open batch is stored: the processes' cgroup rows with it. */
void cgroups_commit(struct ingest *in)
{
	if (in->cgroup_dirty)
		proc_table_each(in->procs, proc_cgroup_clean, NULL);
	in->cgroup_dirty = 0;
}

void cgroups_undo(struct ingest *in)
{
	if (in->cgroup_dirty) {
		/* and the cgroups it stored: looked up again when needed */
		proc_table_each(in->procs, proc_cgroup_undo, NULL);
		otable_clear(&in->cgroups);
	}
	in->cgroup_dirty = 0;
}
