-- 017: raw stack copies are root's alone (issue 30).  A --keep-stacks row
-- holds a sampled process's user registers and up to 64 KiB of its stack:
-- other users' secrets, root's included, and this file is readable by
-- group strobe.  The rows now live in rawstk.raw_stacks, the table of the
-- companion file DB.stacks (mode 0600, strobed's; lib/store/rawstk.h),
-- which every connection that migrates the database has attached as
-- rawstk.  The rows of main.raw_stacks move there (copied by db.c before
-- this runs: this file names no table but main's, so that the schema
-- alone builds a database, as test fixtures do); main.raw_stacks stays,
-- empty, and nothing writes it again.  secure_delete: the pages they
-- leave are overwritten with zeros, not left in the free list.
PRAGMA main.secure_delete=ON;
DELETE FROM main.raw_stacks;
PRAGMA main.secure_delete=OFF;
