/*
 * dbgfetch.c - debug files from debuginfod servers (see dbgfetch.h).
 *
 * A thin layer over libdebuginfod: the client is begun on the first
 * query, each build-id is remembered once asked, the first failure other
 * than "not found" stops all further queries, and every fetched file is
 * checked on the descriptor the library returned before it is used.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/debuginfod.h>
#include "dbgfetch.h"

struct dbgfetch {
	debuginfod_client *client;	/* begun on the first query */
	int begin_failed;
	char *servers;			/* dbgfetch_servers(urls) */
	char **asked;			/* build-ids asked that gave nothing */
	size_t nasked, asked_cap;
	struct dbgfetch_counts c;
};

static int is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}

int dbgfetch_enabled(const char *urls)
{
	if (!urls)
		return 0;
	for (; *urls; urls++)
		if (!is_blank(*urls))
			return 1;
	return 0;
}

/* Append one URL of len bytes at u to out (at *n), cleaned: at most len
 * + 1 bytes. */
static void add_server(char *out, size_t *n, const char *u, size_t len)
{
	const char *rest = u, *end = u + len, *p;
	size_t i;

	for (i = 0; i + 2 < len; i++)
		if (u[i] == ':' && u[i + 1] == '/' && u[i + 2] == '/') {
			rest = u + i + 3;
			break;
		}
	for (p = u; p < end; p++)
		if (*p == '?' || *p == '#') {
			end = p;
			break;
		}
	if (*n)
		out[(*n)++] = ' ';
	/* the scheme, then the rest without user:password@ (which ends
	 * before the first '/' after the scheme) */
	for (p = u; p < rest && p < end; p++)
		out[(*n)++] = (*p > ' ' && *p < 127) ? *p : '?';
	for (p = rest; p < end && *p != '/'; p++)
		if (*p == '@')
			rest = p + 1;
	for (p = rest; p < end; p++)
		out[(*n)++] = (*p > ' ' && *p < 127) ? *p : '?';
}

char *dbgfetch_servers(const char *urls)
{
	const char *p = urls ? urls : "";
	char *out = xmalloc(strlen(p) + 4);
	size_t n = 0;

	for (;;) {
		size_t len = 0;

		while (is_blank(*p))
			p++;
		while (p[len] && !is_blank(p[len]))
			len++;
		if (!len)
			break;
		add_server(out, &n, p, len);
		p += len;
	}
	if (n > DBGFETCH_SERVERS_MAX) {
		n = DBGFETCH_SERVERS_MAX - 3;
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = 0;
	return out;
}

/* "s1, s2" built up in *buf. */
static void part_add(char **buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void part_add(char **buf, const char *fmt, ...)
{
	char *part, *old = *buf;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&part, fmt, ap) < 0)
		part = NULL;
	va_end(ap);
	if (!part)
		return;
	*buf = xasprintf("%s%s%s", old ? old : "", old ? ", " : "", part);
	free(old);
	free(part);
}

char *dbgfetch_summary_text(const struct dbgfetch_counts *c, const char *servers)
{
	char *parts = NULL, *out;
	const char *srv = servers && *servers ? servers : "?";

	if (c->missing)
		part_add(&parts, "%u %s not found", c->missing,
			 c->missing == 1 ? "binary's debug file" : "binaries' debug files");
	if (c->failed)
		part_add(&parts, "%u could not be fetched (%s)", c->failed,
			 c->fail_errno == ETIME || c->fail_errno == ETIMEDOUT ?
			 "timed out: DEBUGINFOD_TIMEOUT, DEBUGINFOD_MAXTIME" : strerror(c->fail_errno));
	if (c->skipped)
		part_add(&parts, "%u not asked after that failure", c->skipped);
	if (c->refused)
		part_add(&parts, "%u fetched but refused (not the binary's build-id)",
			 c->refused);
	if (!parts)
		return NULL;
	out = xasprintf("debuginfod: %s (server%s %s)", parts, strchr(srv, ' ') ? "s" : "",
			srv);
	free(parts);
	return out;
}

struct dbgfetch *dbgfetch_new(const char *urls)
{
	struct dbgfetch *f;
	const char *t = getenv(DEBUGINFOD_TIMEOUT_ENV_VAR);

	if (!dbgfetch_enabled(urls))
		return NULL;
	if (!t || !*t)
		setenv(DEBUGINFOD_TIMEOUT_ENV_VAR, DBGFETCH_DEFAULT_TIMEOUT, 1);
	/* DEBUGINFOD_TIMEOUT bounds a connection and each 100 KB, not a
	 * download: a server sending 100 KB every few seconds would hold a
	 * report for hours over a large file */
	t = getenv(DEBUGINFOD_MAXTIME_ENV_VAR);
	if (!t || !*t)
		setenv(DEBUGINFOD_MAXTIME_ENV_VAR, DBGFETCH_DEFAULT_MAXTIME, 1);
	t = getenv(DEBUGINFOD_MAXSIZE_ENV_VAR);
	if (!t || !*t) {
		char max[32];

		snprintf(max, sizeof(max), "%lld", (long long)DEBUGINFO_FILE_MAX);
		setenv(DEBUGINFOD_MAXSIZE_ENV_VAR, max, 1);
	}
	f = xcalloc(1, sizeof(*f));
	f->servers = dbgfetch_servers(urls);
	return f;
}

void dbgfetch_free(struct dbgfetch *f)
{
	size_t i;

	if (!f)
		return;
	if (f->client)
		debuginfod_end(f->client);
	for (i = 0; i < f->nasked; i++)
		free(f->asked[i]);
	free(f->asked);
	free(f->servers);
	free(f);
}

static int hex_ok(const char *hex)
{
	size_t len = hex ? strlen(hex) : 0, i;

	if (len < 4 || len > 128 || len % 2)
		return 0;
	for (i = 0; i < len; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
			return 0;
	return 1;
}

/* Remember that hex gave nothing: it is not asked again. */
static int gave_nothing(struct dbgfetch *f, const char *hex)
{
	ARRAY_GROW(f->asked, f->asked_cap, f->nasked + 1);
	f->asked[f->nasked++] = xstrdup(hex);
	return 0;
}

int dbgfetch_find(struct dbgfetch *f, const char *hex, struct debuginfo_found *out)
{
	char *path = NULL, *shown;
	size_t i;
	int fd;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	if (!f || !hex_ok(hex))
		return 0;
	for (i = 0; i < f->nasked; i++)
		if (!strcmp(f->asked[i], hex))
			return 0;
	if (!f->client && !f->begin_failed && !(f->client = debuginfod_begin())) {
		f->begin_failed = 1;
		f->c.failed++;
		f->c.fail_errno = errno ? errno : ENOMEM;
		return gave_nothing(f, hex);
	}
	if (!f->client || f->c.failed) {
		f->c.skipped++;
		return gave_nothing(f, hex);
	}
	fd = debuginfod_find_debuginfo(f->client, (const unsigned char *)hex, 0, &path);
	if (fd < 0) {
		if (fd == -ENOENT) {
			f->c.missing++;
		} else {
			f->c.failed++;
			f->c.fail_errno = -fd;
		}
		free(path);
		return gave_nothing(f, hex);
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	shown = xasprintf("debuginfod: %s", path ? path : "(no path)");
	free(path);
	if (debuginfo_check_build_id(fd, shown, hex, &out->refused) < 0) {
		f->c.refused++;
		close(fd);
		free(shown);
		return gave_nothing(f, hex);
	}
	/* Not remembered: asked again (another binary row with this
	 * build-id), the library's cache answers without the network. */
	f->c.found++;
	out->fd = fd;
	out->path = shown;
	return 1;
}

const struct dbgfetch_counts *dbgfetch_counts(const struct dbgfetch *f)
{
	return &f->c;
}

char *dbgfetch_summary(const struct dbgfetch *f)
{
	return f ? dbgfetch_summary_text(&f->c, f->servers) : NULL;
}
