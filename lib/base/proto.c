/*
 * proto.c - the strobe control protocol: line encoding and the client call.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "proto.h"

static int name_ok(const char *s, size_t len)
{
	if (len == 0 || len >= PROTO_MAX_NAME)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

void proto_init(struct proto_msg *m, const char *verb)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->verb, sizeof(m->verb), "%s", verb);
}

void proto_free(struct proto_msg *m)
{
	for (int i = 0; i < m->nr; i++)
		free(m->f[i].value);
	m->nr = 0;
}

int proto_add(struct proto_msg *m, const char *key, const char *value)
{
	if (m->nr >= PROTO_MAX_FIELDS || !name_ok(key, strlen(key)) || proto_get(m, key))
		return -1;
	snprintf(m->f[m->nr].key, PROTO_MAX_NAME, "%s", key);
	m->f[m->nr].value = xstrdup(value);
	m->nr++;
	return 0;
}

int proto_addf(struct proto_msg *m, const char *key, const char *fmt, ...)
{
	va_list ap;
	char *v;
	int ret;

	va_start(ap, fmt);
	if (vasprintf(&v, fmt, ap) < 0)
		v = NULL;
	va_end(ap);
	if (!v)
		return -1;
	ret = proto_add(m, key, v);
	free(v);
	return ret;
}

const char *proto_get(const struct proto_msg *m, const char *key)
{
	for (int i = 0; i < m->nr; i++)
		if (!strcmp(m->f[i].key, key))
			return m->f[i].value;
	return NULL;
}

char *proto_format(const struct proto_msg *m)
{
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	fputs(m->verb, f);
	for (int i = 0; i < m->nr; i++) {
		const unsigned char *p = (const unsigned char *)m->f[i].value;

		fprintf(f, " %s=", m->f[i].key);
		for (; *p; p++) {
			if (*p <= ' ' || *p >= 0x7f || *p == '%' || *p == '=')
				fprintf(f, "%%%02X", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('\n', f);
	fclose(f);
	return buf;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static char *decode_value(const char *s, size_t len)
{
	char *out = xmalloc(len + 1), *o = out;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '%') {
			int hi, lo;

			if (i + 2 >= len)
				goto bad;
			hi = hexval(s[i + 1]);
			lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				goto bad;
			*o++ = (char)(hi << 4 | lo);
			i += 2;
		} else if ((unsigned char)s[i] <= ' ' || s[i] == '=') {
			goto bad;
		} else {
			*o++ = s[i];
		}
	}
	*o = 0;
	return out;
bad:
	free(out);
	return NULL;
}

int proto_parse(const char *line, struct proto_msg *m, struct error *e)
{
	size_t len = strlen(line);
	const char *p = line, *end;

	memset(m, 0, sizeof(*m));
	if (len && line[len - 1] == '\n')
		len--;
	if (len >= PROTO_MAX_LINE)
		return error_set(e, "malformed request: longer than %d bytes", PROTO_MAX_LINE);
	end = line + len;
	{
		const char *sp = memchr(p, ' ', len);
		size_t vl = sp ? (size_t)(sp - p) : len;

		if (!name_ok(p, vl))
			return error_set(e, "malformed request: expected 'VERB key=value ...'");
		memcpy(m->verb, p, vl);
		m->verb[vl] = 0;
		p += vl;
	}
	while (p < end) {
		const char *tok, *eq, *next;
		char key[PROTO_MAX_NAME], *val;

		if (*p != ' ')
			goto bad;
		p++;
		tok = p;
		next = memchr(tok, ' ', end - tok);
		if (!next)
			next = end;
		eq = memchr(tok, '=', next - tok);
		if (!eq) {
			proto_free(m);
			return error_set(e, "malformed request: field near byte %zu has no '=' "
					 "(expected key=value)", (size_t)(tok - line));
		}
		if (!name_ok(tok, eq - tok)) {
			proto_free(m);
			return error_set(e, "malformed request: bad key near byte %zu (keys are "
					 "1-%d characters of [a-z0-9_-])", (size_t)(tok - line),
					 PROTO_MAX_NAME - 1);
		}
		memcpy(key, tok, eq - tok);
		key[eq - tok] = 0;
		val = decode_value(eq + 1, next - eq - 1);
		if (!val) {
			proto_free(m);
			return error_set(e, "malformed request: bad value of '%s' (a bad %%XX escape, "
					 "%%00, or a raw '=' or control byte)", key);
		}
		if (proto_get(m, key) || m->nr >= PROTO_MAX_FIELDS) {
			int full = m->nr >= PROTO_MAX_FIELDS;

			free(val);
			proto_free(m);
			if (full)
				return error_set(e, "malformed request: more than %d fields",
						 PROTO_MAX_FIELDS);
			return error_set(e, "malformed request: duplicate field '%s'", key);
		}
		snprintf(m->f[m->nr].key, PROTO_MAX_NAME, "%s", key);
		m->f[m->nr++].value = val;
		p = next;
	}
	return 0;
bad:
	proto_free(m);
	return error_set(e, "malformed request: bad field near byte %zu", (size_t)(p - line));
}

int proto_call(const char *path, const struct proto_msg *req, struct proto_msg *resp,
	       struct error *e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *line, buf[PROTO_MAX_LINE];
	size_t n = 0;
	int fd, ret = -1;

	memset(resp, 0, sizeof(*resp));
	if (strlen(path) >= sizeof(sa.sun_path))
		return error_set(e, "socket path too long: %s", path);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(e, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;

		close(fd);
		if (err == EACCES || err == EPERM)
			return error_set(e, "permission denied on %s: profiling the system needs "
					 "root or membership of group 'strobe'", path);
		return error_set(e, "cannot reach strobed at %s (%s): start it with 'strobed' "
				 "or use 'strobe record' which starts its own", path, strerror(err));
	}
	line = proto_format(req);
	for (size_t off = 0, len = strlen(line); off < len;) {
		ssize_t w = send(fd, line + off, len - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EPIPE || errno == ECONNRESET))
			break;	/* it may have answered (refused us) before reading: read that */
		if (w <= 0) {
			error_set(e, "writing to strobed at %s: %s", path, strerror(errno));
			goto out;
		}
		off += w;
	}
	for (;;) {
		ssize_t r = read(fd, buf + n, sizeof(buf) - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			error_set(e, "reading from strobed at %s: %s", path, strerror(errno));
			goto out;
		}
		n += r;
		if (r == 0 || memchr(buf, '\n', n) || n == sizeof(buf) - 1)
			break;
	}
	buf[n] = 0;
	if (!n) {
		error_set(e, "strobed at %s closed the connection without a reply", path);
		goto out;
	}
	if (proto_parse(buf, resp, e)) {
		error_prefix(e, "bad reply from strobed");
		goto out;
	}
	if (!strcmp(resp->verb, "error")) {
		const char *msg = proto_get(resp, "msg");

		error_set(e, "%s", msg ? msg : "strobed refused the request");
		goto out;
	}
	ret = 0;
out:
	free(line);
	close(fd);
	return ret;
}
