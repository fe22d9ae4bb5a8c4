/*
 * cpulist.c - the kernel's CPU lists: parsing, the online CPUs, and
 * formatting (see cpulist.h).
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cpulist.h"

int cpulist_parse(const char *s, int **cpus, size_t *n, struct error *e)
{
	size_t cap = 0;
	const char *p = s;

	*cpus = NULL;
	*n = 0;
	while (*p && *p != '\n') {
		char *end;
		long a, b;

		errno = 0;
		a = strtol(p, &end, 10);
		if (errno || end == p || *p < '0' || *p > '9' || a > 65535)
			goto bad;
		b = a;
		p = end;
		if (*p == '-') {
			if (p[1] < '0' || p[1] > '9')
				goto bad;
			b = strtol(p + 1, &end, 10);
			if (errno || end == p + 1 || b < a || b > 65535)
				goto bad;
			p = end;
		}
		for (long c = a; c <= b; c++) {
			ARRAY_GROW(*cpus, cap, *n + 1);
			(*cpus)[(*n)++] = (int)c;
		}
		if (*p == ',' && p[1] && p[1] != '\n')
			p++;
		else if (*p && *p != '\n')
			goto bad;
	}
	if (*p == '\n' && p[1])
		goto bad;
	return 0;
bad:
	free(*cpus);
	*cpus = NULL;
	*n = 0;
	return error_set(e, "bad CPU list '%.64s'", s);
}

int cpulist_online(const char *sysroot, int **cpus, size_t *n, struct error *e)
{
	char path[512], *s;
	int r;

	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/online", sysroot);
	s = file_read_all(path, NULL);
	if (!s)
		return error_set(e, "cannot read %s: %s", path, strerror(errno));
	r = cpulist_parse(s, cpus, n, e);
	free(s);
	if (r < 0)
		return error_prefix(e, "%s", path);
	if (*n == 0) {
		free(*cpus);
		*cpus = NULL;
		return error_set(e, "%s lists no CPU", path);
	}
	return 0;
}

void cpulist_format(const int *cpus, size_t n, char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return;
	buf[0] = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		char item[32];
		int w;

		while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
			j++;
		if (j > i)
			w = snprintf(item, sizeof(item), "%s%d-%d", i ? "," : "", cpus[i], cpus[j]);
		else
			w = snprintf(item, sizeof(item), "%s%d", i ? "," : "", cpus[i]);
		/* room for the item, and for ",..." after it unless it is the last */
		if (off + (size_t)w + (j + 1 < n ? 5 : 1) > len) {
			snprintf(buf + off, len - off, "%s", i ? ",..." : "...");
			return;
		}
		memcpy(buf + off, item, (size_t)w + 1);
		off += (size_t)w;
		i = j + 1;
	}
}

int cpulist_has(const int *cpus, size_t n, int cpu)
{
	for (size_t i = 0; i < n; i++)
		if (cpus[i] == cpu)
			return 1;
	return 0;
}
