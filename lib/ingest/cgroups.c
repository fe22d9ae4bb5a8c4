/*
 * cgroups.c - cgroup v2 ids and paths (cgroups.h): the walk of the
 * cgroup2 mount, ids from file handles (as the kernel's cgroup id), and
 * /proc/PID/cgroup.
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
