/*
 * symworker_int.h - the private parts of the symbol worker (symworker.h
 * says what it is for), shared by its three files:
 *
 *   symworker.c  the parent's side: starting a worker, each request with
 *                its deadline, reaping and respawning, the handles of the
 *                binaries, and the checks of every answer (untrusted);
 *   symchild.c   becoming the worker: the forked child executed afresh
 *                (symworker_exec_main) or not, dropping every right
 *                (sandbox.h), the seccomp filter, then symserve_run();
 *   symserve.c   the worker's requests: its loop, one binary's symbols
 *                read with symtab.c, the answers it sends.
 *
 * The wire protocol: messages are SOCK_SEQPACKET datagrams.  A request is
 * struct wreq (its offsets only as many as n), with at most one descriptor
 * (SCM_RIGHTS); OPEN, DEBUG, MINI and the start-up hello answer a struct
 * winfo, LOOKUP a count k (1 <= k <= n) and the names of the first k
 * offsets (a u16 length, NAME_NONE for none, then the bytes, no NUL): as
 * many as fit in REPLY_MAX bytes, the parent asks again for the rest.
 * BUILD_ID answers a struct wbid; SELF a struct symworker_self; CLOSE has
 * no answer; EXT is the caller's own (symworker_call, EXT_* below).
 *
 * Nothing here is for other callers: symworker.h is the interface.
 */
#ifndef STROBE_SYMWORKER_INT_H
#define STROBE_SYMWORKER_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "hashkey.h"
#include "symworker.h"

enum { OP_HELLO, OP_OPEN, OP_DEBUG, OP_MINI, OP_LOOKUP, OP_CLOSE, OP_SELF, OP_EXT, OP_FD,
       OP_BUILD_ID };
/* The worker's messages during an OP_EXT request: a u32 kind, then the
 * key of a descriptor it asks for (u64, answered by an OP_FD request with
 * the descriptor or none), or the answer. */
enum { EXT_NEED = 1, EXT_DONE = 2 };

#define NAME_NONE	0xffff
#define ERR_MAX		256
/* one reply: a count, then names; always room for one name of
 * SYMWORKER_NAME_MAX behind SYMWORKER_BATCH - 1 empty ones, and within an
 * AF_UNIX socket's default send buffer (net.core.wmem_default, 208 KiB) */
#define REPLY_MAX	(128 * 1024)
_Static_assert(4 + 2 * SYMWORKER_BATCH + SYMWORKER_NAME_MAX <= REPLY_MAX, "a reply holds a name");

struct wreq {
	uint32_t op, h, n, raw;
	uint64_t off[SYMWORKER_BATCH];
};
#define WREQ_HEAD	offsetof(struct wreq, off)

struct winfo {
	int32_t status;		/* OPEN: 0 or -1; DEBUG, MINI: 1, 0 or -1 */
	uint32_t nsyms, has_symtab, link_crc;
	char link[SYMWORKER_LINK_MAX];
	char err[ERR_MAX];
};

struct wbid {			/* BUILD_ID: the length (0: none), the bytes */
	int32_t n;
	uint8_t id[BUILD_ID_MAX];
};

/* What a worker is started with: the parent's (symworker_new) or, in a
 * worker executed afresh, its command line's (symworker_exec_main). */
struct wconf {
	int drop;		/* started as root: change ids */
	uid_t uid;
	gid_t gid;
	uint64_t mem_max;	/* RLIMIT_AS */
	unsigned cpu_s;		/* RLIMIT_CPU */
	const struct symworker_ext *ext;	/* NULL: none */
	char comm[16];
};

/* The worker's command line, for selfexec_run: built before the fork. */
struct wargv {
	char num[5][24];
	char *argv[10];
};

/* symchild.c: c's command line in a (NULL when workers are not executed
 * afresh: selfexec_enabled()). */
char *const *symchild_argv(const struct wconf *c, struct wargv *a);
/* symchild.c: the forked child, its socket sock: executed afresh when
 * argv (symchild_argv), else the copy of the parent drops its rights and
 * serves.  Never returns. */
void __attribute__((noreturn)) symchild_main(const struct wconf *c, int sock,
					     char *const *argv);

/* symserve.c: send a struct winfo (the hello, or an info answer) of st
 * (NULL: none), with status and, when status < 0, err's message. */
struct symtab;
void symserve_info(int sock, struct symtab *st, int status, const struct error *err);
/* symserve.c: serve requests on sock until the parent is gone; seccomp_on
 * is what OP_SELF reports. */
void __attribute__((noreturn)) symserve_run(int sock, int seccomp_on,
					    const struct symworker_ext *ext);

#endif
