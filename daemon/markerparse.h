/*
 * markerparse.h - the USDT notes of a --marker file, read in a child
 * without rights.
 *
 * strobed runs as root, and a member's --marker file is bytes that member
 * controls (doc/SECURITY.md, "Which process parses what"): its ELF
 * headers, sections and .note.stapsdt notes are parsed (usdt_find_fd) in
 * a child that took the requester's uid, gid and groups for good (the
 * workers' user's, sandbox_user(),
 * when root asked), no capability, no new privileges, not dumpable, a
 * seccomp filter where built (sandbox.h), RLIMIT_AS, RLIMIT_CPU, no core
 * and no file written.  It is given the descriptor peer_open_file()
 * opened (SCM_RIGHTS) and opens nothing itself.
 *
 * What comes back is checked before a uprobe is put on it: at most
 * USDT_MAX_SITES sites, provider and name the ones asked, every string
 * NUL-terminated inside its field, the site's and its semaphore's file
 * offsets inside the file (as strobed fstat()s the descriptor), and the
 * argument string (at most USDT_MAX_ARGSPEC bytes) parsed again here into
 * the arguments the uprobe reads: the one parse strobed must trust (a
 * bounded grammar, fuzz_usdt).  The child also names the file's binary
 * key (hashkey_file: its build-id note, else a hash of its bytes), for
 * session_probes.binary_key: checked for its form only, it is a label of
 * the requester's own file, which they could have built with any build-id
 * anyway; strobed's uprobes and what it reads do not depend on it.  A
 * child that crashes, hangs past the deadline or answers garbage costs
 * that request one line, never the daemon; a hung child is killed and
 * reaped (test_markerparse).
 */
#ifndef STROBE_MARKERPARSE_H
#define STROBE_MARKERPARSE_H

#include <stddef.h>
#include <stdint.h>
#include "hashkey.h"
#include "peer.h"
#include "usdt.h"

/*
 * usdt_find_fd(fd, path, provider, name, ...) in the child, as p: the
 * sites (*sites malloc'ed, *n of them) and the file's key ("" when the
 * child could not tell it), or -1 with e set (the child's own message when
 * it had one).  deadline_ns: CLOCK_MONOTONIC.
 */
int marker_sites(const struct peer *p, int fd, const char *path, const char *provider,
		 const char *name, uint64_t deadline_ns, struct usdt_site **sites, size_t *n,
		 char key[HASHKEY_MAX], struct error *e);

/*
 * The reader's entry point when strobed executes it afresh (selfexec.h):
 * strobed's main() calls it first when argv[1] is SELFEXEC_ARG; it never
 * returns for the reader's command line ("marker"), 2 otherwise.
 */
int marker_reader_main(int argc, char **argv);

/*
 * The checks marker_sites() makes of the reader's answer (see above): n
 * sites s of provider:name in the file at path, size bytes as strobed
 * fstat()s it, and the key ("" for none).  Each site's path is set to
 * path and its arguments parsed again from its string; 0, or -1 with e
 * naming the first thing wrong.  Exported for test_markerparse.
 */
int marker_check_answer(const char *path, const char *provider, const char *name,
			uint64_t size, struct usdt_site *s, uint32_t n, const char key[HASHKEY_MAX],
			struct error *e);

#endif
