/*
 * procscan.c - synthesise side-band for running processes from /proc.
 * Processes may exit while they are read: those are skipped silently.
 */
#include "config.h"
#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "procscan.h"

static int scan_maps(struct ingest *in, uint32_t pid, uint64_t t, struct error *e)
{
	char path[64], *buf, *line, *save;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	buf = file_read_all(path, NULL);
	if (!buf)
		return 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct sink_mmap m;
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

int procscan_all(struct ingest *in, uint64_t time_ns, struct error *e)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char path[64], *comm;
		uint32_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = strtoul(de->d_name, NULL, 10);
		snprintf(path, sizeof(path), "/proc/%u/comm", pid);
		comm = file_read_all(path, NULL);
		if (!comm)
			continue;
		comm[strcspn(comm, "\n")] = 0;
		if (ingest_comm(in, pid, pid, comm, 0, time_ns, e) < 0 ||
		    scan_maps(in, pid, time_ns, e) < 0 ||
		    scan_threads(in, pid, time_ns, e) < 0) {
			free(comm);
			closedir(d);
			return -1;
		}
		free(comm);
		n++;
	}
	closedir(d);
	return n;
}
