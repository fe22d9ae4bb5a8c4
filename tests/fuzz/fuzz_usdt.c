/*
 * fuzz_usdt - the USDT note reader (lib/capture/usdt.c): the input is an ELF file,
 * written to a memfd and read through /proc/self/fd/N by usdt_list(), as
 * strobed reads a binary named in a marker spec.  Each site's argument
 * string then goes through usdt_parse_args() in the forms of the file's
 * machine (x86_64, aarch64: seed-arm64-so), and the first site is
 * looked up again with usdt_find().
 * Asserts beyond "no crash": a failure sets e and returns no sites; every
 * site's strings are NUL-terminated within their arrays; parsed arguments
 * have a size of 1, 2, 4 or 8 and a register below USDT_NR_REGS; and
 * usdt_find() of a listed probe finds at least one site, or refuses it
 * with a message (an argument form it does not support, a binary of
 * another architecture than the host's); in the libFuzzer
 * build, no large heap block is left allocated (bigalloc.c).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "usdt.h"

/* The libFuzzer build keeps large heap blocks for reuse (bigalloc.c, see
 * build.sh); this asserts none is left allocated.  Not in the replay. */
void fuzz_bigalloc_idle(void) __attribute__((weak));

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct usdt_site *sites = NULL;
	size_t n = 0;
	struct error e = { "" };
	char path[64];
	int fd = memfd_create("fuzz_usdt", 0);

	assert(fd >= 0);
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (usdt_list(path, &sites, &n, &e) < 0) {
		assert(e.msg[0]);
		close(fd);
		if (fuzz_bigalloc_idle)
			fuzz_bigalloc_idle();
		return 0;
	}
	assert((n == 0) == (sites == NULL));
	for (size_t i = 0; i < n; i++) {
		struct usdt_site *s = &sites[i];
		struct usdt_arg args[USDT_MAX_ARGS];
		int nargs = -1;

		assert(memchr(s->path, 0, sizeof(s->path)));
		assert(memchr(s->provider, 0, sizeof(s->provider)));
		assert(memchr(s->name, 0, sizeof(s->name)));
		assert(memchr(s->arg_spec, 0, sizeof(s->arg_spec)));
		if (usdt_parse_args(s->machine, s->arg_spec, args, USDT_MAX_ARGS, &nargs, &e) == 0) {
			assert(nargs >= 0 && nargs <= USDT_MAX_ARGS);
			for (int a = 0; a < nargs; a++) {
				int sz = args[a].size;
				assert(sz == 1 || sz == 2 || sz == 4 || sz == 8);
				if (args[a].kind != USDT_ARG_CONST)
					assert(args[a].reg >= 0 && args[a].reg < USDT_NR_REGS);
			}
		}
	}
	if (n) {
		struct usdt_site *found = NULL;
		size_t nf = 0;
		char prov[USDT_MAX_NAME], name[USDT_MAX_NAME];
		strcpy(prov, sites[0].provider);
		strcpy(name, sites[0].name);
		if (usdt_find(path, prov, name, &found, &nf, &e) == 0) {
			assert(nf >= 1);
			for (size_t i = 0; i < nf; i++) {
				uint64_t regs[USDT_NR_REGS] = { 0 };
				unsigned char stack[64] = { 0 };
				int64_t vals[USDT_MAX_ARGS] = { 0 };
				uint32_t known = 0;
				int st;
				usdt_regs_mask(&found[i], &st);
				regs[USDT_REG_SP] = regs[USDT_REG_ARM64_SP] = 0x1000;
				for (int a = 0; a < found[i].nargs && a < USDT_MAX_ARGS; a++)
					if (usdt_arg_value(&found[i].args[a], regs, stack,
							   sizeof(stack), &vals[a]) == 0)
						known |= 1u << a;
				char buf[256];
				usdt_format_args(&found[i], vals, known, buf, sizeof(buf));
				assert(memchr(buf, 0, sizeof(buf)));
			}
		} else {
			/* only an unsupported argument form may refuse a listed probe */
			assert(e.msg[0]);
		}
		free(found);
	}
	free(sites);
	close(fd);
	if (fuzz_bigalloc_idle)
		fuzz_bigalloc_idle();
	return 0;
}
