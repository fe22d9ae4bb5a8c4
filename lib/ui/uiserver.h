/*
 * uiserver.h - the HTTP server of 'strobe ui': libmicrohttpd with one
 * polling thread, listening where asked (127.0.0.1 by default), that
 * refuses any request without the session's random token (403), with a
 * Host header other than its own address (DNS rebinding: 403) or another
 * method than GET and HEAD (405); serves the page's files built into the
 * binary (uiassets.h) and the API (uiapi.h), one query at a time.
 */
#ifndef STROBE_UISERVER_H
#define STROBE_UISERVER_H

#include <netinet/in.h>
#include <sys/socket.h>
#include "source.h"
#include "util.h"

struct ui_server;

#define UI_TOKEN_LEN	32		/* hex characters: 128 random bits */

/*
 * Start serving src on addr (a sockaddr_in or sockaddr_in6; port 0: an
 * ephemeral one), with a fresh token (getrandom).  src stays the caller's
 * until ui_server_stop().  The server, or NULL with e set (one line).
 */
struct ui_server *ui_server_start(struct source *src, const struct sockaddr *addr,
				  socklen_t addrlen, struct error *e);

/* The port it listens on, and its token (UI_TOKEN_LEN hex characters). */
unsigned ui_server_port(const struct ui_server *s);
const char *ui_server_token(const struct ui_server *s);

/* Stop it: no request runs after this returns. */
void ui_server_stop(struct ui_server *s);

#endif
