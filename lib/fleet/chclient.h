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

/*
 * What one request may cost, whatever the server does (doc/FLEET.md,
 * "Security"): a server is hostile input, and strobed --push runs as root.
 * 0 in a field: its default.  Answers are never decoded (no
 * Accept-Encoding), so their size on the wire is their size in memory.
 */
struct chclient_limits {
	size_t answer_max;	/* bytes of one answer held in memory (chclient_query);
				 * an error answer is read to 64 KiB only */
	unsigned timeout_s;	/* the whole request, connection to last byte */
	unsigned stall_s;	/* nothing received (under 1 byte/s) for this long */
};

#define CHCLIENT_ANSWER_MAX	(64U << 20)	/* STROBE_CLICKHOUSE_MAX_ANSWER_MB */
#define CHCLIENT_ANSWER_MAX_MB_MAX	16384U
#define CHCLIENT_TIMEOUT_S	600U	/* STROBE_CLICKHOUSE_TIMEOUT */
#define CHCLIENT_LINES_TIMEOUT_S 3600U	/* ... for chclient_query_lines() */
#define CHCLIENT_TIMEOUT_S_MAX	86400U
#define CHCLIENT_STALL_S	60U	/* STROBE_CLICKHOUSE_STALL */

struct chclient_cred {
	char user[128];
	char password[256];
	struct chclient_limits limits;
};

/* The user (STROBE_CLICKHOUSE_USER, default "default") and password
 * (STROBE_CLICKHOUSE_PASSWORD, or the first line of the file named by
 * STROBE_CLICKHOUSE_PASSWORD_FILE, which must be a regular file that
 * neither group nor others may read; none: empty), and the limits:
 * STROBE_CLICKHOUSE_MAX_ANSWER_MB (1..16384), STROBE_CLICKHOUSE_TIMEOUT and
 * STROBE_CLICKHOUSE_STALL (seconds, 1..86400; unset: the defaults above).
 * 0, or -1 with e set. */
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

/* The same client, its requests made by a child process without rights
 * (chchild.h), for strobed --push as root: chclient_query() and
 * chclient_insert() forward to it (the rows compressed and counted here),
 * chclient_query_lines() fails.  NULL with e set when the child did not
 * start. */
struct chclient *chclient_new_child(const struct chclient_url *u,
				    const struct chclient_cred *cred, struct error *e);
void chclient_free(struct chclient *c);

/* Resolve the server's host now, in this thread (getaddrinfo), and use
 * those addresses for every later request: libcurl's resolver would run in
 * a thread, which a process limited to RLIMIT_NPROC 0 cannot start.  A host
 * given as an address needs nothing.  Done once; 0, or -1 with e set. */
int chclient_pin_host(struct chclient *c, struct error *e);

/* Run sql; its output (TabSeparated unless sql says FORMAT) into *out
 * (appended; free(out->s) when done).  An answer longer than the limit
 * (answer_max) fails the request and closes the connection.  0, or -1
 * with e set. */
int chclient_query(struct chclient *c, const char *sql, struct sbuf *out, struct error *e);

/* Run sql and call line() with each line of its answer (NUL-terminated,
 * without its newline, writable) as it arrives, never holding the whole
 * answer: for answers too big for memory.  The answer is not waited for
 * (no wait_end_of_query): an error the server meets after the first rows
 * comes as text in the answer, which line() must refuse (a line that is
 * not a row of the expected form).  0; -1 with e set on a server error
 * or when line() returns -1 (e then line()'s).  The answer's size is not
 * limited (one line is, to 1 MiB), its time is: the request's deadline is
 * CHCLIENT_LINES_TIMEOUT_S unless STROBE_CLICKHOUSE_TIMEOUT says. */
int chclient_query_lines(struct chclient *c, const char *sql,
			 int (*line)(void *arg, char *line, struct error *e), void *arg,
			 struct error *e);

/* Run "INSERT INTO table (cols) FORMAT TabSeparated" (insert) with the
 * len bytes of rows at data, gzip-compressed, settings given as
 * "name=value&..." (NULL: none) in the URL.  0, or -1 with e set. */
int chclient_insert(struct chclient *c, const char *insert, const char *settings,
		    const void *data, size_t len, struct error *e);

/* chclient_insert() of rows gzip-compressed already (gz, gzlen bytes). */
int chclient_insert_gz(struct chclient *c, const char *insert, const char *settings,
		       const void *gz, size_t gzlen, struct error *e);

/* Bytes sent in request bodies (compressed) since chclient_new(). */
size_t chclient_bytes_sent(const struct chclient *c);

#endif
