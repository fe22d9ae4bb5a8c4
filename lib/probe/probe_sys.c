/*
 * probe_sys.c - the caches as sysfs and CPUID describe them (probe_sys.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include "probe_sys.h"

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* "32K", "512K", "32768K", "1M" or a plain number of bytes */
static uint64_t parse_sysfs_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s)
		return 0;
	if (*end == 'K')
		v <<= 10;
	else if (*end == 'M')
		v <<= 20;
	else if (*end == 'G')
		v <<= 30;
	return v;
}

static void read_sysfs(struct probe_sys *s, const char *root, int cpu)
{
	char path[512], buf[64];
	int found = 0;

	for (int idx = 0; idx < 16; idx++) {
		struct probe_sys_cache c = { 1, 0, 0, 0 };
		int level;

		snprintf(path, sizeof(path), "%s/cpu%d/cache/index%d/level", root, cpu, idx);
		if (read_line(path, buf, sizeof(buf)) < 0)
			break;
		level = atoi(buf);
		snprintf(path, sizeof(path), "%s/cpu%d/cache/index%d/type", root, cpu, idx);
		if (read_line(path, buf, sizeof(buf)) < 0 || !strcmp(buf, "Instruction"))
			continue;
		if (level < 1 || level > PROBE_SYS_LEVELS)
			continue;
		snprintf(path, sizeof(path), "%s/cpu%d/cache/index%d/size", root, cpu, idx);
		if (read_line(path, buf, sizeof(buf)) == 0)
			c.size_bytes = parse_sysfs_size(buf);
		snprintf(path, sizeof(path), "%s/cpu%d/cache/index%d/coherency_line_size",
			 root, cpu, idx);
		if (read_line(path, buf, sizeof(buf)) == 0)
			c.line_bytes = (unsigned)atoi(buf);
		snprintf(path, sizeof(path), "%s/cpu%d/cache/index%d/ways_of_associativity",
			 root, cpu, idx);
		if (read_line(path, buf, sizeof(buf)) == 0)
			c.ways = (unsigned)atoi(buf);
		s->sysfs[level - 1] = c;
		found = 1;
	}
	if (!found)
		snprintf(s->sysfs_note, sizeof(s->sysfs_note),
			 "sysfs has no cache information (%s/cpu%d/cache/index*/)", root, cpu);
}

#if defined(__x86_64__) || defined(__i386__)
static void read_cpuid(struct probe_sys *s)
{
	unsigned a, b, c, d, leaf, max;
	char vendor[13];

	__cpuid(0, max, b, c, d);
	if (max >= 1) {
		__cpuid(1, a, b, c, d);
		s->hypervisor = (c >> 31) & 1;
		__cpuid(0, max, b, c, d);
	}
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = 0;
	if (!strcmp(vendor, "GenuineIntel")) {
		leaf = 4;
		if (max < 4) {
			snprintf(s->cpuid_note, sizeof(s->cpuid_note), "CPUID leaf 4 not offered");
			return;
		}
	} else if (!strcmp(vendor, "AuthenticAMD") || !strcmp(vendor, "HygonGenuine")) {
		unsigned ext = __get_cpuid_max(0x80000000, NULL);

		if (ext >= 0x80000005) {
			__cpuid(0x80000005, a, b, c, d);
			s->cpuid_dtlb_entries = (b >> 16) & 0xff;
		}
		if (ext >= 0x80000006) {
			__cpuid(0x80000006, a, b, c, d);
			s->cpuid_l2_dtlb_entries = (b >> 16) & 0xfff;
		}
		leaf = 0x8000001D;
		if (ext < leaf) {
			snprintf(s->cpuid_note, sizeof(s->cpuid_note),
				 "CPUID leaf 0x8000001D not offered");
			return;
		}
	} else {
		snprintf(s->cpuid_note, sizeof(s->cpuid_note),
			 "CPUID vendor '%s': cache leaves not read", vendor);
		return;
	}
	for (unsigned sub = 0; sub < 16; sub++) {
		unsigned type, level, line, parts, ways, sets;

		__cpuid_count(leaf, sub, a, b, c, d);
		type = a & 0x1f;
		if (!type)
			break;
		if (type == 2)	/* instruction */
			continue;
		level = (a >> 5) & 7;
		if (level < 1 || level > PROBE_SYS_LEVELS)
			continue;
		line = (b & 0xfff) + 1;
		parts = ((b >> 12) & 0x3ff) + 1;
		ways = ((b >> 22) & 0x3ff) + 1;
		sets = c + 1;
		s->cpuid[level - 1].have = 1;
		s->cpuid[level - 1].line_bytes = line;
		s->cpuid[level - 1].ways = (a >> 9) & 1 ? (unsigned)((uint64_t)ways * sets) : ways;
		s->cpuid[level - 1].size_bytes = (uint64_t)ways * parts * line * sets;
		s->have_cpuid = 1;
	}
	if (!s->have_cpuid)
		snprintf(s->cpuid_note, sizeof(s->cpuid_note), "CPUID leaf 0x%x lists no caches",
			 leaf);
}
#else
static void read_cpuid(struct probe_sys *s)
{
	snprintf(s->cpuid_note, sizeof(s->cpuid_note), "no CPUID on this architecture");
}
#endif

void probe_sys_read(struct probe_sys *s, const char *root, int cpu)
{
	memset(s, 0, sizeof(*s));
	read_sysfs(s, root, cpu);
	read_cpuid(s);
}
