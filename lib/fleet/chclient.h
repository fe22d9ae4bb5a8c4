/*
 * chclient.h - a client of ClickHouse's HTTP interface, for 'strobe push'
 * (doc/FLEET.md): queries POSTed as the request body, inserts with the
 * query in the URL and their TabSeparated rows gzip-compressed in the
 * body (Content-Encoding: gzip, which 18.16 decodes), over one libcurl
 * handle kept alive between requests.
 *
 * Credentials are never in the URL (chclient_url_parse() refuses
 * user:password@): they come from the environment (chclient_credentials())
 * and go as HTTP basic authentication.  No error message ever holds the
 * password.  Every failure is one line in a struct error, the server's
 * exception text reduced to its message and code (chclient_error_line()).
 */
#ifndef STROBE_CHCLIENT_H
#define STROBE_CHCLIENT_H

#include <stddef.h>
#include "util.h"

struct chclient_url {
	char base[512];		/* scheme://host[:port]/path, no query */
	char database[128];	/* from ?database=; "default" when absent */
};

/* Parse "http[s]://host[:port][/path][?database=NAME]".  Refuses other
 * schemes, credentials in the URL, other query parameters and database
 * names that are not [A-Za-z0-9_]+.  0, or -1 with e set. */
int chclient_url_parse(const char *url, struct chclient_url *u, struct error *e);

struct chclient_cred {
	char user[128];
	char password[256];
};

/* The user (STROBE_CLICKHOUSE_USER, default "default") and password
 * (STROBE_CLICKHOUSE_PASSWORD, or the first line of the file named by
 * STROBE_CLICKHOUSE_PASSWORD_FILE, which must be a regular file that
 * neither group nor others may read; none: empty).  0, or -1 with e set. */
int chclient_credentials(struct chclient_cred *c, struct error *e);

/* One line for a failed request: status is the HTTP status (0: none),
 * body the server's answer (an exception text such as "Code: 193,
 * e.displayText() = DB::Exception: Wrong password for user default,
 * e.what() = DB::Exception").  Writes "MESSAGE (ClickHouse error CODE)"
 * (or the first line of the body, or "HTTP error STATUS") into out,
 * printable ASCII only, at most size - 1 bytes; returns the code (0 when
 * none was found). */
int chclient_error_line(int status, const char *body, size_t len, char *out, size_t size);

struct chclient;

struct chclient *chclient_new(const struct chclient_url *u, const struct chclient_cred *cred,
			      struct error *e);
void chclient_free(struct chclient *c);

/* Run sql; its output (TabSeparated unless sql says FORMAT) into *out
 * (appended; free(out->s) when done).  0, or -1 with e set. */
int chclient_query(struct chclient *c, const char *sql, struct sbuf *out, struct error *e);

/* Run sql and call line() with each line of its answer (NUL-terminated,
 * without its newline, writable) as it arrives, never holding the whole
 * answer: for answers too big for memory.  The answer is not waited for
 * (no wait_end_of_query): an error the server meets after the first rows
 * comes as text in the answer, which line() must refuse (a line that is
 * not a row of the expected form).  0; -1 with e set on a server error
 * or when line() returns -1 (e then line()'s). */
int chclient_query_lines(struct chclient *c, const char *sql,
			 int (*line)(void *arg, char *line, struct error *e), void *arg,
			 struct error *e);

/* Run "INSERT INTO table (cols) FORMAT TabSeparated" (insert) with the
 * len bytes of rows at data, gzip-compressed, settings given as
 * "name=value&..." (NULL: none) in the URL.  0, or -1 with e set. */
int chclient_insert(struct chclient *c, const char *insert, const char *settings,
		    const void *data, size_t len, struct error *e);

/* Bytes sent in request bodies (compressed) since chclient_new(). */
size_t chclient_bytes_sent(const struct chclient *c);

#endif
