/*
 * symworker.h - symbol reading in a process without privileges.
 *
 * What for: strobed runs as root, and the binaries in its cache are files
 * users control (doc/SECURITY.md, "Which process parses what").  When
 * strobed itself must name code (strobed --push), libbfd, the xz decoder
 * of MiniDebugInfo and the debug files' symbol tables must not parse
 * those bytes in root's process.  A symworker is a child process that does
 * that parsing for its parent:
 *
 *  - forked from the caller, it drops for good, before it reads anything,
 *    to an unprivileged uid and gid (opts.user, default sandbox_user(NULL): _strobe, else nobody) with no
 *    supplementary groups (setgroups(0), setresgid, setresuid; only when
 *    started as root: otherwise it keeps the caller's uid), clears the
 *    capability bounding set, sets PR_SET_NO_NEW_PRIVS and not dumpable,
 *    and checks with capget() that no capability is left (else it exits
 *    without serving);
 *  - it keeps no descriptor but its end of a socketpair (SOCK_SEQPACKET),
 *    has RLIMIT_AS (opts.mem_max, default 1 GiB), RLIMIT_CPU (opts.cpu_s,
 *    default 60 s), RLIMIT_NOFILE, RLIMIT_FSIZE 0 and no core file, and
 *    where libseccomp was built in, a seccomp filter that lets it read,
 *    map and send on descriptors it was given but not open a path, make a
 *    socket, connect, execute, ptrace, kill or change ids (they fail with
 *    EPERM);
 *  - the parent opens every file itself (by handle, as root may) and
 *    passes the descriptor (SCM_RIGHTS); the worker never opens a path.
 *    A debug file is found by the parent too (debuginfo.h) and passed the
 *    same way; MiniDebugInfo is decoded in the worker (into a memfd).
 *
 * Lookups go in batches of at most SYMWORKER_BATCH offsets; each name is
 * at most SYMWORKER_NAME_MAX bytes (longer names are cut by the worker).
 * What the worker answers is untrusted too: every reply is checked for its
 * size, counts, name lengths and NUL bytes, and one that fails is treated
 * like a crash.
 *
 * Failure is per binary: a request that the worker does not answer within
 * opts.timeout_ms (default SYMWORKER_TIMEOUT_MS) gets the worker killed
 * (SIGKILL) and reaped; a worker that dies (crash, RLIMIT, seccomp kill)
 * is reaped; either way the binary the request was about is marked failed
 * (every later call on its handle fails at once, e says why) and the next
 * request starts a new worker, which reopens the other binaries it had
 * open from the descriptors the parent kept.  At most opts.max_restarts
 * (default SYMWORKER_RESTARTS) new workers are started over a symworker's
 * life; after that every request fails.  symworker_stats() counts it all.
 *
 * Functions return 0 (or a handle, a count) on success and -1 with e set;
 * nothing is printed.  Not thread-safe: one thread per symworker.  The
 * caller must not reap the worker (no waitpid(-1) on it) nor ignore
 * SIGCHLD.
 */
#ifndef STROBE_SYMWORKER_H
#define STROBE_SYMWORKER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "util.h"

#define SYMWORKER_BATCH		64	/* offsets per lookup message */
#define SYMWORKER_NAME_MAX	65534	/* bytes of a name, without its NUL */
#define SYMWORKER_TIMEOUT_MS	10000
#define SYMWORKER_RESTARTS	4
#define SYMWORKER_HANDLES	1024	/* binaries open at once */
#define SYMWORKER_LINK_MAX	256	/* a .gnu_debuglink name, with its NUL */

struct symworker_opts {
	const char *user;	/* the worker's user when started as root;
				 * NULL: sandbox_user(NULL): _strobe, else nobody */
	unsigned timeout_ms;	/* per request; 0: SYMWORKER_TIMEOUT_MS */
	unsigned max_restarts;	/* 0: SYMWORKER_RESTARTS */
	uint64_t mem_max;	/* RLIMIT_AS; 0: 1 GiB */
	unsigned cpu_s;		/* RLIMIT_CPU in s; 0: 60 */
	int raw_names;		/* 1: do not demangle */
	const char *comm;	/* the worker's name (prctl PR_SET_NAME, 15
				 * bytes); NULL: "strobe-symworker" */
	const struct symworker_ext *ext;	/* requests of the caller's own
						 * kind (symworker_call); NULL: none */
};

/*
 * A request kind of the caller's own served by the same worker (one home
 * for forking, dropping rights, the seccomp filter, the deadline and the
 * respawning): unwinding (uworker.h) is one.  serve runs in the worker,
 * after the drop, on a request of at most SYMWORKER_EXT_MAX bytes, exactly
 * as the parent sent it (hostile input for serve: it checks it), and
 * writes its answer into out (cap SYMWORKER_EXT_MAX bytes): the answer's
 * length.  state is serve's own, NULL at the first request of each worker.
 * While serving, symworker_ext_fd() asks the parent for a descriptor.
 */
#define SYMWORKER_EXT_MAX	(256 * 1024)
#define SYMWORKER_EXT_FDS	1024	/* descriptors asked per request */
struct symworker_ext {
	const char *name;	/* on an executed worker's command line
				 * (symworker_exec_main): [a-z]+ */
	size_t (*serve)(void **state, const void *req, size_t len, void *out, size_t cap);
};

/* What the worker read of a binary (symworker_open), and after a debug
 * file or MiniDebugInfo was attached. */
struct symworker_bin {
	uint32_t nsyms;		/* function symbols (symtab_count) */
	int has_symtab;		/* symtab_has_symtab */
	char link[SYMWORKER_LINK_MAX];	/* .gnu_debuglink name, "" when none */
	uint32_t link_crc;
};

/* What the worker says of itself (symworker_selftest). */
struct symworker_self {
	uint32_t uid, euid, gid, egid;
	uint32_t ngroups;	/* getgroups() */
	uint64_t cap_eff, cap_prm, cap_inh;	/* capget(), both words */
	int32_t no_new_privs;
	int32_t seccomp;	/* 1: its filter is installed */
	int32_t open_errno;	/* errno of open("/etc/passwd"), 0 if it opened */
};

struct symworker_stats {
	unsigned started;	/* workers started, the first included */
	unsigned crashes;	/* died during a request (or answered garbage) */
	unsigned timeouts;	/* killed after opts.timeout_ms */
	unsigned failed;	/* binaries marked failed */
	char failed_names[256];	/* the first of them, ", "-separated, "..." */
};

struct symworker;

/* Start the worker.  NULL with e set when it cannot be forked or did not
 * come up. */
struct symworker *symworker_new(const struct symworker_opts *o, struct error *e);
/* Kill and reap the worker, close every descriptor kept. */
void symworker_free(struct symworker *w);

/* Read the binary open at fd (the symworker keeps fd; the caller must not
 * use it after) called name in messages: a handle >= 0 and *info, or -1
 * with e set (the binary's names are lost; fd is closed). */
int symworker_open(struct symworker *w, int fd, const char *name, struct symworker_bin *info,
		   struct error *e);
/* Take the names from the separate debug file open at fd (kept, as
 * above), already verified as h's (debuginfo.h, its build-id read with
 * symworker_build_id): 1 when it had function
 * symbols (*info updated), 0 when not, -1 with e set. */
int symworker_debug(struct symworker *w, int h, int fd, struct symworker_bin *info,
		    struct error *e);
/*
 * The build-id of the file open at fd (a debug file candidate: its ELF
 * headers and notes are the candidate's owner's bytes), read in the worker
 * (hashkey_build_id_fd): its length (1..cap) into id, 0 when the file has
 * none, is not ELF or could not be read, -1 with e set when the worker
 * crashed, hung or answered garbage (killed; no binary blamed, the next
 * request starts a new one).  fd stays the caller's.  The caller compares
 * (debuginfo.h, struct debuginfo_want.read_id): the worker only reads.
 */
int symworker_build_id(struct symworker *w, int fd, uint8_t *id, size_t cap, struct error *e);
/* The same from h's own MiniDebugInfo (.gnu_debugdata), decoded in the
 * worker. */
int symworker_mini(struct symworker *w, int h, struct symworker_bin *info, struct error *e);
/* Name the file offsets off[0..n) of h: names[i] a malloc'ed string of at
 * most SYMWORKER_NAME_MAX bytes, or NULL when no symbol covers off[i].
 * 0, or -1 with e set and every names[i] NULL. */
int symworker_lookup(struct symworker *w, int h, const uint64_t *off, size_t n, char **names,
		     struct error *e);
/* Forget h (its descriptors closed). */
void symworker_close(struct symworker *w, int h);

/*
 * Send the caller's own request (len <= SYMWORKER_EXT_MAX bytes) to the
 * worker (opts.ext), starting one if none runs, and receive its answer
 * into out (at most cap bytes): its length, or -1 with e set when the
 * worker hung (killed after opts.timeout_ms), died, or asked for more than
 * SYMWORKER_EXT_FDS descriptors (killed): the request is lost, the next
 * one starts a new worker.  Each descriptor the worker asks for by key is
 * give_fd(ctx, key)'s (the symworker closes it after sending; -1: none).
 * The answer is untrusted: the caller checks it.
 */
ssize_t symworker_call(struct symworker *w, const void *req, size_t len, void *out, size_t cap,
		       int (*give_fd)(void *ctx, uint64_t key), void *ctx, struct error *e);
/* Kill the worker (its answer did not make sense): counted as a crash,
 * the next request starts a new one. */
void symworker_discard(struct symworker *w);
/* In the worker, from opts.ext->serve: the descriptor the parent gives for
 * key (the caller owns it), or -1. */
int symworker_ext_fd(uint64_t key);

/*
 * Workers executed afresh (selfexec.h): when the program called
 * selfexec_init(), a new worker is the program's own file executed again
 * in the forked child, as root and with only its socket, and drops its
 * rights in that fresh image; so it holds nothing of the parent's memory.
 * The program's main() must then begin with
 *
 *	if (argc > 1 && !strcmp(argv[1], SELFEXEC_ARG))
 *		return symworker_exec_main(argc, argv, exts);
 *
 * where exts (NULL-terminated) lists every opts.ext the program uses, by
 * name.  It never returns for a worker's command line; 2 otherwise.
 */
int symworker_exec_main(int argc, char **argv, const struct symworker_ext *const *exts);

/* The worker's pid, 0 when none runs now (for tests and logs). */
pid_t symworker_pid(const struct symworker *w);
/* Ask the worker what it runs as (and whether it can open a path). */
int symworker_selftest(struct symworker *w, struct symworker_self *out, struct error *e);
void symworker_stats(const struct symworker *w, struct symworker_stats *out);

#endif
