/*
 * fuzz_jitdump - the jitdump parser (lib/symbols/jitdump.c): the input is
 * a jitdump file, parsed whole and cut in half, for any pid and for the
 * header's own pid, with and without a start time.  Asserts beyond "no
 * crash": a refused header leaves no symbol and sets a message; a parsed
 * one keeps at most JITMAP_SYMS_MAX symbols, each of 1 byte to
 * JITMAP_SIZE_MAX not wrapping past 2^64, named by 1 to JITMAP_NAME_MAX
 * bytes with no control byte; at most one symbol per record walked; the
 * header's pid matches the one asked for; with a start time, no kept
 * symbol is stamped before it (unless the header says TSC stamps).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "jitdump.h"

static void check(const uint8_t *data, size_t size, uint32_t pid, uint64_t not_before)
{
	struct jitmap m;
	struct jitdump_info info;
	struct error e = { "" };
	int rc = jitdump_parse(data, size, pid, not_before, &m, &info, &e);

	if (rc < 0) {
		assert(rc == -1 && !m.nr && !m.syms && e.msg[0]);
		return;
	}
	assert(rc == 0);
	assert(!pid || info.pid == pid);
	assert(m.nr <= JITMAP_SYMS_MAX && m.nr <= info.records);
	assert(info.early <= m.dropped);
	for (size_t i = 0; i < m.nr; i++) {
		const struct jitmap_sym *y = &m.syms[i];
		size_t n = strlen(y->name);

		assert(y->size >= 1 && y->size <= JITMAP_SIZE_MAX);
		assert(y->start <= UINT64_MAX - y->size);
		assert(n >= 1 && n <= JITMAP_NAME_MAX);
		for (size_t k = 0; k < n; k++)
			assert((unsigned char)y->name[k] >= 0x20 && y->name[k] != 0x7f);
		if (not_before && !(info.flags & JITDUMP_FLAG_ARCH_TIMESTAMP))
			assert(y->load_ns >= not_before);
	}
	jitmap_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact copy: reads past size are the sanitizers' to see */
	uint8_t *copy = malloc(size ? size : 1);
	uint32_t hpid = 0;

	memcpy(copy, data, size);
	if (size >= 24) {
		memcpy(&hpid, copy + 20, 4);
		if (size >= 4 && !memcmp(copy, "JiTD", 4))	/* the other byte order */
			hpid = __builtin_bswap32(hpid);
	}
	check(copy, size, 0, 0);
	check(copy, size, hpid ? hpid : 1, 0);
	check(copy, size, 0, 2500);
	check(copy, size / 2, 0, 0);
	free(copy);
	return 0;
}
