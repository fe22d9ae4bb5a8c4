/*
 * jitdump.h - jitdump files of JIT compilers: jit-PID.dump.
 *
 * The format perf's `perf inject --jit` reads (Java agents, V8
 * --perf-prof, Python 3.12 -X perf_jit, LuaJIT): a header
 *   u32 magic 0x4A695444 ("JiTD"), u32 version, u32 total_size (of the
 *   header), u32 elf_mach, u32 pad, u32 pid, u64 timestamp, u64 flags
 * then records, each
 *   u32 id, u32 total_size (of the record), u64 timestamp, body
 * with id JIT_CODE_LOAD (0: u32 pid, u32 tid, u64 vma, u64 code_addr,
 * u64 code_size, u64 code_index, NUL-terminated name, code bytes),
 * JIT_CODE_MOVE (1: u32 pid, u32 tid, u64 vma, u64 old_code_addr,
 * u64 new_code_addr, u64 code_size, u64 code_index), JIT_CODE_DEBUG_INFO
 * (2), JIT_CODE_CLOSE (3), JIT_CODE_UNWINDING_INFO (4).  The writer's
 * byte order: the magic read in the other order means every field is
 * swapped; any other magic is refused.  The JIT mmaps the file once with
 * PROT_EXEC so that its name (jit-<pid>.dump, any directory) appears in
 * the side-band; timestamps are CLOCK_MONOTONIC ns unless flags has
 * JITDUMP_FLAG_ARCH_TIMESTAMP (the CPU's counter: TSC).
 *
 * The file is written by the profiled process: everything in it is
 * hostile.  jitdump_parse() checks every record's size against the
 * buffer, stops at the first record whose size is impossible (smaller
 * than its header or past the end: nothing after it can be trusted) and
 * counts it; it keeps the names of JIT_CODE_LOAD records (and of
 * JIT_CODE_MOVE records, from the load of the same code_index), as
 * jitmap.h's rules bound them: at most JITMAP_SYMS_MAX symbols, sizes up
 * to JITMAP_SIZE_MAX, ranges that do not wrap, names up to
 * JITMAP_NAME_MAX bytes NUL-terminated inside their record, control bytes
 * replaced by '?'.  Code bytes are not kept (nor required).  Names are
 * data: never passed to a shell.
 */
#ifndef STROBE_JITDUMP_H
#define STROBE_JITDUMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "jitmap.h"
#include "util.h"

#define JITDUMP_MAGIC 0x4A695444u
#define JITDUMP_HEADER_SIZE 40		/* the version 1 header */
#define JITDUMP_RECORD_HEADER 16
#define JITDUMP_FILE_MAX (256u << 20)	/* bytes read of one file */
#define JITDUMP_FLAG_ARCH_TIMESTAMP 1ULL

enum jitdump_record_id {
	JITDUMP_CODE_LOAD = 0,
	JITDUMP_CODE_MOVE = 1,
	JITDUMP_CODE_DEBUG_INFO = 2,
	JITDUMP_CODE_CLOSE = 3,
	JITDUMP_CODE_UNWINDING_INFO = 4,
};

struct jitdump_info {
	uint32_t version, elf_mach, pid;
	uint64_t timestamp, flags;
	int swapped;		/* written in the other byte order */
	size_t records;		/* records walked (of any kind) */
	size_t early;		/* loads and moves dropped: before not_before_ns */
};

/*
 * Parse len bytes of buf, the jitdump of process pid (0: any), into m
 * (symbols in file order, each with its record's timestamp as load_ns;
 * later records win on overlap) and info.  Loads and moves stamped before
 * not_before_ns (0: none are) are dropped: an earlier process's of the
 * same pid; with arch timestamps they cannot be compared and none is.
 * 0 when parsed (bad records counted in m->dropped), -1 when the header
 * is refused (e says why: too short, not a jitdump, a header size it
 * cannot hold, another process's pid); m is then empty.  jitmap_free()
 * releases m.
 */
int jitdump_parse(const unsigned char *buf, size_t len, uint32_t pid, uint64_t not_before_ns,
		  struct jitmap *m, struct jitdump_info *info, struct error *e);

/*
 * The jitdump open as fd (opened by the caller without following a
 * symlink at its last component, O_NONBLOCK) into a malloc'ed buffer
 * (*buf, *len): 0 when read, -1 when refused or unreadable (e says why,
 * naming path): not a regular file, not owned by uid, larger than
 * JITDUMP_FILE_MAX.  Unlike a perf map, a file of root's is not taken for
 * another user's process: the directory is any, and a hard link to a
 * root-only dump of a root JIT would lend its names to the user's
 * reports.  fd is not closed.
 */
int jitdump_read_fd(int fd, const char *path, uid_t uid, unsigned char **buf, size_t *len,
		    struct error *e);

/* Whether path's last component is "jit-<pid>.dump" (pid in decimal). */
int jitdump_name_matches(const char *path, uint32_t pid);

#endif
