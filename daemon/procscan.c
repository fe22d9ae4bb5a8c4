/*
 * procscan.c - synthesise side-band for running processes from /proc.
 * Processes may exit while they are read: those are skipped silently.
 */
#include "config.h"
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "procscan.h"

static int scan_maps(struct ingest *in, uint32_t pid, uint64_t t, struct error *e)
{
	char path[64], *buf, *line, *save;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	buf = file_read_all(path, NULL);
	if (!buf)
		return 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct ingest_mmap m;
		char perms[8] = "";
		unsigned maj, min;
		uint64_t start, end, off, ino;
		int name_at = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &start, &end, perms, &off, &maj, &min, &ino, &name_at) < 7)
			continue;
		if (perms[2] != 'x')
			continue;
		memset(&m, 0, sizeof(m));
		m.pid = pid;
		m.start = start;
		m.len = end - start;
		m.pgoff = off;
		m.prot = PROT_EXEC | PROT_READ;
		/* ingest_mmap() opens the binary under the rules of a
		 * record's: map_files or the path, a regular file only,
		 * and by path only if it is still this device and inode */
		m.maj = maj;
		m.min = min;
		m.ino = ino;
		m.filename = name_at ? line + name_at : "";
		if (!*m.filename)
			m.filename = "//anon";
		m.time_ns = t;
		if (ingest_mmap(in, &m, e) < 0) {
			free(buf);
			return -1;
		}
	}
	free(buf);
	return 0;
}

/* The threads besides the leader, so that the maps outlive the leader's
 * exit as long as one of them runs (ingest_exit). */
static int scan_threads(struct ingest *in, uint32_t pid, uint64_t t, struct error *e)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!ret && (de = readdir(d))) {
		uint32_t tid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		tid = strtoul(de->d_name, NULL, 10);
		if (tid != pid)
			ret = ingest_fork(in, pid, pid, tid, t, e);
	}
	closedir(d);
	return ret;
}

/* Field 22 of /proc/PID/stat (after the name in parentheses, which may
 * hold any byte but NUL): the start time in clock ticks; 0: unreadable. */
static uint64_t proc_start(uint32_t pid)
{
	char path[64], buf[1024], *p;
	uint64_t v = 0;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	for (i = 2; p && i < 22; i++)		/* p at the space before field i+1 */
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

void procscan_snapshot(struct procscan_list *l)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t cap = 0, cap2 = 0;

	memset(l, 0, sizeof(*l));
	if (!d)
		return;
	while ((de = readdir(d))) {
		uint32_t pid;
		uint64_t start;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = strtoul(de->d_name, NULL, 10);
		start = proc_start(pid);
		if (!start && pid != 1)
			continue;	/* gone already */
		ARRAY_GROW(l->pid, cap, l->nr + 1);
		ARRAY_GROW(l->start, cap2, l->nr + 1);
		l->pid[l->nr] = pid;
		l->start[l->nr++] = start;
	}
	closedir(d);
}

void procscan_list_free(struct procscan_list *l)
{
	free(l->pid);
	free(l->start);
	memset(l, 0, sizeof(*l));
}

int procscan_all(struct ingest *in, const struct procscan_list *l, uint64_t time_ns,
		 struct error *e)
{
	int n = 0;

	for (size_t i = 0; i < l->nr; i++) {
		char path[64], *comm;
		uint32_t pid = l->pid[i];

		if (proc_start(pid) != l->start[i])
			continue;	/* exited, or its pid is another process's */
		snprintf(path, sizeof(path), "/proc/%u/comm", pid);
		comm = file_read_all(path, NULL);
		if (!comm)
			continue;
		comm[strcspn(comm, "\n")] = 0;
		if (ingest_comm(in, pid, pid, comm, 0, time_ns, e) < 0 ||
		    scan_maps(in, pid, time_ns, e) < 0 ||
		    scan_threads(in, pid, time_ns, e) < 0) {
			free(comm);
			return -1;
		}
		free(comm);
		n++;
	}
	return n;
}
