/*
 * test_flame.c - lib/query/flame.c, pprof.c: the merged call tree of a
 * stack_set built here in memory (widths by samples and by an event, the
 * diff's baseline figures), folded lines, frame names and XML escaping of
 * hostile names (the SVG parsed by python3's XML parser when there is one),
 * a metric's value per frame and its colour scale (flamemetric.c),
 * and the protobuf encoder read back by a small decoder (and through gzip).
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <locale.h>
#include <wchar.h>
#include <zlib.h>
#include "flame.h"
#include "flamemetric.h"
#include "gecko.h"
#include "pprof.h"
#include "util.h"

/* Functions: the known tree main -> outer_a|outer_b -> leaf, a kernel
 * function, unknown code, and hostile names. */
enum { S_MAIN, S_A, S_B, S_LEAF, S_KERN, S_UNK, S_EVIL, S_JS, S_BADUTF, NR_SYMS };

static const char evil[] = "<script>alert(\"x&y\")</script>'";
static const char jsbreak[] = "'; alert(1); // \\ ]]> \n\x1b";
static const char badutf[] = "f\xff\xfe\xed\xa0\x80o";

static struct stack_sym syms[NR_SYMS] = {
	[S_MAIN] = { 1, "/opt/calltree", "abcd", "main", 0 },
	[S_A] = { 1, "/opt/calltree", "abcd", "outer_a", 0 },
	[S_B] = { 1, "/opt/calltree", "abcd", "outer_b", 0 },
	[S_LEAF] = { 1, "/opt/calltree", "abcd", "leaf", 0 },
	[S_KERN] = { 2, "[kernel.kallsyms]", NULL, "do_syscall_64", 1 },
	[S_UNK] = { 3, "/lib/libx.so", NULL, "[unknown]", 0 },
	[S_EVIL] = { 3, "/lib/libx.so", NULL, evil, 0 },
	[S_JS] = { 3, "/lib/libx.so", NULL, jsbreak, 0 },
	[S_BADUTF] = { 3, "/lib/libx.so", NULL, badutf, 0 },
};

/* one location per function, but two for leaf (two call sites) */
static struct stack_loc locs[] = {
	{ 1, 0x100, S_MAIN }, { 1, 0x200, S_A }, { 1, 0x300, S_B }, { 1, 0x400, S_LEAF },
	{ 1, 0x404, S_LEAF }, { 2, 0xffffffff81000000ull, S_KERN }, { 3, 0x10, S_UNK },
	{ 3, 0x20, S_EVIL }, { 3, 0x30, S_JS }, { 3, 0x40, S_BADUTF },
};

/* leaf first */
static const uint32_t st_a[] = { 3, 1, 0 };		/* leaf <- outer_a <- main */
static const uint32_t st_b[] = { 4, 2, 0 };		/* leaf <- outer_b <- main */
static const uint32_t st_k[] = { 5, 3, 1, 0 };		/* kernel <- leaf <- a <- main */
static const uint32_t st_x[] = { 9, 8, 7, 6, 0 };	/* hostile chain */

static void make_set(struct stack_set *set, struct stack_entry *e, uint64_t na, uint64_t nb)
{
	memset(set, 0, sizeof(*set));
	set->session.id = 7;
	snprintf(set->session.sample_event, sizeof(set->session.sample_event), "cpu-clock");
	set->nr_events = 1;
	snprintf(set->events[0], sizeof(set->events[0]), "page-faults");
	set->syms = syms;
	set->nr_syms = NR_SYMS;
	set->locs = locs;
	set->nr_locs = ARRAY_SIZE(locs);
	e[0] = (struct stack_entry){ 1, 100, 0, "calltree", 0, 3, st_a, na, na, { 5 } };
	e[1] = (struct stack_entry){ 2, 100, 0, "calltree", 0, 3, st_b, nb, nb, { 0 } };
	e[2] = (struct stack_entry){ 3, 101, 0, "calltree", 0, 4, st_k, 2, 2, { 1 } };
	e[3] = (struct stack_entry){ 4, 102, 0, "evil;comm", 0, 5, st_x, 1, 1, { 0 } };
	/* the same names as e[0] in another process: merges with it */
	e[4] = (struct stack_entry){ 5, 103, 0, "calltree", 0, 3, st_a, 10, 10, { 0 } };
	set->stacks = e;
	set->nr_stacks = 5;
	set->samples = na + nb + 2 + 1 + 10;
	set->weight = set->samples;
	set->total[0] = 6;
	snprintf(set->call_graph, sizeof(set->call_graph), "fp");
}

/* The node at the path of names (root excluded), or 0. */
static uint32_t find(const struct flame_tree *t, ...)
{
	va_list ap;
	const char *name;
	uint32_t n = 0;

	va_start(ap, t);
	while ((name = va_arg(ap, const char *))) {
		uint32_t c;

		for (c = t->nodes[n].child; c; c = t->nodes[c].next)
			if (!strcmp(t->names[t->nodes[c].name], name))
				break;
		if (!c) {
			va_end(ap);
			return 0;
		}
		n = c;
	}
	va_end(ap);
	return n;
}

static void test_tree(void **state)
{
	struct stack_entry e[5];
	struct stack_set set;
	struct flame_tree *t;
	struct error err;
	uint32_t n;

	make_set(&set, e, 60, 40);
	t = flame_tree_build(&set, FLAME_SAMPLES, &err);
	assert_non_null(t);
	assert_int_equal(t->nodes[0].value, set.samples);
	n = find(t, "calltree", "main", NULL);
	assert_int_not_equal(n, 0);
	assert_int_equal(t->nodes[n].value, 60 + 40 + 2 + 10);
	n = find(t, "calltree", "main", "outer_a", NULL);
	assert_int_equal(t->nodes[n].value, 60 + 2 + 10);	/* pids merged by name */
	n = find(t, "calltree", "main", "outer_a", "leaf", NULL);
	assert_int_equal(t->nodes[n].value, 72);
	assert_int_equal(t->nodes[n].self, 70);
	n = find(t, "calltree", "main", "outer_a", "leaf", "do_syscall_64_[k]", NULL);
	assert_int_equal(t->nodes[n].value, 2);
	n = find(t, "calltree", "main", "outer_b", "leaf", NULL);
	assert_int_equal(t->nodes[n].value, 40);
	/* the comm's ';' and unknown code named by its binary */
	assert_int_not_equal(find(t, "evil:comm", "main", "[unknown] (libx.so)", NULL), 0);
	assert_int_equal(t->max_depth, 6);
	flame_tree_free(t);

	/* by event: widths are the counter increases */
	t = flame_tree_build(&set, 0, &err);
	assert_non_null(t);
	assert_int_equal(t->nodes[0].value, 6);
	n = find(t, "calltree", "main", "outer_a", NULL);
	assert_int_equal(t->nodes[n].value, 6);
	assert_int_equal(find(t, "calltree", "main", "outer_b", NULL), 0);
	flame_tree_free(t);
	assert_null(flame_tree_build(&set, 1, &err));
	assert_non_null(strstr(err.msg, "no counting event"));
	assert_int_equal(flame_event_index(&set, "page-faults", &err), 0);
	assert_int_equal(flame_event_index(&set, "cycles", &err), -1);
	assert_non_null(strstr(err.msg, "its events are page-faults"));
}

/* --color-by: the sums per node, the metric on them, the scale's
 * width-weighted percentiles (worked out by hand below), the colours */
static void test_metric(void **state)
{
	struct stack_entry e[5];
	struct stack_set set;
	struct flame_metric m;
	struct flame_tree *t;
	struct error err = { "" };
	uint32_t a, b, k, c;
	char col[48], *buf = NULL;
	size_t len = 0;
	FILE *f;

	make_set(&set, e, 60, 40);
	set.session.nr_events = 1;
	snprintf(set.session.events[0].name, sizeof(set.session.events[0].name), "page-faults");
	/* widths by page-faults: outer_b has none, yet its samples are summed */
	t = flame_tree_build_sums(&set, 0, &err);
	assert_non_null(t);
	assert_int_equal(t->nsums, 2);
	a = find(t, "calltree", "main", "outer_a", NULL);
	b = find(t, "calltree", "main", "outer_b", NULL);
	assert_int_not_equal(b, 0);
	assert_int_equal(t->nodes[b].value, 0);
	assert_int_equal(t->sums[b * 2], 40);
	assert_int_equal(t->sums[b * 2 + 1], 0);
	assert_int_equal(t->sums[a * 2], 72);
	assert_int_equal(t->sums[a * 2 + 1], 6);
	assert_int_equal(t->sums[0], set.samples);
	flame_tree_free(t);

	/* widths by samples; page-faults per sample:
	 *   0 (weights: outer_b 40, its leaf 40, the evil chain's 5 boxes 1
	 *   each: 85), 6/113 the root (113), 6/112 calltree and main (224),
	 *   6/72 outer_a and its leaf (144), 1/2 the kernel box (2): of 568,
	 *   5% (28.4) falls in the zeros, 95% (539.6) in 6/72 */
	t = flame_tree_build_sums(&set, FLAME_SAMPLES, &err);
	assert_non_null(t);
	assert_int_equal(flame_metric_parse(&m, "page-faults / samples", "--color-by", &err), 0);
	assert_int_equal(flame_metric_bind(&m, &set.session, 2.0, "--color-by", &err), 0);
	flame_metric_values(&m, t);
	a = find(t, "calltree", "main", "outer_a", NULL);
	k = find(t, "calltree", "main", "outer_a", "leaf", "do_syscall_64_[k]", NULL);
	b = find(t, "calltree", "main", "outer_b", NULL);
	c = find(t, "calltree", NULL);
	assert_true(m.v[a] == 6.0 / 72);
	assert_true(m.v[k] == 0.5);
	assert_true(m.v[b] == 0);
	assert_true(m.v[0] == 6.0 / 113);
	flame_metric_scale(&m, t, 1, 1);
	assert_true(m.min == 0 && m.max == 0.5);
	assert_true(m.lo == 0);
	assert_true(m.hi == 6.0 / 72);
	assert_int_equal(m.nr_frames, t->nr_nodes);
	assert_int_equal(m.nr_undefined, 0);
	flame_metric_colour(&m, k, col, sizeof(col));		/* above hi: the top */
	assert_string_equal(col, "rgb(205,30,30)");
	flame_metric_colour(&m, a, col, sizeof(col));
	assert_string_equal(col, "rgb(205,30,30)");
	flame_metric_colour(&m, b, col, sizeof(col));		/* lo: the bottom */
	assert_string_equal(col, "rgb(255,245,190)");
	/* x = (6/112) / (6/72) = 0.643: 2/7 from orange (250,160,80) to red
	 * (205,30,30) */
	flame_metric_colour(&m, c, col, sizeof(col));
	assert_string_equal(col, "rgb(237,123,66)");
	/* the explorer's JSON: parents first, the folded text */
	f = open_memstream(&buf, &len);
	assert_int_equal(flame_metric_write_json(&m, t, f, &err), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"nodes\":[[-1,\"all\","));
	assert_non_null(strstr(buf, "\"lo\":0,"));
	assert_non_null(strstr(buf, "\"folded\":\"calltree;main;outer_a;leaf 70\\n"));
	free(buf);
	flame_metric_free(&m);

	/* undefined everywhere: NaN, grey, counted */
	assert_int_equal(flame_metric_parse(&m, "page-faults / (samples - samples)", "--color-by",
					    &err), 0);
	assert_int_equal(flame_metric_bind(&m, &set.session, 2.0, "--color-by", &err), 0);
	flame_metric_values(&m, t);
	flame_metric_scale(&m, t, 1, 1);
	assert_int_equal(m.nr_undefined, t->nr_nodes);
	flame_metric_colour(&m, a, col, sizeof(col));
	assert_string_equal(col, "rgb(190,190,190)");
	flame_metric_free(&m);

	/* "seconds" is the range given */
	assert_int_equal(flame_metric_parse(&m, "page-faults-per-sec", "--color-by", &err), 0);
	assert_int_equal(flame_metric_bind(&m, &set.session, 2.0, "--color-by", &err), 0);
	flame_metric_values(&m, t);
	assert_true(m.v[0] == 3.0);
	flame_metric_free(&m);

	/* names the session lacks, syntax */
	assert_int_equal(flame_metric_parse(&m, "bogus / samples", "--color-by", &err), 0);
	assert_int_equal(flame_metric_bind(&m, &set.session, 2.0, "--color-by", &err), -1);
	assert_non_null(strstr(err.msg, "unknown name 'bogus'"));
	assert_non_null(strstr(err.msg, "session 7 has page-faults, samples (cpu-clock)"));
	flame_metric_free(&m);
	assert_int_equal(flame_metric_parse(&m, "IPC", "--color-by", &err), 0);
	assert_int_equal(flame_metric_bind(&m, &set.session, 2.0, "--color-by", &err), -1);
	assert_non_null(strstr(err.msg, "needs 'instructions' and 'cycles'"));
	flame_metric_free(&m);
	assert_int_equal(flame_metric_parse(&m, "page-faults /", "--color-by", &err), -1);
	assert_non_null(strstr(err.msg, "bad --color-by 'page-faults /': column"));
	flame_metric_free(&m);
	flame_tree_free(t);
}

static void test_diff(void **state)
{
	struct stack_entry e[5], eb[5];
	struct stack_set set, base;
	struct flame_tree *t;
	struct error err;
	uint32_t a, b;

	make_set(&set, e, 60, 40);
	make_set(&base, eb, 30, 70);
	t = flame_tree_build(&set, FLAME_SAMPLES, &err);
	assert_non_null(t);
	assert_int_equal(flame_tree_diff(t, &base, FLAME_SAMPLES, &err), 0);
	assert_int_equal(t->base_total, base.samples);
	a = find(t, "calltree", "main", "outer_a", NULL);
	b = find(t, "calltree", "main", "outer_b", NULL);
	assert_int_equal(t->nodes[a].base, 30 + 2 + 10);
	assert_int_equal(t->nodes[b].base, 70);
	assert_int_equal(t->nodes[a].value, 72);
	flame_tree_free(t);
}

static char *folded(const struct stack_set *set, int what)
{
	struct flame_tree *t;
	struct error err;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	t = flame_tree_build(set, what, &err);
	assert_non_null(t);
	assert_int_equal(flame_write_folded(t, f, &err), 0);
	fclose(f);
	flame_tree_free(t);
	return buf;
}

static void test_folded(void **state)
{
	struct stack_entry e[5];
	struct stack_set set;
	char *got, *line, *save = NULL;
	uint64_t sum = 0;
	int lines = 0;

	make_set(&set, e, 60, 40);
	got = folded(&set, FLAME_SAMPLES);
	/* sorted, root first, merged by names, count last */
	assert_non_null(strstr(got, "calltree;main;outer_a;leaf 70\n"));
	assert_non_null(strstr(got, "calltree;main;outer_a;leaf;do_syscall_64_[k] 2\n"));
	assert_non_null(strstr(got, "calltree;main;outer_b;leaf 40\n"));
	assert_true(strstr(got, "calltree;main;outer_a;leaf 70") <
		    strstr(got, "calltree;main;outer_b;leaf 40"));
	for (line = strtok_r(got, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');

		assert_non_null(sp);
		sum += strtoull(sp + 1, NULL, 10);
		/* one line per distinct stack: the hostile one has no raw ';' in a name,
		 * control characters or invalid UTF-8 */
		if (!strncmp(line, "evil", 4)) {
			assert_int_equal(strncmp(line, "evil:comm;main;[unknown] (libx.so);", 35), 0);
			assert_null(strchr(line, '\x1b'));
			assert_null(strchr(line, '\xff'));
			assert_non_null(strstr(line, ";f?????o 1"));
		}
		lines++;
	}
	assert_int_equal(lines, 4);
	assert_int_equal(sum, set.samples);
	free(got);

	got = folded(&set, 0);
	assert_string_equal(got, "calltree;main;outer_a;leaf 5\n"
			    "calltree;main;outer_a;leaf;do_syscall_64_[k] 1\n");
	free(got);
}


/* flame_tree_reweigh() and flame_write_folded_ordered() of set's shape
 * with v[] give what flame_write_folded() of the tree built from set with
 * those values gives; order cut to its first nr_order nodes (SIZE_MAX:
 * all). */
static void check_ordered(struct stack_set *set, size_t nr_order)
{
	uint32_t *leaf = calloc(set->nr_stacks, sizeof(*leaf));
	uint64_t *v = calloc(set->nr_stacks, sizeof(*v));
	struct flame_tree *shape = flame_tree_shape(set, leaf);
	struct flame_tree *t;
	struct error err;
	char *want = NULL, *got = NULL;
	size_t wl = 0, gl = 0, nr;
	uint32_t *order = flame_tree_order(shape, leaf, set->nr_stacks, &nr);
	FILE *f;

	for (size_t i = 0; i < set->nr_stacks; i++)
		v[i] = set->stacks[i].samples;
	flame_tree_reweigh(shape, leaf, v, set->nr_stacks);
	t = flame_tree_build(set, FLAME_SAMPLES, &err);
	assert_non_null(t);
	assert_int_equal(shape->nodes[0].value, t->nodes[0].value);
	f = open_memstream(&want, &wl);
	assert_int_equal(flame_write_folded(t, f, &err), 0);
	fclose(f);
	f = open_memstream(&got, &gl);
	assert_int_equal(flame_write_folded_ordered(shape, order, MIN(nr, nr_order), f, &err), 0);
	fclose(f);
	assert_string_equal(got, want);
	free(want);
	free(got);
	free(order);
	free(leaf);
	free(v);
	flame_tree_free(t);
	flame_tree_free(shape);
}

/* A tree weighed anew writes what a tree built with those weights does:
 * in the order of its paths, kept where that is the lines' order, and
 * sorted where a count's digit meets a name's byte below '0' ("c 5"
 * after "c (x) 3"), or when order misses a stack's end. */
static void test_folded_ordered(void **state)
{
	struct stack_entry e[5];
	struct stack_set set;

	(void)state;
	make_set(&set, e, 60, 40);
	check_ordered(&set, SIZE_MAX);
	check_ordered(&set, 2);
	e[1].samples = 0;	/* a path that weighs nothing in this window */
	check_ordered(&set, SIZE_MAX);
	make_set(&set, e, 60, 40);
	e[2].comm = "calltree (x)";
	e[2].nr = 0;		/* comm only: "calltree (x) 2" */
	e[3].comm = "calltree";
	e[3].nr = 0;		/* "calltree 1": its path first, its line after */
	check_ordered(&set, SIZE_MAX);
}

static char *xml(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	flame_xml_write(f, s);
	fclose(f);
	return buf;
}

static void test_escape(void **state)
{
	char *s, buf[64];

	s = xml("a<b>&\"'c");
	assert_string_equal(s, "a&lt;b&gt;&amp;&quot;&apos;c");
	free(s);
	s = xml(badutf);
	assert_string_equal(s, "f?????o");
	free(s);
	s = xml("tab\there\n");
	assert_string_equal(s, "tab?here?");
	free(s);
	s = xml("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5");	/* valid UTF-8 stays */
	assert_string_equal(s, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5");
	free(s);
	s = xml("\xc0\xaf \xef\xbf\xbe");	/* overlong '/', U+FFFE */
	assert_string_equal(s, "?? ???");
	free(s);
	assert_string_equal(flame_sanitize("a;b c", buf, sizeof(buf)), "a:b c");
	/* truncation never cuts a character in two */
	assert_string_equal(flame_sanitize("ab\xe2\x82\xac", buf, 4), "ab");
}

/* Random bytes come out as valid UTF-8 (glibc's decoder agrees) with no
 * control character and no ';', never longer than the buffer. */
static void test_sanitize_random(void **state)
{
	char in[64], out[48];
	unsigned seed = 12345;

	if (!setlocale(LC_CTYPE, "C.UTF-8")) {
		fprintf(stderr, "SKIP: no C.UTF-8 locale to check against\n");
		return;
	}
	for (int i = 0; i < 20000; i++) {
		size_t n = rand_r(&seed) % (sizeof(in) - 1), len;
		mbstate_t ms;
		const char *p;

		for (size_t k = 0; k < n; k++) {
			int r = rand_r(&seed);

			/* bias towards UTF-8 lead and continuation bytes */
			in[k] = (char)(r & 1 ? 0x80 | (r >> 1 & 0x7f) : r >> 1 & 0xff);
			if (!in[k])
				in[k] = 'x';
		}
		in[n] = 0;
		flame_sanitize(in, out, sizeof(out));
		len = strlen(out);
		assert_true(len < sizeof(out));
		assert_null(strchr(out, ';'));
		for (size_t k = 0; k < len; k++)
			assert_true((unsigned char)out[k] >= 0x20 && out[k] != 0x7f);
		memset(&ms, 0, sizeof(ms));
		p = out;
		assert_true(mbsrtowcs(NULL, &p, 0, &ms) != (size_t)-1);
	}
	setlocale(LC_CTYPE, "C");
}

/* The SVG of the hostile set: well-formed XML with one script, whose
 * names read back as the sanitised names. */
static void test_svg(void **state)
{
	struct stack_entry e[5];
	struct stack_set set;
	struct flame_tree *t;
	struct flame_svg_opts o = { .title = "t <&> \"session\"", .subtitle = evil,
				    .unit = "samples" };
	struct error err;
	char path[] = "/tmp/test_flame_XXXXXX", cmd[1024], name[256];
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int fd;

	make_set(&set, e, 60, 40);
	t = flame_tree_build(&set, FLAME_SAMPLES, &err);
	assert_non_null(t);
	f = open_memstream(&buf, &len);
	assert_int_equal(flame_write_svg(t, &o, f, &err), 0);
	fclose(f);
	/* no name reaches the document raw */
	assert_null(strstr(buf, evil));
	assert_null(strstr(buf, "<script>alert"));
	assert_non_null(strstr(buf, "&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt;&apos;"));
	/* one CDATA end: the script's own */
	assert_non_null(strstr(buf, "]]>"));
	assert_null(strstr(strstr(buf, "]]>") + 3, "]]>"));
	/* 60 of 113 samples at outer_a */
	assert_non_null(strstr(buf, "<title>outer_a (72 samples, 63.72%)</title>"));

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
	if (system("python3 -c 'import xml.etree.ElementTree' 2>/dev/null")) {
		fprintf(stderr, "SKIP: the XML check needs python3\n");
	} else {
		flame_sanitize(jsbreak, name, sizeof(name));
		setenv("N", name, 1);
		/* the jsbreak name holds quotes: passed through the environment */
		snprintf(cmd, sizeof(cmd),
			 "python3 -c 'import os, sys, xml.etree.ElementTree as E\n"
			 "r = E.parse(sys.argv[1]).getroot()\n"
			 "ns = \"{http://www.w3.org/2000/svg}\"\n"
			 "assert len(r.findall(\".//\" + ns + \"script\")) == 1\n"
			 "t = [x.text for x in r.iter(ns + \"title\")]\n"
			 "for n in (os.environ[\"E\"], os.environ[\"N\"]):\n"
			 "    assert any(x.startswith(n + \" (1 samples\") for x in t), (n, t)\n"
			 "' %s", path);
		setenv("E", evil, 1);
		assert_int_equal(system(cmd), 0);
	}
	/* the script: zoom, reset, search, in node with a fake DOM */
	if (system("node --version >/dev/null 2>&1")) {
		fprintf(stderr, "SKIP: the script check needs node (nodejs)\n");
	} else {
		snprintf(cmd, sizeof(cmd), "node %s/tests/unit/flamesvg.js %s '{\"zoom\": "
			 "\"outer_a\", \"hidden\": \"outer_b\", \"search\": \"leaf|outer\", "
			 "\"matched\": \"99.12\", \"hits\": 4}'", STROBE_SRCDIR, path);
		assert_int_equal(system(cmd), 0);
	}
	unlink(path);
	free(buf);
	flame_tree_free(t);
}

/* Deep thin stacks: 10000 samples of main <- comm, and one sample of a
 * stack 200 frames deep (0.12 px at the default width).  The deep frames
 * are left out as narrower than a pixel, the image is as tall as the
 * frames drawn (the root on the first screen), and it says so. */
static void test_svg_deep_thin(void **state)
{
	static uint32_t deep[200];
	static const uint32_t shallow[] = { 0 };
	struct stack_entry e[2];
	struct stack_set set;
	struct flame_tree *t;
	struct flame_svg_opts o = { .title = "deep", .unit = "samples" };
	struct error err;
	char *buf = NULL, *p;
	size_t len = 0;
	int height = 0, rooty = -1, maxd = 0;
	double y;
	FILE *f;

	(void)state;
	memset(&set, 0, sizeof(set));
	set.session.id = 8;
	set.syms = syms;
	set.nr_syms = NR_SYMS;
	set.locs = locs;
	set.nr_locs = ARRAY_SIZE(locs);
	for (size_t i = 0; i < ARRAY_SIZE(deep); i++)
		deep[i] = (uint32_t)(i % 3);	/* main, outer_a, outer_b, ... */
	e[0] = (struct stack_entry){ 1, 100, 0, "wide", 0, 1, shallow, 10000, 10000, { 0 } };
	e[1] = (struct stack_entry){ 2, 101, 0, "deep", 0, ARRAY_SIZE(deep), deep, 1, 1, { 0 } };
	set.stacks = e;
	set.nr_stacks = 2;
	set.samples = set.weight = 10001;
	t = flame_tree_build(&set, FLAME_SAMPLES, &err);
	assert_non_null(t);
	assert_int_equal(t->max_depth, 201);
	f = open_memstream(&buf, &len);
	assert_int_equal(flame_write_svg(t, &o, f, &err), 0);
	fclose(f);
	assert_int_equal(sscanf(strstr(buf, "<svg "), "<svg version=\"1.1\" width=\"1200\" "
				"height=\"%d\"", &height), 1);
	/* the frames drawn: all, wide, main (depths 0..2) */
	for (p = buf; (p = strstr(p, "<g class=\"f\"><title>")); p++) {
		char *r = strstr(p, "<rect x=\"");

		assert_non_null(r);
		assert_int_equal(sscanf(strchr(r, 'y'), "y=\"%lf\"", &y), 1);
		if (!strncmp(p + 20, "all (", 5))
			rooty = (int)y;
		if ((height - 30 - (int)y) / 16 - 1 > maxd)
			maxd = (height - 30 - (int)y) / 16 - 1;
	}
	assert_int_equal(maxd, 2);
	/* title, subtitle, the note; three levels; the details line */
	assert_int_equal(height, 60 + 16 + 3 * 16 + 30);
	assert_true(rooty >= 0 && rooty < 800);
	assert_non_null(strstr(buf, ">201 frames narrower than 1 px left out (0.01% of samples;"));
	free(buf);
	flame_tree_free(t);
}

/* ---- a small protobuf reader ---- */

struct rd {
	const unsigned char *p, *end;
};

static int rd_varint(struct rd *r, uint64_t *v)
{
	int shift = 0;

	*v = 0;
	while (r->p < r->end && shift < 64) {
		unsigned char b = *r->p++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

/* The next field: number, wire type, value (varint) or bytes. */
static int rd_field(struct rd *r, uint32_t *field, uint64_t *v, struct rd *sub)
{
	uint64_t key;

	if (r->p >= r->end || rd_varint(r, &key) < 0)
		return -1;
	*field = (uint32_t)(key >> 3);
	switch (key & 7) {
	case 0:
		return rd_varint(r, v);
	case 2:
		if (rd_varint(r, v) < 0 || *v > (uint64_t)(r->end - r->p))
			return -1;
		sub->p = r->p;
		sub->end = r->p + *v;
		r->p += *v;
		return 2;
	}
	return -1;
}

static void test_pprof(void **state)
{
	struct stack_entry e[5];
	struct stack_set set;
	struct pb raw = { 0 };
	struct rd r, sub, sub2;
	struct error err;
	uint64_t v, total = 0, nr_strings = 0, sample_types = 0, samples = 0, mappings = 0;
	uint64_t locations = 0, functions = 0, time_nanos = 0;
	char *strings[64];
	uint32_t field;
	int rc;
	char *gz = NULL;
	size_t gzlen = 0;
	FILE *f;

	make_set(&set, e, 60, 40);
	set.session.start_ns = 1000;
	set.session.wall_offset_ns = 1700000000000000000ll;
	pprof_encode(&set, &raw);
	r.p = raw.buf;
	r.end = raw.buf + raw.n;
	while ((rc = rd_field(&r, &field, &v, &sub)) >= 0) {
		switch (field) {
		case 1:
			sample_types++;
			break;
		case 2: {
			int first = 1;

			samples++;
			while ((rc = rd_field(&sub, &field, &v, &sub2)) >= 0) {
				if (field == 2 && rc == 2) {	/* packed values */
					uint64_t x;

					while (sub2.p < sub2.end) {
						assert_int_equal(rd_varint(&sub2, &x), 0);
						if (first)
							total += x;
						first = 0;
					}
				}
			}
			break;
		}
		case 3:
			mappings++;
			break;
		case 4:
			locations++;
			break;
		case 5:
			functions++;
			break;
		case 6:
			assert_int_equal(rc, 2);
			assert_true(nr_strings < ARRAY_SIZE(strings));
			strings[nr_strings] = strndup((const char *)sub.p, sub.end - sub.p);
			nr_strings++;
			break;
		case 9:
			time_nanos = v;
			break;
		}
	}
	assert_true(r.p == r.end);
	assert_int_equal(sample_types, 2);		/* samples, page-faults */
	assert_int_equal(samples, set.nr_stacks);
	assert_int_equal(total, set.samples);
	assert_int_equal(mappings, 3);
	assert_int_equal(locations, set.nr_locs);
	assert_int_equal(functions, set.nr_syms);
	assert_int_equal(time_nanos, 1700000000000001000ull);
	assert_true(nr_strings > 4);
	assert_string_equal(strings[0], "");
	assert_string_equal(strings[1], "samples");
	for (uint64_t i = 0; i < nr_strings; i++) {
		assert_null(strchr(strings[i], '\xff'));	/* valid UTF-8 only */
		free(strings[i]);
	}

	/* gzip: inflates back to the same bytes */
	f = open_memstream(&gz, &gzlen);
	assert_int_equal(pprof_write(&set, f, &err), 0);
	fclose(f);
	assert_true(gzlen > 18);
	assert_int_equal((unsigned char)gz[0], 0x1f);
	assert_int_equal((unsigned char)gz[1], 0x8b);
	{
		z_stream z = { 0 };
		unsigned char *back = malloc(raw.n + 16);

		assert_int_equal(inflateInit2(&z, 31), Z_OK);
		z.next_in = (unsigned char *)gz;
		z.avail_in = (uInt)gzlen;
		z.next_out = back;
		z.avail_out = (uInt)raw.n + 16;
		assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
		assert_int_equal(z.total_out, raw.n);
		assert_memory_equal(back, raw.buf, raw.n);
		inflateEnd(&z);
		free(back);
	}
	/* a real consumer: go tool pprof's top function is leaf */
	if (system("go version >/dev/null 2>&1")) {
		fprintf(stderr, "SKIP: the go tool pprof check needs golang-go\n");
	} else {
		char path[] = "/tmp/test_pprof_XXXXXX", cmd[256], out[4096];
		int fd = mkstemp(path);
		FILE *p;
		size_t n;

		assert_true(fd >= 0);
		assert_int_equal(write(fd, gz, gzlen), (ssize_t)gzlen);
		close(fd);
		snprintf(cmd, sizeof(cmd), "go tool pprof -top -nodecount=2 %s 2>&1", path);
		p = popen(cmd, "r");
		assert_non_null(p);
		n = fread(out, 1, sizeof(out) - 1, p);
		out[n] = 0;
		assert_int_equal(pclose(p), 0);
		unlink(path);
		/* flat: leaf 70 + 40 of 113 samples */
		if (!strstr(out, "of 113 total") || !strstr(out, "110 97.35% 97.35%") ||
		    !strstr(out, "%  leaf\n"))
			fail_msg("go tool pprof -top:\n%s", out);
	}
	free(gz);
	pb_free(&raw);
}

/* The gecko JSON: parsed by python3, every sample's stack walked to the
 * root, the counts and times as added. */
static void test_gecko(void **state)
{
	struct stack_entry e[5];
	struct stack_set set;
	struct gecko *g;
	struct error err;
	char path[] = "/tmp/test_gecko_XXXXXX", cmd[2048];
	FILE *f;
	int fd, n = 0;

	make_set(&set, e, 60, 40);
	set.session.start_ns = 5000000;
	set.session.wall_offset_ns = 1700000000000000000ll;
	g = gecko_new(&set);
	/* tid 100 runs stacks 0 and 1 alternately, tid 200 of pid 100 stack 1,
	 * tid 102 the hostile stack */
	for (int i = 0; i < 50; i++, n++)
		assert_int_equal(gecko_add(g, i * 1000000ll, 0, 100, i % 2, &err), 0);
	for (int i = 0; i < 7; i++, n++)
		assert_int_equal(gecko_add(g, i * 1000000ll + 500, 1, 200, 1, &err), 0);
	assert_int_equal(gecko_add(g, 3000000, 1, 102, 3, &err), 0);
	n++;
	assert_int_equal(gecko_add(g, 3000000, 1, 102, 99, &err), -1);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_int_equal(gecko_finish(g, f, &err), 0);
	fclose(f);
	gecko_free(g);
	if (system("python3 -c 'import json' 2>/dev/null")) {
		fprintf(stderr, "SKIP: the gecko check needs python3\n");
		unlink(path);
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json, sys\n"
		 "p = json.load(open(sys.argv[1]))\n"
		 "m = p[\"meta\"]\n"
		 "assert m[\"version\"] == 24 and m[\"presymbolicated\"], m\n"
		 "assert abs(m[\"startTime\"] - 1700000000005.0) < 1e-3, m\n"
		 "th = {t[\"tid\"]: t for t in p[\"threads\"]}\n"
		 "assert sorted(th) == [100, 102, 200], th.keys()\n"
		 "assert sum(len(t[\"samples\"][\"data\"]) for t in th.values()) == int(sys.argv[2])\n"
		 "def path(t, s):\n"
		 "    st, fr, strs = t[\"stackTable\"], t[\"frameTable\"], t[\"stringTable\"]\n"
		 "    out = []\n"
		 "    while s is not None:\n"
		 "        pre, f = st[\"data\"][s][st[\"schema\"][\"prefix\"]], st[\"data\"][s][st[\"schema\"][\"frame\"]]\n"
		 "        out.append(strs[fr[\"data\"][f][fr[\"schema\"][\"location\"]]])\n"
		 "        s = pre\n"
		 "    return out\n"
		 "t = th[100]\n"
		 "assert t[\"pid\"] == 100 and t[\"name\"] == \"calltree\"\n"
		 "d = t[\"samples\"][\"data\"]\n"
		 "assert path(t, d[0][0]) == [\"leaf (in calltree)\", \"outer_a (in calltree)\", \"main (in calltree)\"], path(t, d[0][0])\n"
		 "assert path(t, d[1][0]) == [\"leaf (in calltree)\", \"outer_b (in calltree)\", \"main (in calltree)\"]\n"
		 "assert [x[1] for x in d] == [float(i) for i in range(50)]\n"
		 "x = path(th[102], th[102][\"samples\"][\"data\"][0][0])\n"
		 "assert x[-1] == \"main (in calltree)\" and x[-2] == \"[unknown] (in libx.so)\", x\n"
		 "assert x[0] == \"f?????o (in libx.so)\", x\n"
		 "' %s %d", path, n);
	assert_int_equal(system(cmd), 0);
	unlink(path);
}

static void test_varint(void **state)
{
	struct pb b = { 0 };
	static const uint64_t vals[] = { 0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX,
					 UINT64_MAX };
	struct rd r;

	for (size_t i = 0; i < ARRAY_SIZE(vals); i++)
		pb_varint(&b, vals[i]);
	assert_int_equal(b.buf[0], 0);
	assert_int_equal(b.buf[3], 0x80);	/* 128: 80 01 */
	assert_int_equal(b.buf[4], 0x01);
	r.p = b.buf;
	r.end = b.buf + b.n;
	for (size_t i = 0; i < ARRAY_SIZE(vals); i++) {
		uint64_t v;

		assert_int_equal(rd_varint(&r, &v), 0);
		assert_true(v == vals[i]);
	}
	assert_true(r.p == r.end);
	pb_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_metric),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_folded_ordered),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_sanitize_random),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_svg_deep_thin),
		cmocka_unit_test(test_varint),
		cmocka_unit_test(test_pprof),
		cmocka_unit_test(test_gecko),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
