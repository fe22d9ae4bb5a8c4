/*
 * dbdir.h - the directory strobed keeps its database in must be its own.
 *
 * Next to the database strobed (root) creates, reads, writes and removes
 * DB-wal, DB-shm, DB.lock, DB.log, DB.stacks, DB.spool/ and DB.cache/, by
 * path.  In a directory another user may write, that user could plant any
 * of those names first (a symlink, a directory of forged spool state, a
 * cache of planted entries) or swap one after strobed checked it, and
 * root would then delete, fill, chown or trust what they chose.  Rather
 * than opening each of them by handle, strobed refuses such a directory
 * at start: the database's directory must belong to strobed's uid and be
 * writable by no group or other user, and every directory above it must
 * belong to root or strobed's uid and be writable by no one else, unless
 * it is sticky (like /tmp: there others may add names but not rename or
 * remove root's, so the next directory down, checked in turn, stays).
 * The path is resolved first (realpath), so a symlink root made is
 * followed once and its target checked.
 */
#ifndef STROBE_DBDIR_H
#define STROBE_DBDIR_H

#include "util.h"

/* 0 when the directory of db_path and those above it are as above; else
 * -1 with e naming the directory, its owner and mode, and what to do.
 * The database's directory must exist. */
int dbdir_check(const char *db_path, struct error *e);

#endif
