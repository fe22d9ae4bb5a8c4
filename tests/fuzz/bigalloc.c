/*
 * bigalloc.c - large heap blocks kept and reused, for the libFuzzer
 * builds of the ELF-reader harnesses (fuzz_hashkey, fuzz_usdt; not the
 * replay build).  tests/fuzz/build.sh compiles the harness and its lib/
 * sources to objects and renames their malloc, calloc, realloc and free
 * to the fuzz_* functions below (objcopy --redefine-sym); libFuzzer's own
 * allocations are untouched.
 *
 * Why: ASan serves every block over 128 KiB from its secondary allocator,
 * an mmap per malloc and an munmap plus a remap of the shadow per free.
 * hashkey_xxh3_fd()'s 1 MiB read buffer cost about 1 ms of every
 * execution that way (fuzz_hashkey ran at 830 exec/s, 80% of it in
 * mmap, page faults and TLB flushes); glibc, in strobed, reuses the
 * block.  Here a freed large block is kept and handed out again for a
 * request of the same size.  What ASan checks is kept:
 *  - the block is a real ASan malloc of exactly the size asked for, so
 *    ASan's redzones around it catch overflows as before;
 *  - a kept block is poisoned while free: any use of it after free is
 *    reported ("use-after-poison");
 *  - it is refilled with 0xbe over its first 4 KiB when handed out again,
 *    as ASan's malloc fills a new block (max_malloc_fill_size);
 *  - freeing a kept block twice, or realloc of a freed one, aborts;
 *  - fuzz_bigalloc_idle(), called by the harness at the end of each
 *    execution, asserts that no kept block is still allocated: a leak of
 *    one, which LeakSanitizer no longer sees (the table here points to
 *    it), fails the input.
 * Smaller blocks, and large ones when the table is full, go straight to
 * ASan.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sanitizer/allocator_interface.h>
#include <sanitizer/asan_interface.h>

#define BIG (128u << 10)	/* ASan's primary allocator: up to 128 KiB */
#define FILL 4096		/* ASan's default max_malloc_fill_size */
#define NKEPT 8

static struct kept {
	void *p;
	size_t size;
	int used;
} kept[NKEPT];

static struct kept *find(const void *p)
{
	for (int i = 0; i < NKEPT; i++)
		if (kept[i].p && kept[i].p == p)
			return &kept[i];
	return NULL;
}

static void die(const char *what, const void *p)
{
	fprintf(stderr, "==bigalloc== ERROR: %s of the large block %p\n", what, p);
	abort();
}

void *fuzz_malloc(size_t n)
{
	struct kept *k = NULL;
	void *p;

	if (n <= BIG)
		return malloc(n);
	for (int i = 0; i < NKEPT; i++)
		if (kept[i].p && !kept[i].used && kept[i].size == n) {
			k = &kept[i];
			ASAN_UNPOISON_MEMORY_REGION(k->p, n);
			memset(k->p, 0xbe, n < FILL ? n : FILL);
			k->used = 1;
			return k->p;
		}
	p = malloc(n);
	if (!p)
		return NULL;
	/* keep it: in an empty entry, else in place of a free one */
	for (int i = 0; i < NKEPT && !k; i++)
		if (!kept[i].p)
			k = &kept[i];
	for (int i = 0; i < NKEPT && !k; i++)
		if (!kept[i].used) {
			k = &kept[i];
			ASAN_UNPOISON_MEMORY_REGION(k->p, k->size);
			free(k->p);
		}
	if (k)
		*k = (struct kept){ p, n, 1 };
	return p;
}

void fuzz_free(void *p)
{
	struct kept *k = p ? find(p) : NULL;

	if (!k) {
		free(p);
		return;
	}
	if (!k->used)
		die("double free", p);
	k->used = 0;
	ASAN_POISON_MEMORY_REGION(p, k->size);
}

void *fuzz_calloc(size_t nmemb, size_t size)
{
	size_t n;
	void *p;

	if (__builtin_mul_overflow(nmemb, size, &n) || n <= BIG)
		return calloc(nmemb, size);
	p = fuzz_malloc(n);
	if (p)
		memset(p, 0, n);
	return p;
}

void *fuzz_realloc(void *p, size_t n)
{
	struct kept *k = p ? find(p) : NULL;
	size_t old;
	void *q;

	if (!k && n <= BIG)
		return realloc(p, n);
	if (k && !k->used)
		die("realloc after free", p);
	if (n == 0) {		/* as ASan's realloc(p, 0): free, NULL */
		fuzz_free(p);
		return NULL;
	}
	q = fuzz_malloc(n);
	if (!q)
		return NULL;
	if (p) {
		old = k ? k->size : __sanitizer_get_allocated_size(p);
		memcpy(q, p, old < n ? old : n);
		fuzz_free(p);
	}
	return q;
}

void fuzz_bigalloc_idle(void)
{
	for (int i = 0; i < NKEPT; i++)
		if (kept[i].used)
			die("leak (still allocated after the input)", kept[i].p);
}
