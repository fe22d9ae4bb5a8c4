/*
 * fuzz_hashkey - the ELF build-id reader (lib/symbols/hashkey.c): the input is a
 * file, written to a memfd and read by hashkey_build_id_fd() and
 * hashkey_file() as strobed reads a mapped binary, and also taken as a
 * notes blob by hashkey_build_id_notes() (as /sys/kernel/notes is).
 * Asserts beyond "no crash": build-id lengths are -1, 0 or 1..cap; a key
 * is NUL-terminated within HASHKEY_MAX and is "buildid:<hex of the id
 * found by hashkey_build_id_fd>" when there is one, else "xxh3:<the XXH3
 * of the bytes>" (same as hashkey_xxh3_buf of the input); in the libFuzzer
 * build, no large heap block is left allocated (bigalloc.c).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "hashkey.h"

/* The libFuzzer build keeps large heap blocks for reuse (bigalloc.c, see
 * build.sh); this asserts none is left allocated.  Not in the replay. */
void fuzz_bigalloc_idle(void) __attribute__((weak));

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t id[BUILD_ID_MAX];
	char key[HASHKEY_MAX], want[HASHKEY_MAX], hex[33];
	struct error e = { "" };
	int fd = memfd_create("fuzz_hashkey", 0), n;

	assert(fd >= 0);
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	n = hashkey_build_id_notes(data, size, id, sizeof(id));
	assert(n >= 0 && n <= (int)sizeof(id));
	n = hashkey_build_id_notes(data, size, id, 4);
	assert(n >= 0 && n <= 4);

	n = hashkey_build_id_fd(fd, id, sizeof(id), &e);
	assert(n >= -1 && n <= (int)sizeof(id));
	if (n >= 0 && hashkey_file(NULL, fd, key, &e) == 0) {
		assert(memchr(key, 0, sizeof(key)));
		if (n > 0) {
			hashkey_format(want, "buildid", id, n);
		} else {
			hashkey_xxh3_buf(data, size, hex);
			strcpy(want, "xxh3:");
			strcat(want, hex);
		}
		assert(strcmp(key, want) == 0);
	}
	close(fd);
	if (fuzz_bigalloc_idle)
		fuzz_bigalloc_idle();
	return 0;
}
