/*
 * lockinfo.c - lock holders from /proc (see lockinfo.h).
 *
 * A /proc/locks line: "1: POSIX  ADVISORY  READ 4242 fe:00:1234 120 120",
 * that is id, class (POSIX, OFDLCK, FLOCK, ...), ADVISORY or MANDATORY,
 * READ or WRITE, pid (-1 for OFDLCK), major:minor (hex):inode, first and
 * last byte (or EOF).  Lines of waiters carry "->" after the id.
 */
#include "config.h"
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "lockinfo.h"
#include "util.h"

struct lock_line {
	char cls[16], rw[16];
	long pid;
	unsigned maj, min;
	unsigned long long ino, start, end;
};

/* Parse the part after "N: " of a /proc/locks or fdinfo "lock:" line. */
static int parse_line(const char *p, struct lock_line *l)
{
	char mode[16], end[32];

	p = strchr(p, ':');
	if (!p)
		return -1;
	p++;
	while (*p == ' ')
		p++;
	if (!strncmp(p, "->", 2))
		return -1;	/* a waiter, not a holder */
	if (sscanf(p, "%15s %15s %15s %ld %x:%x:%llu %llu %31s", l->cls, mode, l->rw, &l->pid,
		   &l->maj, &l->min, &l->ino, &l->start, end) != 9)
		return -1;
	l->end = !strcmp(end, "EOF") ? UINT64_MAX : strtoull(end, NULL, 10);
	return 0;
}

static int conflicts(const struct lock_line *l, const struct stat *st, uint64_t start,
		     uint64_t last)
{
	if (strcmp(l->cls, "POSIX") && strcmp(l->cls, "OFDLCK"))
		return 0;	/* flock and leases do not meet fcntl locks */
	if (l->maj != major(st->st_dev) || l->min != minor(st->st_dev) ||
	    l->ino != (unsigned long long)st->st_ino)
		return 0;
	return l->start <= last && l->end >= start;
}

/* The process holding the OFD lock described by want: the one with a
 * descriptor whose fdinfo lists it. */
static pid_t ofd_owner(const struct lock_line *want)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	pid_t found = -1;

	if (!proc)
		return -1;
	while (found < 0 && (de = readdir(proc))) {
		char path[288];
		DIR *fds;
		struct dirent *fe;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fdinfo", de->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while (found < 0 && (fe = readdir(fds))) {
			char file[576], *s, *line;
			struct lock_line l;

			if (fe->d_name[0] == '.')
				continue;
			snprintf(file, sizeof(file), "%s/%s", path, fe->d_name);
			s = file_read_all(file, NULL);
			if (!s)
				continue;
			for (line = strstr(s, "\nlock:"); line; line = strstr(line + 1, "\nlock:")) {
				if (parse_line(line + 6, &l) == 0 && !strcmp(l.cls, "OFDLCK") &&
				    l.ino == want->ino && l.maj == want->maj && l.min == want->min &&
				    l.start == want->start && l.end == want->end &&
				    !strcmp(l.rw, want->rw))
					found = atoi(de->d_name);
			}
			free(s);
		}
		closedir(fds);
	}
	closedir(proc);
	return found;
}

static void holder_fill(struct lock_holder *h, const struct lock_line *l, pid_t pid)
{
	char path[64], *s, *u;

	memset(h, 0, sizeof(*h));
	h->pid = pid;
	h->uid = (uid_t)-1;
	h->write = !strcmp(l->rw, "WRITE");
	h->ofd = !strcmp(l->cls, "OFDLCK");
	h->start = l->start;
	h->end = l->end;
	if (pid <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	s = file_read_all(path, NULL);
	if (s) {
		s[strcspn(s, "\n")] = 0;
		snprintf(h->comm, sizeof(h->comm), "%s", s);
		free(s);
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	s = file_read_all(path, NULL);
	if (s && (u = strstr(s, "\nUid:")))
		h->uid = (uid_t)strtoul(u + 5, NULL, 10);
	free(s);
}

int lockinfo_find(const char *path, uint64_t start, uint64_t len, struct lock_holder *h)
{
	uint64_t last = len ? start + len - 1 : UINT64_MAX;
	pid_t self = getpid();
	struct stat st;
	char *s, *line, *next;
	int found = 0;

	if (stat(path, &st) < 0)
		return -1;
	s = file_read_all("/proc/locks", NULL);
	if (!s)
		return -1;
	for (line = s; line && *line && !found; line = next) {
		struct lock_line l;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (parse_line(line, &l) < 0 || !conflicts(&l, &st, start, last))
			continue;
		if (!strcmp(l.cls, "POSIX")) {
			if (l.pid == self)
				continue;	/* ours (SQLite's): never a conflict */
			holder_fill(h, &l, (pid_t)l.pid);
		} else {
			pid_t pid = ofd_owner(&l);

			holder_fill(h, &l, pid);
		}
		found = 1;
	}
	free(s);
	return found;
}

void lockinfo_describe(const struct lock_holder *h, char *buf, size_t size)
{
	char who[96], range[64];

	if (h->pid > 0 && h->uid != (uid_t)-1)
		snprintf(who, sizeof(who), "pid %d (%s, uid %u)", (int)h->pid,
			 h->comm[0] ? h->comm : "?", (unsigned)h->uid);
	else if (h->pid > 0)
		snprintf(who, sizeof(who), "pid %d", (int)h->pid);
	else
		snprintf(who, sizeof(who), "a process strobed could not identify");
	if (h->end == UINT64_MAX)
		snprintf(range, sizeof(range), "bytes %llu to the end", (unsigned long long)h->start);
	else if (h->start == h->end)
		snprintf(range, sizeof(range), "byte %llu", (unsigned long long)h->start);
	else
		snprintf(range, sizeof(range), "bytes %llu-%llu", (unsigned long long)h->start,
			 (unsigned long long)h->end);
	snprintf(buf, size, "%s, with a %s%s lock on %s", who, h->ofd ? "file description " : "",
		 h->write ? "write" : "read", range);
}
