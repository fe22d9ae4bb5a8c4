/*
 * test_elfnote.c - the walk of an ELF note area (lib/base/elfnote.c):
 * names and descs where binutils puts them for 4- and 8-byte alignment,
 * header words of the other byte order, and areas that end inside a note,
 * cut a note's padding, or claim more than they hold.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "elfnote.h"

struct area {
	unsigned char b[256];
	size_t len;
};

static void word(struct area *a, size_t off, uint32_t v, int swap)
{
	if (swap)
		v = __builtin_bswap32(v);
	memcpy(a->b + off, &v, 4);
}

static size_t up(size_t v, size_t al)
{
	return (v + al - 1) & ~(al - 1);
}

/* Append a note at a->len; its offset. */
static size_t note(struct area *a, size_t al, uint32_t type, const char *name,
		   const char *desc, size_t descsz, int swap)
{
	size_t off = a->len, namesz = strlen(name) + 1, d;

	word(a, off, (uint32_t)namesz, swap);
	word(a, off + 4, (uint32_t)descsz, swap);
	word(a, off + 8, type, swap);
	memcpy(a->b + off + 12, name, namesz);
	d = off + up(12 + namesz, al);
	memcpy(a->b + d, desc, descsz);
	a->len = off + up(d - off + descsz, al);
	return off;
}

static void walk_two(size_t al, int swap)
{
	struct area a = { { 0 }, 0 };
	struct elfnote n;
	size_t pos = 0, second;

	note(&a, al, 3, "GNU", "abcde", 5, swap);
	second = note(&a, al, 7, "stapsdt", "xyz", 3, swap);

	assert_int_equal(elfnote_next(a.b, a.len, al, swap, &pos, &n), 1);
	assert_int_equal(n.type, 3);
	assert_int_equal(n.namesz, 4);
	assert_int_equal(n.descsz, 5);
	assert_ptr_equal(n.name, a.b + 12);
	assert_ptr_equal(n.desc, a.b + up(16, al));
	assert_memory_equal(n.desc, "abcde", 5);
	assert_int_equal(pos, second);

	assert_int_equal(elfnote_next(a.b, a.len, al, swap, &pos, &n), 1);
	assert_int_equal(n.type, 7);
	assert_int_equal(n.namesz, 8);
	assert_memory_equal(n.name, "stapsdt", 8);
	assert_ptr_equal(n.desc, a.b + second + up(20, al));
	assert_memory_equal(n.desc, "xyz", 3);
	assert_int_equal(pos, a.len);

	assert_int_equal(elfnote_next(a.b, a.len, al, swap, &pos, &n), 0);
	assert_int_equal(elfnote_next(a.b, a.len, al, swap, &pos, &n), 0);
}

static void test_align4(void **state)
{
	(void)state;
	walk_two(4, 0);
}

/* desc at the alignment counted from the note's start: "GNU\0" ends at
 * 16, which is 8-aligned (not 12 + 8 = 20) */
static void test_align8(void **state)
{
	(void)state;
	walk_two(8, 0);
}

static void test_other_byte_order(void **state)
{
	(void)state;
	walk_two(4, 1);
	walk_two(8, 1);
}

/* any alignment but 8 is 4 (0 and 1 say "none" in a section header) */
static void test_odd_alignment(void **state)
{
	struct area a = { { 0 }, 0 };
	struct elfnote n;
	size_t pos = 0;

	(void)state;
	note(&a, 4, 1, "GNU", "abcde", 5, 0);
	assert_int_equal(elfnote_next(a.b, a.len, 0, 0, &pos, &n), 1);
	assert_ptr_equal(n.desc, a.b + 16);
	pos = 0;
	assert_int_equal(elfnote_next(a.b, a.len, 16, 0, &pos, &n), 1);
	assert_ptr_equal(n.desc, a.b + 16);
}

/* The last note's padding is cut off: it is still whole, and the walk
 * ends after it (pos past the end). */
static void test_cut_padding(void **state)
{
	struct area a = { { 0 }, 0 };
	struct elfnote n;
	size_t pos = 0;

	(void)state;
	note(&a, 4, 1, "GNU", "abcde", 5, 0);
	assert_int_equal(a.len, 24);
	assert_int_equal(elfnote_next(a.b, 21, 4, 0, &pos, &n), 1);
	assert_memory_equal(n.desc, "abcde", 5);
	assert_int_equal(pos, 24);
	assert_int_equal(elfnote_next(a.b, 21, 4, 0, &pos, &n), 0);
}

/* A note that does not fit ends the walk: its desc past the end, a size
 * larger than the area (no overflow), a header cut short. */
static void test_not_fitting(void **state)
{
	struct area a = { { 0 }, 0 };
	struct elfnote n;
	size_t pos = 0;

	(void)state;
	note(&a, 4, 1, "GNU", "abcde", 5, 0);
	assert_int_equal(elfnote_next(a.b, 20, 4, 0, &pos, &n), 0);
	assert_int_equal(pos, 0);
	word(&a, 4, 0xfffffff0u, 0);
	assert_int_equal(elfnote_next(a.b, a.len, 4, 0, &pos, &n), 0);
	word(&a, 4, 5, 0);
	word(&a, 0, 0xffffffffu, 0);
	assert_int_equal(elfnote_next(a.b, a.len, 4, 0, &pos, &n), 0);
	word(&a, 0, 4, 0);
	assert_int_equal(elfnote_next(a.b, 11, 4, 0, &pos, &n), 0);
	assert_int_equal(elfnote_next(a.b, 0, 4, 0, &pos, &n), 0);
	pos = 100;
	assert_int_equal(elfnote_next(a.b, a.len, 4, 0, &pos, &n), 0);
	pos = 0;
	assert_int_equal(elfnote_next(a.b, a.len, 4, 0, &pos, &n), 1);
}

/* An empty name and desc: the header alone. */
static void test_empty_note(void **state)
{
	unsigned char b[12] = { 0 };
	struct elfnote n;
	size_t pos = 0;

	(void)state;
	b[8] = 9;
	assert_int_equal(elfnote_next(b, sizeof(b), 4, 0, &pos, &n), 1);
	assert_int_equal(n.type, 9);
	assert_int_equal(n.namesz, 0);
	assert_int_equal(n.descsz, 0);
	assert_int_equal(pos, 12);
	assert_int_equal(elfnote_next(b, sizeof(b), 4, 0, &pos, &n), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_align4),
		cmocka_unit_test(test_align8),
		cmocka_unit_test(test_other_byte_order),
		cmocka_unit_test(test_odd_alignment),
		cmocka_unit_test(test_cut_padding),
		cmocka_unit_test(test_not_fitting),
		cmocka_unit_test(test_empty_note),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
