-- 013-cgroups.sql: the cgroup of each process (issue 11: containers).
--
-- cgroups: the cgroup v2 directories a session saw, by the id the kernel
-- gives a cgroup (its kernfs node id: the inode number of its directory
-- under /sys/fs/cgroup, the id of PERF_SAMPLE_CGROUP) and its path from
-- the cgroup root ("/system.slice/x.service"; "/" is the root).  Filled at
-- the session's start from /sys/fs/cgroup and then from the kernel's
-- PERF_RECORD_CGROUP records (cgroups created during the session).  An id
-- seen again with another path (a removed cgroup whose id was reused)
-- keeps the latest.
--
-- processes.cgroup_id: the cgroup of the process's latest sample (NULL:
-- no sample, or its cgroup unknown).  With sessions.cgroup_source
-- 'sample' each sample carried its task's cgroup (PERF_SAMPLE_CGROUP,
-- Linux 5.7); with 'proc' (the driver backend, older kernels) it was read
-- from /proc/PID/cgroup at the process's first sample, once.
-- processes.cgroup_moves counts the samples of the process whose cgroup
-- differed from the one before (a process moved, or threads in different
-- cgroups): reports count all the process's samples in its latest cgroup
-- and say how many processes moved.  NULL in sessions recorded before this
-- schema (no cgroup known).
CREATE TABLE cgroups (
	session_id	INTEGER NOT NULL,
	id		INTEGER NOT NULL,
	path		TEXT NOT NULL,
	PRIMARY KEY (session_id, id)
) WITHOUT ROWID;
ALTER TABLE processes ADD COLUMN cgroup_id INTEGER;
ALTER TABLE processes ADD COLUMN cgroup_moves INTEGER;
ALTER TABLE sessions ADD COLUMN cgroup_source TEXT;
