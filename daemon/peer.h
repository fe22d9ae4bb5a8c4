/*
 * peer.h - the client at the other end of strobed's control socket, and
 * opening a file with that client's rights rather than strobed's.
 *
 * strobed runs as root.  When a request names a file that strobed will act
 * on (--marker PATH: uprobes in that file, hits in every process running
 * it), the file must be one the requester could open themselves, and the
 * file strobed acts on must be the one checked: so the path is looked up
 * once, as the requester, and everything after works on that handle.
 */
#ifndef STROBE_PEER_H
#define STROBE_PEER_H

#include <stdint.h>
#include <sys/types.h>
#include "util.h"

/* How long the lookup of a requester's path may take, all paths of one
 * request together. */
#define PEER_OPEN_TIMEOUT_MS 2000

struct peer {
	uid_t uid;
	gid_t gid;
	gid_t *groups;		/* supplementary groups (malloc'ed) */
	int ngroups;
};

/*
 * The requester on the unix socket sock: uid and gid as SO_PEERCRED gave
 * them (passed in), supplementary groups from SO_PEERGROUPS, all as they
 * were when the client connected.  A kernel without SO_PEERGROUPS (before
 * 4.13) gives none: the requester then has fewer rights here, never more.
 */
void peer_init(struct peer *p, int sock, uid_t uid, gid_t gid);
void peer_free(struct peer *p);

/*
 * Open path for reading with p's rights: looked up, symlinks followed and
 * permissions checked with p's uid, gid and groups and no capability.  For
 * anyone but root the open happens in a child process that has dropped to
 * those ids for good; it passes the handle back (SCM_RIGHTS), and is killed
 * at deadline_ns (CLOCK_MONOTONIC) if it has not answered by then.
 *
 * Only a regular file is opened: the path is first looked up O_PATH, and
 * a FIFO, device or directory is refused without being opened.  For anyone
 * but root a file on a FUSE file system is refused too: its daemon, which
 * may be the requester's, answers strobed's reads when it pleases.
 *
 * Returns the fd (O_RDONLY, O_CLOEXEC) or -1 with e set.  For anyone but
 * root, "no such file" and "permission denied" (and a path through a
 * non-directory or a symlink loop) give one message, "cannot read PATH as
 * uid U: no such file, or permission denied", so the answer does not tell
 * whether a file exists where the requester may not look.
 */
int peer_open_file(const struct peer *p, const char *path, uint64_t deadline_ns,
		   struct error *e);

#endif
