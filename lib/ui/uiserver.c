/*
 * uiserver.c - the HTTP side of 'strobe ui' (uiserver.h): libmicrohttpd
 * parses HTTP; this file decides who may ask (the token, the Host header,
 * the method), serves the built-in page files and hands /api/ to uiapi.c
 * under one lock, since a source is not thread-safe.
 */
#include "config.h"
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "uiapi.h"
#include "uiassets.h"
#include "uiserver.h"

struct ui_server {
	struct MHD_Daemon *mhd;
	struct source *src;
	pthread_mutex_t lock;		/* one query at a time on src */
	unsigned port;
	char token[UI_TOKEN_LEN + 1];
	char host[3][80];		/* the Host values accepted */
	int nhost;
};

#define MSG_TOKEN	"strobe ui: a token is needed: open the URL strobe ui printed\n"
#define MSG_HOST	"strobe ui: bad Host header: open the URL strobe ui printed (127.0.0.1 or localhost)\n"
#define MSG_METHOD	"strobe ui: only GET and HEAD are served\n"
#define MSG_NOTFOUND	"strobe ui: no such page: open the URL strobe ui printed\n"
#define MSG_ARGS	"strobe ui: too many or too long query parameters\n"

#define CSP "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'"

/* Compare a with the token in time independent of where they differ. */
static int token_ok(const struct ui_server *s, const char *a)
{
	unsigned char d = 0;

	if (!a || strlen(a) != UI_TOKEN_LEN)
		return 0;
	for (size_t i = 0; i < UI_TOKEN_LEN; i++)
		d |= (unsigned char)a[i] ^ (unsigned char)s->token[i];
	return d == 0;
}

static int host_ok(const struct ui_server *s, const char *h)
{
	if (!h)
		return 0;
	for (int i = 0; i < s->nhost; i++)
		if (!strcasecmp(h, s->host[i]))
			return 1;
	return 0;
}

/* Queue an answer of len bytes (copied) with the headers every answer has. */
static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *type,
			      const void *body, size_t len, int api, const char *cookie)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Content-Security-Policy", CSP);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Cache-Control", api ? "no-store" : "no-cache");
	if (cookie)
		MHD_add_response_header(r, "Set-Cookie", cookie);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result answer_text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return answer(c, status, "text/plain; charset=utf-8", msg, strlen(msg), 1, NULL);
}

/* MHD_get_connection_values()'s iterator: the query's arguments, in order. */
static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	struct uiapi_args *a = cls;

	(void)kind;
	if (a->n == UIAPI_MAX_ARGS) {
		a->overflow = 1;
		return MHD_NO;
	}
	a->key[a->n] = key;
	a->val[a->n++] = value ? value : "";
	return MHD_YES;
}

static const struct ui_asset *asset_find(const char *url)
{
	if (!strcmp(url, "/"))
		url = "/index.html";
	for (size_t i = 0; i < ui_nassets; i++)
		if (!strcmp(url, ui_assets[i].path))
			return &ui_assets[i];
	return NULL;
}

/* Answer an API request (path after "/api/"), under the lock. */
static enum MHD_Result answer_api(struct ui_server *s, struct MHD_Connection *c,
				  const char *path, const char *cookie)
{
	struct uiapi_args a = { 0 };
	struct uiapi_reply r = { 0 };
	enum MHD_Result ret;
	int found;

	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &a);
	if (a.overflow)
		return answer_text(c, 400, MSG_ARGS);
	pthread_mutex_lock(&s->lock);
	found = uiapi_handle(s->src, path, &a, &r);
	pthread_mutex_unlock(&s->lock);
	if (!found)
		return answer_text(c, 404, MSG_NOTFOUND);
	ret = answer(c, r.status, r.type, r.body ? r.body : "", r.len, 1, cookie);
	free(r.body);
	return ret;
}

/* MHD's access handler: every request comes here once its headers are in. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_size, void **ptr)
{
	struct ui_server *s = cls;
	const char *qtok, *tok;
	const struct ui_asset *as;
	char cookie[128];
	int by_query;

	(void)version;
	(void)upload_data;
	/* Answered on the first call, when the headers are in: a body is
	 * never read (MHD then closes the connection after the answer). */
	if (*ptr) {
		*upload_size = 0;
		return MHD_NO;
	}
	*ptr = s;
	if (!host_ok(s, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host")))
		return answer_text(c, 403, MSG_HOST);
	qtok = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
	by_query = token_ok(s, qtok);
	tok = by_query ? qtok : MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Strobe-Token");
	if (!by_query && !token_ok(s, tok))
		tok = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "strobe_token");
	if (!by_query && !token_ok(s, tok))
		return answer_text(c, 403, MSG_TOKEN);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return answer_text(c, 405, MSG_METHOD);
	snprintf(cookie, sizeof(cookie), "strobe_token=%s; HttpOnly; SameSite=Strict; Path=/",
		 s->token);
	if (!strncmp(url, "/api/", 5))
		return answer_api(s, c, url + 5, by_query ? cookie : NULL);
	if (!(as = asset_find(url)))
		return answer_text(c, 404, MSG_NOTFOUND);
	return answer(c, 200, as->type, as->data, as->len, 0, by_query ? cookie : NULL);
}

/* The Host values a browser sends for this server: the listen address
 * itself, and for a loopback one localhost and the other loopback. */
static void hosts_set(struct ui_server *s, const struct sockaddr *addr)
{
	char ip[INET6_ADDRSTRLEN] = "";

	if (addr->sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)addr)->sin6_addr, ip,
			  sizeof(ip));
		snprintf(s->host[s->nhost++], sizeof(s->host[0]), "[%s]:%u", ip, s->port);
	} else {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)addr)->sin_addr, ip, sizeof(ip));
		snprintf(s->host[s->nhost++], sizeof(s->host[0]), "%s:%u", ip, s->port);
	}
	snprintf(s->host[s->nhost++], sizeof(s->host[0]), "localhost:%u", s->port);
	if (strcmp(ip, "127.0.0.1"))
		snprintf(s->host[s->nhost++], sizeof(s->host[0]), "127.0.0.1:%u", s->port);
	else
		snprintf(s->host[s->nhost++], sizeof(s->host[0]), "[::1]:%u", s->port);
}

struct ui_server *ui_server_start(struct source *src, const struct sockaddr *addr,
				  socklen_t addrlen, struct error *e)
{
	struct ui_server *s = xcalloc(1, sizeof(*s));
	unsigned char rnd[UI_TOKEN_LEN / 2];
	const union MHD_DaemonInfo *info;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD;
	size_t got = 0;

	while (got < sizeof(rnd)) {
		ssize_t n = getrandom(rnd + got, sizeof(rnd) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			error_set(e, "cannot draw a random token: %s", strerror(errno));
			free(s);
			return NULL;
		}
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(s->token + 2 * i, 3, "%02x", rnd[i]);
	s->src = src;
	pthread_mutex_init(&s->lock, NULL);
	if (addr->sa_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	s->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
				  MHD_OPTION_SOCK_ADDR, addr,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned)32,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
				  MHD_OPTION_END);
	(void)addrlen;
	if (!s->mhd) {
		error_set(e, "cannot listen there: %s: give another --listen ADDR:PORT",
			  strerror(errno ? errno : EADDRINUSE));
		pthread_mutex_destroy(&s->lock);
		free(s);
		return NULL;
	}
	info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : 0;
	hosts_set(s, addr);
	return s;
}

unsigned ui_server_port(const struct ui_server *s)
{
	return s->port;
}

const char *ui_server_token(const struct ui_server *s)
{
	return s->token;
}

void ui_server_stop(struct ui_server *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->mhd);
	uiapi_release();
	pthread_mutex_destroy(&s->lock);
	free(s);
}
