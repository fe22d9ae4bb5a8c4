/*
 * probe_file.c - saving and loading the latest probe (probe_file.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "output.h"
#include "probe_file.h"

int probe_file_path(char *buf, size_t len, struct error *e)
{
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");

	if (x && x[0] == '/')
		snprintf(buf, len, "%s/strobe/probe.json", x);
	else if (h && h[0] == '/')
		snprintf(buf, len, "%s/.cache/strobe/probe.json", h);
	else
		return error_set(e, "no place for the probe file: set HOME or XDG_CACHE_HOME");
	return 0;
}

/* dir exists as a real directory of ours, or is created (0700) */
static int own_dir(const char *dir, struct error *e)
{
	struct stat st;

	if (lstat(dir, &st) < 0) {
		if (errno != ENOENT)
			return error_set(e, "%s: %s", dir, strerror(errno));
		if (mkdir_p(dir, 0700) < 0)
			return error_set(e, "creating %s: %s", dir, strerror(errno));
		if (lstat(dir, &st) < 0)
			return error_set(e, "%s: %s", dir, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		return error_set(e, "%s is not a directory (a symlink?): remove it", dir);
	if (st.st_uid != geteuid())
		return error_set(e, "%s belongs to another user (uid %u): remove it", dir,
				 (unsigned)st.st_uid);
	return 0;
}

int probe_file_save(const struct probe_result *r, struct error *e)
{
	char path[4096], dir[4096], tmp[4200];
	struct table *t;
	FILE *f;
	int fd, ok;

	if (probe_file_path(path, sizeof(path), e) < 0)
		return -1;
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = 0;
	if (own_dir(dir, e) < 0)
		return -1;
	snprintf(tmp, sizeof(tmp), "%s/.probe.%ld.tmp", dir, (long)getpid());
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return error_set(e, "creating %s: %s", tmp, strerror(errno));
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return error_set(e, "writing %s: %s", tmp, strerror(errno));
	}
	t = probe_table(r);
	ok = table_write(t, OUTPUT_JSON, f) == 0;
	table_free(t);
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp, path) < 0) {
		int err = errno;

		unlink(tmp);
		return error_set(e, "writing %s: %s", path, strerror(err));
	}
	return 0;
}

/* ---- a reader for the flat JSON objects of probe_table ---- */

static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

/* a JSON string at p into buf (escapes other than \" \\ \/ \n \t and
 * \u00XX kept as '?'); returns the end, NULL if malformed */
static const char *jstring(const char *p, char *buf, size_t len)
{
	size_t n = 0;

	if (*p != '"')
		return NULL;
	for (p++; *p && *p != '"'; p++) {
		char c = *p;

		if (c == '\\') {
			p++;
			c = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p == '"' || *p == '\\' ||
				*p == '/' ? *p : '?';
			if (*p == 'u') {
				unsigned v;

				if (sscanf(p + 1, "%4x", &v) != 1)
					return NULL;
				c = v < 0x80 ? (char)v : '?';
				p += 4;
			}
			if (!*p)
				return NULL;
		}
		if (n + 1 < len)
			buf[n++] = c;
	}
	if (len)
		buf[n] = 0;
	return *p == '"' ? p + 1 : NULL;
}

static void set_field(struct probe_row *row, const char *key, double v)
{
	if (!strcmp(key, "size_bytes"))
		row->size_bytes = (uint64_t)v;
	else if (!strcmp(key, "line_bytes"))
		row->line_bytes = (unsigned)v;
	else if (!strcmp(key, "ways"))
		row->ways = (unsigned)v;
	else if (!strcmp(key, "latency_ns"))
		row->latency_ns = v;
	else if (!strcmp(key, "error_pct"))
		row->error_pct = v;
	else if (!strcmp(key, "pages"))
		row->pages = (uint64_t)v;
	else if (!strcmp(key, "l2_tlb_pages"))
		row->l2_pages = (uint64_t)v;
}

int probe_file_parse(const char *text, struct probe_result *r, struct error *e)
{
	const char *p = strstr(text, "\"rows\"");

	memset(r, 0, sizeof(*r));
	if (!p || !(p = strchr(p, '[')))
		return error_set(e, "no \"rows\" array");
	p = ws(p + 1);
	while (*p == '{') {
		struct probe_row row;

		memset(&row, 0, sizeof(row));
		row.latency_ns = NAN;
		row.error_pct = NAN;
		p = ws(p + 1);
		while (*p == '"') {
			char key[64], sval[300];

			p = jstring(p, key, sizeof(key));
			if (!p || *(p = ws(p)) != ':')
				return error_set(e, "malformed row %zu", r->nrows + 1);
			p = ws(p + 1);
			if (*p == '"') {
				p = jstring(p, sval, sizeof(sval));
				if (!p)
					return error_set(e, "malformed string in row %zu", r->nrows + 1);
				if (!strcmp(key, "kind"))
					snprintf(row.kind, sizeof(row.kind), "%.7s", sval);
				else if (!strcmp(key, "note"))
					snprintf(row.note, sizeof(row.note), "%s", sval);
			} else if (!strncmp(p, "null", 4)) {
				p += 4;
			} else {
				char *end;
				double v = strtod(p, &end);

				if (end == p || !isfinite(v) || v < 0)
					return error_set(e, "bad value of %s in row %zu", key,
							 r->nrows + 1);
				set_field(&row, key, v);
				p = end;
			}
			p = ws(p);
			if (*p == ',')
				p = ws(p + 1);
		}
		if (*p != '}')
			return error_set(e, "malformed row %zu", r->nrows + 1);
		p = ws(p + 1);
		if (*p == ',')
			p = ws(p + 1);
		if (!row.kind[0])
			return error_set(e, "row %zu has no kind", r->nrows + 1);
		if (r->nrows < PROBE_MAX_ROWS)
			r->rows[r->nrows++] = row;
	}
	if (*p != ']')
		return error_set(e, "malformed \"rows\" array");
	return 0;
}

int probe_file_load(const char *path, struct probe_result *r, struct error *e)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char *text;
	ssize_t got;
	int ret;

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return error_set(e, "%s: %s", path, strerror(errno));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 20)) {
		close(fd);
		return error_set(e, "%s: not a probe file (not a regular file, or too large)", path);
	}
	if (st.st_uid != geteuid()) {
		close(fd);
		return error_set(e, "%s belongs to another user (uid %u): remove it", path,
				 (unsigned)st.st_uid);
	}
	text = xmalloc((size_t)st.st_size + 1);
	got = read(fd, text, (size_t)st.st_size);
	close(fd);
	if (got < 0) {
		free(text);
		return error_set(e, "reading %s: %s", path, strerror(errno));
	}
	text[got] = 0;
	ret = probe_file_parse(text, r, e);
	free(text);
	if (ret < 0)
		return error_prefix(e, "%s", path);
	return 1;
}
