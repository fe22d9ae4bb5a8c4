/*
 * chchild.h - the ClickHouse client of strobed --push in a child process
 * without privileges (issue 30: nothing a remote server controls is parsed
 * in a process with root's rights).  libcurl (HTTP, TLS, chunked decoding)
 * and the reading of the server's answers run in the child, as the
 * workers' user (sandbox_user: _strobe, else nobody), executed afresh
 * from strobed's own file when strobed allows it (selfexec.h), with
 * no capability; root gets an answer only once the child checked it to be
 * printable text, and checks it again itself (a child the server took
 * over may send anything).
 *
 * The parent (strobed's push thread, through chclient_new_child()) and
 * the child talk over a SOCK_STREAM socketpair in frames: a 16-byte head
 * (kind, payload length) and the payload.  The parent sends HELLO first
 * (the URL, credentials, limits and whom to become), then QUERY or INSERT
 * requests one at a time; the child answers each, and HELLO, with ANSWER:
 * a status, at most CHCHILD_ERR_MAX bytes of error line and, for a QUERY,
 * the answer's bytes.
 *
 * Every wait of the parent has a deadline (the request's timeout plus
 * CHCHILD_MARGIN_MS); a child that dies, hangs past it or sends a frame
 * that is malformed or larger than allowed is killed and reaped, and that
 * request fails with one line.  The next request starts a new child, at
 * most CHCHILD_RESTARTS times after the first.
 */
#ifndef STROBE_CHCHILD_H
#define STROBE_CHCHILD_H

#include <stddef.h>
#include <sys/types.h>
#include "chclient.h"
#include "util.h"

#define CHCHILD_ERR_MAX		512		/* bytes of one error line */
#define CHCHILD_REQUEST_MAX	(256U << 20)	/* one request (sql, or an insert's gzip rows) */
#define CHCHILD_MARGIN_MS	5000		/* past the request's own timeout */
#define CHCHILD_START_MS	10000		/* from the fork to the child's ready answer */
#define CHCHILD_RESTARTS	4		/* new children after the first, per chchild */

struct chchild;

/*
 * Start a child for the server u with cred (copied; its limits apply in the
 * child, its timeout to the parent's deadlines too).  As root the child
 * becomes nobody (looked up here, before the fork).  NULL with e set when
 * it could not start or drop its rights.
 */
struct chchild *chchild_new(const struct chclient_url *u, const struct chclient_cred *cred,
			    struct error *e);

/* Kill and reap the child; forget the password. */
void chchild_free(struct chchild *k);

/* chclient_query() in the child: the checked answer appended to *out.
 * 0, or -1 with e set (*out then untouched). */
int chchild_query(struct chchild *k, const char *sql, struct sbuf *out, struct error *e);

/* chclient_insert_gz() in the child: rows gzip-compressed already (by the
 * parent, which counts them).  0, or -1 with e set. */
int chchild_insert(struct chchild *k, const char *insert, const char *settings,
		   const void *gz, size_t gzlen, struct error *e);

/* The running child's pid (0: none now; the next request starts one). */
pid_t chchild_pid(const struct chchild *k);

/* How many children were started. */
unsigned chchild_started(const struct chchild *k);

/*
 * Whether the n bytes at s are an answer root may parse: every byte
 * printable ASCII (0x20..0x7e), TAB or newline.  What the push asks for
 * comes back as numbers, hex hashes, binary keys and offsets only
 * (doc/SECURITY.md).  0, or -1 with e set to one line.
 */
int chchild_check_answer(const char *s, size_t n, struct error *e);

/*
 * The child's whole life, on sock (any descriptor; it becomes 3 and every
 * other is closed, signals reset): read HELLO, drop every right
 * (sandbox.h), make a chclient (its server's addresses resolved here once,
 * chclient_pin_host(): no resolver thread) and serve requests until the
 * parent hangs up.  Uses nothing of
 * the memory it was forked with (all it needs comes in HELLO), so it could
 * as well run in a freshly exec'ed process.  Never returns.
 */
void chchild_serve(int sock) __attribute__((noreturn));

/* The child's entry point when the program executes it afresh
 * (selfexec.h): main() calls it first when argv[1] is SELFEXEC_ARG and
 * argv[2] "fleet"; it never returns for that command line, 2 otherwise.
 * strobed does so; a program that never calls selfexec_init() (the unit
 * tests) forks the child as a copy, which runs chchild_serve() all the
 * same. */
int chchild_exec_main(int argc, char **argv);

#endif
