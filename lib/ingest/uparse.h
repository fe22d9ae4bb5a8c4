/*
 * uparse.h - the parsing strobed's ingest does on bytes a profiled
 * process controls, done in the ingest worker (uworker.h) rather than in
 * root's process (doc/SECURITY.md, "Which process parses what"):
 *
 *  - the ELF header, program and section headers and notes of a mapped
 *    binary, for its build-id (hashkey_build_id_fd() in the worker, on the
 *    descriptor strobed opened and passes);
 *  - the perf maps (jitmap.h) and jitdumps (jitdump.h) strobed read
 *    (reading and its checks stay in strobed: owner, type, size, time);
 *    their bytes go to the worker in a sealed memfd and come back as
 *    plain symbols.
 *
 * Same worker as the unwinder (one per ingest, one home for the drop, the
 * filter, the deadline and respawning): a request kind each.  Round trips
 * are per new binary or JIT file, never per sample (the hashkey memo and
 * the ingest's binary memo still skip known files).
 *
 * The answers are the worker's, hence hostile: uparse_check_build_id() and
 * uparse_check_jit() check them (lengths, counts, ranges, names without
 * NUL or control bytes, bounded totals); an answer that fails is treated
 * like a crash (the worker killed).  A crash or a hang costs that one file:
 * the binary is keyed by its contents (xxh3), the JIT file is stored with
 * no symbol and a problem saying why.
 */
#ifndef STROBE_UPARSE_H
#define STROBE_UPARSE_H

#include <stddef.h>
#include <stdint.h>
#include "hashkey.h"
#include "jitdump.h"
#include "jitmap.h"
#include "util.h"

struct uworker;

enum uparse_kind {
	UPARSE_UNWIND = 0,	/* uworker.c's */
	UPARSE_BUILD_ID = 1,
	UPARSE_JITMAP = 2,
	UPARSE_JITDUMP = 3,
};

/* An answer holds at most this many JIT symbols; more take more calls. */
#define UPARSE_JIT_CHUNK 1024

/* hashkey_build_id_fd() on fd in the worker: the build-id's length
 * (1..cap), 0 when the file has none or is not ELF, -2 when the worker
 * failed (crash, hang, bad answer: e says), -1 on a read error. */
int uparse_build_id(struct uworker *u, int fd, uint8_t *id, size_t cap, struct error *e);

/* jitmap_parse() (kind UPARSE_JITMAP) or jitdump_parse() (UPARSE_JITDUMP,
 * pid and not_before as there; info may be NULL) of buf in the worker,
 * into m: 0, -1 as jitdump_parse() refusing a header (e says), -2 when the
 * worker failed (m empty, e says). */
int uparse_jit(struct uworker *u, enum uparse_kind kind, const void *buf, size_t len,
	       uint32_t pid, uint64_t not_before, struct jitmap *m, struct jitdump_info *info,
	       struct error *e);

/* --- both sides' wire format, for uworker.c and the unit tests --- */

struct uparse_req {
	uint32_t kind, pid;
	uint64_t seq;		/* a JIT file: which one (the worker keeps its parse) */
	uint64_t from;		/* first symbol wanted */
	uint64_t not_before;
	uint64_t size;		/* bytes of the JIT file's memfd */
};

struct uparse_rep {		/* then, for JIT: nr uparse_sym, each then its name */
	int32_t rc;		/* build-id length, or 0 / -1 */
	uint32_t nr;		/* symbols in this answer */
	uint64_t total, dropped;	/* of the whole file */
	uint32_t version, elf_mach, jpid, swapped;
	uint64_t timestamp, flags, records, early;
	char msg[160];		/* jitdump_parse()'s refusal */
};

struct uparse_sym {
	uint64_t start, size, load_ns;
	uint32_t name_len, pad;
};

/* The worker's side: serve a request of kind BUILD_ID or JIT*.  *state is
 * its own (NULL first). */
size_t uparse_serve(void **state, const void *req, size_t len, void *out, size_t cap);

/* Check a build-id answer of n bytes: its length 0..cap, else -1. */
int uparse_check_build_id(const void *rep, size_t n, size_t cap, uint8_t *id);

/* Check a JIT answer of n bytes for the symbols from `from` on (total
 * expected: the first answer's, or (uint64_t)-1 for the first): appends its
 * symbols to m; -1 when anything is off (m as it was). */
int uparse_check_jit(const void *rep, size_t n, uint64_t from, uint64_t total, struct jitmap *m);

#endif
