/*
 * conffile.c - "key = value" configuration files (see conffile.h).
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "conffile.h"

struct seen {
	char *key;
	unsigned line;
};

static int is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static int key_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/*
 * Read one line into buf (at most CONFFILE_LINE_MAX bytes with its
 * newline, which is dropped).  Returns 1 for a line, 0 at the end, -1 with
 * e set for a line too long or holding a NUL byte.
 */
static int read_line(FILE *f, char *buf, struct error *e)
{
	size_t n = 0;
	int c;

	while ((c = getc(f)) != EOF && c != '\n') {
		if (n >= CONFFILE_LINE_MAX - 1)
			return error_set(e, "line too long (the limit is %d characters): "
					 "shorten it", CONFFILE_LINE_MAX - 1);
		if (c == 0)
			return error_set(e, "a NUL byte: this is not a text file");
		buf[n++] = (char)c;
	}
	buf[n] = 0;
	if (c == EOF && n == 0)
		return 0;
	return 1;
}

/* One line, blanks already trimmed at both ends: fn for its key. */
static int parse_line(char *s, struct seen *seen, size_t *nseen, unsigned line,
		      conffile_fn fn, void *arg, struct error *e)
{
	char *key = s, *value;
	size_t klen = 0;

	while (key_char((unsigned char)s[klen]))
		klen++;
	if (!klen)
		return error_set(e, "expected 'key = value' (keys are lowercase words like "
				 "db or max-size), found '%.40s': fix the line or make it a "
				 "comment with '#'", s);
	value = s + klen;
	while (is_blank(*value))
		value++;
	if (*value != '=')
		return error_set(e, "expected '=' after '%.*s': write '%.*s = VALUE'",
				 (int)(klen > 64 ? 64 : klen), key, (int)(klen > 64 ? 64 : klen), key);
	key[klen] = 0;
	value++;
	while (is_blank(*value))
		value++;
	if (!*value)
		return error_set(e, "no value for '%s': give one, or comment the line out "
				 "with '#' to keep the default", key);
	for (const char *p = value; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return error_set(e, "control character in the value of '%s': remove it",
					 key);
	for (size_t i = 0; i < *nseen; i++)
		if (!strcmp(seen[i].key, key))
			return error_set(e, "'%s' is set twice (first on line %u): keep one",
					 key, seen[i].line);
	if (*nseen >= CONFFILE_MAX_KEYS)
		return error_set(e, "more than %d keys: this is not a strobe configuration "
				 "file", CONFFILE_MAX_KEYS);
	seen[*nseen].key = xstrdup(key);
	seen[*nseen].line = line;
	(*nseen)++;
	return fn(arg, key, value, e);
}

int conffile_parse(FILE *f, const char *name, conffile_fn fn, void *arg, struct error *e)
{
	char *buf = xmalloc(CONFFILE_LINE_MAX);
	struct seen *seen = xcalloc(CONFFILE_MAX_KEYS, sizeof(*seen));
	size_t nseen = 0;
	unsigned line = 0;
	int ret = 0, r;

	while (ret == 0) {
		char *s, *end;

		line++;
		r = read_line(f, buf, e);
		if (r == 0)
			break;
		if (r < 0) {
			ret = error_prefix(e, "%s:%u", name, line);
			break;
		}
		for (s = buf; is_blank(*s); s++)
			;
		end = s + strlen(s);
		while (end > s && is_blank(end[-1]))
			*--end = 0;
		if (!*s || *s == '#')
			continue;
		if (parse_line(s, seen, &nseen, line, fn, arg, e) < 0)
			ret = error_prefix(e, "%s:%u", name, line);
	}
	if (ret == 0 && ferror(f))
		ret = error_set(e, "%s: read error: %s", name, strerror(errno));
	for (size_t i = 0; i < nseen; i++)
		free(seen[i].key);
	free(seen);
	free(buf);
	return ret;
}

int conffile_read(const char *path, int flags, conffile_fn fn, void *arg, struct error *e)
{
	struct stat st;
	FILE *f;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT && (flags & CONFFILE_MISSING_OK))
		return 1;
	if (fd < 0)
		return error_set(e, "%s: cannot read: %s: give the path of a readable "
				 "configuration file", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return error_set(e, "%s: not a regular file: give the path of a "
				 "configuration file", path);
	}
	if ((flags & CONFFILE_STRICT) &&
	    ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022))) {
		close(fd);
		return error_set(e, "%s: owned by uid %u with mode %04o: others could "
				 "change strobed's settings; make it root's and writable by "
				 "root alone (chown root %s; chmod go-w %s)", path,
				 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), path, path);
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return error_set(e, "%s: %s", path, strerror(errno));
	}
	ret = conffile_parse(f, path, fn, arg, e);
	fclose(f);
	return ret;
}
