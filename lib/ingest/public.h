/*
 * public.h - whether everyone could read a mapped file, which decides
 * whether its cache entry is group strobe's (0640) or root's alone (0600).
 *
 * Everyone could read it when it is readable by others, still linked, and
 * each directory from / down to it is searchable by others, none of them
 * nor the file carrying an access ACL: a POSIX ACL (system.posix_acl_access)
 * or an NFSv4 one may deny a named user or group what the mode's "other"
 * bits allow, and strobe does not evaluate ACLs, so any ACL counts as
 * "not everyone".  The walk goes by handle, never follows a symlink, and
 * must end at the mapped file's device and inode: a path that resolves
 * differently here (another mount namespace, renamed since) counts as
 * not public.  Being wrong this way costs members a name, never a byte.
 */
#ifndef STROBE_PUBLIC_H
#define STROBE_PUBLIC_H

#include <sys/stat.h>

/* 1 if everyone could read the file at path whose status is st (fd its
 * open handle, or -1), else 0. */
int file_public(const char *path, int fd, const struct stat *st);

/* 1 if the file at fd (any handle, O_PATH too) carries an access ACL, or
 * its extended attributes cannot be read; 0 if it has none. */
int fd_has_acl(int fd);

#endif
