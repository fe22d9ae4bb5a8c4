/*
 * chclient.c - ClickHouse over HTTP with libcurl and zlib: chclient.h.
 * Every answer is bounded in size (answer_max; error answers 64 KiB) and
 * every request in time (a deadline and a stall limit): the connection is
 * closed when one is passed, with one line naming the server and the limit.
 */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include <zlib.h>
#include <arpa/inet.h>
#include <netdb.h>
#include "chchild.h"
#include "chclient.h"

struct chclient {
	CURL *curl;			/* NULL when child is set */
	struct chchild *child;		/* chclient_new_child(): requests made there */
	struct curl_slist *pin;		/* chclient_pin_host()'s CURLOPT_RESOLVE */
	int pinned;
	struct chclient_url url;
	struct chclient_cred cred;
	size_t sent;
	char curl_err[CURL_ERROR_SIZE];
	curl_write_callback sink;	/* chclient_query_lines(): the answer's reader */
	void *sink_arg;
	struct sbuf *out;		/* else: a 200 answer goes here */
	struct sbuf errbody;		/* the start of an answer that is not 200 */
	int over;			/* out reached answer_max: transfer stopped */
	int err_cut;			/* errbody full: transfer stopped */
	int stalled;			/* nothing moved for stall_s: stopped */
	curl_off_t last_dl, last_ul;	/* progress seen at last_move_ns */
	uint64_t last_move_ns;		/* CLOCK_MONOTONIC */
};

/* Of an error answer, what is worth showing. */
#define ERR_MAX_BYTES	(64U << 10)
/* The deadline of a query or insert. */
#define CHCLIENT_TIMEOUT(c)	((c)->cred.limits.timeout_s ? (c)->cred.limits.timeout_s : \
				 CHCLIENT_TIMEOUT_S)

/* An unsigned number from the environment variable name, in [1, max];
 * unset or empty: *v untouched.  0, or -1 with e set. */
static int env_uint(const char *name, unsigned max, unsigned *v, struct error *e)
{
	const char *s = getenv(name);
	char *end;
	unsigned long n;

	if (!s || !*s)
		return 0;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || *end || !isdigit((unsigned char)*s) || n < 1 || n > max)
		return error_set(e, "bad %s '%.40s': give a whole number from 1 to %u", name, s,
				 max);
	*v = (unsigned)n;
	return 0;
}

static int db_name_ok(const char *s, size_t n)
{
	if (n == 0 || n >= sizeof(((struct chclient_url *)0)->database))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return 1;
}

int chclient_url_parse(const char *url, struct chclient_url *u, struct error *e)
{
	const char *p, *host, *q;
	size_t n;

	memset(u, 0, sizeof(*u));
	if (!strncmp(url, "http://", 7))
		host = url + 7;
	else if (!strncmp(url, "https://", 8))
		host = url + 8;
	else
		return error_set(e, "bad URL '%.200s': give http://HOST:PORT/?database=NAME", url);
	n = strcspn(host, "/?#");
	if (n == 0)
		return error_set(e, "bad URL '%.200s': no host", url);
	if (memchr(host, '@', n))
		return error_set(e, "bad URL: no credentials in the URL (they would show in the "
				 "process list): set STROBE_CLICKHOUSE_USER and "
				 "STROBE_CLICKHOUSE_PASSWORD or STROBE_CLICKHOUSE_PASSWORD_FILE");
	for (p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return error_set(e, "bad URL: it holds a space or control character");
	if (strchr(url, '#'))
		return error_set(e, "bad URL '%.200s': no #fragment", url);
	q = strchr(url, '?');
	n = q ? (size_t)(q - url) : strlen(url);
	if (n + 2 > sizeof(u->base))
		return error_set(e, "bad URL: longer than %zu bytes", sizeof(u->base) - 2);
	memcpy(u->base, url, n);
	if (!memchr(host, '/', (size_t)(url + n - host)))
		u->base[n++] = '/';
	u->base[n] = 0;
	strcpy(u->database, "default");
	if (!q)
		return 0;
	for (p = q + 1; *p;) {
		size_t len = strcspn(p, "&");

		if (len > 9 && !strncmp(p, "database=", 9)) {
			if (!db_name_ok(p + 9, len - 9))
				return error_set(e, "bad URL: database '%.*s' is not a name of letters, "
						 "digits and _", (int)(len > 109 ? 100 : len - 9), p + 9);
			memcpy(u->database, p + 9, len - 9);
			u->database[len - 9] = 0;
		} else if (len) {
			return error_set(e, "bad URL: unknown parameter '%.*s': only ?database=NAME",
					 (int)(len > 100 ? 100 : len), p);
		}
		p += len;
		if (*p == '&')
			p++;
	}
	return 0;
}

int chclient_credentials(struct chclient_cred *c, struct error *e)
{
	const char *user = getenv("STROBE_CLICKHOUSE_USER");
	const char *pw = getenv("STROBE_CLICKHOUSE_PASSWORD");
	const char *file = getenv("STROBE_CLICKHOUSE_PASSWORD_FILE");

	unsigned mb = 0;

	memset(c, 0, sizeof(*c));
	if (env_uint("STROBE_CLICKHOUSE_MAX_ANSWER_MB", CHCLIENT_ANSWER_MAX_MB_MAX, &mb, e) < 0 ||
	    env_uint("STROBE_CLICKHOUSE_TIMEOUT", CHCLIENT_TIMEOUT_S_MAX,
		     &c->limits.timeout_s, e) < 0 ||
	    env_uint("STROBE_CLICKHOUSE_STALL", CHCLIENT_TIMEOUT_S_MAX, &c->limits.stall_s, e) < 0)
		return -1;
	c->limits.answer_max = (size_t)mb << 20;
	if (!user || !*user)
		user = "default";
	if (strlen(user) >= sizeof(c->user))
		return error_set(e, "STROBE_CLICKHOUSE_USER is longer than %zu bytes",
				 sizeof(c->user) - 1);
	strcpy(c->user, user);
	if (pw && file && *file)
		return error_set(e, "both STROBE_CLICKHOUSE_PASSWORD and "
				 "STROBE_CLICKHOUSE_PASSWORD_FILE are set: keep one");
	if (pw) {
		if (strlen(pw) >= sizeof(c->password))
			return error_set(e, "STROBE_CLICKHOUSE_PASSWORD is longer than %zu bytes",
					 sizeof(c->password) - 1);
		strcpy(c->password, pw);
	} else if (file && *file) {
		struct stat st;
		ssize_t n;
		int fd = open(file, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

		if (fd < 0)
			return error_set(e, "cannot open STROBE_CLICKHOUSE_PASSWORD_FILE %.200s: %s",
					 file, strerror(errno));
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			return error_set(e, "STROBE_CLICKHOUSE_PASSWORD_FILE %.200s is not a regular "
					 "file", file);
		}
		if (st.st_mode & 077) {
			close(fd);
			return error_set(e, "STROBE_CLICKHOUSE_PASSWORD_FILE %.200s may be read by "
					 "others (mode %03o): chmod 600 it", file,
					 (unsigned)(st.st_mode & 0777));
		}
		n = read(fd, c->password, sizeof(c->password) - 1);
		close(fd);
		if (n < 0)
			return error_set(e, "cannot read STROBE_CLICKHOUSE_PASSWORD_FILE %.200s: %s",
					 file, strerror(errno));
		c->password[n] = 0;
		c->password[strcspn(c->password, "\r\n")] = 0;
	}
	return 0;
}

/* Copy [s, s + n) into out as printable ASCII (others as '?'), tabs and
 * newlines as spaces. */
static void put_clean(char *out, size_t size, const char *s, size_t n)
{
	size_t o = 0;

	if (!size)
		return;
	for (size_t i = 0; i < n && o + 1 < size; i++) {
		unsigned char ch = s[i];

		out[o++] = ch == '\t' || ch == '\n' || ch == '\r' ? ' ' :
			   ch < ' ' || ch >= 0x7f ? '?' : ch;
	}
	while (o > 0 && (out[o - 1] == ' ' || out[o - 1] == '.' || out[o - 1] == ','))
		o--;
	out[o] = 0;
}

static const char *memfind(const char *s, size_t n, const char *what)
{
	size_t w = strlen(what);

	for (size_t i = 0; i + w <= n; i++)
		if (!memcmp(s + i, what, w))
			return s + i;
	return NULL;
}

int chclient_error_line(int status, const char *body, size_t len, char *out, size_t size)
{
	const char *end = body + len, *msg, *nl, *stop;
	char clean[400];
	int code = 0;

	while (body < end && isspace((unsigned char)*body))
		body++;
	if (end - body > 6 && !memcmp(body, "Code: ", 6)) {
		const char *p = body + 6;

		while (p < end && isdigit((unsigned char)*p) && code < 100000)
			code = code * 10 + (*p++ - '0');
	}
	/* the message: after "DB::...Exception: " up to ", e.what()" (18.x),
	 * ". (NAME)" (later versions), the end of the line or ". Log:" */
	msg = memfind(body, end - body, "Exception: ");
	if (msg)
		msg += strlen("Exception: ");
	else if (code) {
		msg = memchr(body, ',', end - body);
		msg = msg ? msg + 1 : end;
	} else
		msg = body;
	nl = memchr(msg, '\n', end - msg);
	stop = nl ? nl : end;
	if ((nl = memfind(msg, stop - msg, ", e.what()")))
		stop = nl;
	if ((nl = memfind(msg, stop - msg, ". Log:")))
		stop = nl;
	if ((nl = memfind(msg, stop - msg, " (version ")))
		stop = nl;
	if ((nl = memfind(msg, stop - msg, ". (")) && code)
		stop = nl;
	put_clean(clean, sizeof(clean), msg, stop - msg);
	if (code && *clean)
		snprintf(out, size, "%s (ClickHouse error %d)", clean, code);
	else if (*clean)
		snprintf(out, size, "%s", clean);
	else
		snprintf(out, size, "HTTP error %d and no message", status);
	return code;
}

struct chclient *chclient_new(const struct chclient_url *u, const struct chclient_cred *cred,
			      struct error *e)
{
	static int global_done;
	struct chclient *c;

	if (!global_done) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
			error_set(e, "cannot initialize libcurl");
			return NULL;
		}
		global_done = 1;
	}
	c = xcalloc(1, sizeof(*c));
	c->url = *u;
	c->cred = *cred;
	if (!c->cred.limits.answer_max)
		c->cred.limits.answer_max = CHCLIENT_ANSWER_MAX;
	if (!c->cred.limits.stall_s)
		c->cred.limits.stall_s = CHCLIENT_STALL_S;
	c->curl = curl_easy_init();
	if (!c->curl) {
		free(c);
		error_set(e, "cannot initialize libcurl");
		return NULL;
	}
	return c;
}

struct chclient *chclient_new_child(const struct chclient_url *u,
				    const struct chclient_cred *cred, struct error *e)
{
	struct chclient *c = xcalloc(1, sizeof(*c));

	c->url = *u;
	c->child = chchild_new(u, cred, e);
	if (!c->child) {
		free(c);
		return NULL;
	}
	return c;	/* no password kept here: the child has it */
}

void chclient_free(struct chclient *c)
{
	if (!c)
		return;
	chchild_free(c->child);
	if (c->curl)
		curl_easy_cleanup(c->curl);
	curl_slist_free_all(c->pin);
	free(c->errbody.s);
	memset(c->cred.password, 0, sizeof(c->cred.password));
	free(c);
}

size_t chclient_bytes_sent(const struct chclient *c)
{
	return c->sent;
}

/* Each piece of the answer: an error answer's first 64 KiB into
 * c->errbody, a 200 answer to the sink or into c->out up to answer_max.
 * Returning less than the piece ends the transfer and closes the
 * connection. */
static size_t on_data(char *p, size_t size, size_t nmemb, void *arg)
{
	struct chclient *c = arg;
	size_t n = size * nmemb;
	long status = 0;

	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		sbuf_add(&c->errbody, p, MIN(n, ERR_MAX_BYTES - c->errbody.n));
		if (c->errbody.n < ERR_MAX_BYTES)
			return n;
		c->err_cut = 1;		/* the message is in what we have */
		return 0;
	}
	if (c->sink)
		return c->sink(p, size, nmemb, c->sink_arg);
	if (n > c->cred.limits.answer_max - c->out->n) {
		c->over = 1;
		return 0;
	}
	sbuf_add(c->out, p, n);
	return n;
}

/* curl's progress, at least once a second: nothing sent or received for
 * stall_s ends the request (curl's own low-speed limit averages over a
 * window of 5 s, which a request body alone keeps above 1 byte/s). */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct chclient *c = arg;
	uint64_t now = clock_monotonic_ns();

	(void)dltotal;
	(void)ultotal;
	if (dlnow != c->last_dl || ulnow != c->last_ul) {
		c->last_dl = dlnow;
		c->last_ul = ulnow;
		c->last_move_ns = now;
		return 0;
	}
	if ((now - c->last_move_ns) / 1e9 < c->cred.limits.stall_s)
		return 0;
	c->stalled = 1;
	return 1;
}

/* The line for a request curl ended with rc. */
static int failed(struct chclient *c, CURLcode rc, unsigned timeout_s, struct error *e)
{
	const char *why = c->curl_err[0] ? c->curl_err : curl_easy_strerror(rc);
	curl_off_t connect_us = 0, total_us = 0;

	if (c->over || rc == CURLE_FILESIZE_EXCEEDED)
		return error_set(e, "ClickHouse at %s: the answer is longer than %zu MiB, the "
				 "limit (STROBE_CLICKHOUSE_MAX_ANSWER_MB): connection closed",
				 c->url.base, c->cred.limits.answer_max >> 20);
	if (c->stalled)
		return error_set(e, "ClickHouse at %s: nothing received for %u s, the limit "
				 "(STROBE_CLICKHOUSE_STALL): connection closed", c->url.base,
				 c->cred.limits.stall_s);
	curl_easy_getinfo(c->curl, CURLINFO_CONNECT_TIME_T, &connect_us);
	curl_easy_getinfo(c->curl, CURLINFO_TOTAL_TIME_T, &total_us);
	if (rc == CURLE_OPERATION_TIMEDOUT && connect_us > 0 &&
	    total_us >= (curl_off_t)timeout_s * 1000000 - 500000)
		return error_set(e, "ClickHouse at %s: no whole answer within %u s, the limit "
				 "(STROBE_CLICKHOUSE_TIMEOUT): connection closed", c->url.base,
				 timeout_s);
	if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
	    rc == CURLE_OPERATION_TIMEDOUT)
		return error_set(e, "cannot reach ClickHouse at %s: %s: check the URL and "
				 "that the server runs", c->url.base, why);
	return error_set(e, "ClickHouse at %s: %s", c->url.base, why);
}

/* POST body (len bytes, gzip-compressed when gz) to the server with the
 * URL's query string extra, within timeout_s; the answer into *out (or to
 * c->sink). */
static int post(struct chclient *c, const char *extra, const void *body, size_t len, int gz,
		unsigned timeout_s, struct sbuf *out, struct error *e)
{
	struct curl_slist *hdr = NULL;
	struct sbuf url = { 0 };
	long status = 0;
	CURLcode rc;
	char *db;

	db = curl_easy_escape(c->curl, c->url.database, 0);
	sbuf_addf(&url, "%s?database=%s%s%s", c->url.base, db ? db : "", extra ? "&" : "",
		  extra ? extra : "");
	curl_free(db);
	curl_easy_reset(c->curl);
	c->curl_err[0] = 0;
	curl_easy_setopt(c->curl, CURLOPT_URL, url.s);
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, c->curl_err);
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->pin)
		curl_easy_setopt(c->curl, CURLOPT_RESOLVE, c->pin);
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, 10L);
	/* the whole request, however the server sends; and a server that
	 * stops sending fails it after stall_s (on_progress) */
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, (long)timeout_s);
	curl_easy_setopt(c->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c->curl, CURLOPT_XFERINFODATA, c);
	/* a Content-Length over the limit is refused before its body */
	if (!c->sink)
		curl_easy_setopt(c->curl, CURLOPT_MAXFILESIZE_LARGE,
				 (curl_off_t)c->cred.limits.answer_max);
	curl_easy_setopt(c->curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
	curl_easy_setopt(c->curl, CURLOPT_USERNAME, c->cred.user);
	curl_easy_setopt(c->curl, CURLOPT_PASSWORD, c->cred.password);
	curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	hdr = curl_slist_append(hdr, "Content-Type: text/plain; charset=UTF-8");
	hdr = curl_slist_append(hdr, "Expect:");
	if (gz)
		hdr = curl_slist_append(hdr, "Content-Encoding: gzip");
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, hdr);
	/* no Accept-Encoding: curl decodes nothing, so an answer's size in
	 * memory is its size on the wire */
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, c);
	c->out = out;
	c->over = c->err_cut = c->stalled = 0;
	c->errbody.n = 0;
	c->last_dl = c->last_ul = -1;
	rc = curl_easy_perform(c->curl);
	c->out = NULL;
	curl_slist_free_all(hdr);
	free(url.s);
	if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && c->err_cut))
		return failed(c, rc, timeout_s, e);
	c->sent += len;
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		char line[480];
		const char *b = c->errbody.s ? c->errbody.s : "";
		int code = chclient_error_line((int)status, b, c->errbody.n, line, sizeof(line));

		if (code == 193 || code == 516 || status == 401)
			return error_set(e, "ClickHouse at %s refused user '%s': %s: set "
					 "STROBE_CLICKHOUSE_USER and STROBE_CLICKHOUSE_PASSWORD "
					 "(or STROBE_CLICKHOUSE_PASSWORD_FILE)", c->url.base,
					 c->cred.user, line);
		return error_set(e, "ClickHouse at %s: %s", c->url.base, line);
	}
	return 0;
}

int chclient_query(struct chclient *c, const char *sql, struct sbuf *out, struct error *e)
{
	struct sbuf tmp = { 0 };
	int ret;

	if (c->child) {
		ret = chchild_query(c->child, sql, out ? out : &tmp, e);
		free(tmp.s);
		return ret;
	}

	/* the whole answer before the status: an error past the first
	 * rows is then an HTTP error, not a 200 with the text at its end */
	ret = post(c, "wait_end_of_query=1", sql, strlen(sql), 0, CHCLIENT_TIMEOUT(c),
		   out ? out : &tmp, e);
	free(tmp.s);
	if (ret < 0 && out) {
		free(out->s);
		memset(out, 0, sizeof(*out));
	}
	return ret;
}

static int gzip_buf(const void *data, size_t len, unsigned char **outp, size_t *outlen)
{
	z_stream z;
	size_t cap;
	unsigned char *o;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	cap = deflateBound(&z, len) + 64;
	o = xmalloc(cap);
	z.next_in = (unsigned char *)data;
	z.avail_in = len;
	z.next_out = o;
	z.avail_out = cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		free(o);
		return -1;
	}
	*outlen = z.total_out;
	*outp = o;
	deflateEnd(&z);
	return 0;
}

int chclient_insert_gz(struct chclient *c, const char *insert, const char *settings,
		       const void *gz, size_t gzlen, struct error *e)
{
	struct sbuf extra = { 0 }, out = { 0 };
	char *q;
	int ret;

	q = curl_easy_escape(c->curl, insert, 0);
	sbuf_addf(&extra, "query=%s%s%s", q ? q : "", settings ? "&" : "", settings ? settings : "");
	curl_free(q);
	ret = post(c, extra.s, gz, gzlen, 1, CHCLIENT_TIMEOUT(c), &out, e);
	free(extra.s);
	free(out.s);
	return ret;
}

int chclient_insert(struct chclient *c, const char *insert, const char *settings,
		    const void *data, size_t len, struct error *e)
{
	unsigned char *gz;
	size_t gzlen;
	int ret;

	if (gzip_buf(data, len, &gz, &gzlen) < 0)
		return error_set(e, "cannot compress %zu bytes with zlib", len);
	if (c->child) {
		/* counted here: what the child says it sent is not trusted */
		ret = chchild_insert(c->child, insert, settings, gz, gzlen, e);
		if (ret == 0)
			c->sent += gzlen;
	} else {
		ret = chclient_insert_gz(c, insert, settings, gz, gzlen, e);
	}
	free(gz);
	return ret;
}

/* The host of url.base, written into host (size bytes), and its port. */
static int base_host(const struct chclient_url *u, char *host, size_t size, unsigned *port)
{
	int tls = !strncmp(u->base, "https://", 8);
	const char *h = u->base + (tls ? 8 : 7), *end = h + strcspn(h, "/"), *colon;
	size_t n;

	*port = tls ? 443 : 80;
	if (*h == '[')
		return -1;	/* an IPv6 address: nothing to resolve */
	colon = memchr(h, ':', (size_t)(end - h));
	if (colon) {
		*port = (unsigned)strtoul(colon + 1, NULL, 10);
		end = colon;
	}
	n = (size_t)(end - h);
	if (!n || n >= size)
		return -1;
	memcpy(host, h, n);
	host[n] = 0;
	return 0;
}

int chclient_pin_host(struct chclient *c, struct error *e)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG };
	struct addrinfo *res = NULL;
	struct in6_addr a6;
	struct sbuf line = { 0 };
	char host[256], addr[INET6_ADDRSTRLEN];
	unsigned port;
	int rc, n = 0;

	if (c->pinned || c->child)
		return 0;
	if (base_host(&c->url, host, sizeof(host), &port) < 0 ||
	    inet_pton(AF_INET, host, &a6) == 1) {
		c->pinned = 1;
		return 0;
	}
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc)
		return error_set(e, "cannot reach ClickHouse at %s: cannot resolve %s: %s: check "
				 "the URL and that the server runs", c->url.base, host,
				 gai_strerror(rc));
	sbuf_addf(&line, "%s:%u:", host, port);
	for (struct addrinfo *ai = res; ai && n < 8; ai = ai->ai_next) {
		const void *p = ai->ai_family == AF_INET ?
			(const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr :
			ai->ai_family == AF_INET6 ?
			(const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr : NULL;

		if (!p || !inet_ntop(ai->ai_family, p, addr, sizeof(addr)))
			continue;
		sbuf_addf(&line, ai->ai_family == AF_INET6 ? "%s[%s]" : "%s%s", n ? "," : "", addr);
		n++;
	}
	freeaddrinfo(res);
	if (n)
		c->pin = curl_slist_append(NULL, line.s);
	free(line.s);
	if (!n)
		return error_set(e, "cannot reach ClickHouse at %s: no address for %s",
				 c->url.base, host);
	c->pinned = 1;
	return 0;
}

/* ---- chclient_query_lines(): the answer read as it comes ---- */

/* No row strobe asks for comes near this: a longer line is not one. */
#define LINE_MAX_BYTES	(1U << 20)

struct lines {
	struct chclient *c;
	struct sbuf part;		/* a line begun in an earlier piece */
	int (*line)(void *arg, char *line, struct error *e);
	void *arg;
	struct error *e;
	int failed;			/* line() failed: e says why */
};

static int lines_one(struct lines *l, char *p)
{
	if (l->line(l->arg, p, l->e) < 0) {
		l->failed = 1;
		return -1;
	}
	return 0;
}

static size_t on_lines(char *p, size_t size, size_t nmemb, void *arg)
{
	struct lines *l = arg;
	size_t n = size * nmemb;
	char *end = p + n, *nl;

	while (p < end) {
		size_t len;

		nl = memchr(p, '\n', (size_t)(end - p));
		len = (size_t)((nl ? nl : end) - p);
		if (l->part.n + len > LINE_MAX_BYTES) {
			error_set(l->e, "ClickHouse at %s: a line of the answer is longer than "
				  "%u bytes: not an answer strobe asked for", l->c->url.base,
				  LINE_MAX_BYTES);
			l->failed = 1;
			return 0;
		}
		if (!nl)
			break;
		if (l->part.n) {
			sbuf_add(&l->part, p, (size_t)(nl - p));
			if (lines_one(l, l->part.s) < 0)
				return 0;
			l->part.n = 0;
		} else {
			*nl = 0;
			if (lines_one(l, p) < 0)
				return 0;
		}
		p = nl + 1;
	}
	if (p < end)
		sbuf_add(&l->part, p, (size_t)(end - p));
	return n;
}

int chclient_query_lines(struct chclient *c, const char *sql,
			 int (*line)(void *arg, char *line, struct error *e), void *arg,
			 struct error *e)
{
	struct error lerr = { "" };
	struct lines l = { .c = c, .line = line, .arg = arg, .e = &lerr };
	unsigned t = c->cred.limits.timeout_s ? c->cred.limits.timeout_s : CHCLIENT_LINES_TIMEOUT_S;
	int ret;

	if (c->child)
		return error_set(e, "ClickHouse at %s: reading an answer line by line is not "
				 "done in the fleet child", c->url.base);
	c->sink = on_lines;
	c->sink_arg = &l;
	ret = post(c, NULL, sql, strlen(sql), 0, t, NULL, e);
	c->sink = NULL;
	c->sink_arg = NULL;
	if (l.failed) {
		*e = lerr;	/* the transfer was stopped: line()'s reason */
		ret = -1;
	}
	else if (!ret && l.part.n)
		ret = error_set(e, "ClickHouse at %s: the answer ends in the middle of a "
				"line: %.200s", c->url.base, l.part.s);
	free(l.part.s);
	return ret;
}
